/* cuda_plugin.cu: the CUDA backend plugin: probe, instances, and strips streamed through pinned double buffers onto the kernels in kernels/cuda. */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"
#include "gsmooth/gsmooth_plugin.h"
#include "plugin_util.h"
#include "round_up.h"
#include "stencil_math.h"

static_assert(GS_MAX_ITERS == GS_PLUGIN_MAX_ITERS, "the kernels' pass limit is the ABI's");

/*
 * A strip call cuts the strip into chunks of rows (at most kChunkBytes in any one buffer,
 * so device memory stays bounded whatever the strip size) and runs them round-robin on
 * kStreams streams: while one chunk's rows are copied into its pinned staging buffer on the
 * host, the previous chunk uploads, computes and downloads on the other stream. The plugin
 * holds no global state; the descriptor is read-only.
 */

namespace {

constexpr int kStreams = 2;                     /* double buffering: copy-in overlaps GPU work */
constexpr size_t kChunkBytes = (size_t)16 << 20; /* largest single buffer of a chunk */
constexpr uint32_t kPreferredStripBytes = 64u << 20; /* four chunks: the pipeline fills */
/* Device-memory strips whose rows the kernels take in place need no staging: a chunk is
 * bounded by its float scratch alone, so one launch covers the strip when none is needed.
 * Scratch is kept per stream until the instance goes: 2 x 128 MiB at most beside a caller's
 * own allocations (1 GiB chunks held 2 GiB after one 16384^2 xy call), and the summed-area
 * table's look-back words, 37 MiB at most (gs_cuda_integral_scratch). */
constexpr size_t kDirectChunkBytes = (size_t)128 << 20;
static_assert(kStreams >= 2, "overlap needs two streams at least");

enum { EV_START, EV_UPLOADED, EV_COMPUTED, EV_DOWNLOADED, EV_COUNT };

/* Device buffers of one stream, and its pinned host staging. */
struct lane_buffers {
    void *h_in, *h_out;          /* pinned staging, packed rows */
    void *d_in, *d_out, *d_scr;  /* device rows (pitched) and float scratch */
    cudaEvent_t ev[EV_COUNT];    /* per chunk: start, uploaded, computed, downloaded */
};

} /* namespace */

struct gs_plugin_instance {
    int device;                       /* CUDA device ordinal */
    bool device_memory;               /* strips are in device memory (ABI 1.3 config.memory) */
    cudaStream_t stream[kStreams];    /* one per staging buffer */
    lane_buffers lane[kStreams];      /* buffers, sized by `cap_*` below */
    size_t cap_h_in, cap_h_out;       /* bytes of each h_in / h_out */
    size_t cap_d_in, cap_d_out, cap_d_scr; /* bytes of each d_in / d_out / d_scr */
    void *d_carry, *h_carry;          /* 2d: the table row above the strip (device, pinned) */
    size_t cap_carry;                 /* bytes of d_carry and h_carry */
    gs_cuda_integral_scratch table_scratch; /* 2d: the tiles' look-back words */
    uint64_t upload_ns, kernel_ns, download_ns; /* summed event times */
};

