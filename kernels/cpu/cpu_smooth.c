/* cpu_smooth.c: fused, tiled, threaded row smoothing. */
/* All passes run over a cache-sized chunk of a row, with halos, so no pass sweeps memory;
 * 8-bit rows at up to 4 passes are exact integer sums away from the row ends. */

#include <stdlib.h>
#include <string.h>

#include "cpu_isa.h"
#include "cpu_kernels.h"
#include "int_sums.h"
#include "parallel.h"
#include "stencil_math.h"

/*
 * One pass over row positions [lo, hi) of a row of `width` samples, reading `a` and
 * writing `b`, both holding row position x at index x - off. Positions 0 and width-1 use
 * the adaptive count; any other position reads its two neighbours, so the caller provides
 * a[lo-1] and a[hi] as halo wherever those are not row ends.
 */
static void pass_range(mean3_fn mean3, const float *a, float *b, long off, long lo, long hi,
                       long width)
{
    if (lo >= hi) return;
    if (width == 1) {
        b[0 - off] = a[0 - off];
        return;
    }
    if (lo == 0) {
        b[0 - off] = gs_mean2(a[0 - off], a[1 - off]);
        lo = 1;
    }
    if (hi == width) {
        b[width - 1 - off] = gs_mean2(a[width - 2 - off], a[width - 1 - off]);
        hi = width - 1;
    }
    if (lo < hi) mean3(a + (lo - off), b + (lo - off), hi - lo);
}

/* Floats from the start of buffer a to buffer b for a span of `span` floats. The gap is
 * kept off multiples of 4 KiB: loads from a[i] and stores to b[i] that share their low
 * 12 address bits falsely depend on each other (4K aliasing). */
#define GS_ALIAS_SKEW 80 /* floats (320 bytes): measured, bench/cpu_bench.c's smoothing */
static long buffer_gap(long span) { return (span + 1023) / 1024 * 1024 + GS_ALIAS_SKEW; }

typedef struct smooth_job {
    const gs_rows *strip;   /* the strip */
    float *float_dst;        /* when set, results go here unrounded (row r at r * float_stride) */
    size_t float_stride;     /* floats from one float_dst row to the next */
    uint32_t iters;          /* passes */
    const gs_cpu_isa *isa;   /* row primitives */
    long chunk;              /* output samples per work item */
    size_t chunks_per_row;   /* work items per row */
    gs_cpu_workspace *ws;    /* per-worker scratch */
} smooth_job;

/* Samples [lo, hi) of a row of `bits`-bit samples (32: float32) as floats. */
void gs_cpu_load_floats(const gs_cpu_isa *isa, const void *row, uint32_t bits, long lo, long hi,
                        float *dst)
{
    if (bits == 32) memcpy(dst, (const float *)row + lo, (size_t)(hi - lo) * sizeof(float));
    else if (bits == 16) isa->load_u16((const uint16_t *)row + lo, dst, hi - lo);
    else isa->load_u8((const uint8_t *)row + lo, dst, hi - lo);
}

/* n pass results into a row of `bits`-bit samples from position x: float32 kept (NaN made
 * canonical), integers rounded and clamped. */
void gs_cpu_store_results(const gs_cpu_isa *isa, const float *v, void *row, uint32_t bits, long x,
                          long n)
{
    if (bits == 32) isa->store_f32(v, (float *)row + x, n);
    else if (bits == 16) isa->store_u16(v, (uint16_t *)row + x, n);
    else isa->store_u8(v, (uint8_t *)row + x, n);
}

/* The interior mean of pass p (from 0): IEEE division for float samples; from integers,
 * the two-instruction division in passes 1 to GS_SHORT_DIV_PASSES, the fma one after
 * (stencil_math.h says where each is exact). */
mean3_fn gs_cpu_pass_mean3(const gs_cpu_isa *isa, uint32_t in_bits, long p)
{
    if (in_bits == 32) return isa->mean3_ieee;
    return p < (long)GS_SHORT_DIV_PASSES ? isa->mean3_short : isa->mean3;
}

/* The float passes for output positions [x0, x1) of one row, in worker `worker`'s buffers:
 * the span plus k samples of halo on each side, clipped to the row. */
static void smooth_span(const smooth_job *job, size_t row, long x0, long x1, unsigned worker)
{
    const gs_rows *s = job->strip;
    const long width = s->width, k = job->iters;
    if (x0 >= x1) return;
    const long lo = x0 - k > 0 ? x0 - k : 0;
    const long hi = x1 + k < width ? x1 + k : width;
    const void *in = (const uint8_t *)s->src + row * s->src_stride;
    void *out = (uint8_t *)s->dst + row * s->dst_stride;
    float *a = job->ws->buffers[worker];
    float *b = a + buffer_gap(hi - lo);

    const gs_cpu_isa *isa = job->isa;
    gs_cpu_load_floats(isa, in, s->in_bits, lo, hi, a);
    for (long p = 0; p < k; ++p) {
        /* After p+1 passes, only positions at least p+1 away from a cut (not a row end)
         * still equal the whole-row result. */
        long plo = lo == 0 ? 0 : lo + p + 1;
        long phi = hi == width ? width : hi - p - 1;
        pass_range(gs_cpu_pass_mean3(isa, s->in_bits, p), a, b, lo, plo, phi, width);
        float *t = a; a = b; b = t;
    }
    if (job->float_dst)
        memcpy(job->float_dst + row * job->float_stride + x0, a + (x0 - lo),
               (size_t)(x1 - x0) * sizeof(float));
    else gs_cpu_store_results(isa, a + (x0 - lo), out, s->out_bits, x0, x1 - x0);
}

