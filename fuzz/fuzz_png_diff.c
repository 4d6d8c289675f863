/* fuzz_png_diff.c: libFuzzer entry point comparing the two PNG readers. */
/* Each input is decoded with libpng (the reference) and the fast ISA-L path; the harness
 * aborts where they differ: one accepts what the other refuses, or both accept with other
 * headers or pixels. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "png_diff_check.h"

/* --max-pixels of every run, as in fuzz_pipeline.c. */
#define GS_FUZZ_MAX_PIXELS (UINT64_C(1) << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[GS_PNG_DIFF_WHY_SIZE];
    if (gs_png_diff_compare(data, size, GS_FUZZ_MAX_PIXELS, why, sizeof why) == GS_PNG_DIFF_DIFFERENT) {
        fprintf(stderr, "fuzz_png_diff: %s\n", why);
        abort();
    }
    return 0;
}
