/* registers_pixels.cuh: a thread's run of kPix pixels in registers. */
/*
 * Shared by the registers variant's kernels: loading them as exact floats, storing them
 * (samples quantized, floats as they are; a thread's run alone, or a warp's runs together
 * through shared memory), one in-place pass over a span of them, and where the row's ends
 * fall among them.
 */
#ifndef GS_CUDA_REGISTERS_PIXELS_CUH
#define GS_CUDA_REGISTERS_PIXELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "sample_io.cuh"

namespace gs_cuda {

/* Pixels per thread: two 16-byte loads of u8. In registers_kernels.cuh's kernels 32 floats of
 * state plus temporaries stay near 64 registers, so two 512-thread groups (16384-pixel rows)
 * fit an SM; registers_few_passes.cu holds 8 more and runs 24 warps an SM. */
constexpr int kPix = 32;

/* Sample k of a word of u8 (k < 4) or u16 (k < 2) samples as the low mantissa bits of 2^23:
 * the word kMagic23Bits | sample, the float 2^23 + sample. */
template <typename T> __device__ __forceinline__ uint32_t sample_bits(uint32_t word, uint32_t k)
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "integer samples of 8 or 16 bits");
    if constexpr (sizeof(T) == 1)
        return __byte_perm(word, kMagic23Bits, 0x7440u | k);
    else
        return __byte_perm(word, kMagic23Bits, 0x7400u | ((2u * k + 1u) << 4) | (2u * k));
}

/* Exact u8/u16 -> float without the slow I2F unit: subtracting 2^23 from sample_bits leaves
 * the sample. */
__device__ __forceinline__ float sample_float(uint32_t bits)
{
    return __fsub_rn(__uint_as_float(bits), kMagic23);
}
__device__ __forceinline__ float byte_to_float(uint32_t word, uint32_t k)
{
    return sample_float(sample_bits<uint8_t>(word, k));
}
__device__ __forceinline__ float half_to_float(uint32_t word, uint32_t k)
{
    return sample_float(sample_bits<uint16_t>(word, k));
}

/* Word i of an array of 16-byte vectors (i a compile-time constant after unrolling, so
 * this stays in registers; a pointer cast would force the array into local memory). */
template <int N> __device__ __forceinline__ uint32_t word_of(const uint4 (&raw)[N], int i)
{
    const uint4 q = raw[i / 4];
    return i % 4 == 0 ? q.x : i % 4 == 1 ? q.y : i % 4 == 2 ? q.z : q.w;
}

/* A thread's pixels are loaded as whole 16-byte vectors only: a vector that starts inside
 * the row lies inside the row's pitch (pitches are multiples of 16), so the row end needs no
 * scalar loads. */
template <bool kShared> __device__ __forceinline__ uint4 load16(const uint4 *p)
{
    if constexpr (kShared)
        return *p; /* shared memory through a generic pointer */
    else
        return __ldcs(p); /* global, read once: evict first */
}

/* The 16-byte vectors holding a thread's kPix samples of T, x in [xs, xs + kPix); a vector
 * that starts outside [0, width) is zeros. */
template <typename T, bool kShared>
__device__ __forceinline__ void load_vectors(const char *row, long xs, uint32_t width,
                                             uint4 (&raw)[kPix * sizeof(T) / 16])
{
    constexpr int kPerVec = 16 / (int)sizeof(T);
    const T *p = (const T *)row;
#pragma unroll
    for (int i = 0; i < kPix / kPerVec; ++i) {
        const long x = xs + (long)i * kPerVec;
        raw[i] = (x >= 0 && x < (long)width) ? load16<kShared>((const uint4 *)(p + x))
                                             : make_uint4(0u, 0u, 0u, 0u);
    }
}

/* A thread's kPix integer samples as sample_bits words; a pixel outside [0, width) is the
 * word of sample 0, so the first pass may sum them as integers (div3_of_magic_sum). */
