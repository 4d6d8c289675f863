/* fake_devices.c: a test backend on the C reference with pretend devices. */
/* It claims GS_FAKE_DEVICES devices (default 3) and logs which device each strip ran on
 * (GS_FAKE_DEVICE_LOG), so machines without a GPU test how --devices spreads files and
 * strips. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gsmooth/gsmooth_plugin.h"
#include "reference.h"

struct gs_plugin_instance {
    int32_t device; /* as the host asked: -1 for the plugin's choice */
};

static gs_plugin_status say(char *err, size_t size, gs_plugin_status st, const char *msg)
{
    if (err && size) snprintf(err, size, "%s", msg);
    return st;
}

static uint32_t fake_device_count(void)
{
    const char *env = getenv("GS_FAKE_DEVICES");
    return env && *env ? (uint32_t)atoi(env) : 3u;
}

/* One line "<device> <op> <rows> <instance>" appended to the log, if one is named. */
static void log_strip(const gs_plugin_instance *inst, const char *op, uint32_t rows)
{
    const char *path = getenv("GS_FAKE_DEVICE_LOG");
    if (!path || !*path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[96];
    int n = snprintf(line, sizeof line, "%d %s %u %p\n", (int)inst->device, op, rows, (const void *)inst);
    if (write(fd, line, (size_t)n) != n) { /* a test fixture: a short log fails the test */ }
    close(fd);
}

static gs_plugin_status fake_probe(char *err, size_t size)
{
    return say(err, size, GS_PLUGIN_OK, "fake devices on the C reference");
}

static gs_plugin_status fake_create(const gs_plugin_config *config, gs_plugin_instance **out,
                                    char *err, size_t size)
{
    int32_t device = config->device;
    if (device >= (int32_t)fake_device_count())
        return say(err, size, GS_PLUGIN_ERR_INVALID, "fake device does not exist");
    *out = calloc(1, sizeof **out);
    if (!*out) return say(err, size, GS_PLUGIN_ERR_NOMEM, "out of memory");
    (*out)->device = device;
    return GS_PLUGIN_OK;
}

static void fake_destroy(gs_plugin_instance *instance) { free(instance); }

static const uint8_t *src_row(const gs_strip *s, uint32_t r) { return (const uint8_t *)s->src + r * s->src_stride; }
static uint8_t *dst_row(const gs_strip *s, uint32_t r) { return (uint8_t *)s->dst + r * s->dst_stride; }

static gs_plugin_status fake_smooth_rows(gs_plugin_instance *inst, const gs_strip *s, uint32_t iters,
                                         char *err, size_t size)
{
    float *scratch = malloc(2 * (size_t)s->width * sizeof *scratch);
    if (!scratch) return say(err, size, GS_PLUGIN_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < s->rows; ++r)
        gs_ref_smooth_row(src_row(s, r), dst_row(s, r), s->width, s->in_bits, iters, scratch);
    free(scratch);
    log_strip(inst, "smooth", s->rows);
    return GS_PLUGIN_OK;
}

static gs_plugin_status fake_smooth_axes(gs_plugin_instance *inst, const gs_strip *s, uint32_t axes,
                                         uint32_t above, uint32_t below, uint32_t iters, char *err,
                                         size_t size)
{
    const uint32_t window = above + s->rows + below;
    uint8_t *out = malloc((size_t)window * s->dst_stride);
    if (!out || gs_ref_smooth_image(s->src, s->src_stride, out, s->dst_stride, s->width, window,
                                    s->in_bits, iters, axes) != 0) {
        free(out);
        return say(err, size, GS_PLUGIN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < s->rows; ++r)
        memcpy(dst_row(s, r), out + (size_t)(above + r) * s->dst_stride, (size_t)s->width * (s->in_bits / 8));
    free(out);
    log_strip(inst, "axes", s->rows);
    return GS_PLUGIN_OK;
}

static gs_plugin_status fake_integral_rows(gs_plugin_instance *inst, const gs_strip *s, char *err,
                                           size_t size)
{
    (void)err, (void)size;
    for (uint32_t r = 0; r < s->rows; ++r)
        gs_ref_integral_row(src_row(s, r), dst_row(s, r), s->width, s->in_bits, s->out_bits);
    log_strip(inst, "rows", s->rows);
    return GS_PLUGIN_OK;
}

static gs_plugin_status fake_integral_2d(gs_plugin_instance *inst, const gs_strip *s, void *column_sums,
                                         char *err, size_t size)
{
    (void)err, (void)size;
    for (uint32_t r = 0; r < s->rows; ++r)
        gs_ref_integral_2d_row(src_row(s, r), dst_row(s, r), column_sums, s->width, s->in_bits, s->out_bits);
    log_strip(inst, "2d", s->rows);
    return GS_PLUGIN_OK;
}

static const gs_plugin_desc descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "fakegpu",
    .version = "1.0",
    .description = "test backend: the C reference on pretend devices",
    .ops = GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D | GS_OP_SMOOTH_AXES,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16,
    .alignment = 1,
    .preferred_strip_bytes = 4096, /* many strips from a small image */
    .probe = fake_probe,
    .create = fake_create,
    .destroy = fake_destroy,
    .smooth_rows = fake_smooth_rows,
    .integral_rows = fake_integral_rows,
    .integral_2d = fake_integral_2d,
    .smooth_axes = fake_smooth_axes,
    .device_count = fake_device_count,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
