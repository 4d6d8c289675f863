/* integral.cu: integral rows and the summed-area table over strips, on the GPU. */
#include "cuda_kernels.h"
#include "launch_common.cuh"
#include "round_up.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * Integral rows: a block scan (a CUDA lesson's Hillis-Steele inclusive scan in one block:
 * log2(TPB) rounds of read, barrier, write, barrier) made work-efficient and unbounded in
 * width. Each lane holds
 * kScanPix consecutive pixels of a 512-pixel warp chunk (one 16-byte load of u8), scans
 * them sequentially, and the warp scans the lane totals with shuffles (log2(32) steps
 * instead of log2(TPB) block-wide barrier rounds). A warp owns kChunksPerWarp chunks in
 * registers: it first sums them, the block's warps exchange those sums once through shared
 * memory (one barrier per tile), and each warp then scans its chunks carrying the sum of
 * everything to its left. Rows wider than a block tile loop over tiles with a running carry.
 * Results go out through a per-warp shared staging area so every global store is a
 * 16-byte vector of a contiguous 512-byte run.
 *
 * Integral 2d, rows up to kTiledSpan pixels: one kernel reads each pixel once and writes the
 * table once, in tiles of a warp chunk's columns and 64 rows (32 of u16) that find what lies
 * above and left of them by decoupled look-back (tile_table_kernel below). Wider rows take
 * the row pass above, then a column pass that walks down the rows adding each row to the
 * running column sums.
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

/* The one-pass table takes rows of at most kTiledSpan pixels (its tiles' published words
 * hold a row's sum in 32 bits); wider rows take the row pass and the column pass. */
constexpr uint32_t kTiledSpan = 32 * kChunkPix; /* 16384 */