namespace {

/* The calling thread's current device, restored when the scope ends: the plugin's calls
 * select their instance's device, and a caller's thread (a torch or cupy program calling
 * libgsmooth) must find its own device unchanged afterwards. */
struct device_scope {
    int saved = -1;
    device_scope()
    {
        if (cudaGetDevice(&saved) != cudaSuccess) {
            cudaGetLastError();
            saved = -1;
        }
    }
    ~device_scope()
    {
        if (saved >= 0) cudaSetDevice(saved);
    }
    device_scope(const device_scope &) = delete;
    device_scope &operator=(const device_scope &) = delete;
};

/* ---- errors ---- */

gs_plugin_status fail_cuda(char *err, size_t err_size, const char *what, cudaError_t e)
{
    const gs_plugin_status prc = e == cudaErrorMemoryAllocation ? GS_PLUGIN_ERR_NOMEM
                                                               : GS_PLUGIN_ERR_DEVICE;
    return gs_plugin_fail(err, err_size, prc, "CUDA %s: %s (error %d)", what, cudaGetErrorString(e),
                (int)e);
}

/* ---- probe ---- */

__global__ void probe_empty_kernel() {}

gs_plugin_status cuda_probe(char *err, size_t err_size)
{
    device_scope keep_device;
    int driver = 0, runtime = 0, count = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver) {
        cudaGetLastError();
        if (driver == 0)
            return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "no NVIDIA driver");
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE,
                    "driver too old: it supports CUDA %d.%d, the plugin needs %d.%d",
                    driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
        cudaGetLastError();
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "no CUDA device");
    }
    if (e == cudaErrorStubLibrary) {
        cudaGetLastError();
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE,
                    "a stub libcuda.so is first on the library path (CUDA error 34)");
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "CUDA unavailable: %s (error %d)",
                    cudaGetErrorString(e), (int)e);
    }
    cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "CUDA device 0: %s",
                    cudaGetErrorString(e));
    e = cudaSetDevice(0);
    if (e == cudaSuccess) {
        probe_empty_kernel<<<1, 1>>>();
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
    }
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorUnsupportedPtxVersion) {
        cudaGetLastError();
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE,
                    "no kernel image for this device (%s, compute capability %d.%d; the "
                    "plugin carries sm_90 code and PTX)",
                    prop.name, prop.major, prop.minor);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "CUDA test launch failed: %s",
                    cudaGetErrorString(e));
    }
    gs_plugin_fail(err, err_size, GS_PLUGIN_OK,
         "%s, compute capability %d.%d, %d device%s, driver CUDA %d.%d, runtime %d.%d",
         prop.name, prop.major, prop.minor, count, count == 1 ? "" : "s", driver / 1000,
         driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    return GS_PLUGIN_OK;
}

/* ---- instances ---- */

void release_buffers(gs_plugin_instance *inst)
{
    for (int s = 0; s < kStreams; ++s) {
        lane_buffers *b = &inst->lane[s];
        if (b->h_in) cudaFreeHost(b->h_in);
        if (b->h_out) cudaFreeHost(b->h_out);
        if (b->d_in) cudaFree(b->d_in);
        if (b->d_out) cudaFree(b->d_out);
        if (b->d_scr) cudaFree(b->d_scr);
        b->h_in = b->h_out = b->d_in = b->d_out = b->d_scr = NULL;
    }
    if (inst->d_carry) cudaFree(inst->d_carry);
    if (inst->h_carry) cudaFreeHost(inst->h_carry);
    inst->d_carry = inst->h_carry = NULL;
    gs_cuda_integral_scratch_free(&inst->table_scratch);
    inst->cap_h_in = inst->cap_h_out = inst->cap_d_in = inst->cap_d_out = 0;
    inst->cap_d_scr = inst->cap_carry = 0;
}

void cuda_destroy(gs_plugin_instance *inst)
{
    if (!inst) return;
    device_scope keep_device;
    cudaSetDevice(inst->device);
    for (int s = 0; s < kStreams; ++s)
        if (inst->stream[s]) cudaStreamSynchronize(inst->stream[s]);
    release_buffers(inst);
    for (int s = 0; s < kStreams; ++s) {
        for (int k = 0; k < EV_COUNT; ++k)
            if (inst->lane[s].ev[k]) cudaEventDestroy(inst->lane[s].ev[k]);
        if (inst->stream[s]) cudaStreamDestroy(inst->stream[s]);
    }
    free(inst);
}

