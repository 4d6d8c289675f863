/* int_sums.h: up to GS_INT_SUMS_MAX_PASSES passes over 8-bit samples away from the row or column ends as exact 16-bit integer sums, rounded once to the float passes' bytes (stencil_math.h says why): the three row operations, in one portable body that each instruction set's file compiles with its own flags. */
#ifndef GS_CPU_INT_SUMS_H
#define GS_CPU_INT_SUMS_H

#include <stdint.h>

#include "stencil_math.h"

/* Samples as sums of no passes. */
static inline void gs_int_widen_u8(const uint8_t *src, uint16_t *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = src[i];
}

/* One pass of sums: out[i] = l[i] + c[i] + r[i] (below 2^16 for at most 4 passes). A pass
 * along a row takes l = c - 1 and r = c + 1. */
static inline void gs_int_add3(const uint16_t *l, const uint16_t *c, const uint16_t *r,
                               uint16_t *out, long n)
{
    for (long i = 0; i < n; ++i) out[i] = (uint16_t)(l[i] + c[i] + r[i]);
}

/* dst[i] = round(s[i] / d) for sums s[i] <= 255 d, d = 3^K (odd: no ties). d is a constant
 * at each call, so the division becomes a multiply. */
static inline void gs_int_round_by(const uint16_t *s, uint8_t *dst, long n, uint16_t d)
{
    for (long i = 0; i < n; ++i) dst[i] = (uint8_t)((uint16_t)(s[i] + d / 2) / d);
}

/* The samples after K passes (1 <= K <= GS_INT_SUMS_MAX_PASSES) from their sums. */
static inline void gs_int_round_u8(const uint16_t *s, uint8_t *dst, long n, unsigned k)
{
    switch (k) {
    case 1: gs_int_round_by(s, dst, n, GS_INT_SUMS_DIVISOR(1)); break;
    case 2: gs_int_round_by(s, dst, n, GS_INT_SUMS_DIVISOR(2)); break;
    case 3: gs_int_round_by(s, dst, n, GS_INT_SUMS_DIVISOR(3)); break;
    default: gs_int_round_by(s, dst, n, GS_INT_SUMS_DIVISOR(4)); break;
    }
}

#endif /* GS_CPU_INT_SUMS_H */
