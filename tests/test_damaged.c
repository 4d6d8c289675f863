/* test_damaged.c: Check suite for the damaged-input corpus through the real binary. */
/* Every file of the corpus (tests/damaged/make_damaged.py) and a few odd paths run through
 * gsmooth, and each run is held to the error contract. */

#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_files.h"
#include "run_limited.h"
#include "scratch_dir.h"

/*
 * The contract for a bad input (README, "Exit codes"): exit 1; exactly one stderr line, and
 * it names the file; no output and no temporary file in the output directory; an existing
 * output untouched byte for byte; memory bounded. A valid input must still work. Each case
 * runs three times: with --quiet (the error alone), without it (notes may come first, but
 * only one error line), and through standard input (the in-memory decoder paths).
 */

/* Address space a run may use. gsmooth streams 4 MiB strips, so a correct run needs a few
 * tens of MiB; 512 MiB leaves room for the libraries, thread stacks
 * and malloc arenas, and is far below what any bomb in the corpus would take. */
#define GS_DAMAGED_ADDRESS_SPACE (512ull << 20)
/* The same bound on the peak resident set, checked after every run. */
#define GS_DAMAGED_MAX_RSS_KIB (512l << 10)
/* Wall-clock limit of one run; the slowest case (the admitted bomb: 100 MB inflated and
 * smoothed) takes well under a second, so only a hang reaches this. */
#define GS_DAMAGED_RUN_TIMEOUT_S 30
/* Check's limit on the whole suite; the corpus takes about 10 s on 2 cores. */
#define GS_DAMAGED_SUITE_TIMEOUT_S 170
/* Extra gsmooth arguments one manifest line may carry. */
#define GS_DAMAGED_MAX_EXTRA_ARGS 8
/* Longest manifest line. */
#define GS_DAMAGED_LINE_MAX 1024

/* AddressSanitizer reserves terabytes of address space, so RLIMIT_AS cannot be used with
 * it, and its shadow memory inflates the resident set: under it the bound is ASan's own
 * allocation limit instead (set for the children in main), which fails an allocation above
 * it the way RLIMIT_AS does, and the resident set is not checked. */
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

static const char *gsmooth;    /* binary under test */
static const char *corpus;     /* directory written by make_damaged.py */
static char suite_dir[PATH_MAX]; /* holds every test's directory; main removes it */
static char scratch[PATH_MAX];   /* per-test temporary directory, inside suite_dir */
static char out_dir[PATH_MAX];   /* output directory of one run, inside scratch */
static const char prior[] = "previous contents: must survive a failed run\n";

static int problems; /* contract violations found by the current test */
static int runs;     /* gsmooth runs by the current test */

static void problem(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(const char *label, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "test_damaged: %s: ", label);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ++problems;
}

/* Empty the output directory and put the prior output `keep` back (NULL: leave it empty). */
static void reset_out_dir(const char *keep)
{
    DIR *d = opendir(out_dir);
    ck_assert_msg(d != NULL, "cannot open %s", out_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        const char *p = gs_test_path_in(out_dir, e->d_name);
        ck_assert_msg(unlink(p) == 0, "cannot remove %s: %s", p, strerror(errno));
    }
    closedir(d);
    if (keep) write_file(gs_test_path_in(out_dir, keep), prior, strlen(prior));
}

/* Names in the output directory other than `allowed` (may be NULL), each reported. */
static int strays(const char *label, const char *allowed)
{
    DIR *d = opendir(out_dir);
    ck_assert_msg(d != NULL, "cannot open %s", out_dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (allowed && !strcmp(e->d_name, allowed)) continue;
        problem(label, "left '%s' in the output directory%s", e->d_name,
                e->d_name[0] == '.' ? " (a temporary file)" : "");
        ++n;
    }
    closedir(d);
    return n;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; ++s) n += *s == '\n';
    return n;
}

/* Lines of `err` that are not notes; the last one is copied to `last`. */
static int error_lines(const char *err, char *last, size_t last_size)
{
    static const char note[] = "gsmooth: note: ";
    int n = 0;
    last[0] = '\0';
    for (const char *line = err; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, note, sizeof note - 1) != 0) {
            ++n;
            snprintf(last, last_size, "%.*s", (int)len, line);
        }
        line += len + (end ? 1 : 0);
    }
    return n;
}

