/* png_tuning.h: the PNG encoder's speed/size trade-off and its thread count, set once by the command line before any PNG is written. */
#ifndef GS_PNG_TUNING_H
#define GS_PNG_TUNING_H

#include <stddef.h>

#include "status.h"

/*
 * The level of the deflate applied to Sub-filtered rows (bench/NOTES_E2E.md has the
 * measurements behind every number here; the smoothed 4096x4096 photo mosaic, 2 cores):
 *   0      stored, no deflate: 16.8 MB, 2.9x the size of level 2, and no faster to write.
 *   1..3   ISA-L's igzip levels: 5.93 / 5.87 / 5.90 MB in 33-48 ms of encode phase.
 *          2 is the default: 0.84x the size of `vips conv`'s PNG (bench/e2e_bench.sh).
 *   4..9   zlib's levels: 4 gives 5.59 MB in 339 ms, 6 (zlib's own default) 5.28 MB in
 *          1.13 s, 9 5.11 MB in 7.6 s: rarely worth it.
 * Named presets: "fast" = 1, "default" = 2, "small" = 6.
 * Whatever the level or thread count, the decoded pixels are the same; for one level the
 * file's bytes do not depend on the thread count either.
 */
#define GS_PNG_LEVEL_STORE 0   /* stored */
#define GS_PNG_LEVEL_FAST 1    /* "fast" */
#define GS_PNG_LEVEL_DEFAULT 2 /* "default" */
#define GS_PNG_LEVEL_SMALL 6   /* "small" */
#define GS_PNG_LEVEL_MAX 9

/* Environment variables read when the setters below were never called (no --compression
 * or --png-level; no --threads in single-file mode): GSMOOTH_PNG_LEVEL takes what
 * gs_png_level_parse takes, GSMOOTH_PNG_THREADS a count (0 = one per online CPU). Invalid
 * values are ignored. */
#define GS_PNG_LEVEL_ENV "GSMOOTH_PNG_LEVEL"
#define GS_PNG_THREADS_ENV "GSMOOTH_PNG_THREADS"

/* "fast", "default", "small" or a digit 0..9 into a level. GS_ERR_USAGE with a one-line
 * reason (in the caller's buffer) for anything else. */
gs_status gs_png_level_parse(const char *text, int *level, char *err, size_t err_size);

/* Level for every PNG opened from now on (0..GS_PNG_LEVEL_MAX); GS_ERR_USAGE otherwise.
 * Process-wide; call it before writers are opened (it is atomic, but a writer keeps the
 * level it was opened with). */
gs_status gs_png_set_level(int level, char *err, size_t err_size);

/* The level a writer opened now would use (setter, else environment, else default). */
int gs_png_level(void);

/* Deflate threads per PNG writer: 0 = one per online CPU (the default), 1 = deflate on the
 * caller's thread. In batch mode with several files in flight, pass cores / jobs. */
void gs_png_set_threads(unsigned threads);

/* The deflate threads a writer opened now would use (setter, else environment, else one
 * per online CPU), at most 16. */
unsigned gs_png_threads(void);

#endif /* GS_PNG_TUNING_H */
