/* registers_kernels.cuh: the registers variant's kernels and launch planning. */
#ifndef GS_CUDA_REGISTERS_KERNELS_CUH
#define GS_CUDA_REGISTERS_KERNELS_CUH

#include "launch_common.cuh"
#include "fast_arith.cuh"
#include "packed_passes.cuh"
#include "mbarrier.cuh"
#include "registers_pixels.cuh"
#include "sample_io.cuh"
#include "launch_chain.cuh"
#include "registers.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

#include <type_traits>

/*
 * Layout. A group of G threads (a multiple of 32, at most a block) holds one segment of a
 * row, kPix consecutive pixels per thread, as float32 in registers. A pass needs only each
 * thread's two outer neighbours: __shfl_up/down inside a one-warp group; a multi-warp
 * group has every thread publish its first and last pixel in shared memory, double-buffered
 * by pass parity so one barrier per pass suffices. A row of up to kMaxSpan pixels can be
 * one segment with no halo, which takes any number of passes in one launch. Otherwise
 * segments carry a halo of `halo` >= passes pixels per side (garbage creeps in one pixel a
 * pass from a segment edge that is not a row end, so the halo absorbs it): a row wider
 * than kMaxSpan, whose passes per launch are then capped, the float32 intermediates going
 * through device scratch (run_chain); and, for a few passes, one-warp segments that need
 * no barrier (plan). Relay segments (smooth_relay_kernel) keep one-warp segments' halo of
 * kPix at any pass count by refreshing it from the neighbouring warps every kPix passes.
 */

using namespace gs_cuda;

