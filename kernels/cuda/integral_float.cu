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
 * Rows: a warp owns kWarp rows, one lane a row. Tiles of kTileCols columns of those rows go
 * through the warp's shared memory: lane l loads columns 2l and 2l + 1 of every row, so each
 * load instruction reads one contiguous 256-byte run of a row; each lane then scans its own
 * row's tile in float64, carrying the row's sum to the next tile; and the tile's sums leave
 * as 16-byte stores of a contiguous 512-byte run a row. The next tile's loads are issued
 * before the current tile is scanned, so a lane keeps 256 bytes in flight.
 *
 * 2d: the rows as above, written to the table, then a column pass: a thread a column walks
 * down the strip adding each row's value to the running column sum, from d_carry, and
 * leaves the strip's last row in d_carry. Its next batch of rows is loaded before the
 * current one is added.
 */

using namespace gs_cuda;

namespace {

constexpr int kTileCols = 2 * kWarp;  /* 64 columns a tile: two floats a lane per row */
constexpr int kTilePad = 2;           /* doubles after each tile row: see s_tile below */
constexpr int kTileStride = kTileCols + kTilePad;
constexpr int kRowWarps = 2;          /* warps a block: 2 x 16.5 KiB of static shared memory */
constexpr int kRowThreads = kRowWarps * kWarp;
constexpr int kColumnThreads = 256;
constexpr int kColumnBatch = 16;      /* rows a column thread loads ahead of its adds */
static_assert(kTileCols == 2 * kWarp, "a lane takes two columns of a tile row");
static_assert(kTileStride % 2 == 0, "tile rows start on 16 bytes, for double2 accesses");
static_assert(kRowWarps * kWarp * kTileStride * sizeof(double) <= 48u * 1024u,
              "the tiles fit a block's static shared memory");

/* The one quiet NaN every float64 NaN result is stored as (GS_CANONICAL_NAN_F64). */
constexpr unsigned long long kCanonicalNan64 = 0x7ff8000000000000ull;
__device__ __forceinline__ double canonical_f64(double v)
{
    return v != v ? __longlong_as_double((long long)kCanonicalNan64) : v;
}

/* A float64 addition rounded to nearest even, never contracted with anything. */
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

/* ---- kernels ---- */

/* Columns x and x + 1 of one row (x even), as floats; 0 past the row's end (never used). */
__device__ __forceinline__ float2 load_pair(const float *row, uint32_t x, uint32_t width)
{
    if (x + 1 < width) return __ldcs((const float2 *)(row + x));
    return make_float2(x < width ? __ldcs(row + x) : 0.0f, 0.0f);
}

/*
 * Integral rows of float32 samples in float64. s_tile's rows are 66 doubles apart (528
 * bytes): the staging's 16-byte accesses of 8 consecutive lanes along one row, and the
 * scan's of 8 consecutive lanes down one column (4 banks apart), both meet distinct banks.
 * A warp past the strip's last row returns at once; no barrier spans warps.
 */
__global__ void __launch_bounds__(kRowThreads)
    float_rows_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows)
{
    __shared__ __align__(16) double s_tile[kRowWarps][kWarp][kTileStride];
    const uint32_t warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint64_t row0 = ((uint64_t)blockIdx.x * kRowWarps + warp) * kWarp;
    if (row0 >= rows) return;
    const uint32_t n = rows - row0 < (uint64_t)kWarp ? (uint32_t)(rows - row0) : (uint32_t)kWarp;
    double (*t)[kTileStride] = s_tile[warp];
    const char *src0 = src + (size_t)row0 * src_pitch;
    char *dst0 = dst + (size_t)row0 * dst_pitch;

    float2 next[kWarp];
    auto load_tile = [&](uint32_t x0) {
#pragma unroll
        for (int r = 0; r < kWarp; ++r)
            next[r] = (uint32_t)r < n ? load_pair((const float *)(src0 + (size_t)r * src_pitch),
                                                  x0 + 2 * lane, width)
                                      : make_float2(0.0f, 0.0f);
    };
    load_tile(0);
    double sum = -0.0; /* lane's row: the identity of addition, so out[0] = in[0] exactly */
    for (uint32_t x0 = 0; x0 < width; x0 += kTileCols) {
#pragma unroll
        for (int r = 0; r < kWarp; ++r)
            *(double2 *)&t[r][2 * lane] = make_double2((double)next[r].x, (double)next[r].y);
        if (x0 + kTileCols < width) load_tile(x0 + kTileCols); /* in flight during the scan */
        __syncwarp();
        const uint32_t cols = width - x0 < (uint32_t)kTileCols ? width - x0 : (uint32_t)kTileCols;
        if (lane < n) {
            double *mine = t[lane];
#pragma unroll
            for (int c = 0; c < kTileCols; c += 2) {
                if ((uint32_t)c >= cols) break;
                double2 p = *(const double2 *)(mine + c);
                p.x = sum = add_rn(sum, p.x);
                p.y = sum = (uint32_t)c + 1 < cols ? add_rn(sum, p.y) : sum;
                *(double2 *)(mine + c) = p;
            }
        }
        __syncwarp();
        const uint32_t x = x0 + 2 * lane;
#pragma unroll
        for (int r = 0; r < kWarp; ++r) {
            if ((uint32_t)r >= n || x >= width) continue;
            const double2 p = *(const double2 *)&t[r][2 * lane];
            double *out = (double *)(dst0 + (size_t)r * dst_pitch) + x;
            if (x + 1 < width)
                __stcs((double2 *)out, make_double2(canonical_f64(p.x), canonical_f64(p.y)));
            else
                __stcs(out, canonical_f64(p.x));
        }
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

/* Float32 samples in, float64 out: rows of 8-byte aligned floats (the pair loads) into
 * 16-byte aligned doubles (the pair stores). */
bool float_args_ok(const void *d_src, size_t src_pitch, const void *d_dst, size_t dst_pitch,
                   uint32_t width, uint32_t rows)
{
    return shape_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, 32, 64) &&
           (uintptr_t)d_src % 8 == 0 && src_pitch % 8 == 0 && aligned(d_dst, dst_pitch);
}

cudaError_t launch_float_rows(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                              uint32_t width, uint32_t rows, cudaStream_t stream)
{
    const uint64_t warps = ((uint64_t)rows + kWarp - 1) / kWarp;
    const uint64_t blocks = (warps + kRowWarps - 1) / kRowWarps;
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
