/* cuda_plugin.cu: the CUDA plugin's ABI glue around the strip engine. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"
#include "gsmooth/gsmooth_plugin.h"
#include "plugin_util.h"
#include "stencil_math.h"
#include "strip_stream.h"

static_assert(GS_MAX_ITERS == GS_PLUGIN_MAX_ITERS, "the kernels' pass limit is the ABI's");

/* The plugin holds no global state; the descriptor is read-only. */
struct gs_plugin_instance {
    int device;             /* CUDA device ordinal */
    gs_strip_stream engine; /* its streams, buffers and timings */
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

void cuda_destroy(gs_plugin_instance *inst)
{
    if (!inst) return;
    device_scope keep_device;
    cudaSetDevice(inst->device);
    gs_strip_stream_release(&inst->engine);
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
    const bool device_memory =
        config && config->struct_size >= offsetof(gs_plugin_config, memory) + sizeof(uint32_t) &&
        config->memory == GS_MEMORY_DEVICE;
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
    e = gs_strip_stream_init(&inst->engine, device_memory);
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
    /* K = 0 keeps the samples; float32 output converts them, or (float32 samples) stores
     * their NaN canonical, which the kernels do */
    const bool same_bytes = s->out_bits == s->in_bits && s->in_bits != 32;
    if (iters == 0 && same_bytes && inst->engine.device_memory) { /* device to device */
        cudaError_t e = cudaSetDevice(inst->device);
        if (e == cudaSuccess) e = gs_strip_stream_copy(&inst->engine, s);
        return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "copying", e);
    }
    if (iters == 0 && same_bytes) { /* the input unchanged: no device round trip */
        for (uint32_t y = 0; y < s->rows; ++y)
            memcpy((char *)s->dst + (size_t)y * s->dst_stride,
                   (const char *)s->src + (size_t)y * s->src_stride,
                   (size_t)s->width * (s->in_bits / 8));
        return GS_PLUGIN_OK;
    }
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = gs_strip_stream_run(&inst->engine, s, strip_work{OP_SMOOTH, iters, GS_AXIS_X, 0, 0});
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "smoothing", e);
}

gs_plugin_status cuda_integral_rows(gs_plugin_instance *inst, const gs_strip *s, char *err,
                                    size_t err_size)
{
    device_scope keep_device;
    gs_plugin_status prc = check_strip(inst, s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = gs_strip_stream_run(&inst->engine, s, strip_work{OP_ROWS, 0, 0, 0, 0});
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
    if (e == cudaSuccess) e = gs_strip_stream_set_carry(&inst->engine, s, column_sums, bytes);
    if (e == cudaSuccess) e = gs_strip_stream_run(&inst->engine, s, strip_work{OP_2D, 0, 0, 0, 0});
    if (e != cudaSuccess) return fail_cuda(err, err_size, "integral 2d", e);
    /* The carry becomes the strip's last table row, which the host already holds (or which
     * the device holds, for device strips). */
    const char *last = (const char *)s->dst + (size_t)(s->rows - 1) * s->dst_stride;
    if (!inst->engine.device_memory) {
        memcpy(column_sums, last, bytes);
        return GS_PLUGIN_OK;
    }
    /* after the run's work: on the caller's stream for a queued call (gsmooth_plugin.h:
     * integral_2d waits for its strip even then) */
    const cudaStream_t queue = gs_strip_stream_queue(&inst->engine, s);
    if (queue) {
        e = cudaMemcpyAsync(column_sums, last, bytes, cudaMemcpyDeviceToHost, queue);
        if (e == cudaSuccess) e = cudaStreamSynchronize(queue);
    } else {
        e = cudaMemcpy(column_sums, last, bytes, cudaMemcpyDeviceToHost);
    }
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
    if (iters == 0 || (axes & GS_AXIS_Y) == 0) { /* no column passes: the rows alone, no halo */
        gs_strip inner = *s;
        inner.src = (const char *)s->src + (size_t)halo_above * s->src_stride;
        return cuda_smooth(inst, &inner, iters, err, err_size);
    }
    cudaError_t e = cudaSetDevice(inst->device);
    if (e == cudaSuccess) e = gs_strip_stream_run(&inst->engine, s, strip_work{OP_AXES, iters, axes, halo_above, halo_below});
    return e == cudaSuccess ? GS_PLUGIN_OK : fail_cuda(err, err_size, "smoothing down columns", e);
}

void cuda_timings(const gs_plugin_instance *inst, gs_plugin_timings *out)
{
    if (!out) return;
    const uint32_t size = out->struct_size;
    if (size < sizeof(gs_plugin_timings)) return;
    out->abi_major = GS_PLUGIN_ABI_MAJOR;
    out->abi_minor = GS_PLUGIN_ABI_MINOR;
    out->upload_ns = inst ? inst->engine.upload_ns : 0;
    out->kernel_ns = inst ? inst->engine.kernel_ns : 0;
    out->download_ns = inst ? inst->engine.download_ns : 0;
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
    GS_PLUGIN_VERSION, /* the library's (CMakeLists.txt reads gsmooth.h) */
    "CUDA: passes in registers, streamed through pinned double buffers",
    GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D | GS_OP_SMOOTH_AXES,
    GS_DEPTH_U8 | GS_DEPTH_U16 | GS_DEPTH_F32, /* float32: IEEE passes, float64 integrals */
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
    GS_MEMORY_DEVICE | GS_MEMORY_STREAM,
};

} /* namespace */

extern "C" GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &cuda_descriptor; }
