/* pipeline.c: streams one image through a backend in strips of rows, decoding strip n+1 and encoding strip n-1 while strip n is computed, in bounded memory. */
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "image_io.h"
#include "round_up.h"
#include "sample_scale.h"

/* Source bytes per strip when the backend states no preference. */
#define GS_DEFAULT_STRIP_BYTES (1u << 20)
/* Bytes of input a window (strip + 2 halos) may grow to so that its halos stay a small part. */
#define HALO_WINDOW_BYTES (8u << 20)
/* Strips in flight: one being decoded, one computed on each runner, one encoded. */
#define GS_PIPELINE_SLOTS 3

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Zero-filled: a strip buffer never carries earlier heap contents (another file's pixels,
 * in a batch) to an output, even if a decoder or backend left part of it unwritten. The
 * decoders and backends write every sample (fuzz_decode.c and valgrind check that);
 * this is the second line. Zeroing a strip costs little beside its decode. */
static void *alloc_rows(size_t rows, size_t stride, size_t align)
{
    if (stride && rows > SIZE_MAX / stride) return NULL;
    size_t bytes = gs_round_up(rows * stride > 0 ? rows * stride : 1, align);
    void *p = aligned_alloc(align, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

/* Everything about one file that follows from its header, the options and the backend. */
typedef struct plan {
    const gs_job *job;              /* what to compute, and the callbacks */
    const gs_plugin_desc *backend;  /* chosen backend */
    gs_plugin_instance *instance;   /* its instance: runner 0's */
    unsigned runners;                 /* runners strips spread over: 1, or one per device (the
                                       other runners' instances come from job->runner) */
    const char *input, *output;     /* names for messages */
    gs_out_format format;           /* output format */
    uint32_t width, height;         /* image size */
    uint32_t in_bits, out_bits;     /* backend input and output sample bits */
    uint32_t file_bits;             /* sample bits written to the file */
    gs_sample_kind file_kind;       /* unsigned or float samples in the file */
    int view;                       /* integral drawn as a scaled 16-bit picture */
    int convert;                    /* backend output needs conversion before writing */
    size_t align;                   /* buffer and stride alignment */
    size_t in_stride, out_stride, conv_stride; /* bytes per row of each buffer */
    uint32_t strip_rows;            /* rows per strip */
    uint32_t halo;                  /* rows of context each strip needs above and below:
                                       the passes when smoothing down columns, else 0 */
    uint32_t window_rows;           /* rows a decoded window holds: strip + 2 halos, at most
                                       the image */
    void *column_sums;              /* 2d integral carry, width values of out_bits */
    const char *cards;              /* FITS cards to keep in a FITS output, or NULL */
    size_t card_count;
    uint64_t start_ns;              /* when the run began, for the progress callback */
} plan;

/* Strip i's window: the rows [start, end) decoded for it, its own rows and up to `halo`
 * more on each side. Without a halo, the strip itself. */
/* Rows of the strip that starts at row y: a whole strip, or what is left of the image. */
static uint32_t rows_from(const plan *p, uint32_t y)
{
    return p->height - y < p->strip_rows ? p->height - y : p->strip_rows;
}

static uint32_t window_start(const plan *p, uint32_t i)
{
    uint64_t y = (uint64_t)i * p->strip_rows;
    return (uint32_t)(y > p->halo ? y - p->halo : 0);
}

static uint32_t window_end(const plan *p, uint32_t i)
{
    uint64_t y = ((uint64_t)i + 1) * p->strip_rows + p->halo;
    return (uint32_t)(y < p->height ? y : p->height);
}

/* One strip through the backend (gs_backend_run); the error names the input. For smoothing
 * down columns, src is the strip's window: `above` rows of halo, the strip's `rows`, then
 * `below` more. */
static gs_status compute_strip(const plan *p, gs_plugin_instance *instance, const void *src,
                               void *dst, uint32_t rows, uint32_t above, uint32_t below,
                               char *err, size_t err_size)
{
    gs_strip strip = {GS_ABI_HEADER_INIT(gs_strip), p->width, rows, p->in_bits, p->out_bits,
                      src, p->in_stride, dst, p->out_stride, NULL /* host strips: no stream */};
    char msg[GS_ERR_SIZE];
    gs_status rc = gs_backend_run(p->backend, instance, &p->job->work, &strip, above, below,
                                  p->column_sums, msg, sizeof msg);
    return rc == GS_OK ? GS_OK : gs_fail(err, err_size, rc, "%s: %s", p->input, msg);
}

/* Time a backend measured on its device (gs_plugin_timings), summed over instances. */
typedef struct device_times {
    uint64_t upload, kernel, download;
} device_times;

static gs_plugin_timings instance_timings(const gs_plugin_desc *d, const gs_plugin_instance *inst)
{
    gs_plugin_timings t = {GS_ABI_HEADER_INIT(gs_plugin_timings), 0, 0, 0};
    if (d->timings) d->timings(inst, &t);
    return t;
}

/* Add what an instance spent between two readings. */
static void add_device_times(device_times *sum, const gs_plugin_timings *before,
                             const gs_plugin_timings *after)
{
    sum->upload += after->upload_ns - before->upload_ns;
    sum->kernel += after->kernel_ns - before->kernel_ns;
    sum->download += after->download_ns - before->download_ns;
}

/* Smoothing output at another depth: 16 -> 8 rounds to nearest, 8 -> 16 scales by 257. */
static void convert_depth(const plan *p, const void *src, void *dst, uint32_t rows)
{
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * p->out_stride;
        uint8_t *d = (uint8_t *)dst + r * p->conv_stride;
        for (uint32_t x = 0; x < p->width; ++x) {
            if (p->out_bits == 16)
                d[x] = (uint8_t)gs_rescale(((const uint16_t *)s)[x], 65535u, 255u);
            else
                ((uint16_t *)d)[x] = (uint16_t)gs_rescale(s[x], 255u, 65535u);
        }
    }
}

/* Integral values scaled to 0..65535 for a viewable picture. */
static void scale_for_view(const plan *p, const void *src, void *dst, uint32_t rows, uint64_t max)
{
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * p->out_stride;
        uint16_t *d = (uint16_t *)((uint8_t *)dst + r * p->conv_stride);
        for (uint32_t x = 0; x < p->width; ++x) {
            uint64_t v = p->out_bits == 64 ? ((const uint64_t *)s)[x] : ((const uint32_t *)s)[x];
            d[x] = max ? (uint16_t)gs_rescale(v, max, 65535u) : 0;
        }
    }
}

