/* smooth_shared_tiles.cu: the shared-tiles variant, double-buffered behind an mbarrier. */
#include "launch_common.cuh"
#include "mbarrier.cuh"
#include "sample_io.cuh"
#include "bench_smooth.cuh"
#include "launch_chain.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * A double-buffered stencil (as a CUDA lesson teaches it): buffer A holds
 * the tile, even passes read A and write B, odd passes read B and write A; after each pass
 * every thread arrives on an mbarrier and waits (try_wait on the phase parity) before the
 * roles swap; the final buffer follows from the pass count's parity. The lesson smoothed
 * each 256-pixel tile as if it were a whole signal; here a tile is a segment of a real row
 * (SegmentGeom). A row of up to kTile pixels is one tile, so only its true ends use the
 * adaptive count. A wider row is cut into tiles that carry `passes` pixels of halo per
 * side, and passes per launch are capped at kMaxPassesPerLaunch, with float32 between
 * launches.
 */

using namespace gs_cuda;

namespace {

constexpr int kThreads = 256;
/* Floats per shared buffer: two buffers are 32 KiB, under the 48 KiB static limit, which
 * leaves room for several blocks per SM. */
constexpr int kTile = 4096;
/* Halo cap per launch: keeps at least half of each wide-row tile as output. */
constexpr uint32_t kMaxPassesPerLaunch = 1024;
/* The static shared-memory limit of a block. */
constexpr size_t kStaticSharedBytes = 48 * 1024;

static_assert(kTile % kThreads == 0, "threads stride evenly over a tile");
static_assert(4 * kMaxPassesPerLaunch <= (uint32_t)kTile, "halo leaves half the tile as output");
static_assert(2 * kTile * sizeof(float) + sizeof(uint64_t) <= kStaticSharedBytes,
              "both buffers fit the static shared-memory limit");

/* ---- device helpers ---- */


/* The step between passes: every thread arrives, then waits for the phase of parity
 * `phase & 1` to complete, so all writes of the pass are visible before the swap. */
__device__ __forceinline__ void mbar_arrive_wait(uint64_t *bar, uint32_t phase)
{
    mbar_arrive(smem_addr(bar));
    mbar_wait(smem_addr(bar), phase & 1u);
}

/* One pass at buffer index j (row position xs + j) of a tile of n pixels: the adaptive
 * count at true row ends; a tile edge that is not a row end keeps its value (it lies in the
 * halo, which this pass spoils anyway). */
__device__ __forceinline__ float pass_at(const float *a, uint32_t j, uint32_t n, long xs,
                                              uint32_t width)
{
    const long x = xs + (long)j;
    if (x == 0) return width == 1 ? a[j] : gs_mean2(a[j], a[j + 1]);
    if (x == (long)width - 1) return gs_mean2(a[j - 1], a[j]);
    if (j == 0 || j + 1 == n) return a[j];
    return gs_mean3(a[j - 1], a[j], a[j + 1]);
}

/* ---- kernels ---- */

template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kThreads) smooth_shared_tiles_kernel(SegmentGeom g)
{
    __shared__ float s_a[kTile];
    __shared__ float s_b[kTile];
    __shared__ uint64_t s_bar;

    if (threadIdx.x == 0) mbar_init(smem_addr(&s_bar), blockDim.x);
    __syncthreads(); /* the initialised barrier is visible to every thread */
    uint32_t phase = 0;

    for (uint64_t seg = blockIdx.x; seg < g.segs_total; seg += gridDim.x) {
        const uint64_t row = seg / g.segs_per_row;
        const long x0 = (long)(seg % g.segs_per_row) * g.out_span;
        const long x1 = x0 + (long)g.out_span < (long)g.width ? x0 + (long)g.out_span
                                                                : (long)g.width;
        const long xs = x0 - (long)g.halo > 0 ? x0 - (long)g.halo : 0;
        const long xe = x1 + (long)g.halo < (long)g.width ? x1 + (long)g.halo : (long)g.width;
        const uint32_t n = (uint32_t)(xe - xs);

        const Tin *in = (const Tin *)(g.src + row * g.src_pitch);
        for (uint32_t j = threadIdx.x; j < n; j += blockDim.x) s_a[j] = (float)in[xs + j];
        mbar_arrive_wait(&s_bar, phase++); /* buffer A loaded */

        for (uint32_t k = 0; k < g.passes; ++k) {
            const float *a = (k & 1u) ? s_b : s_a;
            float *b = (k & 1u) ? s_a : s_b;
            for (uint32_t j = threadIdx.x; j < n; j += blockDim.x)
                b[j] = pass_at(a, j, n, xs, g.width);
            mbar_arrive_wait(&s_bar, phase++); /* all writes of this pass done: swap */
        }

        const float *fin = (g.passes & 1u) ? s_b : s_a;
        Tout *out = (Tout *)(g.dst + row * g.dst_pitch);
        for (long x = x0 + threadIdx.x; x < x1; x += blockDim.x) store_sample(out + x, fin[x - xs]);
        mbar_arrive_wait(&s_bar, phase++); /* reads done before the next tile overwrites A */
    }

    __syncthreads();
    if (threadIdx.x == 0) mbar_inval(smem_addr(&s_bar));
}