namespace {

constexpr int kMaxGroup = 1024;                 /* threads per segment: the block limit */
constexpr int kNarrowBlock = 128;               /* one-warp segments: four per block */
constexpr uint32_t kMaxSpan = (uint32_t)kPix * kMaxGroup; /* 32768 pixels in one group */
/* Passes per launch once a row needs halo segments: halo 1024 keeps 30720 of 32768 pixels
 * of each segment as output (94%), and launches stay few even at K = 100000. */
constexpr uint32_t kMaxPassesPerLaunch = 1024;
/* The product's smoothing sends launches of at most kFewPassesMax passes from integer
 * samples to registers_few_passes.cu, faster there than these kernels. Where that does not
 * fit, it prefetches the next segment with the copy engine (persistent grid, multi-warp
 * groups) in runs of at most kPrefetchMaxPasses passes, and of more than kRelayMaxPasses
 * (every launch of such a run); in between it loads directly, into one-warp or relay
 * segments (plan): the prefetch wins at few passes and loses from K = 10 on, relay segments
 * win up to kRelayMaxPasses and lose past it, where passes take the exact division. */
constexpr uint32_t kPrefetchMaxPasses = 4;
constexpr uint32_t kRelayMaxPasses = GS_SHORT_DIV_PASSES;
/* The most segments a launch may have: the kernel's grid-stride loop counts them in 32
 * bits, and its index plus the grid's stride must not wrap. */
constexpr uint64_t kMaxSegments = INT32_MAX;
/* One-warp segments (plan) up to this many passes: a halo of 64 pixels a side. */
constexpr uint32_t kWarpSegmentMaxPasses = 64;
/* Relay segments (smooth_relay_kernel): at most this many warps a row, so that two blocks
 * fit an SM at the 56 registers this allows (a 16384-pixel row takes 17). */
constexpr uint32_t kRelayMaxWarps = 18;

static_assert(kPix % 16 == 0, "a thread's pixels are whole 16-byte vectors of u8");
static_assert(kMaxGroup % kWarp == 0 && kNarrowBlock % kWarp == 0, "groups are whole warps");
static_assert(kMaxPassesPerLaunch % kPix == 0, "halo keeps segment starts vector-aligned");
static_assert(4 * kMaxPassesPerLaunch <= kMaxSpan, "halo leaves most of a segment as output");
static_assert(4 * kWarpSegmentMaxPasses <= kWarp * kPix, "a warp segment keeps half as output");
static_assert(kMaxPassesPerLaunch >= GS_SHORT_DIV_PASSES,
              "only a chain's first launch (integer input) reaches the short-division passes");

/* ---- device helpers ---- */

/* Bytes of a multi-warp group's edge slots: [pass parity][group + 2][first, last] floats,
 * rounded to 128 so the prefetch tile after them stays aligned for the copy engine. */
__host__ __device__ constexpr uint32_t edge_slot_bytes(uint32_t group)
{
    return (2u * 2u * (group + 2u) * (uint32_t)sizeof(float) + 127u) / 128u * 128u;
}

/* Whether these kernels store a warp's runs together (store_row_runs_warp): for floats (the
 * rows of --axis xy, a chain's float32 windows), whose stores bound the launch; not for
 * 16-bit samples, slower so, where the passes, not the stores, bound the launch. */
template <typename Tout> constexpr bool kWarpStores = sizeof(Tout) == 4;
/* Bytes of the warps' staging for store_row_runs_warp, after a block's other dynamic shared
 * memory, which the kernels keep a multiple of 16 bytes. */
template <typename Tout> __host__ __device__ constexpr uint32_t stage_bytes(uint32_t threads)
{
    return kWarpStores<Tout> ? threads / kWarp * kWarp * kStageLaneWords<Tout> * 4u : 0u;
}
/* A block's dynamic shared memory with the staging at most this, or no staging (its warps
 * store alone): within what devices of compute capability 8.6, 8.9 and 12.x allow a block
 * (about 99 KiB), and on sm_90 two 512-thread blocks an SM keep fitting. The largest
 * groups (1024 threads, K > 78) would pass 227 KiB with it. */
constexpr size_t kStagedSmemMax = 96u * 1024u;

/* The dynamic shared memory of a launch whose other shared memory is `before` bytes, and
 * g.warp_stores: the staging added when the output is float and the sum stays within
 * kStagedSmemMax. */
template <typename Tout> size_t with_staging(SegmentGeom &g, size_t before, uint32_t threads)
{
    const size_t staged = before + stage_bytes<Tout>(threads);
    g.warp_stores = kWarpStores<Tout> && staged <= kStagedSmemMax ? 1u : 0u;
    return g.warp_stores ? staged : before;
}
/* The registers kernel's dynamic shared memory before the staging: the edge slots of a
 * multi-warp group, then the prefetch tile. */
template <typename Tin, bool kPrefetch> __host__ __device__ constexpr uint32_t before_stage_bytes(uint32_t group)
{
    return (group > kWarp ? edge_slot_bytes(group) : 0u) +
           (kPrefetch ? (group * kPix * (uint32_t)sizeof(Tin) + 15u) / 16u * 16u : 0u);
}

/* Store a thread's pixels [xs, xs + kPix) that fall in [xs, x1), when xs lies in [x0, x1):
 * floats a warp at a time through `stage` when the launch reserved it (warp_stores, the same
 * for the whole launch; every lane of the warp calls it), else a thread at a time. A warp's
 * lanes hold consecutive runs of one segment (groups are whole warps), lane l's from
 * xs - (xs of lane 0) = l x kPix, with the same x0 and x1. */
template <typename Tout, class Arith>
__device__ __forceinline__ void store_run(char *row, long xs, long x0, long x1, const float (&v)[kPix],
                                          bool warp_stores, uint32_t *stage, uint32_t lane)
{
    if constexpr (kWarpStores<Tout>) {
        if (warp_stores) {
            store_row_runs_warp<Tout, Arith>(row, xs - (long)lane * kPix, x0, x1, v, stage, lane);
            return;
        }
    }
    if (xs >= x0 && xs < x1) store_pixels<Tout, Arith>(row, xs, x1, v);
}

/* Load a thread's pixels: float32 samples a warp at a time through `stage` when the launch
 * reserved it for float stores (the warp's loads then read whole lines, as its stores
 * write them: f32 x K=3 over 16384^2 took 1.63x its floor with a lane's loads alone), else
 * a thread at a time. Every lane of the warp calls it; its lanes hold consecutive runs, as
 * for store_run. */
template <typename Tin, typename Tout>
__device__ __forceinline__ void load_run(const char *row, long xs, uint32_t width, float (&v)[kPix],
                                         bool warp_stores, uint32_t *stage, uint32_t lane)
{
    if constexpr (sizeof(Tin) == 4 && kWarpStores<Tout>) {
        if (warp_stores) {
            load_row_runs_warp(row, xs - (long)lane * kPix, width, v, stage, lane);
            return;
        }
    }
    load_pixels<Tin>(row, xs, width, v);
}

/* Shared accesses by 32-bit address: one register per slot, nothing recomputed per pass. */
__device__ __forceinline__ void st_shared(uint32_t addr, float v)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}
__device__ __forceinline__ float ld_shared(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ void st_shared4(uint32_t addr, float a, float b, float c, float d)
{
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c),
                 "f"(d)
                 : "memory");
}
__device__ __forceinline__ void ld_shared4(uint32_t addr, float &a, float &b, float &c, float &d)
{
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
                 : "r"(addr)
                 : "memory");
}

/* ---- the bulk-copy (TMA engine) prefetch of the next segment ---- */

/* Copy `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory into
 * shared memory on the copy engine; completion is counted on the mbarrier. Generic-proxy
 * reads of the buffer before it (ordered by a barrier) are fenced from the async writes. */
__device__ __forceinline__ void bulk_load(uint32_t smem_dst, const void *gsrc, uint32_t bytes,
                                          uint32_t bar)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
    if (bytes)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                     "[%0], [%1], %2, [%3];" ::"r"(smem_dst),
                     "l"(gsrc), "r"(bytes), "r"(bar)
                     : "memory");
}

/* Passes [k, to) of a one-warp group with no row end, the neighbours by shuffles: unrolled
 * by two, which halves the loop's own instructions. */
