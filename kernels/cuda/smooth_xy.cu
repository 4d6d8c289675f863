/* smooth_xy.cu: --axis xy, rows then columns; 8-bit samples at up to 3 passes in one pass over the image. */
/*
 * 8-bit samples at 4 to 10 passes take one pass through shared-memory tiles
 * (smooth_xy_tiles.cu), 16-bit samples at up to GS_CUDA_XY_ONE_PASS_MAX_PASSES passes one
 * pass in float (smooth_xy_float.cu); the rest run the passes along the rows into float32
 * scratch and the column passes from there (gs_cuda_smooth_rows_float,
 * gs_cuda_smooth_columns), which moves 8 more bytes a pixel through device memory than the
 * samples themselves.
 */
#include "column_walk.cuh"
#include "fast_arith.cuh"
#include "launch_chain.cuh"
#include "launch_common.cuh"
#include "packed_passes.cuh"
#include "registers_pixels.cuh"
#include "sample_io.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * The one-pass path: 8-bit samples in and out, 1 <= K <= GS_INT_SUMS_XY_MAX_PASSES.
 *
 * A thread owns words of 4 neighbouring columns and walks down a segment of rows, like the
 * column kernels (smooth_columns.cu): as each input row enters, it forms that row's K-pass
 * sums for its columns, and those roll through K column levels in registers; the
 * last level's row is rounded once and stored. No intermediate touches device memory, so
 * the image is read about (1 + 2K / segment rows) times and written once.
 *
 * Interior kernel (xy_interior_kernel): at pixels at least K from both row ends and from both
 * window ends the K row passes and K column passes are one integer window, rounded once
 * (stencil_math.h, GS_INT_SUMS_XY_MAX_PASSES, says why that gives the float passes' bytes).
 * A lane holds two neighbouring words there. A row's sums come from the lane's words and the
 * words either side: lanes exchange the pieces of their words by shuffles (the kernel's
 * `enter`; row_sums), and a warp's 32 lanes cover 64 consecutive words of which the outer
 * two only lend theirs (warps overlap by two words), so a warp stores 62 words a row. Pairs
 * of samples share a word as 16-bit halves (packed_passes.cuh's layout: columns 0 and 2 in
 * one word, 1 and 3 in the other), so a pass of sums is one add for two pixels. A row's sums
 * stay below 255 x 3^K and the column levels below 255 x 3^(K + j): halves hold them up to
 * 3^5 x 255 < 2^16, so for K = 3 the last level is summed from unpacked halves.
 *
 * Edge kernel (xy_edge_kernel): the float passes exactly as the reference runs them (row
 * ends and window ends take the two-term mean), for the words the interior kernel does not
 * store (a row's first word, its last words) and for the rows within K of a window end. Each
 * thread loads its word and the words either side itself; these launches cover a few words
 * a row and a few rows, in short segments, and go after the interior launch, filling its
 * tail (let_next_grid_start).
 */

using namespace gs_cuda;

namespace {

constexpr int kXyThreads = kWalkThreads;        /* threads a block: 4 warps */
constexpr int kCols = 4;                        /* columns a word of u8 */
/* The interior's lanes hold two neighbouring words each: a shuffle, a staged load and a
 * store then serve 8 columns (the walk waited on that queue with one word a lane), and a
 * warp's two outer words, which only lend their samples, are 1/32 of it instead of 1/16. */
constexpr int kLaneWords = 2;
constexpr uint32_t kWarpStoredWords = kWarp * kLaneWords - 2; /* all but lane 0's first, lane 31's last */
constexpr int kUnroll = kWalkUnroll;            /* rows a batch: a multiple of 3, so ring
                                                   slots stay constant */
/* Output rows a thread walks (interior), before wave fitting: the shortest segments wave
 * fitting allows, so the grid is many waves. Blocks of one wave finish far apart, and a block
 * that finishes early leaves its SM idle unless another waits; the 2K rows a segment walks
 * beyond its own cost less (docs/performance.md, "u8 xy at 1 to 3 passes"). */
constexpr uint32_t kInteriorSegmentRows = GS_MIN_WAVE_SEGMENT_ROWS;
constexpr uint32_t kEdgeSegmentRows = 2;        /* and at the edges: few threads, short walks
                                                   (8 rows: the edge launch 25.7 us at 16384^2 K=3,
                                                   one pass 0.351 ms; 2 rows: 0.342 ms) */
constexpr int kMaxXyPasses = (int)GS_INT_SUMS_XY_MAX_PASSES;
static_assert(kUnroll % 3 == 0, "a batch keeps every row in the same ring slot");
static_assert(kMaxXyPasses <= 3 && kMaxXyPasses < kCols,
              "a row's sums need at most one word either side, and 16-bit halves hold the "
              "column levels below the last");
static_assert(2 * kMaxXyPasses <= (int)GS_SHORT_DIV_PASSES,
              "the edge kernel's passes all divide in two instructions");

/* Rows and words of one launch. Rows are window rows; the output row t is stored at
 * dst + (t - above) * dst_pitch. */
struct XyArgs {
    const char *src;
    size_t src_pitch;
    char *dst;
    size_t dst_pitch;
    uint32_t width;       /* samples a row */
    uint32_t window_rows; /* rows of the window: its first and last are column ends */
    uint32_t above;       /* window row of the first output row */
    uint32_t t0, t1;      /* the launch's output rows [t0, t1), window rows */
    uint32_t seg_rows;    /* output rows a segment */
};

/* ---- device helpers ---- */

/*
 * The interior launch and the edge launch after it on the stream overlap (programmatic
 * dependent launch, compute capability 9.0 and up; elsewhere they run one after the other):
 * the interior lets the edge launch start as soon as its blocks all run, so the edge's
 * blocks take SMs as the interior's leave them rather than after the last one; the edge
 * needs none of the interior's results (disjoint pixels of the same input), and waits for
 * the interior grid before it ends, so work after it on the stream finds both done.
 */
__device__ __forceinline__ void let_next_grid_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_grid()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* The word of samples [x, x + 4) of a row; x < width, so the word lies inside the row's
 * pitch (a multiple of 16). Samples past the width are whatever the pitch holds: no pixel
 * that is stored depends on them. */
__device__ __forceinline__ uint32_t load_word(const char *row, uint32_t x)
{
    return __ldg((const uint32_t *)(row + x));
}

/*
 * The K-pass row sums of a lane's two words (samples 0..7): q[0] holds columns 0 and 2 as
 * halves, q[1] columns 1 and 3, q[2] and q[3] the same for columns 4..7. Word P[k] pairs
 * sample k with sample k + 2; a pass is the sum of three neighbouring words, and the K passes
 * read P[-K .. K + 5], within P[-3 .. 8]: P[0], P[1], P[4] and P[5] are the words' even and
 * odd bytes (even_bytes, odd_bytes), P[2] and P[3] join the first word's to the second's,
 * P[6] and P[7] the second's to the next lane's first, P[8] is that word's even bytes;
 * P[-2] and P[-1] are the previous lane's P[6] and P[7], and P[-3] its P[5], all passed in
 * from the lanes that formed them (by shuffles): the integer pipe splits and joins each word
 * once.
 */
template <int K>
__device__ __forceinline__ void row_sums(const uint32_t (&p)[12], uint32_t (&q)[4])
{
    uint32_t w[2 * K + 6]; /* P[-K .. K + 5]; p[i] is P[i - 3] */
#pragma unroll
    for (int j = 0; j < 2 * K + 6; ++j) w[j] = p[j - K + 3];
#pragma unroll
    for (int pass = 1; pass <= K; ++pass) {
        uint32_t left = w[pass - 1];
#pragma unroll
        for (int i = pass; i < 2 * K + 6 - pass; ++i) {
            const uint32_t sum = left + w[i] + w[i + 1];
            left = w[i];
            w[i] = sum;
        }
    }
    q[0] = w[K], q[1] = w[K + 1], q[2] = w[K + 4], q[3] = w[K + 5];
}

/* A lane's two words to p (8-byte aligned): both where both are stored, else the one that
 * is, as predicated stores: written as branches, the compiler moves the rounding into them,
 * and a row pays for the branches. p, a generic pointer into global memory, is converted for
 * st.global, which takes a global address. */
__device__ __forceinline__ void store_words_if(bool first, bool second, char *p, uint32_t a, uint32_t b)
{
    asm volatile("{\n\t.reg .pred f, s, nf, ns, both, only_f, only_s;\n\t"
                 "setp.ne.u32 f, %0, 0;\n\tsetp.ne.u32 s, %1, 0;\n\t"
                 "not.pred nf, f;\n\tnot.pred ns, s;\n\tand.pred both, f, s;\n\t"
                 "and.pred only_f, f, ns;\n\tand.pred only_s, s, nf;\n\t"
                 "@both st.global.v2.u32 [%2], {%3, %4};\n\t"
                 "@only_f st.global.u32 [%2], %3;\n\t"
                 "@only_s st.global.u32 [%2+4], %4;\n\t}"
                 ::"r"((uint32_t)first), "r"((uint32_t)second), "l"(__cvta_generic_to_global(p)), "r"(a), "r"(b)
                 : "memory");
}

/* round(n / 3^(2K)) for an integer n < 2^24 held exactly as a float: the last two of
 * gs_int_xy_round's three operations, the sample in the result's low byte. */
__device__ __forceinline__ uint32_t round_xy_float(float n, float inverse)
{
    return __float_as_uint(__fadd_rn(__fmul_rn(n, inverse), kMagic23));
}

/* round(N / 3^(2K)) from the word kMagic23Bits | N (the float 2^23 + N): gs_int_xy_round's
 * three operations. */
__device__ __forceinline__ uint32_t round_xy(uint32_t magic_n, float inverse)
{
    return round_xy_float(__fsub_rn(__uint_as_float(magic_n), kMagic23), inverse);
}

/* A packed word's low or high half as kMagic23Bits | half. */
__device__ __forceinline__ uint32_t magic_low(uint32_t w) { return __byte_perm(w, kMagic23Bits, 0x7610u); }
__device__ __forceinline__ uint32_t magic_high(uint32_t w) { return __byte_perm(w, kMagic23Bits, 0x7632u); }

/*
 * The column levels of one thread. lv[j][slot] holds level j (0: the row sums) of the last
 * three rows, packed; for K = 3 the level before the last is kept unpacked too (its halves
 * reach 3^5 x 255, so three of them pass 2^16), as exact floats in un[slot][column]: the last
 * level is summed and rounded on the float pipe (sums below 2^18 are exact there), off the
 * integer pipe, which bounds this walk where memory does not (an H200).
 */
template <int K> struct XyLevels {
    static constexpr bool kSplit = 2 * K > 5; /* the last level is summed unpacked */
    uint32_t lv[K][3][2];
    float un[kSplit ? 3 : 1][4];
};

/* One input row u of a batch (u: its place in the batch) enters: its sums q become level 0,
 * levels 1 .. K-1 advance, and the last level's row (K rows up) is rounded and returned in
 * memory order. Slots are (u - j) mod 3: constants after unrolling. */
template <int K>
__device__ __forceinline__ uint32_t advance_levels(XyLevels<K> &s, const uint32_t (&q)[2], int u,
                                                   float inverse)
{
    constexpr int base = 3 * (K + 2);
    s.lv[0][u % 3][0] = q[0];
    s.lv[0][u % 3][1] = q[1];
#pragma unroll
    for (int j = 1; j < K; ++j) {
        const uint32_t *up = s.lv[j - 1][(u - j - 1 + base) % 3], *mid = s.lv[j - 1][(u - j + base) % 3];
        const uint32_t *down = s.lv[j - 1][(u - j + 1 + base) % 3];
        uint32_t *out = s.lv[j][(u - j + base) % 3];
        out[0] = up[0] + mid[0] + down[0];
        out[1] = up[1] + mid[1] + down[1];
    }
    uint32_t r[4]; /* columns 0 .. 3 */
    if constexpr (XyLevels<K>::kSplit) {
        /* level K - 1's new row unpacked, then level K from three unpacked rows */
        const uint32_t *w = s.lv[K - 1][(u - (K - 1) + base) % 3];
        float *un = s.un[(u - (K - 1) + base) % 3];
        /* one conversion a half (I2F.U16, its high half selected in the instruction): off
         * both the integer and the float pipe */
        un[0] = __uint2float_rn(w[0] & 0xffffu), un[2] = __uint2float_rn(w[0] >> 16);
        un[1] = __uint2float_rn(w[1] & 0xffffu), un[3] = __uint2float_rn(w[1] >> 16);
        const float *up = s.un[(u - K - 1 + base) % 3], *mid = s.un[(u - K + base) % 3];
        const float *down = s.un[(u - K + 1 + base) % 3];
#pragma unroll
        for (int c = 0; c < 4; ++c) r[c] = round_xy_float(sum3(up[c], mid[c], down[c]), inverse);
    } else {
        const uint32_t *up = s.lv[K - 1][(u - K - 1 + base) % 3], *mid = s.lv[K - 1][(u - K + base) % 3];
        const uint32_t *down = s.lv[K - 1][(u - K + 1 + base) % 3];
        const uint32_t w0 = up[0] + mid[0] + down[0], w1 = up[1] + mid[1] + down[1];
        r[0] = round_xy(magic_low(w0), inverse), r[2] = round_xy(magic_high(w0), inverse);
        r[1] = round_xy(magic_low(w1), inverse), r[3] = round_xy(magic_high(w1), inverse);
    }
    return pack_low_bytes(r[0], r[1], r[2], r[3]);
}

/* 1 / 3^(2K) rounded to float. */
template <int K> constexpr float kXyInverse = 1.0f / (float)(kPackedPow3<K> * kPackedPow3<K>);

/* ---- kernels ---- */

/*
 * Words [1, word_end) of rows [t0, t1), every one of them at least K from both row ends and
 * every row at least K from both window ends. Warp g's lane l holds words 62 g + 2 l and the
 * next; every lane stores both but lane 0 its first and lane 31 its second, which only lend
 * their samples to their neighbours.
 */
template <int K>
__global__ void __launch_bounds__(kXyThreads)
    xy_interior_kernel(XyArgs g, uint32_t word_end)
{
    let_next_grid_start();
    const uint32_t lane = threadIdx.x % kWarp;
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp;
    const uint32_t word = warp * kWarpStoredWords + lane * kLaneWords; /* the lane's first */
    if (warp * kWarpStoredWords + 1 >= word_end) return; /* the whole warp: nothing to store */
    const uint32_t x = word * kCols;
    const bool loads = x < g.width;
    const bool stores_first = lane >= 1 && word < word_end;
    const bool stores_second = lane < kWarp - 1 && word + 1 < word_end;
    /* rows staged in shared memory two batches ahead (column_walk.cuh); a lane past the
     * width copies nothing and takes 0 for every row. The two words lie inside the row's
     * pitch (a multiple of 16, x a multiple of 8); samples past the width are whatever the
     * pitch holds: no pixel that is stored depends on them. */
    StagedRows<uint2> staged(g.src, g.src_pitch, loads ? x : 0, loads ? 8u : 0u);
    for (uint32_t seg = blockIdx.y; g.t0 + seg * g.seg_rows < g.t1; seg += gridDim.y) {
        const uint32_t s0 = g.t0 + seg * g.seg_rows;
        const uint32_t s1 = s0 + g.seg_rows < g.t1 ? s0 + g.seg_rows : g.t1;
        const uint32_t w0 = s0 - K, w1 = s1 + K; /* inside the window: t0 >= K, t1 + K <= rows */
        XyLevels<K> first = {}, second = {}; /* the column levels of the two words */
        staged.start(w0, w1);
        for (uint32_t y = w0; y < w1; y += kUnroll) {
            staged.next(y);
            /* the batch's output rows y - K .. (dst row of y - K: a signed offset, stored
             * only from s0 on) */
            char *out_row = g.dst + ((int64_t)y - K - g.above) * (int64_t)g.dst_pitch + x;
            /* row u of the batch enters; level K's row, K rows up, rounded: out[0] and out[1] */
            auto enter = [&](int u, uint32_t (&out)[2]) {
                const uint2 b = staged.row(u);
                const uint32_t e0 = even_bytes(b.x), o0 = odd_bytes(b.x);
                const uint32_t e1 = even_bytes(b.y), o1 = odd_bytes(b.y);
                const uint32_t en = __shfl_down_sync(kFullMask, e0, 1), on = __shfl_down_sync(kFullMask, o0, 1);
                /* selector 0x5432: the high half of the first word, the low half of the second */
                const uint32_t p2 = __byte_perm(e0, e1, 0x5432u), p3 = __byte_perm(o0, o1, 0x5432u);
                const uint32_t p6 = __byte_perm(e1, en, 0x5432u), p7 = __byte_perm(o1, on, 0x5432u);
                const uint32_t pm3 = K >= 3 ? __shfl_up_sync(kFullMask, o1, 1) : 0u;
                const uint32_t p[12] = {pm3, __shfl_up_sync(kFullMask, p6, 1), __shfl_up_sync(kFullMask, p7, 1),
                                        e0, o0, p2, p3, e1, o1, p6, p7, en};
                uint32_t q[4];
                row_sums<K>(p, q);
                const uint32_t q0[2] = {q[0], q[1]}, q1[2] = {q[2], q[3]};
                out[0] = advance_levels<K>(first, q0, u, kXyInverse<K>);
                out[1] = advance_levels<K>(second, q1, u, kXyInverse<K>);
            };
            if (y >= s0 + K && y + kUnroll <= w1) {
                /* every row of the batch enters and stores: no row tests, and with the
                 * predicated stores no branch a row */
#pragma unroll
                for (int u = 0; u < kUnroll; ++u, out_row += g.dst_pitch) {
                    uint32_t out[2];
                    enter(u, out);
                    store_words_if(stores_first, stores_second, out_row, out[0], out[1]);
                }
            } else {
#pragma unroll
                for (int u = 0; u < kUnroll; ++u, out_row += g.dst_pitch) {
                    const uint32_t yy = y + u;
                    if (yy >= w1) break; /* the same for the whole warp */
                    uint32_t out[2];
                    enter(u, out);
                    /* level K's row yy - K needs input rows from yy - 2K: all entered once
                     * yy - K >= s0 (and yy < w1 keeps it below s1) */
                    const bool row_stores = yy >= s0 + K;
                    store_words_if(stores_first && row_stores, stores_second && row_stores, out_row, out[0], out[1]);
                }
            }
            staged.done();
        }
    }
}

/* Samples [x - 4, x + 8) of a row as floats (those outside the row 0): the thread's word and
 * one either side. */
__device__ __forceinline__ void load_span(const char *row, uint32_t x, uint32_t width, float (&v)[12])
{
    const uint32_t a = x >= (uint32_t)kCols ? load_word(row, x - kCols) : 0u;
    const uint32_t b = load_word(row, x);
    const uint32_t c = x + kCols < width ? load_word(row, x + kCols) : 0u;
    const uint32_t words[3] = {a, b, c};
#pragma unroll
    for (int i = 0; i < 12; ++i) {
        const long pos = (long)x - kCols + i;
        v[i] = pos >= 0 && pos < (long)width ? byte_to_float(words[i / 4], (uint32_t)(i % 4)) : 0.0f;
    }
}

/* The K row passes of the reference at columns x .. x + 3 from the samples around them: the
 * three-term mean inside, the two-term mean at the row's ends, a one-sample row unchanged. */
template <int K>
__device__ __forceinline__ void row_passes_float(float (&v)[12], uint32_t x, uint32_t width, float (&out)[kCols])
{
#pragma unroll
    for (int pass = 1; pass <= K; ++pass) {
        float n[12];
#pragma unroll
        for (int i = 0; i < 12; ++i) n[i] = v[i];
#pragma unroll
        for (int i = kCols - K + pass; i < 2 * kCols + K - pass; ++i) {
            const long pos = (long)x - kCols + i;
            if (width == 1 || pos < 0 || pos >= (long)width) continue;
            n[i] = pos == 0 ? gs_mean2(v[i], v[i + 1])
                   : pos == (long)width - 1 ? gs_mean2(v[i - 1], v[i])
                                            : ShortDivide::div3(sum3(v[i - 1], v[i], v[i + 1]));
        }
#pragma unroll
        for (int i = 0; i < 12; ++i) v[i] = n[i];
    }
#pragma unroll
    for (int c = 0; c < kCols; ++c) out[c] = v[kCols + c];
}

/* Where the edge kernel works: up to three regions of words and rows, each split into
 * segments of kEdgeSegmentRows output rows; a thread takes one word of one segment. Region
 * r's words are first_word, then run_base + 1 .. run_base + words - 1; its threads start at
 * thread0[r] and end where the next region's start (or `threads`): an empty region has
 * none. */
constexpr int kEdgeRegions = 3;
struct XyEdges {
    uint32_t t0[kEdgeRegions], t1[kEdgeRegions];
    uint32_t first_word[kEdgeRegions], run_base[kEdgeRegions], words[kEdgeRegions];
    uint64_t thread0[kEdgeRegions];
    uint64_t threads;
};

/*
 * The float passes for the edge regions (XyEdges), for any window: K row passes with the
 * row's ends, K column passes with the window's ends, rounded once. One launch for all the
 * regions, a thread a word of a short segment, so that no thread walks far: these threads
 * are few, and each row's three loads go out before the rows of the step before are used.
 */
template <int K> __device__ __forceinline__ void xy_edge_words(const XyArgs &g, const XyEdges &e)
{
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= e.threads) return;
    /* the region's fields by selects (an index into the parameter would copy it to the
     * stack) */
    const int r = i >= e.thread0[2] ? 2 : i >= e.thread0[1] ? 1 : 0;
    auto pick = [r](const auto (&field)[kEdgeRegions]) { return r == 2 ? field[2] : r == 1 ? field[1] : field[0]; };
    const uint64_t local = i - pick(e.thread0);
    const uint32_t words = pick(e.words);
    const uint32_t word_i = (uint32_t)(local % words);
    const uint32_t seg = (uint32_t)(local / words);
    const uint32_t x = (word_i == 0 ? pick(e.first_word) : pick(e.run_base) + word_i) * kCols;
    if (x >= g.width) return;
    const uint32_t rows = g.window_rows;
    const uint32_t s0 = pick(e.t0) + seg * g.seg_rows, region_end = pick(e.t1);
    const uint32_t s1 = s0 + g.seg_rows < region_end ? s0 + g.seg_rows : region_end;
    const uint32_t w0 = s0 > (uint32_t)K ? s0 - K : 0;
    const uint32_t w1 = s1 + K < rows ? s1 + K : rows;
    float lv[K + 1][3][kCols] = {};
    /* walk until the last output row's level K is formed: input row s1 - 1 + K, or the
     * window's last row; a step past w1 enters nothing (its row is never read as a value) */
    for (uint32_t y = w0; y < s1 + K; y += 3) {
        float span[3][12];
#pragma unroll
        for (int u = 0; u < 3; ++u) {
            if (y + u < w1)
                load_span(g.src + (size_t)(y + u) * g.src_pitch, x, g.width, span[u]);
            else
#pragma unroll
                for (int c = 0; c < 12; ++c) span[u][c] = 0.0f;
        }
#pragma unroll
        for (int u = 0; u < 3; ++u) {
            const uint32_t yy = y + u;
            if (yy >= s1 + K) break;
            if (yy < w1) row_passes_float<K>(span[u], x, g.width, lv[0][u]);
#pragma unroll
            for (int j = 1; j <= K; ++j) {
                constexpr int base = 3 * (K + 2);
                const float *up = lv[j - 1][(u - j - 1 + base) % 3], *mid = lv[j - 1][(u - j + base) % 3];
                const float *down = lv[j - 1][(u - j + 1 + base) % 3];
                float *out = lv[j][(u - j + base) % 3];
                const uint32_t t = yy - j; /* rows outside [w0, w1) are never used */
#pragma unroll
                for (int c = 0; c < kCols; ++c) out[c] = column_step<ShortDivide>(up[c], mid[c], down[c], t, rows);
            }
            const uint32_t t = yy - K;
            if (yy >= w0 + K && t >= s0 && t < s1) {
                const float *v = lv[K][(u - K + 3 * K) % 3];
                uint8_t *p = (uint8_t *)(g.dst + (size_t)(t - g.above) * g.dst_pitch) + x;
#pragma unroll
                for (int c = 0; c < kCols; ++c)
                    if (x + c < g.width) p[c] = (uint8_t)ReciprocalFma::quantize(v[c], 255.0f);
            }
        }
    }
}

template <int K>
__global__ void __launch_bounds__(kXyThreads)
    xy_edge_kernel(XyArgs g, XyEdges e)
{
    xy_edge_words<K>(g, e);
    wait_for_previous_grid(); /* every thread, those with no word too */
}

/* ---- host launchers ---- */

dim3 grid_of(uint32_t blocks_x, uint32_t t0, uint32_t t1, uint32_t seg_rows)
{
    return segment_grid(blocks_x, (t1 - t0 + seg_rows - 1) / seg_rows);
}

/* Region r of the edges, added after regions 0 .. r - 1: words {first_word} and run_base + 1
 * .. run_base + words - 1, rows [t0, t1); an empty one takes no threads. */
void add_edge_region(XyEdges &e, int r, uint32_t t0, uint32_t t1, uint32_t first_word,
                     uint32_t run_base, uint32_t words)
{
    const bool empty = t0 >= t1 || words == 0;
    e.t0[r] = t0, e.t1[r] = t1, e.first_word[r] = first_word, e.run_base[r] = run_base;
    e.words[r] = empty ? 1 : words;
    const uint64_t segs = empty ? 0 : (t1 - t0 + kEdgeSegmentRows - 1) / kEdgeSegmentRows;
    e.thread0[r] = e.threads;
    e.threads += empty ? 0 : segs * words;
}

/*
 * The one-pass path for output rows [above, above + rows) of a window of window_rows rows:
 * the interior kernel where it applies, then the edge kernel (one launch, beside the
 * interior's tail) for the rows within K of a window end and for the words within K of a row
 * end.
 */
template <int K>
cudaError_t smooth_xy_one_pass(XyArgs g, uint32_t rows, cudaStream_t stream)
{
    const uint32_t o0 = g.above, o1 = g.above + rows, R = g.window_rows;
    const uint32_t words = (g.width + kCols - 1) / kCols;
    /* interior rows [t0, t1); none when the window is too short */
    long i0, i1;
    gs_int_sums_inner(o0, o1, R, K, &i0, &i1);
    const uint32_t t0 = i0 < i1 ? (uint32_t)i0 : o1, t1 = i0 < i1 ? (uint32_t)i1 : o1;
    /* interior words [1, word_end): word w holds columns 4w .. 4w + 3, all in [K, width - K) */
    const uint32_t word_end = g.width >= (uint32_t)(2 * kCols + K) ? (g.width - K) / kCols : 1u;
    XyEdges e = {};
    add_edge_region(e, 0, o0, t0, 0, 0, words);
    add_edge_region(e, 1, t1, o1, 0, 0, words);
    /* the row's first word, and its words from word_end on */
    add_edge_region(e, 2, t0, t1, 0, word_end - 1, words - word_end + 1);
    const uint64_t edge_threads = e.threads;
    const uint64_t edge_blocks = (edge_threads + kXyThreads - 1) / kXyThreads;
    if (edge_blocks > (uint64_t)INT_MAX) return cudaErrorInvalidValue;
    XyArgs eg = g;
    eg.seg_rows = kEdgeSegmentRows;
    const bool interior = t0 < t1 && word_end > 1;
    if (interior) {
        XyArgs in = g;
        in.t0 = t0, in.t1 = t1;
        const uint32_t warps = (word_end - 1 + kWarpStoredWords - 1) / kWarpStoredWords;
        const uint32_t blocks = (warps * kWarp + kXyThreads - 1) / kXyThreads;
        cudaError_t err = wave_segment_rows<xy_interior_kernel<K>>(kXyThreads, 0, t1 - t0, blocks,
                                                                  kInteriorSegmentRows, &in.seg_rows);
        if (err != cudaSuccess) return err;
        xy_interior_kernel<K><<<grid_of(blocks, t0, t1, in.seg_rows), kXyThreads, 0, stream>>>(in, word_end);
        err = cudaGetLastError();
        if (err != cudaSuccess) return err;
    }
    if (edge_threads == 0) return cudaSuccess;
    /* beside the interior launch (let_next_grid_start) */
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)edge_blocks);
    config.blockDim = dim3(kXyThreads);
    config.stream = stream;
    cudaLaunchAttribute overlap[1];
    overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = overlap;
    config.numAttrs = interior ? 1 : 0;
    return cudaLaunchKernelEx(&config, xy_edge_kernel<K>, eg, e);
}

