/* png_isal_limits.h: the fast PNG reader's buffer and batch sizes. */
/* In one place so that the tests sizing PNGs across each boundary read the reader's own
 * numbers. */

#ifndef GS_PNG_ISAL_LIMITS_H
#define GS_PNG_ISAL_LIMITS_H

#include <stddef.h>

/* Compressed bytes read from the source at a time. */
#define GS_PNG_ISAL_INPUT_BYTES ((size_t)128 << 10)
/* Filtered rows inflated in one go: enough bytes for ISA-L to run at full speed. A row
 * wider than this is a batch of its own. */
#define GS_PNG_ISAL_BATCH_BYTES ((size_t)256 << 10)
/* Batches in flight when a second thread inflates: one being unfiltered, one filling. */
#define GS_PNG_ISAL_BATCH_SLOTS 2
/* Images with fewer batches than this are inflated on the caller's thread: a thread's
 * start costs more than it saves on them. */
#define GS_PNG_ISAL_THREAD_MIN_BATCHES 4

#endif /* GS_PNG_ISAL_LIMITS_H */