template <class Arith>
__device__ __forceinline__ void warp_interior_passes(float (&v)[kPix], uint32_t &k, uint32_t to)
{
#pragma unroll 2
    for (; k < to; ++k) {
        const float l = __shfl_up_sync(kFullMask, v[kPix - 1], 1);
        const float r = __shfl_down_sync(kFullMask, v[0], 1);
        pass_interior<Arith>(v, l, r);
    }
}

/* Pass 1 of a one-warp group of integer samples with no row end, from their sample_bits
 * words: each sum of three as one integer add (div3_of_magic_sum), which gives ShortDivide's
 * bits for the float sum, in place of the conversion and the two float additions. */
__device__ __forceinline__ void warp_interior_first_pass(const uint32_t (&m)[kPix], float (&v)[kPix])
{
    const uint32_t l = __shfl_up_sync(kFullMask, m[kPix - 1], 1);
    const uint32_t r = __shfl_down_sync(kFullMask, m[0], 1);
#pragma unroll
    for (int i = 0; i < kPix; ++i)
        v[i] = div3_of_magic_sum((i == 0 ? l : m[i - 1]) + m[i] + (i == kPix - 1 ? r : m[i + 1]));
}

/* One pass for a warp whose row ends lie on element 0 (x = 0) and element kPix - 1 (x =
 * width - 1) of their threads: both adaptive means by selects, no branches. */
template <class Arith>
__device__ __forceinline__ void pass_with_last_element_ends(float (&v)[kPix], float l, float r,
                                                            const RowEnds &e)
{
    const float left_mean = gs_mean2(v[0], v[1]);
    const float right_mean = gs_mean2(v[kPix - 2], v[kPix - 1]);
    pass_interior<Arith>(v, l, r);
    v[0] = e.has_left ? left_mean : v[0];
    v[kPix - 1] = e.e_right == kPix - 1 ? right_mean : v[kPix - 1];
}

/* One pass over a thread's pixels, l and r the old values just outside them: the plain mean,
 * and at x = 0 (element 0, when has_left) and x = width - 1 (element e_right >= 0) the
 * adaptive mean of their two values. */
template <class Arith>
__device__ __forceinline__ void pass_with_ends(float (&v)[kPix], float l, float r,
                                               const RowEnds &e)
{
    if (!e.warp_has_end) {
        pass_interior<Arith>(v, l, r);
        return;
    }
    /* Old values the row ends need: x = 0 reads elements 0 and 1; x = width - 1 reads
     * e_right - 1 (or l) and e_right. Both can sit in one thread. */
    const float left_a = v[0], left_b = v[1];
    if (!e.warp_switch) {
        /* pass_with_last_element_ends' formulas, by branches: its selects slow the
         * prefetching groups' K=1 launch */
        const float right_a = v[kPix - 2], right_b = v[kPix - 1];
        pass_interior<Arith>(v, l, r);
        if (e.has_left) v[0] = gs_mean2(left_a, left_b);
        if (e.e_right == kPix - 1) v[kPix - 1] = gs_mean2(right_a, right_b);
        return;
    }
    float right_a = 0.0f, right_b = 0.0f;
    if (e.e_right >= 0) gather_right_end<0>(v, l, e.e_right, right_a, right_b);
    pass_interior<Arith>(v, l, r);
    if (e.has_left) v[0] = gs_mean2(left_a, left_b);
    if (e.e_right >= 0) scatter_right_end<0>(v, e.e_right, gs_mean2(right_a, right_b));
}

/* ---- kernels ---- */

/*
 * Applies g.passes passes to every segment. Block = one group of g.group threads (group
 * > 32), or kNarrowBlock / 32 independent one-warp groups. Grid-strided over segments, so
 * any grid size is correct.
 */
