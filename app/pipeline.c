/* pipeline.c: streams one image through a backend strip by strip (decode, compute, convert, encode) in bounded memory. */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "image_io.h"
#include "integral_dtype.h"

/* Source bytes per strip when the backend states no preference. */
#define GS_DEFAULT_STRIP_BYTES (4u << 20)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t gs_mode_op(gs_mode mode)
{
    switch (mode) {
    case GS_MODE_INTEGRAL_ROWS: return GS_OP_INTEGRAL_ROWS;
    case GS_MODE_INTEGRAL_2D: return GS_OP_INTEGRAL_2D;
    default: return GS_OP_SMOOTH_ROWS;
    }
}

static size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

/* One strip through the backend's operation for `mode`. */
static gs_status run_op(const gs_job *job, const gs_plugin_desc *d, gs_plugin_instance *inst,
                        const gs_strip *strip, void *column_sums, char *err, size_t err_size)
{
    char msg[256] = "";
    gs_plugin_status st;
    switch (job->options->mode) {
    case GS_MODE_INTEGRAL_ROWS: st = d->integral_rows(inst, strip, msg, sizeof msg); break;
    case GS_MODE_INTEGRAL_2D:
        st = d->integral_2d(inst, strip, column_sums, msg, sizeof msg);
        break;
    default: st = d->smooth_rows(inst, strip, job->options->iters, msg, sizeof msg); break;
    }
    if (st == GS_PLUGIN_OK) return GS_OK;
    return gs_fail(err, err_size, st == GS_PLUGIN_ERR_NOMEM ? GS_ERR_NOMEM : GS_ERR_BACKEND,
                   "backend %s failed: %s", d->name, msg[0] ? msg : "no reason given");
}

/* Smoothing output at another depth: 16 -> 8 rounds to nearest, 8 -> 16 scales by 257. */
static void convert_depth(const void *src, size_t src_stride, uint32_t src_bits, void *dst,
                          size_t dst_stride, uint32_t dst_bits, uint32_t width, uint32_t rows)
{
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * src_stride;
        uint8_t *d = (uint8_t *)dst + r * dst_stride;
        for (uint32_t x = 0; x < width; ++x) {
            if (src_bits == 16 && dst_bits == 8)
                d[x] = (uint8_t)((((const uint16_t *)s)[x] * 255u + 32767u) / 65535u);
            else
                ((uint16_t *)d)[x] = (uint16_t)(s[x] * 257u);
        }
    }
}

/* Integral values scaled to 0..65535 for a viewable picture (max > 0). */
static void scale_for_view(const void *src, size_t src_stride, uint32_t bits, uint64_t max,
                           uint16_t *dst, size_t dst_stride, uint32_t width, uint32_t rows)
{
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * src_stride;
        uint16_t *d = (uint16_t *)((uint8_t *)dst + r * dst_stride);
        for (uint32_t x = 0; x < width; ++x) {
            uint64_t v = bits == 64 ? ((const uint64_t *)s)[x] : ((const uint32_t *)s)[x];
            d[x] = max ? (uint16_t)(((unsigned __int128)v * 65535u + max / 2) / max) : 0;
        }
    }
}

static uint64_t strip_max(const void *src, size_t stride, uint32_t bits, uint32_t width,
                          uint32_t rows)
{
    uint64_t m = 0;
    for (uint32_t r = 0; r < rows; ++r) {
        const uint8_t *s = (const uint8_t *)src + r * stride;
        /* Sums only grow along a row, so its last value is its largest. */
        uint64_t v = bits == 64 ? ((const uint64_t *)s)[width - 1] : ((const uint32_t *)s)[width - 1];
        if (v > m) m = v;
    }
    return m;
}

typedef struct buffers {
    void *in;           /* one strip of decoded samples (or the whole image, for views) */
    void *out;          /* one strip of backend output */
    void *conv;         /* one strip converted for the file, when needed */
    void *column_sums;  /* 2d carry */
} buffers;

static void *alloc_checked(size_t count, size_t size, size_t align)
{
    if (size && count > SIZE_MAX / size) return NULL;
    size_t bytes = count * size;
    size_t n = round_up(bytes > 0 ? bytes : 1, align);
    return aligned_alloc(align, n);
}

