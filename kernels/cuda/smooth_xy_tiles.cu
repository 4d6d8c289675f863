/* smooth_xy_tiles.cu: --axis xy of 8-bit samples at 4 to 10 passes in one pass over the image: row passes into shared-memory tiles, then the column walk. */
/*
 * The two-step path runs every row's passes into float32 rows in device memory and walks
 * the columns from there: 8 more bytes a pixel, and its rows launch spent about 56
 * instructions a pixel on 40 float operations at K = 10 (one-warp segments that redo 6% of
 * the row as halo, shuffles, loads and staged stores). Here a block owns a tile of
 * kTileCols columns and walks down a segment of output rows, kChunkRows rows at a time:
 *
 *  - its input rows, the tile's columns and kHaloBytes either side, are copied into shared
 *    memory a chunk ahead (cp.async; bytes outside the row and rows past the window are 0);
 *  - row phase: two threads a row each walk kWalkCols of the tile's columns along the row,
 *    as the column walks walk down: sample x enters level 0, and level k computes its
 *    value at x - k from level k - 1's last three, so a pass costs its four float
 *    operations a pixel and the walk's halo adds (K - 1) / kWalkCols; pass 1 sums three
 *    samples as integers (div3_of_magic_sum). The K-pass floats go to a float tile;
 *  - column phase: each thread walks its kCols columns down the chunk's rows through the K
 *    column levels (column_batch, the walk of the column launches) and stores the rounded
 *    result.
 *
 * The row passes' floats never leave the SM. Every value is computed by the same
 * operations in the same order as the two steps (the row ends and window ends take the
 * two-term mean, column_step), so the bytes are theirs.
 */
#include "column_walk.cuh"
#include "cuda_kernels.h"
#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "registers_pixels.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

using namespace gs_cuda;

