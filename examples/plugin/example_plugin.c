/* example_plugin.c: a minimal third-party gsmooth backend (integral rows only). */
/* Built against nothing but the installed gsmooth_plugin.h. */

#include <gsmooth/gsmooth_plugin.h>
#include <stdio.h>
#include <stdlib.h>

/* An instance holds nothing here; a real backend keeps its buffers or device here. */
struct gs_plugin_instance {
    uint32_t calls; /* strips processed, to show the instance is per-user state */
};

static gs_plugin_status say(char *err, size_t size, gs_plugin_status st, const char *msg)
{
    if (err && size) snprintf(err, size, "%s", msg);
    return st;
}

static gs_plugin_status example_probe(char *err, size_t size)
{
    return say(err, size, GS_PLUGIN_OK, "always available (plain C)");
}

static gs_plugin_status example_create(const gs_plugin_config *config, gs_plugin_instance **out,
                                       char *err, size_t size)
{
    (void)config; /* no options used */
    *out = calloc(1, sizeof **out);
    return *out ? GS_PLUGIN_OK : say(err, size, GS_PLUGIN_ERR_NOMEM, "out of memory");
}

static void example_destroy(gs_plugin_instance *instance) { free(instance); }

/* Row prefix sums for every input/output width the host may ask for. */
static gs_plugin_status example_integral_rows(gs_plugin_instance *instance, const gs_strip *s,
                                              char *err, size_t size)
{
    if (!s || s->abi_major != GS_PLUGIN_ABI_MAJOR || (s->in_bits != 8 && s->in_bits != 16) ||
        (s->out_bits != 32 && s->out_bits != 64))
        return say(err, size, GS_PLUGIN_ERR_INVALID, "unsupported strip");
    for (uint32_t r = 0; r < s->rows; ++r) {
        const unsigned char *in = (const unsigned char *)s->src + r * s->src_stride;
        unsigned char *out = (unsigned char *)s->dst + r * s->dst_stride;
        uint64_t sum = 0;
        for (uint32_t x = 0; x < s->width; ++x) {
            sum += s->in_bits == 16 ? ((const uint16_t *)in)[x] : in[x];
            if (s->out_bits == 64) ((uint64_t *)out)[x] = sum;
            else ((uint32_t *)out)[x] = (uint32_t)sum;
        }
    }
    instance->calls++;
    return GS_PLUGIN_OK;
}

static const gs_plugin_desc descriptor = {
    GS_ABI_HEADER_INIT(gs_plugin_desc),
    .name = "example",
    .version = "1.0",
    .description = "example third-party backend: integral rows in plain C",
    .ops = GS_OP_INTEGRAL_ROWS,
    .depths = GS_DEPTH_U8 | GS_DEPTH_U16,
    .alignment = 1,
    .preferred_strip_bytes = 0,
    .probe = example_probe,
    .create = example_create,
    .destroy = example_destroy,
    .integral_rows = example_integral_rows,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
