/* integral.cu: integral rows (inclusive prefix sum of each row) and the summed-area table over strips, on the GPU. */
#include "cuda_kernels.h"
#include "launch_common.cuh"
#include "mbarrier.cuh"

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
 * Integral 2d, rows up to kBandSpan pixels: the strip is cut into bands of a few dozen rows,
 * and three kernels move about 10 bytes a pixel (u8 -> u64) instead of 25:
 *  1. band_sums_kernel reads the input once and writes each band's column totals into the
 *     band's first output row;
 *  2. band_prefix_kernel walks each column down the bands, replacing those totals by the
 *     column's sum over everything above the band (starting from d_carry, the table's row
 *     above the strip, differenced back into column sums);
 *  3. band_table_kernel gives each band to one block: the block's threads own 16 columns
 *     each for the whole band, start from the table's row above the band (the row prefix of
 *     step 2's sums) and add each row's prefix sum, kept in the block's shared memory; the
 *     block of the last band leaves its last row in d_carry.
 * Steps 2 and 3 are launched so that they may start while the step before ends
 * (launch_after_previous), and wait for its results first (wait_for_previous_grid).
 * Wider rows take the row pass above, then a column pass that walks down the rows adding
 * each row to the running column sums.
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
/* Words of a lane's slot in a warp's staging area: kScanPix values and the pad. */
template <typename Tout> __host__ __device__ constexpr int stage_stride()
{
    return kScanPix + kStagePadWords * 4 / (int)sizeof(Tout);
}

/* Column pass: rows loaded ahead of the dependent adds, to keep loads in flight. */
constexpr int kColumnUnroll = 16;
constexpr int kColumnThreads = 256;

/* Banded summed-area table: a block of up to kBandThreads threads owns a whole row, one
 * warp chunk (kChunkPix pixels) a warp, and a band of kBandRowsMin..kBandRowsMax rows. The
 * band height aims at kBandWaves blocks for each SM (one fits at a time), so that no last
 * wave runs a few blocks alone; strips taller than kBandRowsMax x that give more bands. */
constexpr int kBandThreads = 1024;
constexpr uint32_t kBandSpan = (uint32_t)kBandThreads / kWarp * kChunkPix; /* 16384 */
constexpr uint32_t kBandRowsMin = 8, kBandRowsMax = 64, kBandWaves = 2;
constexpr int kBandSumThreads = 256;
/* Four blocks of the band sums an SM (at most 64 registers a thread): a 16384-row strip's
 * blocks then fill two whole waves on an H200 (ncu, 16384^2 u8, before the ring below: 124
 * us; with 79 registers, three blocks an SM and 2.64 waves, 142 us; with the ring, six
 * blocks of 24 KiB rings took 136 us against four of 48 KiB, 84 us). */
constexpr int kBandSumBlocksPerSm = 4;
/* Shared memory of a band-sums block for the rows it has in flight (cp.async): 48 KiB, 12
 * rows of u8 or 6 of u16, so four blocks an SM keep 192 KiB of input on its way (ncu,
 * 16384^2 u8: 84 us; 32 KiB 90-92 us; two rows' loads unrolled into registers, before the
 * ring, 124-128 us). */
constexpr uint32_t kSumsRingBytes = 48 * 1024;
/* Band prefix: a block takes kPrefixCols columns (a warp's loads are one run) and splits
 * the bands into kPrefixGroups runs, a warp each, whose totals it adds up in shared memory
 * (ncu, 261 bands: 20 us; a thread walking a column's bands alone, 23 us). */
constexpr int kPrefixCols = kWarp;
constexpr int kPrefixGroups = 16;
constexpr int kPrefixUnroll = 8; /* loads in flight a thread */

static_assert(kScanWarps == 8, "row groups of 1, 2, 4 or 8 warps divide the block");
static_assert((uint64_t)kBandSpan * 65535u <= UINT32_MAX, "a band row's prefix fits 32 bits");
static_assert((uint64_t)kBandRowsMax * 65535u <= UINT32_MAX, "a band's column total fits 32 bits");
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

