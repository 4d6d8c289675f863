/* column_walk.cuh: the float walk down a window's columns, K passes rolled through registers. */
/*
 * Shared by the column launches (smooth_columns.cu), whose rows enter as loaded, and the
 * one-pass xy launches (smooth_xy_float.cu), whose rows take their K row passes as they
 * enter; the u8 one-pass xy walk (smooth_xy.cu) stages its rows with StagedRows too, and
 * the u8 xy tiles (smooth_xy_tiles.cu) run column_batch over rows passed in shared memory.
 *
 * A thread owns C neighbouring columns of a segment of output rows. It walks down them from
 * K rows above the segment to K rows below (clipped to the window), keeping for each level
 * (0 = the input, j = after j passes) the last three rows' values in registers: at each step
 * a new input row enters level 0 and every level j computes its row y - j. A segment edge
 * that is not a window end spoils one more row each pass, so the K rows of context on each
 * side absorb exactly that. Rows enter kWalkUnroll at a time, one vector a thread a row,
 * before the passes run over them; 8 and 16-bit rows are copied into shared memory two
 * batches ahead (StagedRows), so the memory system stays busy while the passes run. Only the
 * batches at a window's ends check bounds and use the two-term mean. Plain 8-bit rows keep
 * level 0 as packed integer words (PackedLevel0), so the first pass sums two columns an add.
 */
#ifndef GS_CUDA_COLUMN_WALK_CUH
#define GS_CUDA_COLUMN_WALK_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "packed_passes.cuh"
#include "sample_io.cuh"
#include "stencil_math.h"

namespace gs_cuda {

constexpr int kWalkUnroll = 6; /* rows loaded ahead: a multiple of 3 (ring slots) */
static_assert(kWalkUnroll % 3 == 0, "a batch keeps every row in the same ring slot");

/* The 3-point mean of a level, gs_mean3's sum and Div's quotient. */
template <class Div> __device__ __forceinline__ float column_mean3(float up, float mid, float down)
{
    return Div::div3(sum3(up, mid, down));
}

/* Row t (of a window of `rows`) of a level, from the level before's rows t-1, t, t+1; the
 * window's ends take the two-term mean. */
template <class Div>
__device__ __forceinline__ float column_step(float up, float mid, float down, uint32_t t,
                                             uint32_t rows)
{
    if (rows == 1) return mid;
    if (t == 0) return gs_mean2(mid, down);
    if (t == rows - 1) return gs_mean2(up, mid);
    return column_mean3<Div>(up, mid, down);
}

template <typename T, int C> struct Vec;
template <> struct Vec<uint8_t, 4> { using type = uchar4; };
template <> struct Vec<uint16_t, 4> { using type = ushort4; };
template <> struct Vec<float, 4> { using type = float4; };
template <> struct Vec<uint8_t, 2> { using type = uchar2; };
template <> struct Vec<uint16_t, 2> { using type = ushort2; };
template <> struct Vec<float, 2> { using type = float2; };

/* A vector's C samples as floats. */
template <typename V, int C> __device__ __forceinline__ void vec_floats(const V &q, float (&out)[C])
{
    out[0] = (float)q.x, out[1] = (float)q.y;
    if constexpr (C == 4) out[2] = (float)q.z, out[3] = (float)q.w;
}

/* The C values from column x (below width) of a row of `width` samples, those inside it;
 * floats are stored as Div stores them (NaN canonical for float32 samples). kWhole: the
 * caller knows all C lie in the row (no test, and no branch around the partial store). */
template <typename T, class Div, int C, bool kWhole = false>
__device__ __forceinline__ void store_cols(char *row, uint32_t x, uint32_t width,
                                           const float (&v)[C])
{
    T *p = (T *)row + x;
    if (kWhole || x + C <= width) {
        /* ReciprocalFma's rounding leaves each sample in its word's low bits */
        if constexpr (sizeof(T) == 4 && C == 2) {
            *(float2 *)p = make_float2(Div::stored(v[0]), Div::stored(v[1]));
        } else if constexpr (sizeof(T) == 4) {
            *(float4 *)p = make_float4(Div::stored(v[0]), Div::stored(v[1]), Div::stored(v[2]),
                                       Div::stored(v[3]));
        } else if constexpr (C == 2) {
            const float m = Sample<T>::maxval;
            const uint32_t a = ReciprocalFma::quantize(v[0], m), b = ReciprocalFma::quantize(v[1], m);
            if constexpr (sizeof(T) == 1)
                *(uint16_t *)p = (uint16_t)__byte_perm(a, b, 0x0040u);
            else
                *(uint32_t *)p = pack_low_halves(a, b);
        } else {
            const float m = Sample<T>::maxval;
            const uint32_t a = ReciprocalFma::quantize(v[0], m), b = ReciprocalFma::quantize(v[1], m);
            const uint32_t c = ReciprocalFma::quantize(v[2], m), d = ReciprocalFma::quantize(v[3], m);
            if constexpr (sizeof(T) == 1)
                *(uint32_t *)p = pack_low_bytes(a, b, c, d);
            else
                *(uint2 *)p = make_uint2(pack_low_halves(a, b), pack_low_halves(c, d));
        }
    } else {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            if (x + c >= width) continue;
            if constexpr (sizeof(T) == 4)
                p[c] = Div::stored(v[c]);
            else
                store_sample(p + c, v[c]);
        }
    }
}

