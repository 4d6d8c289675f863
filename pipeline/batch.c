/* batch.c: a worker pool over the input files; each worker owns its backend instances, and results are reported through the caller's events. */
#define _GNU_SOURCE
#include "batch.h"

#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image_io.h"
#include "png_tuning.h"

typedef struct batch {
    gs_session *session;            /* backends */
    const gs_batch_request *req;    /* what to do */
    const gs_batch_events *events;  /* the caller's reporting */
    unsigned threads;               /* CPU threads per file */
    char **outputs;                 /* output path of each input; NULL if too long */
    int *first_user;                /* index of the first input with the same output, or -1 */
    pthread_mutex_t lock;           /* guards everything below and serialises events */
    unsigned next;                  /* next input to take */
    gs_batch_result result;         /* running totals */
    double start_s;                 /* wall clock at start */
} batch;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void gs_batch_plan(unsigned files, unsigned jobs_opt, unsigned threads_opt, unsigned cores,
                   unsigned *jobs, unsigned *threads)
{
    unsigned j = jobs_opt ? jobs_opt : cores;
    if (j > files) j = files;
    if (j < 1) j = 1;
    *jobs = j;
    *threads = threads_opt ? threads_opt : (cores / j ? cores / j : 1);
}

/* DIR/<input name> when smoothing into a format gsmooth writes exactly (.png .pgm .bmp
 * .tga); any other input (.jpg, .gif, .ppm, ...) becomes <stem>.png, so a batch never
 * loses precision to a lossy encoder the user did not ask for by name. An integral is
 * always <stem>.npy (no reader takes .npy, so no input keeps its name). */
static int output_path(const char *dir, const char *input, gs_mode mode, char *out, size_t size)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", input);
    const char *name = basename(copy);
    gs_out_format fmt;
    int writable = gs_out_format_from_path(name, &fmt, NULL, 0) == GS_OK && gs_out_format_lossless(fmt);
    if (mode != GS_MODE_SMOOTH) writable = writable && fmt == GS_OUT_NPY;
    if (writable) return snprintf(out, size, "%s/%s", dir, name) < (int)size ? 0 : -1;
    const char *dot = strrchr(name, '.');
    int stem = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
    return snprintf(out, size, "%s/%.*s.%s", dir, stem, name,
                    mode == GS_MODE_SMOOTH ? "png" : "npy") < (int)size ? 0 : -1;
}

static gs_status process(batch *b, gs_worker *w, unsigned i, char *err, size_t err_size,
                         gs_phase_times *t)
{
    const gs_batch_request *req = b->req;
    const char *in = req->inputs[i];
    if (strcmp(in, "-") == 0)
        return gs_fail(err, err_size, GS_ERR_USAGE, "-: standard input cannot be used in batch mode");
    if (!b->outputs[i]) return gs_fail(err, err_size, GS_ERR_USAGE, "%s: output path too long", in);
    if (b->first_user[i] >= 0)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: its output %s is already the output of %s",
                       in, b->outputs[i], req->inputs[b->first_user[i]]);
    gs_job job = {req->work, gs_worker_select, w, b->events->note};
    return gs_pipeline_run(&job, in, b->outputs[i], t, err, err_size);
}

/* Every input's output path, and which ones two inputs share (a/x.png and b/x.png): the
 * later ones fail instead of silently overwriting. 0, or -1 when out of memory. */
static int plan_outputs(batch *b)
{
    const gs_batch_request *req = b->req;
    unsigned n = req->input_count;
    b->outputs = calloc(n ? n : 1, sizeof *b->outputs);
    b->first_user = malloc((n ? n : 1) * sizeof *b->first_user);
    if (!b->outputs || !b->first_user) return -1;
    for (unsigned i = 0; i < n; ++i) {
        char out[PATH_MAX];
        b->first_user[i] = -1;
        if (output_path(req->out_dir, req->inputs[i], req->work.mode, out, sizeof out) == 0 &&
            !(b->outputs[i] = strdup(out)))
            return -1;
        for (unsigned j = 0; b->outputs[i] && j < i; ++j)
            if (b->outputs[j] && b->first_user[j] < 0 && strcmp(b->outputs[i], b->outputs[j]) == 0) {
                b->first_user[i] = (int)j;
                break;
            }
    }
    return 0;
}

static void free_outputs(batch *b)
{
    for (unsigned i = 0; b->outputs && i < b->req->input_count; ++i) free(b->outputs[i]);
    free(b->outputs);
    free(b->first_user);
}

static void *worker_main(void *arg)
{
    batch *b = arg;
    const gs_batch_request *req = b->req;
    gs_worker w;
    gs_worker_init(&w, b->session, b->threads);
    for (;;) {
        pthread_mutex_lock(&b->lock);
        unsigned i = b->next < req->input_count ? b->next++ : req->input_count;
        pthread_mutex_unlock(&b->lock);
        if (i >= req->input_count) break;
        const char *in = req->inputs[i];
        char err[GS_ERR_SIZE];
        gs_phase_times t;
        gs_status rc = process(b, &w, i, err, sizeof err, &t);
        struct stat sb;
        uint64_t bytes = rc == GS_OK && stat(in, &sb) == 0 ? (uint64_t)sb.st_size : 0;

        pthread_mutex_lock(&b->lock);
        if (rc == GS_OK) {
            b->result.done++;
            b->result.bytes += bytes;
            if (req->want_times && b->events->timed) b->events->timed(in, &t);
        } else {
            b->result.failed++;
            if (b->events->failed) b->events->failed(err);
        }
        unsigned finished = b->result.done + b->result.failed;
        double elapsed = now_s() - b->start_s;
        double eta = finished ? elapsed / finished * (b->result.files - finished) : 0;
        if (b->events->progress)
            b->events->progress(finished, b->result.files, b->result.bytes, elapsed, eta);
        pthread_mutex_unlock(&b->lock);
    }
    gs_worker_release(&w);
    return NULL;
}

void gs_batch_run(gs_session *session, const gs_batch_request *request,
                  const gs_batch_events *events, gs_batch_result *result)
{
    batch b;
    memset(&b, 0, sizeof b);
    b.session = session;
    b.req = request;
    b.events = events;
    b.result.files = request->input_count;
    b.start_s = now_s();
    pthread_mutex_init(&b.lock, NULL);
    unsigned jobs;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    gs_batch_plan(b.result.files, request->jobs, request->threads, cores > 0 ? (unsigned)cores : 1u,
                  &jobs, &b.threads);
    if (jobs > GS_MAX_JOBS) jobs = GS_MAX_JOBS;
    if (plan_outputs(&b) != 0) {
        if (events->failed) events->failed("out of memory for the batch's list of outputs");
        b.result.failed = b.result.files;
        goto cleanup;
    }
    gs_png_set_threads(b.threads); /* deflate threads per file, like the kernel's */

    pthread_t tid[GS_MAX_JOBS];
    unsigned started = 0;
    for (unsigned j = 1; j < jobs; ++j) {
        if (pthread_create(&tid[j], NULL, worker_main, &b) != 0) break; /* fewer workers */
        started = j;
    }
    worker_main(&b); /* this thread is a worker too */
    for (unsigned j = 1; j <= started; ++j) pthread_join(tid[j], NULL);

cleanup:
    b.result.elapsed_s = now_s() - b.start_s;
    *result = b.result;
    free_outputs(&b);
    pthread_mutex_destroy(&b.lock);
}
