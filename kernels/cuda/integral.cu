/* integral.cu: integral rows (inclusive prefix sum of each row) and the summed-area table over strips, on the GPU. */
#include "cuda_kernels.h"
#include "launch_common.cuh"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * Integral rows: the block scan gsmooth grew from (a CUDA lesson's Hillis-Steele inclusive
 * scan in one block: log2(TPB) rounds of read, barrier, write, barrier), made
 * work-efficient and unbounded in width. Each lane holds
 * kScanPix consecutive pixels of a 512-pixel warp chunk (one 16-byte load of u8), scans
 * them sequentially, and the warp scans the lane totals with shuffles (log2(32) steps
 * instead of log2(TPB) block-wide barrier rounds). A warp owns kChunksPerWarp chunks in
 * registers: it first sums them, the block's warps exchange those sums once through shared
 * memory (one barrier per tile), and each warp then scans its chunks carrying the sum of
 * everything to its left. Rows wider than a block tile loop over tiles with a running carry.
 * Results go out through a per-warp shared staging area so every global store is a
 * 16-byte vector of a contiguous 512-byte run.
 *
 * Integral 2d: the row pass above, then a column pass that walks down the rows adding
 * each row to the running column sums (d_carry, the table's row above the strip).
 */

using namespace gs_cuda;

namespace {

constexpr int kScanPix = 16;                                /* pixels per lane per chunk */
constexpr int kChunkPix = kScanPix * kWarp;                 /* 512 pixels per warp chunk */
constexpr int kChunksPerWarp = 4;                           /* 2048 pixels in registers */
constexpr int kWarpPix = kChunkPix * kChunksPerWarp;
constexpr int kScanWarps = 8;                               /* warps per block */
constexpr int kScanThreads = kScanWarps * kWarp;
/* Staging pad per lane, in 32-bit words: 4 makes the 16-byte writes of 8 consecutive
 * lanes fall in distinct bank groups (lane stride 80 B for u32, 144 B for u64). */
constexpr int kStagePadWords = 4;
/* Column pass: rows loaded ahead of the dependent adds, to keep loads in flight. */
constexpr int kColumnUnroll = 16;
constexpr int kColumnThreads = 256;

static_assert(kScanWarps == 8, "row groups of 1, 2, 4 or 8 warps divide the block");
static_assert(kScanPix % 16 == 0, "a lane's chunk is whole 16-byte vectors of u8 and u16");

/* ---- device helpers ---- */

/* The kScanPix samples of one lane as 32-bit words: 4 words of u8 or 8 words of u16. */
template <typename Tin> struct LaneRaw {
    static constexpr int kVecs = kScanPix * (int)sizeof(Tin) / 16;
    uint4 v[kVecs];
};

template <typename Tin>
__device__ __forceinline__ uint32_t sample_of(const LaneRaw<Tin> &raw, int i)
{
    constexpr int kPerWord = 4 / (int)sizeof(Tin);
    const uint4 q = raw.v[i / kPerWord / 4];
    const int wi = (i / kPerWord) % 4;
    const uint32_t w = wi == 0 ? q.x : wi == 1 ? q.y : wi == 2 ? q.z : q.w;
    const int sh = (i % kPerWord) * 8 * (int)sizeof(Tin);
    return (w >> sh) & (sizeof(Tin) == 1 ? 0xffu : 0xffffu);
}

/* Load a lane's pixels [x, x + kScanPix); whole vectors when inside the row, else scalar
 * loads with zeros past the end. */
template <typename Tin>
__device__ __forceinline__ void load_lane(const Tin *row, long x, uint32_t width, bool live,
                                          LaneRaw<Tin> &raw)
{
    if (live && x + kScanPix <= (long)width) {
#pragma unroll
        for (int i = 0; i < LaneRaw<Tin>::kVecs; ++i)
            raw.v[i] = __ldcs((const uint4 *)(row + x) + i);
    } else {
        uint32_t w[LaneRaw<Tin>::kVecs * 4] = {};
#pragma unroll
        for (int i = 0; i < kScanPix; ++i) {
            const uint32_t s = (live && x + i < (long)width) ? (uint32_t)row[x + i] : 0u;
            w[i * sizeof(Tin) / 4] |= s << ((i * sizeof(Tin) % 4) * 8);
        }
#pragma unroll
        for (int i = 0; i < LaneRaw<Tin>::kVecs; ++i)
            raw.v[i] = make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
    }
}

template <typename T> __device__ __forceinline__ T warp_sum(T x)
{
#pragma unroll
    for (int o = kWarp / 2; o > 0; o /= 2) x += __shfl_xor_sync(kFullMask, x, o);
    return x;
}

template <typename T> __device__ __forceinline__ T warp_inclusive_scan(T x, uint32_t lane)
{
#pragma unroll
    for (int o = 1; o < kWarp; o *= 2) {
        const T n = __shfl_up_sync(kFullMask, x, o);
        if (lane >= (uint32_t)o) x += n;
    }
    return x;
}

/* Four u32 or two u64 sums base[i..] + off as one 16-byte vector. */
template <typename Tout>
__device__ __forceinline__ uint4 vec_of(const Tout *acc, int i, Tout off)
{
    if constexpr (sizeof(Tout) == 4) {
        return make_uint4(acc[i] + off, acc[i + 1] + off, acc[i + 2] + off, acc[i + 3] + off);
    } else {
        const Tout a = acc[i] + off, b = acc[i + 1] + off;
        return make_uint4((uint32_t)a, (uint32_t)(a >> 32), (uint32_t)b, (uint32_t)(b >> 32));
    }
}

/* ---- kernels ---- */

/*
 * One block = kScanWarps warps; a row takes `wpr` warps (1, 2, 4 or 8), so a block holds
 * kScanWarps / wpr rows; a row is `tiles` tiles of wpr * kWarpPix pixels. Grid-strided over
 * row groups. Every warp reaches every barrier (dead rows only skip memory traffic).
 */
template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kScanThreads)
    integral_rows_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                         uint32_t width, uint32_t rows, uint32_t wpr, uint32_t tiles)
{
    constexpr int kStageStride = kScanPix + kStagePadWords * 4 / (int)sizeof(Tout);
    constexpr int kPerVec = 16 / (int)sizeof(Tout);
    __shared__ Tout s_tot[2][kScanWarps];                         /* by tile parity */
    __shared__ __align__(16) Tout s_stage[kScanWarps][kWarp * kStageStride];

    const uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const uint32_t rows_per_block = kScanWarps / wpr;
    const uint32_t slot = warp / wpr, wir = warp % wpr;
    Tout *stage = s_stage[warp];

    for (uint32_t base = blockIdx.x * rows_per_block; base < rows;
         base += gridDim.x * rows_per_block) {
        const uint32_t row = base + slot;
        const bool live = row < rows;
        const Tin *in = (const Tin *)(src + (size_t)(live ? row : 0) * src_pitch);
        Tout *out = (Tout *)(dst + (size_t)(live ? row : 0) * dst_pitch);
        Tout carry = 0; /* sum of the row left of this tile */

        for (uint32_t t = 0; t < tiles; ++t) {
            const long wx = ((long)t * wpr + wir) * kWarpPix; /* this warp's first pixel */
            LaneRaw<Tin> raw[kChunksPerWarp];
            Tout lane_sum = 0;
#pragma unroll
            for (int c = 0; c < kChunksPerWarp; ++c) {
                load_lane(in, wx + (long)c * kChunkPix + lane * kScanPix, width, live, raw[c]);
#pragma unroll
                for (int i = 0; i < kScanPix; ++i) lane_sum += (Tout)sample_of(raw[c], i);
            }
            const Tout warp_total = warp_sum(lane_sum);
            const uint32_t par = t & 1u;
            if (lane == 0) s_tot[par][warp] = warp_total;
            __syncthreads();
            Tout before = 0, all = 0; /* sums of this row's warps left of me, and of all */
            for (uint32_t j = 0; j < wpr; ++j) {
                const Tout s = s_tot[par][slot * wpr + j];
                all += s;
                if (j < wir) before += s;
            }
            Tout run = carry + before;

#pragma unroll
            for (int c = 0; c < kChunksPerWarp; ++c) {
                Tout acc[kScanPix];
                Tout a = 0;
#pragma unroll
                for (int i = 0; i < kScanPix; ++i) {
                    a += (Tout)sample_of(raw[c], i);
                    acc[i] = a;
                }
                const Tout incl = warp_inclusive_scan(a, lane);
                const Tout off = run + (incl - a);
                run += __shfl_sync(kFullMask, incl, kWarp - 1);
                /* stage: lane's kScanPix values at lane * kStageStride */
#pragma unroll
                for (int i = 0; i < kScanPix; i += kPerVec)
                    *(uint4 *)(stage + lane * kStageStride + i) = vec_of(acc, i, off);
                __syncwarp();
                const long cx = wx + (long)c * kChunkPix; /* chunk's first pixel */
                if (live && cx + kChunkPix <= (long)width) {
                    /* 16-byte piece p of the chunk holds values [p*kPerVec, +kPerVec) */
#pragma unroll
                    for (int p = lane; p < kChunkPix / kPerVec; p += kWarp) {
                        const int first = p * kPerVec;
                        const int src_lane = first / kScanPix, src_i = first % kScanPix;
                        __stcs((uint4 *)(out + cx + first),
                               *(const uint4 *)(stage + src_lane * kStageStride + src_i));
                    }
                } else if (live) {
                    for (int i = lane; i < kChunkPix; i += kWarp) {
                        if (cx + i < (long)width)
                            out[cx + i] = stage[(i / kScanPix) * kStageStride + i % kScanPix];
                    }
                }
                __syncwarp(); /* staging reads done before the next chunk writes it */
            }
            carry += all;
        }
    }
}