gs_status gs_pipeline_run(const gs_job *job, const char *input, const char *output,
                          gs_phase_times *times, char *err, size_t err_size)
{
    const gs_options *o = job->options;
    const gs_plugin_desc *d = NULL;
    gs_plugin_instance *inst = NULL;
    gs_reader *reader = NULL;
    gs_writer *writer = NULL;
    buffers buf = {0};
    gs_image_info info;
    gs_out_format fmt;
    gs_status st;
    char msg[512] = "";
    uint64_t t_start = now_ns(), t;
    gs_plugin_timings before = {GS_ABI_HEADER_INIT(gs_plugin_timings), 0, 0, 0};
    gs_plugin_timings after = before;
    memset(times, 0, sizeof *times);

    st = gs_out_format_from_path(output, &fmt, msg, sizeof msg);
    if (st != GS_OK) {
        gs_fail(err, err_size, st, "%s: %s", output, msg);
        goto cleanup;
    }
    int integral = o->mode != GS_MODE_SMOOTH;
    int view = integral && fmt != GS_OUT_NPY; /* a picture of the integral, scaled */
    if (integral && view && fmt != GS_OUT_PNG && fmt != GS_OUT_PGM) {
        st = gs_fail(err, err_size, GS_ERR_USAGE,
                     "%s: integral output must be .npy (exact) or .png/.pgm (for viewing)", output);
        goto cleanup;
    }

    t = now_ns();
    st = gs_reader_open(input, o->max_pixels, &reader, &info, msg, sizeof msg);
    times->decode += now_ns() - t;
    if (st != GS_OK) {
        gs_fail(err, err_size, st, "%s: %s", input, msg);
        goto cleanup;
    }
    if (job->note && info.was_color)
        job->note(input, "colour converted to gray with BT.601 luma");
    if (job->note && info.had_alpha) job->note(input, "alpha channel dropped");
    if (job->note && view)
        job->note(output, "integral scaled to 16 bits for viewing; use .npy for exact values");

    const uint32_t width = info.width, height = info.height, in_bits = info.bits;
    uint64_t work = (uint64_t)width * height * (integral || o->iters == 0 ? 1u : o->iters);
    st = job->select(job->select_ctx, work, &d, &inst, msg, sizeof msg);
    if (st != GS_OK) {
        gs_fail(err, err_size, st, "%s", msg);
        goto cleanup;
    }
    const uint32_t out_bits =
        o->mode == GS_MODE_INTEGRAL_ROWS ? gs_integral_rows_bits(in_bits, width)
        : o->mode == GS_MODE_INTEGRAL_2D ? gs_integral_2d_bits(in_bits, width, height)
                                         : in_bits;
    const uint32_t file_bits = view ? 16 : integral ? out_bits
                               : o->depth != GS_DEPTH_KEEP ? (uint32_t)o->depth : in_bits;
    if (!(d->depths & (in_bits == 16 ? GS_DEPTH_U16 : GS_DEPTH_U8))) {
        st = gs_fail(err, err_size, GS_ERR_BACKEND, "%s: backend %s does not take %u-bit samples",
                     input, d->name, in_bits);
        goto cleanup;
    }

    const size_t align = d->alignment > 16 ? d->alignment : 16;
    const size_t in_stride = round_up((size_t)width * (in_bits / 8), align);
    const size_t out_stride = round_up((size_t)width * (out_bits / 8), align);
    const size_t conv_stride = round_up((size_t)width * (file_bits / 8), align);
    const int convert = view || file_bits != out_bits;
    size_t strip_bytes = d->preferred_strip_bytes ? d->preferred_strip_bytes : GS_DEFAULT_STRIP_BYTES;
    uint32_t strip_rows = in_stride >= strip_bytes ? 1u : (uint32_t)(strip_bytes / in_stride);
    if (strip_rows > height) strip_rows = height;

    /* A view needs the maximum before the first row is written: keep the (8/16-bit)
     * input whole and run the integral twice, once to find the maximum. */
    uint32_t in_rows = view ? height : strip_rows;
    buf.in = alloc_checked(in_rows, in_stride, align);
    buf.out = alloc_checked(strip_rows, out_stride, align);
    buf.conv = convert ? alloc_checked(strip_rows, conv_stride, align) : NULL;
    buf.column_sums = alloc_checked(width, out_bits / 8, align);
    if (!buf.in || !buf.out || (convert && !buf.conv) || !buf.column_sums) {
        st = gs_fail(err, err_size, GS_ERR_NOMEM, "%s: out of memory for %ux%u strips", input,
                     width, strip_rows);
        goto cleanup;
    }
    if (view) {
        t = now_ns();
        st = gs_reader_read_rows(reader, buf.in, in_stride, height, msg, sizeof msg);
        times->decode += now_ns() - t;
        if (st != GS_OK) {
            gs_fail(err, err_size, st, "%s: %s", input, msg);
            goto cleanup;
        }
    }

    if (d->timings) d->timings(inst, &before);
    uint64_t view_max = 0;
    for (int pass = view ? 0 : 1; pass < 2; ++pass) {
        memset(buf.column_sums, 0, (size_t)width * (out_bits / 8));
        if (pass == 1) {
            st = gs_writer_open(output, fmt, width, height, file_bits, &writer, msg, sizeof msg);
            if (st != GS_OK) {
                gs_fail(err, err_size, st, "%s: %s", output, msg);
                goto cleanup;
            }
        }
        for (uint32_t y = 0; y < height; y += strip_rows) {
            uint32_t rows = height - y < strip_rows ? height - y : strip_rows;
            const uint8_t *src = view ? (const uint8_t *)buf.in + (size_t)y * in_stride : buf.in;
            if (!view) {
                t = now_ns();
                st = gs_reader_read_rows(reader, buf.in, in_stride, rows, msg, sizeof msg);
                times->decode += now_ns() - t;
                if (st != GS_OK) {
                    gs_fail(err, err_size, st, "%s: %s", input, msg);
                    goto cleanup;
                }
            }
            gs_strip strip = {GS_ABI_HEADER_INIT(gs_strip), width, rows, in_bits, out_bits,
                              src, in_stride, buf.out, out_stride};
            t = now_ns();
            st = run_op(job, d, inst, &strip, buf.column_sums, msg, sizeof msg);
            times->kernel += now_ns() - t;
            if (st != GS_OK) {
                gs_fail(err, err_size, st, "%s: %s", input, msg);
                goto cleanup;
            }
            if (pass == 0) {
                uint64_t m = strip_max(buf.out, out_stride, out_bits, width, rows);
                if (m > view_max) view_max = m;
                continue;
            }
            t = now_ns();
            const void *rows_out = buf.out;
            size_t rows_stride = out_stride;
            if (view) {
                scale_for_view(buf.out, out_stride, out_bits, view_max, buf.conv, conv_stride,
                               width, rows);
                rows_out = buf.conv, rows_stride = conv_stride;
            } else if (convert) {
                convert_depth(buf.out, out_stride, out_bits, buf.conv, conv_stride, file_bits,
                              width, rows);
                rows_out = buf.conv, rows_stride = conv_stride;
            }
            st = gs_writer_write_rows(writer, rows_out, rows_stride, rows, msg, sizeof msg);
            times->encode += now_ns() - t;
            if (st != GS_OK) {
                gs_fail(err, err_size, st, "%s: %s", output, msg);
                goto cleanup;
            }
        }
    }
    t = now_ns();
    st = gs_writer_commit(writer, msg, sizeof msg);
    writer = NULL; /* commit frees it, on success and failure alike */
    times->encode += now_ns() - t;
    if (st != GS_OK) {
        gs_fail(err, err_size, st, "%s: %s", output, msg);
        goto cleanup;
    }
    if (d->timings) {
        d->timings(inst, &after);
        times->upload = after.upload_ns - before.upload_ns;
        times->download = after.download_ns - before.download_ns;
        uint64_t device = after.kernel_ns - before.kernel_ns;
        if (device || times->upload || times->download) times->kernel = device;
    }

cleanup:
    gs_writer_abort(writer);
    gs_reader_close(reader);
    free(buf.in);
    free(buf.out);
    free(buf.conv);
    free(buf.column_sums);
    times->total = now_ns() - t_start;
    return st;
}
