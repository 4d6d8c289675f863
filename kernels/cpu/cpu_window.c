/* cpu_window.c: smoothing down the columns of a window of rows (xy, after the rows). */
/* Every pass is rolled through three rows per level of a column block, so each sample is
 * read once and the passes stay in cache; 8-bit columns at up to 4 passes are exact integer
 * sums away from the window's ends, a whole row at a time. */

#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "int_sums.h"
#include "parallel.h"

/* Axis bits, as the ABI's GS_AXIS_X and GS_AXIS_Y. */
#define AXIS_X 1u
#define AXIS_Y 2u

/* Floats a column block's rows are padded to (a cache line). */
#define BLOCK_ALIGN 16L
/* Bytes one worker's levels should take: (iters + 1) levels x 3 rows x block floats stay
 * in a core's L2, so a pass reads its three rows from cache. */
#define LEVELS_BYTES (192L << 10)
#define BLOCK_MAX 2048L

typedef struct column_job {
    const gs_rows *window;    /* src: the window's rows; dst: the rows written */
    const float *rows_float;  /* xy: the row-smoothed window, else NULL (samples from src) */
    size_t rows_float_stride; /* floats between its rows */
    long window_rows;         /* above + window->rows + below */
    long above;               /* rows of halo above the rows written */
    long iters;               /* passes down the columns */
    long block;               /* columns per work item (a multiple of BLOCK_ALIGN, or all) */
    const gs_cpu_isa *isa;    /* row primitives */
    gs_cpu_workspace *levels; /* per worker: (iters + 1) x 3 rows of `block` floats */
    long int0, int1;          /* rows written as integer sums (int_rows_item), or empty */
} column_job;

/* Where row t of level j (0 = the input) starts in a worker's ring. */
static float *ring_row(const column_job *job, float *ring, long level, long t)
{
    return ring + (level * 3 + t % 3) * job->block;
}

/* Row t of level j as the passes read it: level 0 of xy is the row-smoothed window. */
static const float *level_row(const column_job *job, float *ring, long level, long t, long c0)
{
    if (level == 0 && job->rows_float) return job->rows_float + t * job->rows_float_stride + c0;
    return ring_row(job, ring, level, t);
}

/* Where level-K row t goes, if it is one of the rows written; else NULL. */
static uint8_t *out_row(const column_job *job, long t)
{
    const gs_rows *w = job->window;
    const long r = t - job->above;
    if (r < 0 || r >= (long)w->rows) return NULL;
    return (uint8_t *)w->dst + (size_t)r * w->dst_stride;
}

/* Round and store level-K row t, if it is one of the rows written. */
static void emit(const column_job *job, long t, const float *v, long c0, long n)
{
    uint8_t *dst = out_row(job, t);
    if (dst) gs_cpu_store_results(job->isa, v, dst, job->window->out_bits, c0, n);
}

/*
 * Window rows [r0, r1) of one column block, top to bottom, level K's rows in [e0, e1)
 * stored. At step y the input's row y enters level 0, and level j computes its row y - j
 * from level j-1's rows y-j-1, y-j and y-j+1 (the last computed this step). Each level
 * keeps three rows. After row r1 - 1, K more steps drain the levels. The window's first and
 * last rows take the two-term mean; where r0 or r1 is not the window's end, level j keeps
 * only the rows j or more inside, whose inputs it has.
 */
static void column_span(const column_job *job, unsigned worker, long c0, long n, long r0,
                        long r1, long e0, long e1)
{
    const gs_rows *w = job->window;
    const gs_cpu_isa *isa = job->isa;
    const long rows = job->window_rows, k = job->iters;
    float *ring = job->levels->buffers[worker];
    /* float samples divide exactly; sums of integers may take the proven fma sequence */
    void (*const mean3_of)(const float *, const float *, const float *, float *, long) =
        w->in_bits == 32 ? isa->mean3_of_ieee : isa->mean3_of;

    for (long y = r0; y < r1 + k; ++y) {
        if (y < r1) {
            if (!job->rows_float) {
                const uint8_t *src = (const uint8_t *)w->src + (size_t)y * w->src_stride;
                gs_cpu_load_floats(isa, src, w->in_bits, c0, c0 + n, ring_row(job, ring, 0, y));
            }
            if (k == 0 && y >= e0 && y < e1) emit(job, y, level_row(job, ring, 0, y, c0), c0, n);
        }
        for (long j = 1; j <= k; ++j) {
            const long t = y - j;
            if (t < (r0 == 0 ? 0 : r0 + j)) break;
            if (t >= (r1 == rows ? rows : r1 - j)) continue;
            const float *mid = level_row(job, ring, j - 1, t, c0);
            float *out = ring_row(job, ring, j, t);
            if (rows == 1) memcpy(out, mid, (size_t)n * sizeof *out);
            else if (t == 0) isa->mean2_of(mid, level_row(job, ring, j - 1, 1, c0), out, n);
            else if (t == rows - 1) isa->mean2_of(level_row(job, ring, j - 1, t - 1, c0), mid, out, n);
            else
                mean3_of(level_row(job, ring, j - 1, t - 1, c0), mid,
                              level_row(job, ring, j - 1, t + 1, c0), out, n);
            if (j == k && t >= e0 && t < e1) emit(job, t, out, c0, n);
        }
    }
}

/* One row written as integer sums (int_sums.h), at least K from both window ends: one
 * weighted window over window rows t - K .. t + K, the whole width at once. Items are rows,
 * handed out in runs of neighbours, so a worker reads the source row after row as the row
 * passes do (the 2K rows a row shares with the one before are in cache), where walking a
 * column block down the rows read 2 KiB pieces a row apart, measured far slower than the
 * row passes (bench/cpu_bench.c, --axis y against --axis x). */
