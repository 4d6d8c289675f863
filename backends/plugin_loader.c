/* plugin_loader.c: the plugin host: finds, loads, checks and chooses backends. */
/* Discovery follows the search path; dlopen comes with the ABI checks, then the probes and
 * the choice of a backend for a job. */

#define _GNU_SOURCE
#include "plugin_loader.h"
#include "usable_cpus.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Most plugins one discovery keeps; more is a misconfigured directory. */
#define GS_MAX_PLUGINS 64
/* The descriptor's size in ABI 1.0. A later minor appends fields; plugins built for 1.0
 * stay valid, and appended fields are read only when struct_size covers them. */
#define GS_DESC_SIZE_1_0 (offsetof(gs_plugin_desc, timings) + sizeof(void (*)(void)))
/* ... and in ABI 1.1, which appended smooth_axes. */
#define GS_DESC_SIZE_1_1 (offsetof(gs_plugin_desc, smooth_axes) + sizeof(void (*)(void)))
/* ... and in ABI 1.2, which appended device_count. */
#define GS_DESC_SIZE_1_2 (offsetof(gs_plugin_desc, device_count) + sizeof(void (*)(void)))
/* ... and in ABI 1.3, which appended memories. */
#define GS_DESC_SIZE_1_3 (offsetof(gs_plugin_desc, memories) + sizeof(uint32_t))
/* Largest buffer alignment a plugin may ask for (a page). */
#define GS_MAX_PLUGIN_ALIGNMENT 4096u

/* Record why a plugin was refused (kept for --list-backends -v). */
static void refuse(gs_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(gs_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->load_error, sizeof b->load_error, fmt, ap);
    va_end(ap);
}

gs_status gs_backend_load(const char *path, gs_backend *out, char *err, size_t err_size)
{
    gs_status rc = GS_ERR_BACKEND;
    char full[PATH_MAX];
    const gs_plugin_desc *d = NULL;
    gs_plugin_entry_fn entry;
    void *handle, *sym;

    memset(out, 0, sizeof *out);
    if (!realpath(path, full)) {
        snprintf(out->path, sizeof out->path, "%s", path);
        refuse(out, "%s", strerror(errno));
        goto cleanup;
    }
    snprintf(out->path, sizeof out->path, "%s", full);
    dlerror();
    /* NODELETE: unloading a CUDA plugin's registered fatbin crashes at exit. */
    handle = dlopen(full, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
        const char *why = dlerror();
        refuse(out, "cannot load: %s", why ? why : "dlopen failed");
        goto cleanup;
    }
    dlerror();
    sym = dlsym(handle, GS_PLUGIN_ENTRY_NAME);
    if (!sym) {
        refuse(out, "no symbol %s: not a gsmooth plugin", GS_PLUGIN_ENTRY_NAME);
        goto cleanup;
    }
    memcpy(&entry, &sym, sizeof entry); /* object-to-function pointer, as POSIX allows */
    d = entry();
    if (!d) {
        refuse(out, "entry returned no descriptor");
        goto cleanup;
    }
    if (d->abi_major != GS_PLUGIN_ABI_MAJOR || d->abi_minor > GS_PLUGIN_ABI_MINOR) {
        refuse(out, "plugin ABI %u.%u, this gsmooth supports %u.0 to %u.%u", d->abi_major,
               d->abi_minor, GS_PLUGIN_ABI_MAJOR, GS_PLUGIN_ABI_MAJOR, GS_PLUGIN_ABI_MINOR);
        goto cleanup;
    }
    if (d->struct_size < GS_DESC_SIZE_1_0 || !d->name || !d->probe || !d->create ||
        !d->destroy || ((d->ops & GS_OP_SMOOTH_ROWS) && !d->smooth_rows) ||
        ((d->ops & GS_OP_INTEGRAL_ROWS) && !d->integral_rows) ||
        ((d->ops & GS_OP_INTEGRAL_2D) && !d->integral_2d)) {
        refuse(out, "descriptor is incomplete (missing name, function or size)");
        goto cleanup;
    }
    /* An op of ABI 1.1 counts only from a 1.1 descriptor that carries its function. */
    out->ops = d->ops & (GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D);
    if (d->abi_minor >= 1 && d->struct_size >= GS_DESC_SIZE_1_1 && (d->ops & GS_OP_SMOOTH_AXES)) {
        if (!d->smooth_axes) {
            refuse(out, "descriptor is incomplete (declares smooth-axes without its function)");
            goto cleanup;
        }
        out->ops |= GS_OP_SMOOTH_AXES;
    }
    /* Device memory under the minor that defines it; a stream only with device memory,
     * under 1.5, whose strips carry it. */
    if (d->abi_minor >= 3 && d->struct_size >= GS_DESC_SIZE_1_3)
        out->memories = d->memories & GS_MEMORY_DEVICE;
    if (d->abi_minor >= 5 && (out->memories & GS_MEMORY_DEVICE))
        out->memories |= d->memories & GS_MEMORY_STREAM;
    /* Float strips only for a plugin that states it under the minor that defines them. */
    out->takes_float = d->abi_minor >= 4 && (d->depths & GS_DEPTH_F32);
    if (d->alignment == 0 || (d->alignment & (d->alignment - 1)) != 0 ||
        d->alignment > GS_MAX_PLUGIN_ALIGNMENT) {
        refuse(out, "alignment %u is not a power of two up to %u", d->alignment,
               GS_MAX_PLUGIN_ALIGNMENT);
        goto cleanup;
    }
    out->desc = d;
    rc = GS_OK;

cleanup:
    if (rc != GS_OK) gs_fail(err, err_size, rc, "plugin %s: %s", out->path, out->load_error);
    return rc;
}