/* Lane j: the sum of s_tot[0..j] (entries at or past `count` count as 0). */
template <typename T>
__device__ __forceinline__ T incl_of_warps(const T *s_tot, uint32_t count, uint32_t lane)
{
    return warp_inclusive_scan(lane < count ? s_tot[lane] : (T)0, lane);
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

/*
 * Copy one warp chunk of results, the pixels [cx, cx + kChunkPix) of a row, from the warp's
 * staging area (lane l's kScanPix values at stage + l * stage_stride) to the row: every
 * global store is a 16-byte vector of a contiguous 512-byte run; past the row end only the
 * pixels inside it are written. The caller syncs the warp before (the values are in) and
 * after (the staging may be rewritten).
 */
template <typename Tout>
__device__ __forceinline__ void copy_chunk_out(Tout *out, long cx, uint32_t width, bool live,
                                               const Tout *stage, uint32_t lane)
{
    constexpr int kStride = stage_stride<Tout>();
    constexpr int kPerVec = 16 / (int)sizeof(Tout);
    if (live && cx + kChunkPix <= (long)width) {
        /* 16-byte piece p of the chunk holds values [p*kPerVec, +kPerVec) */
#pragma unroll
        for (int p = lane; p < kChunkPix / kPerVec; p += kWarp) {
            const int first = p * kPerVec;
            const int src_lane = first / kScanPix, src_i = first % kScanPix;
            __stcs((uint4 *)(out + cx + first),
                   *(const uint4 *)(stage + src_lane * kStride + src_i));
        }
    } else if (live) {
        for (int i = lane; i < kChunkPix; i += kWarp) {
            if (cx + i < (long)width) out[cx + i] = stage[(i / kScanPix) * kStride + i % kScanPix];
        }
    }
}

/* Store one warp chunk of results: lane l's kScanPix values acc[i] + off go to pixel
 * cx + l * kScanPix + i, through the warp's staging area (copy_chunk_out). */
template <typename Tout>
__device__ __forceinline__ void store_chunk(Tout *out, long cx, uint32_t width, bool live,
                                            const Tout (&acc)[kScanPix], Tout off, Tout *stage,
                                            uint32_t lane)
{
    constexpr int kPerVec = 16 / (int)sizeof(Tout);
#pragma unroll
    for (int i = 0; i < kScanPix; i += kPerVec)
        *(uint4 *)(stage + lane * stage_stride<Tout>() + i) = vec_of(acc, i, off);
    __syncwarp();
    copy_chunk_out(out, cx, width, live, stage, lane);
    __syncwarp(); /* staging reads done before the next chunk writes it */
}

/* Wait until the grid this one was launched after (programmatic dependent launch,
 * launch_after_previous) has finished and its writes are visible; at once when launched
 * the ordinary way. */
__device__ __forceinline__ void wait_for_previous_grid()
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

/* Copy 16 bytes from global to shared memory without registers (cp.async, L2 only). */
__device__ __forceinline__ void copy16_async(uint32_t smem_dst, const void *gsrc)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_dst), "l"(gsrc) : "memory");
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* Wait until at most kPending of this thread's latest copy groups are still in flight. */
template <int kPending> __device__ __forceinline__ void copy_async_wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
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
    __shared__ Tout s_tot[2][kScanWarps];                         /* by tile parity */
    __shared__ __align__(16) Tout s_stage[kScanWarps][kWarp * stage_stride<Tout>()];

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
                store_chunk(out, wx + (long)c * kChunkPix, width, live, acc, off, stage, lane);
            }
            carry += all;
        }
    }
}

/* What walk_column leaves in each value it walks over. */
enum class ColumnWalk {
    kSum,       /* nothing: the values stay as they are */
    kInclusive, /* the sum through the value */
    kExclusive  /* the sum before the value */
};

