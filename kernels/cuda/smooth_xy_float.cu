/* smooth_xy_float.cu: --axis xy in one pass over the image, in float: K row passes as each row enters a column walk. */
/*
 * 16-bit samples to 16 bits at 1 <= K <= GS_CUDA_XY_ONE_PASS_MAX_PASSES, where it measured
 * faster than the two-step path (rows to float32 in device memory, then the column walk
 * over them: 8 more bytes a pixel). For 8-bit and float32 samples and for more passes the
 * two steps stay (8-bit samples at 4 to 10 passes take smooth_xy_tiles.cu): there this kernel
 * ran 1.7-3.4x slower (docs/performance.md, "xy in one pass in float"); the bench checks it
 * against them.
 *
 * A thread owns kCols neighbouring columns (4) and walks down a segment of rows as the column
 * launches do (column_walk.cuh); a row entering the walk first takes its K passes along the
 * row. Lanes exchange their end columns by shuffles, one each way a pass, so a warp's 32
 * lanes hold 32 x kCols consecutive columns of which those within K of the warp's ends go
 * wrong, one more each pass: the outer kLendingLanes<K> lanes each side only lend their
 * columns, and warps overlap by twice that. The row's own ends take the two-term mean, as
 * the reference does, in the warps that hold them (a separate instantiation: the others run
 * no end checks). The column passes then run on the row passes' floats, and each result is
 * rounded once, so the bytes are the two-step path's: the same operations in the same order.
 */
#include "column_walk.cuh"
#include "cuda_kernels.h"
#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "sample_io.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

using namespace gs_cuda;

namespace {

constexpr int kThreads = kWalkThreads;    /* threads a block: 4 warps */
constexpr int kCols = 4;                  /* columns a thread: one vector of samples */
constexpr uint32_t kSegmentRows = 256;    /* output rows a thread walks, before wave fitting */
constexpr int kMaxPasses = (int)GS_CUDA_XY_ONE_PASS_MAX_PASSES;
static_assert(2 * kMaxPasses <= (int)GS_SHORT_DIV_PASSES,
              "every pass from integer samples, row and column, divides in two instructions");

/* Lanes at each end of a warp whose columns only lend: K passes spoil K columns from each end. */
template <int K> constexpr int kLendingLanes = (K + kCols - 1) / kCols;
template <int K> constexpr int kStoringLanes = kWarp - 2 * kLendingLanes<K>;
static_assert(kLendingLanes<kMaxPasses> < kWarp / 4, "most lanes of a warp store");

/* Blocks an SM the kernel is held to. The row-end warps' instantiation and the others' share
 * the kernel's registers (137 at u16 K = 3 unbounded, 3 blocks an SM): 4 blocks (123, none
 * spilled). */
constexpr int kMinBlocks = 4;

/*
 * The rows of the xy walk: kCols samples of type Tin from column x (a signed column: the
 * first warp's lending lanes start before the row), 0 outside the row, then the K passes
 * along the row. kRowEnds: the warp holds a row end, whose columns take the two-term mean
 * (a one-sample row stays as it is); columns outside the row are never read by those inside.
 */
template <int K, typename Tin, class Div, bool kRowEnds> struct RowPassedRows {
    static_assert(sizeof(Tin) < 4, "the walk stages 8 and 16-bit rows only (no load())");
    static constexpr int C = kCols;
    using Raw = typename Vec<Tin, C>::type;
    int64_t x;
    uint32_t width;
    static __device__ __forceinline__ Raw zero() { return Raw{}; }
    /* the bytes of a row's vector inside the row (x is a multiple of C: none before it), and
     * where they start */
    __device__ __forceinline__ uint32_t row_bytes() const
    {
        return x < 0 || x >= (int64_t)width ? 0 : row_vector_bytes<Tin, C>((uint32_t)x, width);
    }
    __device__ __forceinline__ size_t row_offset() const { return x >= 0 ? (size_t)x * sizeof(Tin) : 0; }
    __device__ __forceinline__ void enter(const Raw &raw, float (&v)[C]) const
    {
        vec_floats<Raw, C>(raw, v);
#pragma unroll
        for (int pass = 1; pass <= K; ++pass) {
            const float left = __shfl_up_sync(kFullMask, v[C - 1], 1);
            const float right = __shfl_down_sync(kFullMask, v[0], 1);
            float n[C];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const float l = c == 0 ? left : v[c - 1], r = c == C - 1 ? right : v[c + 1];
                n[c] = Div::div3(sum3(l, v[c], r));
                if constexpr (kRowEnds) {
                    const int64_t pos = x + c;
                    if (width == 1) n[c] = v[c];
                    else if (pos == 0) n[c] = gs_mean2(v[c], r);
                    else if (pos == (int64_t)width - 1) n[c] = gs_mean2(l, v[c]);
                }
            }
#pragma unroll
            for (int c = 0; c < C; ++c) v[c] = n[c];
        }
    }
};