template <typename Tin, typename Tout, class Arith, bool kPrefetch>
__global__ void __launch_bounds__(kMaxGroup) smooth_registers_kernel(SegmentGeom g)
{
    /* kPrefetch (groups of several warps, one per block, integer samples): the block's
     * next segment is copied into shared memory by the copy engine while this one is
     * smoothed; the grid is persistent (a few blocks per SM stride over the segments).
     * Dynamic shared memory holds a multi-warp group's edge slots (edge_slot_bytes), then
     * the prefetch tile, then for float outputs the warps' staging (stage_bytes). */
    extern __shared__ __align__(128) unsigned char s_dyn[];
    __shared__ __align__(8) uint64_t s_bar;
    /* Passes 1 to g.short_passes take ShortDivide when Arith is ReciprocalFma. */
    constexpr bool kShortFirst = std::is_same<Arith, ReciprocalFma>::value;

    /* The launcher keeps the segment count at most kMaxSegments: 32-bit indices from here on. */
    const uint32_t segs_total = (uint32_t)g.segs_total;
    const uint32_t groups_per_block = blockDim.x / g.group;
    const uint32_t local = threadIdx.x % g.group;
    const bool multiwarp = g.group > kWarp; /* then groups_per_block == 1: uniform per block */
    /* A multi-warp group trades neighbours through shared memory, no shuffles: every
     * thread publishes its first and last pixel, and after the pass's barrier reads its
     * neighbours'. Slots: [pass parity][1 + thread of the group][first, last] floats, so
     * all four accesses are constant offsets from one address; pair 0's `last` and pair
     * group + 1's `first` are zero pads for the group's outer threads, whose outer
     * neighbour is a row end or halo garbage anyway. Double-buffered by pass parity, so
     * one barrier a pass suffices. */
    constexpr uint32_t kSlot = sizeof(float), kPair = 2 * kSlot;
    const uint32_t parity_bytes = (g.group + 2) * kPair;
    const uint32_t my_first = smem_addr(s_dyn) + (local + 1) * kPair;
    uint32_t parity_off = 0; /* runs on across segments: no slot reuse without a barrier */
    if (multiwarp && local < 2) { /* the pads of parity `local`; the first pass's barrier
                                     orders them before any read */
        const uint32_t base = smem_addr(s_dyn) + local * parity_bytes;
        st_shared(base + kSlot, 0.0f);                 /* pair 0, last */
        st_shared(base + (g.group + 1) * kPair, 0.0f); /* pair group + 1, first */
    }

    const uint32_t bar = smem_addr(&s_bar);
    unsigned char *const s_tile = s_dyn + (multiwarp ? edge_slot_bytes(g.group) : 0u);
    const uint32_t tile = smem_addr(s_tile);
    uint32_t bar_parity = 0;
    /* Segment `seg` of the source: thread 0 queues its bytes inside the row (16-byte
     * granules, clipped to [0, width rounded up to a granule)) at their place in s_tile. */
    auto prefetch = [&](uint32_t seg) {
        const uint32_t row = g.segs_per_row == 1 ? seg : seg / g.segs_per_row;
        const long xs0 = (long)(seg % g.segs_per_row) * g.out_span; /* segment_start */
        const long row_end = (long)gs_round_up((size_t)g.width * sizeof(Tin), 16);
        const long lo = xs0 > 0 ? xs0 * (long)sizeof(Tin) : 0;
        long hi = (xs0 + (long)g.group * kPix) * (long)sizeof(Tin);
        if (hi > row_end) hi = row_end;
        bulk_load(tile + (uint32_t)(lo - xs0 * (long)sizeof(Tin)),
                  g.src + (size_t)row * g.src_pitch + lo, hi > lo ? (uint32_t)(hi - lo) : 0u,
                  bar);
    };
    if (kPrefetch) {
        if (threadIdx.x == 0) mbar_init(bar, 1);
        __syncthreads();
        if (threadIdx.x == 0 && blockIdx.x < segs_total) prefetch(blockIdx.x);
    }

    for (uint32_t base = blockIdx.x * groups_per_block; base < segs_total;
         base += gridDim.x * groups_per_block) {
        const uint32_t seg = base + threadIdx.x / g.group;
        if (!multiwarp && seg >= segs_total) break; /* one-warp groups never sync */
        const uint32_t row = g.segs_per_row == 1 ? seg : seg / g.segs_per_row;
        /* The segment holds [start, start + span) and stores [x0, x1) (halo_segments):
         * from the row's start or its left halo's end, to the row's end or its right
         * halo's start. */
        const uint32_t seg_in_row = seg % g.segs_per_row;
        const long start = (long)seg_in_row * g.out_span;
        const long span_end = start + (long)g.group * kPix;
        const long x0 = seg_in_row == 0 ? 0 : start + (long)g.halo;
        const long x1 = (long)g.width <= span_end ? (long)g.width : span_end - (long)g.halo;
        const long xs = start + (long)local * kPix;

        /* Row ends held by this thread, and its warp's way of handling them (row_ends). */
        const RowEnds ends = row_ends(xs, g.width);
        /* A one-warp group with no row end runs its passes in a loop of its own (below); of
         * 8-bit samples, it loads their sample_bits words and sums pass 1 as integers
         * (warp_interior_first_pass). Not of 16-bit ones: u16 xy K=10 ran 0.6% slower so
         * (ptxas spilled 8 bytes), where u8 ran 1% faster. */
        const bool warp_interior = kShortFirst && !multiwarp && !ends.warp_has_end;
        uint32_t k = 0; /* passes done */

        float v[kPix];
        constexpr bool kBytesIn = sizeof(Tin) == 1;
        if (kBytesIn && !kPrefetch && warp_interior && g.short_passes > 0) {
            /* decided before the load, not after: ptxas kept both the words and the floats
             * of a later choice live (72 bytes spilled in the u8 launch) */
            if constexpr (kBytesIn) {
                uint32_t m[kPix];
                load_sample_bits<Tin>(g.src + (size_t)row * g.src_pitch, xs, g.width, m);
                warp_interior_first_pass(m, v);
                k = 1;
            }
        } else if (kPrefetch) {
            mbar_wait(bar, bar_parity);
            bar_parity ^= 1u;
            /* s_tile holds the segment from x = xs0 on: pixel x at (x - xs0) */
            const long xs0 = xs - (long)local * kPix;
            load_pixels<Tin, true>((const char *)s_tile - xs0 * (long)sizeof(Tin), xs, g.width, v);
            __syncthreads(); /* every thread has its pixels: the tile may be refilled */
            if (threadIdx.x == 0 && seg + gridDim.x < segs_total) prefetch(seg + gridDim.x);
        } else {
            load_run<Tin, Tout>(g.src + (size_t)row * g.src_pitch, xs, g.width, v,
                                g.warp_stores != 0,
                                (uint32_t *)(s_dyn + before_stage_bytes<Tin, kPrefetch>(g.group)) +
                                    threadIdx.x / kWarp * (kWarp * kStageLaneWords<Tout>),
                                threadIdx.x % kWarp);
        }

        /* One pass with the arithmetic of `arith` (a policy object, for its type). The
         * neighbours come first, with the pass's one barrier, which every warp of a group
         * meets at the same instruction; then each warp takes its own branch. */
        auto pass = [&](auto arith) {
            using PassArith = decltype(arith);
            float l, r;
            if (multiwarp) {
                const uint32_t mine = my_first + parity_off;
                st_shared(mine, v[0]);
                st_shared(mine + kSlot, v[kPix - 1]);
                __syncthreads();
                l = ld_shared(mine - kSlot);  /* the left neighbour's last */
                r = ld_shared(mine + kPair); /* the right neighbour's first */
                parity_off ^= parity_bytes;
            } else {
                l = __shfl_up_sync(kFullMask, v[kPix - 1], 1);
                r = __shfl_down_sync(kFullMask, v[0], 1);
            }
            pass_with_ends<PassArith>(v, l, r, ends);
        };
        /* The first g.short_passes passes may divide in two instructions (ShortDivide). A
         * one-warp group with no row end takes its own loop, unrolled by two, which halves the
         * loop's instructions and tests neither the group's kind nor the ends a pass: for
         * integer samples (u8 x K=10 into float32: 10% fewer instructions with the stores
         * below); float32 samples' IEEE division, its slow path beside it, ran 14% slower so. */
        if (warp_interior) {
            warp_interior_passes<ShortDivide>(v, k, g.short_passes);
            warp_interior_passes<Arith>(v, k, g.passes);
        } else {
            if constexpr (kShortFirst)
                for (; k < g.short_passes; ++k) pass(ShortDivide{});
            for (; k < g.passes; ++k) pass(Arith{});
        }

        store_run<Tout, Arith>(g.dst + (size_t)row * g.dst_pitch, xs, x0, x1, v, g.warp_stores != 0,
                               (uint32_t *)(s_dyn + before_stage_bytes<Tin, kPrefetch>(g.group)) +
                                   threadIdx.x / kWarp * (kWarp * kStageLaneWords<Tout>),
                               threadIdx.x % kWarp);
    }
}

