/* round_up.h: the one rounding of a byte count up to a multiple of an alignment. */
/* Used for row pitches, buffer pieces and scratch layouts, by C, CUDA host and CUDA device
 * code alike. */

#ifndef GS_ROUND_UP_H
#define GS_ROUND_UP_H

#include <stddef.h>

#if defined(__CUDACC__)
#define GS_ROUND_UP_FN static inline __host__ __device__
#else
#define GS_ROUND_UP_FN static inline
#endif

/* n rounded up to a multiple of align (> 0). */
GS_ROUND_UP_FN size_t gs_round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

#endif /* GS_ROUND_UP_H */
