/* buffers.c: libgsmooth on caller buffers: smoothing and integrals of images in host memory (spread over the context's devices) or in a CUDA device's memory (in place, no copy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "library.h"
#include "pipeline.h"

static size_t row_bytes(const gsmooth_image *im) { return (size_t)im->width * (im->bits / 8); }

/* The bytes an image spans: every row's stride but the last, which needs only its samples. */
static size_t span_bytes(const gsmooth_image *im)
{
    return (size_t)(im->height - 1) * im->stride + row_bytes(im);
}

static gs_status check_image(const gsmooth_image *im, const char *what, char *err, size_t err_size)
{
    if (!im || !im->data) return gs_fail(err, err_size, GS_ERR_USAGE, "%s: no data", what);
    if (im->width == 0 || im->height == 0)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: empty image (%ux%u)", what, im->width, im->height);
    if (im->memory != GSMOOTH_MEMORY_HOST && im->memory != GSMOOTH_MEMORY_CUDA)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: unknown memory kind %d", what, (int)im->memory);
    if (im->bits != 8 && im->bits != 16 && im->bits != 32 && im->bits != 64)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "%s: %u-bit values; gsmooth takes 8 or 16 (samples), 32 or 64 (integrals)", what,
                       im->bits);
    const size_t sample = im->bits / 8;
    if (sample > 1 && ((uintptr_t)im->data % sample || im->stride % sample))
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "%s: %u-bit values must start on %zu-byte boundaries (data and stride)", what,
                       im->bits, sample);
    if (im->stride < row_bytes(im))
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: row stride %zu is below one row (%zu bytes)",
                       what, im->stride, row_bytes(im));
    if (im->height > 1 && im->stride > (SIZE_MAX - row_bytes(im)) / (im->height - 1))
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "%s: %ux%u rows of stride %zu overflow", what,
                       im->width, im->height, im->stride);
    return GS_OK;
}

/* Source and result: valid, the same size, in the same memory, not overlapping. */
static gs_status check_pair(const gsmooth_image *src, const gsmooth_image *dst, uint32_t dst_bits,
                            char *err, size_t err_size)
{
    gs_status rc = check_image(src, "source", err, err_size);
    if (rc == GS_OK) rc = check_image(dst, "result", err, err_size);
    if (rc != GS_OK) return rc;
    if (src->bits != 8 && src->bits != 16 && src->bits != 32)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "source: %u-bit samples; gsmooth takes 8 or 16, or 32 (float32)", src->bits);
    if (dst->width != src->width || dst->height != src->height)
        return gs_fail(err, err_size, GS_ERR_USAGE, "result is %ux%u, the source %ux%u", dst->width,
                       dst->height, src->width, src->height);
    if (dst->bits != dst_bits)
        return gs_fail(err, err_size, GS_ERR_USAGE, "result has %u-bit values; this needs %u",
                       dst->bits, dst_bits);
    if (dst->memory != src->memory ||
        (src->memory == GSMOOTH_MEMORY_CUDA && src->device != dst->device))
        return gs_fail(err, err_size, GS_ERR_USAGE, "source and result are in different memories");
    const char *s = src->data, *d = dst->data;
    if (s < d + span_bytes(dst) && d < s + span_bytes(src))
        return gs_fail(err, err_size, GS_ERR_USAGE, "source and result overlap");
    return GS_OK;
}

/* Where a call's device work is queued: the plugin's own streams, waited for before the
 * call returns (stream NULL), or a caller's CUDA stream (gsmooth_*_on_stream). */
typedef struct queue {
    void *stream; /* NULL, or the gs_strip.stream to hand the plugin */
} queue;

static const queue kWaited = {NULL};

/* Rows [y0, y0 + rows) of the image on one instance. Smoothing down columns reads up to
 * `iters` rows more on each side (the plugin ABI's halo rule), so the rows written are
 * exactly those of the whole image. The rows are the whole 2d table's (one share), so its
 * column sums start at zero. */
static gs_status run_rows(const gs_plugin_desc *d, gs_plugin_instance *inst, const gs_work *w,
                          const gsmooth_image *src, const gsmooth_image *dst, uint32_t y0,
                          uint32_t rows, queue q, char *err, size_t err_size)
{
    const int halo = gs_work_op(w) == GS_OP_SMOOTH_AXES;
    const uint32_t above = halo ? (y0 < w->iters ? y0 : w->iters) : 0;
    const uint32_t left = src->height - (y0 + rows);
    const uint32_t below = halo ? (left < w->iters ? left : w->iters) : 0;
    gs_strip strip = {GS_ABI_HEADER_INIT(gs_strip), src->width, rows, src->bits, dst->bits,
                      (const char *)src->data + (size_t)(y0 - above) * src->stride, src->stride,
                      (char *)dst->data + (size_t)y0 * dst->stride, dst->stride, q.stream};
    void *column_sums = NULL;
    if (w->mode == GS_MODE_INTEGRAL_2D && !(column_sums = calloc(src->width, dst->bits / 8)))
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    /* float64 sums start from -0.0, the identity of addition (the plugin ABI's definition) */
    if (column_sums && src->bits == 32)
        for (uint32_t x = 0; x < src->width; ++x) ((double *)column_sums)[x] = -0.0;
    gs_status rc = gs_backend_run(d, inst, w, &strip, above, below, column_sums, err, err_size);
    free(column_sums);
    return rc;
}