gs_plugin_status cuda_create(const gs_plugin_config *config, gs_plugin_instance **out,
                             char *err, size_t err_size)
{
    device_scope keep_device;
    gs_plugin_status prc = GS_PLUGIN_OK;
    gs_plugin_instance *inst = NULL;
    int device = 0, count = 0;
    cudaError_t e;

    if (!out) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null output pointer");
    *out = NULL;
    if (config && config->struct_size >= offsetof(gs_plugin_config, device) + sizeof(int32_t) &&
        config->device >= 0)
        device = config->device;
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        prc = gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_UNAVAILABLE, "no usable CUDA device: %s",
                             e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        goto cleanup;
    }
    if (device >= count) {
        prc = gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID,
                             "CUDA device %d of %d does not exist", device, count);
        goto cleanup;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        prc = fail_cuda(err, err_size, "set device", e);
        goto cleanup;
    }
    inst = (gs_plugin_instance *)calloc(1, sizeof *inst);
    if (!inst) {
        prc = gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    inst->device = device;
    inst->device_memory =
        config && config->struct_size >= offsetof(gs_plugin_config, memory) + sizeof(uint32_t) &&
        config->memory == GS_MEMORY_DEVICE;
    for (int s = 0; s < kStreams && e == cudaSuccess; ++s) {
        e = cudaStreamCreateWithFlags(&inst->stream[s], cudaStreamNonBlocking);
        for (int k = 0; k < EV_COUNT && e == cudaSuccess; ++k)
            e = cudaEventCreate(&inst->lane[s].ev[k]);
    }
    if (e != cudaSuccess) {
        prc = fail_cuda(err, err_size, "stream setup", e);
        goto cleanup;
    }
    *out = inst;
    inst = NULL;

cleanup:
    cuda_destroy(inst);
    return prc;
}

/* ---- strip streaming ---- */

enum op_kind { OP_SMOOTH, OP_ROWS, OP_2D, OP_AXES };

/* What a call computes: the operation, its passes, and for OP_AXES the axes and the rows
 * of the strip's window above and below the rows written. */
struct strip_work {
    op_kind op;
    uint32_t iters;
    uint32_t axes;
    uint32_t above, below;
};

/* Bytes of one piece of device scratch, kept 256-byte aligned inside d_scr. */
size_t piece(size_t bytes) { return gs_round_up(bytes, 256); }

/* The shape of one strip's chunks. A chunk writes rows_per_chunk rows of the strip; down
 * columns it reads up to `halo` more rows on each side from the strip's window, so each
 * chunk is a window of its own (gsmooth_plugin.h, smooth_axes). */
struct chunk_plan {
    uint32_t rows_per_chunk;
    uint32_t chunks;
    uint32_t halo;               /* rows of context a chunk reads above and below */
    uint32_t window_rows;        /* rows in the strip's window (above + rows + below) */
    size_t in_row, out_row;      /* packed host row bytes */
    size_t in_pitch, out_pitch;  /* device pitches, GS_CUDA_ALIGN multiples */
    size_t float_pitch;          /* device pitch of a float32 row (xy) */
    size_t rows_float, rows_chain, columns; /* OP_AXES scratch pieces, bytes */
    size_t scratch;              /* device float scratch bytes for one chunk */
};

/* Chunk c's window: rows [in0, in1) of the strip's window, its rows written starting at
 * in0 + above. */
struct chunk_rows {
    uint32_t y0, rows;     /* rows of the strip written */
    uint32_t in0, in1;     /* rows of the strip's window read */
    uint32_t above;        /* rows read above the first row written */
};

chunk_rows rows_of_chunk(const chunk_plan &p, const gs_strip *s, const strip_work &w, uint32_t c)
{
    chunk_rows r;
    r.y0 = c * p.rows_per_chunk;
    r.rows = s->rows - r.y0 < p.rows_per_chunk ? s->rows - r.y0 : p.rows_per_chunk;
    const uint32_t first = w.above + r.y0; /* in window coordinates */
    r.in0 = first > p.halo ? first - p.halo : 0;
    r.in1 = first + r.rows + p.halo < p.window_rows ? first + r.rows + p.halo : p.window_rows;
    r.above = first - r.in0;
    return r;
}

/* Where a strip's rows are read and written on the device. Host strips go through the
 * lanes' staging; device strips are read and written in place when their rows meet the
 * kernels' alignment (GS_CUDA_ALIGN), else copied device to device through d_in / d_out. */
struct strip_io {
    bool device;     /* src and dst are device pointers */
    bool direct_in;  /* the kernels read src in place */
    bool direct_out; /* the kernels write dst in place */
};

/* Rows the kernels may read or write in place: base, stride and the row's own bytes all
 * multiples of GS_CUDA_ALIGN, since they move whole 16-byte vectors up to the row's end
 * (a shorter last row would take them past the caller's allocation). */
bool aligned_rows(const void *p, size_t stride, size_t row_bytes)
{
    return (uintptr_t)p % GS_CUDA_ALIGN == 0 && stride % GS_CUDA_ALIGN == 0 &&
           row_bytes % GS_CUDA_ALIGN == 0;
}