/*
 * Column pass of the summed-area table: each thread owns one column, adds it down the rows
 * of the strip starting from d_carry[x], and leaves the last row's value in d_carry[x].
 * Loads of kColumnUnroll rows go out before their dependent adds. Threads past the row
 * end skip the work but do not leave early (no thread exits before its warp's others).
 */
template <typename Tout>
__global__ void __launch_bounds__(kColumnThreads)
    column_scan_kernel(char *dst, size_t dst_pitch, uint32_t width, uint32_t rows,
                       Tout *carry)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < width) {
        Tout acc = carry[x];
        uint32_t y = 0;
        for (; y + kColumnUnroll <= rows; y += kColumnUnroll) {
            Tout v[kColumnUnroll];
#pragma unroll
            for (int i = 0; i < kColumnUnroll; ++i)
                v[i] = ((const Tout *)(dst + (size_t)(y + i) * dst_pitch))[x];
#pragma unroll
            for (int i = 0; i < kColumnUnroll; ++i) {
                acc += v[i];
                ((Tout *)(dst + (size_t)(y + i) * dst_pitch))[x] = acc;
            }
        }
        for (; y < rows; ++y) {
            Tout *p = (Tout *)(dst + (size_t)y * dst_pitch) + x;
            acc += *p;
            *p = acc;
        }
        carry[x] = acc;
    }
}