template <typename T, bool kShared = false>
__device__ __forceinline__ void load_sample_bits(const char *row, long xs, uint32_t width,
                                                 uint32_t (&m)[kPix])
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "integer samples of 8 or 16 bits");
    constexpr int kPerWord = 4 / (int)sizeof(T);
    uint4 raw[kPix * sizeof(T) / 16];
    load_vectors<T, kShared>(row, xs, width, raw);
#pragma unroll
    for (int i = 0; i < kPix; ++i)
        m[i] = sample_bits<T>(word_of(raw, i / kPerWord), (uint32_t)(i % kPerWord));
    if (xs + kPix > (long)width) {
#pragma unroll
        for (int i = 0; i < kPix; ++i)
            if (xs + i >= (long)width) m[i] = kMagic23Bits;
    }
}

/* A thread's kPix pixels as exact floats; pixels outside [0, width) become 0 (their results
 * are never used, and zeros keep the arithmetic on its fast path). */
template <typename T, bool kShared = false>
__device__ __forceinline__ void load_pixels(const char *row, long xs, uint32_t width,
                                            float (&v)[kPix])
{
    uint4 raw[kPix * sizeof(T) / 16];
    load_vectors<T, kShared>(row, xs, width, raw);
#pragma unroll
    for (int i = 0; i < kPix; ++i) {
        if constexpr (sizeof(T) == 1)
            v[i] = byte_to_float(word_of(raw, i / 4), (uint32_t)(i % 4));
        else if constexpr (sizeof(T) == 2)
            v[i] = half_to_float(word_of(raw, i / 2), (uint32_t)(i % 2));
        else
            v[i] = __uint_as_float(word_of(raw, i));
    }
    if (xs + kPix > (long)width) {
#pragma unroll
        for (int i = 0; i < kPix; ++i)
            if (xs + i >= (long)width) v[i] = 0.0f;
    }
}

/* The kPix pixels of v as the 32-bit words of samples of T: integers quantized by Arith,
 * floats as Arith stores them (NaN canonical for float samples). */
template <typename T, class Arith>
__device__ __forceinline__ void pixel_words(const float (&v)[kPix], uint32_t (&w)[kPix * sizeof(T) / 4])
{
#pragma unroll
    for (int i = 0; i < kPix * (int)sizeof(T) / 4; ++i) {
        if constexpr (sizeof(T) == 1) {
            const uint32_t a = Arith::quantize(v[4 * i], Sample<T>::maxval);
            const uint32_t b = Arith::quantize(v[4 * i + 1], Sample<T>::maxval);
            const uint32_t c = Arith::quantize(v[4 * i + 2], Sample<T>::maxval);
            const uint32_t d = Arith::quantize(v[4 * i + 3], Sample<T>::maxval);
            w[i] = pack_low_bytes(a, b, c, d);
        } else if constexpr (sizeof(T) == 2) {
            const uint32_t a = Arith::quantize(v[2 * i], Sample<T>::maxval);
            const uint32_t b = Arith::quantize(v[2 * i + 1], Sample<T>::maxval);
            w[i] = pack_low_halves(a, b);
        } else {
            w[i] = __float_as_uint(Arith::stored(v[i]));
        }
    }
}

/* Store the pixels of [xs, xs + kPix) that fall in [xs, x1); the caller guarantees a
 * thread's range is all inside the segment's stored run [x0, x1) or all outside, so only
 * the row end cuts a vector. Integer outputs are quantized by Arith; floats as Arith stores them. */
template <typename T, class Arith>
__device__ __forceinline__ void store_pixels(char *row, long xs, long x1, const float (&v)[kPix])
{
    T *p = (T *)row;
    if (xs + kPix <= x1) {
        constexpr int kVecs = kPix * (int)sizeof(T) / 16;
        uint32_t w[kVecs * 4];
        pixel_words<T, Arith>(v, w);
        uint4 *q = (uint4 *)(p + xs);
#pragma unroll
        for (int i = 0; i < kVecs; ++i)
            __stcs(q + i, make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]));
    } else {
#pragma unroll
        for (int i = 0; i < kPix; ++i) {
            if (xs + i < x1) {
                if constexpr (sizeof(T) == 4)
                    p[xs + i] = Arith::stored(v[i]);
                else
                    p[xs + i] = (T)Arith::quantize(v[i], Sample<T>::maxval);
            }
        }
    }
}

