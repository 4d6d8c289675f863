/* run_process.h: run a program and capture its exit code, stdout and stderr. */
/* Shared by the CLI and golden suites. */

#ifndef GS_TEST_RUN_PROCESS_H
#define GS_TEST_RUN_PROCESS_H

#include <stddef.h>

typedef struct gs_run_result {
    int code;            /* exit status, or -1 if killed by a signal */
    char out[1 << 16];   /* stdout, NUL-terminated, truncated to fit */
    size_t out_len;      /* bytes of stdout kept */
    char err[8192];      /* stderr, NUL-terminated, truncated to fit */
} gs_run_result;

/* Run `program` with `args` (NULL-terminated, not including argv[0]); stdin from
 * `stdin_path` (NULL: /dev/null). Returns 0, or -1 if it could not be started. */
int gs_run_process(gs_run_result *r, const char *program, const char *stdin_path,
                   const char *const *args);

#endif /* GS_TEST_RUN_PROCESS_H */