void gs_backend_probe(gs_backend *b)
{
    if (!b->desc || b->probed) return;
    b->available = b->desc->probe(b->probe_msg, sizeof b->probe_msg) == GS_PLUGIN_OK;
    const gs_plugin_desc *d = b->desc;
    if (b->available && d->abi_minor >= 2 && d->struct_size >= GS_DESC_SIZE_1_2 && d->device_count)
        b->devices = d->device_count();
    if (!b->available && !b->probe_msg[0])
        snprintf(b->probe_msg, sizeof b->probe_msg, "unavailable (no reason given)");
    b->probed = 1;
}


static gs_backend *find(gs_backend_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; ++i)
        if (l->items[i].desc && strcmp(l->items[i].desc->name, name) == 0) return &l->items[i];
    return NULL;
}

static int ends_with_so(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_dir(const char *dir, gs_backend_list *l)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char *names[GS_MAX_PLUGINS];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < GS_MAX_PLUGINS)
        if (ends_with_so(e->d_name) && (names[n] = strdup(e->d_name))) ++n;
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names); /* a stable order, whatever readdir gives */
    for (size_t i = 0; i < n; ++i) {
        char path[PATH_MAX];
        if (l->count < GS_MAX_PLUGINS &&
            snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path) {
            gs_backend b;
            gs_backend_load(path, &b, NULL, 0);
            if (!b.desc || !find(l, b.desc->name)) l->items[l->count++] = b;
        }
        free(names[i]);
    }
}

static int exe_plugin_dir(char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    return snprintf(buf, size, "%s/%s", exe, GS_PLUGIN_REL_FROM_BIN) < (int)size ? 0 : -1;
}

/* <dir of libgsmooth.so>/gsmooth/plugins, when this code runs from the shared library (a
 * Python process, a program linking -lgsmooth); -1 when it is linked into the executable. */
static int library_plugin_dir(char *buf, size_t size)
{
    Dl_info info;
    if (!dladdr((const void *)&library_plugin_dir, &info) || !info.dli_fname) return -1;
    const char *base = strrchr(info.dli_fname, '/');
    if (!base || !strstr(base, ".so")) return -1;
    return snprintf(buf, size, "%.*s/%s", (int)(base - info.dli_fname), info.dli_fname,
                    GS_PLUGIN_REL_FROM_LIB) < (int)size ? 0 : -1;
}