/* Largest integral value in a strip: sums only grow along a row, so each row's last. */
static uint64_t strip_max(const plan *p, const void *src, uint32_t rows)
{
    uint64_t m = 0;
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * p->out_stride;
        uint64_t v = p->out_bits == 64 ? ((const uint64_t *)s)[p->width - 1]
                                       : ((const uint32_t *)s)[p->width - 1];
        if (v > m) m = v;
    }
    return m;
}

/* Convert (if needed) and write one computed strip. */
static gs_status emit_strip(const plan *p, gs_writer *writer, const void *out, void *conv,
                            uint32_t rows, uint64_t view_max, char *err, size_t err_size)
{
    const void *rows_out = out;
    size_t stride = p->out_stride;
    if (p->view) {
        scale_for_view(p, out, conv, rows, view_max);
        rows_out = conv, stride = p->conv_stride;
    } else if (p->convert) {
        convert_depth(p, out, conv, rows);
        rows_out = conv, stride = p->conv_stride;
    }
    char msg[GS_ERR_SIZE];
    gs_status rc = gs_writer_write_rows(writer, rows_out, stride, rows, msg, sizeof msg);
    return rc == GS_OK ? GS_OK : gs_fail(err, err_size, rc, "%s: %s", p->output, msg);
}

/* The rows before `rows_done` are in the writer: tell the job's progress callback. Called
 * by whichever thread writes, once a strip, so the callback never sees a row count go back. */
