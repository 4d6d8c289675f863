/* run_limited.h: start a program under resource limits and collect how it ended. */
/* Limits are address space and wall clock; it can signal the program, and collects how it
 * ended, its peak memory and its output (robustness suites). */

#ifndef GS_TEST_RUN_LIMITED_H
#define GS_TEST_RUN_LIMITED_H

#include <stddef.h>
#include <sys/types.h>

/* Bytes of stderr and stdout a result keeps (NUL-terminated, truncated to fit). */
#define GS_CHILD_ERR_SIZE 8192
#define GS_CHILD_OUT_SIZE 4096

typedef struct gs_limits {
    unsigned long long address_space; /* RLIMIT_AS of the child in bytes; 0 = unlimited */
    unsigned timeout_s;               /* SIGALRM (a kill) after this many seconds; 0 = none */
} gs_limits;

typedef struct gs_child {
    pid_t pid;  /* the running child; 0 once waited for */
    int out_fd; /* unlinked temporary file holding its stdout (-1 if stdout goes elsewhere) */
    int err_fd; /* unlinked temporary file holding its stderr */
} gs_child;

typedef struct gs_child_result {
    int exited;                    /* 1: it exited (returned from main, or exit()) */
    int code;                      /* exit status when exited, else -1 */
    int signal;                    /* the signal that ended it when not exited, else 0 */
    long max_rss_kib;              /* peak resident set size, KiB (getrusage) */
    char err[GS_CHILD_ERR_SIZE];   /* stderr */
    char out[GS_CHILD_OUT_SIZE];   /* stdout, when captured */
} gs_child_result;

/* Start `program` with `args` (NULL-terminated, argv[0] excluded). stdin comes from
 * `stdin_path` (NULL: /dev/null); stdout goes to `stdout_path` (NULL: captured). `limits`
 * may be NULL. Returns 0, or -1 if the child could not be started. */
int gs_child_start(gs_child *child, const char *program, const char *const *args,
                   const char *stdin_path, const char *stdout_path, const gs_limits *limits);

/* Wait for the child to end and fill `result`. Returns 0, or -1 on a wait error. */
int gs_child_wait(gs_child *child, gs_child_result *result);

/* Start and wait in one call. */
int gs_child_run(gs_child_result *result, const char *program, const char *const *args,
                 const char *stdin_path, const gs_limits *limits);

/* "exit 1", "signal 11 (Segmentation fault)" */
const char *gs_child_describe(const gs_child_result *result, char *buf, size_t size);

#endif /* GS_TEST_RUN_LIMITED_H */
