/* wrong_abi.c: a test plugin that claims ABI major 99, which the host must refuse with a clear message. */
#include "gsmooth_plugin.h"

static gs_plugin_status probe(char *err, size_t err_size)
{
    (void)err, (void)err_size;
    return GS_PLUGIN_OK;
}

static const gs_plugin_desc descriptor = {
    sizeof(gs_plugin_desc), 99, 0, /* a future, incompatible ABI */
    .name = "wrong-abi",
    .version = "0",
    .description = "test plugin with a foreign ABI major",
    .probe = probe,
};

GS_PLUGIN_EXPORT const gs_plugin_desc *gs_plugin_entry(void) { return &descriptor; }
