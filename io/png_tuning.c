/* png_tuning.c: the PNG encoder's process-wide settings: the zlib level (option, environment, default) and the deflate threads per writer. */
#define _GNU_SOURCE
#include "png_tuning.h"
#include "usable_cpus.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cap on deflate threads per writer however many CPUs there are: memory per writer
 * stays bounded (about 1.2 MiB per thread) and deflate stops scaling well before it. */
#define PNG_MAX_THREADS 16

static atomic_int level_setting = -1;   /* -1: not set, use the environment */
static atomic_uint threads_setting = 0; /* 0 with threads_set 0: environment, else CPUs */
static atomic_int threads_set = 0;

gs_status gs_png_level_parse(const char *text, int *level, char *err, size_t err_size)
{
    static const struct {
        const char *name;
        int level;
    } presets[] = {
        {"fast", GS_PNG_LEVEL_FAST}, {"default", GS_PNG_LEVEL_DEFAULT}, {"small", GS_PNG_LEVEL_SMALL}};
    for (size_t i = 0; text && i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(text, presets[i].name) == 0) {
            *level = presets[i].level;
            return GS_OK;
        }
    }
    if (text && text[0] >= '0' && text[0] <= '0' + GS_PNG_LEVEL_MAX && text[1] == '\0') {
        *level = text[0] - '0';
        return GS_OK;
    }
    return gs_fail(err, err_size, GS_ERR_USAGE,
                   "PNG compression '%s': use fast, default, small or a level 0..%d",
                   text ? text : "", GS_PNG_LEVEL_MAX);
}

gs_status gs_png_set_level(int level, char *err, size_t err_size)
{
    if (level < 0 || level > GS_PNG_LEVEL_MAX)
        return gs_fail(err, err_size, GS_ERR_USAGE, "PNG compression level %d is not 0..%d",
                       level, GS_PNG_LEVEL_MAX);
    atomic_store(&level_setting, level);
    return GS_OK;
}

int gs_png_level(void)
{
    int level = atomic_load(&level_setting);
    if (level >= 0) return level;
    const char *env = getenv(GS_PNG_LEVEL_ENV);
    if (env && gs_png_level_parse(env, &level, NULL, 0) == GS_OK) return level;
    return GS_PNG_LEVEL_DEFAULT;
}

void gs_png_set_threads(unsigned threads)
{
    atomic_store(&threads_setting, threads);
    atomic_store(&threads_set, 1);
}

unsigned gs_png_threads(void)
{
    unsigned n = atomic_load(&threads_setting);
    if (!atomic_load(&threads_set)) {
        const char *env = getenv(GS_PNG_THREADS_ENV);
        char *end;
        errno = 0;
        unsigned long v = env ? strtoul(env, &end, 10) : 0;
        n = env && *env && !*end && !errno && v <= PNG_MAX_THREADS ? (unsigned)v : 0;
    }
    if (n == 0) {
        n = gs_usable_cpus();
    }
    return n > PNG_MAX_THREADS ? PNG_MAX_THREADS : n;
}
