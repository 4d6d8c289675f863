/* stencil_math.h: the one definition of gsmooth's per-pixel arithmetic, shared by the C reference, the CPU kernels and the CUDA kernels. */
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
 * and by gs_cuda_check_short_arith on the GPU. The SIMD CPU paths run these same three
 * operations on vectors (kernels/cpu/cpu_isa_body.inc).
 */
GS_HD float gs_div3_fma(float s)
{
    const float third = 1.0f / 3.0f;
    float q = s * third;
    return fmaf(fmaf(q, -3.0f, s), third, q); /* q * -3 == -(q * 3): negation is exact */
}

/* The mean of the two pixels at a row end (left then right); halving is exact as 0.5f. */
GS_HD float gs_mean2(float l, float r) { return (l + r) * 0.5f; }

/* Round to nearest, ties to even, and clamp to [0, maxval]. */
GS_HD float gs_quantize(float v, float maxval)
{
    float q = rintf(v);
    return q < 0.0f ? 0.0f : (q > maxval ? maxval : q);
}

#endif /* GS_STENCIL_MATH_H */