namespace {

constexpr int kThreads = kWalkThreads;             /* threads a block: 4 warps */
constexpr int kCols = 2;                           /* columns a thread walks down */
constexpr uint32_t kTileCols = kThreads * kCols;   /* columns a block owns: 256 */
constexpr int kWalkersPerRow = 2;                  /* threads that walk a row's tile columns */
constexpr int kWalkCols = kTileCols / kWalkersPerRow; /* columns a row walker computes: 128 */
constexpr int kRowSlots = kThreads / kWalkersPerRow;  /* walkers of one half: 64 */
constexpr int kBatchRows = 9;                      /* rows a column batch: a multiple of 3 (ring
                                                      slots) that divides kChunkRows */
constexpr int kChunkRows = 7 * kBatchRows;         /* rows a chunk: 63 of the kRowSlots walkers
                                                      (60, batches of 6, left 4 of 64 idle; 64, the
                                                      rest carried to the next chunk, measured slower) */
constexpr int kHaloBytes = 16;                     /* staged columns either side of the tile */
constexpr int kStageVectors = (kTileCols + 2 * kHaloBytes) / 16; /* 16-byte copies a row: 18 */
/* A staged row's bytes: an odd number of 16-byte vectors (rows start 16-byte aligned for
 * cp.async), the spread of banks that allows: the walkers of a warp, 32 rows, read a word
 * each in 8 banks (4 to a bank), where an even number would put them in fewer. */
constexpr uint32_t kStagePitch = (kStageVectors + 1) * 16;
/* A float tile row's floats: 4 more than the tile, so that the eight rows a quarter-warp's
 * 16-byte stores reach start in eight different bank groups. */
constexpr uint32_t kTilePitch = kTileCols + 4;
constexpr size_t kTileBytes = (size_t)kChunkRows * kTilePitch * sizeof(float);
constexpr size_t kStageBytes = (size_t)kChunkRows * kStagePitch;
constexpr size_t kSmemBytes = kTileBytes + 2 * kStageBytes; /* the tile, two stages */
constexpr int kStepsUnroll = 12;                   /* walk steps a loop turn: slots (mod 3) and
                                                      words (mod 4) repeat (24 measured slower) */
constexpr uint32_t kSegmentRows = 2048;            /* output rows a segment before wave fitting (512
                                                      and 1024 measured slower: a segment walks 2K
                                                      rows of context and a part-filled last chunk) */
/* The depths it takes: from the integer window's end to 10, each measured faster than the two
 * steps (docs/performance.md); deeper walks keep the two steps, unmeasured here */
constexpr int kMinTilePasses = (int)GS_INT_SUMS_XY_MAX_PASSES + 1, kMaxTilePasses = 10;
/* Widest rows it takes: columns are signed 32-bit, and a tile reaches kTileCols and its halo
 * past the row's end; wider rows keep the two steps. */
constexpr uint32_t kMaxTileWidth = (uint32_t)INT32_MAX - 2 * kTileCols;
static_assert(kChunkRows % kBatchRows == 0 && kChunkRows <= kRowSlots, "a chunk is whole batches");
static_assert(kMaxTilePasses <= kHaloBytes, "the row walk's halo lies in the staged columns");
static_assert(2 * kMaxTilePasses <= (int)GS_SHORT_DIV_PASSES,
              "every pass from integer samples, row and column, divides in two instructions");
static_assert(kWalkCols % 4 == 0 && (kWalkCols - kWalkCols % kStepsUnroll) % 4 == 0,
              "a walker's outputs go to the tile as whole 16-byte vectors");

/* The float tile's rows as the column walk takes them: the thread's kCols columns of a
 * row, one vector, as float32 rows enter the column launches' walk. */
using TileRows = LoadedRows<float, kCols>;

/* column_step's rule (the two-term mean at a row's ends, a one-sample row unchanged) as
 * selects, with no branch: its branches split the row-end walk into a block a level, each
 * too short to fill the pipeline. */
__device__ __forceinline__ float end_step_selects(float l, float c, float r, uint32_t x, uint32_t width)
{
    float v = x == 0 ? gs_mean2(c, r) : column_mean3<ShortDivide>(l, c, r);
    v = x == width - 1 ? gs_mean2(l, c) : v;
    return width == 1 ? c : v;
}

/*
 * One step of a row walker over columns [a, a + kWalkCols) of one row. Step i feeds column
 * a - K + i into level 0 (`word`'s byte `byte`), and level k computes column a - K + i - k
 * once i >= 2k (the columns the walker's outputs need), in ring slot (i - k) mod 3; level K
 * gives column a + i - 2K. `i` is a compile-time constant once the caller's loop unrolls,
 * up to a multiple of 3 (`base_i` adds the rest for the row-end tests). kRowEnds: the
 * walker's columns reach a row end, which takes the two-term mean (column_step; columns
 * outside the row are never read by those inside); elsewhere level 0 holds sample_bits words
 * and pass 1 sums them as integers (div3_of_magic_sum).
 */
template <int K, bool kRowEnds>
__device__ __forceinline__ void row_walk_step(float (&lv)[K + 1][3], uint32_t (&m)[3], int i, int base_i,
                                              uint32_t word, int byte, int32_t a, uint32_t width)
{
    if constexpr (kRowEnds)
        lv[0][i % 3] = byte_to_float(word, (uint32_t)byte);
    else
        m[i % 3] = sample_bits<uint8_t>(word, (uint32_t)byte);
#pragma unroll
    for (int k = 1; k <= K; ++k) {
        if (i < 2 * k) continue; /* the prologue: level k has not started */
        const int s_l = (i - k - 1 + 3 * (K + 2)) % 3, s_c = (i - k + 3 * (K + 2)) % 3,
                  s_r = (i - k + 1 + 3 * (K + 2)) % 3;
        if constexpr (kRowEnds) {
            /* a column left of the row wraps to a large one: never an end */
            const uint32_t x = (uint32_t)(a - K + base_i + i - k);
            lv[k][s_c] = end_step_selects(lv[k - 1][s_l], lv[k - 1][s_c], lv[k - 1][s_r], x, width);
        } else if (k == 1) {
            lv[1][s_c] = div3_of_magic_sum(m[s_l] + m[s_c] + m[s_r]);
        } else {
            lv[k][s_c] = column_mean3<ShortDivide>(lv[k - 1][s_l], lv[k - 1][s_c], lv[k - 1][s_r]);
        }
    }
}

/* Where the walk starts reading: K rounded up to whole words before the first output. */
template <int K> constexpr int kLead = (K + 3) / 4 * 4;

/*
 * A row walker: the K passes of columns [a, a + kWalkCols) of one row from its staged bytes
 * (`words`: the word holding column a - kLead<K>) into `out` (the float tile's row at column
 * a), four outputs a 16-byte store.
 */
template <int K, bool kRowEnds>
__device__ __forceinline__ void walk_row(const uint32_t *words, float *out, int32_t a, uint32_t width)
{
    float lv[K + 1][3];
    uint32_t m[3];
    /* step i's sample is byte kSkip + i of `words` */
    constexpr int kSkip = kLead<K> - K;
    /* prologue: steps 0 .. 2K - 1, the levels starting one by one */
#pragma unroll
    for (int i = 0; i < 2 * K; ++i)
        row_walk_step<K, kRowEnds>(lv, m, i, 0, words[(kSkip + i) >> 2], (kSkip + i) & 3, a, width);
    /* then kStepsUnroll steps a turn: step 2K + T t + s (T = kStepsUnroll, s static) gives
     * output T t + s from byte kFirst + T t + s, in word kFirst / 4 + (T / 4) t +
     * (kFirst % 4 + s) / 4 */
    constexpr int kFirst = kSkip + 2 * K;
    constexpr int kTurns = kWalkCols / kStepsUnroll;
    constexpr int kTail = kWalkCols % kStepsUnroll;
    constexpr int kTurnWords = kStepsUnroll / 4;
    static_assert(kHaloBytes + 2 * kWalkCols + K <= 16 * kStageVectors,
                  "the second walker's samples lie in the staged bytes");
    static_assert(kHaloBytes + kWalkCols - kLead<K> + 4 * (kFirst / 4 + kTurnWords * (kTurns + 1) + 1) <=
                      (int)kStagePitch,
                  "the words it loads a turn ahead, for no turn too at the end, lie in its stage row");
    const uint32_t *wp = words + kFirst / 4;
    float o[4];
    /* a turn's words are loaded during the turn before, so the loop never waits on them */
    uint32_t wv[kTurnWords + 1];
#pragma unroll
    for (int j = 0; j <= kTurnWords; ++j) wv[j] = wp[j];
#pragma unroll 1
    for (int t = 0; t < kTurns; ++t, wp += kTurnWords, out += kStepsUnroll) {
        uint32_t next[kTurnWords + 1];
#pragma unroll
        for (int j = 0; j <= kTurnWords; ++j) next[j] = wp[kTurnWords + j];
#pragma unroll
        for (int s = 0; s < kStepsUnroll; ++s) {
            row_walk_step<K, kRowEnds>(lv, m, 2 * K + s, kStepsUnroll * t,
                                       wv[(kFirst % 4 + s) >> 2], (kFirst % 4 + s) & 3, a, width);
            o[s % 4] = lv[K][(K + s + 3 * K) % 3];
            if (s % 4 == 3) *(float4 *)(out + s - 3) = make_float4(o[0], o[1], o[2], o[3]);
        }
#pragma unroll
        for (int j = 0; j <= kTurnWords; ++j) wv[j] = next[j];
    }
    if constexpr (kTail > 0) {
#pragma unroll
        for (int s = 0; s < kTail; ++s) {
            row_walk_step<K, kRowEnds>(lv, m, 2 * K + s, kStepsUnroll * kTurns, wv[(kFirst % 4 + s) >> 2],
                                       (kFirst % 4 + s) & 3, a, width);
            o[s % 4] = lv[K][(K + s + 3 * K) % 3];
            if (s % 4 == 3) *(float4 *)(out + s - 3) = make_float4(o[0], o[1], o[2], o[3]);
        }
    }
}

/*
 * Copies of a chunk's input rows [y, y + kChunkRows) into a stage: a thread copies vector
 * `vec` of rows row0, row0 + kCopyRows, ... (kCopyRows rows of kStageVectors vectors fill the
 * block's threads), `bytes` of it inside the row (0 past a window's last row).
 */
constexpr int kCopyRows = kThreads / kStageVectors; /* 7 */
struct StageCopies {
    const char *src;  /* the thread's vector in window row 0 (or the row's start: no bytes) */
    size_t pitch;
    uint32_t bytes;   /* of the vector inside the row */
    uint32_t rows;    /* of the window */
    int vec, row0;    /* row0 >= kCopyRows: the thread copies nothing */

