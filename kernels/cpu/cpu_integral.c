/* cpu_integral.c: threaded integral rows and summed-area tables. */
/* For every input/output sample width. */

#include "cpu_isa.h"
#include "cpu_kernels.h"
#include "parallel.h"
#include "stencil_math.h"

/* Columns one 2d work item updates down the strip: long enough for streaming, small
 * enough that 2 cores share the work of a narrow strip. */
#define GS_CPU_2D_COLUMNS 4096u

/* Row prefix sums for the type pairs without an instruction-set version (8 -> 32 bits
 * has one: gs_cpu_isa.prefix_u8_u32). */
#define GS_DEFINE_PREFIX(TIN, TOUT, SUFFIX)                                          \
    static void prefix_##SUFFIX(const void *in, void *out, uint32_t width)           \
    {                                                                               \
        const TIN *src = (const TIN *)in;                                            \
        TOUT *dst = (TOUT *)out, sum = 0;                                            \
        for (uint32_t x = 0; x < width; ++x) dst[x] = sum += src[x];                 \
    }
GS_DEFINE_PREFIX(uint8_t, uint64_t, u8_u64)
GS_DEFINE_PREFIX(uint16_t, uint32_t, u16_u32)
GS_DEFINE_PREFIX(uint16_t, uint64_t, u16_u64)
#undef GS_DEFINE_PREFIX

/* Float32 rows summed from left to right in float64 (the ABI's order), from -0.0, the
 * identity of addition, so the first sum is the first sample exactly; NaN made canonical. */
static void prefix_f32_f64(const void *in, void *out, uint32_t width)
{
    const float *src = (const float *)in;
    double *dst = (double *)out, sum = -0.0;
    for (uint32_t x = 0; x < width; ++x) {
        sum += (double)src[x];
        dst[x] = gs_canonical_f64(sum);
    }
}

/* Add the column totals so far to a row of prefixes, which become the new totals. */
#define GS_DEFINE_ACCUMULATE(TOUT, SUFFIX)                                           \
    static void accumulate_##SUFFIX(void *row, void *column_sums, uint32_t x0,      \
                                    uint32_t x1)                                    \
    {                                                                               \
        TOUT *dst = (TOUT *)row, *col = (TOUT *)column_sums;                         \
        for (uint32_t x = x0; x < x1; ++x) col[x] = dst[x] += col[x];                \
    }
GS_DEFINE_ACCUMULATE(uint32_t, u32)
GS_DEFINE_ACCUMULATE(uint64_t, u64)
#undef GS_DEFINE_ACCUMULATE

static void accumulate_f64(void *row, void *column_sums, uint32_t x0, uint32_t x1)
{
    double *dst = (double *)row, *col = (double *)column_sums;
    for (uint32_t x = x0; x < x1; ++x) col[x] = dst[x] = gs_canonical_f64(col[x] + dst[x]);
}

typedef void (*prefix_fn)(const void *, void *, uint32_t);
typedef void (*accumulate_fn)(void *, void *, uint32_t, uint32_t);

typedef struct integral_job {
    const gs_rows *strip;    /* the strip */
    const gs_cpu_isa *isa;    /* used for 8 -> 32-bit prefixes */
    prefix_fn prefix;         /* other type pairs; NULL for 8 -> 32 */
    accumulate_fn accumulate; /* column accumulation for the output type */
    void *column_sums;        /* 2d carry, or NULL */
    int stream;               /* 8 -> 32-bit rows written past the caches */
} integral_job;

static integral_job make_job(const gs_rows *s, const gs_cpu_isa *isa, void *column_sums)
{
    integral_job job = {s, isa ? isa : gs_cpu_isa_best(), NULL, NULL, column_sums, 0};
    int wide = s->out_bits == 64;
    if (s->in_bits == 32) {
        job.prefix = prefix_f32_f64;
        job.accumulate = accumulate_f64;
        return job;
    }
    if (s->in_bits == 16) job.prefix = wide ? prefix_u16_u64 : prefix_u16_u32;
    else if (wide) job.prefix = prefix_u8_u64;
    job.accumulate = wide ? accumulate_u64 : accumulate_u32;
    return job;
}

static int prefix_item(void *ctx, size_t row, unsigned worker)
{
    (void)worker;
    const integral_job *job = ctx;
    const gs_rows *s = job->strip;
    const void *src = (const uint8_t *)s->src + row * s->src_stride;
    void *dst = (uint8_t *)s->dst + row * s->dst_stride;
    if (job->prefix) job->prefix(src, dst, s->width);
    else job->isa->prefix_u8_u32(src, dst, s->width, job->stream);
    return 0;
}

static int accumulate_item(void *ctx, size_t item, unsigned worker)
{
    (void)worker;
    const integral_job *job = ctx;
    const gs_rows *s = job->strip;
    uint32_t x0 = (uint32_t)item * GS_CPU_2D_COLUMNS;
    uint32_t x1 = s->width - x0 < GS_CPU_2D_COLUMNS ? s->width : x0 + GS_CPU_2D_COLUMNS;
    for (uint32_t r = 0; r < s->rows; ++r)
        job->accumulate((uint8_t *)s->dst + r * s->dst_stride, job->column_sums, x0, x1);
    return 0;
}

/* A sample of a scan, which writes 4 or 8 bytes, costs about what 4 passes of smoothing
 * do (measured on 1024^2 8-bit images on one core): in gs_threads_for's units. */
#define GS_SCAN_WORK UINT64_C(4)

void gs_cpu_integral_rows_strip(const gs_rows *strip, unsigned threads, const gs_cpu_isa *isa)
{
    integral_job job = make_job(strip, isa, NULL);
    /* A strip this large is not read back from the caches: its rows go past them. The 2d
     * table reads its rows again at once, and keeps them cached. */
    job.stream = (uint64_t)strip->rows * strip->width * (strip->out_bits / 8) >= GS_CPU_STREAM_BYTES;
    if (threads == 0) threads = gs_cpu_count();
    threads = gs_threads_for(threads, GS_SCAN_WORK * strip->rows * strip->width);
    gs_parallel_for(threads, strip->rows, prefix_item, &job);
}

void gs_cpu_integral_2d_strip(const gs_rows *strip, void *column_sums, unsigned threads,
                              const gs_cpu_isa *isa)
{
    integral_job job = make_job(strip, isa, column_sums);
    if (threads == 0) threads = gs_cpu_count();
    threads = gs_threads_for(threads, 2 * GS_SCAN_WORK * strip->rows * strip->width);
    /* Row prefixes are independent; then each column block runs down the strip. */
    gs_parallel_for(threads, strip->rows, prefix_item, &job);
    size_t blocks = (strip->width + GS_CPU_2D_COLUMNS - 1) / GS_CPU_2D_COLUMNS;
    gs_parallel_for(threads, blocks, accumulate_item, &job);
}
