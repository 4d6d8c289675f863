/* registers_few_passes.cu: the registers variant's launch for at most kFewPassesMax passes. */
/*
 * From integer samples: each thread smooths its kPix pixels alone, from its own copy of the
 * pixels either side, with no barrier, shuffle or shared memory between passes; u8 segments
 * away from the row ends as exact integer sums, the others in float with pass 1's sums
 * taken as integers; its next segment's loads in flight while it works.
 */
#include "fast_arith.cuh"
#include "launch_common.cuh"
#include "packed_passes.cuh"
#include "registers_pixels.cuh"
#include "sample_io.cuh"
#include "launch_chain.cuh"
#include "registers.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

/*
 * Layout. A row is cut into segments of kPix pixels, one a thread, numbered row by row, and
 * consecutive lanes of a warp take consecutive segments (a warp may hold the end of one row
 * and the start of the next). A pass spoils one pixel at each edge of what a thread holds,
 * so for K passes a thread also holds the K pixels either side of its segment (kHalo at
 * most): pass p computes the pixels within K - p of its segment, and the segment's own kPix
 * are right after pass K. For K = 3 that is 102 pixel-passes for 96, where sharing the
 * neighbours at every pass (registers_kernels.cuh's groups) costs a shuffle or a barrier a
 * pass. The halo comes from the neighbouring lanes' loaded words by a shuffle a word each
 * side (one word of u8, two of u16); a warp's outer lanes load theirs with their own
 * segment.
 *
 * A warp none of whose lanes holds a row end (within kHalo of its segment), with u8 samples
 * in and out, takes the K passes as exact integer sums, two pixels a word, and rounds N / 3^K
 * once (stencil_math.h: why that gives the float passes' bytes there): 8.3 instructions
 * a pixel for K = 3 where the float passes take 19.7. Other warps run the float passes:
 * pass 1 adds each pixel's three words as integers (div3_of_magic_sum), the later passes are
 * the float mean with ShortDivide (every pass of a launch from integer samples is among the
 * first GS_SHORT_DIV_PASSES). Row ends take the adaptive mean as in the other layouts
 * (RowEnds): x = 0 is always element kHalo, x = width - 1 any element from kHalo on, in the
 * right halo too when the row's last segment holds fewer pixels than the passes.
 *
 * A block is one warp, and a warp takes kTurns runs of kWarp consecutive segments, a
 * segment a lane each turn; it issues the loads of its next turn before it smooths the
 * current one. One-warp blocks free their registers as soon as their warp is done, where
 * a persistent grid of 256-thread blocks striding over the segments keeps SMs waiting on
 * warps that finish far apart.
 */

