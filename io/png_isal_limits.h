/* png_isal_limits.h: the fast PNG reader's buffer and batch sizes. */
/* In one place so that the tests sizing PNGs across each boundary read the reader's own
 * numbers. */

#ifndef GS_PNG_ISAL_LIMITS_H
#define GS_PNG_ISAL_LIMITS_H

#include <stddef.h>

/* Compressed bytes read from the source at a time. */
#define GS_PNG_ISAL_INPUT_BYTES ((size_t)128 << 10)
/* Filtered rows inflated in one go: enough bytes for ISA-L to run at full speed (wide rows:
 * GS_PNG_ISAL_WAVE_BATCH_BYTES below; a row wider than that is a batch of its own). */
#define GS_PNG_ISAL_BATCH_BYTES ((size_t)256 << 10)
/* Batches in flight when a second thread inflates: one being unfiltered, one filling. */
#define GS_PNG_ISAL_BATCH_SLOTS 2
/* Images with fewer batches than this are inflated on the caller's thread: a thread's
 * start costs more than it saves on them. */
#define GS_PNG_ISAL_THREAD_MIN_BATCHES 4
/* Batches hold at least the unfilter's wavefront of rows (16, png_unfilter.h) while those
 * rows fit this many bytes: a 32768-byte row gave 7-row batches, half the wavefront's lanes
 * idle (Paeth 0.96 ns a byte against 0.46 in full groups, gsmooth_decode_bench --unfilter). */
#define GS_PNG_ISAL_WAVE_BATCH_BYTES ((size_t)2 << 20)
/* Rows in a full batch of `stride`-byte stored rows (conformance.py mirrors this rule). */
static inline size_t gs_png_isal_batch_rows(size_t stride, size_t wave_rows)
{
    size_t rows = GS_PNG_ISAL_BATCH_BYTES / stride;
    size_t wave = GS_PNG_ISAL_WAVE_BATCH_BYTES / stride;
    if (wave > wave_rows) wave = wave_rows;
    if (rows < wave) rows = wave;
    return rows ? rows : 1;
}

#endif /* GS_PNG_ISAL_LIMITS_H */