gs_status gs_backends_discover(const char *plugin_dir, gs_backend_list *out, char *err,
                               size_t err_size)
{
    out->count = 0;
    out->items = calloc(GS_MAX_PLUGINS, sizeof *out->items);
    if (!out->items) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    if (plugin_dir) scan_dir(plugin_dir, out);
    const char *env = getenv("GSMOOTH_PLUGIN_PATH");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        if (!copy) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
            scan_dir(p, out);
        free(copy);
    }
    char dir[PATH_MAX];
    if (library_plugin_dir(dir, sizeof dir) == 0) scan_dir(dir, out);
    if (exe_plugin_dir(dir, sizeof dir) == 0) scan_dir(dir, out);
    return GS_OK;
}

void gs_backends_free(gs_backend_list *list)
{
    free(list->items); /* handles stay open on purpose: plugins are never unloaded */
    list->items = NULL;
    list->count = 0;
}


void gs_ops_text(uint32_t ops, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s%s%s", ops & GS_OP_SMOOTH_ROWS ? "smooth " : "",
             ops & GS_OP_SMOOTH_AXES ? "smooth-axes " : "",
             ops & GS_OP_INTEGRAL_ROWS ? "integral-rows " : "",
             ops & GS_OP_INTEGRAL_2D ? "integral-2d " : "", ops ? "" : "none");
    size_t n = strlen(buf);
    if (n && buf[n - 1] == ' ') buf[n - 1] = '\0';
}

static gs_status usable(gs_backend *b, uint32_t ops, char *err, size_t err_size)
{
    gs_backend_probe(b);
    if (!b->available)
        return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s cannot run here: %s",
                       b->desc->name, b->probe_msg);
    if ((b->ops & ops & ~GS_NEEDS_FLOAT) != (ops & ~GS_NEEDS_FLOAT))
        return gs_fail(err, err_size, GS_ERR_BACKEND,
                       "backend %s does not implement this operation", b->desc->name);
    if ((ops & GS_NEEDS_FLOAT) && !b->takes_float)
        return gs_fail(err, err_size, GS_ERR_BACKEND,
                       "backend %s (plugin ABI %u.%u) takes no float32 samples", b->desc->name,
                       b->desc->abi_major, b->desc->abi_minor);
    return GS_OK;
}

uint64_t gs_auto_cuda_min_work(void)
{
    return (uint64_t)gs_usable_cpus() * GS_AUTO_CUDA_WORK_PER_CORE;
}

gs_status gs_backend_choose(gs_backend_list *list, const char *want, uint32_t ops,
                            uint64_t work, gs_backend *scratch, gs_backend **chosen,
                            char *note, size_t note_size, char *err, size_t err_size)
{
    *chosen = NULL;
    if (note_size) note[0] = '\0';
    if (strchr(want, '/')) {
        if (!scratch->desc) {
            gs_status rc = gs_backend_load(want, scratch, err, err_size);
            if (rc != GS_OK) return rc;
        }
        *chosen = scratch;
        return usable(scratch, ops, err, err_size);
    }
    if (strcmp(want, "auto") != 0) {
        gs_backend *b = find(list, want);
        if (!b)
            return gs_fail(err, err_size, GS_ERR_USAGE, /* a name that is no backend: a bad argument */
                           "no backend named '%s' was found (gsmooth --list-backends -v lists them)", want);
        *chosen = b;
        return usable(b, ops, err, err_size);
    }
    gs_backend *cuda = find(list, "cuda");
    const int big = work >= gs_auto_cuda_min_work();
    /* Small jobs never wake the device: its probe alone costs more than they take. */
    if (cuda && big && usable(cuda, ops, NULL, 0) == GS_OK) {
        *chosen = cuda;
        return GS_OK;
    }
    if (cuda && big && !cuda->available)
        snprintf(note, note_size, "CUDA backend unavailable (%s); using the CPU", cuda->probe_msg);
    gs_backend *cpu = find(list, "cpu");
    if (!cpu)
        return gs_fail(err, err_size, GS_ERR_BACKEND,
                       "no CPU backend found (looked in plugin_dir, GSMOOTH_PLUGIN_PATH, "
                       "<libgsmooth.so's dir>/%s and <exe>/%s)", GS_PLUGIN_REL_FROM_LIB,
                       GS_PLUGIN_REL_FROM_BIN);
    *chosen = cpu;
    return usable(cpu, ops, err, err_size);
}
