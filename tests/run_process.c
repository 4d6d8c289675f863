/* run_process.c: fork/exec with stdout and stderr captured through temporary files. */
#include "run_process.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Most arguments one run passes. */
#define GS_RUN_MAX_ARGS 63

static size_t read_fd_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
    buf[n] = '\0';
    return n;
}

int gs_run_process(gs_run_result *r, const char *program, const char *stdin_path,
                   const char *const *args)
{
    char *argv[GS_RUN_MAX_ARGS + 1];
    int n = 0;
    argv[n++] = (char *)program;
    while (n < GS_RUN_MAX_ARGS && args[n - 1]) {
        argv[n] = (char *)args[n - 1];
        ++n;
    }
    argv[n] = NULL;
    r->code = -1;
    r->out[0] = r->err[0] = '\0';
    r->out_len = 0;
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err) {
        if (out) fclose(out);
        if (err) fclose(err);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fclose(out);
        fclose(err);
        return -1;
    }
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        if (in < 0) _exit(126);
        dup2(in, 0);
        dup2(fileno(out), 1);
        dup2(fileno(err), 2);
        execv(program, argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->out_len = read_fd_all(fileno(out), r->out, sizeof r->out);
    read_fd_all(fileno(err), r->err, sizeof r->err);
    fclose(out);
    fclose(err);
    return 0;
}
