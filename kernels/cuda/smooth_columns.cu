/* smooth_columns.cu: smoothing down the columns of a window of rows (--axis y, xy). */
/*
 * Each thread rolls every pass of four neighbouring columns through registers, rows entering
 * in batches of six vectors (column_walk.cuh), u8 segments away from the window's ends at up
 * to 4 passes as exact integer sums; many passes go out as a chain of launches, float32
 * between them.
 */
#include "column_walk.cuh"
#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "packed_passes.cuh"
#include "sample_io.cuh"
#include "launch_chain.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

/*
 * Layout. The float walk (column_walk.cuh) takes kWalkCols columns a thread. Up to
 * kMaxLaunchPasses passes run in one launch; more go out as a chain of launches over the
 * whole window, float32 between them (each launch takes the window's ends as column ends,
 * which is exactly the contract), and the last writes the output rows. A u8 -> u8 launch of
 * at most kPackedMaxPasses passes walks a segment whose output rows are all at least K from
 * the window's ends as integer sums (column_batch_packed; stencil_math.h says why the bytes
 * are the same), fewer instructions than the float passes.
 */

using namespace gs_cuda;

namespace {

constexpr int kColumnThreads = kWalkThreads; /* threads per block */
constexpr int kCols = 4;                   /* columns per thread: one 4-sample vector */
constexpr uint32_t kSegmentRows = 256;     /* output rows per thread, before wave fitting */
constexpr uint32_t kMaxLaunchPasses = 10;  /* 3 x 11 x 4 floats of levels per thread (u8, u16) */
static_assert(kMaxLaunchPasses <= GS_SHORT_DIV_PASSES,
              "a launch from integer samples may take the two-instruction division throughout");

/* Columns a thread of the float walk: 2 for float32 input above the integer sums' passes,
 * else 4. Three rows of K + 1 levels of 4 columns took 181 registers at K = 10 (2 blocks an
 * SM) and the walk waited on memory; with 2 columns (108 registers, 4 blocks) f32 y K=10 ran
 * 3.86 -> 2.51 ms on an H100, but u8 and u16 input, loading 2 or 4 bytes a thread, ran
 * slower (u8 y K=10 1.21 -> 1.44 ms): docs/performance.md. */
template <int K, typename Tin>
constexpr int kWalkCols = K > kPackedMaxPasses && std::is_same<Tin, float>::value ? 2 : kCols;

/* kCols u8 samples of a row from column x as one word, columns past the row's end 0.
 * kFull: all kCols lie in the row (one load, no branch: a batch's loads then all issue
 * before the first is used). */
template <bool kFull>
__device__ __forceinline__ uint32_t load_col_word(const char *row, uint32_t x, uint32_t width)
{
    const uint8_t *p = (const uint8_t *)row + x;
    if constexpr (kFull) {
        return *(const uint32_t *)p;
    } else {
        uint32_t word = 0;
#pragma unroll
        for (int c = 0; c < kCols; ++c)
            if (x + c < width) word |= (uint32_t)p[c] << (8 * c);
        return word;
    }
}

/* The kCols samples of a row after K passes of integer sums, from their packed words (w[0]
 * columns 0 and 2 in its halves, w[1] columns 1 and 3); kFull as load_col_word. */
template <int K, bool kFull>
__device__ __forceinline__ void store_packed_cols(char *row, uint32_t x, uint32_t width,
                                                  const uint32_t (&w)[2])
{
    const uint32_t c0 = round_low_half<K>(w[0]), c2 = round_high_half<K>(w[0]);
    const uint32_t c1 = round_low_half<K>(w[1]), c3 = round_high_half<K>(w[1]);
    const uint32_t word = pack_low_bytes(c0, c1, c2, c3);
    uint8_t *p = (uint8_t *)row + x;
    if constexpr (kFull) {
        *(uint32_t *)p = word;
    } else {
#pragma unroll
        for (int c = 0; c < kCols; ++c)
            if (x + c < width) p[c] = (uint8_t)(word >> (8 * c));
    }
}

/* column_batch for a segment whose rows are all at least K from the window's ends, of u8
 * samples, as integer sums (packed_passes.cuh; stencil_math.h says why the bytes are the
 * same): level j holds two packed words of the thread's kCols columns a row, and a pass is
 * two integer adds. `in` holds rows y .. y + kWalkUnroll - 1, loaded a batch ahead (rows from
 * w1 on hold 0 and only finish the levels); kFull: the thread's kCols columns all lie in
 * the rows; kWhole: the walk ends after the batch's last row, so every row is stepped. */
template <int K, bool kFull, bool kWhole>
__device__ __forceinline__ void column_batch_packed(uint32_t (&v)[K + 1][3][2],
                                                    const uint32_t (&in)[kWalkUnroll], char *dst,
                                                    size_t dst_pitch, uint32_t x, uint32_t width,
                                                    uint32_t y, uint32_t w1, uint32_t s0,
                                                    uint32_t s1, uint32_t above)
{
#pragma unroll
    for (int u = 0; u < kWalkUnroll; ++u) {
        const uint32_t yy = y + u;
        if (!kWhole && yy >= w1 + K) break;
        v[0][u % 3][0] = even_bytes(in[u]); /* columns 0 and 2 */
        v[0][u % 3][1] = odd_bytes(in[u]);  /* 1 and 3 */
#pragma unroll
        for (int j = 1; j <= K; ++j) {
            constexpr int base = 3 * (K + 2);
            const uint32_t *up = v[j - 1][(u - j - 1 + base) % 3], *mid = v[j - 1][(u - j + base) % 3];
            const uint32_t *down = v[j - 1][(u - j + 1 + base) % 3];
            uint32_t *out = v[j][(u - j + base) % 3];
            out[0] = up[0] + mid[0] + down[0];
            out[1] = up[1] + mid[1] + down[1];
        }
        /* level K's row t needs input rows t - K .. t + K, all loaded once t >= s0 */
        const uint32_t t = yy - K;
        if (t >= s0 && t < s1 && yy >= (uint32_t)K)
            store_packed_cols<K, kFull>(dst + (size_t)(t - above) * dst_pitch, x, width, v[K][(u - K + 3 * K) % 3]);
    }
}

/* Segments of u8 columns in and out at 1 to kPackedMaxPasses passes that no window end
 * reaches take integer sums. */
template <int K, typename Tin, typename Tout>
constexpr bool kColumnsPacked = std::is_same<Tin, uint8_t>::value &&
                                std::is_same<Tout, uint8_t>::value && 1 <= K &&
                                K <= kPackedMaxPasses;

/* The float walk over loaded rows: the thread's kWalkCols columns, all the launch's
 * segments, each pass's sum divided by Div (launch_kinds chooses it). */
template <int K, typename Tin, typename Tout, class Div>
__device__ __forceinline__ void loaded_column_walk(const char *src, size_t src_pitch, char *dst,
                                                   size_t dst_pitch, uint32_t width, uint32_t rows,
                                                   const ColumnRows &out)
{
    constexpr int C = kWalkCols<K, Tin>;
    const uint32_t x = (blockIdx.x * blockDim.x + threadIdx.x) * C;
    if (x >= width) return;
    column_walk<K, Tout, Div, C>(LoadedRows<Tin, C>{x, width}, src, src_pitch, dst, dst_pitch, x, true,
                                 width, rows, out);
}

template <int K, typename Tin, typename Tout, class Div>
__global__ void __launch_bounds__(kColumnThreads)
    columns_registers_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                             uint32_t width, uint32_t rows, ColumnRows out)
{
    loaded_column_walk<K, Tin, Tout, Div>(src, src_pitch, dst, dst_pitch, width, rows, out);
}

