/* png_deflate.h: one zlib stream deflated in pieces on worker threads (pigz-style). */
/* Pieces are handed out in order: the PNG writer's IDAT data. */

#ifndef GS_PNG_DEFLATE_H
#define GS_PNG_DEFLATE_H

#include <stddef.h>

#include "status.h"

/*
 * Bytes appended to the stream are cut into pieces of a fixed size. Each piece is deflated
 * on its own (raw deflate, primed with the previous piece's last 32 KiB, as pigz does; at
 * level 1 literals and byte runs, deflate_fast.h, which need no priming) and
 * ends in a sync flush, so the pieces concatenate into one valid deflate stream; the zlib
 * header goes before the first and the combined Adler-32 after the last. Pieces are cut by
 * byte count alone, so the stream's bytes are the same for every thread count.
 */
typedef struct gs_deflate gs_deflate;

/* Nice added to each worker thread on Linux (png_deflate.c says why). */
#define GS_DEFLATE_WORKER_NICE 10

/* Receives each finished piece of the zlib stream, in stream order, as up to three spans
 * that follow each other: `head` (the zlib header, before the first piece only), `body`
 * (deflated data) and `tail` (the Adler-32, after the last piece only); empty spans have
 * length 0. A failure stops the stream and is returned by the call that fed it. */
typedef gs_status (*gs_deflate_sink)(void *ctx, const unsigned char *head, size_t head_len,
                                     const unsigned char *body, size_t body_len,
                                     const unsigned char *tail, size_t tail_len, char *err,
                                     size_t err_size);

/* A sink that gathers the stream in memory: ctx is a gs_deflate_memory, zeroed at first;
 * `bytes` (malloc'd, the caller frees it) grows as pieces come. */
typedef struct gs_deflate_memory {
    unsigned char *bytes;
    size_t len, cap;
} gs_deflate_memory;
gs_status gs_deflate_to_memory(void *ctx, const unsigned char *head, size_t head_len,
                               const unsigned char *body, size_t body_len,
                               const unsigned char *tail, size_t tail_len, char *err,
                               size_t err_size);

/* A stream at zlib `level` (0..9) on `threads` threads (below 2: deflated on the caller's
 * thread, same bytes), whose appends are at most `max_append` bytes at a time. */
gs_status gs_deflate_open(int level, unsigned threads, size_t max_append, gs_deflate_sink sink,
                          void *sink_ctx, gs_deflate **out, char *err, size_t err_size);

/* Where the next n (<= max_append) bytes go: straight into the current piece when they
 * fit, else a staging buffer. Fill them, then call gs_deflate_append with the same n. */
unsigned char *gs_deflate_reserve(gs_deflate *d, size_t n);

/* Add the n bytes written at gs_deflate_reserve's pointer to the stream; full pieces are
 * deflated (or queued) and finished ones go to the sink. */
gs_status gs_deflate_append(gs_deflate *d, size_t n, char *err, size_t err_size);

/* End the stream: deflate what is left and hand everything to the sink. */
gs_status gs_deflate_finish(gs_deflate *d, char *err, size_t err_size);

/* Stop the workers and free everything; NULL is a no-op. */
void gs_deflate_close(gs_deflate *d);

#endif /* GS_PNG_DEFLATE_H */
