/* cuda_kernels.h: C-callable launchers of gsmooth's CUDA kernels (smoothing variants, integral rows, integral 2d). */
#ifndef GS_CUDA_KERNELS_H
#define GS_CUDA_KERNELS_H

/*
 * Every launcher works on device memory only and enqueues on `stream`; none synchronises.
 * Pointers prefixed d_ are device pointers. Pitches are in bytes. Launchers return
 * cudaSuccess, cudaErrorInvalidValue for bad arguments (checked before any launch), or the
 * error cudaGetLastError() reported after a launch. They print nothing and keep no state.
 *
 * Alignment: device rows handed to the smoothing and integral launchers must start on a
 * 16-byte boundary (base pointer and pitch multiples of GS_CUDA_ALIGN), because the fast
 * kernels move pixels in 16-byte vectors. cudaMallocPitch and the plugin's buffers do so.
 */

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Byte alignment of device row starts and pitches (16-byte vector loads and stores). */
#define GS_CUDA_ALIGN 16u

/* Smoothing algorithm variants; one enum, never copies of a launcher. */
typedef enum gs_cuda_smooth_variant {
    GS_CUDA_SMOOTH_NAIVE = 0, /* one launch per pass, global float ping-pong (bench baseline) */
    GS_CUDA_SMOOTH_SEED = 1,  /* the lesson's double-buffered shared-memory stencil on mbarriers */
    GS_CUDA_SMOOTH_FAST = 2   /* passes in registers with warp shuffles, 16-byte vectors */
} gs_cuda_smooth_variant;

/* Arithmetic of the fast kernel: the shared formulas of stencil_math.h compiled as they
 * stand, or the same bits through a shorter instruction sequence (see smooth_fast.cu). */
typedef enum gs_cuda_fast_arith {
    GS_CUDA_ARITH_SHARED = 0, /* gs_mean3 / gs_quantize as written (IEEE divide, FCHK branch) */
    GS_CUDA_ARITH_SHORT = 1   /* proven-equal sequence: reciprocal + two FMAs, magic rounding */
} gs_cuda_fast_arith;

/*
 * Plan of a K-pass smoothing split into launches: a variant whose tile cannot hold a whole
 * row carries a halo of `passes` pixels per side, so it caps passes per launch at
 * `max_per_launch`; intermediate results between launches stay float32 in device scratch.
 */
static inline uint32_t gs_cuda_launch_count(uint32_t iters, uint32_t max_per_launch)
{
    return iters == 0 ? 0u : (iters + max_per_launch - 1u) / max_per_launch;
}

/*
 * Smooth `rows` rows of `width` samples of `bits` (8 or 16) bits `iters` times, d_src ->
 * d_dst (same depth; must not overlap). d_scratch holds at least the bytes that the
 * variant's gs_cuda_smooth_*_scratch_bytes returns for the same shape (NULL when 0).
 */
cudaError_t gs_cuda_smooth_naive(const void *d_src, size_t src_pitch, void *d_dst,
                                 size_t dst_pitch, uint32_t width, uint32_t rows,
                                 uint32_t bits, uint32_t iters, void *d_scratch,
                                 size_t scratch_bytes, cudaStream_t stream);
cudaError_t gs_cuda_smooth_seed(const void *d_src, size_t src_pitch, void *d_dst,
                                size_t dst_pitch, uint32_t width, uint32_t rows, uint32_t bits,
                                uint32_t iters, void *d_scratch, size_t scratch_bytes,
                                cudaStream_t stream);
cudaError_t gs_cuda_smooth_fast(const void *d_src, size_t src_pitch, void *d_dst,
                                size_t dst_pitch, uint32_t width, uint32_t rows, uint32_t bits,
                                uint32_t iters, void *d_scratch, size_t scratch_bytes,
                                cudaStream_t stream);
/* The fast variant with its choices explicit (the bench times them): the arithmetic, and
 * whether groups of several warps prefetch their next segment into shared memory with the
 * bulk-copy engine on a persistent grid (prefetch != 0) or load it directly (0). */
cudaError_t gs_cuda_smooth_fast_tuned(gs_cuda_fast_arith arith, int prefetch,
                                      const void *d_src, size_t src_pitch, void *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      uint32_t bits, uint32_t iters, void *d_scratch,
                                      size_t scratch_bytes, cudaStream_t stream);

/* Bytes of float32 scratch one call of this shape needs (0 when one launch does all
 * passes); scratch rows are padded to GS_CUDA_ALIGN. */
size_t gs_cuda_smooth_naive_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters);
size_t gs_cuda_smooth_seed_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters);
size_t gs_cuda_smooth_fast_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters);