/* Under ASan, a refused allocation prints "==PID==WARNING: AddressSanitizer failed to
 * allocate ..." before gsmooth's own message: the sanitizer's line, not gsmooth's, so it is
 * dropped before the lines are counted. */
static void drop_sanitizer_notes(char *err)
{
    static const char marker[] = "==WARNING: AddressSanitizer failed to allocate";
    char *line = err;
    while (*line) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        char *at = strstr(line, marker);
        if (line[0] == '=' && at && at < line + len)
            memmove(line, line + len, strlen(line + len) + 1);
        else
            line += len;
    }
}

typedef enum expect { EXPECT_FAIL, EXPECT_OK, EXPECT_EITHER } expect;

/* How one run is made: the input as a path, or fed through standard input. */
typedef enum feed { FEED_PATH_QUIET, FEED_PATH_NOTES, FEED_STDIN } feed;
static const char *const feed_names[] = {"path --quiet", "path", "stdin"};

static gs_limits run_limits(void)
{
    gs_limits lim = {GS_UNDER_ASAN ? 0 : GS_DAMAGED_ADDRESS_SPACE, GS_DAMAGED_RUN_TIMEOUT_S};
    return lim;
}

/* Run gsmooth [--quiet] EXTRA... INPUT OUT_DIR/OUT_NAME and check the contract. */
static void check_run(const char *label, const char *input, const char *needle, expect want,
                      const char *const *extra, feed how, int needs_limit, int tif_out)
{
    const int keep_prior = how != FEED_PATH_NOTES; /* one run checks an absent output */
    const char *out_name = tif_out ? (keep_prior ? "keep.tif" : "new.tif") : keep_prior ? "keep.png" : "new.png";
    char out_path[PATH_MAX], desc[128], tag[512];
    snprintf(out_path, sizeof out_path, "%s", gs_test_path_in(out_dir, out_name));
    snprintf(tag, sizeof tag, "%s [%s]", label, feed_names[how]);
    reset_out_dir(keep_prior ? out_name : NULL);

    const char *args[GS_DAMAGED_MAX_EXTRA_ARGS + 5];
    int n = 0;
    if (how != FEED_PATH_NOTES) args[n++] = "--quiet";
    for (int i = 0; extra && extra[i]; ++i) args[n++] = extra[i];
    args[n++] = how == FEED_STDIN ? "-" : input;
    args[n++] = out_path;
    args[n] = NULL;

    gs_child_result r;
    gs_limits lim = run_limits();
    ck_assert_msg(gs_child_run(&r, gsmooth, args, how == FEED_STDIN ? input : NULL, &lim) == 0,
                  "cannot run %s", gsmooth);
    ++runs;
    if (GS_UNDER_ASAN) drop_sanitizer_notes(r.err);
    gs_child_describe(&r, desc, sizeof desc);

    if (!r.exited) {
        problem(tag, "ended by %s (a crash, a hang or an abort); stderr: %s", desc, r.err);
        strays(tag, keep_prior ? out_name : NULL);
        return;
    }
    if (!GS_UNDER_ASAN && r.max_rss_kib > GS_DAMAGED_MAX_RSS_KIB)
        problem(tag, "peak memory %ld KiB is over the bound of %ld KiB", r.max_rss_kib,
                GS_DAMAGED_MAX_RSS_KIB);

    int failed_run = r.code != 0;
    if (want == EXPECT_OK && r.code != 0) {
        problem(tag, "a valid input failed (%s): %s", desc, r.err);
        return;
    }
    if (want == EXPECT_FAIL && r.code == 0) {
        problem(tag, "a bad input was accepted (exit 0); it should fail with one line");
        strays(tag, out_name);
        return;
    }
    if (!failed_run) { /* success: a fresh output replaced the prior one, and nothing else */
        char buf[sizeof prior];
        size_t got = read_file(out_path, buf, sizeof buf);
        if (got == 0 || (got == strlen(prior) && memcmp(buf, prior, got) == 0))
            problem(tag, "exit 0 but %s was not written", out_name);
        strays(tag, out_name);
        return;
    }

    /* A failure: exit 1, one error line naming the input, nothing left, prior output kept. */
    if (r.code != 1) problem(tag, "%s, want exit 1: %s", desc, r.err);
    /* Every input here is small; only the cases flagged "rlimit" may need more memory
     * than the limit allows. Running out of it elsewhere means memory followed a header's
     * claim instead of the data. */
    if (!needs_limit && strstr(r.err, "out of memory"))
        problem(tag, "ran out of memory under the %llu MiB limit: memory is not bounded here: %s",
                GS_DAMAGED_ADDRESS_SPACE >> 20, r.err);
    char last[GS_CHILD_ERR_SIZE];
    int errors = error_lines(r.err, last, sizeof last);
    if (how == FEED_PATH_QUIET && count_lines(r.err) != 1)
        problem(tag, "want exactly one stderr line with --quiet, got %d: %s", count_lines(r.err),
                r.err);
    else if (errors != 1)
        problem(tag, "want exactly one error line, got %d: %s", errors, r.err);
    else if (!strstr(last, needle))
        problem(tag, "the error does not name '%s': %s", needle, last);
    if (keep_prior) {
        char buf[sizeof prior + 16];
        size_t got = read_file(out_path, buf, sizeof buf);
        if (got != strlen(prior) || memcmp(buf, prior, got) != 0)
            problem(tag, "the existing output was changed (now %zu bytes)", got);
    } else if (access(out_path, F_OK) == 0) {
        problem(tag, "a failed run left an output file");
    }
    strays(tag, keep_prior ? out_name : NULL);
}