/* The same held to kBoundedWalkBlocks blocks an SM, for walks above the integer sums'
 * passes: 8 and 16-bit input (4 columns, up to 181 registers at K = 10, 2 blocks an SM
 * unbounded) at 3, float32 input (2 columns, up to 114 registers, 4 blocks) at 6 (80
 * registers, a few bytes spilled at K = 10; 8 blocks spilled 600). Bounding
 * every walk in one kernel changed the registers of those it need not hold (u16 K=3 92 ->
 * 99, 6% slower), hence a kernel of its own (docs/performance.md). */
template <typename Tin> constexpr int kBoundedWalkBlocks = std::is_same<Tin, float>::value ? 6 : 3;
template <int K, typename Tin, typename Tout, class Div>
__global__ void __launch_bounds__(kColumnThreads, kBoundedWalkBlocks<Tin>)
    columns_registers_bounded_kernel(const char *src, size_t src_pitch, char *dst,
                                     size_t dst_pitch, uint32_t width, uint32_t rows,
                                     ColumnRows out)
{
    loaded_column_walk<K, Tin, Tout, Div>(src, src_pitch, dst, dst_pitch, width, rows, out);
}

/* The float walk's kernel for K and the input type (only that one is instantiated). */
template <int K, typename Tin, typename Tout, class Div>
constexpr auto float_walk_kernel()
{
    if constexpr (K > kPackedMaxPasses)
        return columns_registers_bounded_kernel<K, Tin, Tout, Div>;
    else
        return columns_registers_kernel<K, Tin, Tout, Div>;
}