/* ---- host side ---- */

SegmentGeom plan(uint32_t width, uint64_t rows, uint32_t passes)
{
    SegmentGeom g = {};
    g.width = width;
    g.passes = passes;
    if (width <= (uint32_t)kTile) {
        g.halo = 0;
        g.out_span = width;
        g.segs_per_row = 1;
    } else {
        g.halo = passes;
        g.out_span = kTile - 2 * passes;
        g.segs_per_row = (width + g.out_span - 1) / g.out_span;
    }
    g.segs_total = rows * g.segs_per_row;
    return g;
}

uint32_t max_passes_per_launch(uint32_t width)
{
    return width <= (uint32_t)kTile ? GS_MAX_ITERS : kMaxPassesPerLaunch;
}

template <typename Tin, typename Tout>
cudaError_t launch_typed(const SegmentGeom &g, cudaStream_t stream)
{
    const unsigned grid = g.segs_total > (uint64_t)INT_MAX ? (unsigned)INT_MAX
                                                           : (unsigned)g.segs_total;
    smooth_shared_tiles_kernel<Tin, Tout><<<grid, kThreads, 0, stream>>>(g);
    return cudaGetLastError();
}

cudaError_t launch_one(const void *in, size_t in_pitch, uint32_t in_kind, void *out,
                       size_t out_pitch, uint32_t out_kind, uint32_t passes, uint32_t width,
                       uint32_t rows, cudaStream_t stream)
{
    SegmentGeom g = plan(width, rows, passes);
    set_rows(g, in, in_pitch, out, out_pitch);
    return gs_cuda_dispatch_kinds(in_kind, out_kind, [&](auto tin, auto tout) {
        return launch_typed<decltype(tin), decltype(tout)>(g, stream);
    });
}

} /* namespace */

/* ---- the variant's entry ---- */

size_t gs_cuda::smooth_shared_tiles_scratch(uint32_t width, uint32_t rows, uint32_t iters)
{
    return chain_scratch_bytes(width, rows, iters, max_passes_per_launch(width));
}

cudaError_t gs_cuda::smooth_shared_tiles(const void *d_src, size_t src_pitch, void *d_dst,
                                         size_t dst_pitch, uint32_t width, uint32_t rows,
                                         uint32_t bits, uint32_t iters, void *d_scratch,
                                         size_t scratch_bytes, cudaStream_t stream)
{
    auto one = [=](const void *in, size_t ip, uint32_t ik, void *out, size_t op, uint32_t ok,
                   uint32_t passes) {
        return launch_one(in, ip, ik, out, op, ok, passes, width, rows, stream);
    };
    return run_chain(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                     max_passes_per_launch(width), d_scratch, scratch_bytes, stream, one);
}