/* The bytes of a vector of C samples of T from column x (a multiple of C, below width) that
 * lie inside a row of `width` samples: the part of it a staged copy reads. */
template <typename T, int C> __device__ __forceinline__ uint32_t row_vector_bytes(uint32_t x, uint32_t width)
{
    return (x + C <= width ? C : width - x) * (uint32_t)sizeof(T);
}

/* A plain walk's vector of C samples of Tin as loaded: 4 bytes as one word, which level 0
 * takes apart as packed words (PackedLevel0; a uchar4 made the compiler move each byte
 * alone). */
template <typename Tin, int C> struct LoadedVec { using type = typename Vec<Tin, C>::type; };
template <> struct LoadedVec<uint8_t, 4> { using type = uint32_t; };

/* The rows of a plain column walk: C samples of type Tin from column x (a multiple of C,
 * below width), as loaded. */
template <typename Tin, int C> struct LoadedRows {
    using Raw = typename LoadedVec<Tin, C>::type;
    uint32_t x, width;
    /* one vector when all C samples lie in the row (rows are 16-byte aligned), else one by
     * one, 0 past the row's end */
    __device__ __forceinline__ Raw load(const char *row) const
    {
        static_assert(!std::is_same<Raw, uint32_t>::value, "8-bit rows are staged, not loaded one by one");
        const Tin *p = (const Tin *)row + x;
        if (x + C <= width) return load_whole(row);
        Tin s[C];
#pragma unroll
        for (int c = 0; c < C; ++c) s[c] = x + c < width ? p[c] : Tin(0);
        if constexpr (C == 4) return Raw{s[0], s[1], s[2], s[3]};
        else return Raw{s[0], s[1]};
    }
    /* the same when all C samples lie in the row */
    __device__ __forceinline__ Raw load_whole(const char *row) const { return *(const Raw *)((const Tin *)row + x); }
    static __device__ __forceinline__ Raw zero() { return Raw{}; }
    /* the bytes of a row's vector inside the row, and where they start */
    __device__ __forceinline__ uint32_t row_bytes() const { return row_vector_bytes<Tin, C>(x, width); }
    __device__ __forceinline__ size_t row_offset() const { return (size_t)x * sizeof(Tin); }
    /* the row as it enters the walk: as loaded */
    __device__ __forceinline__ void enter(const Raw &r, float (&out)[C]) const
    {
        static_assert(!std::is_same<Raw, uint32_t>::value, "8-bit rows enter as packed words (PackedLevel0)");
        vec_floats<Raw, C>(r, out);
    }
};