/* Whether the integer one-pass path takes this work. */
bool one_pass(uint32_t bits, uint32_t out_bits, uint32_t iters)
{
    return bits == 8 && out_bits == 8 && iters >= 1 && iters <= (uint32_t)kMaxXyPasses;
}

/* Whether the float one-pass path (smooth_xy_float.cu) takes it: 16-bit samples to 16 bits
 * at up to its passes. */
bool float_one_pass(uint32_t bits, uint32_t out_bits, uint32_t iters)
{
    return bits == 16 && out_bits == 16 && iters >= 1 && iters <= GS_CUDA_XY_ONE_PASS_MAX_PASSES;
}

/* Scratch of the two-step path: float32 rows, their launch chain, the columns' chain. */
struct TwoStepScratch {
    size_t rows_float, rows_chain, columns;
    size_t total() const { return rows_float + rows_chain + columns; }
};

size_t piece(size_t bytes) { return gs_round_up(bytes, 256); }

TwoStepScratch two_step_scratch(uint32_t width, uint32_t window_rows, uint32_t iters)
{
    TwoStepScratch s;
    s.rows_float = piece(float_pitch(width) * (size_t)window_rows);
    s.rows_chain = piece(gs_cuda_smooth_scratch_bytes(width, window_rows, iters));
    s.columns = piece(gs_cuda_smooth_columns_scratch_bytes(width, window_rows, iters));
    return s;
}

} /* namespace */