/* The same for u8 columns whose output rows are all at least K from the window's ends, as
 * integer sums (column_batch_packed). A kernel of its own: the float walk's registers would
 * hold it to half as many threads an SM, and its loads in flight with them. Each batch's
 * rows are loaded while the batch before runs its passes, so loads stay in flight between
 * batches (with one batch's loads at a time, the bytes in flight bound the columns at 2.6
 * TB/s, against 3.5 along rows). */
template <int K>
__global__ void __launch_bounds__(kColumnThreads)
    columns_packed_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                          uint32_t width, uint32_t rows, ColumnRows out)
{
    const uint32_t x = (blockIdx.x * blockDim.x + threadIdx.x) * kCols;
    if (x >= width) return;
    const uint32_t above = out.above;
    for (uint32_t seg = blockIdx.y; seg < out.segs; seg += gridDim.y) {
        uint32_t s0, s1;
        segment_rows(out, seg, s0, s1);
        const uint32_t w0 = s0 - K, w1 = s1 + K; /* the launcher keeps both in the window */
        uint32_t v[K + 1][3][2] = {};
        auto walk = [&](auto full) {
            constexpr bool kFull = decltype(full)::value;
            auto load = [&](uint32_t (&in)[kWalkUnroll], uint32_t y) {
                load_batch_words(in, src, src_pitch, y, w1,
                                 [&](const char *row) { return load_col_word<kFull>(row, x, width); });
            };
            uint32_t cur[kWalkUnroll], next[kWalkUnroll];
            load(cur, w0);
            for (uint32_t y = w0; y < w1 + K; y += kWalkUnroll) {
                if (y + kWalkUnroll < w1 + K) load(next, y + kWalkUnroll);
                if (y + kWalkUnroll <= w1 + K)
                    column_batch_packed<K, kFull, true>(v, cur, dst, dst_pitch, x, width, y, w1, s0, s1, above);
                else
                    column_batch_packed<K, kFull, false>(v, cur, dst, dst_pitch, x, width, y, w1, s0, s1, above);
#pragma unroll
                for (int u = 0; u < kWalkUnroll; ++u) cur[u] = next[u];
            }
        };
        if (x + kCols <= width)
            walk(std::true_type{});
        else
            walk(std::false_type{});
    }
}

/* Kernel, a K-pass walk, over output rows [a0, a0 + an) and [b0, b0 + bn) (bn 0: none) of a
 * window of `rows`, dst at window row `above`; segments fitted to whole waves of the device. */
template <auto Kernel, int K, int kThreadCols = kCols>
cudaError_t launch_kernel(const void *src, size_t src_pitch, void *dst, size_t dst_pitch,
                          uint32_t width, uint32_t rows, uint32_t above, uint32_t a0, uint32_t an,
                          uint32_t b0, uint32_t bn, cudaStream_t stream)
{
    const uint32_t threads = (width + kThreadCols - 1) / kThreadCols;
    return launch_column_walk<Kernel>((threads + kColumnThreads - 1) / kColumnThreads,
                                      walk_segment_rows(K, kSegmentRows), src, src_pitch, dst,
                                      dst_pitch, width, rows, above, a0, an, b0, bn, stream);
}

