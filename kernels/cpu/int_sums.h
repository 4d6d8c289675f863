/* int_sums.h: up to GS_INT_SUMS_MAX_PASSES passes over 8-bit samples away from the row ends as exact 16-bit integer sums, rounded once to the float passes' bytes (stencil_math.h says why); one portable body that each instruction set's file compiles with its own flags. */
#ifndef GS_CPU_INT_SUMS_H
#define GS_CPU_INT_SUMS_H

#include <stdint.h>

#include "stencil_math.h"

/* dst[i] = round(s[i] / d) for sums s[i] <= 255 d, d = 3^K (odd: no ties). d is a constant
 * at each call, so the division becomes a multiply. */
static inline void gs_int_sums_round(const uint16_t *s, uint8_t *dst, long n, uint16_t d)
{
    for (long i = 0; i < n; ++i) dst[i] = (uint8_t)((uint16_t)(s[i] + d / 2) / d);
}

/*
 * K passes (1 <= K <= GS_INT_SUMS_MAX_PASSES) for output positions [0, n) of src, each at
 * least K from both row ends, so src[-K, n + K) lies in the row: dst[i] = round(N_i / 3^K).
 * a and b hold n + 2K sums each.
 */
static inline void gs_int_sums_u8(const uint8_t *src, uint8_t *dst, long n, unsigned k,
                                  uint16_t *a, uint16_t *b)
{
    const long m = n + 2 * (long)k; /* a[j] is position j - K */
    for (long j = 0; j < m; ++j) a[j] = src[j - (long)k];
    for (long p = 1; p <= (long)k; ++p) {
        /* pass p: positions within K - p of the output's */
        for (long j = p; j < m - p; ++j) b[j] = (uint16_t)(a[j - 1] + a[j] + a[j + 1]);
        uint16_t *t = a;
        a = b;
        b = t;
    }
    switch (k) {
    case 1: gs_int_sums_round(a + k, dst, n, GS_INT_SUMS_DIVISOR(1)); break;
    case 2: gs_int_sums_round(a + k, dst, n, GS_INT_SUMS_DIVISOR(2)); break;
    case 3: gs_int_sums_round(a + k, dst, n, GS_INT_SUMS_DIVISOR(3)); break;
    default: gs_int_sums_round(a + k, dst, n, GS_INT_SUMS_DIVISOR(4)); break;
    }
}

#endif /* GS_CPU_INT_SUMS_H */