/*
 * Relay segments: the one-warp segments of a row (a halo of kPix pixels, halo_segments), all
 * in one block, a warp a segment, for rows that end on a thread's last pixel (plan), so the
 * row ends cost selects, not switches. A segment's lane 0 and lane 31 hold its halos, copies
 * of lane 30 of the segment to its left and lane 1 of the segment to its right.
 * Garbage creeps into a halo one pixel a pass from its outer edge, so after kPix passes it
 * fills lane 0 (or 31) and the next pass would reach lane 1 (or 30); so before every pass
 * whose index is a nonzero multiple of kPix, the halos are refreshed from the neighbours'
 * true values through shared memory, at one barrier. Any number of passes then costs the
 * one-warp segments' pixels (6.25% over the row's at 16384) with a barrier every kPix passes,
 * not a halo as wide as the passes or a barrier every pass.
 * Shared slots: [refresh parity][warp][lane 1's pixels, lane 30's pixels], double-buffered
 * like the multi-warp groups' edge slots so one barrier a refresh suffices; then, for float
 * outputs, the warps' staging (stage_bytes).
 */
__host__ __device__ constexpr uint32_t relay_slot_bytes(uint32_t warps)
{
    return 2u * warps * 2u * (uint32_t)kPix * (uint32_t)sizeof(float);
}