/* Output rows [above, above + out_rows) of a window of `rows`. u8 -> u8 at up to
 * kPackedMaxPasses passes: the rows at least K from both window ends as integer sums, the
 * others (at most K at each end) by the float walk, both ends in one launch. */
template <int K, typename Tin, typename Tout, class Div>
cudaError_t launch(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, uint32_t width,
                   uint32_t rows, uint32_t above, uint32_t out_rows, cudaStream_t stream)
{
    constexpr auto kFloatWalk = float_walk_kernel<K, Tin, Tout, Div>();
    constexpr int C = kWalkCols<K, Tin>;
    if constexpr (kColumnsPacked<K, Tin, Tout> && std::is_same<Div, ShortDivide>::value) {
        const uint32_t o1 = above + out_rows;
        long i0, i1;
        gs_int_sums_inner(above, o1, rows, K, &i0, &i1);
        if (i0 < i1) {
            const uint32_t t0 = (uint32_t)i0, t1 = (uint32_t)i1;
            cudaError_t e;
            if ((e = launch_kernel<kFloatWalk, K, C>(src, src_pitch, dst, dst_pitch, width, rows, above,
                                                     above, t0 - above, t1, o1 - t1, stream)) != cudaSuccess)
                return e;
            return launch_kernel<columns_packed_kernel<K>, K>(src, src_pitch, dst, dst_pitch, width, rows,
                                                              above, t0, t1 - t0, 0, 0, stream);
        }
    }
    return launch_kernel<kFloatWalk, K, C>(src, src_pitch, dst, dst_pitch, width, rows, above, above,
                                           out_rows, 0, 0, stream);
}

/* A launch for a run-time K in [1, kMaxLaunchPasses]. */
template <typename Tin, typename Tout, class Div, int K = 1>
cudaError_t launch_passes(uint32_t passes, const void *src, size_t src_pitch, void *dst,
                          size_t dst_pitch, uint32_t width, uint32_t rows, uint32_t above,
                          uint32_t out_rows, cudaStream_t stream)
{
    if (passes == (uint32_t)K)
        return launch<K, Tin, Tout, Div>(src, src_pitch, dst, dst_pitch, width, rows, above, out_rows,
                                         stream);
    if constexpr (K < (int)kMaxLaunchPasses)
        return launch_passes<Tin, Tout, Div, K + 1>(passes, src, src_pitch, dst, dst_pitch, width, rows,
                                                    above, out_rows, stream);
    return cudaErrorInvalidValue;
}

/* A launch over float32 rows of integer samples, float32 or samples out, dividing by Div. */
template <class Div>
cudaError_t launch_float_rows(uint32_t passes, const void *src, size_t src_pitch, uint32_t in_kind,
                              void *dst, size_t dst_pitch, uint32_t out_kind, uint32_t width,
                              uint32_t rows, uint32_t above, uint32_t out_rows, cudaStream_t stream)
{
    const uint32_t F = kKindFloat;
    if (in_kind == F && out_kind == F)
        return launch_passes<float, float, Div>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (in_kind == F && out_kind == 8)
        return launch_passes<float, uint8_t, Div>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (in_kind == F && out_kind == 16)
        return launch_passes<float, uint16_t, Div>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    return cudaErrorInvalidValue;
}

/* A launch of the chain: kind 8 / 16 / kKindFloat in, samples of the image's depth or float
 * out. Integer samples: a launch inside the chain (float out, not the last) always takes
 * kMaxLaunchPasses; the last one writes samples, or floats at any passes (float32 output);
 * float32 rows of them divide in two instructions when short_division (every pass of the
 * launch within GS_SHORT_DIV_PASSES of the samples), else in three. Float32 samples: float
 * in and out, IEEE division, every launch. */