strip_io io_of(const gs_plugin_instance *inst, const gs_strip *s)
{
    strip_io io = {inst->device_memory, false, false};
    io.direct_in = io.device && aligned_rows(s->src, s->src_stride, (size_t)s->width * (s->in_bits / 8));
    io.direct_out = io.device && aligned_rows(s->dst, s->dst_stride, (size_t)s->width * (s->out_bits / 8));
    return io;
}

chunk_plan plan_chunks(const gs_plugin_instance *inst, const gs_strip *s, const strip_work &w,
                       const strip_io &io)
{
    chunk_plan p;
    const bool axes = w.op == OP_AXES;
    p.halo = axes ? w.iters : 0;
    p.window_rows = axes ? w.above + s->rows + w.below : s->rows;
    p.in_row = (size_t)s->width * (s->in_bits / 8);
    p.out_row = (size_t)s->width * (s->out_bits / 8);
    p.in_pitch = gs_round_up(p.in_row, GS_CUDA_ALIGN);
    p.out_pitch = gs_round_up(p.out_row, GS_CUDA_ALIGN);
    p.float_pitch = gs_round_up((size_t)s->width * sizeof(float), GS_CUDA_ALIGN);
    const bool xy = axes && (w.axes & GS_AXIS_X);
    size_t scr_row = 0;
    if (w.op == OP_SMOOTH) scr_row = gs_cuda_smooth_scratch_bytes(s->width, 1, w.iters);
    if (xy) scr_row = p.float_pitch + gs_cuda_smooth_scratch_bytes(s->width, 1, w.iters);
    if (axes) scr_row += gs_cuda_smooth_columns_scratch_bytes(s->width, 1, w.iters);
    const bool direct = io.direct_in && io.direct_out;
    size_t widest = direct ? 0 : p.in_pitch > p.out_pitch ? p.in_pitch : p.out_pitch;
    if (scr_row > widest) widest = scr_row;
    size_t rows = widest ? (direct ? kDirectChunkBytes : kChunkBytes) / widest : s->rows;
    /* A chunk's halo rows are read and computed again by its neighbour: at least two
     * halos' worth of rows written per chunk keeps that to half or less. */
    const size_t halos = 2 * (size_t)p.halo;
    rows = rows > 2 * halos ? rows - halos : halos;
    if (rows < 1) rows = 1;
    if (rows > s->rows) rows = s->rows;
    p.rows_per_chunk = (uint32_t)rows;
    p.chunks = (s->rows + p.rows_per_chunk - 1) / p.rows_per_chunk;
    const size_t in_rows = rows + halos < p.window_rows ? rows + halos : p.window_rows;
    p.rows_float = xy ? piece(p.float_pitch * in_rows) : 0;
    p.rows_chain = xy ? piece(gs_cuda_smooth_scratch_bytes(s->width,
                                                           (uint32_t)in_rows, w.iters))
                      : 0;
    p.columns = axes ? piece(gs_cuda_smooth_columns_scratch_bytes(s->width, (uint32_t)in_rows, w.iters)) : 0;
    p.scratch = w.op == OP_SMOOTH
                    ? gs_cuda_smooth_scratch_bytes(s->width, p.rows_per_chunk, w.iters)
                    : p.rows_float + p.rows_chain + p.columns;
    return p;
}

/* Grow one buffer of every lane to `need` bytes (never shrinks: strips repeat a shape). */
cudaError_t grow(gs_plugin_instance *inst, size_t *cap, size_t need, size_t offset_in_lane,
                 bool pinned)
{
    if (need <= *cap) return cudaSuccess;
    for (int s = 0; s < kStreams; ++s) {
        void **slot = (void **)((char *)&inst->lane[s] + offset_in_lane);
        if (*slot) {
            if (pinned)
                cudaFreeHost(*slot);
            else
                cudaFree(*slot);
            *slot = NULL;
        }
    }
    *cap = 0;
    for (int s = 0; s < kStreams; ++s) {
        void **slot = (void **)((char *)&inst->lane[s] + offset_in_lane);
        cudaError_t e = pinned ? cudaMallocHost(slot, need) : cudaMalloc(slot, need);
        if (e != cudaSuccess) return e;
    }
    *cap = need;
    return cudaSuccess;
}

