/* plugin_loader.h: the plugin host: finding, loading, checking and choosing backend plugins. */
#ifndef GS_PLUGIN_LOADER_H
#define GS_PLUGIN_LOADER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "gsmooth/gsmooth_plugin.h"
#include "status.h"

/* Work (pixels x passes) per CPU core from which `auto` prefers CUDA: below cores x this,
 * CUDA's start-up (context, allocations, pinned buffers) costs more than the CPU kernel
 * time it saves; both were measured, and bench/e2e_gpu.sh finds the crossing. */
#define GS_AUTO_CUDA_WORK_PER_CORE (UINT64_C(1) << 28)

/* The work from which `auto` prefers CUDA on this machine. */
uint64_t gs_auto_cuda_min_work(void);

/* Beside the GS_OP_* bits a backend choice asks for: the work has float32 samples in or
 * out, which only plugins of GS_DEPTH_F32 take. */
#define GS_NEEDS_FLOAT (1u << 31)

typedef struct gs_backend {
    char path[PATH_MAX];          /* full path it was loaded from */
    const gs_plugin_desc *desc;   /* descriptor, or NULL if loading failed */
    uint32_t ops;                 /* GS_OP_* it really offers: desc->ops less the bits of a
                                     newer minor than the plugin's (read these, not desc->ops) */
    int takes_float;              /* float32 strips (ABI 1.4 GS_DEPTH_F32) */
    uint32_t memories;            /* GS_MEMORY_DEVICE when it takes device-memory strips (ABI
                                     1.3 memories; 0 from older plugins), and GS_MEMORY_STREAM
                                     when they may name a stream (ABI 1.5) */
    int probed;                   /* probe has run (gs_backend_probe) */
    int available;                /* probe passed (valid once probed) */
    uint32_t devices;             /* devices it can use (ABI 1.2 device_count) once probed
                                     and available; 0: a backend without devices */
    char probe_msg[GS_ERR_SIZE];  /* probe's words (reason, or what was found) */
    char load_error[GS_ERR_SIZE]; /* why loading failed, when desc is NULL */
} gs_backend;

typedef struct gs_backend_list {
    gs_backend *items;  /* in discovery order; the first of a name wins */
    size_t count;
} gs_backend_list;

/* Load and check one plugin file: dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), entry
 * symbol, struct size, ABI version and alignment. Plugins are never unloaded. */
gs_status gs_backend_load(const char *path, gs_backend *out, char *err, size_t err_size);

/* Run the plugin's probe once (a CUDA probe creates a context, which is slow), on first need:
 * listing, an explicit choice, or an auto job big enough to consider it. Not
 * thread-safe: callers sharing a list serialise it. */
void gs_backend_probe(gs_backend *b);

/* Scan the plugin directories in order (plugin_dir, each GSMOOTH_PLUGIN_PATH entry,
 * <dir of libgsmooth.so>/gsmooth/plugins when running from the shared library, then
 * <dir of the executable>/../lib/gsmooth/plugins) for *.so files. Files that fail to load
 * are kept in the list with their error (for --list-backends -v). */
gs_status gs_backends_discover(const char *plugin_dir, gs_backend_list *out, char *err,
                               size_t err_size);

void gs_backends_free(gs_backend_list *list);

/* Pick the backend for `want` (auto, a name, or a path containing '/') that implements
 * `ops`. For auto: CUDA when available and work >= gs_auto_cuda_min_work(), else CPU; a
 * note explaining a fallback may be written to `note` (empty otherwise). *chosen points
 * into `list` or into `scratch` (for a path: loaded into scratch on the first call, then
 * reused). Probes what it considers; callers sharing `list` serialise calls. */
gs_status gs_backend_choose(gs_backend_list *list, const char *want, uint32_t ops,
                            uint64_t work, gs_backend *scratch, gs_backend **chosen,
                            char *note, size_t note_size, char *err, size_t err_size);

/* "smooth,integral-rows,integral-2d" style text for a GS_OP_* mask. */
void gs_ops_text(uint32_t ops, char *buf, size_t size);

#endif /* GS_PLUGIN_LOADER_H */