/* Words of a lane's slot in store_pixels_warp's staging: its samples and a 16-byte pad, so
 * that the 16-byte writes of 8 consecutive lanes meet distinct banks (4.5 KiB a warp for
 * floats, 2.5 KiB for u16). The reads of 8 consecutive lanes take one lane's run for floats,
 * conflict-free; for u16 two lanes' runs, 20 words apart, whose last and first pieces share
 * a bank: no pad does both, an XOR swizzle would (by the bank model). */
template <typename T> constexpr int kStageLaneWords = kPix * (int)sizeof(T) / 4 + 4;

/* p, which the compiler may no longer take apart: a lane's pointer it would otherwise
 * rebuild in 64 bits for every constant offset from it (about 4 instructions each). */
template <typename P> __device__ __forceinline__ P *opaque(P *p)
{
    asm("" : "+l"(p));
    return p;
}

/* Lane `lane`'s pixels as words of T (pixel_words) in its slot of a warp's staging
 * (kStageLaneWords<T> words a lane), then the warp's barrier: every lane calls it. */
template <typename T, class Arith>
__device__ __forceinline__ void stage_lane_run(const float (&v)[kPix], uint32_t *stage, uint32_t lane)
{
    constexpr int kPieces = kPix * (int)sizeof(T) / 16;
    uint32_t w[kPieces * 4];
    pixel_words<T, Arith>(v, w);
    uint32_t *slot = stage + lane * kStageLaneWords<T>;
#pragma unroll
    for (int i = 0; i < kPieces; ++i)
        *(uint4 *)(slot + 4 * i) = make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
    __syncwarp();
}

/* A staged 16-byte piece q to p, cut at `room` samples (fewer than a piece: the row's end). */
template <typename T> __device__ __forceinline__ void store_piece_cut(T *p, uint4 q, long room)
{
    constexpr int kPerPiece = 16 / (int)sizeof(T);
    const uint32_t qw[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < kPerPiece; ++k) {
        if (k >= room) break;
        if constexpr (sizeof(T) == 4)
            p[k] = __uint_as_float(qw[k]);
        else
            p[k] = (T)(qw[k / 2] >> (16 * (k % 2)));
    }
}

/*
 * store_pixels for a whole warp at once, for samples of 2 or 4 bytes: lane l's pixels go to
 * row_l from xs_l, stopping at x1_l (inactive lanes store nothing). Stored one lane at a
 * time, a warp's store instruction would put 16 bytes in each of 32 lines (lanes 64 or 128
 * bytes apart), which the GPU writes at a fraction of the rate of whole lines. So the lanes
 * put their words in `stage` (kWarp x kStageLaneWords<T> words of shared memory, the warp's
 * own), and each store instruction takes 16-byte pieces of consecutive lanes' runs: lane l's
 * piece i is piece l % kPieces of lane (i * kWarp + l) / kPieces's run, kPieces being a
 * run's pieces. Every lane of the warp calls it.
 */
template <typename T, class Arith>
__device__ __forceinline__ void store_pixels_warp(char *row, long xs, long x1, bool active,
                                                  const float (&v)[kPix], uint32_t *stage,
                                                  uint32_t lane)
{
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "u8 runs are two pieces; they keep store_pixels");
    constexpr int kPieces = kPix * (int)sizeof(T) / 16; /* 16-byte pieces of a lane's run */
    constexpr int kPerPiece = 16 / (int)sizeof(T);
    constexpr int kLanesPerStep = kWarp / kPieces;      /* runs one store instruction covers */
    stage_lane_run<T, Arith>(v, stage, lane);
    const uint32_t piece = lane % kPieces;
