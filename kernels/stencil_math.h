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
 * order, then IEEE division by 3. Division stays a true division: it is what the contract
 * fixes, and every backend compiles it without fast-math or contraction.
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

/*
 * One pass over row positions [lo, hi) of a row of `width` samples, reading `a` and
 * writing `b`, both holding row position x at index x - off. Positions 0 and width-1 use
 * the adaptive count; any other position reads its two neighbours, so a tiled caller
 * provides a[lo-1] and a[hi] as halo and shrinks [lo, hi) by one at each side that is not
 * a row end after every pass.
 */
GS_HD void gs_pass_range(const float *a, float *b, long off, long lo, long hi, long width)
{
    long x = lo;
    if (x >= hi) return;
    if (width == 1) { b[0 - off] = a[0 - off]; return; }
    if (x == 0) { b[0 - off] = gs_mean2(a[0 - off], a[1 - off]); x = 1; }
    long end = hi < width - 1 ? hi : width - 1;
    for (; x < end; ++x) b[x - off] = gs_mean3(a[x - 1 - off], a[x - off], a[x + 1 - off]);
    if (hi == width && x == width - 1) b[x - off] = gs_mean2(a[x - 1 - off], a[x - off]);
}

#endif /* GS_STENCIL_MATH_H */
