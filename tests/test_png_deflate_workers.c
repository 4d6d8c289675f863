/* test_png_deflate_workers.c: Check suite: the PNG writer's deflate workers yield to the run's other threads. */
/* On Linux each worker lowers its own priority by GS_DEFLATE_WORKER_NICE (io/png_deflate.c:
 * the reader's inflating thread is the one serial stage of a PNG run), and only the workers:
 * the calling thread keeps its nice, and the stream's bytes are the same as on one thread. */

#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "png_deflate.h"

/* Workers the stream is opened with. */
#define WORKERS 3u
/* Bytes appended a time, and how many appends: several 256 KiB pieces, so every worker
 * has had one. */
#define APPEND 4096u
#define APPENDS 1024u
/* Looks at the workers' nice, 10 ms apart, before giving up. */
#define WAIT_TRIES 500

/* The nice of each thread of this process but the caller's: counts[n + 20] threads at n. */
static void nice_of_other_threads(int counts[40])
{
    memset(counts, 0, 40 * sizeof counts[0]);
    const long self = syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atol(e->d_name) == self) continue;
        errno = 0;
        const int n = getpriority(PRIO_PROCESS, (id_t)atol(e->d_name));
        if (n == -1 && errno) continue; /* the thread ended */
        counts[n + 20]++;
    }
    closedir(d);
}

/* The stream of `threads` workers over the same pseudo-random rows; with `counts` the
 * workers' nices, read while they are all alive. */
static gs_deflate_memory deflate_with(unsigned threads, int counts[40])
{
    gs_deflate_memory out = {NULL, 0, 0};
    char err[256];
    gs_deflate *d = NULL;
    ck_assert_int_eq(gs_deflate_open(2, threads, APPEND, gs_deflate_to_memory, &out, &d, err, sizeof err),
                     GS_OK);
    unsigned x = 12345;
    for (unsigned a = 0; a < APPENDS; a++) {
        unsigned char *p = gs_deflate_reserve(d, APPEND);
        for (unsigned i = 0; i < APPEND; i++) {
            x = x * 1103515245u + 12345u;
            p[i] = (unsigned char)((x >> 16) & 0x0F); /* compressible, not trivially */
        }
        ck_assert_int_eq(gs_deflate_append(d, APPEND, err, sizeof err), GS_OK);
    }
    if (counts) {
        /* Each worker lowers its priority as it starts; one the scheduler has not run yet
         * is given up to WAIT_TRIES x 10 ms (a loaded or sanitized run). */
        errno = 0;
        const int base = getpriority(PRIO_PROCESS, 0);
        const int lowered = base + GS_DEFLATE_WORKER_NICE > 19 ? 19 : base + GS_DEFLATE_WORKER_NICE;
        for (int tries = 0; tries < WAIT_TRIES; tries++) {
            nice_of_other_threads(counts);
            if (counts[lowered + 20] >= (int)threads) break;
            usleep(10000);
        }
    }
    ck_assert_int_eq(gs_deflate_finish(d, err, sizeof err), GS_OK);
    gs_deflate_close(d);
    return out;
}

START_TEST(workers_yield_and_bytes_stay)
{
    errno = 0;
    const int base = getpriority(PRIO_PROCESS, 0);
    ck_assert(!(base == -1 && errno));
    int counts[40];
    gs_deflate_memory many = deflate_with(WORKERS, counts);
    /* The caller's own priority stays. */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), base);
    const int lowered = base + GS_DEFLATE_WORKER_NICE > 19 ? 19 : base + GS_DEFLATE_WORKER_NICE;
    ck_assert_msg(counts[lowered + 20] == (int)WORKERS,
                  "%d of %u workers at nice %d (the caller at %d)", counts[lowered + 20], WORKERS,
                  lowered, base);
    gs_deflate_memory one = deflate_with(1, NULL);
    ck_assert_uint_eq(many.len, one.len);
    ck_assert(memcmp(many.bytes, one.bytes, one.len) == 0);
    free(many.bytes);
    free(one.bytes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("png_deflate_workers");
    TCase *tc = tcase_create("priority");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, workers_yield_and_bytes_stay);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