static void report_rows(const plan *p, uint64_t rows_done)
{
    if (p->job->progress)
        p->job->progress(p->job->progress_user, rows_done, p->height, (now_ns() - p->start_ns) / 1e9);
}

/* The 2d carry before the first strip: zeros, or for float64 sums -0.0, the identity of
 * addition, so the first row is its own row integral (the plugin ABI's definition). */
static void reset_column_sums(const plan *p)
{
    if (p->file_kind == GS_SAMPLES_FLOAT && p->out_bits == 64) {
        for (uint32_t x = 0; x < p->width; ++x) ((double *)p->column_sums)[x] = -0.0;
        return;
    }
    memset(p->column_sums, 0, (size_t)p->width * (p->out_bits / 8));
}

/* Open the output as the plan says, with the input's FITS cards where they are kept. */
static gs_status open_output(const plan *p, gs_writer **writer, char *err, size_t err_size)
{
    char msg[GS_ERR_SIZE];
    gs_status rc = gs_writer_open_kind(p->output, p->format, p->width, p->height, p->file_bits,
                                       p->file_kind, &p->job->encode, writer, msg, sizeof msg);
    if (rc == GS_OK && p->cards) rc = gs_writer_keep_cards(*writer, p->cards, p->card_count, msg, sizeof msg);
    if (rc != GS_OK) {
        gs_writer_abort(*writer);
        *writer = NULL;
        return gs_fail(err, err_size, rc, "%s: %s", p->output, msg);
    }
    return GS_OK;
}

/* ---- integral pictures: the whole (8/16-bit) input is kept, and the integral runs twice,
 * the first time only to find the maximum the picture is scaled to ---- */

static gs_status run_view(const plan *p, gs_reader *reader, gs_phase_times *times,
                         device_times *dev, char *err, size_t err_size)
{
    const gs_plugin_timings before = instance_timings(p->backend, p->instance);
    gs_writer *writer = NULL;
    void *in = alloc_rows(p->height, p->in_stride, p->align);
    void *out = alloc_rows(p->strip_rows, p->out_stride, p->align);
    void *conv = alloc_rows(p->strip_rows, p->conv_stride, p->align);
    char msg[GS_ERR_SIZE];
    gs_status rc = GS_OK;
    if (!in || !out || !conv) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: out of memory for the whole image", p->input);
        goto cleanup;
    }
    uint64_t t = now_ns();
    rc = gs_reader_read_rows(reader, in, p->in_stride, p->height, msg, sizeof msg);
    times->decode += now_ns() - t;
    if (rc != GS_OK) {
        gs_fail(err, err_size, rc, "%s: %s", p->input, msg);
        goto cleanup;
    }
    uint64_t view_max = 0;
    for (int pass = 0; pass < 2; ++pass) {
        reset_column_sums(p);
        if (pass == 1 && (rc = open_output(p, &writer, err, err_size)) != GS_OK) goto cleanup;
        for (uint32_t y = 0; y < p->height; y += p->strip_rows) {
            uint32_t rows = rows_from(p, y);
            t = now_ns();
            rc = compute_strip(p, p->instance, (const uint8_t *)in + (size_t)y * p->in_stride, out, rows, 0, 0,
                               err, err_size);
            times->kernel += now_ns() - t;
            if (rc != GS_OK) goto cleanup;
            if (pass == 0) {
                uint64_t m = strip_max(p, out, rows);
                if (m > view_max) view_max = m;
                continue;
            }
            t = now_ns();
            rc = emit_strip(p, writer, out, conv, rows, view_max, err, err_size);
            times->encode += now_ns() - t;
            if (rc != GS_OK) goto cleanup;
            report_rows(p, (uint64_t)y + rows); /* the first pass writes nothing */
        }
    }
    t = now_ns();
    rc = gs_writer_commit(writer, msg, sizeof msg);
    writer = NULL; /* commit frees it, on success and failure alike */
    times->encode += now_ns() - t;
    if (rc != GS_OK) gs_fail(err, err_size, rc, "%s: %s", p->output, msg);
    const gs_plugin_timings after = instance_timings(p->backend, p->instance);
    add_device_times(dev, &before, &after);

