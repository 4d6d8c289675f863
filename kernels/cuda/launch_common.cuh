/* launch_common.cuh: what every CUDA kernel file shares. */
/*
 * The warp's constants, the alignment rule for vector access, the argument checks a
 * launcher makes before any launch, the resident-block count of a persistent grid, and the
 * geometry of row segments.
 */
#ifndef GS_CUDA_LAUNCH_COMMON_CUH
#define GS_CUDA_LAUNCH_COMMON_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "stencil_math.h"
#include "wave_segments.h"

namespace gs_cuda {

constexpr int kWarp = 32;                   /* threads of a warp on every NVIDIA GPU */
constexpr unsigned kFullMask = 0xffffffffu; /* all lanes of a warp, for the *_sync shuffles */
constexpr uint32_t kMaxGridY = 65535u;      /* hardware limit of gridDim.y */

/* blocks_x blocks across by a block for each of `segs` row segments, at most kMaxGridY:
 * segment walks take segments blockIdx.y, + gridDim.y, ... */
inline dim3 segment_grid(uint32_t blocks_x, uint32_t segs)
{
    return dim3(blocks_x, segs < kMaxGridY ? segs : kMaxGridY);
}

/* A device row start and pitch that allow 16-byte vector access (GS_CUDA_ALIGN). */
inline bool aligned(const void *p, size_t pitch)
{
    return ((uintptr_t)p % GS_CUDA_ALIGN) == 0 && pitch % GS_CUDA_ALIGN == 0;
}

/* Buffers present, a non-empty shape, pitches that hold a row (any depths). */
inline bool shape_args_ok(const void *d_src, size_t src_pitch, const void *d_dst, size_t dst_pitch,
                          uint32_t width, uint32_t rows, uint32_t in_bits, uint32_t out_bits)
{
    return d_src != NULL && d_dst != NULL && width > 0 && rows > 0 &&
           src_pitch >= (size_t)width * (in_bits / 8) && dst_pitch >= (size_t)width * (out_bits / 8);
}

/* shape_args_ok for integer samples of 8 or 16 bits. */
inline bool rows_args_ok(const void *d_src, size_t src_pitch, const void *d_dst, size_t dst_pitch,
                         uint32_t width, uint32_t rows, uint32_t in_bits, uint32_t out_bits)
{
    return (in_bits == 8 || in_bits == 16) &&
           shape_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, in_bits, out_bits);
}

/* Smoothing keeps the depth and takes at most GS_MAX_ITERS passes. */
inline bool smooth_args_ok(const void *d_src, size_t src_pitch, const void *d_dst,
                           size_t dst_pitch, uint32_t width, uint32_t rows, uint32_t bits,
                           uint32_t iters)
{
    return iters <= GS_MAX_ITERS &&
           rows_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, bits);
}

/*
 * The blocks of Kernel, `block` threads each with `smem` bytes of dynamic shared memory,
 * that the current device holds at once as the kernel's attributes stand (at least one an
 * SM): the SM count times the occupancy calculator's blocks an SM.
 */
template <auto Kernel>
cudaError_t occupancy_blocks(int block, size_t smem, uint64_t *resident)
{
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t err;
    if ((err = cudaGetDevice(&dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, block, smem)) != cudaSuccess)
        return err;
    *resident = (uint64_t)(per_sm > 0 ? per_sm : 1) * (uint64_t)(sms > 0 ? sms : 1);
    return cudaSuccess;
}

/*
 * The blocks of Kernel, `block` threads each with `smem` bytes of dynamic shared memory,
 * that the current device holds at once (at least one an SM), for a persistent grid. The
 * kernel's dynamic shared memory limit is raised to all the device allows a block, never
 * to a launch's own size, so a launch of another size on another thread in between cannot
 * lower it under this one; when carveout >= 0, its preferred carveout is set. Asked at
 * every launch: the plugin ABI allows no mutable global state to keep the answer in, and
 * keeping it per device is no faster.
 */
template <auto Kernel>
cudaError_t resident_blocks(int block, size_t smem, int carveout, uint64_t *resident)
{
    int dev = 0, optin = 0;
    cudaFuncAttributes attrs;
    cudaError_t err;
    if ((err = cudaGetDevice(&dev)) != cudaSuccess || (err = cudaFuncGetAttributes(&attrs, Kernel)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess)
        return err;
    const size_t most = (size_t)optin > attrs.sharedSizeBytes ? (size_t)optin - attrs.sharedSizeBytes : 0;
    if ((err = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)(most > smem ? most : smem))) != cudaSuccess ||
        (carveout >= 0 &&
         (err = cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout)) !=
             cudaSuccess))
        return err;
    return occupancy_blocks<Kernel>(block, smem, resident);
}

/*
 * gs_wave_segment_rows for Kernel's launch of `block` threads a block, with `smem` bytes of
 * dynamic shared memory (its limit raised as resident_blocks does), on the current device
 * (smooth_columns.cu, smooth_xy.cu, smooth_xy_tiles.cu): segments that fill whole waves of
 * resident blocks. With 256-row segments a 16384-row window ran 1.3 waves of blocks down the
 * columns, its last wave a third full.
 */
template <auto Kernel>
cudaError_t wave_segment_rows(int block, size_t smem, uint32_t out_rows, uint32_t blocks_x,
                              uint32_t default_rows, uint32_t *seg_rows)
{
    uint64_t resident = 0;
    const cudaError_t err = smem ? resident_blocks<Kernel>(block, smem, -1, &resident)
                                 : occupancy_blocks<Kernel>(block, 0, &resident);
    if (err != cudaSuccess) return err;
    *seg_rows = gs_wave_segment_rows(out_rows, blocks_x, resident, default_rows);
    return cudaSuccess;
}

/*
 * Where the row segments of one launch lie. A segment edge that is not a row end spoils one
 * more pixel each pass, and a halo of `halo` pixels absorbs exactly that. The shared-tiles
 * variant stores a run of `out_span` pixels a segment, read with the halo on each side; the
 * registers variant starts segment s at s x out_span and stores from the row's start or its
 * left halo's end to the row's end or its right halo's start (halo_segments in
 * registers_kernels.cuh). A row that fits one segment has no halo and only its true ends use
 * the adaptive count.
 */
struct SegmentGeom {
    const char *src;       /* first source row (device) */
    size_t src_pitch;      /* bytes between source rows */
    char *dst;             /* first destination row (device) */
    size_t dst_pitch;      /* bytes between destination rows */
    uint32_t width;        /* pixels per row */
    uint32_t passes;       /* passes this launch */
    uint32_t short_passes; /* leading passes that may divide in two instructions (registers) */
    uint32_t group;        /* threads per segment (registers variant; 0 elsewhere) */
    uint32_t relay;        /* 1: one-warp segments whose halos are relayed (registers) */
    uint32_t warp_stores;  /* 1: float runs stored a warp at a time, staging reserved (registers) */
    uint32_t halo;         /* halo pixels per side; 0 = whole rows */
    uint32_t out_span;     /* output pixels per segment, or between segment starts */
    uint32_t segs_per_row; /* segments in one row */
    uint64_t segs_total;   /* rows * segs_per_row */
};

/* Point a planned geometry at one launch's input and output rows. */
inline void set_rows(SegmentGeom &g, const void *in, size_t in_pitch, void *out, size_t out_pitch)
{
    g.src = (const char *)in;
    g.src_pitch = in_pitch;
    g.dst = (char *)out;
    g.dst_pitch = out_pitch;
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_LAUNCH_COMMON_CUH */