#pragma unroll
    for (int step = 0; step < kPieces; ++step) {
        const uint32_t src = (uint32_t)step * kLanesPerStep + lane / kPieces;
        char *src_row = (char *)__shfl_sync(kFullMask, (unsigned long long)row, src);
        const long src_xs = __shfl_sync(kFullMask, xs, src), src_x1 = __shfl_sync(kFullMask, x1, src);
        const bool src_active = __shfl_sync(kFullMask, (int)active, src) != 0;
        const long x = src_xs + (long)piece * kPerPiece;
        if (!src_active || x >= src_x1) continue;
        const uint4 q = *(const uint4 *)(stage + src * kStageLaneWords<T> + 4 * piece);
        T *p = (T *)src_row + x;
        if (x + kPerPiece <= src_x1)
            __stcs((uint4 *)p, q);
        else
            store_piece_cut<T>(p, q, src_x1 - x);
    }
    __syncwarp(); /* the staging is read before the next run writes it */
}

/* [x0, x1) relative to a warp's first pixel warp_xs, clipped to its kWarp x kPix pixels:
 * the 32-bit offsets store_row_runs_warp tests. */
struct WarpSpan {
    int lo, hi;
};
__device__ __forceinline__ WarpSpan warp_span(long warp_xs, long x0, long x1)
{
    constexpr long kSpan = (long)kWarp * kPix;
    const long lo = x0 - warp_xs, hi = x1 - warp_xs;
    return {(int)(lo < 0 ? 0 : lo > kSpan ? kSpan : lo), (int)(hi < 0 ? 0 : hi > kSpan ? kSpan : hi)};
}

/*
 * store_pixels_warp for a warp whose lanes hold consecutive runs of one row, lane l's from
 * warp_xs + l x kPix on: the runs that start in [x0, x1) are stored, up to x1. Row, x0 and
 * x1 are the same for every lane, so nothing is shuffled and the tests are 32-bit offsets
 * from warp_xs. Every lane of the warp calls it.
 */
template <typename T, class Arith>
__device__ __forceinline__ void store_row_runs_warp(char *row, long warp_xs, long x0, long x1,
                                                    const float (&v)[kPix], uint32_t *stage,
                                                    uint32_t lane)
{
    static_assert(sizeof(T) == 4, "float runs only (kWarpStores): 16-bit ones have no test here");
    constexpr int kPieces = kPix * (int)sizeof(T) / 16;
    constexpr int kPerPiece = 16 / (int)sizeof(T);
    constexpr int kLanesPerStep = kWarp / kPieces;
    stage_lane_run<T, Arith>(v, stage, lane);
    const WarpSpan s = warp_span(warp_xs, x0, x1);
    /* step 0's run and piece; each step moves both by kStep pixels (constant offsets) */
    constexpr int kStep = kLanesPerStep * kPix, kStepWords = kLanesPerStep * kStageLaneWords<T>;
    const int first_run = (int)(lane / kPieces) * kPix, first_x = first_run + (int)(lane % kPieces) * kPerPiece;
    T *const first_p = opaque((T *)row + warp_xs + first_x);
    const uint32_t *first_slot = stage + lane / kPieces * kStageLaneWords<T> + 4 * (lane % kPieces);
#pragma unroll
    for (int step = 0; step < kPieces; ++step) {
        const int run = first_run + step * kStep, x = first_x + step * kStep;
        if (run >= s.lo && x + kPerPiece <= s.hi)
            __stcs((uint4 *)(first_p + step * kStep), *(const uint4 *)(first_slot + step * kStepWords));
    }
    /* a row end inside a piece (hi is then x1, and warp_xs a multiple of kPix): the lane
     * holding that piece stores the part before the end */
    const int cut = s.hi % kPerPiece, d = s.hi - cut - first_x;
    if (cut != 0 && d >= 0 && d % kStep == 0 && (s.hi - cut) / kPix * kPix >= s.lo)
        store_piece_cut<T>(first_p + d, *(const uint4 *)(first_slot + d / kStep * kStepWords), cut);
    __syncwarp(); /* the staging is read before the next run writes it */
}