/*
 * Level 0 of a walk over plain 8-bit rows of 4 columns, as two packed integer words a row
 * (even_bytes: columns 0 and 2 in the low and high halves, odd_bytes: 1 and 3): the first
 * pass's sum of three rows is one integer add for two columns, and a half converts to float
 * in one instruction (I2F.U16 selects the high half itself). Its bits are the float walk's:
 * sums of three integers below 768 are exact in float, so (float)(a + b + c) is sum3 of the
 * three as floats. Taking each byte out of the staged word to float cost three instructions
 * (a byte permute, a mask and a conversion) and the sum two float adds: 75 of a K=10 batch's
 * 1064 (docs/performance.md). The window's ends convert each half alone for column_step.
 */
template <class Rows> struct PackedLevel0 : std::false_type {};
template <> struct PackedLevel0<LoadedRows<uint8_t, 4>> : std::true_type {};

/* Column c (0 to 3) of a packed level-0 pair `w` (even, odd words), as a float. */
__device__ __forceinline__ float packed_column(const uint32_t (&w)[2], int c)
{
    const uint32_t word = w[c % 2];
    return (float)(c < 2 ? word & 0xffffu : word >> 16);
}

/*
 * One batch of U rows y .. y + U - 1 through every level (U is kWalkUnroll, the xy tiles'
 * kBatchRows there). Level j's row t lives in v[j][t % 3]; segments start their walk at w0,
 * batches are a multiple of 3 rows long, so every slot index below is a compile-time constant
 * (no register moves to roll the rows). kInterior: every row of the batch is inside the window
 * and every row a level computes is neither of its ends, so no bounds or end checks run (most
 * batches). The batch's rows are in[] (Rows::zero() from w1 on, outside interior batches),
 * each entering level 0 through rows.enter(raw, floats) (or as packed words into p0:
 * PackedLevel0), on every lane of a warp alike. The thread stores its columns from x when
 * `stores`. kStoresAll (an interior batch whose output rows all lie in the segment): the batch
 * steps one output row pointer and stores with no row tests; kWholeStores (with it): the
 * thread's C columns all lie in the row, so no column test either.
 */
template <int K, typename Tout, class Div, bool kInterior, bool kStoresAll, bool kWholeStores,
          int C, class Rows, int U>
__device__ __forceinline__ void column_batch(float (&v)[K + 1][3][C], uint32_t (&p0)[3][2], const Rows &rows,
                                             const typename Rows::Raw (&in)[U], char *dst,
                                             size_t dst_pitch, uint32_t x, bool stores,
                                             uint32_t width, uint32_t y, uint32_t w0, uint32_t w1,
                                             uint32_t s0, uint32_t s1, uint32_t above)
{
    static_assert(U % 3 == 0, "a batch keeps every row in the same ring slot");
    static_assert(kInterior || !kStoresAll, "only interior batches store every row");
    static_assert(kStoresAll || !kWholeStores,
                  "only batches that store every row skip the column test");
    char *out_row = kStoresAll ? dst + (size_t)(y - K - above) * dst_pitch : nullptr;
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const uint32_t yy = y + u;
        if (!kInterior && yy >= w1 + K) break;
        /* rows past the window's end enter as zeros and are never read as values */
        constexpr bool kPacked = PackedLevel0<Rows>::value;
        static_assert(!kPacked || C == 4, "packed level 0 holds 4 columns in two words");
        if constexpr (kPacked) {
            p0[u % 3][0] = even_bytes(in[u]), p0[u % 3][1] = odd_bytes(in[u]);
        } else {
            rows.enter(in[u], v[0][u % 3]);
        }
#pragma unroll
        for (int j = 1; j <= K; ++j) {
            /* level j's row yy - j from level j-1's rows yy-j-1, yy-j, yy-j+1; slots are
             * taken mod 3 of (u - j + offsets), kept non-negative */
            constexpr int base = 3 * (K + 2);
            const int s_up = (u - j - 1 + base) % 3, s_mid = (u - j + base) % 3, s_down = (u - j + 1 + base) % 3;
            float *up = v[j - 1][s_up], *mid = v[j - 1][s_mid], *down = v[j - 1][s_down];
            float *out = v[j][s_mid];
            const uint32_t t = yy - j - w0; /* rows outside [w0, w1) are never read as values */
            if (kPacked && j == 1) {
                const uint32_t(&pu)[2] = p0[s_up], (&pm)[2] = p0[s_mid], (&pd)[2] = p0[s_down];
                if constexpr (kInterior) {
                    const uint32_t sums[2] = {pu[0] + pm[0] + pd[0], pu[1] + pm[1] + pd[1]};
#pragma unroll
                    for (int c = 0; c < C; ++c) out[c] = Div::div3(packed_column(sums, c));
                } else {
#pragma unroll
                    for (int c = 0; c < C; ++c)
                        out[c] = column_step<Div>(packed_column(pu, c), packed_column(pm, c),
                                                  packed_column(pd, c), t, w1 - w0);
                }
                continue;
            }
#pragma unroll
            for (int c = 0; c < C; ++c)
                out[c] = kInterior ? column_mean3<Div>(up[c], mid[c], down[c])
                                   : column_step<Div>(up[c], mid[c], down[c], t, w1 - w0);
        }
        const uint32_t t = yy - K;
        const float(&result)[C] = v[K][(u - K + 3 * K) % 3];
        if constexpr (kStoresAll) {
            if (stores) store_cols<Tout, Div, C, kWholeStores>(out_row, x, width, result);
            out_row += dst_pitch;
        } else if (stores && (kInterior || yy >= w0 + K) && t >= s0 && t < s1) {
            store_cols<Tout, Div>(dst + (size_t)(t - above) * dst_pitch, x, width, result);
        }
    }
}