template <typename Tin, typename Tout, class Arith>
__global__ void __launch_bounds__(kRelayMaxWarps * kWarp, 2) smooth_relay_kernel(SegmentGeom g)
{
    extern __shared__ __align__(16) unsigned char s_relay[];
    constexpr bool kShortFirst = std::is_same<Arith, ReciprocalFma>::value;
    constexpr uint32_t kVec = kPix / 4; /* 16-byte vectors of one thread's pixels */
    const uint32_t warps = g.segs_per_row; /* == blockDim.x / kWarp */
    const uint32_t rows = (uint32_t)(g.segs_total / warps); /* launches take 32-bit rows */
    /* Segment w of the row on hardware warp hw; the row's last segment on warp 1. The two
     * end segments run the most instructions (pass_with_last_element_ends), and a block
     * lasts as long as its slowest warp, so the right end goes on warp 1 rather than the
     * last, to start early. */
    const uint32_t hw = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint32_t w = hw == 0 ? 0u : hw == 1 ? warps - 1u : hw - 1u;

    /* Segment w (halo_segments) holds [start, start + kWarp * kPix) and stores
     * [x0, x1), the same in every row. Rows of at most kRelayMaxWarps segments: 32-bit
     * coordinates, few registers live across the passes. */
    const int start = (int)(w * g.out_span);
    const int span_end = start + kWarp * kPix;
    const int x0 = w == 0 ? 0 : start + kPix;
    const int x1 = (int)g.width <= span_end ? (int)g.width : span_end - kPix;
    const int xs = start + (int)lane * kPix;
    const RowEnds ends = row_ends(xs, g.width);

    /* Lane 1 publishes for the left neighbour's lane 31, lane 30 for the right neighbour's
     * lane 0; the outer warps' outer lanes are the row's ends and receive nothing. */
    const bool publishes = lane == 1 || lane == kWarp - 2;
    const bool receives = (lane == 0 && w > 0) || (lane == kWarp - 1 && w + 1 < warps);
    constexpr uint32_t kSlotBytes = kPix * sizeof(float);
    const uint32_t parity_bytes = warps * 2u * kSlotBytes;
    const uint32_t mine = smem_addr(s_relay) + (w * 2u + (lane == 1 ? 0u : 1u)) * kSlotBytes;
    const uint32_t theirs =
        smem_addr(s_relay) + (lane == 0 ? (w - 1u) * 2u + 1u : (w + 1u) * 2u) * kSlotBytes;
    uint32_t parity_off = 0; /* runs on across rows: no slot reuse without a barrier */

    for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
        float v[kPix];
        load_run<Tin, Tout>(g.src + (size_t)row * g.src_pitch, xs, g.width, v, g.warp_stores != 0,
                            (uint32_t *)(s_relay + relay_slot_bytes(warps)) + hw * (kWarp * kStageLaneWords<Tout>),
                            lane);

        auto refresh = [&]() {
            if (publishes) {
#pragma unroll
                for (uint32_t i = 0; i < kVec; ++i)
                    st_shared4(mine + parity_off + 16u * i, v[4 * i], v[4 * i + 1], v[4 * i + 2],
                               v[4 * i + 3]);
            }
            __syncthreads();
            if (receives) {
#pragma unroll
                for (uint32_t i = 0; i < kVec; ++i)
                    ld_shared4(theirs + parity_off + 16u * i, v[4 * i], v[4 * i + 1],
                               v[4 * i + 2], v[4 * i + 3]);
            }
            parity_off ^= parity_bytes;
        };
        /* Passes [k, to) with the arithmetic of `arith`, a refresh before every pass whose
         * index is a nonzero multiple of kPix (every warp of the block at the same one). */
        uint32_t k = 0;
        auto passes = [&](auto arith, uint32_t to) {
            using PassArith = decltype(arith);
            while (k < to) {
                if (k != 0 && k % kPix == 0) refresh();
                const uint32_t stop = (k / kPix + 1) * kPix < to ? (k / kPix + 1) * kPix : to;
                /* two copies of the loop, so a warp without row ends tests for none a
                 * pass; unrolled by two, which halves the loop's own instructions */
                if (!ends.warp_has_end) {
                    warp_interior_passes<PassArith>(v, k, stop);
                } else {
#pragma unroll 2
                    for (; k < stop; ++k) {
                        const float l = __shfl_up_sync(kFullMask, v[kPix - 1], 1);
                        const float r = __shfl_down_sync(kFullMask, v[0], 1);
                        pass_with_last_element_ends<PassArith>(v, l, r, ends);
                    }
                }
            }
        };
        if constexpr (kShortFirst) passes(ShortDivide{}, g.short_passes);
        passes(Arith{}, g.passes);

        store_run<Tout, Arith>(g.dst + (size_t)row * g.dst_pitch, xs, x0, x1, v, g.warp_stores != 0,
                               (uint32_t *)(s_relay + relay_slot_bytes(warps)) + hw * (kWarp * kStageLaneWords<Tout>),
                               lane);
    }
}

/* ---- host side ---- */

/*
 * Segments of a row with a halo (the registers variant's layout): segment s holds the
 * span = group x kPix pixels from start = s x out_span on, out_span = span - 2 x halo. A
 * halo is needed only where a segment's edge is not a row end (pixels past the row's end
 * never reach it: its mean is of itself and its left neighbour). So segment 0 stores from
 * x = 0, a later one from start + halo; the segment holding the row's end stores up to it,
 * the others up to start + span - halo. The stored runs follow each other, and a row needs
 * one segment for its first span and one for each out_span after it.
 */