static_assert(kScanWarps == 8, "row groups of 1, 2, 4 or 8 warps divide the block");
static_assert((uint64_t)kTiledSpan * 65535u <= UINT32_MAX, "a row's sum in the tiled table fits 32 bits");
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
template <typename Tin, bool kKeepInL2 = false>
__device__ __forceinline__ void load_lane(const Tin *row, long x, uint32_t width, bool live,
                                          LaneRaw<Tin> &raw)
{
    if (live && x + kScanPix <= (long)width) {
#pragma unroll
        for (int i = 0; i < LaneRaw<Tin>::kVecs; ++i)
            raw.v[i] = kKeepInL2 ? __ldcg((const uint4 *)(row + x) + i) : __ldcs((const uint4 *)(row + x) + i);
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

/*
 * Walk one column x of `count` Tout values `step` bytes apart from `base`, adding them up
 * from `start` and leaving each value's running sum in its place. Loads of kUnroll values
 * go out before their dependent adds. Returns the column's total including `start`.
 */
template <int kUnroll, typename Tout>
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
        for (int j = 0; j < kUnroll; ++j) ((Tout *)(base + (size_t)(i + j) * step))[x] = run += v[j];
    }
    for (; i < count; ++i) {
        Tout *p = (Tout *)(base + (size_t)i * step) + x;
        *p = run += *p;
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
    if (x < width) carry[x] = walk_column<kColumnUnroll>(dst, dst_pitch, rows, x, carry[x]);
}

/*
 * Summed-area table in one pass (rows up to kTiledSpan, launches of up to kTileLaunchBands
 * bands): tiles of kTileCols columns (one warp chunk) and tile_rows<Tin>() rows, taken in
 * row-major ticket order (an atomic counter, so a tile waits only for tiles that already
 * run or ran). A block reads its tile's rows (warp w: tile_rows_per_warp of them, lane l:
 * kScanPix columns of each), publishes the tile's row totals and column totals, and looks
 * back as a single-pass scan does (decoupled look-back): along its band it adds every left
 * tile's row totals (a band's tiles start together, so none would be inclusive yet); up
 * its stripe it walks the tiles above until one is inclusive, per column and, in warp 0,
 * for the corner (everything above and to the left); the three walks' first reads go out
 * together. Then each warp reads its rows again (from L2, where the first read asked them
 * kept) and adds their prefix sums to a running table row in its staging area, stored a
 * row at a time. DRAM sees each pixel read once and the table written once.
 *
 * The block works on two tiles at once: each turn it draws a ticket, reads that tile and
 * publishes its totals, writes the table of the tile it holds from the turn before, and only
 * then looks back for the new tile. The tiles a look-back waits on have had a whole turn to
 * publish, where looking back at once waits on left neighbours drawn a moment earlier. No wait comes before a tile's
 * totals are published, and each wait is on smaller tickets, so the grid cannot deadlock.
 *
 * Every published value is a 64-bit word, its launch's tag above a 32-bit value, written
 * and read whole: no fence or flag orders anything, and nothing is cleared between
 * launches (the tag changes). Sums are strip-local; d_carry (the table row above the strip)
 * is added to each column, and the launcher copies the strip's last row into it after.
 */
constexpr int kTileWarps = 16;
constexpr int kTileThreads = kTileWarps * kWarp;
constexpr uint32_t kTileCols = kChunkPix;
static_assert(kTileCols == (uint32_t)kTileThreads, "one thread a column in the column steps");
/* Rows of a warp in a tile: 4 of u8, 2 of u16, loaded at once (16 registers). Taller tiles
 * (8 or 16 rows a warp, fewer look-backs) and 2 rows are slower. */
template <typename Tin> __host__ __device__ constexpr int tile_rows_per_warp() { return 4 / (int)sizeof(Tin); }
template <typename Tin> __host__ __device__ constexpr uint32_t tile_rows()
{
    return (uint32_t)(kTileWarps * tile_rows_per_warp<Tin>());
}
constexpr uint32_t kTileRowsMax = kTileWarps * 4;
/* Bands of one launch: 256, 16384 rows of u8 or 8192 of u16, so a launch has at most 8192
 * tiles at 16384 pixels (37 MiB of scratch) and a column's sum over its rows fits the 32
 * bits of a published word. Taller strips take more launches. */
constexpr uint32_t kTileLaunchBands = 256;
template <typename Tin> __host__ __device__ constexpr uint32_t tile_launch_rows()
{
    return kTileLaunchBands * tile_rows<Tin>();
}
constexpr uint32_t kTileStripesMax = kTiledSpan / kTileCols;
static_assert((uint64_t)kTileLaunchBands * kTileRowsMax * 65535u <= UINT32_MAX,
              "a column's sum in a launch fits 32 bits");
/* Threads adding one row's left tiles: each takes every horiz_groups()-th of them. */
template <typename Tin> __host__ __device__ constexpr uint32_t horiz_groups() { return kTileThreads / tile_rows<Tin>(); }
constexpr int kLookWindow = 4; /* tiles above read at once */
/* A tile row's per-column values in shared memory, one pad word after each lane's kScanPix
 * columns: a lane reading its own columns in order hits other banks than its neighbours
 * (unpadded, 32 lanes 128 or 64 bytes apart meet in one bank and serialise). */
__host__ __device__ constexpr uint32_t padded_col(uint32_t c) { return c + c / kScanPix; }
constexpr uint32_t kTileColsPadded = padded_col(kTileCols);

/* The published words, in one device allocation (tile_layout): per tile. */
struct TileScratch {
    uint32_t *ticket;            /* next tile to take; reset by the block drawing the last */
    unsigned long long *row;     /* [kTileRowsMax]: row totals */
    unsigned long long *col;     /* [kTileCols]: column totals, then sums down to the tile's end */
    unsigned long long *cor_agg; /* [2]: the band's sum left of the tile, low and high words */
    unsigned long long *cor_inc; /* [2]: the corner below the tile (all above it and left) */
};

/* A published word: tag (epoch * 2 + inclusive) above the value. */
__device__ __forceinline__ void publish(unsigned long long *p, uint32_t tag, uint32_t v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"((unsigned long long)tag << 32 | v)
                 : "memory");
}
__device__ __forceinline__ unsigned long long peek(const unsigned long long *p)
{
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
__device__ __forceinline__ bool of_epoch(unsigned long long w, uint32_t epoch)
{
    return (uint32_t)(w >> 33) == epoch;
}
/* The word at p once this launch has published it; w is a first read of it. */
__device__ __forceinline__ unsigned long long await_word(const unsigned long long *p, unsigned long long w,
                                                         uint32_t epoch)
{
    while (!of_epoch(w, epoch)) w = peek(p);
    return w;
}

/* The first kLookWindow words up a stripe from tile t (b bands above it), word `base` of
 * each tile (`tile_words` apart), read at once. */
struct LookWindow {
    unsigned long long w[kLookWindow];
};
__device__ __forceinline__ void look_start(LookWindow &v, const unsigned long long *base, size_t tile_words,
                                           uint32_t t, uint32_t b, uint32_t stripes)
{
#pragma unroll
    for (int k = 0; k < kLookWindow; ++k)
        v.w[k] = b > (uint32_t)k ? peek(base + (size_t)(t - (k + 1) * stripes) * tile_words) : 0;
}
/* The sum of the words above until an inclusive one (band 0's are), from the window
 * look_start read, then kLookWindow tiles at a time. */
__device__ __forceinline__ uint32_t look_finish(LookWindow &v, const unsigned long long *base,
                                                size_t tile_words, uint32_t t, uint32_t b,
                                                uint32_t stripes, uint32_t epoch)
{
    uint32_t sum = 0;
    while (b > 0) {
#pragma unroll
        for (int k = 0; k < kLookWindow; ++k) {
            if (b <= (uint32_t)k) return sum;
            const unsigned long long w =
                await_word(base + (size_t)(t - (k + 1) * stripes) * tile_words, v.w[k], epoch);
            sum += (uint32_t)w;
            if ((w >> 32) & 1u) return sum;
        }
        b -= kLookWindow;
        t -= kLookWindow * stripes;
        look_start(v, base, tile_words, t, b, stripes);
    }
    return sum;
}

/* The corner of tile t (b bands above it), in every lane of the calling warp: lane k reads
 * the pair of words of the tile in band b - 1 - k, inclusive if both are there, else its
 * aggregate pair (a reader must not pair halves of different kinds; band 0 publishes only
 * the inclusive pair), and the warp adds the aggregates up to the first inclusive one.
 * A tile publishes its corner's aggregate with the inclusive sum, after its look-back, so
 * corners chain down a stripe; the chain is hidden, and publishing the aggregate earlier
 * (from the left tiles' totals) costs one more L2 round trip a tile. */
__device__ __forceinline__ unsigned long long corner_above(const TileScratch &sc, uint32_t t, uint32_t b,
                                                           uint32_t stripes, uint32_t epoch, uint32_t lane)
{
    unsigned long long sum = 0;
    while (b > 0) {
        const uint32_t n = b < (uint32_t)kWarp ? b : (uint32_t)kWarp;
        unsigned long long v = 0;
        bool inclusive = false;
        if (lane < n) {
            const size_t tp = (size_t)t - (size_t)(lane + 1) * stripes;
            const unsigned long long *inc = sc.cor_inc + tp * 2, *agg = sc.cor_agg + tp * 2;
            for (;;) {
                const unsigned long long il = peek(inc), ih = peek(inc + 1);
                if (of_epoch(il, epoch) && of_epoch(ih, epoch)) {
                    v = (unsigned long long)(uint32_t)ih << 32 | (uint32_t)il;
                    inclusive = true;
                    break;
                }
                const unsigned long long al = peek(agg), ah = peek(agg + 1);
                if (of_epoch(al, epoch) && of_epoch(ah, epoch)) {
                    v = (unsigned long long)(uint32_t)ah << 32 | (uint32_t)al;
                    break;
                }
            }
        }
        const uint32_t incs = __ballot_sync(kFullMask, inclusive);
        const uint32_t last = incs ? (uint32_t)__ffs(incs) - 1 : n - 1;
        sum += warp_sum(lane <= last ? v : 0ull);
        if (incs) return sum;
        b -= n;
        t -= n * stripes;
    }
    return sum;
}

template <typename Tout> struct TileShared {
    uint32_t ticket;
    /* the carry row at the tile's columns, then the column sums above the tile plus the
     * carry row's differences */
    Tout above[kTileColsPadded];
    Tout corner;
};

template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kTileThreads, 2)
    tile_table_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows, uint32_t stripes, uint32_t tiles,
                      const Tout *carry, TileScratch sc, uint32_t epoch)
{
    constexpr int kRpw = tile_rows_per_warp<Tin>();
    constexpr uint32_t kRows = tile_rows<Tin>();
    constexpr uint32_t kGroups = horiz_groups<Tin>();
    constexpr uint32_t kLeftPerThread = (kTileStripesMax + kGroups - 1) / kGroups;
    constexpr uint32_t kLeftWindow = kLeftPerThread < 4 ? kLeftPerThread : 4; /* left tiles read at once */
    constexpr int kStride = stage_stride<Tout>();
    constexpr int kPerVec = 16 / (int)sizeof(Tout);
    __shared__ TileShared<Tout> sh;
    extern __shared__ __align__(16) unsigned char s_dyn[]; /* staging, then column partials */
    const uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, c = threadIdx.x;
    Tout *stage = (Tout *)s_dyn + (size_t)warp * kWarp * kStride;
    Tout *slot = stage + lane * kStride;
    uint32_t *s_part = (uint32_t *)((Tout *)s_dyn + (size_t)kTileWarps * kWarp * kStride);
    uint32_t *s_left_part = (uint32_t *)s_dyn; /* in warp 0's staging, used between the stores */
    const uint32_t tag_agg = epoch * 2, tag_incl = epoch * 2 + 1;
    auto row_of = [&](uint32_t y) { return (const Tin *)(src + (size_t)y * src_pitch); };

    /* The tile drawn last turn, looked back for, its table not yet written: its rows' sums
     * left of this lane's columns, and the sum of everything left of the tile in the rows
     * above this warp's; its column sums above and corner are in sh, its partials in s_part. */
    uint32_t held = UINT32_MAX;
    uint32_t held_start[kRpw] = {};
    unsigned long long held_left_before = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            const uint32_t tk = atomicAdd(sc.ticket, 1u);
            if (tk == tiles + gridDim.x - 1) *sc.ticket = 0; /* the launch's last draw */
            sh.ticket = tk;
        }
        __syncthreads(); /* the ticket, and the held tile's shared values, are in */
        const uint32_t t = sh.ticket;
        const bool more = t < tiles, have = held != UINT32_MAX;
        const uint32_t hx0 = (held % stripes) * kTileCols, hyw = (held / stripes) * kRows + warp * kRpw;
        const bool hlive = have && hyw < rows;
        /* the held tile's table row above this warp's rows, into the staging: carry + corner
         * + rows left + prefix of the column sums above this warp's rows */
        if (hlive) {
            const uint32_t *part = s_part + warp * kTileColsPadded + padded_col(lane * kScanPix);
            const Tout *ab = sh.above + padded_col(lane * kScanPix);
            Tout lane_sum = 0;
#pragma unroll
            for (int i = 0; i < kScanPix; ++i) lane_sum += ab[i] + part[i];
            Tout run = warp_inclusive_scan(lane_sum, lane) - lane_sum + sh.corner + (Tout)held_left_before;
#pragma unroll
            for (int i = 0; i < kScanPix; i += kPerVec) {
                Tout v[kPerVec];
#pragma unroll
                for (int k = 0; k < kPerVec; ++k) v[k] = (run += ab[i + k] + part[i + k]);
                *(uint4 *)(slot + i) = vec_of(v, 0, (Tout)0);
            }
        }
        __syncthreads(); /* s_part and sh.above are free for the new tile */

        /* the new tile's rows (kept in L2 for the second read next turn): their totals
         * published, each lane's offset in its row kept, the lane's column totals into s_part */
        const uint32_t b = t / stripes, s = t % stripes;
        const uint32_t y0 = b * kRows, yw = y0 + warp * kRpw;
        const uint32_t x0 = s * kTileCols;
        uint32_t excl[kRpw] = {};
        if (more) {
            const long x = (long)x0 + (long)lane * kScanPix;
            LaneRaw<Tin> raw[kRpw];
#pragma unroll
            for (int r = 0; r < kRpw; ++r)
                load_lane<Tin, true>(row_of(yw + r), x, width, yw + r < rows, raw[r]);
            /* after the rows' loads are issued, not before: its store to shared memory waits */
            sh.above[padded_col(c)] = x0 + c < width ? carry[x0 + c] : (Tout)0;
            uint32_t col[kScanPix] = {};
#pragma unroll
            for (int r = 0; r < kRpw; ++r) {
                uint32_t tot = 0;
#pragma unroll
                for (int i = 0; i < kScanPix; ++i) {
                    const uint32_t v = sample_of(raw[r], i);
                    tot += v;
                    col[i] += v;
                }
                const uint32_t incl = warp_inclusive_scan(tot, lane);
                excl[r] = incl - tot;
                if (lane == kWarp - 1) publish(sc.row + (size_t)t * kTileRowsMax + warp * kRpw + r, tag_agg, incl);
            }
            uint32_t *part = s_part + warp * kTileColsPadded + padded_col(lane * kScanPix);
#pragma unroll
            for (int i = 0; i < kScanPix; ++i) part[i] = col[i];
        }
        __syncthreads();

        /* column c: the warps' partials become exclusive sums down the tile, and its total is
         * published (inclusive in band 0) */
        uint32_t col_tot = 0;
        unsigned long long *my_col = sc.col + (size_t)t * kTileCols + c;
        if (more) {
            for (int w = 0; w < kTileWarps; ++w) {
                uint32_t *part = s_part + w * kTileColsPadded + padded_col(c);
                const uint32_t v = *part;
                *part = col_tot;
                col_tot += v;
            }
            publish(my_col, b == 0 ? tag_incl : tag_agg, col_tot);
        }
        /* the held tile's rows, read again (from L2): their prefix sums added to the table
         * row, stored */
        if (hlive) {
            const long hx = (long)hx0 + (long)lane * kScanPix;
#pragma unroll
            for (int r = 0; r < kRpw; ++r) {
                const uint32_t y = hyw + r;
                if (y >= rows) break;
                LaneRaw<Tin> raw;
                load_lane<Tin, true>(row_of(y), hx, width, true, raw);
                uint32_t run = held_start[r];
#pragma unroll
                for (int i = 0; i < kScanPix; i += kPerVec) {
                    uint4 v = *(const uint4 *)(slot + i);
                    if constexpr (sizeof(Tout) == 4) {
                        v.x += (run += sample_of(raw, i));
                        v.y += (run += sample_of(raw, i + 1));
                        v.z += (run += sample_of(raw, i + 2));
                        v.w += (run += sample_of(raw, i + 3));
                    } else {
                        const Tout a = ((Tout)v.y << 32 | v.x) + (run += sample_of(raw, i));
                        const Tout d = ((Tout)v.w << 32 | v.z) + (run += sample_of(raw, i + 1));
                        v = make_uint4((uint32_t)a, (uint32_t)(a >> 32), (uint32_t)d, (uint32_t)(d >> 32));
                    }
                    *(uint4 *)(slot + i) = v;
                }
                __syncwarp();
                copy_chunk_out((Tout *)(dst + (size_t)y * dst_pitch), (long)hx0, width, true, stage, lane);
                __syncwarp();
            }
        }
        if (!more) return;
        __syncthreads(); /* the staging is free for s_left_part */

        /* The new tile's three look-backs, their first reads issued together: along the band,
         * row j's total in every tile left of this one (kGroups threads a row); up the stripe,
         * column c's sum above the tile; and the corner (warp 0). sh.above still holds the
         * carry row here: its differences first. */
        const Tout carry_diff = sh.above[padded_col(c)] - (c > 0 ? sh.above[padded_col(c - 1)] : (Tout)0);
        const uint32_t hj = c % kRows, hg = c / kRows;
        const unsigned long long *hp = sc.row + (size_t)(t - s) * kTileRowsMax + hj;
        unsigned long long hw[kLeftWindow];
        auto left_start = [&](uint32_t k0) {
#pragma unroll
            for (uint32_t k = 0; k < kLeftWindow; ++k) {
                const uint32_t sp = hg + (k0 + k) * kGroups;
                hw[k] = sp < s ? peek(hp + (size_t)sp * kTileRowsMax) : 0;
            }
        };
        left_start(0);
        LookWindow vw;
        look_start(vw, sc.col + c, kTileCols, t, b, stripes);
        uint32_t left = 0;
        for (uint32_t k0 = 0; k0 < kLeftPerThread; k0 += kLeftWindow) {
            if (k0 > 0) left_start(k0);
#pragma unroll
            for (uint32_t k = 0; k < kLeftWindow; ++k) {
                const uint32_t sp = hg + (k0 + k) * kGroups;
                if (sp < s) left += (uint32_t)await_word(hp + (size_t)sp * kTileRowsMax, hw[k], epoch);
            }
        }
        s_left_part[c] = left;
        const uint32_t above = look_finish(vw, sc.col + c, kTileCols, t, b, stripes, epoch);
        const unsigned long long corner = warp == 0 ? corner_above(sc, t, b, stripes, epoch, lane) : 0;
        __syncthreads();

        /* from the left tiles' row totals: the sum left of the tile, all of it and the rows
         * before this warp's; each row's sum left of this lane's columns */
        unsigned long long left_all = 0, left_before = 0;