/*
 * Rows staged in shared memory ahead of their batch: each thread copies its own vector of
 * each row with cp.async (the bytes past a row's end zero-filled), the next
 * kWalkStages - 1 batches in flight while one runs its passes, and reads back only what it copied, so no
 * barrier is needed and the registers hold one batch. Loading the next batch into registers
 * instead held too many of them (docs/performance.md, the ideas dropped).
 */
constexpr int kWalkStages = 3;    /* batches a thread holds in shared memory: 2 in flight */
constexpr int kWalkThreads = 128; /* threads a block of every staged walk */

template <typename Raw> __device__ __forceinline__ Raw *walk_stage_buffer()
{
    __shared__ Raw stage[kWalkStages * kWalkUnroll * kWalkThreads];
    return stage;
}

/* Copy `bytes` (<= sizeof(Raw), the rest zero-filled) from global `src` to shared `dst`. */
template <typename Raw> __device__ __forceinline__ void stage_copy(Raw *dst, const char *src, uint32_t bytes)
{
    static_assert(sizeof(Raw) == 4 || sizeof(Raw) == 8 || sizeof(Raw) == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"((uint32_t)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"((int)sizeof(Raw)), "r"(bytes)
                 : "memory");
}

/* The same for a whole vector: without a source size ptxas needs no zero-fill arithmetic
 * (about ten instructions a copy). */
template <typename Raw> __device__ __forceinline__ void stage_copy_whole(Raw *dst, const char *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((uint32_t)__cvta_generic_to_shared(dst)),
                 "l"(src), "n"((int)sizeof(Raw))
                 : "memory");
}

/*
 * A thread's rows of a walk, kWalkUnroll at a time: start(y0) sends the first kWalkStages - 1
 * batches; before the batch from y, next(y) sends the one kWalkStages - 1 batches on and
 * waits for this one; row(u) reads its row u; done() moves to the next batch; finish() waits
 * for the copies no batch read, before the next start(). Rows from `end` on are not copied
 * (their slots are never read as values). Raw: the thread's vector of a row, `bytes` of it
 * from `offset` of each row inside the row.
 */
