/* integral_float.cu: integral rows and the summed-area table of float32 samples, in float64. */
#include "cuda_kernels.h"
#include "launch_common.cuh"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * The ABI fixes the order of every float64 addition: along a row from left to right,
 * starting from -0.0, and for the 2d table down each column in order (out[y][x] =
 * out[y-1][x] + row[y][x], the strip's first row adding column_sums). So a row is one
 * sequential scan, never a tree, and the work is parallel over rows, then over columns.
 *
 * Rows: a block owns kWarp rows, one lane a row. Tiles of kTileCols columns of those rows go
 * through shared memory: lane l loads column l of every row (each load instruction reads a
 * contiguous 128-byte run of one row), each lane then scans its own row's tile in float64,
 * and the tile's sums leave as contiguous 256-byte runs a row. The block's kRowWarps warps
 * take the tiles in turn (warp w: tiles w, w + kRowWarps, ...): loading, converting and
 * storing a tile run in parallel across them, and only the scan waits for the row sums the
 * warp before left in shared memory. One warp a row group had only a quarter of the warps
 * an SM needs to keep its loads in flight (2.2 ms for 16384^2, 2.8x the floor).
 *
 * 2d: the rows as above, written to the table, then a column pass: a thread a column walks
 * down the strip adding each row's value to the running column sum, from d_carry, and
 * leaves the strip's last row in d_carry. Its next batch of rows is loaded before the
 * current one is added.
 */

using namespace gs_cuda;

namespace {

constexpr int kTileCols = kWarp;      /* a tile: one float a lane per row */
constexpr int kTileStride = kTileCols + 1; /* doubles a tile row: see float_rows_kernel */
constexpr int kRowWarps = 4;          /* warps taking a row group's tiles in turn */
constexpr int kRowThreads = kRowWarps * kWarp;
constexpr int kColumnThreads = 256;
constexpr int kColumnBatch = 16;      /* rows a column thread loads ahead of its adds */
static_assert(kRowWarps * kWarp * kTileStride * sizeof(double) +
                      kRowWarps * 2 * kWarp * sizeof(double) <=
                  48u * 1024u,
              "the tiles and the row sums fit a block's static shared memory");

/* The one quiet NaN every float64 NaN result is stored as (GS_CANONICAL_NAN_F64). */
constexpr unsigned long long kCanonicalNan64 = 0x7ff8000000000000ull;
__device__ __forceinline__ double canonical_f64(double v)
{
    return v != v ? __longlong_as_double((long long)kCanonicalNan64) : v;
}

/* The hand-over of the row sums from the warp that scanned tile t - 1 to the warp of tile t:
 * named barrier 1 + (the receiving warp), of the two warps' threads (barrier 0 is
 * __syncthreads'). Both warps wait (bar.sync), so every write of a hand-over slot and every
 * read of it are separated by a barrier that the writer and the reader both take part in:
 * the sender's write before the receiver's read by this hand-over, and the receiver's read
 * before the sender's next write to that slot by the hand-over between them (slots alternate
 * by round, see float_rows_kernel). An arriving sender that did not wait was ordered only
 * through the other warps' hand-overs, which compute-sanitizer's racecheck does not follow
 * and reported as hazards. The waits never cycle: tile t's hand-over involves only the warps
 * of tiles t - 1 and t, whose earlier hand-overs belong to earlier tiles. The two warps wait
 * at different instructions, so the barrier is the non-aligned form (barrier.sync): the
 * aligned bar.sync promises one instruction for all, and synccheck reported its use here
 * as divergence. */
constexpr int kHandOverThreads = 2 * kWarp;
static_assert(1 + kRowWarps <= 16, "the hand-over barriers fit the 16 a block has");
__device__ __forceinline__ void hand_over(uint32_t receiving_warp)
{
    asm volatile("barrier.sync %0, %1;" ::"r"(1u + receiving_warp), "r"(kHandOverThreads) : "memory");
}

/* A float64 addition rounded to nearest even, never contracted with anything. */
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

/* ---- kernels ---- */

/*
 * Integral rows of float32 samples in float64. A warp's tile rows are 33 doubles apart: the
 * scan's 8-byte reads of 16 lanes down one column (lane l at row l) meet distinct banks, as
 * the staging's reads and writes along one row do. The rows' running sums go between tiles
 * through s_sums[w][round % 2]: written by warp w after its tile of that round, read by warp
 * w + 1 after the hand-over (hand_over). Two slots a warp make the receiver's read and the
 * sender's next write of one slot a whole round apart, with a hand-over of the two warps
 * between. A block past the strip's last row returns before its first barrier.
 */
__global__ void __launch_bounds__(kRowThreads)
    float_rows_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows)
{
    __shared__ double s_tile[kRowWarps][kWarp][kTileStride];
    __shared__ double s_sums[kRowWarps][2][kWarp];
    const uint32_t warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint64_t row0 = (uint64_t)blockIdx.x * kWarp;
    if (row0 >= rows) return;
    const uint32_t n = rows - row0 < (uint64_t)kWarp ? (uint32_t)(rows - row0) : (uint32_t)kWarp;
    double (*t)[kTileStride] = s_tile[warp];
    const char *src0 = src + (size_t)row0 * src_pitch;
    char *dst0 = dst + (size_t)row0 * dst_pitch;
    const uint32_t tiles = (width + kTileCols - 1) / kTileCols;
    const uint32_t prev_warp = (warp + kRowWarps - 1) % kRowWarps;

    float next[kWarp];
    auto load_tile = [&](uint32_t tile) {
        const uint32_t x = tile * kTileCols + lane;
#pragma unroll
        for (int r = 0; r < kWarp; ++r)
            next[r] = (uint32_t)r < n && x < width
                          ? __ldcs((const float *)(src0 + (size_t)r * src_pitch) + x)
                          : 0.0f;
    };
    if (warp < tiles) load_tile(warp);
    for (uint32_t tile = warp; tile < tiles; tile += kRowWarps) {
#pragma unroll
        for (int r = 0; r < kWarp; ++r) t[r][lane] = (double)next[r];
        if (tile + kRowWarps < tiles) load_tile(tile + kRowWarps); /* in flight meanwhile */
        __syncwarp();
        const uint32_t x0 = tile * kTileCols;
        const uint32_t cols = width - x0 < (uint32_t)kTileCols ? width - x0 : (uint32_t)kTileCols;
        double sum = -0.0; /* the identity: out[0] = in[0] */
        if (tile > 0) {
            hand_over(warp);
            sum = s_sums[prev_warp][((tile - 1) / kRowWarps) % 2][lane];
        }
        double *mine = t[lane];
#pragma unroll
        for (int c = 0; c < kTileCols; ++c) {
            const double next_sum = add_rn(sum, mine[c]);
            sum = (uint32_t)c < cols ? next_sum : sum;
            mine[c] = sum;
        }
        s_sums[warp][(tile / kRowWarps) % 2][lane] = sum;
        __syncwarp(); /* every lane's row is scanned before the lanes store its columns */
        if (tile + 1 < tiles) hand_over((warp + 1) % kRowWarps);
        const uint32_t x = x0 + lane;
#pragma unroll
        for (int r = 0; r < kWarp; ++r)
            if ((uint32_t)r < n && x < width)
                __stcs((double *)(dst0 + (size_t)r * dst_pitch) + x, canonical_f64(t[r][lane]));
        __syncwarp(); /* the tile is read before the next one is staged */
    }
}

/*
 * Column pass of the float64 table: thread x adds column x down the strip's rows in order,
 * from d_carry[x], and leaves the last row's sum there. The running sum is kept as computed;
 * what is stored has NaN canonical (a NaN sum stays NaN whatever its bits).
 */
__global__ void __launch_bounds__(kColumnThreads)
    float_columns_kernel(char *dst, size_t dst_pitch, uint32_t width, uint32_t rows,
                         double *carry)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    double run = carry[x];
    double cur[kColumnBatch], nxt[kColumnBatch];
    auto at = [&](uint32_t y) { return (double *)(dst + (size_t)y * dst_pitch) + x; };
    auto load_batch = [&](double (&v)[kColumnBatch], uint32_t y0) {
#pragma unroll
        for (int j = 0; j < kColumnBatch; ++j) v[j] = y0 + j < rows ? *at(y0 + j) : 0.0;
    };
    load_batch(cur, 0);
    for (uint32_t y0 = 0; y0 < rows; y0 += kColumnBatch) {
        /* the next batch's loads go out before this batch's adds and stores */
        if (y0 + kColumnBatch < rows) load_batch(nxt, y0 + kColumnBatch);
#pragma unroll
        for (int j = 0; j < kColumnBatch; ++j) {
            if (y0 + j >= rows) break;
            run = add_rn(run, cur[j]);
            *at(y0 + j) = canonical_f64(run);
        }
#pragma unroll
        for (int j = 0; j < kColumnBatch; ++j) cur[j] = nxt[j];
    }
    carry[x] = run;
}