#pragma unroll
        for (uint32_t i = lane; i < kTileThreads; i += kWarp) {
            const uint32_t v = s_left_part[i];
            left_all += v;
            if (i % kRows < warp * (uint32_t)kRpw) left_before += v;
        }
        left_all = warp_sum(left_all);
        held_left_before = warp_sum(left_before);
#pragma unroll
        for (int r = 0; r < kRpw; ++r) {
            uint32_t row_left = 0;
#pragma unroll
            for (uint32_t g = 0; g < kGroups; ++g) row_left += s_left_part[g * kRows + warp * kRpw + r];
            held_start[r] = row_left + excl[r];
        }
        /* publish the corner below this tile and its band's left sum, and column c inclusive */
        if (c < 2) publish(sc.cor_inc + (size_t)t * 2 + c, tag_incl, (uint32_t)((corner + left_all) >> (32 * c)));
        if (b > 0) {
            if (c < 2) publish(sc.cor_agg + (size_t)t * 2 + c, tag_agg, (uint32_t)(left_all >> (32 * c)));
            publish(my_col, tag_incl, above + col_tot);
        }
        if (c == 0) sh.corner = (Tout)corner;
        sh.above[padded_col(c)] = (Tout)above + carry_diff; /* a prefix along the row gives the carry back */
        held = t;
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

