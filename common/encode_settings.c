/* encode_settings.c: encoder settings: level names, defaults and the thread cap. */
#define _GNU_SOURCE
#include "encode_settings.h"

#include <string.h>

#include "usable_cpus.h"

gs_encode_settings gs_encode_settings_make(int level, unsigned threads)
{
    gs_encode_settings s;
    s.level = level < 0 || level > GS_ENCODE_LEVEL_MAX ? GS_ENCODE_LEVEL_DEFAULT : level;
    s.threads = threads ? threads : gs_usable_cpus();
    if (s.threads == 0) s.threads = 1;
    if (s.threads > GS_ENCODE_MAX_THREADS) s.threads = GS_ENCODE_MAX_THREADS;
    return s;
}

gs_status gs_encode_level_parse(const char *text, int *level, char *err, size_t err_size)
{
    static const struct {
        const char *name;
        int level;
    } presets[] = {{"fast", GS_ENCODE_LEVEL_FAST},
                   {"default", GS_ENCODE_LEVEL_DEFAULT},
                   {"small", GS_ENCODE_LEVEL_SMALL}};
    for (size_t i = 0; text && i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(text, presets[i].name) == 0) {
            *level = presets[i].level;
            return GS_OK;
        }
    }
    if (text && text[0] >= '0' && text[0] <= '0' + GS_ENCODE_LEVEL_MAX && text[1] == '\0') {
        *level = text[0] - '0';
        return GS_OK;
    }
    return gs_fail(err, err_size, GS_ERR_USAGE,
                   "compression '%s': use fast, default, small or a level 0..%d", text ? text : "",
                   GS_ENCODE_LEVEL_MAX);
}