/*
 * Walk one column x of `count` Tout values `step` bytes apart from `base`, adding them up
 * from `start`, and scan them in place as kWalk says. Loads of kUnroll values go out before
 * their dependent adds. Returns the column's total including `start`.
 */
template <int kUnroll, ColumnWalk kWalk, typename Tout>
__device__ __forceinline__ Tout walk_column(char *base, size_t step, uint32_t count, uint32_t x,
                                            Tout start)
{
    Tout run = start;
    uint32_t i = 0;
    for (; i + kUnroll <= count; i += kUnroll) {
        Tout v[kUnroll];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) v[j] = ((const Tout *)(base + (size_t)(i + j) * step))[x];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) {
            const Tout before = run;
            run += v[j];
            if (kWalk != ColumnWalk::kSum)
                ((Tout *)(base + (size_t)(i + j) * step))[x] = kWalk == ColumnWalk::kInclusive ? run : before;
        }
    }
    for (; i < count; ++i) {
        Tout *p = (Tout *)(base + (size_t)i * step) + x;
        const Tout before = run;
        run += *p;
        if (kWalk != ColumnWalk::kSum) *p = kWalk == ColumnWalk::kInclusive ? run : before;
    }
    return run;
}

/*
 * Column pass of the summed-area table: each thread owns one column, adds it down the rows
 * of the strip starting from d_carry[x], and leaves the last row's value in d_carry[x].
 * Threads past the row end skip the work but do not leave early (no thread exits before
 * its warp's others).
 */
template <typename Tout>
__global__ void __launch_bounds__(kColumnThreads)
    column_scan_kernel(char *dst, size_t dst_pitch, uint32_t width, uint32_t rows,
                       Tout *carry)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < width) carry[x] = walk_column<kColumnUnroll, ColumnWalk::kInclusive>(dst, dst_pitch, rows, x, carry[x]);
}

/*
 * Banded table, step 1: the column totals of each band of `band` rows, written as Tout into
 * the band's first output row. Thread = kScanPix columns (one lane load) of one band; the
 * band is blockIdx.x (grid.y would stop at 65535 bands, a strip of 4 M rows), the column
 * block blockIdx.y (at most kBandSpan / kScanPix / kBandSumThreads = 4). The rows come
 * through a ring of shared memory by cp.async, kRing - 1 of them in flight, each thread's
 * bytes in its own slots (no barrier); a thread reaching past the row end loads directly.
 * Consecutive blocks take the same columns of consecutive bands: a band's column blocks
 * side by side took twice as long (ncu, 16384^2 u8: 173 us against 84).
 */