/* ---- the one-pass tiled table: scratch and launch ---- */

/* Byte offsets of TileScratch's arrays for `tiles` tiles. */
struct TileLayout {
    size_t row, col, cor_agg, cor_inc, total;
};
inline TileLayout tile_layout(uint64_t tiles)
{
    TileLayout l;
    l.row = 256;
    l.col = l.row + gs_round_up(8 * tiles * kTileRowsMax, 256);
    l.cor_agg = l.col + gs_round_up(8 * tiles * kTileCols, 256);
    l.cor_inc = l.cor_agg + gs_round_up(16 * tiles, 256);
    l.total = l.cor_inc + gs_round_up(16 * tiles, 256);
    return l;
}

/* Tiles of one launch over `rows` rows of `width` pixels. */
template <typename Tin> uint64_t tile_count(uint32_t width, uint32_t rows)
{
    return (uint64_t)((width + kTileCols - 1) / kTileCols) * ((rows + tile_rows<Tin>() - 1) / tile_rows<Tin>());
}

/* A tile block's dynamic shared memory: the warps' staging, then the column partials. */
template <typename Tout> size_t tile_stage_bytes()
{
    return (size_t)kTileWarps * kWarp * stage_stride<Tout>() * sizeof(Tout) +
           (size_t)kTileWarps * kTileColsPadded * sizeof(uint32_t);
}

