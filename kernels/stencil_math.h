/* stencil_math.h: the one definition of gsmooth's per-pixel arithmetic. */
/* Shared by the C reference, the CPU kernels and the CUDA kernels. */

#ifndef GS_STENCIL_MATH_H
#define GS_STENCIL_MATH_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

/* Maximum --iters; also bounds the halo a tiled kernel needs on each side. */
#define GS_MAX_ITERS 100000u

/*
 * One pass of the 3-point mean at an interior pixel: (l + c) + r in float32, in that
 * order, then IEEE division by 3. Division stays a true division here: it is what the
 * contract fixes, and every backend compiles it without fast-math or contraction. (The
 * SIMD paths use an fma sequence proven to give the same bits: kernels/cpu/cpu_isa_body.inc.)
 */
GS_HD float gs_mean3(float l, float c, float r) { return ((l + c) + r) / 3.0f; }

/*
 * s / 3 without a divide, for the fast paths: q = s * (1/3), r = s - 3q exactly (one fma),
 * q + r / 3 (one fma). It gives the bits of IEEE s / 3.0f for every float 0 <= s <= 3 x
 * 65535 (all sums a pass can form), proven exhaustively by tests/test_kernels.c on the CPU
 * and by gs_cuda_check_fast_arith on the GPU. The SIMD CPU paths run these same three
 * operations on vectors (kernels/cpu/cpu_isa_body.inc).
 */
GS_HD float gs_div3_fma(float s)
{
    const float third = 1.0f / 3.0f;
    float q = s * third;
    return fmaf(fmaf(q, -3.0f, s), third, q); /* q * -3 == -(q * 3): negation is exact */
}

/*
 * s / 3 in two operations, for the passes where it is exact: q = fma(s, C_hi, s * C_lo) with
 * C_hi = RN(1/3) and C_lo = RN(1/3 - C_hi). It gives the bits of IEEE s / 3.0f for s = 0 and
 * for every float 2^-123 < s <= 3 x 65535 (tests/test_kernels.c checks every one on the CPU,
 * gs_cuda_check_fast_arith on the GPU); at and
 * below 2^-123, s * C_lo loses bits to underflow and 5,592,406 quotients differ (the lowest
 * 2^-125, the highest 2^-123 itself). A run that starts from
 * integers never forms a nonzero sum below 3^-(p-1) in pass p (a sum of non-negative values
 * is at least its largest term, and each pass divides by at most 3), and 3^-77 > 2^-123: so
 * passes 1 to GS_SHORT_DIV_PASSES may use it, and later passes take gs_div3_fma.
 */
#define GS_SHORT_DIV_PASSES 78u
#define GS_DIV3_HI 0x1.555556p-2f   /* RN(1/3) */
#define GS_DIV3_LO -0x1.555556p-27f /* RN(1/3 - GS_DIV3_HI) */
GS_HD float gs_div3_short(float s) { return fmaf(s, GS_DIV3_HI, s * GS_DIV3_LO); }

/*
 * Integer sums in place of the float passes (both backends' fast path for 8-bit rows and
 * columns; the argument is the same down a column, whose ends are the window's first and
 * last rows). At a position x at least K from both row ends (K <= x <= width - 1 - K), the pass-p
 * values the result uses lie within K - p of x, so at least p >= 1 from the ends: no
 * adaptive mean reaches x, and every sample read lies in the row. K exact passes give
 * N / 3^K there, N the sum of the samples x - K .. x + K weighted by the trinomial
 * coefficients: an integer below 3^K x 256. For 8-bit
 * samples the float passes stay close to it: a pass of values in [0, 255] rounds a + b
 * (below 512: error at most 2^-16), then + c (below 768: at most 2^-15) and the quotient
 * (below 256: at most 2^-17), so it lands within 2^-16 + 2^-17 = 3 x 2^-17 of the exact
 * mean of its inputs, and the inputs' errors pass through a mean no larger. After K <= 4
 * passes the float value is within 4 x 3 x 2^-17 < 9.2e-5 of N / 3^K, which is at least
 * 1 / (2 x 3^K) >= 1/162 from every half-integer (3^K is odd). So the rounded float result
 * is round(N / 3^K), and no tie arises; N < 3^4 x 256 fits 16 bits. tests/test_kernels.c
 * checks it for every input of K = 1 and every three pass-1 sums of K = 2, with the error
 * bound, and for random windows of K = 3 and 4. The kernels: kernels/cpu/int_sums.h (rows
 * in cpu_smooth.c, columns in cpu_window.c), kernels/cuda/packed_passes.cuh (rows in
 * registers_few_passes.cu; its rounding also in smooth_columns.cu).
 */
