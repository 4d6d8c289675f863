/* plugin_or_skip.h: the plugin tests' shared steps: load a plugin; no device, skip; a strip. */
/* One place for the dlopen, the entry point and the probe that test_cuda, test_cuda_float
 * and test_cuda_stream each begin with, and for the gs_strip every plugin test hands over. */

#ifndef GS_PLUGIN_OR_SKIP_H
#define GS_PLUGIN_OR_SKIP_H

#include "gsmooth/gsmooth_plugin.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* A strip of this ABI: `rows` rows of `width` samples from src to dst. */
static inline gs_strip gs_test_strip(const void *src, size_t src_stride, uint32_t width, uint32_t rows,
                                     uint32_t in_bits, void *dst, size_t dst_stride, uint32_t out_bits)
{
    gs_strip s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.abi_major = GS_PLUGIN_ABI_MAJOR;
    s.abi_minor = GS_PLUGIN_ABI_MINOR;
    s.width = width;
    s.rows = rows;
    s.in_bits = in_bits;
    s.out_bits = out_bits;
    s.src = src;
    s.src_stride = src_stride;
    s.dst = dst;
    s.dst_stride = dst_stride;
    return s;
}

#endif /* GS_PLUGIN_OR_SKIP_H */
