/* refuse_args.c: a test plugin whose kernels all fail, smoothing refusing its arguments as invalid and the integrals running out of memory, so a test can pin how gsmooth maps a plugin's status. */
#include "gsmooth/gsmooth_plugin.h"

/* The example plugin's lifecycle (probe, create, destroy, say), under its own descriptor and
 * entry names so that this file's are the ones a host finds. */
#define descriptor example_descriptor
#define gs_plugin_entry example_plugin_entry
#include "example_plugin.c"
#undef descriptor
#undef gs_plugin_entry

/* The failures' words; the tests look for them in gsmooth's message. */
#define REFUSE_ARGS_INVALID "test plugin refuses these arguments"
#define REFUSE_ARGS_NOMEM "test plugin out of memory"

static gs_plugin_status smooth_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t iters, char *err, size_t err_size)
{
    (void)instance, (void)strip, (void)iters;
    return say(err, err_size, GS_PLUGIN_ERR_INVALID, REFUSE_ARGS_INVALID);
}

static gs_plugin_status smooth_axes(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t axes, uint32_t halo_above, uint32_t halo_below,
                                    uint32_t iters, char *err, size_t err_size)
{
    (void)axes, (void)halo_above, (void)halo_below;
    return smooth_rows(instance, strip, iters, err, err_size);
}

static gs_plugin_status integral_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                      char *err, size_t err_size)
{
    (void)instance, (void)strip;
    return say(err, err_size, GS_PLUGIN_ERR_NOMEM, REFUSE_ARGS_NOMEM);
}

static gs_plugin_status integral_2d(gs_plugin_instance *instance, const gs_strip *strip,
                                    void *column_sums, char *err, size_t err_size)
{
    (void)column_sums;
    return integral_rows(instance, strip, err, err_size);
}

static const gs_plugin_desc descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "refuse-args",
    .version = "0-test",
    .description = "test plugin: smoothing refuses its arguments, the integrals run out of memory",
    .ops = GS_OP_SMOOTH_ROWS | GS_OP_SMOOTH_AXES | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16,
    .alignment = 1,
    .probe = example_probe,
    .create = example_create,
    .destroy = example_destroy,
    .smooth_rows = smooth_rows,
    .integral_rows = integral_rows,
    .integral_2d = integral_2d,
    .smooth_axes = smooth_axes,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
