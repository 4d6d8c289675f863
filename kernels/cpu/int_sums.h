/* int_sums.h: up to GS_INT_SUMS_MAX_PASSES passes over 8-bit samples as exact integer sums. */
/* Away from the row or column ends, the passes are exact 16-bit integer sums, rounded once
 * to the float passes' bytes (stencil_math.h says why): the K passes as one weighted window
 * down columns or along a row, its weights and rounding, and the pass-at-a-time form the
 * tests hold the windows to. The bodies are portable; each instruction set's file compiles
 * them with its own flags. */

#ifndef GS_CPU_INT_SUMS_H
#define GS_CPU_INT_SUMS_H

#include <stdint.h>

#include "stencil_math.h"

/* BODY(K) with K the constant 1 to 4 that k is (4 for a larger k), so each pass count gets
 * its own loop: constant divisors, unrolled windows. */
_Static_assert(GS_INT_SUMS_MAX_PASSES == 4, "GS_INT_WITH_PASSES names every pass count");
#define GS_INT_WITH_PASSES(k, BODY)                                                             \
    do {                                                                                        \
        switch (k) {                                                                            \
        case 1: BODY(1); break;                                                                 \
        case 2: BODY(2); break;                                                                 \
        case 3: BODY(3); break;                                                                 \
        default: BODY(4); break;                                                                \
        }                                                                                       \
    } while (0)

/* Where the integer sums stand in for the float passes: 8-bit samples rounded to 8 bits
 * (no float output), 1 <= K <= GS_INT_SUMS_MAX_PASSES, and only at the positions
 * gs_int_sums_inner (stencil_math.h) gives. */
static inline int gs_int_sums_apply(uint32_t bits, long k)
{
    return bits == 8 && k >= 1 && k <= (long)GS_INT_SUMS_MAX_PASSES;
}

/* The pass-at-a-time form (test_kernels checks the windows below against it): samples
 * widened to sums, passes of out[i] = l[i] + c[i] + r[i] (below 2^16 for at most 4 passes;
 * along a row, l = c - 1 and r = c + 1), and the sums of K passes rounded. */

/* Samples as sums of no passes. */
static inline void gs_int_widen_u8(const uint8_t *src, uint16_t *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = src[i];
}

/* One pass of sums. */
static inline void gs_int_add3(const uint16_t *l, const uint16_t *c, const uint16_t *r,
                               uint16_t *out, long n)
{
    for (long i = 0; i < n; ++i) out[i] = (uint16_t)(l[i] + c[i] + r[i]);
}

/* round(s / d) for a sum s <= 255 d, d = 3^K (odd: no ties). */
static inline uint8_t gs_int_round_one(uint16_t s, uint16_t d) { return (uint8_t)((uint16_t)(s + d / 2) / d); }

/* dst[i] = round(s[i] / d). d is a constant at each call, so the division becomes a
 * multiply. */
static inline void gs_int_round_by(const uint16_t *s, uint8_t *dst, long n, uint16_t d)
{
    for (long i = 0; i < n; ++i) dst[i] = gs_int_round_one(s[i], d);
}

/* The samples after K passes (1 <= K <= GS_INT_SUMS_MAX_PASSES) from their sums. */
static inline void gs_int_round_u8(const uint16_t *s, uint8_t *dst, long n, unsigned k)
{
#define GS_ROUND_BY(K) gs_int_round_by(s, dst, n, GS_INT_SUMS_DIVISOR(K))
    GS_INT_WITH_PASSES(k, GS_ROUND_BY);
#undef GS_ROUND_BY
}

/* Weights of the window that K passes make: w[j] is how often sample x - K + j counts in the
 * sum at x after K passes of l + c + r, the coefficients of (1 + t + t^2)^K (K=3: 1 3 6 7 6 3
 * 1, summing to 3^K). w[2K + 1] is set to 0, so the weights pair up. */
#define GS_INT_WINDOW_TAPS (2 * GS_INT_SUMS_MAX_PASSES + 2)
static inline void gs_int_window_weights(unsigned k, uint8_t w[GS_INT_WINDOW_TAPS])
{
    uint16_t c[GS_INT_WINDOW_TAPS] = {1};
    for (unsigned p = 1; p <= k; ++p) /* one more pass: c[j] += c[j-1] + c[j-2], from the top */
        for (unsigned j = 2 * p; j >= 1; --j) c[j] = (uint16_t)(c[j] + c[j - 1] + (j >= 2 ? c[j - 2] : 0));
    for (unsigned j = 0; j < GS_INT_WINDOW_TAPS; ++j) w[j] = (uint8_t)(j <= 2 * k ? c[j] : 0);
}

/* K passes and the rounding, at once, over the 2K + 1 rows rows[0..2K] (window rows t - K ..
 * t + K of a column block): dst[i] = round(N / 3^K) for i in [0, n), N = sum_j w_j
 * rows[j][i]. The portable body, K a constant in each of its four loops (so the divisor
 * is one, which the compiler turns into a multiply); gs_int_window_rows_u8_avx2
 * (cpu_isa_avx2.c) is the vector one. */
static inline void gs_int_window_rows_by(const uint8_t *const *rows, uint8_t *dst, long n, const unsigned k)
{
    uint8_t w[GS_INT_WINDOW_TAPS];
    gs_int_window_weights(k, w);
    for (long i = 0; i < n; ++i) {
        uint16_t sum = 0;
        for (unsigned j = 0; j <= 2 * k; ++j) sum = (uint16_t)(sum + w[j] * rows[j][i]);
        dst[i] = gs_int_round_one(sum, (uint16_t)GS_INT_SUMS_DIVISOR(k));
    }
}
static inline void gs_int_window_rows_u8(const uint8_t *const *rows, uint8_t *dst, long n, unsigned k)
{
#define GS_WINDOW_BY(K) gs_int_window_rows_by(rows, dst, n, K)
    GS_INT_WITH_PASSES(k, GS_WINDOW_BY);
#undef GS_WINDOW_BY
}

/* The same along a row: dst[i] from src[i - K .. i + K] (which must be readable), the rows
 * being the row itself shifted by -K .. K. gs_int_window_u8_avx2 is the vector one. */
static inline void gs_int_window_u8(const uint8_t *src, uint8_t *dst, long n, unsigned k)
{
    const uint8_t *rows[2 * GS_INT_SUMS_MAX_PASSES + 1];
    for (unsigned j = 0; j <= 2 * k; ++j) rows[j] = src + (long)j - (long)k;
    gs_int_window_rows_u8(rows, dst, n, k);
}

/* The rounding as a 16-bit multiply-high and a shift: floor(x / 3^K) = (x * M) >> (16 + s)
 * with M = ceil(2^(16 + s) / 3^K), for every x up to 255 x 3^K + 3^K / 2 (the largest sum
 * plus the half), at the shifts s below: the smallest that make it exact, found and checked
 * over that whole range by test_kernels (integer_window_rounding_is_exact). */
static inline unsigned gs_int_round_shift(unsigned k) { return k == 1 ? 0u : k == 2 ? 0u : k == 3 ? 1u : 3u; }
static inline uint16_t gs_int_round_magic(unsigned k)
{
    const uint32_t d = GS_INT_SUMS_DIVISOR(k);
    return (uint16_t)(((1u << (16 + gs_int_round_shift(k))) + d - 1) / d);
}

#endif /* GS_CPU_INT_SUMS_H */