template <typename Raw> struct StagedRows {
    Raw *slots;
    const char *src;
    size_t pitch, offset;
    uint32_t bytes, end;
    int slot;
    __device__ __forceinline__ StagedRows(const char *src_, size_t pitch_, size_t offset_, uint32_t bytes_)
        : slots(walk_stage_buffer<Raw>() + threadIdx.x), src(src_), pitch(pitch_), offset(offset_),
          bytes(bytes_), end(0), slot(0)
    {
    }
    /* A batch of whole vectors, every row before `end` (most batches), takes the plain copy
     * and steps one row pointer: the per-row bounds test, row address and source size took
     * about 20 instructions a row, a tenth of the u8 K=10 walk's. */
    __device__ __forceinline__ void send(uint32_t y0, int s) const
    {
        Raw *dst = slots + s * kWalkUnroll * kWalkThreads;
        const char *row = src + (size_t)y0 * pitch + offset;
        if (y0 + kWalkUnroll <= end && bytes == sizeof(Raw)) {
#pragma unroll
            for (int u = 0; u < kWalkUnroll; ++u, row += pitch) stage_copy_whole(dst + u * kWalkThreads, row);
        } else {
#pragma unroll
            for (int u = 0; u < kWalkUnroll; ++u, row += pitch)
                if (y0 + u < end) stage_copy(dst + u * kWalkThreads, row, bytes);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    __device__ __forceinline__ void start(uint32_t y0, uint32_t end_)
    {
        end = end_, slot = 0;
#pragma unroll
        for (int b = 0; b + 1 < kWalkStages; ++b) send(y0 + b * kWalkUnroll, b);
    }
    __device__ __forceinline__ void next(uint32_t y) const
    {
        send(y + (kWalkStages - 1) * kWalkUnroll, slot == 0 ? kWalkStages - 1 : slot - 1);
        asm volatile("cp.async.wait_group %0;" ::"n"(kWalkStages - 1) : "memory");
    }
    __device__ __forceinline__ Raw row(int u) const { return slots[(slot * kWalkUnroll + u) * kWalkThreads]; }
    __device__ __forceinline__ void done() { slot = slot + 1 == kWalkStages ? 0 : slot + 1; }
    /* wait for every copy sent, before the slots are written again */
    __device__ __forceinline__ void finish() const { asm volatile("cp.async.wait_all;" ::: "memory"); }
};

/* The output rows of one launch, window coordinates: one range of rows, or two (the float
 * walk at both window ends of a u8 launch, in one launch: each end took 8.5 us alone for
 * 3 rows, much of it a launch's own cost). dst's first row is window row `above`, so a row
 * t of either range is stored at dst row t - above. Each range is cut into segments of
 * seg_rows; the first range's come first. */
struct ColumnRows {
    uint32_t above;
    uint32_t start[2], count[2]; /* range r: window rows [start[r], start[r] + count[r]) */
    uint32_t seg_rows;
    uint32_t first_segs;         /* segments of range 0 */
    uint32_t segs;               /* of both */
};

__host__ __device__ inline uint32_t segments_of(uint32_t rows, uint32_t seg_rows)
{
    return (rows + seg_rows - 1) / seg_rows;
}

/* A launch's output rows: [a0, a0 + an) and [b0, b0 + bn) (bn 0: none), dst at window row
 * above, segments of seg_rows. */
inline ColumnRows column_rows(uint32_t above, uint32_t a0, uint32_t an, uint32_t b0, uint32_t bn,
                              uint32_t seg_rows)
{
    ColumnRows r = {above, {a0, b0}, {an, bn}, seg_rows, 0, 0};
    r.first_segs = segments_of(an, seg_rows);
    r.segs = r.first_segs + segments_of(bn, seg_rows);
    return r;
}

/* The window rows [s0, s1) of segment `seg` (< r.segs). */
__device__ __forceinline__ void segment_rows(const ColumnRows &r, uint32_t seg, uint32_t &s0, uint32_t &s1)
{
    const int which = seg < r.first_segs ? 0 : 1;
    const uint32_t local = which == 0 ? seg : seg - r.first_segs;
    const uint32_t start = which == 0 ? r.start[0] : r.start[1];
    const uint32_t end = start + (which == 0 ? r.count[0] : r.count[1]);
    s0 = start + local * r.seg_rows;
    s1 = s0 + r.seg_rows < end ? s0 + r.seg_rows : end;
}

/* Level values of a walk's start: every level's three rows 0. */
template <int L, int C> __device__ __forceinline__ void zero_levels(float (&v)[L][3][C])
{
#pragma unroll
    for (int j = 0; j < L; ++j)
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int c = 0; c < C; ++c) v[j][i][c] = 0.0f;
}

/* batch(interior, stores_all, whole_stores) with each flag a std::true_type or
 * std::false_type: the column_batch variant for the batch (stores_all implies interior,
 * whole_stores is taken only with stores_all). */
template <class Batch>
__device__ __forceinline__ void batch_variant(bool interior, bool stores_all, bool whole_stores, Batch &&batch)
{
    using T = std::true_type;
    using F = std::false_type;
    if (stores_all && whole_stores)
        batch(T{}, T{}, T{});
    else if (stores_all)
        batch(T{}, T{}, F{});
    else if (interior)
        batch(T{}, F{}, F{});
    else
        batch(F{}, F{}, F{});
}

/* K passes rolled through registers, in float, for the segments blockIdx.y, + gridDim.y, ...
 * of `out`. Window rows [0, rows); a row t of the output is written to dst row t - out.above,
 * columns from x when `stores`. Rows come from `in_rows` (LoadedRows or the like): Raw
 * zero(), enter(raw, level 0's floats), and row_bytes() and row_offset() of the thread's
 * vector (staged rows) or Raw load(row) (float32 rows). 8 and 16-bit rows are staged
 * (StagedRows); float32 rows are loaded into registers a batch at a time, where staging
 * measured no faster and the xy two steps' float columns 5% slower (docs/performance.md). */
template <int K, typename Tout, class Div, int C, class Rows>
__device__ __forceinline__ void column_walk(const Rows &in_rows, const char *src, size_t src_pitch,
                                            char *dst, size_t dst_pitch, uint32_t x, bool stores,
                                            uint32_t width, uint32_t rows, const ColumnRows &out)
{
    using Raw = typename Rows::Raw;
    constexpr bool kStaged = sizeof(Raw) / C < 4;
    const uint32_t above = out.above;
    StagedRows<Raw> staged(src, src_pitch, in_rows.row_offset(), in_rows.row_bytes());
    const bool whole_loads = in_rows.row_bytes() == sizeof(Raw);
    const bool whole_stores = x + C <= width; /* the thread's C output columns lie in the row */
    for (uint32_t seg = blockIdx.y; seg < out.segs; seg += gridDim.y) {
        uint32_t s0, s1;
        segment_rows(out, seg, s0, s1);
        const uint32_t w0 = s0 > (uint32_t)K ? s0 - K : 0;
        const uint32_t w1 = s1 + K < rows ? s1 + K : rows;
        float v[K + 1][3][C];
        uint32_t p0[3][2] = {}; /* level 0 where PackedLevel0, else unused */
        zero_levels(v);
        /* A segment edge that is not a window end needs no end rule: the rows its levels
         * compute there feed only the K rows of context, never a stored row. Past such an end
         * the walk reads the window's real rows (every row a batch can reach lies in the
         * window), so all of the segment's batches there run as interior. */
        const bool free_start = w0 > 0;
        const bool free_end = w1 + K + kWalkUnroll <= rows;
        if constexpr (kStaged) staged.start(w0, free_end ? w1 + K + kWalkUnroll : w1);
        for (uint32_t y = w0; y < w1 + K; y += kWalkUnroll) {
            if constexpr (kStaged) staged.next(y);
            /* interior: the batch's loads are inside the window, and the rows its levels
             * compute, y - K - w0 .. y + kWalkUnroll - 2 - w0, are neither window end */
            const bool interior =
                (free_start || y >= w0 + K + 1) && (free_end || y + kWalkUnroll + 1 <= w1);
            auto batch = [&](auto interior_tag, auto stores_all_tag, auto whole_tag) {
                constexpr bool kInterior = decltype(interior_tag)::value;
                constexpr bool kStoresAll = decltype(stores_all_tag)::value;
                constexpr bool kWholeStores = decltype(whole_tag)::value;
                Raw in[kWalkUnroll];
                if constexpr (kStaged) {
#pragma unroll
                    for (int u = 0; u < kWalkUnroll; ++u) {
                        if (!kInterior && y + u >= w1) in[u] = Rows::zero();
                        else in[u] = staged.row(u);
                    }
                } else if constexpr (kInterior) {
                    /* one test a batch for the thread's vector, one row pointer stepped: the
                     * test and the row address a row took 10 instructions of 80 */
                    const char *row = src + (size_t)y * src_pitch;
                    if (whole_loads) {
#pragma unroll
                        for (int u = 0; u < kWalkUnroll; ++u, row += src_pitch) in[u] = in_rows.load_whole(row);
                    } else {
#pragma unroll
                        for (int u = 0; u < kWalkUnroll; ++u, row += src_pitch) in[u] = in_rows.load(row);
                    }
                } else {
#pragma unroll
                    for (int u = 0; u < kWalkUnroll; ++u) {
                        if (y + u >= w1) in[u] = Rows::zero();
                        else in[u] = in_rows.load(src + (size_t)(y + u) * src_pitch);
                    }
                }
                column_batch<K, Tout, Div, kInterior, kStoresAll, kWholeStores, C>(
                    v, p0, in_rows, in, dst, dst_pitch, x, stores, width, y, w0, w1, s0, s1, above);
            };
            /* float32 rows: an interior batch whose output rows y - K .. y + kWalkUnroll - 1 - K
             * all lie in the segment stores them without row tests (the staged walks do not:
             * 2-5% slower there, 8 bytes spilled in the u8 K=10 walk), and, where the thread's
             * columns all lie in the row (all but a row's last thread), without the column
             * test: its branch around the partial store took 3 of a row's 94 instructions in
             * u8 xy K=10's columns (BSSY, BRA, BSYNC) */
            const bool stores_all = !kStaged && interior && y >= s0 + K && y + kWalkUnroll <= s1 + K;
            batch_variant(interior, stores_all, whole_stores, batch);
            if constexpr (kStaged) staged.done();
        }
        /* copies past the last batch may still be in flight: the thread's next segment
         * writes the same slots */
        if constexpr (kStaged) staged.finish();
    }
}

/* Output rows a segment of a K-pass walk asks before wave fitting: default_rows, or enough
 * that the 2K rows of context it walks beyond its own stay within 1/32 of them (at K = 10,
 * 256-row segments walked 7% more rows than they stored). */
constexpr uint32_t walk_segment_rows(int K, uint32_t default_rows)
{
    return default_rows > 64u * (uint32_t)K ? default_rows : 64u * (uint32_t)K;
}

/* Launch Kernel(src, src_pitch, dst, dst_pitch, width, rows, ColumnRows), a column walk, over
 * output rows [a0, a0 + an) and [b0, b0 + bn) (bn 0: none) of a window of `rows`, dst at
 * window row `above`: blocks_x blocks of kWalkThreads across, with `smem` bytes of dynamic
 * shared memory each, segments of about default_seg_rows fitted to whole waves of the
 * device. */
template <auto Kernel>
cudaError_t launch_column_walk(uint32_t blocks_x, uint32_t default_seg_rows, const void *src,
                               size_t src_pitch, void *dst, size_t dst_pitch, uint32_t width,
                               uint32_t rows, uint32_t above, uint32_t a0, uint32_t an, uint32_t b0,
                               uint32_t bn, cudaStream_t stream, size_t smem = 0)
{
    if (an + bn == 0) return cudaSuccess;
    uint32_t seg_rows;
    cudaError_t e = wave_segment_rows<Kernel>(kWalkThreads, smem, an + bn, blocks_x, default_seg_rows, &seg_rows);
    if (e != cudaSuccess) return e;
    const ColumnRows out = column_rows(above, a0, an, b0, bn, seg_rows);
    Kernel<<<segment_grid(blocks_x, out.segs), kWalkThreads, smem, stream>>>((const char *)src, src_pitch,
                                                                            (char *)dst, dst_pitch, width, rows, out);
    return cudaGetLastError();
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_COLUMN_WALK_CUH */
