/* abi_version.c: the example plugin, built to claim another ABI version. */
/* Complete and working, it claims GS_TEST_ABI_MAJOR.GS_TEST_ABI_MINOR: a host must refuse
 * any major but its own, and any newer minor, for that reason alone. */

#include "gsmooth/gsmooth_plugin.h"

/* The version of the header itself, for fixtures that claim it or the minor after it. */
enum { GS_HEADER_ABI_MAJOR = GS_PLUGIN_ABI_MAJOR, GS_HEADER_ABI_MINOR = GS_PLUGIN_ABI_MINOR };

/* The descriptor's header takes these when the example's GS_ABI_HEADER_INIT expands. */
#undef GS_PLUGIN_ABI_MAJOR
#define GS_PLUGIN_ABI_MAJOR (GS_TEST_ABI_MAJOR)
#undef GS_PLUGIN_ABI_MINOR
#define GS_PLUGIN_ABI_MINOR (GS_TEST_ABI_MINOR)

/* GS_TEST_DESC_1_0: a plugin built against ABI 1.0, whose descriptor ends after `timings`
 * (a host reads nothing past struct_size). */
#ifdef GS_TEST_DESC_1_0
#include <stddef.h>
#undef GS_ABI_HEADER_INIT
#define GS_ABI_HEADER_INIT(type) \
    (uint32_t)(offsetof(gs_plugin_desc, timings) + sizeof(void (*)(void))), GS_PLUGIN_ABI_MAJOR, GS_PLUGIN_ABI_MINOR
#endif

#include "example_plugin.c"