static int int_rows_item(void *ctx, size_t item, unsigned worker)
{
    (void)worker;
    const column_job *job = ctx;
    const gs_rows *w = job->window;
    const long t = job->int0 + (long)item, k = job->iters;
    const uint8_t *rows[2 * GS_INT_SUMS_MAX_PASSES + 1];
    for (long j = 0; j <= 2 * k; ++j) rows[j] = (const uint8_t *)w->src + (size_t)(t - k + j) * w->src_stride;
    job->isa->int_window_rows_u8(rows, out_row(job, t), (long)w->width, (unsigned)k);
    return 0;
}

/* One column block: the float levels down the window, for the rows written that the
 * integer sums leave (at most K at each window end: sub-windows that stay inside, as
 * k <= int0 < int1 <= rows - k), or for all of them. */
static int column_item(void *ctx, size_t item, unsigned worker)
{
    const column_job *job = ctx;
    const gs_rows *w = job->window;
    const long c0 = (long)item * job->block;
    const long n = c0 + job->block < (long)w->width ? job->block : (long)w->width - c0;
    const long rows = job->window_rows, k = job->iters;
    const long e0 = job->above, e1 = job->above + (long)w->rows; /* the rows written */
    if (job->int0 < job->int1) {
        if (e0 < job->int0) column_span(job, worker, c0, n, 0, job->int0 + k, e0, job->int0);
        if (job->int1 < e1) column_span(job, worker, c0, n, job->int1 - k, rows, job->int1, e1);
        return 0;
    }
    column_span(job, worker, c0, n, 0, rows, e0, e1);
    return 0;
}

/* Columns per work item: the levels fit LEVELS_BYTES, and every thread gets work. */
static long column_block(long width, long iters, unsigned threads)
{
    long block = LEVELS_BYTES / (long)sizeof(float) / (3 * (iters + 1));
    if (block > BLOCK_MAX) block = BLOCK_MAX;
    long share = (width + 2L * threads - 1) / (2L * threads); /* two items per thread */
    if (block > share) block = share;
    block = block / BLOCK_ALIGN * BLOCK_ALIGN;
    if (block < BLOCK_ALIGN) block = BLOCK_ALIGN;
    return block;
}

void gs_cpu_window_space_release(gs_cpu_window_space *space)
{
    free(space->rows);
    gs_cpu_workspace_release(&space->levels);
    memset(space, 0, sizeof *space);
}

int gs_cpu_smooth_window(const gs_rows *window, uint32_t above, uint32_t below, uint32_t axes,
                         uint32_t iters, unsigned threads, const gs_cpu_isa *isa,
                         gs_cpu_workspace *row_ws, gs_cpu_window_space *space)
{
    if (!isa) isa = gs_cpu_isa_best();
    if (threads == 0) threads = gs_cpu_count();
    const long window_rows = (long)above + window->rows + below;
    threads = gs_threads_for(threads, (uint64_t)window->width * (uint64_t)window_rows *
                                          (iters ? iters : 1u) * ((axes & AXIS_X) ? 2u : 1u));
    if (!(axes & AXIS_Y)) { /* rows alone need no halo */
        gs_rows inner = *window;
        inner.src = (const uint8_t *)window->src + (size_t)above * window->src_stride;
        return gs_cpu_smooth_strip(&inner, iters, threads, isa, row_ws);
    }

    const float *rows_float = NULL;
    const size_t stride = ((size_t)window->width + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    if (axes & AXIS_X) { /* the row passes over the whole window, kept as floats */
        const size_t need = stride * (size_t)window_rows;
        if (space->rows_floats < need) {
            free(space->rows);
            space->rows = malloc(need * sizeof(float));
            space->rows_floats = space->rows ? need : 0;
            if (!space->rows) return -1;
        }
        gs_rows all = *window;
        all.rows = (uint32_t)window_rows;
        if (gs_cpu_smooth_rows_to_float(&all, iters, space->rows, stride, threads, isa, row_ws) != 0)
            return -1;
        rows_float = space->rows;
    }

    const long block = column_block(window->width, iters, threads);
    const size_t items = (size_t)((window->width + block - 1) / block);
    const unsigned workers = threads < items ? threads : (unsigned)items;
    column_job job = {window, rows_float, stride, window_rows, above, iters, block, isa,
                      &space->levels, 0, 0};
    /* 8-bit rows down a window (no row passes first) at 1 to GS_INT_SUMS_MAX_PASSES passes:
     * the rows written at least K from the window's ends as integer sums, a row at a time */
    const long k = iters, e0 = above, e1 = above + (long)window->rows;
    if (!rows_float && window->out_bits == window->in_bits && gs_int_sums_apply(window->in_bits, k)) {
        gs_int_sums_inner(e0, e1, window_rows, k, &job.int0, &job.int1);
        if (job.int0 >= job.int1) job.int0 = job.int1 = 0;
    }
    if (job.int0 < job.int1 &&
        gs_parallel_for(threads, (size_t)(job.int1 - job.int0), int_rows_item, &job) != 0)
        return -1;
    if (job.int0 < job.int1 && job.int0 == e0 && job.int1 == e1) return 0; /* no float rows left */
    if (gs_cpu_workspace_reserve(&space->levels, workers, (size_t)block * 3 * (iters + 1u)) != 0)
        return -1;
    return gs_parallel_for(workers, items, column_item, &job);
}