template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kBandSumThreads, kBandSumBlocksPerSm)
    band_sums_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                     uint32_t width, uint32_t rows, uint32_t band)
{
    constexpr int kVecs = LaneRaw<Tin>::kVecs;
    constexpr uint32_t kStageBytes = kBandSumThreads * kVecs * 16u; /* one row of the block */
    constexpr int kRing = (int)(kSumsRingBytes / kStageBytes);      /* rows in the ring */
    static_assert(kRing >= 2, "the ring holds a row in flight beside the one being read");
    __shared__ __align__(16) unsigned char s_ring[kRing * kStageBytes];
    const long x = ((long)blockIdx.y * blockDim.x + threadIdx.x) * kScanPix;
    const uint32_t y0 = blockIdx.x * band;
    const uint32_t y1 = y0 + band < rows ? y0 + band : rows;
    if (x >= (long)width) return; /* no barrier or shuffle below */
    uint32_t sum[kScanPix] = {};
    const bool whole = x + kScanPix <= (long)width;
    if (whole) {
        const uint32_t off = threadIdx.x * kVecs * 16u, mine = smem_addr(s_ring) + off;
        const uint32_t n = y1 - y0;
        auto issue = [&](uint32_t i) {
            const char *p = src + (size_t)(y0 + i) * src_pitch + x * (long)sizeof(Tin);
#pragma unroll
            for (int v = 0; v < kVecs; ++v)
                copy16_async(mine + (i % kRing) * kStageBytes + v * 16u, p + v * 16);
        };
#pragma unroll
        for (int i = 0; i < kRing - 1; ++i) {
            if ((uint32_t)i < n) issue(i);
            copy_async_commit();
        }
        for (uint32_t i = 0; i < n; ++i) {
            if (i + kRing - 1 < n) issue(i + kRing - 1);
            copy_async_commit();
            copy_async_wait<kRing - 1>(); /* row i's group is complete */
            LaneRaw<Tin> raw;
#pragma unroll
            for (int v = 0; v < kVecs; ++v)
                raw.v[v] = *(const uint4 *)(s_ring + off + (i % kRing) * kStageBytes + v * 16u);
#pragma unroll
            for (int k = 0; k < kScanPix; ++k) sum[k] += sample_of(raw, k);
        }
    } else {
        for (uint32_t y = y0; y < y1; ++y) {
            LaneRaw<Tin> raw;
            load_lane((const Tin *)(src + (size_t)y * src_pitch), x, width, true, raw);
#pragma unroll
            for (int i = 0; i < kScanPix; ++i) sum[i] += sample_of(raw, i);
        }
    }
    Tout *out = (Tout *)(dst + (size_t)y0 * dst_pitch) + x;
    Tout wide[kScanPix];
#pragma unroll
    for (int i = 0; i < kScanPix; ++i) wide[i] = (Tout)sum[i];
    if (whole) {
        constexpr int kPerVec = 16 / (int)sizeof(Tout);
#pragma unroll
        for (int i = 0; i < kScanPix; i += kPerVec) ((uint4 *)out)[i / kPerVec] = vec_of(wide, i, (Tout)0);
    } else {
#pragma unroll
        for (int i = 0; i < kScanPix; ++i)
            if (x + i < (long)width) out[i] = wide[i];
    }
}

/*
 * Banded table, step 2: down each column, the band totals in the bands' first rows become
 * the column's sum over all rows above the band, the rows above the strip included: those
 * come from d_carry (a table row) as carry[x] - carry[x - 1], modulo 2^bits like every sum.
 * A block takes kPrefixCols columns; warp g the g-th of kPrefixGroups runs of bands. Each
 * warp sums its run, the block adds the runs' totals in shared memory, and each warp then
 * scans its run from the sum of the runs above it (those loads hit L2).
 */
template <typename Tout>
__global__ void __launch_bounds__(kPrefixCols * kPrefixGroups)
    band_prefix_kernel(char *dst, size_t dst_pitch, uint32_t width, uint32_t bands,
                       uint32_t band, const Tout *carry)
{
    __shared__ Tout s_run[kPrefixGroups][kPrefixCols];
    const uint32_t c = threadIdx.x % kPrefixCols, g = threadIdx.x / kPrefixCols;
    wait_for_previous_grid();
    const uint32_t x = blockIdx.x * kPrefixCols + c;
    const uint32_t per = (bands + kPrefixGroups - 1) / kPrefixGroups;
    const uint32_t b0 = g * per < bands ? g * per : bands;
    const uint32_t b1 = b0 + per < bands ? b0 + per : bands;
    const size_t step = (size_t)band * dst_pitch;
    char *base = dst + (size_t)b0 * step;
    s_run[g][c] = x < width ? walk_column<kPrefixUnroll, ColumnWalk::kSum>(base, step, b1 - b0, x, (Tout)0)
                            : (Tout)0;
    __syncthreads();
    if (x >= width) return; /* no barrier below */
    Tout before = carry[x] - (x > 0 ? carry[x - 1] : (Tout)0);
    for (uint32_t j = 0; j < g; ++j) before += s_run[j][c];
    walk_column<kPrefixUnroll, ColumnWalk::kExclusive>(base, step, b1 - b0, x, before);
}

/*
 * The sum of everything left of this lane along a row held by a block (warp w holds chunk
 * w, a lane kScanPix pixels in row order), once every warp's total is in s_tot (lane 31's
 * inclusive scan, published before a barrier): `incl` is the lane's inclusive scan within
 * its warp, `lane_total` its own total.
 */
