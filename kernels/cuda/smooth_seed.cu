/* smooth_seed.cu: the "seed" smoothing variant: the lesson's two shared-memory buffers swapping roles each pass behind an mbarrier, extended to whole rows. */
#include "cuda_kernels.h"
#include "mbarrier.cuh"
#include "sample_io.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/*
 * As in the lesson (seeds/001): buffer A holds the tile, even passes read A and write B,
 * odd passes read B and write A; after each pass every thread arrives on an mbarrier and
 * waits (try_wait on the phase parity) before the roles swap; the final buffer follows
 * from the pass count's parity. What changes: a tile is a segment of a real row. A row of
 * up to kSeedTile pixels is one tile, so only its true ends use the adaptive count. A wider
 * row is cut into tiles that carry `passes` pixels of halo per side: a tile edge that is
 * not a row end spoils one more pixel each pass, and the halo absorbs exactly that. Passes
 * per launch are then capped at kSeedMaxPasses, with float32 between launches.
 */

namespace {

constexpr int kSeedThreads = 256;
/* Floats per shared buffer: two buffers are 32 KiB, under the 48 KiB static limit, which
 * leaves room for several blocks per SM. */
constexpr int kSeedTile = 4096;
/* Halo cap per launch: keeps at least half of each wide-row tile as output. */
constexpr uint32_t kSeedMaxPasses = 1024;

static_assert(kSeedTile % kSeedThreads == 0, "threads stride evenly over a tile");
static_assert(4 * kSeedMaxPasses <= (uint32_t)kSeedTile, "halo leaves half the tile as output");
static_assert(2 * kSeedTile * sizeof(float) + sizeof(uint64_t) <= 48 * 1024,
              "both buffers fit the static shared-memory limit");

/* Where tiles lie and what one launch does to them. */
struct SeedGeom {
    const char *src;     /* first source row (device) */
    size_t src_pitch;    /* bytes between source rows */
    char *dst;           /* first destination row (device) */
    size_t dst_pitch;    /* bytes between destination rows */
    uint32_t width;      /* pixels per row */
    uint32_t passes;     /* passes this launch */
    uint32_t halo;       /* halo pixels per side; 0 = whole rows */
    uint32_t out_span;   /* output pixels per tile */
    uint32_t segs_per_row;
    uint64_t segs_total; /* rows * segs_per_row */
};

/* ---- device helpers ---- */


/* The lesson's step between passes: every thread arrives, then waits for the phase of
 * parity `phase & 1` to complete, so all writes of the pass are visible before the swap. */
__device__ __forceinline__ void mbar_arrive_wait(uint64_t *bar, uint32_t phase)
{
    mbar_arrive(smem_addr(bar));
    mbar_wait(smem_addr(bar), phase & 1u);
}

/* One pass at buffer index j (row position xs + j) of a tile of n pixels: the adaptive
 * count at true row ends; a tile edge that is not a row end keeps its value (it lies in the
 * halo, which this pass spoils anyway). */
__device__ __forceinline__ float seed_pass_at(const float *a, uint32_t j, uint32_t n, long xs,
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
__global__ void __launch_bounds__(kSeedThreads) smooth_seed_kernel(SeedGeom g)
{
    __shared__ float s_a[kSeedTile];
    __shared__ float s_b[kSeedTile];
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
                b[j] = seed_pass_at(a, j, n, xs, g.width);
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

/* ---- host sizing helpers ---- */

SeedGeom plan(uint32_t width, uint64_t rows, uint32_t passes)
{
    SeedGeom g = {};
    g.width = width;
    g.passes = passes;
    if (width <= (uint32_t)kSeedTile) {
        g.halo = 0;
        g.out_span = width;
        g.segs_per_row = 1;
    } else {
        g.halo = passes;
        g.out_span = kSeedTile - 2 * passes;
        g.segs_per_row = (width + g.out_span - 1) / g.out_span;
    }
    g.segs_total = rows * g.segs_per_row;
    return g;
}

uint32_t max_passes_per_launch(uint32_t width)
{
    return width <= (uint32_t)kSeedTile ? GS_MAX_ITERS : kSeedMaxPasses;
}

template <typename Tin, typename Tout>
cudaError_t launch_typed(const SeedGeom &g, cudaStream_t stream)
{
    const unsigned grid = g.segs_total > (uint64_t)INT_MAX ? (unsigned)INT_MAX
                                                           : (unsigned)g.segs_total;
    smooth_seed_kernel<Tin, Tout><<<grid, kSeedThreads, 0, stream>>>(g);
    return cudaGetLastError();
}

cudaError_t launch_one(const void *in, size_t in_pitch, uint32_t in_kind, void *out,
                       size_t out_pitch, uint32_t out_kind, uint32_t passes, uint32_t width,
                       uint32_t rows, cudaStream_t stream)
{
    SeedGeom g = plan(width, rows, passes);
    g.src = (const char *)in;
    g.src_pitch = in_pitch;
    g.dst = (char *)out;
    g.dst_pitch = out_pitch;
    return gs_cuda_dispatch_kinds(in_kind, out_kind, [&](auto tin, auto tout) {
        return launch_typed<decltype(tin), decltype(tout)>(g, stream);
    });
}

} /* namespace */

/* ---- launchers ---- */

extern "C" size_t gs_cuda_smooth_seed_scratch_bytes(uint32_t width, uint32_t rows,
                                                    uint32_t iters)
{
    return gs_cuda_chain_scratch_bytes(width, rows, iters, max_passes_per_launch(width));
}

extern "C" cudaError_t gs_cuda_smooth_seed(const void *d_src, size_t src_pitch, void *d_dst,
                                           size_t dst_pitch, uint32_t width, uint32_t rows,
                                           uint32_t bits, uint32_t iters, void *d_scratch,
                                           size_t scratch_bytes, cudaStream_t stream)
{
    if (d_src == NULL || d_dst == NULL || width == 0 || rows == 0 ||
        (bits != 8 && bits != 16) || iters > GS_MAX_ITERS ||
        src_pitch < (size_t)width * (bits / 8) || dst_pitch < (size_t)width * (bits / 8))
        return cudaErrorInvalidValue;
    auto one = [=](const void *in, size_t ip, uint32_t ik, void *out, size_t op, uint32_t ok,
                   uint32_t passes) {
        return launch_one(in, ip, ik, out, op, ok, passes, width, rows, stream);
    };
    return gs_cuda_run_chain(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                             max_passes_per_launch(width), d_scratch, scratch_bytes, stream,
                             one);
}