cudaError_t launch_kinds(uint32_t passes, const void *src, size_t src_pitch, uint32_t in_kind,
                         void *dst, size_t dst_pitch, uint32_t out_kind, bool float_samples,
                         bool short_division, uint32_t width, uint32_t rows, uint32_t above,
                         uint32_t out_rows, cudaStream_t stream)
{
    const uint32_t F = kKindFloat;
    if (float_samples) {
        if (in_kind != F || out_kind != F) return cudaErrorInvalidValue;
        return launch_passes<float, float, IeeeDivide>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    }
    /* the first launch from the samples: its passes are the run's first */
    if (in_kind == 8 && out_kind == F)
        return launch_passes<uint8_t, float, ShortDivide>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (in_kind == 16 && out_kind == F)
        return launch_passes<uint16_t, float, ShortDivide>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (in_kind == 8 && out_kind == 8)
        return launch_passes<uint8_t, uint8_t, ShortDivide>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (in_kind == 16 && out_kind == 16)
        return launch_passes<uint16_t, uint16_t, ShortDivide>(passes, src, src_pitch, dst, dst_pitch, width, rows, above, out_rows, stream);
    if (short_division)
        return launch_float_rows<ShortDivide>(passes, src, src_pitch, in_kind, dst, dst_pitch, out_kind, width, rows, above, out_rows, stream);
    return launch_float_rows<ReciprocalFma>(passes, src, src_pitch, in_kind, dst, dst_pitch, out_kind, width, rows, above, out_rows, stream);
}

} /* namespace */

extern "C" size_t gs_cuda_smooth_columns_scratch_bytes(uint32_t width, uint32_t window_rows,
                                                       uint32_t iters)
{
    return iters > kMaxLaunchPasses ? 2 * float_pitch(width) * (size_t)window_rows : 0;
}

extern "C" cudaError_t gs_cuda_smooth_columns(const void *d_src, size_t src_pitch,
                                              uint32_t src_kind, void *d_dst, size_t dst_pitch,
                                              uint32_t width, uint32_t window_rows, uint32_t above,
                                              uint32_t rows, uint32_t bits, uint32_t out_bits,
                                              uint32_t iters, void *d_scratch,
                                              size_t scratch_bytes, cudaStream_t stream)
{
    if (d_src == NULL || d_dst == NULL || width == 0 || rows == 0 || iters == 0 ||
        iters > GS_MAX_ITERS || (bits != 8 && bits != 16 && bits != kKindFloat) ||
        (out_bits != bits && out_bits != kKindFloat) ||
        (src_kind != bits && src_kind != kKindFloat) || (uint64_t)above + rows > window_rows ||
        src_pitch < (size_t)width * (src_kind / 8) || dst_pitch < (size_t)width * (out_bits / 8) ||
        !aligned(d_src, src_pitch) || !aligned(d_dst, dst_pitch))
        return cudaErrorInvalidValue;
    const bool float_samples = bits == kKindFloat;
    /* Launches of kMaxLaunchPasses over the whole window while more remain, float32 in
     * scratch between them; the last one writes the output rows. */
    const size_t fpitch = float_pitch(width);
    if (iters > kMaxLaunchPasses &&
        (d_scratch == NULL || !aligned(d_scratch, 0) || scratch_bytes < 2 * fpitch * (size_t)window_rows))
        return cudaErrorInvalidValue;
    char *ping[2] = {(char *)d_scratch, (char *)d_scratch + fpitch * (size_t)window_rows};
    const void *in = d_src;
    size_t in_pitch = src_pitch;
    uint32_t in_kind = src_kind, left = iters;
    /* passes since the integer samples before each launch: float32 rows of integer samples
     * come from xy's `iters` row passes */
    uint64_t done = src_kind == kKindFloat && !float_samples ? iters : 0;
    for (int i = 0; left > kMaxLaunchPasses; ++i, left -= kMaxLaunchPasses, done += kMaxLaunchPasses) {
        cudaError_t e = launch_kinds(kMaxLaunchPasses, in, in_pitch, in_kind, ping[i & 1], fpitch,
                                     kKindFloat, float_samples, done + kMaxLaunchPasses <= GS_SHORT_DIV_PASSES,
                                     width, window_rows, 0, window_rows, stream);
        if (e != cudaSuccess) return e;
        in = ping[i & 1], in_pitch = fpitch, in_kind = kKindFloat;
    }
    return launch_kinds(left, in, in_pitch, in_kind, d_dst, dst_pitch, out_bits, float_samples,
                        done + left <= GS_SHORT_DIV_PASSES, width, window_rows, above, rows, stream);
}
