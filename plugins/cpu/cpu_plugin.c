/* cpu_plugin.c: the CPU backend plugin: argument checks and ABI glue over kernels/. */
/* The threaded kernels live in kernels/cpu/. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "gsmooth/gsmooth_plugin.h"
#include "parallel.h"
#include "plugin_util.h"
#include "stencil_math.h"

_Static_assert(GS_MAX_ITERS == GS_PLUGIN_MAX_ITERS, "the kernels' pass limit is the ABI's");

struct gs_plugin_instance {
    unsigned threads;        /* worker threads; 0 = all cores */
    const gs_cpu_isa *isa;   /* row primitives chosen for this CPU at create */
    gs_cpu_workspace ws;     /* smoothing scratch, reused across strips */
    gs_cpu_window_space window; /* column-pass scratch (--axis y|xy), reused likewise */
};

/* The kernels' view of a checked strip. */
static gs_rows rows_of(const gs_strip *s)
{
    gs_rows r = {s->width, s->rows, s->in_bits, s->out_bits, s->src, s->src_stride, s->dst, s->dst_stride};
    return r;
}

static gs_plugin_status cpu_probe(char *err, size_t err_size)
{
    if (err && err_size)
        snprintf(err, err_size, "%s row kernels, %u cores", gs_cpu_isa_best()->name, gs_cpu_count());
    return GS_PLUGIN_OK;
}

static gs_plugin_status cpu_create(const gs_plugin_config *config, gs_plugin_instance **out,
                                   char *err, size_t err_size)
{
    if (!out) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null output pointer");
    *out = NULL;
    gs_plugin_instance *inst = calloc(1, sizeof *inst);
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_NOMEM, "out of memory");
    if (config && config->struct_size >= offsetof(gs_plugin_config, threads) + sizeof(uint32_t))
        inst->threads = config->threads;
    inst->isa = gs_cpu_isa_best();
    *out = inst;
    return GS_PLUGIN_OK;
}

static void cpu_destroy(gs_plugin_instance *inst)
{
    if (!inst) return;
    gs_cpu_workspace_release(&inst->ws);
    gs_cpu_window_space_release(&inst->window);
    free(inst);
}

static gs_plugin_status cpu_smooth(gs_plugin_instance *inst, const gs_strip *s, uint32_t iters,
                                   char *err, size_t err_size)
{
    gs_plugin_status prc = gs_strip_check(s, 0, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance");
    if (iters > GS_PLUGIN_MAX_ITERS)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "iterations above %u", GS_PLUGIN_MAX_ITERS);
    const gs_rows rows = rows_of(s);
    if (gs_cpu_smooth_strip(&rows, iters, inst->threads, inst->isa, &inst->ws) != 0)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_NOMEM, "out of memory for row scratch");
    return GS_PLUGIN_OK;
}

static gs_plugin_status cpu_smooth_axes(gs_plugin_instance *inst, const gs_strip *s,
                                        uint32_t axes, uint32_t halo_above, uint32_t halo_below,
                                        uint32_t iters, char *err, size_t err_size)
{
    gs_plugin_status prc = gs_window_check(s, axes, halo_above, halo_below, iters, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance");
    const gs_rows rows = rows_of(s);
    if (gs_cpu_smooth_window(&rows, halo_above, halo_below, axes, iters, inst->threads, inst->isa,
                             &inst->ws, &inst->window) != 0)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_NOMEM, "out of memory for window scratch");
    return GS_PLUGIN_OK;
}

static gs_plugin_status cpu_integral_rows(gs_plugin_instance *inst, const gs_strip *s,
                                          char *err, size_t err_size)
{
    gs_plugin_status prc = gs_strip_check(s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (!inst) return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance");
    const gs_rows rows = rows_of(s);
    gs_cpu_integral_rows_strip(&rows, inst->threads, inst->isa);
    return GS_PLUGIN_OK;
}

static gs_plugin_status cpu_integral_2d(gs_plugin_instance *inst, const gs_strip *s,
                                        void *column_sums, char *err, size_t err_size)
{
    gs_plugin_status prc = gs_strip_check(s, 1, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (!inst || !column_sums)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "null instance or column sums");
    const gs_rows rows = rows_of(s);
    gs_cpu_integral_2d_strip(&rows, column_sums, inst->threads, inst->isa);
    return GS_PLUGIN_OK;
}

static const gs_plugin_desc cpu_descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "cpu",
    .version = GS_PLUGIN_VERSION, /* the library's (CMakeLists.txt reads gsmooth.h) */
    .description = "CPU: fused tiled passes on all cores",
    .ops = GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D | GS_OP_SMOOTH_AXES,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16 | GS_DEPTH_F32,
    .alignment = 1,
    .preferred_strip_bytes = 1u << 20, /* 3 strips in flight stay small; rows >> threads */
    .probe = cpu_probe,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .smooth_rows = cpu_smooth,
    .integral_rows = cpu_integral_rows,
    .integral_2d = cpu_integral_2d,
    .timings = NULL,
    .smooth_axes = cpu_smooth_axes,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &cpu_descriptor; }