/*
 * Exhaustive proof, on the device, that the short arithmetic gives the bits of the shared
 * formulas: every float s in [0, 3 * 65535] divided by 3, and every float v in
 * [0, maxval] quantized for maxval 255 and 65535. *d_mismatches (one device uint64) is
 * incremented once per differing input; the caller zeroes it first.
 */
cudaError_t gs_cuda_check_short_arith(unsigned long long *d_mismatches, cudaStream_t stream);

/*
 * Integral rows: inclusive prefix sum of each row, in_bits 8/16 -> out_bits 32/64 (sums
 * wrap modulo 2^out_bits, as unsigned C arithmetic does).
 */
cudaError_t gs_cuda_integral_rows(const void *d_src, size_t src_pitch, void *d_dst,
                                  size_t dst_pitch, uint32_t width, uint32_t rows,
                                  uint32_t in_bits, uint32_t out_bits, cudaStream_t stream);

/*
 * Summed-area table of a strip, continuing from earlier strips: d_carry holds `width`
 * values of out_bits, the table's row just above this strip (each column's running sum of
 * the row prefixes so far; zeros before the first strip). On return the strip's table is in d_dst and
 * d_carry holds its last row.
 */
cudaError_t gs_cuda_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                size_t dst_pitch, uint32_t width, uint32_t rows,
                                uint32_t in_bits, uint32_t out_bits, void *d_carry,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#if defined(__CUDACC__)
/*
 * The one launch chain every smoothing variant shares (C++ only, for the .cu files). K = 0
 * copies. Otherwise the passes go out in launches of at most `max_per_launch`; the first
 * reads the samples, the last writes them, and those between ping-pong two float32 rows
 * sets in d_scratch. `launch(in, in_pitch, in_kind, out, out_pitch, out_kind, passes)`
 * enqueues one launch; a kind is the sample depth in bits, or GS_CUDA_KIND_FLOAT.
 */
#define GS_CUDA_KIND_FLOAT 32u

static inline size_t gs_cuda_float_pitch(uint32_t width)
{
    size_t bytes = (size_t)width * sizeof(float);
    return (bytes + GS_CUDA_ALIGN - 1) / GS_CUDA_ALIGN * GS_CUDA_ALIGN;
}

static inline size_t gs_cuda_chain_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters,
                                                 uint32_t max_per_launch)
{
    return gs_cuda_launch_count(iters, max_per_launch) > 1
               ? 2 * gs_cuda_float_pitch(width) * (size_t)rows
               : 0;
}

template <class LaunchOne>
static inline cudaError_t gs_cuda_run_chain(const void *d_src, size_t src_pitch, void *d_dst,
                                            size_t dst_pitch, uint32_t width, uint32_t rows,
                                            uint32_t bits, uint32_t iters,
                                            uint32_t max_per_launch, void *d_scratch,
                                            size_t scratch_bytes, cudaStream_t stream,
                                            LaunchOne launch)
{
    if (iters == 0)
        return cudaMemcpy2DAsync(d_dst, dst_pitch, d_src, src_pitch,
                                 (size_t)width * (bits / 8), rows, cudaMemcpyDeviceToDevice,
                                 stream);
    const uint32_t n = gs_cuda_launch_count(iters, max_per_launch);
    if (n == 1) return launch(d_src, src_pitch, bits, d_dst, dst_pitch, bits, iters);
    const size_t fpitch = gs_cuda_float_pitch(width);
    if (d_scratch == NULL || scratch_bytes < 2 * fpitch * (size_t)rows)
        return cudaErrorInvalidValue;
    char *ping[2] = {(char *)d_scratch, (char *)d_scratch + fpitch * (size_t)rows};
    const void *in = d_src;
    size_t in_pitch = src_pitch;
    uint32_t in_kind = bits, left = iters;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t passes = left < max_per_launch ? left : max_per_launch;
        const bool last = i + 1 == n;
        void *out = last ? d_dst : (void *)ping[i & 1];
        const size_t out_pitch = last ? dst_pitch : fpitch;
        const uint32_t out_kind = last ? bits : GS_CUDA_KIND_FLOAT;
        cudaError_t err = launch(in, in_pitch, in_kind, out, out_pitch, out_kind, passes);
        if (err != cudaSuccess) return err;
        in = out;
        in_pitch = out_pitch;
        in_kind = out_kind;
        left -= passes;
    }
    return cudaSuccess;
}
#endif /* __CUDACC__ */

#endif /* GS_CUDA_KERNELS_H */