uint32_t halo_segments(uint32_t width, uint32_t span, uint32_t halo)
{
    const uint32_t out_span = span - 2 * halo;
    return width <= span ? 1u : 1u + (width - span + out_span - 1) / out_span;
}

/* Segments of `group` threads with a halo of `passes` rounded up to a thread's pixels. */
SegmentGeom plan_halo(uint32_t width, uint64_t rows, uint32_t passes, uint32_t group)
{
    SegmentGeom g = {};
    g.width = width;
    g.passes = passes;
    g.group = group;
    g.halo = (passes + kPix - 1) / kPix * kPix;
    g.out_span = group * kPix - 2 * g.halo;
    g.segs_per_row = halo_segments(width, group * kPix, g.halo);
    g.segs_total = rows * g.segs_per_row;
    return g;
}

/* Segment geometry for `passes` passes over rows of `width` pixels, in groups of up to
 * kMaxGroup threads: a row of up to kMaxSpan pixels is one segment with no halo. */
SegmentGeom plan_groups(uint32_t width, uint64_t rows, uint32_t passes)
{
    if (width > kMaxSpan) return plan_halo(width, rows, passes, kMaxGroup);
    SegmentGeom g = {};
    g.width = width;
    g.passes = passes;
    const uint32_t threads = (width + kPix - 1) / kPix;
    g.group = (threads + kWarp - 1) / kWarp * kWarp;
    g.out_span = g.group * kPix;
    g.segs_per_row = 1;
    g.segs_total = rows;
    return g;
}

/* Relay segments (smooth_relay_kernel): one-warp segments with a halo of kPix pixels,
 * however many the passes. */
SegmentGeom plan_relay(uint32_t width, uint64_t rows, uint32_t passes)
{
    SegmentGeom g = plan_halo(width, rows, kPix, kWarp);
    g.passes = passes;
    g.relay = 1;
    return g;
}

/*
 * The geometry of one launch. Rows wider than a warp's 1024 pixels take multi-warp groups,
 * which meet at a barrier every pass, so their passes issue further below the peak than
 * one-warp segments with a halo: a pixel-pass costs about 0.8 as much in the latter. One-warp segments are taken when the pixels they smooth, halos and
 * all, are at most 1.2 times the groups' (16384-pixel rows: 1.0625); not at
 * kPrefetchMaxPasses passes or fewer from integer samples, where the multi-warp groups with the
 * copy engine win.
 * Up to kPix passes they are independent warps with a halo of kPix; above, up to
 * kRelayMaxPasses, relay segments where a row fits kRelayMaxWarps of them and ends on a
 * thread's last pixel, else halos as wide as the passes up to kWarpSegmentMaxPasses. A
 * relay block lasts as long as its slowest warp, and a row end elsewhere makes its warp pay
 * the switches (RowEnds).
 */
SegmentGeom plan(uint32_t width, uint64_t rows, uint32_t passes, bool prefetch, bool float_in)
{
    const SegmentGeom groups = plan_groups(width, rows, passes);
    /* float32 input has no copy-engine prefetch (launch_typed: 1- and 2-byte samples), so
     * few passes lose the groups' reason and take one-warp segments too */
    if (prefetch || groups.group <= kWarp || (passes <= kPrefetchMaxPasses && !float_in))
        return groups;
    /* one-warp segments: no barrier a pass, but every segment after a row's first also
     * smooths 2 x halo pixels it does not store */
    SegmentGeom warps;
    if (passes > (uint32_t)kPix && passes <= kRelayMaxPasses && width % kPix == 0 &&
        halo_segments(width, kWarp * kPix, kPix) <= kRelayMaxWarps)
        warps = plan_relay(width, rows, passes);
    else if (passes <= kWarpSegmentMaxPasses)
        warps = plan_halo(width, rows, passes, kWarp);
    else
        return groups;
    if (warps.segs_total > kMaxSegments) return groups;
    const uint64_t warps_px = (uint64_t)warps.segs_per_row * kWarp * kPix;
    const uint64_t groups_px = (uint64_t)groups.segs_per_row * groups.group * kPix;
    return warps_px * 10 <= groups_px * 12 ? warps : groups;
}

