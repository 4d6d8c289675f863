/* background_sync.h: fdatasync of a file on a thread of its own while the file is still being written. */
#ifndef GS_BACKGROUND_SYNC_H
#define GS_BACKGROUND_SYNC_H

/*
 * Why: an output's closing fsync waits for the storage to make every byte durable, and that
 * flush is paid for all the bytes written since the last one, with the run's cores idle
 * (out_file.c's DURABLE_STEP has the figures). Syncing as the file grows spreads that wait
 * over the run, on a thread that only waits: the closing fsync then covers the last bytes.
 */
typedef struct gs_background_sync gs_background_sync;

/* Ask for an fdatasync of `fd` on the background thread, starting the thread at the first
 * ask (*s NULL). Never waits: asks while one runs make one more run after it. If the thread
 * cannot start, *s stays NULL and the closing fsync does all the work. */
void gs_background_sync_ask(gs_background_sync **s, int fd);

/* Let the fdatasync asked for last run to its end, end the thread and free *s (NULL:
 * nothing to do). Returns 0, or the errno of the first fdatasync that failed: the kernel
 * reports a write error once a file description, so a later fsync on the same file may not
 * see it again. */
int gs_background_sync_end(gs_background_sync **s);

#endif /* GS_BACKGROUND_SYNC_H */