    __device__ __forceinline__ void send(char *stage, uint32_t y) const
    {
        if (row0 >= kCopyRows) return;
        char *dst = stage + row0 * kStagePitch + vec * 16;
        const char *p = src + (size_t)(y + row0) * pitch;
        uint32_t r = y + row0;
        for (int row = row0; row < kChunkRows; row += kCopyRows, r += kCopyRows, p += kCopyRows * pitch,
                 dst += kCopyRows * kStagePitch)
            stage_copy((uint4 *)dst, r < rows ? p : src, r < rows ? bytes : 0u);
    }
};

template <int K>
__global__ void __launch_bounds__(kThreads, 2)
    xy_tiles_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch, uint32_t width,
                    uint32_t rows, ColumnRows out)
{
    extern __shared__ __align__(16) unsigned char smem[];
    float *tile = (float *)smem;
    char *const stages = (char *)smem + kTileBytes; /* two, kStageBytes apart */
    const int tid = threadIdx.x;
    /* The first and the last tile's blocks hold the row ends and run the slower row-end
     * walk; they take the first block indices, so that they start in the first wave and the
     * grid's tail holds the others' short blocks (a grid of one segment a block row: not
     * capped at kMaxGridY). A last tile of fewer than K columns leaves the row end's walk to
     * the tile before too, which keeps its place: a matter of speed alone. */
    uint32_t tile_x = blockIdx.x, first_seg = blockIdx.y;
    if (gridDim.x > 2 && gridDim.y == out.segs) {
        uint32_t n = blockIdx.y * gridDim.x + blockIdx.x;
        if (n < 2 * out.segs) {
            tile_x = n % 2 ? gridDim.x - 1 : 0, first_seg = n / 2;
        } else {
            n -= 2 * out.segs;
            tile_x = 1 + n % (gridDim.x - 2), first_seg = n / (gridDim.x - 2);
        }
    }
    const int32_t x0 = (int32_t)(tile_x * kTileCols);

    /* this thread's copies: vector `vec` of the staged row, global columns from x0 - kHaloBytes */
    StageCopies copies;
    copies.vec = tid % kStageVectors, copies.row0 = tid / kStageVectors;
    copies.pitch = src_pitch, copies.rows = rows;
    {
        const int32_t xs = x0 - kHaloBytes + 16 * copies.vec;
        const int32_t in_row = xs < 0 ? 0 : (int32_t)width - xs;
        copies.bytes = in_row <= 0 ? 0u : in_row >= 16 ? 16u : (uint32_t)in_row;
        copies.src = copies.bytes ? src + xs : src;
    }

    /* row phase: walker `slot` of half `half` walks tile row `slot`, columns from a */
    const int half = tid / kRowSlots, slot = tid % kRowSlots;
    const int32_t a = x0 + half * kWalkCols;
    const bool walks = slot < kChunkRows && a < (int32_t)width;
    /* a walker's level k computes columns [a - K + k, a + kWalkCols + K - k): none is a
     * row end when a >= K and a + kWalkCols + K <= width */
    const bool row_ends = a < K || a + kWalkCols + K > (int32_t)width;

    /* column phase */
    const uint32_t x = (uint32_t)x0 + kCols * tid;
    const bool stores = x < width;
    const bool whole_stores = x + kCols <= width;
    const float *tile_cols = tile + kCols * tid;
    const TileRows tile_rows = {x, width};
    const uint32_t above = out.above;

    for (uint32_t seg = first_seg; seg < out.segs; seg += gridDim.y) {
        uint32_t s0, s1;
        segment_rows(out, seg, s0, s1);
        /* the walk's rows and its free ends, as column_walk's */
        const uint32_t w0 = s0 > (uint32_t)K ? s0 - K : 0;
        const uint32_t w1 = s1 + K < rows ? s1 + K : rows;
        const bool free_start = w0 > 0;
        const bool free_end = w1 + K + kBatchRows <= rows;
        float v[K + 1][3][kCols];
        uint32_t p0[3][2] = {};
        zero_levels(v);
        int cur = 0;
        copies.send(stages, w0);
        asm volatile("cp.async.commit_group;" ::: "memory");
        for (uint32_t yc = w0; yc < w1 + K; yc += kChunkRows) {
            const bool more = yc + kChunkRows < w1 + K;
            if (more) copies.send(stages + (cur ^ 1) * kStageBytes, yc + kChunkRows);
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads(); /* the chunk's stage is in; the tile's last chunk is read */
            /* the rows the chunk's batches read: the last chunk of a walk may need few */
            const uint32_t left = w1 + K - yc;
            const uint32_t chunk_rows = left >= (uint32_t)kChunkRows ? (uint32_t)kChunkRows
                                                                      : (left + kBatchRows - 1) / kBatchRows * kBatchRows;
            if (walks && (uint32_t)slot < chunk_rows) {
                const uint32_t *words =
                    (const uint32_t *)(stages + cur * kStageBytes + slot * kStagePitch + kHaloBytes + half * kWalkCols - kLead<K>);
                float *row_out = tile + slot * kTilePitch + half * kWalkCols;
                if (row_ends)
                    walk_row<K, true>(words, row_out, a, width);
                else
                    walk_row<K, false>(words, row_out, a, width);
            }
            __syncthreads(); /* the chunk's row passes are in the tile */
#pragma unroll 1
            for (int b = 0; b < kChunkRows / kBatchRows; ++b) {
                const uint32_t y = yc + b * kBatchRows;
                if (y >= w1 + K) break;
                const bool interior = (free_start || y >= w0 + K + 1) && (free_end || y + kBatchRows + 1 <= w1);
                const float *trow = tile_cols + b * kBatchRows * kTilePitch;
                auto batch = [&](auto interior_tag, auto stores_all_tag, auto whole_tag) {
                    constexpr bool kInterior = decltype(interior_tag)::value;
                    constexpr bool kStoresAll = decltype(stores_all_tag)::value;
                    constexpr bool kWholeStores = decltype(whole_tag)::value;
                    TileRows::Raw in[kBatchRows];
#pragma unroll
                    for (int u = 0; u < kBatchRows; ++u)
                        in[u] = (!kInterior && y + u >= w1) ? TileRows::zero()
                                                             : *(const TileRows::Raw *)(trow + u * kTilePitch);
                    /* a thread whose columns all lie in the row stores: a constant, so that
                     * the batch's rows store with no branch around them */
                    column_batch<K, uint8_t, ShortDivide, kInterior, kStoresAll, kWholeStores, kCols>(
                        v, p0, tile_rows, in, dst, dst_pitch, x, kWholeStores || stores, width, y, w0, w1, s0,
                        s1, above);
                };
                batch_variant(interior, interior && y >= s0 + K && y + kBatchRows <= s1 + K, whole_stores, batch);
            }
            cur ^= 1;
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        __syncthreads(); /* the next segment's first copies reuse the stages */
    }
}

/* The launch: a column walk over the window's output rows, with the tile and its two stages in shared memory. */
template <int K>
cudaError_t launch_tiles(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, uint32_t width,
                         uint32_t window_rows, uint32_t above, uint32_t rows, cudaStream_t stream)
{
    return launch_column_walk<xy_tiles_kernel<K>>((width + kTileCols - 1) / kTileCols, walk_segment_rows(K, kSegmentRows),
                                                  src, src_pitch, dst, dst_pitch, width, window_rows, above, above,
                                                  rows, 0, 0, stream, kSmemBytes);
}

} /* namespace */

extern "C" int gs_cuda_smooth_xy_tiles_takes(uint32_t width, uint32_t bits, uint32_t out_bits, uint32_t iters)
{
    return bits == 8 && out_bits == 8 && iters >= (uint32_t)kMinTilePasses && iters <= (uint32_t)kMaxTilePasses &&
           width <= kMaxTileWidth;
}

extern "C" cudaError_t gs_cuda_smooth_xy_tiles(const void *d_src, size_t src_pitch, void *d_dst,
                                               size_t dst_pitch, uint32_t width, uint32_t window_rows,
                                               uint32_t above, uint32_t rows, uint32_t iters,
                                               cudaStream_t stream)
{
    switch (iters) {
    case 4: return launch_tiles<4>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 5: return launch_tiles<5>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 6: return launch_tiles<6>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 7: return launch_tiles<7>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 8: return launch_tiles<8>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 9: return launch_tiles<9>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    case 10: return launch_tiles<10>(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above, rows, stream);
    default: return cudaErrorInvalidValue;
    }
}
