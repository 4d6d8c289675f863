/* bench_smooth.cuh: the smoothing variants the GPU bench times beside the product's. */
#ifndef GS_CUDA_BENCH_SMOOTH_CUH
#define GS_CUDA_BENCH_SMOOTH_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* How the smoothing is computed. Every variant gives the same bytes; they differ in speed. */
typedef enum gs_cuda_bench_variant {
    /* One launch per pass, one thread per pixel, float32 rows ping-ponged through global
     * memory: the baseline that shows what keeping passes on chip is worth. */
    GS_CUDA_BENCH_PINGPONG = 0,
    /* Two shared-memory tiles that swap roles every pass, an mbarrier between passes. */
    GS_CUDA_BENCH_SHARED_TILES,
    /* The registers kernels with one choice pinned: stencil_math.h's division as written
     * (IEEE divide); the fast arithmetic with direct loads; the fast arithmetic with the
     * bulk-copy prefetch at every pass count. */
    GS_CUDA_BENCH_REGISTERS_IEEE_DIVIDE,
    GS_CUDA_BENCH_REGISTERS_DIRECT_LOADS,
    GS_CUDA_BENCH_REGISTERS_BULK_COPY,
    /* The product's smoothing, gs_cuda_smooth. */
    GS_CUDA_BENCH_PRODUCT,
    GS_CUDA_BENCH_VARIANT_COUNT /* not a variant: how many there are */
} gs_cuda_bench_variant;

/* gs_cuda_smooth with `variant` (same arguments and errors); a variant whose tile cannot
 * hold a whole row keeps float32 intermediates in d_scratch, which holds at least
 * gs_cuda_bench_smooth_scratch_bytes for the same variant and shape. */
cudaError_t gs_cuda_bench_smooth(gs_cuda_bench_variant variant, const void *d_src,
                                 size_t src_pitch, void *d_dst, size_t dst_pitch, uint32_t width,
                                 uint32_t rows, uint32_t bits, uint32_t iters, void *d_scratch,
                                 size_t scratch_bytes, cudaStream_t stream);
size_t gs_cuda_bench_smooth_scratch_bytes(gs_cuda_bench_variant variant, uint32_t width,
                                          uint32_t rows, uint32_t iters);

namespace gs_cuda {

/* Each bench variant's entry (arguments as gs_cuda_smooth's, checked by
 * gs_cuda_bench_smooth) and its scratch. */
cudaError_t smooth_pingpong(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                            uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                            void *d_scratch, size_t scratch_bytes, cudaStream_t stream);
size_t smooth_pingpong_scratch(uint32_t width, uint32_t rows, uint32_t iters);

cudaError_t smooth_shared_tiles(const void *d_src, size_t src_pitch, void *d_dst,
                                size_t dst_pitch, uint32_t width, uint32_t rows, uint32_t bits,
                                uint32_t iters, void *d_scratch, size_t scratch_bytes,
                                cudaStream_t stream);
size_t smooth_shared_tiles_scratch(uint32_t width, uint32_t rows, uint32_t iters);

/* `variant` is one of the GS_CUDA_BENCH_REGISTERS_* values; scratch as the product's. */
cudaError_t smooth_registers_pinned(gs_cuda_bench_variant variant, const void *d_src,
                                    size_t src_pitch, void *d_dst, size_t dst_pitch,
                                    uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                                    void *d_scratch, size_t scratch_bytes, cudaStream_t stream);

} /* namespace gs_cuda */

/* Float32 samples to float32 in multi-warp groups, whatever the passes (the product takes
 * one-warp segments at few passes: registers_kernels.cuh, plan); arguments as
 * gs_cuda_smooth_rows_float with bits 32. */
namespace gs_cuda {
cudaError_t smooth_registers_f32_groups(const void *d_src, size_t src_pitch, float *d_dst,
                                        size_t dst_pitch, uint32_t width, uint32_t rows,
                                        uint32_t iters, void *d_scratch, size_t scratch_bytes,
                                        cudaStream_t stream);
}

#endif /* GS_CUDA_BENCH_SMOOTH_CUH */