/* The buffers a strip's chunks use: pinned staging for host strips, device rows unless the
 * kernels work in place, float scratch when the work needs it. */
cudaError_t ensure_buffers(gs_plugin_instance *inst, const chunk_plan &p, const strip_io &io)
{
    const size_t r = p.rows_per_chunk;
    const size_t in_rows = r + 2 * (size_t)p.halo < p.window_rows ? r + 2 * (size_t)p.halo : p.window_rows;
    cudaError_t e;
    if (!io.device &&
        (e = grow(inst, &inst->cap_h_in, p.in_row * in_rows, offsetof(lane_buffers, h_in), true)))
        return e;
    if (!io.device &&
        (e = grow(inst, &inst->cap_h_out, p.out_row * r, offsetof(lane_buffers, h_out), true)))
        return e;
    if (!io.direct_in &&
        (e = grow(inst, &inst->cap_d_in, p.in_pitch * in_rows, offsetof(lane_buffers, d_in), false)))
        return e;
    if (!io.direct_out &&
        (e = grow(inst, &inst->cap_d_out, p.out_pitch * r, offsetof(lane_buffers, d_out), false)))
        return e;
    if (p.scratch &&
        (e = grow(inst, &inst->cap_d_scr, p.scratch, offsetof(lane_buffers, d_scr), false)))
        return e;
    return cudaSuccess;
}

/* Wait for chunk `c` (on lane c % kStreams), add its times, and copy its rows out. */
cudaError_t finish_chunk(gs_plugin_instance *inst, const gs_strip *s, const chunk_plan &p,
                         const strip_io &io, uint32_t c)
{
    const int k = (int)(c % kStreams);
    lane_buffers *b = &inst->lane[k];
    cudaError_t e = cudaStreamSynchronize(inst->stream[k]);
    if (e != cudaSuccess) return e;
    if (io.device) return cudaSuccess; /* untimed (see run_strip), and written on the device */
    float up = 0, kern = 0, down = 0;
    cudaEventElapsedTime(&up, b->ev[EV_START], b->ev[EV_UPLOADED]);
    cudaEventElapsedTime(&kern, b->ev[EV_UPLOADED], b->ev[EV_COMPUTED]);
    cudaEventElapsedTime(&down, b->ev[EV_COMPUTED], b->ev[EV_DOWNLOADED]);
    inst->upload_ns += (uint64_t)(up * 1e6f);
    inst->kernel_ns += (uint64_t)(kern * 1e6f);
    inst->download_ns += (uint64_t)(down * 1e6f);
    const uint32_t y0 = c * p.rows_per_chunk;
    const uint32_t n = s->rows - y0 < p.rows_per_chunk ? s->rows - y0 : p.rows_per_chunk;
    for (uint32_t y = 0; y < n; ++y)
        memcpy((char *)s->dst + (size_t)(y0 + y) * s->dst_stride,
               (const char *)b->h_out + (size_t)y * p.out_row, p.out_row);
    return cudaSuccess;
}

/* Down the columns of one chunk's window (after the passes along its rows, for xy). */
/* A chunk's rows on the device: its window's first row (d_in) and its first row written
 * (d_out), with their pitches. */
struct chunk_rows_on_device {
    const void *d_in;
    size_t in_pitch;
    void *d_out;
    size_t out_pitch;
};

cudaError_t compute_axes(const gs_strip *s, const chunk_plan &p, const strip_work &w,
                         lane_buffers *b, const chunk_rows &r, const chunk_rows_on_device &d,
                         cudaStream_t stream)
{
    const uint32_t in_rows = r.in1 - r.in0;
    char *scr = (char *)b->d_scr;
    char *columns = scr + p.rows_float + p.rows_chain;
    const void *src = d.d_in;
    size_t src_pitch = d.in_pitch;
    uint32_t src_kind = s->in_bits;
    if (w.axes & GS_AXIS_X) {
        cudaError_t e = gs_cuda_smooth_rows_float(d.d_in, d.in_pitch, (float *)scr, p.float_pitch,
                                                  s->width, in_rows, s->in_bits, w.iters,
                                                  p.rows_chain ? scr + p.rows_float : NULL,
                                                  p.rows_chain, stream);
        if (e != cudaSuccess) return e;
        src = scr, src_pitch = p.float_pitch, src_kind = 32;
    }
    return gs_cuda_smooth_columns(src, src_pitch, src_kind, d.d_out, d.out_pitch, s->width, in_rows,
                                  r.above, r.rows, s->in_bits, w.iters, p.columns ? columns : NULL,
                                  p.columns, stream);
}

