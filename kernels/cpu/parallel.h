/* parallel.h: a minimal fork-join "parallel for" over work items, on POSIX threads. */
#ifndef GS_PARALLEL_H
#define GS_PARALLEL_H

#include <stddef.h>

/* Body for one work item; returns 0, or nonzero to report failure. */
typedef int (*gs_parallel_fn)(void *ctx, size_t item, unsigned worker);

/* Run fn(ctx, i, worker) for every i in [0, items) on up to `threads` threads (the calling
 * thread is worker 0, so worker < threads); items are handed out dynamically. A thread that
 * cannot be started only means fewer workers: no item is lost. Workers take runs of
 * consecutive items, shrinking toward the end (guided). Returns 0, or the first
 * nonzero value an item returned. */
int gs_parallel_for(unsigned threads, size_t items, gs_parallel_fn fn, void *ctx);

/* Number of online CPUs, at least 1. */
unsigned gs_cpu_count(void);

#endif /* GS_PARALLEL_H */