/* One launch of the tiled table over at most tile_launch_rows rows; scratch holds
 * tile_layout(tile_count).total bytes, all zero before its first launch, and epoch
 * (1..kTileEpochs) tags this launch's words. */
template <typename Tin, typename Tout>
cudaError_t tiled_table(const void *src, size_t sp, void *dst, size_t dp, uint32_t width,
                        uint32_t rows, void *carry, void *scratch, uint32_t epoch, cudaStream_t stream)
{
    const uint32_t stripes = (width + kTileCols - 1) / kTileCols;
    const uint64_t tiles = tile_count<Tin>(width, rows);
    const TileLayout l = tile_layout(tiles);
    char *base = (char *)scratch;
    TileScratch sc;
    sc.ticket = (uint32_t *)base;
    sc.row = (unsigned long long *)(base + l.row);
    sc.col = (unsigned long long *)(base + l.col);
    sc.cor_agg = (unsigned long long *)(base + l.cor_agg);
    sc.cor_inc = (unsigned long long *)(base + l.cor_inc);
    constexpr auto kernel = tile_table_kernel<Tin, Tout>;
    const size_t smem = tile_stage_bytes<Tout>();
    uint64_t resident = 0;
    cudaError_t err = resident_blocks<kernel>(kTileThreads, smem, 100, &resident);
    if (err != cudaSuccess) return err;
    const unsigned grid = (unsigned)(tiles < resident ? tiles : resident);
    kernel<<<grid, kTileThreads, smem, stream>>>((const char *)src, sp, (char *)dst, dp, width, rows,
                                                 stripes, (uint32_t)tiles, (const Tout *)carry, sc, epoch);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    /* the strip's last row is the next strip's carry */
    return cudaMemcpyAsync(carry, (const char *)dst + (size_t)(rows - 1) * dp, (size_t)width * sizeof(Tout),
                           cudaMemcpyDeviceToDevice, stream);
}