/* Enqueue the computation of one chunk on `stream`. */
cudaError_t compute_chunk(gs_plugin_instance *inst, const gs_strip *s, const chunk_plan &p,
                          const strip_work &w, lane_buffers *b, const chunk_rows &r,
                          const chunk_rows_on_device &d, cudaStream_t stream)
{
    const uint32_t rows = r.rows, iters = w.iters;
    switch (w.op) {
    case OP_AXES: return compute_axes(s, p, w, b, r, d, stream);
    case OP_SMOOTH:
        return gs_cuda_smooth(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width,
                              rows, s->in_bits, iters, b->d_scr, inst->cap_d_scr, stream);
    case OP_ROWS:
        return gs_cuda_integral_rows(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width, rows,
                                     s->in_bits, s->out_bits, stream);
    case OP_2D:
        return gs_cuda_integral_2d(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width, rows,
                                   s->in_bits, s->out_bits, inst->d_carry, &inst->table_scratch,
                                   stream);
    }
    return cudaErrorInvalidValue;
}

/*
 * Stream a strip through the lanes. Chunk c uses lane c % kStreams: its rows are packed
 * into pinned h_in on the host while the other lane's chunk is on the device; then upload,
 * compute, download are enqueued with events between them. The 2d table's column pass
 * needs the previous chunk's last row, so each chunk's compute waits on the event of the
 * chunk before it. Every lane is drained before returning, on error too.
 */
cudaError_t run_strip(gs_plugin_instance *inst, const gs_strip *s, const strip_work &w)
{
    const strip_io io = io_of(inst, s);
    const chunk_plan p = plan_chunks(inst, s, w, io);
    cudaError_t e = ensure_buffers(inst, p, io);
    /* A caller's producer queued its writes on the default stream (DLPack asks it to). */
    if (e == cudaSuccess && io.device) e = cudaStreamSynchronize(cudaStreamLegacy);
    /* Device strips are a library caller's, who times its own calls: no events but the one
     * the 2d table's chunks chain on (each costs microseconds against a 0.33 ms kernel). */
    const bool timed = !io.device;
    uint32_t finished = 0;
    for (uint32_t c = 0; c < p.chunks && e == cudaSuccess; ++c) {
        const int k = (int)(c % kStreams);
        lane_buffers *b = &inst->lane[k];
        cudaStream_t stream = inst->stream[k];
        if (c >= (uint32_t)kStreams) {
            e = finish_chunk(inst, s, p, io, c - kStreams);
            if (e != cudaSuccess) break;
            ++finished;
        }
        const chunk_rows r = rows_of_chunk(p, s, w, c);
        const uint32_t in_rows = r.in1 - r.in0;
        const char *src_rows = (const char *)s->src + (size_t)r.in0 * s->src_stride;
        char *dst_rows = (char *)s->dst + (size_t)r.y0 * s->dst_stride;
        const chunk_rows_on_device d = {
            io.direct_in ? (const void *)src_rows : b->d_in, io.direct_in ? s->src_stride : p.in_pitch,
            io.direct_out ? (void *)dst_rows : b->d_out, io.direct_out ? s->dst_stride : p.out_pitch};
        if (!io.device)
            for (uint32_t y = 0; y < in_rows; ++y)
                memcpy((char *)b->h_in + (size_t)y * p.in_row, src_rows + (size_t)y * s->src_stride,
                       p.in_row);
        if (timed && (e = cudaEventRecord(b->ev[EV_START], stream))) break;
        if (!io.direct_in &&
            (e = cudaMemcpy2DAsync(b->d_in, p.in_pitch, io.device ? (const void *)src_rows : b->h_in,
                                   io.device ? s->src_stride : p.in_row, p.in_row, in_rows,
                                   io.device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice,
                                   stream)))
            break;
        if (timed && (e = cudaEventRecord(b->ev[EV_UPLOADED], stream))) break;
        if (w.op == OP_2D && c > 0) {
            const lane_buffers *prev = &inst->lane[(c - 1) % kStreams];
            if ((e = cudaStreamWaitEvent(stream, prev->ev[EV_COMPUTED], 0))) break;
        }
        if ((e = compute_chunk(inst, s, p, w, b, r, d, stream))) break;
        if ((timed || w.op == OP_2D) && (e = cudaEventRecord(b->ev[EV_COMPUTED], stream))) break;
        if (!io.direct_out &&
            (e = cudaMemcpy2DAsync(io.device ? (void *)dst_rows : b->h_out,
                                   io.device ? s->dst_stride : p.out_row, b->d_out, p.out_pitch,
                                   p.out_row, r.rows,
                                   io.device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost,
                                   stream)))
            break;
        if (timed && (e = cudaEventRecord(b->ev[EV_DOWNLOADED], stream))) break;
    }
    if (e == cudaSuccess) {
        for (uint32_t c = finished; c < p.chunks && e == cudaSuccess; ++c)
            e = finish_chunk(inst, s, p, io, c);
    }
    for (uint32_t k = 0; k < (uint32_t)kStreams && k < p.chunks; ++k) cudaStreamSynchronize(inst->stream[k]);
    return e;
}

