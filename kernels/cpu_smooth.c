/* cpu_smooth.c: fused, tiled, threaded row smoothing: all passes over a cache-sized chunk of a row, with halos, so no pass sweeps memory. */
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "parallel.h"
#include "stencil_math.h"

/* Sample conversion to and from float, one definition per sample type. */
#define GS_DEFINE_CONVERT(T, SUFFIX)                                                  \
    static void load_##SUFFIX(const void *row, long x0, long x1, float *dst)         \
    {                                                                                \
        const T *src = (const T *)row;                                               \
        for (long x = x0; x < x1; ++x) dst[x - x0] = (float)src[x];                  \
    }                                                                                \
    static void store_##SUFFIX(const float *src, long x0, long x1, void *row,        \
                               float maxval)                                         \
    {                                                                                \
        T *dst = (T *)row;                                                           \
        for (long x = x0; x < x1; ++x) dst[x] = (T)gs_quantize(src[x - x0], maxval); \
    }
GS_DEFINE_CONVERT(uint8_t, u8)
GS_DEFINE_CONVERT(uint16_t, u16)
#undef GS_DEFINE_CONVERT

typedef struct smooth_job {
    const gs_strip *strip;   /* the strip */
    uint32_t iters;          /* passes */
    long chunk;              /* output samples per work item */
    size_t chunks_per_row;   /* work items per row */
    gs_cpu_workspace *ws;    /* per-worker scratch */
} smooth_job;

static int smooth_item(void *ctx, size_t item, unsigned worker)
{
    const smooth_job *job = ctx;
    const gs_strip *s = job->strip;
    const long width = s->width, k = job->iters;
    const size_t row = item / job->chunks_per_row;
    const long x0 = (long)(item % job->chunks_per_row) * job->chunk;
    const long x1 = x0 + job->chunk < width ? x0 + job->chunk : width;
    /* Input span: the chunk plus k samples of halo on each side, clipped to the row. */
    const long lo = x0 - k > 0 ? x0 - k : 0;
    const long hi = x1 + k < width ? x1 + k : width;
    const void *in = (const uint8_t *)s->src + row * s->src_stride;
    void *out = (uint8_t *)s->dst + row * s->dst_stride;
    float *a = job->ws->buffers[worker];
    float *b = a + (hi - lo);

    if (s->in_bits == 16) load_u16(in, lo, hi, a);
    else load_u8(in, lo, hi, a);
    for (long p = 0; p < k; ++p) {
        /* After p+1 passes, only positions at least p+1 away from a cut (not a row end)
         * still equal the whole-row result. */
        long plo = lo == 0 ? 0 : lo + p + 1;
        long phi = hi == width ? width : hi - p - 1;
        gs_pass_range(a, b, lo, plo, phi, width);
        float *t = a; a = b; b = t;
    }
    if (s->in_bits == 16) store_u16(a + (x0 - lo), x0, x1, out, 65535.0f);
    else store_u8(a + (x0 - lo), x0, x1, out, 255.0f);
    return 0;
}

static int reserve(gs_cpu_workspace *ws, unsigned workers, size_t floats)
{
    if (ws->workers >= workers && ws->floats_each >= floats) return 0;
    gs_cpu_workspace_release(ws);
    ws->buffers = calloc(workers, sizeof *ws->buffers);
    if (!ws->buffers) return -1;
    ws->workers = workers;
    ws->floats_each = floats;
    for (unsigned w = 0; w < workers; ++w) {
        ws->buffers[w] = malloc(floats * sizeof(float));
        if (!ws->buffers[w]) {
            gs_cpu_workspace_release(ws);
            return -1;
        }
    }
    return 0;
}

void gs_cpu_workspace_release(gs_cpu_workspace *ws)
{
    if (ws->buffers)
        for (unsigned w = 0; w < ws->workers; ++w) free(ws->buffers[w]);
    free(ws->buffers);
    memset(ws, 0, sizeof *ws);
}

int gs_cpu_smooth_strip(const gs_strip *strip, uint32_t iters, unsigned threads,
                        gs_cpu_workspace *ws)
{
    const long width = strip->width;
    if (threads == 0) threads = gs_cpu_count();
    /* A row that fits one chunk with its halo is done whole: no halo work at all. */
    long chunk = width <= (long)GS_CPU_CHUNK + 2L * iters ? width : (long)GS_CPU_CHUNK;
    if (chunk < 2L * (long)iters && chunk < width) chunk = 2L * (long)iters; /* bound halo overhead */
    size_t chunks_per_row = (size_t)((width + chunk - 1) / chunk);
    size_t items = chunks_per_row * strip->rows;
    size_t floats = 2 * (size_t)(chunk + 2L * iters < width ? chunk + 2L * iters : width);
    unsigned workers = threads < items ? threads : (unsigned)items;
    if (reserve(ws, workers, floats) != 0) return -1;
    smooth_job job = {strip, iters, chunk, chunks_per_row, ws};
    return gs_parallel_for(workers, items, smooth_item, &job);
}