/* Tags a scratch buffer can give before it must be zeroed again: epoch * 2 + 1 fits the
 * word's upper 32 bits. */
constexpr uint32_t kTileEpochs = 0x7fffffffu;

/* The next launch's epoch on `s`, with `bytes` of scratch: a buffer grown (the old one freed,
 * which waits for the device) or worn through its tags is zeroed on `stream` first. */
cudaError_t next_epoch(gs_cuda_integral_scratch *s, size_t bytes, cudaStream_t stream, uint32_t *epoch)
{
    cudaError_t err = cudaSuccess;
    if (s->d == NULL || s->bytes < bytes) {
        if (s->d != NULL && (err = cudaFree(s->d)) != cudaSuccess) return err;
        s->d = NULL, s->bytes = 0;
        if ((err = cudaMalloc(&s->d, bytes)) != cudaSuccess) {
            s->d = NULL;
            return err;
        }
        s->bytes = bytes;
        s->launches = kTileEpochs;
    }
    if (s->launches >= kTileEpochs) {
        if ((err = cudaMemsetAsync(s->d, 0, s->bytes, stream)) != cudaSuccess) return err;
        s->launches = 0;
    }
    *epoch = ++s->launches;
    return cudaSuccess;
}

/* The tiled table over a strip of any height, tile_launch_rows rows a launch. */
template <typename Tin, typename Tout>
cudaError_t tiled_strip(const void *src, size_t sp, void *dst, size_t dp, uint32_t width,
                        uint32_t rows, void *carry, gs_cuda_integral_scratch *scratch,
                        cudaStream_t stream)
{
    constexpr uint32_t kLaunchRows = tile_launch_rows<Tin>();
    const uint32_t most = rows < kLaunchRows ? rows : kLaunchRows;
    const size_t bytes = tile_layout(tile_count<Tin>(width, most)).total;
    for (uint32_t y = 0; y < rows; y += kLaunchRows) {
        const uint32_t n = rows - y < kLaunchRows ? rows - y : kLaunchRows;
        uint32_t epoch = 0;
        cudaError_t err = next_epoch(scratch, bytes, stream, &epoch);
        if (err == cudaSuccess)
            err = tiled_table<Tin, Tout>((const char *)src + (size_t)y * sp, sp, (char *)dst + (size_t)y * dp,
                                         dp, width, n, carry, scratch->d, epoch, stream);
        if (err != cudaSuccess) return err;
        if (rows - y <= kLaunchRows) break; /* y + kLaunchRows would wrap past 2^32 rows */
    }
    return cudaSuccess;
}