/* Split "a b c" into at most GS_DAMAGED_MAX_EXTRA_ARGS words (in place). */
static void split_args(char *s, const char **words)
{
    int n = 0;
    for (char *save = NULL, *w = strtok_r(s, " ", &save); w && n < GS_DAMAGED_MAX_EXTRA_ARGS;
         w = strtok_r(NULL, " ", &save))
        words[n++] = w;
    words[n] = NULL;
}

static void setup(void)
{
    ck_assert_int_eq(gs_test_make_dir(scratch, sizeof scratch, suite_dir, "test-"), 0);
    snprintf(out_dir, sizeof out_dir, "%s", gs_test_path_in(scratch, "out"));
    ck_assert_int_eq(mkdir(out_dir, 0755), 0);
    problems = runs = 0;
}

/* A forked test that fails ends before its teardown: main removes suite_dir as well. */
static void teardown(void) { gs_test_remove_tree(scratch); }

START_TEST(damaged_corpus)
{
    char line[GS_DAMAGED_LINE_MAX];
    const char *manifest = gs_test_path_in(corpus, "MANIFEST");
    FILE *m = fopen(manifest, "r");
    ck_assert_msg(m != NULL, "no %s: run tests/damaged/make_damaged.py first", manifest);
    int cases = 0, by_expect[3] = {0, 0, 0};
    while (fgets(line, sizeof line, m)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        char *save = NULL;
        char *name = strtok_r(line, "\t", &save);
        char *want_s = strtok_r(NULL, "\t", &save);
        char *flags = strtok_r(NULL, "\t", &save);
        char *extra_s = strtok_r(NULL, "", &save);
        ck_assert_msg(name && want_s && flags, "bad manifest line: %s", line);
        expect want = !strcmp(want_s, "ok") ? EXPECT_OK
                      : !strcmp(want_s, "either") ? EXPECT_EITHER : EXPECT_FAIL;
        ck_assert_msg(want != EXPECT_FAIL || !strcmp(want_s, "fail"), "bad expectation %s", want_s);
        ++cases;
        ++by_expect[want];
        const char *extra[GS_DAMAGED_MAX_EXTRA_ARGS + 1] = {NULL};
        if (extra_s) split_args(extra_s, extra);
        char path[900];
        snprintf(path, sizeof path, "%s/%s", corpus, name);
        const int needs_limit = strstr(flags, "rlimit") != NULL;
        const int tif_out = strstr(flags, "tif") != NULL;
        check_run(name, path, name, want, extra, FEED_PATH_QUIET, needs_limit, tif_out);
        if (want != EXPECT_OK) check_run(name, path, name, want, extra, FEED_PATH_NOTES, needs_limit, tif_out);
        check_run(name, path, "gsmooth: -: ", want, extra, FEED_STDIN, needs_limit, tif_out);
    }
    fclose(m);
    printf("test_damaged: %d corpus cases (%d must fail, %d valid, %d either way), "
           "%d gsmooth runs, %d contract violations\n",
           cases, by_expect[EXPECT_FAIL], by_expect[EXPECT_OK], by_expect[EXPECT_EITHER], runs,
           problems);
    fflush(stdout); /* Check's forked child may end at the assertion below */
    ck_assert_int_gt(cases, 0);
    ck_assert_msg(problems == 0, "%d contract violations in the damaged corpus (listed on stderr)",
                  problems);
}
END_TEST