template <typename T>
__device__ __forceinline__ T left_of_lane(const T *s_tot, uint32_t warps, uint32_t lane,
                                          uint32_t warp, T incl, T lane_total)
{
    /* the warps' totals, scanned by every warp: lane j holds warps 0..j */
    const T wt = incl_of_warps(s_tot, warps, lane);
    const T left_warps = warp > 0 ? __shfl_sync(kFullMask, wt, warp - 1) : (T)0;
    return left_warps + (incl - lane_total);
}

/* left_of_lane given only the lane's own total: scans and publishes the warps' totals at one
 * barrier. s_tot is read by pass parity, so the next call may write the other half without
 * a second barrier. */
template <typename T>
__device__ __forceinline__ T block_lane_offset(T lane_total, T *s_tot, uint32_t warps,
                                               uint32_t lane, uint32_t warp)
{
    const T incl = warp_inclusive_scan(lane_total, lane);
    if (lane == kWarp - 1) s_tot[warp] = incl;
    __syncthreads();
    return left_of_lane(s_tot, warps, lane, warp, incl, lane_total);
}

/* The band table kernel's static shared memory (banded_table_fits counts it): the warps'
 * totals of a band's first row by band parity, and of each row by row parity. */
template <typename Tout> struct BandTableShared {
    Tout band_tot[2][kBandThreads / kWarp];
    uint32_t row_tot[2][kBandThreads / kWarp];
};

/*
 * Banded table, step 3: one block a band (grid-strided), up to kBandThreads threads, warp
 * w owning pixels [w * kChunkPix, +kChunkPix) of every row, lane l kScanPix of them. The
 * running table row lives in the warps' staging areas (lane l's values at stage + l *
 * stage_stride), not in registers, which the kernel had spilled: it starts as the row
 * above the band (the row prefix of the column sums step 2 left in the band's first row),
 * each row adds its own prefix sum there, and the warp copies its chunk out
 * (copy_chunk_out). A row's lane totals are scanned across the block through s_row_tot, by
 * row parity: each warp publishes row y + 1's totals before it stores row y, and the
 * block's one barrier a row comes after the stores, so they overlap the wait (a barrier
 * between a row's totals and its scan cost 5% on an H200; an mbarrier in its place was
 * 0.5% faster still, but compute-sanitizer's racecheck cannot see its ordering).
 * The next row's input is loaded one row ahead.
 */