/* ---- operations ---- */

gs_plugin_status check_strip(const gs_plugin_instance *inst, const gs_strip *s, int integral,
                             char *err, size_t err_size)
{
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance");
    return gs_strip_check(s, integral, err, err_size);
}

gs_plugin_status cuda_smooth(gs_plugin_instance *inst, const gs_strip *s, uint32_t iters,
                             char *err, size_t err_size)
{
    device_scope keep_device;
    gs_plugin_status prc = check_strip(inst, s, 0, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (iters > GS_PLUGIN_MAX_ITERS)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "iterations above %u",
                              GS_PLUGIN_MAX_ITERS);
    if (iters == 0 && inst->device_memory) { /* the input unchanged, device to device */
        cudaError_t e = cudaSetDevice(inst->device);
        if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);
        const size_t row = (size_t)s->width * (s->in_bits / 8);
        /* packed rows in one copy: a 2D copy of many narrow rows runs far below the rate */
        if (e == cudaSuccess && s->src_stride == row && s->dst_stride == row)
            e = cudaMemcpyAsync(s->dst, s->src, row * s->rows, cudaMemcpyDeviceToDevice, inst->stream[0]);
        else if (e == cudaSuccess)
            e = cudaMemcpy2DAsync(s->dst, s->dst_stride, s->src, s->src_stride, row, s->rows,
                                  cudaMemcpyDeviceToDevice, inst->stream[0]);
        if (e == cudaSuccess) e = cudaStreamSynchronize(inst->stream[0]);
        return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "copying", e);
    }
    if (iters == 0) { /* the input unchanged: no device round trip */
        for (uint32_t y = 0; y < s->rows; ++y)
            memcpy((char *)s->dst + (size_t)y * s->dst_stride,
                   (const char *)s->src + (size_t)y * s->src_stride,
                   (size_t)s->width * (s->in_bits / 8));
        return GS_PLUGIN_OK;
    }
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = run_strip(inst, s, strip_work{OP_SMOOTH, iters, GS_AXIS_X, 0, 0});
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "smoothing", e);
}

gs_plugin_status cuda_integral_rows(gs_plugin_instance *inst, const gs_strip *s, char *err,
                                    size_t err_size)
{
    device_scope keep_device;
    gs_plugin_status prc = check_strip(inst, s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = run_strip(inst, s, strip_work{OP_ROWS, 0, 0, 0, 0});
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "integral rows", e);
}

