/* test_fuzz_regressions.c: replays saved fuzz inputs through the harness's path. */
/* Every file of the given directories (fuzz/regressions, the damaged corpus) goes through
 * the fuzz harness's decode -> compute -> encode path, without libFuzzer; any crash, abort
 * or hang fails. */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The harness (fuzz/fuzz_pipeline.c, linked in): aborts on a contract violation. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The limits fuzz/run_fuzz.sh gives libFuzzer: a file taking over 10 s is a hang, and
 * 1 GiB of address space is the -rss_limit_mb bound (inputs are held to 2^20 pixels). */
#define GS_REPLAY_TIMEOUT_S 10
#define GS_REPLAY_ADDRESS_SPACE_MB 1024
#define GS_REPLAY_ADDRESS_SPACE ((unsigned long long)GS_REPLAY_ADDRESS_SPACE_MB << 20)
#define GS_STR(x) GS_STR_(x)
#define GS_STR_(x) #x
/* Largest file replayed: above libFuzzer's -max_len, so every saved input fits. */
#define GS_REPLAY_MAX_BYTES (16u << 20)

/* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it. */
#if defined(__SANITIZE_ADDRESS__)
#define GS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_UNDER_ASAN 1
#endif
#endif
#ifndef GS_UNDER_ASAN
#define GS_UNDER_ASAN 0
#endif

#if GS_UNDER_ASAN
/* Under ASan the bound is its allocator's instead: an allocation above it returns NULL,
 * which gsmooth reports as out of memory and the harness treats as a finding (ASAN_OPTIONS
 * from the environment still take precedence). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "max_allocation_size_mb=" GS_STR(GS_REPLAY_ADDRESS_SPACE_MB) ":allocator_may_return_null=1";
}
#endif

/* Read `path` and run the harness on it in this process (GS_REPLAY_IN_PROCESS=1: for
 * valgrind, which then starts once; a crash or abort ends the whole replay). */
static int replay_here(const char *path)
{
    static uint8_t data[GS_REPLAY_MAX_BYTES];
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_regressions: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = fread(data, 1, sizeof data, f);
    int too_big = !feof(f);
    fclose(f);
    if (too_big) {
        fprintf(stderr, "fuzz_regressions: %s is over %u bytes\n", path, GS_REPLAY_MAX_BYTES);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, n);
    return 0;
}

/* Child: the limits, then the harness on the file; exit(0) (atexit cleans up). */
static void replay_in_child(const char *path)
{
    if (!GS_UNDER_ASAN) {
        struct rlimit rl = {GS_REPLAY_ADDRESS_SPACE, GS_REPLAY_ADDRESS_SPACE};
        setrlimit(RLIMIT_AS, &rl);
    }
    alarm(GS_REPLAY_TIMEOUT_S);
    if (replay_here(path) != 0) _exit(EXIT_FAILURE);
    exit(EXIT_SUCCESS);
}

/* Replay one file in a child process; 0 if it returned normally. */
static int replay(const char *path)
{
    const char *here = getenv("GS_REPLAY_IN_PROCESS");
    if (here && strcmp(here, "1") == 0) return replay_here(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fuzz_regressions: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) replay_in_child(path);
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFSIGNALED(status))
        fprintf(stderr, "fuzz_regressions: FAILED %s: %s%s\n", path, strsignal(WTERMSIG(status)),
                WTERMSIG(status) == SIGALRM ? " (over the time limit)" : "");
    else
        fprintf(stderr, "fuzz_regressions: FAILED %s: exit %d\n", path, WEXITSTATUS(status));
    return -1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR...   (replays every regular file in each DIR)\n", argv[0]);
        return 2;
    }
    int files = 0, failed = 0;
    for (int i = 1; i < argc; ++i) {
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        if (n < 0) {
            fprintf(stderr, "fuzz_regressions: cannot read %s: %s\n", argv[i], strerror(errno));
            return EXIT_FAILURE;
        }
        for (int k = 0; k < n; ++k) {
            char path[4096];
            struct stat sb;
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
            if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
                ++files;
                failed += replay(path) != 0;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("fuzz_regressions: %d files replayed from %d directories, %d failed\n", files, argc - 1,
           failed);
    return failed || files == 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
