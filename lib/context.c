/* context.c: libgsmooth's contexts: options, plugin discovery, the backends a context found, and the version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library.h"

#define GS_STR2(x) #x
#define GS_STR(x) GS_STR2(x)

const char *gsmooth_version(void)
{
    return GS_STR(GSMOOTH_VERSION_MAJOR) "." GS_STR(GSMOOTH_VERSION_MINOR) "." GS_STR(GSMOOTH_VERSION_PATCH);
}

const char *gsmooth_status_name(gsmooth_status status) { return gs_status_str(status); }

void gsmooth_plugin_abi_version(uint32_t *major, uint32_t *minor)
{
    if (major) *major = GS_PLUGIN_ABI_MAJOR;
    if (minor) *minor = GS_PLUGIN_ABI_MINOR;
}

static uint32_t struct_size_of(const void *s)
{
    uint32_t size;
    memcpy(&size, s, sizeof size);
    return size;
}

gs_status gs_struct_in(void *dst, size_t size, const void *given, size_t min_size, const char *what,
                       char *err, size_t err_size)
{
    const uint32_t given_size = struct_size_of(given);
    if (given_size < min_size)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s of %u bytes (at least %zu): set struct_size",
                       what, given_size, min_size);
    memcpy(dst, given, given_size < size ? given_size : size);
    const uint32_t own = (uint32_t)size;
    memcpy(dst, &own, sizeof own);
    return GS_OK;
}

gs_status gs_struct_out_check(const void *dst, size_t min_size, const char *what, char *err,
                              size_t err_size)
{
    const uint32_t size = struct_size_of(dst);
    if (size < min_size)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s of %u bytes (at least %zu): set struct_size",
                       what, size, min_size);
    return GS_OK;
}

void gs_struct_out(void *dst, const void *full, size_t size)
{
    const uint32_t dst_size = struct_size_of(dst);
    memcpy((char *)dst + sizeof dst_size, (const char *)full + sizeof dst_size,
           (dst_size < size ? dst_size : size) - sizeof dst_size);
}

gs_status gs_check_smoothing(uint32_t iters, uint32_t axes, char *err, size_t err_size)
{
    if (iters > GS_PLUGIN_MAX_ITERS)
        return gs_fail(err, err_size, GS_ERR_USAGE, "iters is a whole number from 0 to %u, not %u",
                       GS_PLUGIN_MAX_ITERS, iters);
    if (axes & ~(uint32_t)(GSMOOTH_AXIS_X | GSMOOTH_AXIS_Y))
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "axes is GSMOOTH_AXIS_X, GSMOOTH_AXIS_Y or both, not bits %u", axes);
    return GS_OK;
}

void gs_context_note(void *context, const char *file, const char *message)
{
    const gsmooth_context *ctx = context;
    if (ctx->note) ctx->note(ctx->note_user, file, message);
}

/* The pool's fallback note ("CUDA backend unavailable ...; using the CPU"). */
static void context_message(void *context, const char *line) { gs_context_note(context, NULL, line); }

void gsmooth_context_options_init(gsmooth_context_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->backend = "auto";
}

gsmooth_status gsmooth_context_create(const gsmooth_context_options *o, gsmooth_context **out,
                                      char *err, size_t err_size)
{
    if (!out) return gs_fail(err, err_size, GS_ERR_USAGE, "null context pointer");
    *out = NULL;
    gsmooth_context_options given;
    gsmooth_context_options_init(&given);
    if (o) {
        gs_status rc = gs_struct_in(&given, sizeof given, o, GS_MIN_CONTEXT_OPTIONS,
                                    "context options", err, err_size);
        if (rc != GS_OK) return rc;
    }
    o = &given;
    const char *backend = o->backend && *o->backend ? o->backend : "auto";
    gs_device_choice devices;
    memset(&devices, 0, sizeof devices);
    if (o->devices) {
        gs_status rc = gs_device_choice_parse(o->devices, &devices, err, err_size);
        if (rc != GS_OK) return rc;
    }
    gsmooth_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    if (strlen(backend) >= sizeof ctx->backend) {
        free(ctx);
        return gs_fail(err, err_size, GS_ERR_USAGE, "backend name too long");
    }
    strcpy(ctx->backend, backend);
    ctx->note = o->note;
    ctx->note_user = o->note_user;
    gs_status rc = gs_backend_pool_open(&ctx->pool, ctx->backend, o->plugin_dir, context_message, err,
                                   err_size);
    if (rc != GS_OK) {
        gs_backend_pool_close(&ctx->pool);
        free(ctx);
        return rc;
    }
    ctx->pool.message_user = ctx;
    ctx->pool.devices = devices;
    gs_instances_init(&ctx->instances, &ctx->pool, o->threads);
    pthread_mutex_init(&ctx->call, NULL);
    *out = ctx;
    return GSMOOTH_OK;
}

void gsmooth_context_destroy(gsmooth_context *ctx)
{
    if (!ctx) return;
    pthread_mutex_lock(&ctx->call); /* a call still running on another thread ends first */
    pthread_mutex_unlock(&ctx->call);
    gs_instances_release(&ctx->instances);
    gs_backend_pool_close(&ctx->pool);
    pthread_mutex_destroy(&ctx->call);
    free(ctx);
}

size_t gsmooth_context_backend_count(gsmooth_context *ctx) { return ctx ? ctx->pool.list.count : 0; }

gsmooth_status gsmooth_context_backend(gsmooth_context *ctx, size_t i, gsmooth_backend_info *out,
                                       char *err, size_t err_size)
{
    if (!ctx || !out) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    gs_status rc = gs_struct_out_check(out, GS_MIN_BACKEND_INFO, "backend info", err, err_size);
    if (rc != GS_OK) return rc;
    gsmooth_backend_info info;
    memset(&info, 0, sizeof info);
    pthread_mutex_lock(&ctx->call);
    pthread_mutex_lock(&ctx->pool.lock); /* probes of the shared list run under it */
    gs_backend *b = i < ctx->pool.list.count ? &ctx->pool.list.items[i] : NULL;
    if (b) gs_backend_probe(b);
    pthread_mutex_unlock(&ctx->pool.lock);
    pthread_mutex_unlock(&ctx->call);
    if (!b) return gs_fail(err, err_size, GS_ERR_USAGE, "no backend %zu", i);
    info.path = b->path;
    if (!b->desc) {
        info.load_error = b->load_error;
        gs_struct_out(out, &info, sizeof info);
        return GSMOOTH_OK;
    }
    info.name = b->desc->name;
    info.version = b->desc->version;
    info.description = b->desc->description;
    info.abi_major = b->desc->abi_major;
    info.abi_minor = b->desc->abi_minor;
    gs_ops_text(b->ops, info.operations, sizeof info.operations);
    info.takes_8_bit = (b->desc->depths & GS_DEPTH_U8) != 0;
    info.takes_16_bit = (b->desc->depths & GS_DEPTH_U16) != 0;
    info.available = b->available;
    info.probe = b->probe_msg;
    info.devices = b->devices;
    info.device_memory = (b->memories & GS_MEMORY_DEVICE) != 0;
    gs_struct_out(out, &info, sizeof info);
    return GSMOOTH_OK;
}