#define GS_INT_SUMS_MAX_PASSES 4u

/* The positions of [lo, hi) at least K from both ends of the run of `len` samples they lie
 * in (a row, or a window's rows), where no pass reaches an end: [*i0, *i1), empty (*i0 >=
 * *i1) where there is none. Every backend's integer sums (and the CUDA xy kernel's window)
 * are taken there alone. */
GS_HD void gs_int_sums_inner(long lo, long hi, long len, long k, long *i0, long *i1)
{
    *i0 = lo > k ? lo : k;
    *i1 = hi < len - k ? hi : len - k;
}
/* 3^K, the divisor after K <= GS_INT_SUMS_MAX_PASSES passes. */
#define GS_INT_SUMS_DIVISOR(k) ((k) == 1 ? 3u : (k) == 2 ? 9u : (k) == 3 ? 27u : 81u)

/*
 * --axis xy over 8-bit samples as one integer window (the CUDA backend's fused xy kernel):
 * K passes along the row, then K down the column, at a pixel at least K from both ends of
 * its row and of its window's column. The argument above carries over with P = 2K passes:
 * each pass, along either axis, takes values in [0, 255] and lands within 3 x 2^-17 of the
 * exact mean of its inputs, so the float result is within 2K x 3 x 2^-17 of N / 3^(2K), N
 * the sum of the (2K + 1)^2 samples weighted by products of the one-axis coefficients
 * (N <= 255 x 3^(2K) < 2^18). N / 3^(2K) is at least 1 / (2 x 3^(2K)) from every
 * half-integer: for K = 3 that is 6.9e-4 against an error of at most 1.4e-4, so the rounded
 * float result is round(N / 3^(2K)); for K = 4 the error bound (1.8e-4) passes the distance
 * (7.6e-5), hence the limit. tests/test_kernels.c checks random windows of K = 1 to 3
 * against the reference's xy passes.
 */
#define GS_INT_SUMS_XY_MAX_PASSES 3u

/*
 * round(N / 3^(2K)) for such a sum, N <= 255 x 3^(2K), with `inverse` = RN(3^-2K): N is exact
 * as a float, the product is within 255 x 2^-23 < 3.1e-5 of N / 3^(2K) (far closer than the
 * 6.9e-4 to the nearest half-integer), and adding 2^23 rounds it to an integer.
 * tests/test_kernels.c checks every N of K = 1 to 3. The CUDA kernel computes the same
 * three operations from the bits (N as kMagic23Bits | N).
 */
GS_HD uint32_t gs_int_xy_round(uint32_t n, float inverse)
{
    const float product = (float)n * inverse;
    return (uint32_t)((product + 8388608.0f) - 8388608.0f);
}

/* The mean of the two pixels at a row end (left then right); halving is exact as 0.5f. */
GS_HD float gs_mean2(float l, float r) { return (l + r) * 0.5f; }

/* A float result as stored: itself, or the one quiet NaN 0x7fc00000 for every NaN, since
 * CPUs and GPUs make different NaN bit patterns (the plugin ABI, "Arithmetic"). */
GS_HD float gs_canonical_f32(float v) { return v != v ? __builtin_nanf("") : v; }
GS_HD double gs_canonical_f64(double v) { return v != v ? __builtin_nan("") : v; }

/* Round to nearest, ties to even, and clamp to [0, maxval]. */
GS_HD float gs_quantize(float v, float maxval)
{
    float q = rintf(v);
    return q < 0.0f ? 0.0f : (q > maxval ? maxval : q);
}

#endif /* GS_STENCIL_MATH_H */
