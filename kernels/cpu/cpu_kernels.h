/* cpu_kernels.h: the threaded CPU kernels behind the CPU plugin, working on blocks of rows (rows.h). */
#ifndef GS_CPU_KERNELS_H
#define GS_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_isa.h"
#include "rows.h"

/* Per-worker float scratch that an instance keeps between calls (grown on demand). */
typedef struct gs_cpu_workspace {
    unsigned workers;   /* number of buffers */
    float **buffers;    /* one buffer per worker */
    size_t floats_each; /* capacity of each buffer, in floats */
} gs_cpu_workspace;

/* Free the buffers; the struct may be reused after. */
void gs_cpu_workspace_release(gs_cpu_workspace *ws);

/* Output samples each smoothing work item covers: two float buffers of
 * GS_CPU_CHUNK + 2 * iters floats (16 KiB for small iters) stay inside a 32 KiB L1. */
#define GS_CPU_CHUNK 2048u

/* Smooth every row of the strip `iters` times on `threads` threads (0 = all cores) with
 * the row primitives of `isa` (NULL = the best this CPU runs). Returns 0, or -1 if scratch
 * memory could not be allocated. */
int gs_cpu_smooth_strip(const gs_rows *strip, uint32_t iters, unsigned threads,
                        const gs_cpu_isa *isa, gs_cpu_workspace *ws);

/* Inclusive prefix sum of every row (isa NULL = the best this CPU runs). */
void gs_cpu_integral_rows_strip(const gs_rows *strip, unsigned threads, const gs_cpu_isa *isa);

/* Summed-area table rows; column_sums carries per-column totals between strips. */
void gs_cpu_integral_2d_strip(const gs_rows *strip, void *column_sums, unsigned threads,
                              const gs_cpu_isa *isa);

#endif /* GS_CPU_KERNELS_H */