template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kBandThreads)
    band_table_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows, uint32_t band, Tout *carry)
{
    constexpr int kStride = stage_stride<Tout>();
    constexpr int kPerVec = 16 / (int)sizeof(Tout);
    __shared__ BandTableShared<Tout> sh;
    Tout (&s_tot)[2][kBandThreads / kWarp] = sh.band_tot;
    uint32_t (&s_row_tot)[2][kBandThreads / kWarp] = sh.row_tot;
    extern __shared__ __align__(16) unsigned char s_dyn[];   /* staging, a slot per warp */
    const uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const uint32_t warps = blockDim.x / kWarp;
    Tout *stage = (Tout *)s_dyn + (size_t)warp * kWarp * kStride;
    Tout *slot = stage + lane * kStride; /* this lane's kScanPix values of the table row */
    const long x = (long)warp * kChunkPix + (long)lane * kScanPix;
    const uint32_t bands = (rows + band - 1) / band;
    uint32_t parity = 0;           /* s_tot's half for the next band start */
    uint32_t q = 0;                /* s_row_tot's half for the next row */
    wait_for_previous_grid(); /* the band prefix's results */

    /* A row's lane total and the warp's inclusive scan of them; lane 31 publishes the warp's
     * total in s_row_tot[q]. */
    auto publish_row = [&](const LaneRaw<Tin> &raw, uint32_t &lane_total, uint32_t &incl) {
        lane_total = 0;
#pragma unroll
        for (int i = 0; i < kScanPix; ++i) lane_total += sample_of(raw, i);
        incl = warp_inclusive_scan(lane_total, lane);
        if (lane == kWarp - 1) s_row_tot[q][warp] = incl;
    };

    for (uint32_t b = blockIdx.x; b < bands; b += gridDim.x) {
        const uint32_t y0 = b * band, y1 = y0 + band < rows ? y0 + band : rows;
        {
            /* the table's row above the band: the row prefix of the column sums above it */
            Tout acc[kScanPix];
            const Tout *above = (const Tout *)(dst + (size_t)y0 * dst_pitch);
#pragma unroll
            for (int i = 0; i < kScanPix; ++i)
                acc[i] = x + i < (long)width ? above[x + i] : (Tout)0;
#pragma unroll
            for (int i = 1; i < kScanPix; ++i) acc[i] += acc[i - 1];
            const Tout off = block_lane_offset(acc[kScanPix - 1], s_tot[parity], warps, lane, warp);
            parity ^= 1u;
#pragma unroll
            for (int i = 0; i < kScanPix; i += kPerVec) *(uint4 *)(slot + i) = vec_of(acc, i, off);
        }
        LaneRaw<Tin> cur, next{};
        load_lane((const Tin *)(src + (size_t)y0 * src_pitch), x, width, true, cur);
        uint32_t lane_total, incl;
        publish_row(cur, lane_total, incl);
        for (uint32_t y = y0; y < y1; ++y) {
            __syncthreads(); /* every warp has published this row's totals */
            uint32_t run = left_of_lane(s_row_tot[q], warps, lane, warp, incl, lane_total);
            q ^= 1u; /* the next row's half */
            /* this row's prefix into the table row, a 16-byte vector at a time */
#pragma unroll
            for (int i = 0; i < kScanPix; i += kPerVec) {
                uint4 v = *(const uint4 *)(slot + i);
                if constexpr (sizeof(Tout) == 4) {
                    v.x += (run += sample_of(cur, i));
                    v.y += (run += sample_of(cur, i + 1));
                    v.z += (run += sample_of(cur, i + 2));
                    v.w += (run += sample_of(cur, i + 3));
                } else {
                    const Tout a = ((Tout)v.y << 32 | v.x) + (run += sample_of(cur, i));
                    const Tout c = ((Tout)v.w << 32 | v.z) + (run += sample_of(cur, i + 1));
                    v = make_uint4((uint32_t)a, (uint32_t)(a >> 32), (uint32_t)c, (uint32_t)(c >> 32));
                }
                *(uint4 *)(slot + i) = v;
            }
            if (y + 1 < y1) {
                load_lane((const Tin *)(src + (size_t)(y + 1) * src_pitch), x, width, true, next);
                publish_row(next, lane_total, incl);
            }
            __syncwarp(); /* the chunk's values are in */
            copy_chunk_out((Tout *)(dst + (size_t)y * dst_pitch), (long)warp * kChunkPix, width,
                           true, stage, lane);
            __syncwarp(); /* the copy has read the row before the next one adds to it */
            cur = next;
        }
        if (y1 == rows) {
#pragma unroll
            for (int i = 0; i < kScanPix; ++i)
                if (x + i < (long)width) carry[x + i] = slot[i];
        }
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

/* Calls f(Tin{}, Tout{}) for the four (in_bits, out_bits) pairs integral_args_ok allows. */
template <class F> cudaError_t with_sample_types(uint32_t in_bits, uint32_t out_bits, F f)
{
    if (in_bits == 8 && out_bits == 32) return f(uint8_t{}, uint32_t{});
    if (in_bits == 8) return f(uint8_t{}, 0ull);
    if (out_bits == 32) return f(uint16_t{}, uint32_t{});
    return f(uint16_t{}, 0ull);
}

cudaError_t integral_rows(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                          uint32_t width, uint32_t rows, uint32_t in_bits, uint32_t out_bits,
                          cudaStream_t stream)
{
    return with_sample_types(in_bits, out_bits, [&](auto tin, auto tout) {
        return launch_rows<decltype(tin), decltype(tout)>(d_src, src_pitch, d_dst, dst_pitch,
                                                          width, rows, stream);
    });
}

/* Threads of the band table's block: a warp for each kChunkPix pixels of the row. */
uint32_t band_table_threads(uint32_t width) { return (width + kChunkPix - 1) / kChunkPix * kWarp; }

/* Dynamic shared memory of the band table's block for rows of `width` pixels: the per-warp
 * staging, 147 KiB for 16384 pixels of u64, more than some GPUs give a block (about 99 KiB
 * on compute capability 8.6, 8.9 and 12.0). */
size_t band_table_smem(uint32_t width, size_t out_bytes)
{
    const size_t threads = band_table_threads(width);
    const size_t stride = out_bytes == 4 ? stage_stride<uint32_t>() : stage_stride<unsigned long long>();
    return threads * stride * out_bytes;
}

/* Whether the banded table runs here: rows of at most kBandSpan pixels, and the block's
 * staging within what this device allows a block (opted in). Else the row and column
 * passes, which need no dynamic shared memory. */
bool banded_table_fits(uint32_t width, uint32_t out_bits)
{
    if (width > kBandSpan) return false;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return false;
    const size_t static_smem = out_bits == 32 ? sizeof(BandTableShared<uint32_t>)
                                              : sizeof(BandTableShared<unsigned long long>);
    return band_table_smem(width, out_bits / 8) + static_smem <= (size_t)optin;
}

/* Launch `kernel` so that it may start while the stream's previous kernel finishes; it
 * waits for that kernel's results itself (wait_for_previous_grid). */
template <typename... KArgs, typename... Args>
cudaError_t launch_after_previous(void (*kernel)(KArgs...), unsigned grid, unsigned block, size_t smem,
                                  cudaStream_t stream, Args... args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, (KArgs)args...);
}

/* The three kernels of the banded table (rows of at most kBandSpan pixels). */
template <typename Tin, typename Tout>
cudaError_t banded_table(const void *src, size_t sp, void *dst, size_t dp, uint32_t width,
                         uint32_t rows, void *carry, cudaStream_t stream)
{
    int dev = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return err;
    const uint32_t wanted = kBandWaves * (uint32_t)(sms > 0 ? sms : 1);
    uint32_t band = (uint32_t)(((uint64_t)rows + wanted - 1) / wanted);
    band = band < kBandRowsMin ? kBandRowsMin : band > kBandRowsMax ? kBandRowsMax : band;
    const uint32_t bands = (rows + band - 1) / band;
    const uint32_t lanes = (width + kScanPix - 1) / kScanPix;
    band_sums_kernel<Tin, Tout>
        <<<dim3(bands, (lanes + kBandSumThreads - 1) / kBandSumThreads), kBandSumThreads, 0,
           stream>>>((const char *)src, sp, (char *)dst, dp, width, rows, band);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    if ((err = launch_after_previous(band_prefix_kernel<Tout>, (width + kPrefixCols - 1) / kPrefixCols,
                                     kPrefixCols * kPrefixGroups, 0, stream, (char *)dst, dp,
                                     width, bands, band, (const Tout *)carry)) != cudaSuccess)
        return err;
    const uint32_t threads = band_table_threads(width);
    const size_t smem = band_table_smem(width, sizeof(Tout));
    auto table = band_table_kernel<Tin, Tout>;
    if ((err = cudaFuncSetAttribute(table, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)smem)) != cudaSuccess)
        return err;
    return launch_after_previous(table, bands, threads, smem, stream, (const char *)src, sp,
                                 (char *)dst, dp, width, rows, band, (Tout *)carry);
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
    if (banded_table_fits(width, out_bits))
        return with_sample_types(in_bits, out_bits, [&](auto tin, auto tout) {
            return banded_table<decltype(tin), decltype(tout)>(d_src, src_pitch, d_dst, dst_pitch,
                                                               width, rows, d_carry, stream);
        });
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
