/* test_png_conformance.c: the comparison half of ctest png_conformance. */
/* Every PNG of a directory is decoded by the fast reader and by libpng, which must both
 * accept it with the same header and pixels; --limits prints the reader's buffer and batch
 * sizes for the generator (tests/png/conformance.py). */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <isa-l.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io_internal.h"
#include "png_diff_check.h"
#include "png_isal_limits.h"
#include "png_unfilter.h"

/* The CLI's default --max-pixels: the files are what users feed it. */
#define MAX_PIXELS (UINT64_C(1) << 30)

/* Decoded bytes ISA-L can hold back in its own buffer after taking every compressed byte
 * (its tmp_out_buffer: two windows and a look-ahead), read from its header. */
#define ISAL_HELD_BYTES sizeof(((struct inflate_state *)0)->tmp_out_buffer)

static void print_limits(void)
{
    printf("INPUT_BYTES %zu\n", (size_t)GS_PNG_ISAL_INPUT_BYTES);
    printf("BATCH_BYTES %zu\n", (size_t)GS_PNG_ISAL_BATCH_BYTES);
    printf("THREAD_MIN_BATCHES %d\n", GS_PNG_ISAL_THREAD_MIN_BATCHES);
    printf("WAVE_ROWS %d\n", GS_PNG_UNFILTER_WAVE_ROWS);
    printf("WAVE_BATCH_BYTES %zu\n", (size_t)GS_PNG_ISAL_WAVE_BATCH_BYTES);
    printf("ISAL_HELD_BYTES %zu\n", ISAL_HELD_BYTES);
    printf("ISAL_WINDOW_BYTES %d\n", ISAL_DEF_HIST_SIZE);
}

/* The whole file at `path` in a malloc'd buffer (*size bytes), or NULL. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat sb;
    unsigned char *data = NULL;
    if (fstat(fileno(f), &sb) == 0 && (data = malloc(sb.st_size ? (size_t)sb.st_size : 1)) &&
        fread(data, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        free(data);
        data = NULL;
    }
    if (data) *size = (size_t)sb.st_size;
    fclose(f);
    return data;
}

static int is_png_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 4 && strcmp(e->d_name + n - 4, ".png") == 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--limits") == 0) {
        print_limits();
        return EXIT_SUCCESS;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR | --limits\n", argv[0]);
        return 2;
    }
    struct dirent **names;
    int n = scandir(argv[1], &names, is_png_name, alphasort);
    if (n < 0) {
        fprintf(stderr, "png_conformance: cannot read %s: %s\n", argv[1], strerror(errno));
        return EXIT_FAILURE;
    }
    int accepted = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        char path[4096], why[GS_PNG_DIFF_WHY_SIZE];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]->d_name);
        size_t size = 0;
        unsigned char *data = slurp(path, &size);
        if (!data) {
            printf("FAIL %s: cannot read it\n", names[i]->d_name);
            failed++;
        } else {
            switch (gs_png_diff_compare(data, size, MAX_PIXELS, why, sizeof why)) {
            case GS_PNG_DIFF_BOTH_ACCEPT: accepted++; break;
            case GS_PNG_DIFF_BOTH_REFUSE: /* every file here is valid */
                printf("FAIL %s: both readers refuse it: %s\n", names[i]->d_name, why);
                failed++;
                break;
            case GS_PNG_DIFF_NOT_FAST:
                printf("FAIL %s: not a PNG for the fast reader\n", names[i]->d_name);
                failed++;
                break;
            case GS_PNG_DIFF_DIFFERENT:
                printf("FAIL %s: %s\n", names[i]->d_name, why);
                failed++;
                break;
            }
        }
        free(data);
        free(names[i]);
    }
    free(names);
    printf("png_conformance: %d files, %d with the same header and pixels from both readers, %d failed\n",
           n, accepted, failed);
    return failed == 0 && n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
