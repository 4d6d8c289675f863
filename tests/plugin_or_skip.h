/* plugin_or_skip.h: the plugin device tests' first steps: load a plugin; no device, skip. */
/* One place for the dlopen, the entry point and the probe that test_cuda, test_cuda_float
 * and test_cuda_stream each begin with. */

#ifndef GS_PLUGIN_OR_SKIP_H
#define GS_PLUGIN_OR_SKIP_H

#include "gsmooth/gsmooth_plugin.h"

#include <dlfcn.h>
#include <stdio.h>

/* ctest's SKIP_RETURN_CODE for the device tests. */
#define GS_PLUGIN_SKIP_CODE 77

/* The descriptor of the plugin at `path`, or NULL after one line on stderr naming `test`. */
static inline const gs_plugin_desc *gs_test_load_plugin(const char *test, const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        fprintf(stderr, "%s: %s\n", test, dlerror());
        return NULL;
    }
    gs_plugin_entry_fn entry = (gs_plugin_entry_fn)dlsym(h, GS_PLUGIN_ENTRY_NAME);
    if (!entry) {
        fprintf(stderr, "%s: %s: no %s\n", test, path, GS_PLUGIN_ENTRY_NAME);
        return NULL;
    }
    return entry();
}

/* 0 when `d` finds its device (`why` then describes it); else prints "skipped: no CUDA
 * device (why)" and returns GS_PLUGIN_SKIP_CODE, for main to return. */
static inline int gs_test_device_or_skip(const gs_plugin_desc *d, char *why, size_t why_size)
{
    if (d->probe(why, why_size) == GS_PLUGIN_OK) return 0;
    printf("skipped: no CUDA device (%s)\n", why);
    return GS_PLUGIN_SKIP_CODE;
}

#endif /* GS_PLUGIN_OR_SKIP_H */
