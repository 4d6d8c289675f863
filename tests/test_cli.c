/* test_cli.c: Check suite that runs the built gsmooth binary: exit codes, messages, stdin/stdout, bad input, atomic output, plugins, batch. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test_files.h"
#include "run_process.h"

static const char *gsmooth;       /* binary under test */
static const char *golden;        /* tests/golden directory */
static const char *wrong_abi_so;  /* plugin with ABI major 99 */
static const char *no_entry_so;   /* shared object without the entry symbol */
static const char *example_so;    /* third-party example plugin, or "" */
static char scratch[256];         /* per-test temporary directory */

static char *path_in(const char *dir, const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static const char *input(const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/inputs/%s", golden, name);
    return p;
}
static const char *tmp(const char *name) { return path_in(scratch, name); }

typedef gs_run_result result;

static void run(result *r, const char *stdin_path, const char *const *args)
{
    ck_assert_int_eq(gs_run_process(r, gsmooth, stdin_path, args), 0);
}

#define RUN(r, ...) run((r), NULL, (const char *const[]){__VA_ARGS__, NULL})

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; ++s) n += *s == '\n';
    return n;
}

/* Exactly one line on stderr that mentions `needle`. */
static void assert_one_line_error(const result *r, const char *needle)
{
    ck_assert_msg(count_lines(r->err) == 1, "want one stderr line, got: %s", r->err);
    ck_assert_msg(strstr(r->err, needle) != NULL, "stderr lacks '%s': %s", needle, r->err);
}

static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* Entries of the scratch directory other than those listed (NULL-terminated). */
static int stray_files(const char *const *allowed)
{
    DIR *d = opendir(scratch);
    int stray = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int ok = 0;
        for (const char *const *a = allowed; *a; ++a) ok |= !strcmp(*a, e->d_name);
        if (!ok) {
            fprintf(stderr, "stray file: %s\n", e->d_name);
            ++stray;
        }
    }
    closedir(d);
    return stray;
}

static void setup(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/gsmooth-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
}

START_TEST(help_and_version)
{
    result r;
    RUN(&r, "--help");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "Usage: gsmooth"));
    RUN(&r, "--version");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "gsmooth "));
}
END_TEST