template <typename Tin, typename Tout, class Arith>
cudaError_t launch_typed(SegmentGeom g, bool prefetch, cudaStream_t stream)
{
    const uint32_t block = g.group > kWarp ? g.group : (uint32_t)kNarrowBlock;
    const uint64_t per_block = block / g.group;
    const uint64_t blocks = (g.segs_total + per_block - 1) / per_block;
    unsigned grid = blocks > (uint64_t)INT_MAX ? (unsigned)INT_MAX : (unsigned)blocks;
    if constexpr (sizeof(Tin) <= 2) {
        if (prefetch && g.group > kWarp) {
            /* persistent: as many blocks as fit at once, each striding over segments */
            const size_t smem = with_staging<Tout>(g, before_stage_bytes<Tin, true>(g.group), block);
            constexpr auto kernel = smooth_registers_kernel<Tin, Tout, Arith, true>;
            uint64_t resident = 0;
            const cudaError_t e = resident_blocks<kernel>((int)block, smem, -1, &resident);
            if (e != cudaSuccess) return e;
            if (grid > resident) grid = (unsigned)resident;
            kernel<<<grid, block, smem, stream>>>(g);
            return cudaGetLastError();
        }
    }
    if (g.relay) { /* a block a row, striding over rows */
        const uint64_t rows = g.segs_total / g.segs_per_row;
        const unsigned relay_grid = rows > (uint64_t)INT_MAX ? (unsigned)INT_MAX : (unsigned)rows;
        const uint32_t relay_block = g.segs_per_row * kWarp;
        const size_t smem = with_staging<Tout>(g, relay_slot_bytes(g.segs_per_row), relay_block);
        constexpr auto kernel = smooth_relay_kernel<Tin, Tout, Arith>;
        if (smem > 48u * 1024u) { /* the staging of 10 warps or more: the limit raised */
            uint64_t resident = 0;
            const cudaError_t e = resident_blocks<kernel>((int)relay_block, smem, -1, &resident);
            if (e != cudaSuccess) return e;
        }
        kernel<<<relay_grid, relay_block, smem, stream>>>(g);
        return cudaGetLastError();
    }
    const size_t smem = with_staging<Tout>(g, before_stage_bytes<Tin, false>(g.group), block);
    constexpr auto kernel = smooth_registers_kernel<Tin, Tout, Arith, false>;
    if (smem > 48u * 1024u) { /* a multi-warp group's staging: the limit raised */
        uint64_t resident = 0;
        const cudaError_t e = resident_blocks<kernel>((int)block, smem, -1, &resident);
        if (e != cudaSuccess) return e;
    }
    kernel<<<grid, block, smem, stream>>>(g);
    return cudaGetLastError();
}

/* One launch of the chain: pick the layout and the instantiation for the in/out kinds.
 * few_passes: launches of at most kFewPassesMax passes from integer samples go to
 * registers_few_passes.cu (the default variant's choice). */
template <class Arith>
cudaError_t launch_one(const void *in, size_t in_pitch, uint32_t in_kind, void *out,
                       size_t out_pitch, uint32_t out_kind, uint32_t passes, uint32_t width,
                       uint32_t rows, bool prefetch, bool few_passes, cudaStream_t stream)
{
    if (few_passes && in_kind != kKindFloat && few_passes_fit(width, rows, passes))
        return smooth_few_passes(in, in_pitch, in_kind, out, out_pitch, out_kind, passes, width,
                                 rows, stream);
    SegmentGeom g = plan(width, rows, passes, prefetch, in_kind == kKindFloat);
    set_rows(g, in, in_pitch, out, out_pitch);
    /* Integer input is pass 1 of the run; a float input continues a chain already past
     * kMaxPassesPerLaunch passes, beyond the short division's reach. */
    g.short_passes = in_kind == kKindFloat ? 0u
                     : passes < GS_SHORT_DIV_PASSES ? passes
                                                    : GS_SHORT_DIV_PASSES;
    return gs_cuda_dispatch_kinds(in_kind, out_kind, [&](auto tin, auto tout) {
        return launch_typed<decltype(tin), decltype(tout), Arith>(g, prefetch, stream);
    });
}

uint32_t max_passes_per_launch(uint32_t width)
{
    return width <= kMaxSpan ? GS_MAX_ITERS : kMaxPassesPerLaunch;
}

template <class Arith>
cudaError_t smooth_with(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                        uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                        void *d_scratch, size_t scratch_bytes, bool prefetch, bool few_passes,
                        cudaStream_t stream, uint32_t last_kind = 0)
{
    /* Segments are counted in 32 bits; a strip has far fewer (the plugin sends chunks). */
    if ((uint64_t)rows * (((uint64_t)width + kMaxSpan - 1) / kMaxSpan + 1) > kMaxSegments)
        return cudaErrorInvalidValue;
    if (!aligned(d_src, src_pitch) || !aligned(d_dst, dst_pitch) ||
        (d_scratch != NULL && !aligned(d_scratch, 0)))
        return cudaErrorInvalidValue;
    /* A one-pixel row keeps its value through any number of passes (n = 1): no passes (its
     * one pixel would otherwise take both end rules, each halving it). */
    const uint32_t passes_needed = width == 1 ? 0u : iters;
    auto one = [=](const void *in, size_t ip, uint32_t ik, void *out, size_t op, uint32_t ok,
                   uint32_t passes) {
        return launch_one<Arith>(in, ip, ik, out, op, ok, passes, width, rows, prefetch,
                                 few_passes, stream);
    };
    return run_chain(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, passes_needed,
                     max_passes_per_launch(width), d_scratch, scratch_bytes, stream, one,
                     last_kind);
}

} /* namespace */

#endif /* GS_CUDA_REGISTERS_KERNELS_CUH */