cleanup:
    gs_writer_abort(writer);
    free(in), free(out), free(conv);
    return rc;
}

/* ---- streaming: decode, compute and encode stages on their own threads (compute on one
 * thread per runner), GS_PIPELINE_SLOTS + runners - 1 strips in flight ---- */

typedef struct stream {
    const plan *plan;               /* the file */
    gs_reader *reader;              /* decode stage's */
    gs_writer *writer;              /* encode stage's */
    uint32_t strips;                /* strips in the image */
    uint32_t slots;                 /* buffers in use: GS_PIPELINE_SLOTS + runners - 1, or fewer strips */
    void **in;                      /* decoded strips, one a slot */
    void **out;                     /* computed strips, one a slot */
    uint32_t *computed;             /* per slot: 1 + the strip computed into it, 0 before */
    void *conv;                     /* the encode stage's conversion buffer */
    pthread_mutex_t lock;           /* guards the counters and the failure */
    pthread_cond_t changed;         /* a counter moved, or a stage failed */
    uint32_t decoded, written;      /* strips finished by the decode and encode stages */
    int failed;                     /* a stage failed: everyone stops */
    gs_status status;               /* the first failure */
    char err[GS_ERR_SIZE];          /* its message */
    uint64_t decode_ns, encode_ns;  /* stage times */
    uint64_t kernel_ns[GS_MAX_RUNNERS]; /* compute time of each runner */
    device_times *device;           /* what the runners' instances measured, summed (under lock) */
} stream;

/* Wait until *counter > target or a stage failed; returns 0 to go on, -1 to stop. */
static int wait_for(stream *s, const uint32_t *counter, uint32_t target)
{
    pthread_mutex_lock(&s->lock);
    while (!s->failed && *counter <= target) pthread_cond_wait(&s->changed, &s->lock);
    int stop = s->failed;
    pthread_mutex_unlock(&s->lock);
    return stop ? -1 : 0;
}

/* Wait until strip i is computed (runners finish out of order) or a stage failed. */
static int wait_computed(stream *s, uint32_t i)
{
    pthread_mutex_lock(&s->lock);
    while (!s->failed && s->computed[i % s->slots] != i + 1) pthread_cond_wait(&s->changed, &s->lock);
    int stop = s->failed;
    pthread_mutex_unlock(&s->lock);
    return stop ? -1 : 0;
}