/* ---- host sizing helpers ---- */

/* Warps per row: the fewest of 1, 2, 4, 8 that cover the row, 8 for wider rows. */
uint32_t warps_per_row(uint32_t width)
{
    uint32_t w = 1;
    while (w < (uint32_t)kScanWarps && (uint64_t)w * kWarpPix < width) w *= 2;
    return w;
}

template <typename Tin, typename Tout>
cudaError_t launch_rows(const void *src, size_t sp, void *dst, size_t dp, uint32_t width,
                        uint32_t rows, cudaStream_t stream)
{
    const uint32_t wpr = warps_per_row(width);
    const uint32_t tiles = (uint32_t)(((uint64_t)width + (uint64_t)wpr * kWarpPix - 1) /
                                      ((uint64_t)wpr * kWarpPix));
    const uint32_t rows_per_block = kScanWarps / wpr;
    const uint64_t blocks = ((uint64_t)rows + rows_per_block - 1) / rows_per_block;
    const unsigned grid = blocks > (uint64_t)INT_MAX ? (unsigned)INT_MAX : (unsigned)blocks;
    integral_rows_kernel<Tin, Tout><<<grid, kScanThreads, 0, stream>>>(
        (const char *)src, sp, (char *)dst, dp, width, rows, wpr, tiles);
    return cudaGetLastError();
}

/* The generic checks, 32- or 64-bit sums, and rows that allow 16-byte vectors. */
bool integral_args_ok(const void *d_src, size_t src_pitch, const void *d_dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows, uint32_t in_bits, uint32_t out_bits)
{
    return (out_bits == 32 || out_bits == 64) &&
           rows_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits) &&
           aligned(d_src, src_pitch) && aligned(d_dst, dst_pitch);
}

cudaError_t integral_rows(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                          uint32_t width, uint32_t rows, uint32_t in_bits, uint32_t out_bits,
                          cudaStream_t stream)
{
    if (in_bits == 8 && out_bits == 32)
        return launch_rows<uint8_t, uint32_t>(d_src, src_pitch, d_dst, dst_pitch, width, rows,
                                              stream);
    if (in_bits == 8)
        return launch_rows<uint8_t, unsigned long long>(d_src, src_pitch, d_dst, dst_pitch,
                                                        width, rows, stream);
    if (out_bits == 32)
        return launch_rows<uint16_t, uint32_t>(d_src, src_pitch, d_dst, dst_pitch, width,
                                               rows, stream);
    return launch_rows<uint16_t, unsigned long long>(d_src, src_pitch, d_dst, dst_pitch,
                                                     width, rows, stream);
}

} /* namespace */

/* ---- launchers ---- */

extern "C" cudaError_t gs_cuda_integral_rows(const void *d_src, size_t src_pitch, void *d_dst,
                                             size_t dst_pitch, uint32_t width, uint32_t rows,
                                             uint32_t in_bits, uint32_t out_bits,
                                             cudaStream_t stream)
{
    if (!integral_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits))
        return cudaErrorInvalidValue;
    return integral_rows(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits,
                         stream);
}

extern "C" cudaError_t gs_cuda_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                           size_t dst_pitch, uint32_t width, uint32_t rows,
                                           uint32_t in_bits, uint32_t out_bits, void *d_carry,
                                           cudaStream_t stream)
{
    if (!integral_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits) ||
        d_carry == NULL || (uintptr_t)d_carry % (out_bits / 8) != 0)
        return cudaErrorInvalidValue;
    cudaError_t err = integral_rows(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits,
                                    out_bits, stream);
    if (err != cudaSuccess) return err;
    const unsigned grid = (width + kColumnThreads - 1) / kColumnThreads;
    if (out_bits == 32)
        column_scan_kernel<uint32_t><<<grid, kColumnThreads, 0, stream>>>(
            (char *)d_dst, dst_pitch, width, rows, (uint32_t *)d_carry);
    else
        column_scan_kernel<unsigned long long><<<grid, kColumnThreads, 0, stream>>>(
            (char *)d_dst, dst_pitch, width, rows, (unsigned long long *)d_carry);
    return cudaGetLastError();
}
