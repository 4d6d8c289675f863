/* png_diff_check.h: one in-memory PNG decoded by both PNG readers, outcomes compared. */
/* The readers are libpng (the reference) and the fast ISA-L reader; the differential fuzz
 * harnesses and the conformance test share it. */

#ifndef GS_PNG_DIFF_CHECK_H
#define GS_PNG_DIFF_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Room for the longest `why`: both readers' messages (GS_ERR_SIZE each) and some words. */
#define GS_PNG_DIFF_WHY_SIZE 2304

typedef enum gs_png_diff_verdict {
    GS_PNG_DIFF_BOTH_ACCEPT, /* the same header and the same pixels */
    GS_PNG_DIFF_BOTH_REFUSE, /* both readers refused it */
    GS_PNG_DIFF_NOT_FAST,    /* not a PNG that reader.c sends to the fast reader */
    GS_PNG_DIFF_DIFFERENT    /* another verdict, header or pixels: `why` says which */
} gs_png_diff_verdict;

/* Decode the `size` bytes at `data` (borrowed) with each reader under `max_pixels`, every
 * row read, and compare. `why` (caller-owned, may be NULL) gets one line on a difference,
 * else the shared refusal or "". */
gs_png_diff_verdict gs_png_diff_compare(const uint8_t *data, size_t size, uint64_t max_pixels,
                                        char *why, size_t why_size);

#endif /* GS_PNG_DIFF_CHECK_H */
