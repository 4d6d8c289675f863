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
 * SIMD paths use an fma sequence proven to give the same bits: kernels/cpu_isa_body.inc.)
 */
GS_HD float gs_mean3(float l, float c, float r) { return ((l + c) + r) / 3.0f; }

/* The mean of the two pixels at a row end (left then right); halving is exact as 0.5f. */
GS_HD float gs_mean2(float l, float r) { return (l + r) * 0.5f; }

/* Round to nearest, ties to even, and clamp to [0, maxval]. */
GS_HD float gs_quantize(float v, float maxval)
{
    float q = rintf(v);
    return q < 0.0f ? 0.0f : (q > maxval ? maxval : q);
}

#endif /* GS_STENCIL_MATH_H */
