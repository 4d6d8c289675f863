/* parallel.c: fork-join parallel-for with guided hand-out of item runs. */
/* Threads are joined before it returns. */

#define _GNU_SOURCE
#include "parallel.h"
#include "usable_cpus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Most threads one call starts; more than this is never useful for row work. */
#define GS_MAX_THREADS 256u

typedef struct job {
    gs_parallel_fn fn;      /* item body */
    void *ctx;              /* its context */
    size_t items;           /* number of items */
    unsigned threads;       /* workers sharing them */
    atomic_size_t next;     /* next item to hand out */
    atomic_int result;      /* first nonzero item result */
} job;

typedef struct worker_arg {
    job *job;        /* shared job */
    unsigned index;  /* worker number */
} worker_arg;

/*
 * Guided hand-out: a worker takes a run of consecutive items, a 1/(kGuidedShare x threads)
 * share of what is left (at least one), so runs shrink toward the end and the last ones
 * balance the load. Consecutive items are neighbouring memory (row chunks in order), so a
 * run streams through memory as one thread would, where one item at a time interleaved
 * the threads' chunks and broke each core's stream prefetch (measured: bench/cpu_bench.c's
 * 1 -> 2 thread ratio).
 */
#define GS_GUIDED_SHARE 4u

static void run_items(job *j, unsigned worker)
{
    for (;;) {
        const size_t seen = atomic_load_explicit(&j->next, memory_order_relaxed);
        if (seen >= j->items) return;
        size_t run = (j->items - seen) / ((size_t)GS_GUIDED_SHARE * j->threads);
        if (run == 0) run = 1;
        const size_t first = atomic_fetch_add(&j->next, run);
        if (first >= j->items) return;
        const size_t end = first + run < j->items ? first + run : j->items;
        for (size_t i = first; i < end; ++i) {
            int rc = j->fn(j->ctx, i, worker);
            if (rc) {
                int expected = 0;
                atomic_compare_exchange_strong(&j->result, &expected, rc);
            }
        }
    }
}

static void *worker_main(void *p)
{
    worker_arg *a = p;
    run_items(a->job, a->index);
    return NULL;
}

unsigned gs_cpu_count(void) { return gs_usable_cpus(); }

uint64_t gs_work_per_thread = GS_WORK_PER_THREAD;

unsigned gs_threads_for(unsigned threads, uint64_t work)
{
    const uint64_t worth = work / (gs_work_per_thread ? gs_work_per_thread : 1);
    if (worth < threads) threads = (unsigned)worth;
    return threads > 0 ? threads : 1;
}

int gs_parallel_for(unsigned threads, size_t items, gs_parallel_fn fn, void *ctx)
{
    job j = {.fn = fn, .ctx = ctx, .items = items};
    atomic_init(&j.next, 0);
    atomic_init(&j.result, 0);
    if (threads > GS_MAX_THREADS) threads = GS_MAX_THREADS;
    if (threads > items) threads = (unsigned)items;
    j.threads = threads > 0 ? threads : 1;
    if (threads <= 1) {
        run_items(&j, 0);
        return atomic_load(&j.result);
    }
    pthread_t tid[GS_MAX_THREADS];
    worker_arg args[GS_MAX_THREADS];
    unsigned started = 0;
    for (unsigned t = 1; t < threads; ++t) {
        args[t] = (worker_arg){&j, t};
        if (pthread_create(&tid[t], NULL, worker_main, &args[t]) != 0) break;
        started = t;
    }
    run_items(&j, 0);
    for (unsigned t = 1; t <= started; ++t) pthread_join(tid[t], NULL);
    return atomic_load(&j.result);
}
