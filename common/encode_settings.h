/* encode_settings.h: how one output is compressed: its deflate level and deflate threads. */
#ifndef GS_ENCODE_SETTINGS_H
#define GS_ENCODE_SETTINGS_H

#include <stddef.h>

#include "status.h"

/*
 * Levels, for PNG (the deflate of Sub-filtered rows) and TIFF (Adobe Deflate):
 *   0      stored, no deflate (TIFF: uncompressed);
 *   1      PNG: literals and runs of one byte, Huffman-coded with ISA-L's tables (no match
 *          search): twice as fast as level 2 on smoothed photos, a tenth larger, and much
 *          larger on content that repeats further back; TIFF: zlib level 1;
 *   2..3   PNG: ISA-L's igzip levels, a little larger than zlib's and many times faster;
 *          TIFF: zlib level 1;
 *   4..9   zlib's levels, smaller and slower (TIFF: that level).
 * The named presets are "fast" = 1, "default" = 2, "small" = 6. Whatever the level or the
 * thread count, the decoded pixels are the same; for one level the file's bytes do not
 * depend on the thread count either. docs/performance.md has the sizes and times.
 */
#define GS_ENCODE_LEVEL_STORE 0
#define GS_ENCODE_LEVEL_FAST 1
#define GS_ENCODE_LEVEL_DEFAULT 2
#define GS_ENCODE_LEVEL_SMALL 6
#define GS_ENCODE_LEVEL_MAX 9

/* A cap on deflate threads per writer however many CPUs there are: memory per writer
 * stays bounded (about 0.6 MiB a thread and its piece in flight) and deflate stops scaling
 * well before it. The gigapixel mosaic on 16 cores: 12 threads 3.04 s, 30.1 MiB peak; 16
 * threads 3.24 s, 32.9 MiB (docs/performance.md). */
#define GS_ENCODE_MAX_THREADS 12u

/* What a writer is opened with. Each work carries its own: nothing is process-wide. */
typedef struct gs_encode_settings {
    int level;        /* 0..GS_ENCODE_LEVEL_MAX */
    unsigned threads; /* deflate threads, 1..GS_ENCODE_MAX_THREADS (1: the caller's thread) */
} gs_encode_settings;

/* The settings for a level (negative: the default) and a thread count (0: one per CPU this
 * process may use), the count capped at GS_ENCODE_MAX_THREADS. */
gs_encode_settings gs_encode_settings_make(int level, unsigned threads);

/* "fast", "default", "small" or a digit 0..9 into a level. GS_ERR_USAGE with a one-line
 * reason for anything else. */
gs_status gs_encode_level_parse(const char *text, int *level, char *err, size_t err_size);

#endif /* GS_ENCODE_SETTINGS_H */