/* Inputs that are not files of bad bytes: a directory, a path through a regular file,
 * a missing file, and a file that opens but cannot be read (/proc/self/mem of the reading
 * process: as root, permissions cannot make a file unreadable, but reading address 0 of a
 * process's memory fails with EIO). */
START_TEST(odd_paths)
{
    /* check_run takes gs_test_path_in's ring of 16 buffers: keep these three in our own */
    char dir[PATH_MAX], through[PATH_MAX], missing[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", gs_test_path_in(scratch, "a_directory.png"));
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(through, sizeof through, "%s",
             gs_test_path_in(gs_test_path_in(corpus, "valid_gray.png"), "x.png"));
    snprintf(missing, sizeof missing, "%s", gs_test_path_in(scratch, "no_such_file.png"));
    const struct {
        const char *path, *needle;
    } odd[] = {
        {dir, "a_directory.png"},
        {through, "x.png"},
        {missing, "no_such_file.png"},
        {"/proc/self/mem", "/proc/self/mem"},
    };
    int n = (int)(sizeof odd / sizeof odd[0]);
    for (int i = 0; i < n; ++i) {
        check_run(odd[i].path, odd[i].path, odd[i].needle, EXPECT_FAIL, NULL, FEED_PATH_QUIET, 0, 0);
        check_run(odd[i].path, odd[i].path, odd[i].needle, EXPECT_FAIL, NULL, FEED_PATH_NOTES, 0, 0);
    }
    /* A directory and an unreadable file as standard input. */
    check_run("stdin is a directory", dir, "gsmooth: -: ", EXPECT_FAIL, NULL, FEED_STDIN, 0, 0);
    check_run("stdin is /proc/self/mem", "/proc/self/mem", "gsmooth: -: ", EXPECT_FAIL, NULL,
              FEED_STDIN, 0, 0);
    printf("test_damaged: %d odd paths, %d gsmooth runs, %d contract violations\n", n + 2, runs,
           problems);
    fflush(stdout);
    ck_assert_msg(problems == 0, "%d contract violations on odd paths (listed on stderr)", problems);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s GSMOOTH DAMAGED_CORPUS_DIR\n", argv[0]);
        return 2;
    }
    gsmooth = argv[1];
    corpus = argv[2];
    if (GS_UNDER_ASAN) {
        /* No RLIMIT_AS under ASan: its allocator enforces the bound instead, returning
         * NULL (gsmooth's "out of memory") for any single allocation above it. */
        static char asan[1024];
        const char *old = getenv("ASAN_OPTIONS");
        snprintf(asan, sizeof asan, "%s%smax_allocation_size_mb=%llu:allocator_may_return_null=1",
                 old ? old : "", old && *old ? ":" : "", GS_DAMAGED_ADDRESS_SPACE >> 20);
        setenv("ASAN_OPTIONS", asan, 1);
    }
    if (gs_test_make_dir(suite_dir, sizeof suite_dir, NULL, "gsmooth-damaged-") != 0) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    Suite *s = suite_create("damaged");
    TCase *tc = tcase_create("damaged");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, GS_DAMAGED_SUITE_TIMEOUT_S);
    tcase_add_test(tc, damaged_corpus);
    tcase_add_test(tc, odd_paths);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* files left behind fail the run: a suite cleans up after itself */
    const int left = gs_test_remove_tree(suite_dir) != 0;
    return failed || left ? EXIT_FAILURE : EXIT_SUCCESS;
}