/*
 * load_pixels for a warp of float32 samples whose lanes hold consecutive runs of one row,
 * lane l's from warp_xs + l x kPix on, the mirror of store_row_runs_warp. Loaded one lane at
 * a time, each 16-byte load instruction would touch 32 lines (lanes 128 bytes apart); here
 * each instruction takes 16-byte pieces of consecutive lanes' runs, one contiguous 512-byte
 * run, through the warp's staging, and each lane then reads its own run. Pixels outside
 * [0, width) become 0, as in load_pixels. Every lane of the warp calls it.
 */
__device__ __forceinline__ void load_row_runs_warp(const char *row, long warp_xs, uint32_t width,
                                                   float (&v)[kPix], uint32_t *stage, uint32_t lane)
{
    constexpr int kPieces = kPix * (int)sizeof(float) / 16; /* 16-byte pieces of a lane's run */
    constexpr int kPerPiece = 16 / (int)sizeof(float);
    constexpr int kLanesPerStep = kWarp / kPieces;
    constexpr int kSlot = kStageLaneWords<float>;
    const WarpSpan s = warp_span(warp_xs, 0, width);
    const int first_x = (int)(lane / kPieces) * kPix + (int)(lane % kPieces) * kPerPiece;
    const float *const first_p = opaque((const float *)row + warp_xs + first_x);
    uint32_t *first_slot = stage + lane / kPieces * kSlot + 4 * (lane % kPieces);
#pragma unroll
    for (int step = 0; step < kPieces; ++step) {
        const int x = first_x + step * kLanesPerStep * kPix;
        const uint4 q = x >= s.lo && x < s.hi ? __ldcs((const uint4 *)(first_p + step * kLanesPerStep * kPix))
                                              : make_uint4(0u, 0u, 0u, 0u);
        *(uint4 *)(first_slot + step * kLanesPerStep * kSlot) = q;
    }
    __syncwarp();
    const uint32_t *slot = stage + lane * kSlot;
#pragma unroll
    for (int i = 0; i < kPieces; ++i) {
        const uint4 q = *(const uint4 *)(slot + 4 * i);
        v[4 * i] = __uint_as_float(q.x), v[4 * i + 1] = __uint_as_float(q.y);
        v[4 * i + 2] = __uint_as_float(q.z), v[4 * i + 3] = __uint_as_float(q.w);
    }
    __syncwarp(); /* the staging is read before it is written again */
    const long xs = warp_xs + (long)lane * kPix;
    if (xs + kPix > (long)width) {
#pragma unroll
        for (int i = 0; i < kPix; ++i)
            if (xs + i >= (long)width) v[i] = 0.0f;
    }
}

/* One pass over elements [Lo, Hi) of a thread's pixels v, none of them a row end: in place,
 * carrying the next pixel's sum. The old values just outside are v[Lo - 1] and v[Hi], or l
 * and r where those fall outside the array. */
template <class Arith, int Lo, int Hi, int N>
__device__ __forceinline__ void pass_span(float (&v)[N], float l, float r)
{
    static_assert(0 <= Lo && Lo < Hi && Hi <= N, "a pass's span lies in the array");
    /* element i's old value, i a compile-time constant after unrolling */
    auto old = [&](int i) { return i < 0 ? l : i >= N ? r : v[i]; };
    float sum = sum3(old(Lo - 1), v[Lo], old(Lo + 1));
#pragma unroll
    for (int i = Lo; i < Hi; ++i) {
        /* the next pixel's sum before this one's quotient: the old v[i] is then dead, and
         * the quotient can take its register */
        const float next_sum = i + 1 < Hi ? sum3(v[i], old(i + 1), old(i + 2)) : 0.0f;
        v[i] = Arith::div3(sum);
        sum = next_sum;
    }
}

/* One pass over all kPix of a thread's pixels, l and r the old values just outside them. */
template <class Arith>
__device__ __forceinline__ void pass_interior(float (&v)[kPix], float l, float r)
{
    pass_span<Arith, 0, kPix>(v, l, r);
}