/* A share of rows for one runner (device) of a host-memory call. */
typedef struct share {
    gsmooth_context *ctx;
    const gs_plugin_desc *desc;
    gs_plugin_instance *instance; /* runner 0's comes from select; the others make their own */
    unsigned runner;
    const gs_work *work;
    const gsmooth_image *src, *dst;
    uint32_t y0, rows;
    gs_status rc;
    char err[GS_ERR_SIZE];
} share;

static void *run_share(void *arg)
{
    share *b = arg;
    if (!b->instance)
        b->rc = gs_instances_runner(&b->ctx->instances, b->runner, b->desc, &b->instance, b->err, sizeof b->err);
    if (b->rc == GS_OK)
        b->rc = run_rows(b->desc, b->instance, b->work, b->src, b->dst, b->y0, b->rows, kWaited,
                         b->err, sizeof b->err);
    return NULL;
}

/* Host memory: the backend auto picks for the work, the rows cut into one share per device
 * the context uses (the 2d table's columns run top to bottom: one share). */
/* What the backend must take: the work's operation, and float32 samples in or out. */
static uint32_t needs_of(const gs_work *w, const gsmooth_image *src, const gsmooth_image *dst)
{
    return gs_work_needs(w, src->bits, w->mode == GS_MODE_SMOOTH && dst->bits == 32);
}

static gs_status run_host(gsmooth_context *ctx, const gs_work *w, const gsmooth_image *src,
                          const gsmooth_image *dst, char *err, size_t err_size)
{
    const gs_plugin_desc *d = NULL;
    gs_plugin_instance *inst = NULL;
    gs_status rc = gs_instances_select(&ctx->instances, needs_of(w, src, dst),
                                    gs_work_size(w, src->width, src->height), &d, &inst, err, err_size);
    if (rc != GS_OK) return rc;
    if ((rc = gs_backend_takes(d, w, src->bits, err, err_size)) != GS_OK) return rc;
    const size_t align = d->alignment;
    if ((uintptr_t)src->data % align || src->stride % align || (uintptr_t)dst->data % align ||
        dst->stride % align)
        return gs_fail(err, err_size, GS_ERR_USAGE, "backend %s needs rows aligned to %zu bytes",
                       d->name, align);
    unsigned runners = w->mode == GS_MODE_INTEGRAL_2D ? 1u : gs_instances_runners(&ctx->instances, d);
    if (runners > src->height) runners = src->height;
    if (runners > GS_MAX_RUNNERS) runners = GS_MAX_RUNNERS;
    if (runners <= 1) return run_rows(d, inst, w, src, dst, 0, src->height, kWaited, err, err_size);

    share shares[GS_MAX_RUNNERS];
    pthread_t threads[GS_MAX_RUNNERS];
    int started[GS_MAX_RUNNERS] = {0};
    const uint32_t per = (src->height + runners - 1) / runners;
    for (unsigned l = 0; l < runners; ++l) {
        const uint32_t y0 = l * per;
        shares[l] = (share){ctx, d, l == 0 ? inst : NULL, l, w, src, dst, y0,
                          y0 >= src->height ? 0 : (src->height - y0 < per ? src->height - y0 : per),
                          GS_OK, ""};
    }
    for (unsigned l = 1; l < runners; ++l)
        if (shares[l].rows) started[l] = pthread_create(&threads[l], NULL, run_share, &shares[l]) == 0;
    run_share(&shares[0]);
    rc = shares[0].rc;
    if (rc != GS_OK) gs_fail(err, err_size, rc, "%s", shares[0].err);
    for (unsigned l = 1; l < runners; ++l) {
        if (!shares[l].rows) continue;
        if (started[l]) {
            pthread_join(threads[l], NULL);
        } else {
            run_share(&shares[l]); /* no thread to spare: this one does it */
        }
        if (rc == GS_OK && shares[l].rc != GS_OK) rc = gs_fail(err, err_size, shares[l].rc, "%s", shares[l].err);
    }
    return rc;
}

/* CUDA memory: a backend that takes device memory (and a stream, for a queued call), on the
 * buffers' device, in one call. */
static gs_status run_device(gsmooth_context *ctx, const gs_work *w, const gsmooth_image *src,
                            const gsmooth_image *dst, queue q, char *err, size_t err_size)
{
    const gs_plugin_desc *d = NULL;
    gs_plugin_instance *inst = NULL;
    if (src->device < 0)
        return gs_fail(err, err_size, GS_ERR_USAGE, "CUDA device %d does not exist", src->device);
    const uint32_t memories = GS_MEMORY_DEVICE | (q.stream ? GS_MEMORY_STREAM : 0u);
    gs_status rc = gs_instances_device_memory(&ctx->instances, needs_of(w, src, dst), memories,
                                              src->device, &d, &inst, err, err_size);
    if (rc != GS_OK) return rc;
    if ((rc = gs_backend_takes(d, w, src->bits, err, err_size)) != GS_OK) return rc;
    return run_rows(d, inst, w, src, dst, 0, src->height, q, err, err_size);
}

