/* rows.h: a block of rows of samples with explicit strides, the CPU kernels' unit. */
/* The plugin maps the ABI's strips onto it, so kernels never see the ABI. */

#ifndef GS_ROWS_H
#define GS_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_rows {
    uint32_t width;     /* samples per row, >= 1 */
    uint32_t rows;      /* rows in the block, >= 1 */
    uint32_t in_bits;   /* 8 or 16 */
    uint32_t out_bits;  /* in_bits for smoothing, 32 or 64 for the integrals */
    const void *src;    /* first source row */
    size_t src_stride;  /* bytes from one source row to the next */
    void *dst;          /* first destination row; never overlaps the source */
    size_t dst_stride;  /* bytes from one destination row to the next */
} gs_rows;

#endif /* GS_ROWS_H */