/* Whether the tiled table runs here: rows of at most kTiledSpan pixels, and a block's
 * shared memory (110 KiB for 64-bit sums) within what this device allows a block, opted
 * in (about 99 KiB on compute capability 8.6, 8.9 and 12.x). Else the row and column
 * passes, which need no dynamic shared memory. */
template <typename Tout> bool tiled_table_fits(uint32_t width)
{
    if (width > kTiledSpan) return false;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return false;
    return tile_stage_bytes<Tout>() + sizeof(TileShared<Tout>) <= (size_t)optin;
}

} /* namespace */

/* ---- launchers ---- */

extern "C" cudaError_t gs_cuda_integral_rows(const void *d_src, size_t src_pitch, void *d_dst,
                                             size_t dst_pitch, uint32_t width, uint32_t rows,
                                             uint32_t in_bits, uint32_t out_bits,
                                             cudaStream_t stream)
{
    if (in_bits == 32) /* float32 samples: float64 sums in the ABI's order */
        return out_bits == 64 ? gs_cuda_float_integral_rows(d_src, src_pitch, d_dst, dst_pitch,
                                                            width, rows, stream)
                              : cudaErrorInvalidValue;
    if (!integral_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits))
        return cudaErrorInvalidValue;
    return integral_rows(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits,
                         stream);
}

