/* cuda_plugin.cu: the CUDA backend plugin: probe, instances, and strips streamed through pinned double buffers onto the kernels in kernels/cuda. */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"
#include "gsmooth/gsmooth_plugin.h"
#include "plugin_util.h"
#include "stencil_math.h"

static_assert(GS_MAX_ITERS == GS_PLUGIN_MAX_ITERS, "the kernels' pass limit is the ABI's");

/*
 * Environment: GSMOOTH_CUDA_VARIANT=registers|shared-tiles|pingpong picks the smoothing
 * kernel when an instance is created (default registers; shared-tiles is the double-
 * buffered shared-memory design gsmooth grew from, pingpong the bench's global-memory
 * baseline). Anything else makes create fail with a message.
 *
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
    gs_cuda_smooth_variant variant;   /* from GSMOOTH_CUDA_VARIANT at create */
    cudaStream_t stream[kStreams];    /* one per staging buffer */
    lane_buffers lane[kStreams];      /* buffers, sized by `cap_*` below */
    size_t cap_h_in, cap_h_out;       /* bytes of each h_in / h_out */
    size_t cap_d_in, cap_d_out, cap_d_scr; /* bytes of each d_in / d_out / d_scr */
    void *d_carry, *h_carry;          /* 2d: the table row above the strip (device, pinned) */
    size_t cap_carry;                 /* bytes of d_carry and h_carry */
    uint64_t upload_ns, kernel_ns, download_ns; /* summed event times */
};

namespace {

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
    inst->cap_h_in = inst->cap_h_out = inst->cap_d_in = inst->cap_d_out = 0;
    inst->cap_d_scr = inst->cap_carry = 0;
}

