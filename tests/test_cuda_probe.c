/* test_cuda_probe.c: the CUDA plugin loads and answers on any machine. */
/*
 * With or without a GPU or driver.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h"

/*
 * Usage: test_cuda_probe CUDA_PLUGIN.so. Runs where CI runs (no GPU, no driver): the module
 * must dlopen (cudart is static, libcuda never linked), its descriptor must speak this ABI,
 * and probe must say OK, or GS_PLUGIN_ERR_UNAVAILABLE with a reason in words; create must
 * then fail the same way rather than crash. Prints "N passed, N failed".
 */

static int g_passed, g_failed;

static void check(int ok, const char *what)
{
    if (ok) {
        ++g_passed;
    } else {
        ++g_failed;
        printf("FAIL: %s\n", what);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cuda_probe CUDA_PLUGIN.so\n");
        return 2;
    }
    /* Never unloaded: a CUDA module's registered fatbin must outlive the process's use. */
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        printf("FAIL: dlopen: %s\n0 passed, 1 failed\n", dlerror());
        return 1;
    }
    gs_plugin_entry_fn entry = (gs_plugin_entry_fn)dlsym(h, GS_PLUGIN_ENTRY_NAME);
    check(entry != NULL, "exports " GS_PLUGIN_ENTRY_NAME);
    const gs_plugin_desc *d = entry ? entry() : NULL;
    check(d != NULL, "entry returns a descriptor");
    if (!d) {
        printf("%d passed, %d failed\n", g_passed, g_failed);
        return 1;
    }
    check(d->abi_major == GS_PLUGIN_ABI_MAJOR, "ABI major matches");
    check(d->abi_minor <= GS_PLUGIN_ABI_MINOR, "ABI minor not newer");
    check(d->struct_size >= sizeof(gs_plugin_desc), "descriptor size");
    check(d->name && strcmp(d->name, "cuda") == 0, "name is cuda");
    check(d->version && d->description && d->description[0], "version and description");
    check(d->ops == (GS_OP_SMOOTH_ROWS | GS_OP_INTEGRAL_ROWS | GS_OP_INTEGRAL_2D | GS_OP_SMOOTH_AXES),
          "all four ops");
    check(d->depths == (GS_DEPTH_U8 | GS_DEPTH_U16 | GS_DEPTH_F32),
          "8 and 16-bit samples, and float32");
    check(d->alignment >= 1, "alignment stated");
    check(d->memories == (GS_MEMORY_DEVICE | GS_MEMORY_STREAM),
          "device-memory strips, queued on a caller's stream where they name one");
    check(d->probe && d->create && d->destroy && d->smooth_rows && d->integral_rows &&
              d->integral_2d && d->smooth_axes,
          "every operation present");

    char why[512] = "";
    gs_plugin_status st = d->probe(why, sizeof why);
    check(st == GS_PLUGIN_OK || st == GS_PLUGIN_ERR_UNAVAILABLE, "probe: OK or UNAVAILABLE");
    check(why[0] != '\0', "probe explains itself in words");
    printf("probe: %s: %s\n", st == GS_PLUGIN_OK ? "available" : "unavailable", why);

    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 0, -1, GS_MEMORY_HOST};
    gs_plugin_instance *inst = NULL;
    char err[512] = "";
    gs_plugin_status cs = d->create(&cfg, &inst, err, sizeof err);
    if (st == GS_PLUGIN_OK) {
        check(cs == GS_PLUGIN_OK && inst != NULL, "create succeeds where probe does");
    } else {
        check(cs == GS_PLUGIN_ERR_UNAVAILABLE && inst == NULL && err[0] != '\0',
              "create refuses with a reason where probe does");
    }
    d->destroy(inst);
    d->destroy(NULL);

    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