/*
 * Row ends. A segment starts on a multiple of kPix and x = 0 starts the first segment, so
 * x = 0 is always element 0 of its thread. x = width - 1 can be any element e: its thread
 * saves the two old values the end needs before the pass (a switch on e, so every register
 * index is a constant: a jump, not a chain of kPix selects) and writes the adaptive mean
 * back after it. A warp holding such an end pays about 30 instructions a pass for this;
 * an end on element kPix - 1 needs no switch (RowEnds.warp_switch, pass_with_ends).
 */
static_assert(kPix == 32, "the switches below name every element");
#define GS_FAST_CASES(X)                                                                   \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)    \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29)      \
    X(30) X(31)
/* Elements past a thread's own: x = width - 1 in the halo a thread holds to its right
 * (registers_few_passes.cu, kHalo of 4 at most). */
#define GS_HALO_CASES(X) X(32) X(33) X(34) X(35)

/* The old values x = width - 1 needs, when it is element Off + e of v: a = element
 * Off + e - 1 (or `before`, the value left of the array, when that is -1), b = element Off + e. */
template <int Off, typename E, int N>
__device__ __forceinline__ void gather_right_end(const E (&v)[N], E before, int e, E &a, E &b)
{
    static_assert(Off + kPix <= N, "every case names an element");
    switch (e) {
#define GS_GATHER(k)                                                                       \
    case k:                                                                                \
        if constexpr (Off + (k) < N) {                                                     \
            a = Off + (k) == 0 ? before : v[Off + (k) == 0 ? 0 : Off + (k) - 1];           \
            b = v[Off + (k)];                                                              \
        } else {                                                                           \
            a = b = E{};                                                                   \
        }                                                                                  \
        break;
        GS_FAST_CASES(GS_GATHER)
        GS_HALO_CASES(GS_GATHER)
#undef GS_GATHER
    default:
        a = b = E{};
        break;
    }
}

/* Element Off + e of v becomes m. */
template <int Off, int N>
__device__ __forceinline__ void scatter_right_end(float (&v)[N], int e, float m)
{
    switch (e) {
#define GS_SCATTER(k)                                                                      \
    case k:                                                                                \
        if constexpr (Off + (k) < N) v[Off + (k)] = m;                                     \
        break;
        GS_FAST_CASES(GS_SCATTER)
        GS_HALO_CASES(GS_SCATTER)
#undef GS_SCATTER
    default:
        break;
    }
}

/* Where a thread's pixels meet the row's ends, and what its warp does about them each pass.
 * The switches cost a warp about 30 instructions a pass; a row end on a thread's last
 * element (widths that are multiples of kPix) needs none. Both flags are uniform per warp:
 * the shuffles need whole warps. */
struct RowEnds {
    bool has_left;     /* x = 0 is this thread's element 0 */
    int e_right;       /* the element holding x = width - 1, or -1 */
    bool warp_has_end; /* a thread of the warp holds a row end */
    bool warp_switch;  /* a thread of the warp holds x = width - 1 elsewhere than on its
                          element kPix - 1 */
};

/* The row ends of the thread whose element 0 is x = xs; x = width - 1 counts when it is
 * among its elements [0, reach): kPix, or more for a thread that also holds pixels to the
 * right of its own (registers_few_passes.cu). */
__device__ __forceinline__ RowEnds row_ends(long xs, uint32_t width, int reach = kPix)
{
    RowEnds e;
    e.has_left = xs == 0;
    const long er = (long)width - 1 - xs;
    e.e_right = (er >= 0 && er < reach) ? (int)er : -1;
    e.warp_has_end = __any_sync(kFullMask, e.has_left || e.e_right >= 0);
    /* (as written for reach == kPix, where e_right < kPix, its code is the older one's) */
    const bool off_last = reach == kPix ? e.e_right < kPix - 1 : e.e_right != kPix - 1;
    e.warp_switch = __any_sync(kFullMask, e.e_right >= 0 && off_last);
    return e;
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_REGISTERS_PIXELS_CUH */
