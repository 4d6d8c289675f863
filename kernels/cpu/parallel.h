/* parallel.h: a minimal fork-join "parallel for" over work items, on POSIX threads. */
#ifndef GS_PARALLEL_H
#define GS_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* Body for one work item; returns 0, or nonzero to report failure. */
typedef int (*gs_parallel_fn)(void *ctx, size_t item, unsigned worker);

/* Run fn(ctx, i, worker) for every i in [0, items) on up to `threads` threads (the calling
 * thread is worker 0, so worker < threads); items are handed out dynamically. A thread that
 * cannot be started only means fewer workers: no item is lost. Workers take runs of
 * consecutive items, shrinking toward the end (guided). Returns 0, or the first
 * nonzero value an item returned. */
int gs_parallel_for(unsigned threads, size_t items, gs_parallel_fn fn, void *ctx);

/* Work, in sample-passes (one sample through one pass, or one sample of a scan), that
 * earns one more thread: starting and joining a thread costs about what a thread does
 * with this much work, so a small image runs on the calling thread alone. */
#define GS_WORK_PER_THREAD (1u << 18)

/* Work that earns a thread, GS_WORK_PER_THREAD unless a test lowers it (to 1, so that
 * small images still run on every thread it asks for and meet their seams). */
extern uint64_t gs_work_per_thread;

/* Threads worth starting for `work` sample-passes: at most `threads`, at least 1. */
unsigned gs_threads_for(unsigned threads, uint64_t work);

/* Number of online CPUs, at least 1. */
unsigned gs_cpu_count(void);

#endif /* GS_PARALLEL_H */