static void advance(stream *s, uint32_t *counter, uint32_t value)
{
    pthread_mutex_lock(&s->lock);
    *counter = value;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

static void fail_stream(stream *s, gs_status rc, const char *msg)
{
    pthread_mutex_lock(&s->lock);
    if (!s->failed) {
        s->failed = 1;
        s->status = rc;
        snprintf(s->err, sizeof s->err, "%s", msg);
    }
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

/* Strip i's window into its slot: the rows it shares with strip i-1's window (its halo
 * above, and the rows below i-1 that were i-1's halo) copied from that slot, the rest
 * decoded. Without a halo nothing is shared and the strip is decoded whole. */
static gs_status fill_window(stream *s, uint32_t i, char *msg, size_t msg_size)
{
    const plan *p = s->plan;
    uint8_t *slot = s->in[i % s->slots];
    const uint32_t start = window_start(p, i), end = window_end(p, i);
    uint32_t have = start;
    if (i > 0 && window_end(p, i - 1) > start) {
        const uint32_t prev_start = window_start(p, i - 1);
        have = window_end(p, i - 1);
        memcpy(slot, (const uint8_t *)s->in[(i - 1) % s->slots] + (size_t)(start - prev_start) * p->in_stride,
               (size_t)(have - start) * p->in_stride);
    }
    return gs_reader_read_rows(s->reader, slot + (size_t)(have - start) * p->in_stride, p->in_stride,
                               end - have, msg, msg_size);
}

static void *decode_stage(void *arg)
{
    stream *s = arg;
    const plan *p = s->plan;
    char msg[GS_ERR_SIZE], err[GS_ERR_SIZE];
    for (uint32_t i = 0; i < s->strips; ++i) {
        /* The slot is free once the strip that used it last was written. */
        if (i >= s->slots && wait_for(s, &s->written, i - s->slots) != 0) break;
        uint64_t t = now_ns();
        gs_status rc = fill_window(s, i, msg, sizeof msg);
        s->decode_ns += now_ns() - t;
        if (rc != GS_OK) {
            fail_stream(s, gs_fail(err, sizeof err, rc, "%s: %s", p->input, msg), err);
            break;
        }
        advance(s, &s->decoded, i + 1);
    }
    return NULL;
}

static void *encode_stage(void *arg)
{
    stream *s = arg;
    const plan *p = s->plan;
    char err[GS_ERR_SIZE];
    for (uint32_t i = 0; i < s->strips; ++i) {
        if (wait_computed(s, i) != 0) break;
        uint64_t t = now_ns();
        const uint32_t y = i * p->strip_rows, rows = rows_from(p, y);
        gs_status rc = emit_strip(p, s->writer, s->out[i % s->slots], s->conv, rows, 0, err, sizeof err);
        s->encode_ns += now_ns() - t;
        if (rc != GS_OK) {
            fail_stream(s, rc, err);
            break;
        }
        advance(s, &s->written, i + 1);
        report_rows(p, (uint64_t)y + rows);
    }
    return NULL;
}

/* One runner of the compute stage: strips runner, runner + runners, ... on the runner's instance. */
typedef struct compute_runner {
    stream *s;
    unsigned runner;
} compute_runner;

static void *compute_stage(void *arg)
{
    const compute_runner *cl = arg;
    stream *s = cl->s;
    const plan *p = s->plan;
    char msg[GS_ERR_SIZE], err[GS_ERR_SIZE];
    /* Runners past the first start their instance (their device) here, all at once. */
    gs_plugin_instance *instance = p->instance;
    if (cl->runner > 0) {
        gs_status rc = p->job->runner(p->job->select_ctx, cl->runner, p->backend, &instance, msg, sizeof msg);
        if (rc != GS_OK) {
            fail_stream(s, gs_fail(err, sizeof err, rc, "%s: %s", p->input, msg), err);
            return NULL;
        }
    }
    const gs_plugin_timings before = instance_timings(p->backend, instance);
    for (uint32_t i = cl->runner; i < s->strips; i += p->runners) {
        if (wait_for(s, &s->decoded, i) != 0) break;
        uint64_t t = now_ns();
        const uint32_t y = i * p->strip_rows, rows = rows_from(p, y);
        gs_status cs = compute_strip(p, instance, s->in[i % s->slots], s->out[i % s->slots], rows,
                                     y - window_start(p, i), window_end(p, i) - (y + rows), msg,
                                     sizeof msg);
        s->kernel_ns[cl->runner] += now_ns() - t;
        if (cs != GS_OK) {
            fail_stream(s, cs, msg);
            break;
        }
        pthread_mutex_lock(&s->lock);
        s->computed[i % s->slots] = i + 1;
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
    }
    const gs_plugin_timings after = instance_timings(p->backend, instance);
    pthread_mutex_lock(&s->lock);
    add_device_times(s->device, &before, &after);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static gs_status run_streamed(const plan *p, gs_reader *reader, gs_phase_times *times,
                              device_times *dev, char *err, size_t err_size)
{
    stream s;
    memset(&s, 0, sizeof s);
    s.plan = p;
    s.reader = reader;
    s.device = dev;
    s.strips = (p->height + p->strip_rows - 1) / p->strip_rows;
    s.slots = s.strips < GS_PIPELINE_SLOTS + p->runners - 1 ? s.strips : GS_PIPELINE_SLOTS + p->runners - 1;
    char msg[GS_ERR_SIZE];
    gs_status rc = GS_OK;
    pthread_t decoder, encoder, runner_thread[GS_MAX_RUNNERS];
    compute_runner runners[GS_MAX_RUNNERS];
    unsigned runners_started = 1; /* runner 0 runs on this thread */
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.changed, NULL);

    s.in = calloc(s.slots, sizeof *s.in);
    s.out = calloc(s.slots, sizeof *s.out);
    s.computed = calloc(s.slots, sizeof *s.computed);
    int ok = s.in && s.out && s.computed;
    for (uint32_t i = 0; ok && i < s.slots; ++i) {
        s.in[i] = alloc_rows(p->window_rows, p->in_stride, p->align);
        s.out[i] = alloc_rows(p->strip_rows, p->out_stride, p->align);
        ok = s.in[i] && s.out[i];
    }
    if (p->convert) ok = ok && (s.conv = alloc_rows(p->strip_rows, p->conv_stride, p->align));
    if (!ok) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: out of memory for %ux%u strips", p->input,
                     p->width, p->strip_rows);
        goto cleanup;
    }
    if ((rc = open_output(p, &s.writer, err, err_size)) != GS_OK) goto cleanup;
    reset_column_sums(p);
    if (pthread_create(&decoder, NULL, decode_stage, &s) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: cannot start a thread", p->input);
        goto cleanup;
    }
    char no_thread[GS_ERR_SIZE];
    gs_fail(no_thread, sizeof no_thread, GS_ERR_NOMEM, "%s: cannot start a thread", p->input);
    if (pthread_create(&encoder, NULL, encode_stage, &s) != 0) {
        fail_stream(&s, GS_ERR_NOMEM, no_thread);
        pthread_join(decoder, NULL);
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: cannot start a thread", p->input);
        goto cleanup;
    }
    for (unsigned l = 0; l < p->runners; ++l) runners[l] = (compute_runner){&s, l};
    for (; runners_started < p->runners; ++runners_started)
        if (pthread_create(&runner_thread[runners_started], NULL, compute_stage, &runners[runners_started]) != 0) {
            fail_stream(&s, GS_ERR_NOMEM, no_thread);
            break;
        }
    /* Runner 0 runs here, so select's instance stays on the calling thread. */
    compute_stage(&runners[0]);
    for (unsigned l = 1; l < runners_started; ++l) pthread_join(runner_thread[l], NULL);
    pthread_join(decoder, NULL);
    pthread_join(encoder, NULL);
    times->decode += s.decode_ns;
    times->encode += s.encode_ns;
    for (unsigned l = 0; l < p->runners; ++l) times->kernel += s.kernel_ns[l];
    if (s.failed) {
        rc = gs_fail(err, err_size, s.status, "%s", s.err);
        goto cleanup;
    }
    uint64_t t = now_ns();
    rc = gs_writer_commit(s.writer, msg, sizeof msg);
    s.writer = NULL; /* commit frees it, on success and failure alike */
    times->encode += now_ns() - t;
    if (rc != GS_OK) gs_fail(err, err_size, rc, "%s: %s", p->output, msg);

cleanup:
    gs_writer_abort(s.writer);
    for (uint32_t i = 0; i < s.slots; ++i) {
        if (s.in) free(s.in[i]);
        if (s.out) free(s.out[i]);
    }
    free(s.in), free(s.out), free(s.computed);
    free(s.conv);
    pthread_cond_destroy(&s.changed);
    pthread_mutex_destroy(&s.lock);
    return rc;
}