static gsmooth_status run(gsmooth_context *ctx, const gs_work *w, const gsmooth_image *src,
                          const gsmooth_image *dst, uint32_t dst_bits, queue q, char *err,
                          size_t err_size)
{
    if (!ctx) return gs_fail(err, err_size, GS_ERR_USAGE, "null context");
    gs_status rc = check_pair(src, dst, dst_bits, err, err_size);
    if (rc != GS_OK) return rc;
    if (q.stream && src->memory != GSMOOTH_MEMORY_CUDA)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "a call on a CUDA stream takes CUDA buffers, not host memory");
    pthread_mutex_lock(&ctx->call);
    rc = src->memory == GSMOOTH_MEMORY_CUDA ? run_device(ctx, w, src, dst, q, err, err_size)
                                           : run_host(ctx, w, src, dst, err, err_size);
    pthread_mutex_unlock(&ctx->call);
    return rc;
}

/* A caller's stream as the plugin ABI names it: NULL, CUDA's legacy default stream, is
 * cudaStreamLegacy there (a NULL gs_strip.stream means no stream). */
static queue queue_of(void *cuda_stream)
{
    return (queue){cuda_stream ? cuda_stream : GS_CUDA_STREAM_LEGACY};
}

static gsmooth_status smooth_on(gsmooth_context *ctx, const gsmooth_image *src,
                                const gsmooth_image *dst, uint32_t iters, uint32_t axes, queue q,
                                char *err, size_t err_size)
{
    gs_status rc = gs_check_smoothing(iters, axes, err, err_size);
    if (rc != GS_OK) return rc;
    const gs_work w = {GS_MODE_SMOOTH, iters, axes, GS_DEPTH_KEEP, 0};
    /* the result at the source's depth, or float32: the unrounded passes */
    const uint32_t dst_bits = dst && dst->bits == 32 ? 32u : src ? src->bits : 0;
    return run(ctx, &w, src, dst, dst_bits, q, err, err_size);
}

gsmooth_status gsmooth_smooth(gsmooth_context *ctx, const gsmooth_image *src,
                              const gsmooth_image *dst, uint32_t iters, uint32_t axes, char *err,
                              size_t err_size)
{
    return smooth_on(ctx, src, dst, iters, axes, kWaited, err, err_size);
}

gsmooth_status gsmooth_smooth_on_stream(gsmooth_context *ctx, const gsmooth_image *src,
                                        const gsmooth_image *dst, uint32_t iters, uint32_t axes,
                                        void *cuda_stream, char *err, size_t err_size)
{
    return smooth_on(ctx, src, dst, iters, axes, queue_of(cuda_stream), err, err_size);
}

uint32_t gsmooth_integral_bits(gsmooth_integral_mode mode, uint32_t in_bits, uint32_t width,
                               uint32_t height)
{
    if (in_bits != 8 && in_bits != 16 && in_bits != 32) return 0;
    if (mode == GSMOOTH_INTEGRAL_ROWS) return gs_integral_rows_bits(in_bits, width);
    if (mode == GSMOOTH_INTEGRAL_2D) return gs_integral_2d_bits(in_bits, width, height);
    return 0;
}

static gsmooth_status integral_on(gsmooth_context *ctx, const gsmooth_image *src,
                                  const gsmooth_image *dst, gsmooth_integral_mode mode, queue q,
                                  char *err, size_t err_size)
{
    if (mode != GSMOOTH_INTEGRAL_ROWS && mode != GSMOOTH_INTEGRAL_2D)
        return gs_fail(err, err_size, GS_ERR_USAGE, "integral mode is GSMOOTH_INTEGRAL_ROWS or GSMOOTH_INTEGRAL_2D, not %d", (int)mode);
    const int rows = mode == GSMOOTH_INTEGRAL_ROWS;
    const gs_work w = {rows ? GS_MODE_INTEGRAL_ROWS : GS_MODE_INTEGRAL_2D, 0, 0, GS_DEPTH_KEEP, 0};
    const uint32_t bits = src ? gsmooth_integral_bits(mode, src->bits, src->width, src->height) : 0;
    return run(ctx, &w, src, dst, bits, q, err, err_size);
}

gsmooth_status gsmooth_integral(gsmooth_context *ctx, const gsmooth_image *src,
                                const gsmooth_image *dst, gsmooth_integral_mode mode, char *err,
                                size_t err_size)
{
    return integral_on(ctx, src, dst, mode, kWaited, err, err_size);
}

gsmooth_status gsmooth_integral_on_stream(gsmooth_context *ctx, const gsmooth_image *src,
                                          const gsmooth_image *dst, gsmooth_integral_mode mode,
                                          void *cuda_stream, char *err, size_t err_size)
{
    return integral_on(ctx, src, dst, mode, queue_of(cuda_stream), err, err_size);
}