/* ---- host side ---- */

/* Float32 samples in, float64 out: rows of 4-byte aligned floats into 8-byte aligned
 * doubles (the kernels move single samples). */
bool float_args_ok(const void *d_src, size_t src_pitch, const void *d_dst, size_t dst_pitch,
                   uint32_t width, uint32_t rows)
{
    return shape_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, 32, 64) &&
           (uintptr_t)d_src % 4 == 0 && src_pitch % 4 == 0 && (uintptr_t)d_dst % 8 == 0 &&
           dst_pitch % 8 == 0;
}

cudaError_t launch_float_rows(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                              uint32_t width, uint32_t rows, cudaStream_t stream)
{
    const uint64_t blocks = ((uint64_t)rows + kWarp - 1) / kWarp; /* kWarp rows a block */
    if (blocks > (uint64_t)INT_MAX) return cudaErrorInvalidValue;
    float_rows_kernel<<<(unsigned)blocks, kRowThreads, 0, stream>>>(
        (const char *)d_src, src_pitch, (char *)d_dst, dst_pitch, width, rows);
    return cudaGetLastError();
}

} /* namespace */

/* ---- launchers ---- */

extern "C" cudaError_t gs_cuda_float_integral_rows(const void *d_src, size_t src_pitch,
                                                   void *d_dst, size_t dst_pitch, uint32_t width,
                                                   uint32_t rows, cudaStream_t stream)
{
    if (!float_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows)) return cudaErrorInvalidValue;
    return launch_float_rows(d_src, src_pitch, d_dst, dst_pitch, width, rows, stream);
}

extern "C" cudaError_t gs_cuda_float_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                                 size_t dst_pitch, uint32_t width, uint32_t rows,
                                                 void *d_carry, cudaStream_t stream)
{
    if (!float_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows) || d_carry == NULL ||
        (uintptr_t)d_carry % sizeof(double) != 0)
        return cudaErrorInvalidValue;
    cudaError_t err = launch_float_rows(d_src, src_pitch, d_dst, dst_pitch, width, rows, stream);
    if (err != cudaSuccess) return err;
    const unsigned grid = (width + kColumnThreads - 1) / kColumnThreads;
    float_columns_kernel<<<grid, kColumnThreads, 0, stream>>>((char *)d_dst, dst_pitch, width, rows,
                                                             (double *)d_carry);
    return cudaGetLastError();
}
