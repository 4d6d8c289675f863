/* cpu_kernels.h: the threaded CPU kernels behind the CPU plugin. */
/* They work on blocks of rows (rows.h). */

#ifndef GS_CPU_KERNELS_H
#define GS_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_isa.h"
#include "rows.h"

/* One interior pass over n floats (a gs_cpu_isa mean3 variant). */
typedef void (*mean3_fn)(const float *a, float *b, long n);

/* Per-worker float scratch that an instance keeps between calls (grown on demand). */
typedef struct gs_cpu_workspace {
    unsigned workers;   /* number of buffers */
    float **buffers;    /* one buffer per worker */
    size_t floats_each; /* capacity of each buffer, in floats */
} gs_cpu_workspace;

/* Free the buffers; the struct may be reused after. */
void gs_cpu_workspace_release(gs_cpu_workspace *ws);

/* At least `workers` buffers of `floats` floats each (kept when already large enough).
 * 0, or -1 when out of memory (the workspace is then empty). */
int gs_cpu_workspace_reserve(gs_cpu_workspace *ws, unsigned workers, size_t floats);

/* Row pieces shared by the row and column passes (cpu_smooth.c). */
void gs_cpu_load_floats(const gs_cpu_isa *isa, const void *row, uint32_t bits, long lo, long hi,
                        float *dst);
void gs_cpu_store_results(const gs_cpu_isa *isa, const float *v, void *row, uint32_t bits, long x,
                          long n);
mean3_fn gs_cpu_pass_mean3(const gs_cpu_isa *isa, uint32_t in_bits, long p);

/* Output samples each smoothing work item covers: two float buffers of
 * GS_CPU_CHUNK + 2 * iters floats (16 KiB for small iters) stay inside a 32 KiB L1. */
#define GS_CPU_CHUNK 2048u

/* Smooth every row of the strip `iters` times on `threads` threads (0 = all cores) with
 * the row primitives of `isa` (NULL = the best this CPU runs). Returns 0, or -1 if scratch
 * memory could not be allocated. */
int gs_cpu_smooth_strip(const gs_rows *strip, uint32_t iters, unsigned threads,
                        const gs_cpu_isa *isa, gs_cpu_workspace *ws);

/* The same passes, with the results left unrounded as floats: row r of the strip into
 * dst + r * dst_stride (strip->dst unused). For --axis xy, whose column passes follow. */
int gs_cpu_smooth_rows_to_float(const gs_rows *strip, uint32_t iters, float *dst,
                                size_t dst_stride, unsigned threads, const gs_cpu_isa *isa,
                                gs_cpu_workspace *ws);

/* Scratch of one window call (gs_cpu_smooth_window): the row-smoothed window for xy and
 * each worker's column levels. */
typedef struct gs_cpu_window_space {
    float *rows;            /* window rows as floats (xy) */
    size_t rows_floats;     /* its capacity */
    gs_cpu_workspace levels; /* per worker: (iters + 1) levels of 3 rows of a column block */
} gs_cpu_window_space;

void gs_cpu_window_space_release(gs_cpu_window_space *space);

/* Smooth a window of rows along `axes` (bit 0: rows, bit 1: columns; the ABI's GS_AXIS_*)
 * `iters` passes each, as gs_plugin_desc.smooth_axes states: window->src holds above +
 * window->rows + below rows, and the window->rows rows after the first `above` are
 * written to window->dst. Returns 0, or -1 when scratch memory could not be allocated. */
int gs_cpu_smooth_window(const gs_rows *window, uint32_t above, uint32_t below, uint32_t axes,
                         uint32_t iters, unsigned threads, const gs_cpu_isa *isa,
                         gs_cpu_workspace *row_ws, gs_cpu_window_space *space);

/* Output bytes from which a strip's integral rows (8 -> 32 bits) are written past the caches:
 * well above a core's L2 and the CLI's strips (1 MiB of input), which its encoder reads back
 * at once; a large image in memory is measured faster that way (bench/cpu_bench.c). */
#define GS_CPU_STREAM_BYTES (16u << 20)

/* Inclusive prefix sum of every row (isa NULL = the best this CPU runs). */
void gs_cpu_integral_rows_strip(const gs_rows *strip, unsigned threads, const gs_cpu_isa *isa);

/* Summed-area table rows; column_sums carries per-column totals between strips. */
void gs_cpu_integral_2d_strip(const gs_rows *strip, void *column_sums, unsigned threads,
                              const gs_cpu_isa *isa);

#endif /* GS_CPU_KERNELS_H */