namespace gs_cuda {

namespace {

constexpr int kHalo = (int)kFewPassesMax;  /* pixels held either side of a segment */
constexpr int kHeld = kPix + 2 * kHalo;     /* pixels a thread holds */
constexpr uint32_t kTurns = 8;              /* turns of a warp: kTurns * kWarp segments */
/* Warps an SM for u8 input (at most 80 registers a thread, no spills) and for u16, whose
 * loaded segment takes twice the registers (at most 96). Launches that store 16-bit samples
 * or floats also hold a warp's staging in shared memory (2.5 or 4.5 KiB a block: 24 blocks
 * take 108 KiB of an SM's 228). */
template <typename T> constexpr int kWarpsPerSm = sizeof(T) == 1 ? 24 : 20;
/* Segments are counted in 32 bits: a launch's segments, and a warp's first segment plus its
 * run, stay below 2^32 when the segments are at most 2^31. */
constexpr uint64_t kFewMaxSegments = 1ull << 31;

static_assert(kPix == 2 * kPackedWords && kPackedByteWords == kPix / 4 + 2 &&
                  kPackedMaxPasses <= kHalo,
              "the integer sums' words: a segment of kPix u8 pixels and one word of halo each "
              "side, enough for their passes");
static_assert(kHalo == 4 && kPix % 16 == 0,
              "a segment's halo is one word of u8 or two of u16 either side, and the row-end "
              "switches name its elements (GS_HALO_CASES)");

struct FewArgs {
    const char *src;
    size_t src_pitch;
    char *dst;
    size_t dst_pitch;
    uint32_t width;
    uint32_t segs_per_row;
    uint32_t segs;        /* rows * segs_per_row */
    /* a lane's move from one turn to the next, kWarp segments: turn_rows whole rows
     * (kWarp / segs_per_row) and turn_segs more segments (kWarp % segs_per_row) */
    uint32_t turn_rows;
    uint32_t turn_segs;
};

/* The loaded bytes of one thread's segment: its kPix pixels as 16-byte vectors and, for a
 * warp's outer lanes, the words of the kHalo pixels beyond the warp's edge (left of lane 0's
 * segment, right of lane 31's), which no neighbouring lane holds. */
template <typename T> struct SegmentWords {
    static constexpr int kVecs = kPix * (int)sizeof(T) / 16;
    static constexpr int kHaloWords = kHalo * (int)sizeof(T) / 4;
    uint4 vec[kVecs];
    uint32_t edge[kHaloWords];
};

/* Issue the loads of segment `seg` of row `row` (active: the lane has a segment). Vectors
 * that start past the row's end, every vector of a lane with no segment, and the edge words
 * of lanes that need none are zeros. */
template <typename T>
__device__ __forceinline__ void load_segment(const FewArgs &a, uint32_t row, uint32_t seg,
                                             uint32_t lane, bool active, SegmentWords<T> &w)
{
    using W = SegmentWords<T>;
    constexpr uint32_t kPerVec = 16 / sizeof(T);
    const uint32_t xs = seg * kPix;
    const char *p = a.src + (size_t)row * a.src_pitch + (size_t)xs * sizeof(T);
#pragma unroll
    for (int i = 0; i < W::kVecs; ++i)
        w.vec[i] = active && xs + i * kPerVec < a.width ? __ldcs((const uint4 *)p + i)
                                                         : make_uint4(0u, 0u, 0u, 0u);
    /* a halo inside the row lies inside the pitch: it starts a 16-byte granule */
    const bool left = active && lane == 0 && seg > 0;
    const bool right = active && lane == kWarp - 1 && xs + kPix < a.width;
    const uint32_t *edge = lane == 0 ? (const uint32_t *)p - W::kHaloWords
                                     : (const uint32_t *)(p + kPix * sizeof(T));
#pragma unroll
    for (int i = 0; i < W::kHaloWords; ++i) w.edge[i] = left || right ? __ldcs(edge + i) : 0u;
}

/* The words of the kHalo pixels either side of a lane's segment: from the neighbouring lanes'
 * loaded words by a shuffle, the outer lanes' own edge loads at the warp's edges. Every lane
 * of the warp calls it. */
template <typename T>
__device__ __forceinline__ void halo_words(const SegmentWords<T> &w, uint32_t lane,
                                           uint32_t (&left)[SegmentWords<T>::kHaloWords],
                                           uint32_t (&right)[SegmentWords<T>::kHaloWords])
{
    using W = SegmentWords<T>;
#pragma unroll
    for (int i = 0; i < W::kHaloWords; ++i) {
        const uint32_t from_left =
            __shfl_up_sync(kFullMask, word_of(w.vec, 4 * W::kVecs - W::kHaloWords + i), 1);
        const uint32_t from_right = __shfl_down_sync(kFullMask, word_of(w.vec, i), 1);
        left[i] = lane == 0 ? w.edge[i] : from_left;
        right[i] = lane == kWarp - 1 ? w.edge[i] : from_right;
    }
}

/* The held pixels as sample_bits words: element i is x = xs - kHalo + i. Pixels outside the
 * row are 0. */
template <typename T>
__device__ __forceinline__ void unpack_held(const SegmentWords<T> &w,
                                            const uint32_t (&left)[SegmentWords<T>::kHaloWords],
                                            const uint32_t (&right)[SegmentWords<T>::kHaloWords],
                                            uint32_t xs, uint32_t width, uint32_t (&m)[kHeld])
{
    constexpr int kPerWord = 4 / (int)sizeof(T);
#pragma unroll
    for (int i = 0; i < kHeld; ++i) {
        const int k = i % kPerWord; /* kHalo and kPix are whole words */
        const uint32_t word = i < kHalo          ? left[i / kPerWord]
                              : i < kHalo + kPix ? word_of(w.vec, (i - kHalo) / kPerWord)
                                                 : right[(i - kHalo - kPix) / kPerWord];
        m[i] = sample_bits<T>(word, (uint32_t)k);
    }
    if (xs == 0 || xs + kPix + kHalo > width) { /* a row end is near: no other row's pixels */
#pragma unroll
        for (int i = 0; i < kHeld; ++i)
            if (i < kHalo ? xs == 0 : xs + (uint32_t)(i - kHalo) >= width) m[i] = kMagic23Bits;
    }
}

/* K passes over a u8 segment that no row end reaches, as exact integer sums
 * (packed_passes.cuh), stored as samples: the segment lies whole inside its row. */
template <int K>
__device__ __forceinline__ void smooth_packed_segment(const SegmentWords<uint8_t> &w,
                                                      uint32_t left, uint32_t right, char *dst)
{
    uint32_t b[kPackedByteWords];
    b[0] = left;
#pragma unroll
    for (int i = 0; i < kPix / 4; ++i) b[1 + i] = word_of(w.vec, i);
    b[kPackedByteWords - 1] = right;
    uint32_t pairs[kPackedWords + 2 * K];
    pair_words<K>(b, pairs);
    packed_passes<K>(pairs);
    uint32_t out[kPix / 4];
    round_packed<K>(pairs, out);
    uint4 *q = (uint4 *)dst;
    __stcs(q, make_uint4(out[0], out[1], out[2], out[3]));
    __stcs(q + 1, make_uint4(out[4], out[5], out[6], out[7]));
}

/* How a warp treats row ends (RowEnds): none held; ends only on element kHalo and
 * kHalo + kPix - 1 (selects); or x = width - 1 anywhere (switches). */
enum EndsMode { kNoEnds, kLastElementEnds, kAnyEnds };

/* The adaptive means at the row's ends from a pass's old values (held words or floats, made
 * floats by to_float): x = 0 at element kHalo, x = width - 1 at element kHalo + e_right
 * (kAnyEnds: by a switch; kLastElementEnds: only on element kHalo + kPix - 1). Taken before
 * the pass, put in place after it (put_end_means). */
struct EndMeans {
    float left, right;
};
template <int Mode, typename E, class ToFloat>
__device__ __forceinline__ EndMeans end_means(const E (&old)[kHeld], const RowEnds &e,
                                              ToFloat to_float)
{
    E a{}, b{};
    if constexpr (Mode == kLastElementEnds) {
        a = old[kHalo + kPix - 2];
        b = old[kHalo + kPix - 1];
    } else if (e.e_right >= 0) {
        gather_right_end<kHalo>(old, E{}, e.e_right, a, b);
    }
    return {gs_mean2(to_float(old[kHalo]), to_float(old[kHalo + 1])),
            gs_mean2(to_float(a), to_float(b))};
}
template <int Mode>
__device__ __forceinline__ void put_end_means(float (&v)[kHeld], const RowEnds &e, EndMeans m)
{
    if (e.has_left) v[kHalo] = m.left;
    if constexpr (Mode == kLastElementEnds) {
        if (e.e_right == kPix - 1) v[kHalo + kPix - 1] = m.right;
    } else if (e.e_right >= 0) {
        scatter_right_end<kHalo>(v, e.e_right, m.right);
    }
}

/* Pass 1 over elements [Lo, Hi): the sums as integers, the quotients as floats. The row
 * ends' means are taken first, so that no word outlives its last sum. */
template <int Lo, int Hi, int Mode>
__device__ __forceinline__ void first_pass(const uint32_t (&m)[kHeld], float (&v)[kHeld],
                                           const RowEnds &e)
{
    EndMeans ends = {};
    if constexpr (Mode != kNoEnds) ends = end_means<Mode>(m, e, sample_float);
#pragma unroll
    for (int i = Lo; i < Hi; ++i) v[i] = div3_of_magic_sum(m[i - 1] + m[i] + m[i + 1]);
    if constexpr (Mode != kNoEnds) put_end_means<Mode>(v, e, ends);
}

/* A later pass over elements [Lo, Hi) in place. */
template <int Lo, int Hi, int Mode>
__device__ __forceinline__ void later_pass(float (&v)[kHeld], const RowEnds &e)
{
    EndMeans ends = {};
    if constexpr (Mode != kNoEnds) ends = end_means<Mode>(v, e, [](float f) { return f; });
    pass_span<ShortDivide, Lo, Hi>(v, 0.0f, 0.0f);
    if constexpr (Mode != kNoEnds) put_end_means<Mode>(v, e, ends);
}

/* Passes P to K: pass P computes the elements within K - P of the segment. */
template <int K, int P, int Mode>
__device__ __forceinline__ void passes_from(float (&v)[kHeld], const RowEnds &e)
{
    if constexpr (P <= K) {
        later_pass<kHalo - (K - P), kHalo + kPix + (K - P), Mode>(v, e);
        passes_from<K, P + 1, Mode>(v, e);
    }
}

/* K passes over the held pixels; v[kHalo, kHalo + kPix) holds the segment's result. */
template <int K, int Mode>
__device__ __forceinline__ void smooth_held(const uint32_t (&m)[kHeld], float (&v)[kHeld],
                                            const RowEnds &e)
{
    if constexpr (K == 0) {
#pragma unroll
        for (int i = kHalo; i < kHalo + kPix; ++i) v[i] = sample_float(m[i]);
    } else {
        first_pass<kHalo - (K - 1), kHalo + kPix + (K - 1), Mode>(m, v, e);
        passes_from<K, 2, Mode>(v, e);
    }
}

/* Launches whose segments away from the row ends take integer sums: u8 in and out, 1 to
 * kPackedMaxPasses passes. */
template <typename Tin, typename Tout, int K>
constexpr bool kTakesPacked = std::is_same_v<Tin, uint8_t> && std::is_same_v<Tout, uint8_t> &&
                              1 <= K && K <= kPackedMaxPasses;

template <typename Tin, typename Tout, int K>
__device__ __forceinline__ void smooth_segment(const FewArgs &a, uint32_t row, uint32_t seg,
                                               uint32_t lane, bool active,
                                               const SegmentWords<Tin> &w)
{
    const uint32_t xs = seg * kPix;
    constexpr int kHaloWords = SegmentWords<Tin>::kHaloWords;
    uint32_t left[kHaloWords], right[kHaloWords];
    halo_words<Tin>(w, lane, left, right);
    /* x = width - 1 may lie in the right halo (the last segment holds fewer pixels than
     * the passes): its adaptive mean is taken there too. Warp-uniform flags: every lane
     * calls it. */
    const RowEnds ends = row_ends(xs, a.width, kPix + kHalo);
    char *dst_row = a.dst + (size_t)row * a.dst_pitch;
    if constexpr (kTakesPacked<Tin, Tout, K>) {
        /* no row end within kHalo of any lane's segment: each is whole inside its row */
        if (!ends.warp_has_end) {
            if (active) smooth_packed_segment<K>(w, left[0], right[0], dst_row + xs);
            return;
        }
    }
    uint32_t m[kHeld];
    unpack_held<Tin>(w, left, right, xs, a.width, m);
    float v[kHeld];
    if (!ends.warp_has_end)
        smooth_held<K, kNoEnds>(m, v, ends);
    else if (!ends.warp_switch)
        smooth_held<K, kLastElementEnds>(m, v, ends);
    else
        smooth_held<K, kAnyEnds>(m, v, ends);
    float out[kPix];
#pragma unroll
    for (int i = 0; i < kPix; ++i) out[i] = v[kHalo + i];
    if constexpr (sizeof(Tout) == 1) {
        if (active) store_pixels<Tout, ReciprocalFma>(dst_row, xs, a.width, out);
    } else { /* 16-bit samples or floats (xy's rows): whole lines a store (blocks are one warp) */
        __shared__ __align__(16) uint32_t stage[kWarp * kStageLaneWords<Tout>];
        store_pixels_warp<Tout, ReciprocalFma>(dst_row, xs, a.width, active, out, stage, lane);
    }
}

template <typename Tin, typename Tout, int K>
__global__ void __launch_bounds__(kWarp, kWarpsPerSm<Tin>) smooth_few_passes_kernel(FewArgs a)
{
    const uint32_t lane = threadIdx.x;
    /* every lane of the warp runs the same turns (the halo shuffles need them all) */
    uint32_t base = blockIdx.x * (kTurns * kWarp);
    const uint32_t limit = base + kTurns * kWarp < a.segs ? base + kTurns * kWarp : a.segs;
    uint32_t row = (base + lane) / a.segs_per_row, seg = (base + lane) % a.segs_per_row;
    SegmentWords<Tin> cur, next;
    load_segment<Tin>(a, row, seg, lane, base + lane < a.segs, cur);
    for (; base < limit; base += kWarp) {
        uint32_t next_row = row + a.turn_rows, next_seg = seg + a.turn_segs;
        if (next_seg >= a.segs_per_row) {
            next_seg -= a.segs_per_row;
            ++next_row;
        }
        if (base + kWarp < limit)
            load_segment<Tin>(a, next_row, next_seg, lane, base + kWarp + lane < a.segs, next);
        smooth_segment<Tin, Tout, K>(a, row, seg, lane, base + lane < a.segs, cur);
        cur = next;
        row = next_row;
        seg = next_seg;
    }
}

} /* namespace */

bool few_passes_fit(uint32_t width, uint32_t rows, uint32_t passes)
{
    const uint64_t segs = (uint64_t)rows * (((uint64_t)width + kPix - 1) / kPix);
    /* a one-pixel row would take both end rules at once, each halving it: its callers give
     * it no passes (smooth_with) */
    return passes <= kFewPassesMax && segs <= kFewMaxSegments && (width > 1 || passes == 0);
}

cudaError_t smooth_few_passes(const void *in, size_t in_pitch, uint32_t in_kind, void *out,
                              size_t out_pitch, uint32_t out_kind, uint32_t passes,
                              uint32_t width, uint32_t rows, cudaStream_t stream)
{
    if (!few_passes_fit(width, rows, passes) || in_kind == kKindFloat)
        return cudaErrorInvalidValue;
    FewArgs a = {};
    a.src = (const char *)in;
    a.src_pitch = in_pitch;
    a.dst = (char *)out;
    a.dst_pitch = out_pitch;
    a.width = width;
    a.segs_per_row = (uint32_t)(((uint64_t)width + kPix - 1) / kPix);
    a.segs = (uint32_t)((uint64_t)rows * a.segs_per_row);
    a.turn_rows = kWarp / a.segs_per_row;
    a.turn_segs = kWarp % a.segs_per_row;
    const uint32_t blocks = (a.segs + kTurns * kWarp - 1) / (kTurns * kWarp);
    return gs_cuda_dispatch_kinds(in_kind, out_kind, [&](auto tin, auto tout) -> cudaError_t {
        using Tin = decltype(tin);
        using Tout = decltype(tout);
        if constexpr (sizeof(Tin) > 2) {
            return cudaErrorInvalidValue;
        } else {
            auto launch = [&](auto k) -> cudaError_t {
                constexpr int kPasses = decltype(k)::value;
                smooth_few_passes_kernel<Tin, Tout, kPasses><<<blocks, kWarp, 0, stream>>>(a);
                return cudaGetLastError();
            };
            switch (passes) {
            case 0: return launch(std::integral_constant<int, 0>{});
            case 1: return launch(std::integral_constant<int, 1>{});
            case 2: return launch(std::integral_constant<int, 2>{});
            case 3: return launch(std::integral_constant<int, 3>{});
            case 4: return launch(std::integral_constant<int, 4>{});
            default: return cudaErrorInvalidValue;
            }
        }
    });
}

} /* namespace gs_cuda */
