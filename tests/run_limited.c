/* run_limited.c: runs a program under setrlimit and alarm, with its output and peak memory. */
/* fork/exec with setrlimit(RLIMIT_AS) and alarm() set in the child, output captured in
 * unlinked temporary files, and wait4 for the peak memory. */

#define _GNU_SOURCE
#include "run_limited.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Most arguments one run passes. */
#define GS_CHILD_MAX_ARGS 63

/* Exit statuses of a child that never reached the program (the shell's conventions). */
#define GS_CHILD_SETUP_FAILED 126
#define GS_CHILD_EXEC_FAILED 127

static int temp_fd(void)
{
    char name[] = "/tmp/gsmooth-child-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) unlink(name); /* lives as long as the descriptor */
    return fd;
}

static void read_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    if (fd < 0) {
        buf[0] = '\0';
        return;
    }
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
    buf[n] = '\0';
}

int gs_child_start(gs_child *child, const char *program, const char *const *args,
                   const char *stdin_path, const char *stdout_path, const gs_limits *limits)
{
    char *argv[GS_CHILD_MAX_ARGS + 1];
    int n = 0;
    argv[n++] = (char *)program;
    while (n < GS_CHILD_MAX_ARGS && args[n - 1]) {
        argv[n] = (char *)args[n - 1];
        ++n;
    }
    argv[n] = NULL;

    child->pid = 0;
    child->out_fd = stdout_path ? -1 : temp_fd();
    child->err_fd = temp_fd();
    if (child->err_fd < 0 || (!stdout_path && child->out_fd < 0)) goto fail;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) goto fail;
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        int out = stdout_path ? open(stdout_path, O_WRONLY) : child->out_fd;
        if (in < 0 || out < 0) _exit(GS_CHILD_SETUP_FAILED);
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(child->err_fd, STDERR_FILENO);
        /* The parent (Check, a test) may ignore or block signals; the program should see
         * the defaults a shell gives it. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        if (limits && limits->address_space) {
            struct rlimit rl = {(rlim_t)limits->address_space, (rlim_t)limits->address_space};
            if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(GS_CHILD_SETUP_FAILED);
        }
        if (limits && limits->timeout_s) alarm(limits->timeout_s); /* survives exec */
        execv(program, argv);
        _exit(GS_CHILD_EXEC_FAILED);
    }
    child->pid = pid;
    return 0;

fail:
    if (child->out_fd >= 0) close(child->out_fd);
    if (child->err_fd >= 0) close(child->err_fd);
    child->out_fd = child->err_fd = -1;
    return -1;
}

int gs_child_wait(gs_child *child, gs_child_result *r)
{
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    r->exited = 0;
    r->code = -1;
    r->signal = 0;
    pid_t got;
    do {
        got = wait4(child->pid, &status, 0, &ru);
    } while (got < 0 && errno == EINTR);
    child->pid = 0;
    read_all(child->err_fd, r->err, sizeof r->err);
    read_all(child->out_fd, r->out, sizeof r->out);
    if (child->out_fd >= 0) close(child->out_fd);
    if (child->err_fd >= 0) close(child->err_fd);
    child->out_fd = child->err_fd = -1;
    if (got < 0) return -1;
    r->max_rss_kib = ru.ru_maxrss;
    if (WIFEXITED(status)) {
        r->exited = 1;
        r->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
    }
    return 0;
}

int gs_child_run(gs_child_result *r, const char *program, const char *const *args,
                 const char *stdin_path, const gs_limits *limits)
{
    gs_child child;
    if (gs_child_start(&child, program, args, stdin_path, NULL, limits) != 0) return -1;
    return gs_child_wait(&child, r);
}

const char *gs_child_describe(const gs_child_result *r, char *buf, size_t size)
{
    if (r->exited)
        snprintf(buf, size, "exit %d", r->code);
    else
        snprintf(buf, size, "signal %d (%s)", r->signal, strsignal(r->signal));
    return buf;
}