extern "C" cudaError_t gs_cuda_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                           size_t dst_pitch, uint32_t width, uint32_t rows,
                                           uint32_t in_bits, uint32_t out_bits, void *d_carry,
                                           gs_cuda_integral_scratch *scratch, cudaStream_t stream)
{
    if (in_bits == 32) /* float32 samples: float64 sums in the ABI's order, no look-back */
        return out_bits == 64 ? gs_cuda_float_integral_2d(d_src, src_pitch, d_dst, dst_pitch,
                                                          width, rows, d_carry, stream)
                              : cudaErrorInvalidValue;
    if (!integral_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits) ||
        d_carry == NULL || (uintptr_t)d_carry % (out_bits / 8) != 0 || scratch == NULL)
        return cudaErrorInvalidValue;
    const bool tiled = out_bits == 32 ? tiled_table_fits<uint32_t>(width)
                                      : tiled_table_fits<unsigned long long>(width);
    if (tiled)
        return with_sample_types(in_bits, out_bits, [&](auto tin, auto tout) {
            return tiled_strip<decltype(tin), decltype(tout)>(d_src, src_pitch, d_dst, dst_pitch,
                                                              width, rows, d_carry, scratch, stream);
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

extern "C" void gs_cuda_integral_scratch_free(gs_cuda_integral_scratch *scratch)
{
    if (scratch == NULL) return;
    if (scratch->d != NULL) cudaFree(scratch->d);
    scratch->d = NULL, scratch->bytes = 0, scratch->launches = 0;
}
