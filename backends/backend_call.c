/* backend_call.c: the one way into a backend's operations, shared by the file pipeline and the library's buffer calls. */
#include "backend_call.h"
#include "plugin_loader.h"

#include <assert.h>

uint32_t gs_work_axes(const gs_work *work) { return work->axes ? work->axes : GS_AXIS_X; }

uint32_t gs_work_op(const gs_work *work)
{
    switch (work->mode) {
    case GS_MODE_INTEGRAL_ROWS: return GS_OP_INTEGRAL_ROWS;
    case GS_MODE_INTEGRAL_2D: return GS_OP_INTEGRAL_2D;
    default: return gs_work_axes(work) & GS_AXIS_Y ? GS_OP_SMOOTH_AXES : GS_OP_SMOOTH_ROWS;
    }
}

uint64_t gs_work_size(const gs_work *work, uint32_t width, uint32_t height)
{
    const uint64_t axis_count = gs_work_axes(work) == (GS_AXIS_X | GS_AXIS_Y) ? 2u : 1u;
    const uint64_t passes = work->mode != GS_MODE_SMOOTH || work->iters == 0 ? 1u : work->iters * axis_count;
    return (uint64_t)width * height * passes;
}

/* The descriptor has the function `op` calls: its bit in ops, and the pointer, which for
 * smooth_axes (ABI 1.1) exists only where struct_size covers it. */
static int implements(const gs_plugin_desc *d, uint32_t op)
{
    if (!(d->ops & op)) return 0;
    switch (op) {
    case GS_OP_SMOOTH_ROWS: return d->smooth_rows != NULL;
    case GS_OP_INTEGRAL_ROWS: return d->integral_rows != NULL;
    case GS_OP_INTEGRAL_2D: return d->integral_2d != NULL;
    case GS_OP_SMOOTH_AXES:
        return d->abi_minor >= 1 &&
               d->struct_size >= offsetof(gs_plugin_desc, smooth_axes) + sizeof d->smooth_axes &&
               d->smooth_axes != NULL;
    default: return 0;
    }
}

uint32_t gs_work_needs(const gs_work *work, uint32_t in_bits, int out_float)
{
    return gs_work_op(work) | (in_bits == 32 || out_float ? GS_NEEDS_FLOAT : 0u);
}

gs_status gs_backend_takes(const gs_plugin_desc *desc, const gs_work *work, uint32_t bits,
                           char *err, size_t err_size)
{
    if (!implements(desc, gs_work_op(work)))
        return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s does not implement this operation",
                       desc->name);
    if (bits == 32 && (desc->abi_minor < 4 || !(desc->depths & GS_DEPTH_F32)))
        return gs_fail(err, err_size, GS_ERR_BACKEND,
                       "backend %s (plugin ABI %u.%u) takes no float32 samples", desc->name,
                       desc->abi_major, desc->abi_minor);
    if (bits != 32 && !(desc->depths & (bits == 16 ? GS_DEPTH_U16 : GS_DEPTH_U8)))
        return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s does not take %u-bit samples",
                       desc->name, bits);
    return GS_OK;
}

gs_status gs_backend_run(const gs_plugin_desc *desc, gs_plugin_instance *instance,
                         const gs_work *work, const gs_strip *strip, uint32_t above,
                         uint32_t below, void *column_sums, char *err, size_t err_size)
{
    char msg[GS_ERR_SIZE] = "";
    gs_plugin_status prc;
    const uint32_t op = gs_work_op(work);
    assert(implements(desc, op)); /* gs_backend_takes passed */
    switch (op) {
    case GS_OP_INTEGRAL_ROWS: prc = desc->integral_rows(instance, strip, msg, sizeof msg); break;
    case GS_OP_INTEGRAL_2D:
        assert(column_sums);
        prc = desc->integral_2d(instance, strip, column_sums, msg, sizeof msg);
        break;
    case GS_OP_SMOOTH_AXES:
        prc = desc->smooth_axes(instance, strip, gs_work_axes(work), above, below, work->iters, msg,
                                sizeof msg);
        break;
    default: prc = desc->smooth_rows(instance, strip, work->iters, msg, sizeof msg); break;
    }
    if (prc == GS_PLUGIN_OK) return GS_OK;
    return gs_fail(err, err_size, gs_backend_status(prc), "backend %s failed: %s", desc->name,
                   msg[0] ? msg : "no reason given");
}

gs_status gs_backend_status(gs_plugin_status prc)
{
    return prc == GS_PLUGIN_OK ? GS_OK : prc == GS_PLUGIN_ERR_NOMEM ? GS_ERR_NOMEM : GS_ERR_BACKEND;
}