START_TEST(usage_errors_exit_2)
{
    result r;
    RUN(&r, input("noise.png"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "missing");
    RUN(&r, "--bogus", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "--bogus");
    RUN(&r, "--iters", "100001", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "--iters");
    RUN(&r, "--iters", "-1", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--iters", "3x", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--integral=3d", input("noise.png"), tmp("o.npy"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--depth", "12", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--threads", "0", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, input("noise.png"), tmp("a.png"), tmp("b.png"));
    ck_assert_int_eq(r.code, 2);
    const char *none[] = {NULL};
    ck_assert_int_eq(stray_files(none), 0);
}
END_TEST

START_TEST(unknown_extension_is_usage_error)
{
    result r;
    RUN(&r, input("noise.png"), tmp("out.xyz"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "xyz");
    RUN(&r, input("noise.png"), tmp("noextension"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--integral", input("noise.png"), tmp("out.jpg"));
    ck_assert_int_eq(r.code, 2);
    const char *none[] = {NULL};
    ck_assert_int_eq(stray_files(none), 0);
}
END_TEST

START_TEST(smooth_writes_every_format)
{
    const char *names[] = {"o.png", "o.pgm", "o.bmp", "o.tga", "o.jpg", "o.JPEG", "o.npy"};
    result r;
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
        RUN(&r, "--quiet", input("photo.png"), tmp(names[i]));
        ck_assert_msg(r.code == 0, "%s: %s", names[i], r.err);
        ck_assert_msg(r.err[0] == '\0', "--quiet printed: %s", r.err);
        ck_assert(file_exists(tmp(names[i])));
    }
    /* What was written reads back with the same pixels (lossless formats). */
    RUN(&r, "--iters", "0", "--quiet", tmp("o.pgm"), tmp("back.png"));
    ck_assert_int_eq(r.code, 0);
    RUN(&r, "--iters", "0", "--quiet", tmp("o.bmp"), tmp("back.pgm"));
    ck_assert_int_eq(r.code, 0);
    static char a[1 << 17], b[1 << 17];
    size_t na = read_file(tmp("o.pgm"), a, sizeof a), nb = read_file(tmp("back.pgm"), b, sizeof b);
    ck_assert_uint_gt(na, 0);
    ck_assert_uint_eq(na, nb);
    ck_assert_mem_eq(a, b, na);
}
END_TEST

START_TEST(colour_note_and_quiet)
{
    result r;
    RUN(&r, input("photo.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.err, "gray") && count_lines(r.err) == 1, "note: %s", r.err);
    RUN(&r, input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(r.err[0] == '\0', "gray input printed: %s", r.err);
}
END_TEST

START_TEST(stdin_and_stdout)
{
    result r, ref;
    RUN(&ref, "--quiet", input("noise.png"), tmp("ref.png"));
    ck_assert_int_eq(ref.code, 0);
    run(&r, input("noise.png"), (const char *const[]){"--quiet", "-", "-", NULL});
    ck_assert_int_eq(r.code, 0);
    ck_assert_uint_gt(r.out_len, 8);
    ck_assert_mem_eq(r.out, "\x89PNG", 4);
    static char want[1 << 16];
    size_t n = read_file(tmp("ref.png"), want, sizeof want);
    ck_assert_uint_eq(n, r.out_len);
    ck_assert_mem_eq(want, r.out, n);
}
END_TEST

START_TEST(missing_input)
{
    result r;
    RUN(&r, tmp("does-not-exist.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "does-not-exist.png");
    const char *none[] = {NULL};
    ck_assert_int_eq(stray_files(none), 0);
}
END_TEST

/* Each bad input: exit 1, one line naming the file, no output, no temp file, and an
 * existing output untouched. */
static void check_bad_input(const char *bad, const char *name)
{
    const char *prior = "previous contents";
    write_file(tmp("keep.png"), prior, strlen(prior));
    result r;
    RUN(&r, bad, tmp("keep.png"));
    ck_assert_msg(r.code == 1, "%s: exit %d, stderr %s", name, r.code, r.err);
    assert_one_line_error(&r, name);
    char buf[64] = {0};
    ck_assert_uint_eq(read_file(tmp("keep.png"), buf, sizeof buf), strlen(prior));
    ck_assert_str_eq(buf, prior);
    RUN(&r, bad, tmp("new.png"));
    ck_assert_int_eq(r.code, 1);
    const char *allowed[] = {"keep.png", "bad.png", "empty.png", "text.png", "trunc.png",
                             "corrupt.png", "huge.png", NULL};
    ck_assert_int_eq(stray_files(allowed), 0);
}

START_TEST(bad_inputs)
{
    static char png[1 << 17];
    size_t n = read_file(input("noise.png"), png, sizeof png);
    ck_assert_uint_gt(n, 100);
    write_file(tmp("empty.png"), "", 0);
    check_bad_input(tmp("empty.png"), "empty.png");
    write_file(tmp("text.png"), "hello, this is not an image\n", 28);
    check_bad_input(tmp("text.png"), "text.png");
    write_file(tmp("trunc.png"), png, n / 2);
    check_bad_input(tmp("trunc.png"), "trunc.png");
    for (size_t i = n / 3; i < n / 3 + 64; ++i) png[i] ^= 0x5A; /* inside IDAT */
    write_file(tmp("corrupt.png"), png, n);
    check_bad_input(tmp("corrupt.png"), "corrupt.png");
    check_bad_input(scratch, scratch); /* a directory given as input */
}
END_TEST

/* A valid PNG signature and IHDR claiming 100000 x 100000, then nothing. */
START_TEST(huge_header_refused_before_allocation)
{
    unsigned char png[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
                             'I', 'H', 'D', 'R'};
    unsigned char *ihdr = png + 16;
    const uint32_t side = 100000;
    for (int i = 0; i < 2; ++i) {
        ihdr[4 * i + 0] = side >> 24, ihdr[4 * i + 1] = (side >> 16) & 255;
        ihdr[4 * i + 2] = (side >> 8) & 255, ihdr[4 * i + 3] = side & 255;
    }
    ihdr[8] = 8, ihdr[9] = 0, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0;
    uLong crc = crc32(0, png + 12, 17);
    png[29] = crc >> 24, png[30] = (crc >> 16) & 255, png[31] = (crc >> 8) & 255, png[32] = crc & 255;
    write_file(tmp("huge.png"), png, sizeof png);
    check_bad_input(tmp("huge.png"), "huge.png");
    result r;
    RUN(&r, "--max-pixels", "100", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "noise.png");
}
END_TEST

START_TEST(unwritable_output)
{
    result r;
    RUN(&r, "--quiet", input("noise.png"), tmp("missing-dir/o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "missing-dir");
    write_file(tmp("plainfile"), "x", 1);
    RUN(&r, "--quiet", input("noise.png"), tmp("plainfile/o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "plainfile");
    RUN(&r, "--quiet", input("noise.png"), "/proc/gsmooth-cannot-write.png");
    ck_assert_int_eq(r.code, 1);
    const char *allowed[] = {"plainfile", NULL};
    ck_assert_int_eq(stray_files(allowed), 0);
}
END_TEST

START_TEST(sixteen_bit_to_eight_bit_formats)
{
    result r;
    RUN(&r, "--quiet", input("gray16.png"), tmp("o.jpg"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "--depth 8");
    RUN(&r, "--quiet", "--depth", "8", input("gray16.png"), tmp("o.jpg"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    const char *allowed[] = {"o.jpg", NULL};
    ck_assert_int_eq(stray_files(allowed), 0);
}
END_TEST

START_TEST(integral_outputs)
{
    result r;
    RUN(&r, "--integral", input("noise.png"), tmp("rows.npy"));
    ck_assert_int_eq(r.code, 0);
    char head[128];
    ck_assert_uint_ge(read_file(tmp("rows.npy"), head, sizeof head), 64);
    ck_assert_mem_eq(head, "\x93NUMPY", 6);
    ck_assert_ptr_nonnull(memmem(head, sizeof head, "<u4", 3));
    RUN(&r, "--integral=2d", input("gray16.png"), tmp("sat.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.err, "viewing") != NULL, "no viewing note: %s", r.err);
}
END_TEST

START_TEST(backends_listed_and_chosen)
{
    result r;
    RUN(&r, "--list-backends");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "cpu"));
    RUN(&r, "--list-backends", "-v");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "ABI:"));
    ck_assert_ptr_nonnull(strstr(r.out, "gsmooth_cpu.so"));
    RUN(&r, "--backend", "nosuch", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "nosuch");
    RUN(&r, "--backend", wrong_abi_so, input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "99.0");
    ck_assert_msg(strstr(r.err, "wrong_abi") != NULL, "no file name: %s", r.err);
    RUN(&r, "--backend", no_entry_so, input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "gs_plugin_entry");
    const char *none[] = {NULL};
    ck_assert_int_eq(stray_files(none), 0);
}
END_TEST

START_TEST(example_plugin_matches_cpu)
{
    if (!example_so[0]) ck_abort_msg("example plugin path not given");
    result r;
    RUN(&r, "--backend", example_so, "--integral", input("gray16.png"), tmp("ex.npy"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    RUN(&r, "--backend", "cpu", "--integral", input("gray16.png"), tmp("cpu.npy"));
    ck_assert_int_eq(r.code, 0);
    static char a[1 << 18], b[1 << 18];
    size_t na = read_file(tmp("ex.npy"), a, sizeof a), nb = read_file(tmp("cpu.npy"), b, sizeof b);
    ck_assert_uint_gt(na, 128);
    ck_assert_uint_eq(na, nb);
    ck_assert_mem_eq(a, b, na);
    RUN(&r, "--backend", example_so, input("gray16.png"), tmp("smooth.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "does not implement");
}
END_TEST

START_TEST(batch_goes_on_past_failures)
{
    mkdir(tmp("out"), 0755);
    write_file(tmp("bad.png"), "not an image", 12);
    result r;
    RUN(&r, "--quiet", "-o", tmp("out"), input("noise.png"), tmp("bad.png"), input("gray16.png"),
        input("palette.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "bad.png") && strstr(r.err, "4 files, 3 done, 1 failed"), "%s", r.err);
    ck_assert(file_exists(tmp("out/noise.png")));
    ck_assert(file_exists(tmp("out/gray16.png")));
    ck_assert(!file_exists(tmp("out/bad.png")));
    RUN(&r, "-o", tmp("out"), input("noise.png"), input("gradient.png"));
    ck_assert_int_eq(r.code, 0);
    RUN(&r, "-o", tmp("nowhere"), input("noise.png"));
    ck_assert_int_eq(r.code, 1);
    /* Two inputs with one output name: the second fails, the first's result stays. */
    mkdir(tmp("a"), 0755);
    mkdir(tmp("b"), 0755);
    mkdir(tmp("same"), 0755);
    static char png[1 << 17];
    size_t n = read_file(input("noise.png"), png, sizeof png);
    write_file(tmp("a/x.png"), png, n);
    n = read_file(input("gradient.png"), png, sizeof png);
    write_file(tmp("b/x.png"), png, n);
    RUN(&r, "--quiet", "-o", tmp("same"), tmp("a/x.png"), tmp("b/x.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "already the output of") != NULL, "%s", r.err);
    RUN(&r, "--quiet", "--iters", "0", tmp("same/x.png"), tmp("check.pgm"));
    ck_assert_int_eq(r.code, 0);
    char head[32];
    read_file(tmp("check.pgm"), head, sizeof head);
    ck_assert_msg(strncmp(head, "P5\n257 64\n", 10) == 0, "the first input's result was replaced");
}
END_TEST

/* Files in flight must not change a byte: a parallel batch equals one-file runs. */
START_TEST(parallel_batch_matches_single_runs)
{
    const char *names[] = {"photo.png", "noise.png", "gray16.png", "interlaced.png",
                           "gradient.png", "palette.png", "one_pixel_tall.png", "colour.png"};
    enum { N = sizeof names / sizeof *names };
    const char *args[N + 8];
    int n = 0;
    mkdir(tmp("par"), 0755);
    args[n++] = "--quiet", args[n++] = "--jobs", args[n++] = "3", args[n++] = "-o";
    args[n++] = tmp("par");
    for (int i = 0; i < N; ++i) args[n++] = input(names[i]);
    args[n] = NULL;
    result r;
    run(&r, NULL, args);
    ck_assert_msg(r.code == 0, "%s", r.err);
    static char a[1 << 18], b[1 << 18];
    for (int i = 0; i < N; ++i) {
        RUN(&r, "--quiet", "--threads", "1", input(names[i]), tmp("single.png"));
        ck_assert_int_eq(r.code, 0);
        char par[600];
        snprintf(par, sizeof par, "%s/%s", tmp("par"), names[i]);
        size_t na = read_file(par, a, sizeof a), nb = read_file(tmp("single.png"), b, sizeof b);
        ck_assert_msg(na > 0 && na == nb && memcmp(a, b, na) == 0, "%s differs", names[i]);
    }
    RUN(&r, "--jobs", "0", "-o", tmp("par"), input("noise.png"));
    ck_assert_int_eq(r.code, 2);
}
END_TEST

/* An output name that is a symlink replaces its target and keeps the link; a FIFO or a
 * device is refused, never replaced by a file. */
START_TEST(special_output_paths)
{
    result r;
    write_file(tmp("target.png"), "old", 3);
    ck_assert_int_eq(symlink(tmp("target.png"), tmp("link.png")), 0);
    RUN(&r, "--quiet", input("noise.png"), tmp("link.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    struct stat sb;
    ck_assert_int_eq(lstat(tmp("link.png"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    char head[8];
    ck_assert_uint_eq(read_file(tmp("target.png"), head, sizeof head), 8);
    ck_assert_mem_eq(head, "\x89PNG", 4);
    ck_assert_int_eq(mkfifo(tmp("fifo.png"), 0644), 0);
    RUN(&r, "--quiet", input("noise.png"), tmp("fifo.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "not a regular file");
    ck_assert_int_eq(lstat(tmp("fifo.png"), &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    const char *allowed[] = {"target.png", "link.png", "fifo.png", NULL};
    ck_assert_int_eq(stray_files(allowed), 0);
}
END_TEST

static long file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Every PNG compression setting decodes to the same pixels; the presets order by size. */
START_TEST(png_compression_settings)
{
    const char *presets[] = {"fast", "default", "small", "9"};
    static char want[1 << 18], got[1 << 18];
    size_t want_n = 0;
    long sizes[4];
    result r;
    for (int i = 0; i < 4; ++i) {
        RUN(&r, "--quiet", "--compression", presets[i], input("gray16.png"), tmp("c.png"));
        ck_assert_msg(r.code == 0, "%s: %s", presets[i], r.err);
        sizes[i] = file_size(tmp("c.png"));
        RUN(&r, "--quiet", "--iters", "0", tmp("c.png"), tmp("c.pgm"));
        ck_assert_int_eq(r.code, 0);
        size_t n = read_file(tmp("c.pgm"), i ? got : want, sizeof want);
        if (i == 0) want_n = n;
        else ck_assert_msg(n == want_n && memcmp(want, got, n) == 0, "%s: pixels differ", presets[i]);
    }
    ck_assert_int_gt(sizes[0], sizes[1]);
    ck_assert_int_ge(sizes[1], sizes[2]);
    RUN(&r, "--png-level", "10", input("gray16.png"), tmp("c.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--compression", "tiny", input("gray16.png"), tmp("c.png"));
    ck_assert_int_eq(r.code, 2);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s GSMOOTH GOLDEN_DIR WRONG_ABI_SO NO_ENTRY_SO EXAMPLE_SO\n", argv[0]);
        return 2;
    }
    gsmooth = argv[1], golden = argv[2], wrong_abi_so = argv[3], no_entry_so = argv[4];
    example_so = argv[5];
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, unknown_extension_is_usage_error);
    tcase_add_test(tc, smooth_writes_every_format);
    tcase_add_test(tc, colour_note_and_quiet);
    tcase_add_test(tc, stdin_and_stdout);
    tcase_add_test(tc, missing_input);
    tcase_add_test(tc, bad_inputs);
    tcase_add_test(tc, huge_header_refused_before_allocation);
    tcase_add_test(tc, unwritable_output);
    tcase_add_test(tc, sixteen_bit_to_eight_bit_formats);
    tcase_add_test(tc, integral_outputs);
    tcase_add_test(tc, backends_listed_and_chosen);
    tcase_add_test(tc, example_plugin_matches_cpu);
    tcase_add_test(tc, batch_goes_on_past_failures);
    tcase_add_test(tc, parallel_batch_matches_single_runs);
    tcase_add_test(tc, png_compression_settings);
    tcase_add_test(tc, special_output_paths);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
