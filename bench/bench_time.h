/* bench_time.h: the benchmarks' clock and median, shared by gsmooth_decode_bench's files. */

#ifndef GS_BENCH_TIME_H
#define GS_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double gs_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int gs_bench_by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of t[0..n-1] (sorted in place). */
static inline double gs_bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], gs_bench_by_value);
    return t[n / 2];
}

#endif /* GS_BENCH_TIME_H */