gs_status gs_pipeline_run(const gs_job *job, const char *input, const char *output,
                          gs_phase_times *times, gs_image_facts *facts, char *err, size_t err_size)
{
    const gs_work *o = &job->work;
    gs_reader *reader = NULL;
    gs_image_info info;
    uint64_t t_start = now_ns(), t;
    plan p = {.job = job, .input = input, .output = output, .start_ns = t_start};
    char msg[GS_ERR_SIZE] = "";
    memset(times, 0, sizeof *times);
    gs_image_facts unused;
    if (!facts) facts = &unused;
    memset(facts, 0, sizeof *facts);

    gs_status rc = gs_out_format_from_path(output, &p.format, msg, sizeof msg);
    if (rc != GS_OK) {
        gs_fail(err, err_size, rc, "%s: %s", output, msg);
        goto cleanup;
    }
    const int integral = o->mode != GS_MODE_SMOOTH;
    p.view = integral && !gs_out_format_takes_float(p.format);
    if (p.view && p.format != GS_OUT_PNG && p.format != GS_OUT_PGM) {
        rc = gs_fail(err, err_size, GS_ERR_USAGE,
                     "%s: integral output must be .npy, .tif or .fits (exact) or .png/.pgm (for viewing)",
                     output);
        goto cleanup;
    }
    if (!integral && o->depth == GS_DEPTH_TO_FLOAT && !gs_out_format_takes_float(p.format)) {
        rc = gs_fail(err, err_size, GS_ERR_USAGE, "%s: float32 output needs .tif, .fits or .npy", output);
        goto cleanup;
    }

    t = now_ns();
    rc = gs_reader_open(input, o->max_pixels, &reader, &info, msg, sizeof msg);
    times->decode += now_ns() - t;
    if (rc != GS_OK) {
        gs_fail(err, err_size, rc, "%s: %s", input, msg);
        goto cleanup;
    }
    if (job->note && info.was_color) job->note(job->note_user, input, "colour converted to gray with BT.601 luma");
    if (job->note && info.had_alpha) job->note(job->note_user, input, "alpha channel dropped");
    if (job->note && info.pages > 1) {
        char pages[64];
        snprintf(pages, sizeof pages, "%u pages: only the first is read", info.pages);
        job->note(job->note_user, input, pages);
    }
    if (job->note && p.view)
        job->note(job->note_user, output, "integral scaled to 16 bits for viewing; use .npy for exact values");

    p.width = info.width, p.height = info.height, p.in_bits = info.bits;
    facts->width = info.width, facts->height = info.height, facts->bits = info.bits;
    /* Float samples stay float: rounding them to 8 or 16 bits is no smoothing's business. */
    const int float_in = p.in_bits == 32, float_out = float_in || (!integral && o->depth == GS_DEPTH_TO_FLOAT);
    /* These refusals follow from the file, not the command line (a batch may mix float and
     * integer inputs): a run-time failure of this input, exit 1, never a usage error. */
    if (float_in && !gs_out_format_takes_float(p.format)) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%s: float32 samples: write .tif, .fits or .npy (%s stores integers)", input,
                     gs_out_format_name(p.format));
        goto cleanup;
    }
    if (float_in && !integral && (o->depth == GS_DEPTH_TO_8 || o->depth == GS_DEPTH_TO_16)) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%s: float32 samples are smoothed to float32 (--depth 8 and 16 take integer input)",
                     input);
        goto cleanup;
    }
    rc = job->select(job->select_ctx, gs_work_needs(o, p.in_bits, float_out),
                     gs_work_size(o, p.width, p.height), &p.backend, &p.instance, msg, sizeof msg);
    if (rc != GS_OK) {
        gs_fail(err, err_size, rc, "%s: %s", input, msg);
        goto cleanup;
    }
    const gs_plugin_desc *d = p.backend;
    facts->backend = d->name;
    rc = gs_backend_takes(d, o, p.in_bits, msg, sizeof msg);
    if (rc != GS_OK) {
        gs_fail(err, err_size, rc, "%s: %s", input, msg);
        goto cleanup;
    }
    p.out_bits = o->mode == GS_MODE_INTEGRAL_ROWS ? gs_integral_rows_bits(p.in_bits, p.width)
                 : o->mode == GS_MODE_INTEGRAL_2D ? gs_integral_2d_bits(p.in_bits, p.width, p.height)
                 : float_out ? 32u : p.in_bits;
    p.file_bits = p.view ? 16 : integral ? p.out_bits
                  : o->depth != GS_DEPTH_KEEP ? (uint32_t)o->depth : p.in_bits;
    p.file_kind = float_out ? GS_SAMPLES_FLOAT : GS_SAMPLES_UINT;
    /* Smoothing moves no pixel: a FITS input's world coordinates hold for its output. */
    if (!integral) p.cards = gs_reader_fits_cards(reader, &p.card_count);
    p.convert = p.view || p.file_bits != p.out_bits;
    p.align = d->alignment > 16 ? d->alignment : 16;
    p.in_stride = gs_round_up((size_t)p.width * (p.in_bits / 8), p.align);
    p.out_stride = gs_round_up((size_t)p.width * (p.out_bits / 8), p.align);
    p.conv_stride = gs_round_up((size_t)p.width * (p.file_bits / 8), p.align);
    size_t strip_bytes = d->preferred_strip_bytes ? d->preferred_strip_bytes : GS_DEFAULT_STRIP_BYTES;
    p.strip_rows = p.in_stride >= strip_bytes ? 1u : (uint32_t)(strip_bytes / p.in_stride);
    /* Down columns, each strip is decoded with `halo` rows above and below it: strips of 8
     * halos keep that extra work to a quarter while a window fits HALO_WINDOW_BYTES, and
     * strips are never under 2 halos (half). */
    p.halo = gs_work_op(o) == GS_OP_SMOOTH_AXES ? o->iters : 0;
    if (p.halo) {
        uint64_t want = 8ull * p.halo, fits = HALO_WINDOW_BYTES / p.in_stride;
        if (want > fits) want = fits;
        if (want < 2ull * p.halo) want = 2ull * p.halo;
        if (p.strip_rows < want) p.strip_rows = want > p.height ? p.height : (uint32_t)want;
    }
    if (p.strip_rows > p.height) p.strip_rows = p.height;
    if (p.halo > p.height) p.halo = p.height;
    /* Strips spread over the runners (devices) when they do not depend on each other: two
     * strips a runner at least, while a strip stays at least two halos tall. */
    p.runners = job->runners && !p.view && o->mode != GS_MODE_INTEGRAL_2D
                  ? job->runners(job->select_ctx, d) : 1u;
    if (p.runners > GS_MAX_RUNNERS) p.runners = GS_MAX_RUNNERS;
    if (p.runners < 1) p.runners = 1;
    if (p.runners > 1) {
        uint64_t even = ((uint64_t)p.height + 2 * p.runners - 1) / (2 * p.runners);
        if (even < p.strip_rows && even >= 2ull * p.halo) p.strip_rows = (uint32_t)even;
    }
    /* A runner without a strip would start a device for nothing. */
    const uint32_t strips = (p.height + p.strip_rows - 1) / p.strip_rows;
    if (p.runners > strips) p.runners = strips;
    p.window_rows = p.strip_rows + 2 * p.halo < p.height ? p.strip_rows + 2 * p.halo : p.height;
    p.column_sums = alloc_rows(1, (size_t)p.width * (p.out_bits / 8), p.align);
    if (!p.column_sums) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: out of memory", input);
        goto cleanup;
    }

    device_times dev = {0, 0, 0};
    rc = p.view ? run_view(&p, reader, times, &dev, err, err_size)
                : run_streamed(&p, reader, times, &dev, err, err_size);
    if (rc == GS_OK && job->note && gs_reader_note(reader)) job->note(job->note_user, input, gs_reader_note(reader));
    if (rc == GS_OK && (dev.kernel || dev.upload || dev.download)) {
        times->upload = dev.upload;
        times->download = dev.download;
        times->kernel = dev.kernel; /* the device's own figure, summed over the runners */
    }

cleanup:
    gs_reader_close(reader);
    free(p.column_sums);
    times->total = now_ns() - t_start;
    return rc;
}

void gs_file_result_of(const gs_image_facts *facts, const gs_phase_times *t, gsmooth_file_result *r)
{
    memset(r, 0, sizeof *r);
    r->struct_size = sizeof *r;
    if (facts) {
        r->width = facts->width, r->height = facts->height, r->bits = facts->bits;
        r->backend = facts->backend;
    }
    if (t) {
        r->decode_ns = t->decode, r->upload_ns = t->upload, r->kernel_ns = t->kernel;
        r->download_ns = t->download, r->encode_ns = t->encode, r->total_ns = t->total;
    }
}