/* K passes of integer sums (int_sums.h) for output positions [x0, x1) of one row, each at
 * least K from both row ends: one weighted window over the samples, rounded. */
static void int_sums_span(const smooth_job *job, size_t row, long x0, long x1)
{
    const gs_rows *s = job->strip;
    job->isa->int_window_u8((const uint8_t *)s->src + row * s->src_stride + x0,
                            (uint8_t *)s->dst + row * s->dst_stride + x0, x1 - x0, job->iters);
}

static int smooth_item(void *ctx, size_t item, unsigned worker)
{
    const smooth_job *job = ctx;
    const gs_rows *s = job->strip;
    const long width = s->width, k = job->iters;
    const size_t row = item / job->chunks_per_row;
    const long x0 = (long)(item % job->chunks_per_row) * job->chunk;
    const long x1 = x0 + job->chunk < width ? x0 + job->chunk : width;
    /* 8-bit rounded output at a few passes: the positions at least k from both row ends
     * as integer sums (int_sums.h, the same bytes), the few others by the float passes */
    if (!job->float_dst && s->out_bits == s->in_bits && gs_int_sums_apply(s->in_bits, k)) {
        long ilo, ihi;
        gs_int_sums_inner(x0, x1, width, k, &ilo, &ihi);
        if (ilo < ihi) {
            smooth_span(job, row, x0, ilo, worker);
            int_sums_span(job, row, ilo, ihi);
            smooth_span(job, row, ihi, x1, worker);
            return 0;
        }
    }
    smooth_span(job, row, x0, x1, worker);
    return 0;
}

/* Each worker's buffer starts on its own page and fills whole pages: two workers' buffers
 * never share a cache line (or the line pair the adjacent-line prefetcher fetches), which
 * heap neighbours did, the end of one worker's b beside the start of the next one's a,
 * both written by a chunk's passes, so the line moved between the cores several times a
 * chunk and the second thread added little (bench/cpu_bench.c's 1 -> 2 thread ratio). */
#define GS_WORKSPACE_ALIGN 4096u

int gs_cpu_workspace_reserve(gs_cpu_workspace *ws, unsigned workers, size_t floats)
{
    if (ws->workers >= workers && ws->floats_each >= floats) return 0;
    gs_cpu_workspace_release(ws);
    ws->buffers = calloc(workers, sizeof *ws->buffers);
    if (!ws->buffers) return -1;
    ws->workers = workers;
    ws->floats_each = floats;
    for (unsigned w = 0; w < workers; ++w) {
        const size_t bytes = (floats * sizeof(float) + GS_WORKSPACE_ALIGN - 1) /
                             GS_WORKSPACE_ALIGN * GS_WORKSPACE_ALIGN;
        ws->buffers[w] = aligned_alloc(GS_WORKSPACE_ALIGN, bytes);
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

/* Both entries: rounded samples into strip->dst, or floats into float_dst. */
static int smooth_rows(const gs_rows *strip, uint32_t iters, float *float_dst,
                       size_t float_stride, unsigned threads, const gs_cpu_isa *isa,
                       gs_cpu_workspace *ws)
{
    const long width = strip->width;
    if (threads == 0) threads = gs_cpu_count();
    threads = gs_threads_for(threads, (uint64_t)width * strip->rows * (iters ? iters : 1u));
    /* A row that fits one chunk with its halo is done whole: no halo work at all. */
    long chunk = width <= (long)GS_CPU_CHUNK + 2L * iters ? width : (long)GS_CPU_CHUNK;
    if (chunk < 2L * (long)iters && chunk < width) chunk = 2L * (long)iters; /* bound halo overhead */
    size_t chunks_per_row = (size_t)((width + chunk - 1) / chunk);
    size_t items = chunks_per_row * strip->rows;
    long span = chunk + 2L * iters < width ? chunk + 2L * iters : width;
    size_t floats = (size_t)buffer_gap(span) + (size_t)span;
    unsigned workers = threads < items ? threads : (unsigned)items;
    if (gs_cpu_workspace_reserve(ws, workers, floats) != 0) return -1;
    smooth_job job = {strip, float_dst, float_stride, iters, isa ? isa : gs_cpu_isa_best(),
                      chunk, chunks_per_row, ws};
    return gs_parallel_for(workers, items, smooth_item, &job);
}

int gs_cpu_smooth_strip(const gs_rows *strip, uint32_t iters, unsigned threads,
                        const gs_cpu_isa *isa, gs_cpu_workspace *ws)
{
    return smooth_rows(strip, iters, NULL, 0, threads, isa, ws);
}

int gs_cpu_smooth_rows_to_float(const gs_rows *strip, uint32_t iters, float *dst,
                                size_t dst_stride, unsigned threads, const gs_cpu_isa *isa,
                                gs_cpu_workspace *ws)
{
    return smooth_rows(strip, iters, dst, dst_stride, threads, isa, ws);
}
