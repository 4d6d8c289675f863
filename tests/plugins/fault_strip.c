/* fault_strip.c: a test plugin whose kernels fail at the Nth strip call. */
/* Until then they work; then they report a device failure, as a GPU that faults halfway
 * through an image would. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h"

/* The first strip call that fails (1-based), and every one after it, as a device that
 * broke: late enough that earlier strips were already handed to the encoder, so a partial
 * output exists when the failure comes; and in a batch sharing one instance, every later
 * file fails too. */
#define FAULT_STRIP_FAILING_CALL 3
/* Small strips, so the small test images have several: 4 KiB of source rows each. */
#define FAULT_STRIP_BYTES 4096u
/* The failure's words; the tests look for them in gsmooth's message. */
#define FAULT_STRIP_REASON "simulated device fault on strip"

struct gs_plugin_instance {
    unsigned calls; /* strip calls so far; the state is the instance's, never global */
};

static gs_plugin_status probe(char *err, size_t err_size)
{
    if (err && err_size) snprintf(err, err_size, "test plugin: fails from strip %d on", FAULT_STRIP_FAILING_CALL);
    return GS_PLUGIN_OK;
}

static gs_plugin_status create(const gs_plugin_config *config, gs_plugin_instance **out,
                               char *err, size_t err_size)
{
    (void)config;
    if (!out) return GS_PLUGIN_ERR_INVALID;
    *out = calloc(1, sizeof **out);
    if (*out) return GS_PLUGIN_OK;
    if (err && err_size) snprintf(err, err_size, "out of memory");
    return GS_PLUGIN_ERR_NOMEM;
}

static void destroy(gs_plugin_instance *instance) { free(instance); }

/* Count the call; fail from the chosen one on, otherwise write something of the right size
 * (the values do not matter: the run must fail before anything is kept). */
static gs_plugin_status strip_call(gs_plugin_instance *inst, const gs_strip *s, char *err,
                                   size_t err_size)
{
    if (!inst || !s || !s->dst) return GS_PLUGIN_ERR_INVALID;
    if (++inst->calls >= FAULT_STRIP_FAILING_CALL) {
        if (err && err_size) snprintf(err, err_size, "%s %u", FAULT_STRIP_REASON, inst->calls);
        return GS_PLUGIN_ERR_DEVICE;
    }
    for (uint32_t r = 0; r < s->rows; ++r)
        memset((unsigned char *)s->dst + r * s->dst_stride, 0, (size_t)s->width * (s->out_bits / 8));
    return GS_PLUGIN_OK;
}

static gs_plugin_status smooth_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t iters, char *err, size_t err_size)
{
    (void)iters;
    return strip_call(instance, strip, err, err_size);
}

static gs_plugin_status integral_rows(gs_plugin_instance *instance, const gs_strip *strip,
                                      char *err, size_t err_size)
{
    return strip_call(instance, strip, err, err_size);
}

static gs_plugin_status integral_2d(gs_plugin_instance *instance, const gs_strip *strip,
                                    void *column_sums, char *err, size_t err_size)
{
    (void)column_sums;
    return strip_call(instance, strip, err, err_size);
}

static const gs_plugin_desc descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "fault-strip",
    .version = "0-test",
    .description = "test plugin: a device that fails halfway through an image",
    .ops = GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16,
    .alignment = 1,
    .preferred_strip_bytes = FAULT_STRIP_BYTES,
    .probe = probe,
    .create = create,
    .destroy = destroy,
    .smooth_rows = smooth_rows,
    .integral_rows = integral_rows,
    .integral_2d = integral_2d,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