void cuda_destroy(gs_plugin_instance *inst)
{
    if (!inst) return;
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

/* GSMOOTH_CUDA_VARIANT's values. */
const struct {
    const char *name;
    gs_cuda_smooth_variant variant;
} variant_names[] = {
    {"registers", GS_CUDA_SMOOTH_REGISTERS},
    {"shared-tiles", GS_CUDA_SMOOTH_SHARED_TILES},
    {"pingpong", GS_CUDA_SMOOTH_PINGPONG},
};

gs_plugin_status cuda_create(const gs_plugin_config *config, gs_plugin_instance **out,
                             char *err, size_t err_size)
{
    gs_plugin_status prc = GS_PLUGIN_OK;
    gs_plugin_instance *inst = NULL;
    gs_cuda_smooth_variant variant = GS_CUDA_SMOOTH_REGISTERS;
    int device = 0, count = 0;
    cudaError_t e;

    if (!out) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null output pointer");
    *out = NULL;
    const char *env = getenv("GSMOOTH_CUDA_VARIANT");
    if (env && *env) {
        size_t i = 0, n = sizeof variant_names / sizeof variant_names[0];
        while (i < n && strcmp(env, variant_names[i].name) != 0) ++i;
        if (i == n) {
            prc = gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID,
                                 "GSMOOTH_CUDA_VARIANT=%s: expected registers, shared-tiles or pingpong",
                                 env);
            goto cleanup;
        }
        variant = variant_names[i].variant;
    }
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
    inst->variant = variant;
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

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* The shape of one strip's chunks. */
struct chunk_plan {
    uint32_t rows_per_chunk;
    uint32_t chunks;
    size_t in_row, out_row;      /* packed host row bytes */
    size_t in_pitch, out_pitch;  /* device pitches, GS_CUDA_ALIGN multiples */
    size_t scratch;              /* device float scratch bytes for one chunk */
};

enum op_kind { OP_SMOOTH, OP_ROWS, OP_2D };

chunk_plan plan_chunks(const gs_plugin_instance *inst, const gs_strip *s, op_kind op,
                       uint32_t iters)
{
    chunk_plan p;
    p.in_row = (size_t)s->width * (s->in_bits / 8);
    p.out_row = (size_t)s->width * (s->out_bits / 8);
    p.in_pitch = round_up(p.in_row, GS_CUDA_ALIGN);
    p.out_pitch = round_up(p.out_row, GS_CUDA_ALIGN);
    const size_t scr_row =
        op == OP_SMOOTH ? gs_cuda_smooth_scratch_bytes(inst->variant, s->width, 1, iters) : 0;
    size_t widest = p.in_pitch > p.out_pitch ? p.in_pitch : p.out_pitch;
    if (scr_row > widest) widest = scr_row;
    size_t rows = kChunkBytes / widest;
    if (rows < 1) rows = 1;
    if (rows > s->rows) rows = s->rows;
    p.rows_per_chunk = (uint32_t)rows;
    p.chunks = (s->rows + p.rows_per_chunk - 1) / p.rows_per_chunk;
    p.scratch = op == OP_SMOOTH
                    ? gs_cuda_smooth_scratch_bytes(inst->variant, s->width, p.rows_per_chunk, iters)
                    : 0;
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

cudaError_t ensure_buffers(gs_plugin_instance *inst, const chunk_plan &p)
{
    const size_t r = p.rows_per_chunk;
    cudaError_t e;
    if ((e = grow(inst, &inst->cap_h_in, p.in_row * r, offsetof(lane_buffers, h_in), true)))
        return e;
    if ((e = grow(inst, &inst->cap_h_out, p.out_row * r, offsetof(lane_buffers, h_out), true)))
        return e;
    if ((e = grow(inst, &inst->cap_d_in, p.in_pitch * r, offsetof(lane_buffers, d_in), false)))
        return e;
    if ((e = grow(inst, &inst->cap_d_out, p.out_pitch * r, offsetof(lane_buffers, d_out), false)))
        return e;
    if (p.scratch &&
        (e = grow(inst, &inst->cap_d_scr, p.scratch, offsetof(lane_buffers, d_scr), false)))
        return e;
    return cudaSuccess;
}

/* Wait for chunk `c` (on lane c % kStreams), add its times, and copy its rows out. */
cudaError_t finish_chunk(gs_plugin_instance *inst, const gs_strip *s, const chunk_plan &p,
                         uint32_t c)
{
    const int k = (int)(c % kStreams);
    lane_buffers *b = &inst->lane[k];
    cudaError_t e = cudaStreamSynchronize(inst->stream[k]);
    if (e != cudaSuccess) return e;
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

/* Enqueue the computation of one chunk on `stream`. */
cudaError_t compute_chunk(gs_plugin_instance *inst, const gs_strip *s, const chunk_plan &p,
                          op_kind op, uint32_t iters, lane_buffers *b, uint32_t rows,
                          cudaStream_t stream)
{
    switch (op) {
    case OP_SMOOTH:
        return gs_cuda_smooth(inst->variant, b->d_in, p.in_pitch, b->d_out, p.out_pitch, s->width,
                              rows, s->in_bits, iters, b->d_scr, inst->cap_d_scr, stream);
    case OP_ROWS:
        return gs_cuda_integral_rows(b->d_in, p.in_pitch, b->d_out, p.out_pitch, s->width, rows,
                                     s->in_bits, s->out_bits, stream);
    case OP_2D:
        return gs_cuda_integral_2d(b->d_in, p.in_pitch, b->d_out, p.out_pitch, s->width, rows,
                                   s->in_bits, s->out_bits, inst->d_carry, stream);
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
cudaError_t run_strip(gs_plugin_instance *inst, const gs_strip *s, op_kind op, uint32_t iters)
{
    const chunk_plan p = plan_chunks(inst, s, op, iters);
    cudaError_t e = ensure_buffers(inst, p);
    uint32_t finished = 0;
    for (uint32_t c = 0; c < p.chunks && e == cudaSuccess; ++c) {
        const int k = (int)(c % kStreams);
        lane_buffers *b = &inst->lane[k];
        cudaStream_t stream = inst->stream[k];
        if (c >= (uint32_t)kStreams) {
            e = finish_chunk(inst, s, p, c - kStreams);
            if (e != cudaSuccess) break;
            ++finished;
        }
        const uint32_t y0 = c * p.rows_per_chunk;
        const uint32_t rows = s->rows - y0 < p.rows_per_chunk ? s->rows - y0 : p.rows_per_chunk;
        for (uint32_t y = 0; y < rows; ++y)
            memcpy((char *)b->h_in + (size_t)y * p.in_row,
                   (const char *)s->src + (size_t)(y0 + y) * s->src_stride, p.in_row);
        if ((e = cudaEventRecord(b->ev[EV_START], stream))) break;
        if ((e = cudaMemcpy2DAsync(b->d_in, p.in_pitch, b->h_in, p.in_row, p.in_row, rows,
                                   cudaMemcpyHostToDevice, stream)))
            break;
        if ((e = cudaEventRecord(b->ev[EV_UPLOADED], stream))) break;
        if (op == OP_2D && c > 0) {
            const lane_buffers *prev = &inst->lane[(c - 1) % kStreams];
            if ((e = cudaStreamWaitEvent(stream, prev->ev[EV_COMPUTED], 0))) break;
        }
        if ((e = compute_chunk(inst, s, p, op, iters, b, rows, stream))) break;
        if ((e = cudaEventRecord(b->ev[EV_COMPUTED], stream))) break;
        if ((e = cudaMemcpy2DAsync(b->h_out, p.out_row, b->d_out, p.out_pitch, p.out_row, rows,
                                   cudaMemcpyDeviceToHost, stream)))
            break;
        if ((e = cudaEventRecord(b->ev[EV_DOWNLOADED], stream))) break;
    }
    if (e == cudaSuccess) {
        for (uint32_t c = finished; c < p.chunks && e == cudaSuccess; ++c)
            e = finish_chunk(inst, s, p, c);
    }
    for (int k = 0; k < kStreams; ++k) cudaStreamSynchronize(inst->stream[k]);
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
    gs_plugin_status prc = check_strip(inst, s, 0, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (iters > GS_PLUGIN_MAX_ITERS)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "iterations above %u",
                              GS_PLUGIN_MAX_ITERS);
    if (iters == 0) { /* the input unchanged: no device round trip */
        for (uint32_t y = 0; y < s->rows; ++y)
            memcpy((char *)s->dst + (size_t)y * s->dst_stride,
                   (const char *)s->src + (size_t)y * s->src_stride,
                   (size_t)s->width * (s->in_bits / 8));
        return GS_PLUGIN_OK;
    }
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = run_strip(inst, s, OP_SMOOTH, iters);
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "smoothing", e);
}

gs_plugin_status cuda_integral_rows(gs_plugin_instance *inst, const gs_strip *s, char *err,
                                    size_t err_size)
{
    gs_plugin_status prc = check_strip(inst, s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = run_strip(inst, s, OP_ROWS, 0);
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "integral rows", e);
}

gs_plugin_status cuda_integral_2d(gs_plugin_instance *inst, const gs_strip *s,
                                  void *column_sums, char *err, size_t err_size)
{
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
    if (e == cudaSuccess) e = run_strip(inst, s, OP_2D, 0);
    if (e != cudaSuccess) return fail_cuda(err, err_size, "integral 2d", e);
    /* The carry becomes the strip's last table row, which the host already holds. */
    memcpy(column_sums, (const char *)s->dst + (size_t)(s->rows - 1) * s->dst_stride, bytes);
    return GS_PLUGIN_OK;
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

const gs_plugin_desc cuda_descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    "cuda",
    "0.1.0",
    "CUDA: passes in registers, streamed through pinned double buffers (GSMOOTH_CUDA_VARIANT)",
    GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D,
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
};

} /* namespace */

extern "C" GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &cuda_descriptor; }