gs_plugin_status cuda_integral_2d(gs_plugin_instance *inst, const gs_strip *s,
                                  void *column_sums, char *err, size_t err_size)
{
    device_scope keep_device;
    gs_plugin_status prc = check_strip(inst, s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (!column_sums) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null column sums");
    /* column_sums is kept as the CPU reference keeps it (gs_ref_integral_2d_row): each
     * column's running sum of the rows' prefix sums, i.e. the table row just above this
     * strip. It seeds the column pass and becomes the strip's last row. */
    cudaError_t e = cudaSetDevice(inst->device);
    const size_t bytes = (size_t)s->width * (s->out_bits / 8);
    if (e == cudaSuccess && inst->cap_carry < bytes) {
        if (inst->d_carry) cudaFree(inst->d_carry);
        if (inst->h_carry) cudaFreeHost(inst->h_carry);
        inst->d_carry = inst->h_carry = NULL;
        inst->cap_carry = 0;
        e = cudaMalloc(&inst->d_carry, bytes);
        if (e == cudaSuccess) e = cudaMallocHost(&inst->h_carry, bytes);
        if (e == cudaSuccess) inst->cap_carry = bytes;
    }
    if (e == cudaSuccess) {
        /* on lane 0's stream, which runs the first chunk after it */
        memcpy(inst->h_carry, column_sums, bytes);
        e = cudaMemcpyAsync(inst->d_carry, inst->h_carry, bytes, cudaMemcpyHostToDevice,
                            inst->stream[0]);
    }
    if (e == cudaSuccess) e = run_strip(inst, s, strip_work{OP_2D, 0, 0, 0, 0});
    if (e != cudaSuccess) return fail_cuda(err, err_size, "integral 2d", e);
    /* The carry becomes the strip's last table row, which the host already holds (or which
     * the device holds, for device strips). */
    const char *last = (const char *)s->dst + (size_t)(s->rows - 1) * s->dst_stride;
    if (!inst->device_memory) {
        memcpy(column_sums, last, bytes);
        return GS_PLUGIN_OK;
    }
    e = cudaMemcpy(column_sums, last, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "integral 2d", e);
}

gs_plugin_status cuda_smooth_axes(gs_plugin_instance *inst, const gs_strip *s, uint32_t axes,
                                  uint32_t halo_above, uint32_t halo_below, uint32_t iters,
                                  char *err, size_t err_size)
{
    device_scope keep_device;
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance");
    gs_plugin_status prc = gs_window_check(s, axes, halo_above, halo_below, iters, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (s->width == 1) axes &= ~GS_AXIS_X; /* passes along a one-sample row keep it */
    if (iters == 0 || axes == GS_AXIS_X) { /* no column passes: the rows alone, no halo */
        gs_strip inner = *s;
        inner.src = (const char *)s->src + (size_t)halo_above * s->src_stride;
        return cuda_smooth(inst, &inner, iters, err, err_size);
    }
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = run_strip(inst, s, strip_work{OP_AXES, iters, axes, halo_above, halo_below});
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "smoothing down columns", e);
}

void cuda_timings(const gs_plugin_instance *inst, gs_plugin_timings *out)
{
    if (!out) return;
    const uint32_t size = out->struct_size;
    if (size < sizeof(gs_plugin_timings)) return;
    out->abi_major = GS_PLUGIN_ABI_MAJOR;
    out->abi_minor = GS_PLUGIN_ABI_MINOR;
    out->upload_ns = inst ? inst->upload_ns : 0;
    out->kernel_ns = inst ? inst->kernel_ns : 0;
    out->download_ns = inst ? inst->download_ns : 0;
}

/* Devices create accepts (0..count-1); 0 when CUDA cannot run. */
uint32_t cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count > 0 ? (uint32_t)count : 0u;
}

const gs_plugin_desc cuda_descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    "cuda",
    "0.1.0",
    "CUDA: passes in registers, streamed through pinned double buffers",
    GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D | GS_OP_SMOOTH_AXES,
    GS_DEPTH_U8 | GS_DEPTH_U16,
    1, /* staging copies make any alignment and stride fine */
    kPreferredStripBytes,
    cuda_probe,
    cuda_create,
    cuda_destroy,
    cuda_smooth,
    cuda_integral_rows,
    cuda_integral_2d,
    cuda_timings,
    cuda_smooth_axes,
    cuda_device_count,
    GS_MEMORY_DEVICE,
};

} /* namespace */

extern "C" GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &cuda_descriptor; }