extern "C" size_t gs_cuda_smooth_xy_scratch_bytes(uint32_t width, uint32_t window_rows,
                                                  uint32_t bits, uint32_t out_bits, uint32_t iters)
{
    return one_pass(bits, out_bits, iters) || float_one_pass(bits, out_bits, iters) ||
                   gs_cuda_smooth_xy_tiles_takes(width, bits, out_bits, iters)
               ? 0
               : two_step_scratch(width, window_rows, iters).total();
}

extern "C" cudaError_t gs_cuda_smooth_xy(const void *d_src, size_t src_pitch, void *d_dst,
                                         size_t dst_pitch, uint32_t width, uint32_t window_rows,
                                         uint32_t above, uint32_t rows, uint32_t bits,
                                         uint32_t out_bits, uint32_t iters, void *d_scratch,
                                         size_t scratch_bytes, cudaStream_t stream)
{
    if (d_src == NULL || d_dst == NULL || width == 0 || rows == 0 || iters == 0 ||
        iters > GS_MAX_ITERS || (bits != 8 && bits != 16 && bits != kKindFloat) ||
        (out_bits != bits && out_bits != kKindFloat) || (uint64_t)above + rows > window_rows ||
        src_pitch < (size_t)width * (bits / 8) || dst_pitch < (size_t)width * (out_bits / 8) ||
        !aligned(d_src, src_pitch) || !aligned(d_dst, dst_pitch))
        return cudaErrorInvalidValue;
    if (one_pass(bits, out_bits, iters)) {
        XyArgs g = {(const char *)d_src, src_pitch, (char *)d_dst, dst_pitch, width, window_rows,
                    above, 0, 0, 0};
        switch (iters) {
        case 1: return smooth_xy_one_pass<1>(g, rows, stream);
        case 2: return smooth_xy_one_pass<2>(g, rows, stream);
        default: return smooth_xy_one_pass<3>(g, rows, stream);
        }
    }
    if (gs_cuda_smooth_xy_tiles_takes(width, bits, out_bits, iters))
        return gs_cuda_smooth_xy_tiles(d_src, src_pitch, d_dst, dst_pitch, width, window_rows, above,
                                       rows, iters, stream);
    if (float_one_pass(bits, out_bits, iters))
        return gs_cuda_smooth_xy_float_one_pass(d_src, src_pitch, d_dst, dst_pitch, width, window_rows,
                                                above, rows, bits, out_bits, iters, stream);
    const TwoStepScratch s = two_step_scratch(width, window_rows, iters);
    if (d_scratch == NULL || !aligned(d_scratch, 0) || scratch_bytes < s.total()) return cudaErrorInvalidValue;
    char *scr = (char *)d_scratch;
    const size_t fpitch = float_pitch(width);
    cudaError_t e = gs_cuda_smooth_rows_float(d_src, src_pitch, (float *)scr, fpitch, width, window_rows,
                                              bits, iters, s.rows_chain ? scr + s.rows_float : NULL,
                                              s.rows_chain, stream);
    if (e != cudaSuccess) return e;
    return gs_cuda_smooth_columns(scr, fpitch, kKindFloat, d_dst, dst_pitch, width, window_rows, above,
                                  rows, bits, out_bits, iters,
                                  s.columns ? scr + s.rows_float + s.rows_chain : NULL, s.columns,
                                  stream);
}
