/* fault_unavailable.c: a test plugin "cuda" whose probe says it cannot run. */
/* The probe gives a reason, as the real CUDA plugin does on a machine without a driver. */

#include <stdio.h>

#include "gsmooth/gsmooth_plugin.h"

/* The probe's words; the tests look for them in gsmooth's messages. */
#define FAULT_UNAVAILABLE_REASON "no NVIDIA driver (simulated by the fault_unavailable test plugin)"

static gs_plugin_status unavailable(char *err, size_t err_size)
{
    if (err && err_size) snprintf(err, err_size, "%s", FAULT_UNAVAILABLE_REASON);
    return GS_PLUGIN_ERR_UNAVAILABLE;
}

static gs_plugin_status probe(char *err, size_t err_size) { return unavailable(err, err_size); }

static gs_plugin_status create(const gs_plugin_config *config, gs_plugin_instance **out,
                               char *err, size_t err_size)
{
    (void)config;
    if (out) *out = NULL;
    return unavailable(err, err_size);
}

static void destroy(gs_plugin_instance *instance) { (void)instance; }

static gs_plugin_status smooth_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t iters, char *err, size_t err_size)
{
    (void)instance, (void)strip, (void)iters;
    return unavailable(err, err_size);
}

static gs_plugin_status integral_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                      char *err, size_t err_size)
{
    (void)instance, (void)strip;
    return unavailable(err, err_size);
}

static gs_plugin_status integral_2d(gs_plugin_instance *instance, const gs_strip *strip,
                                    void *column_sums, char *err, size_t err_size)
{
    (void)instance, (void)strip, (void)column_sums;
    return unavailable(err, err_size);
}

/* A complete descriptor, so the host gets as far as the probe. */
static const gs_plugin_desc descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "cuda",
    .version = "0-test",
    .description = "test plugin: a GPU backend that cannot run here",
    .ops = GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16,
    .alignment = 1,
    .probe = probe,
    .create = create,
    .destroy = destroy,
    .smooth_rows = smooth_rows,
    .integral_rows = integral_rows,
    .integral_2d = integral_2d,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