/* Warp w's lane l holds columns from (w x kStoringLanes + l - kLendingLanes) x kCols; lanes
 * kLendingLanes .. 31 - kLendingLanes store theirs. */
template <int K, typename Tin, typename Tout, bool kFloatSamples>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    xy_float_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch, uint32_t width,
                    uint32_t rows, ColumnRows out)
{
    /* every pass, row and column, is within GS_SHORT_DIV_PASSES of integer samples */
    using Div = std::conditional_t<kFloatSamples, IeeeDivide, ShortDivide>;
    constexpr int C = kCols;
    constexpr int64_t kSpan = (int64_t)kWarp * C;
    const uint32_t lane = threadIdx.x % kWarp;
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp;
    const int64_t first = ((int64_t)warp * kStoringLanes<K> - kLendingLanes<K>) * C;
    if (first + kLendingLanes<K> * C >= (int64_t)width) return; /* the whole warp: nothing to store */
    const int64_t x = first + (int64_t)lane * C;
    const bool stores = lane >= (uint32_t)kLendingLanes<K> &&
                        lane < (uint32_t)(kWarp - kLendingLanes<K>) && x < (int64_t)width;
    const uint32_t sx = stores ? (uint32_t)x : 0u;
    if (first <= 0 || first + kSpan >= (int64_t)width)
        column_walk<K, Tout, Div, C>(RowPassedRows<K, Tin, Div, true>{x, width}, src, src_pitch, dst,
                                         dst_pitch, sx, stores, width, rows, out);
    else
        column_walk<K, Tout, Div, C>(RowPassedRows<K, Tin, Div, false>{x, width}, src, src_pitch, dst,
                                         dst_pitch, sx, stores, width, rows, out);
}

template <int K, typename Tin, typename Tout, bool kFloatSamples>
cudaError_t launch(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, uint32_t width,
                   uint32_t window_rows, uint32_t above, uint32_t rows, cudaStream_t stream)
{
    constexpr auto kKernel = xy_float_kernel<K, Tin, Tout, kFloatSamples>;
    const uint64_t stored_words = ((uint64_t)width + kCols - 1) / kCols;
    const uint64_t warps = (stored_words + kStoringLanes<K> - 1) / kStoringLanes<K>;
    const uint64_t blocks_x = (warps * kWarp + kThreads - 1) / kThreads;
    if (blocks_x > 0x7fffffffu) return cudaErrorInvalidValue;
    return launch_column_walk<kKernel>((uint32_t)blocks_x, walk_segment_rows(K, kSegmentRows), src,
                                       src_pitch, dst, dst_pitch, width, window_rows, above, above, rows,
                                       0, 0, stream);
}

/* launch for a run-time K in [1, kMaxPasses]. */
template <typename Tin, typename Tout, bool kFloatSamples, int K = 1>
cudaError_t launch_passes(uint32_t passes, const void *src, size_t src_pitch, void *dst, size_t dst_pitch,
                          uint32_t width, uint32_t window_rows, uint32_t above, uint32_t rows,
                          cudaStream_t stream)
{
    if (passes == (uint32_t)K)
        return launch<K, Tin, Tout, kFloatSamples>(src, src_pitch, dst, dst_pitch, width, window_rows,
                                                   above, rows, stream);
    if constexpr (K < kMaxPasses)
        return launch_passes<Tin, Tout, kFloatSamples, K + 1>(passes, src, src_pitch, dst, dst_pitch,
                                                              width, window_rows, above, rows, stream);
    return cudaErrorInvalidValue;
}

} /* namespace */

extern "C" cudaError_t gs_cuda_smooth_xy_float_one_pass(const void *d_src, size_t src_pitch, void *d_dst,
                                                        size_t dst_pitch, uint32_t width,
                                                        uint32_t window_rows, uint32_t above,
                                                        uint32_t rows, uint32_t bits, uint32_t out_bits,
                                                        uint32_t iters, cudaStream_t stream)
{
    if (iters < 1 || iters > (uint32_t)kMaxPasses || bits != 16 || out_bits != 16)
        return cudaErrorInvalidValue;
    return launch_passes<uint16_t, uint16_t, false>(iters, d_src, src_pitch, d_dst, dst_pitch, width,
                                                    window_rows, above, rows, stream);
}
