/* test_cli.c: Check suite that runs the built gsmooth binary. */
/* Exit codes, messages, stdin/stdout, bad input, atomic output, plugins, batch. */

#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "test_files.h"
#include "run_process.h"

static const char *gsmooth;       /* binary under test */
static const char *golden;        /* tests/golden directory */
static const char *abi_dir;       /* the ABI fixtures: abi_<name>.so (tests/CMakeLists.txt) */
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
    /* the short forms; help fits a screen and points to the manual */
    RUN(&r, "-h");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "Usage: gsmooth"));
    ck_assert_ptr_nonnull(strstr(r.out, "man gsmooth"));
    ck_assert_int_le(count_lines(r.out), 25);
    for (const char *line = r.out; *line;) { /* and within 80 columns */
        const char *end = strchr(line, '\n');
        size_t width = end ? (size_t)(end - line) : strlen(line);
        ck_assert_msg(width <= 80, "--help line of %zu columns: %.*s", width, (int)width, line);
        line += width + (end != NULL);
    }
    RUN(&r, "-V");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "gsmooth "));
}
END_TEST

/* --sigma S picks K = round(3 S^2 / 2), says so, and gives the bytes of that --iters. */
START_TEST(sigma_picks_passes)
{
    result r, k;
    RUN(&r, "--sigma", "2", input("noise.png"), tmp("s.pgm"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.err, "--sigma 2 is 6 passes"), "%s", r.err);
    RUN(&k, "--iters", "6", input("noise.png"), tmp("k.pgm"));
    ck_assert_int_eq(k.code, 0);
    static char a[1 << 20], b[1 << 20];
    size_t na = read_file(tmp("s.pgm"), a, sizeof a), nb = read_file(tmp("k.pgm"), b, sizeof b);
    ck_assert_uint_eq(na, nb);
    ck_assert_mem_eq(a, b, na);
    RUN(&r, "--sigma", "3", input("noise.png"), tmp("s.pgm")); /* 13.5 rounds up */
    ck_assert_msg(strstr(r.err, "--sigma 3 is 14 passes"), "%s", r.err);
    RUN(&r, "--sigma", "0.5", "--quiet", input("noise.png"), tmp("s.pgm")); /* K = round(0.375) */
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(r.err[0] == '\0', "--quiet printed: %s", r.err);
    RUN(&r, "--sigma", "0.5", "--quiet", "--time", input("noise.png"), tmp("s.pgm"));
    ck_assert_msg(strstr(r.err, "is 0 passes"), "%s", r.err);
}
END_TEST

/* An image for standard output is refused when that is a terminal. */
START_TEST(no_image_to_a_terminal)
{
    int master, slave;
    ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(slave, STDOUT_FILENO);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDERR_FILENO);
        execl(gsmooth, gsmooth, "--quiet", input("noise.png"), "-", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d", status);
    fcntl(master, F_SETFL, O_NONBLOCK);
    char buf[64];
    ck_assert_int_le(read(master, buf, sizeof buf), 0); /* nothing reached the terminal */
    close(master), close(slave);
}
END_TEST

/* Environment settings with values gsmooth does not know are usage errors too. */
START_TEST(bad_environment_values)
{
    result r;
    setenv("GSMOOTH_CPU_ISA", "sse", 1);
    RUN(&r, input("noise.png"), tmp("o.png"));
    unsetenv("GSMOOTH_CPU_ISA");
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "GSMOOTH_CPU_ISA=sse");
    setenv("GSMOOTH_CPU_ISA", "avx2", 1);
    RUN(&r, "--quiet", input("noise.png"), tmp("o.png"));
    unsetenv("GSMOOTH_CPU_ISA");
    ck_assert_int_eq(r.code, 0);
}
END_TEST

/* A colour file that fails prints its error alone, not its colour note first. */
START_TEST(failed_file_prints_one_line)
{
    static char png[1 << 20];
    size_t n = read_file(input("photo.png"), png, sizeof png);
    ck_assert_uint_gt(n, 200);
    FILE *f = fopen(tmp("cut.png"), "wb");
    fwrite(png, 1, n / 2, f); /* cut in its image data */
    fclose(f);
    result r;
    RUN(&r, tmp("cut.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(count_lines(r.err) == 1 && !strstr(r.err, "note"), "%s", r.err);
    mkdir(tmp("out"), 0755);
    RUN(&r, "-o", tmp("out"), tmp("cut.png"), input("photo.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "photo.png: colour converted"), "the good file's note: %s", r.err);
    ck_assert_msg(!strstr(r.err, "cut.png: colour"), "the failed file's note: %s", r.err);
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
    /* A prefix of two names is ambiguous, and says so; one of one name is that option. */
    RUN(&r, "--comp=6", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "ambiguous option '--comp=6' (it starts 2 option names)");
    RUN(&r, "--quiet", "--compr=6", tmp("missing.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1); /* parsed: the run-time error of the missing input */
    assert_one_line_error(&r, "missing.png: cannot open");
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

/* Every kind of misuse: exit 2, one line on stderr that names what was wrong, no file. */
START_TEST(every_usage_error_is_one_line_and_exit_2)
{
    static const struct {
        const char *args[8]; /* NULL-terminated */
        const char *names;   /* what the message must mention */
    } cases[] = {
        /* an option with no value, as the last word or before another option */
        {{"NOISE", "OUT", "--iters", NULL}, "--iters"},
        {{"NOISE", "OUT", "--max-pixels", NULL}, "--max-pixels"},
        {{"NOISE", "OUT", "-o", NULL}, "-o"},
        /* bad values */
        {{"--iters", "three", "NOISE", "OUT", NULL}, "--iters"},
        {{"--max-pixels", "0", "NOISE", "OUT", NULL}, "--max-pixels"},
        {{"--threads", "257", "NOISE", "OUT", NULL}, "--threads"},
        {{"--jobs", "x", "NOISE", "OUT", NULL}, "--jobs"},
        {{"--depth", "24", "NOISE", "OUT", NULL}, "--depth"},
        {{"--png-level", "-1", "NOISE", "OUT", NULL}, "--png-level: compression"},
        {{"--integral=cols", "NOISE", "OUT", NULL}, "--integral"},
        {{"--axis", "z", "NOISE", "OUT", NULL}, "--axis"},
        {{"NOISE", "OUT", "--axis", NULL}, "--axis"},
        /* conflicting options */
        {{"--integral", "--iters", "3", "NOISE", "OUT", NULL}, "--iters"},
        {{"--integral=2d", "--depth", "8", "NOISE", "OUT", NULL}, "--depth"},
        {{"--integral", "--axis", "y", "NOISE", "OUT", NULL}, "--axis"},
        /* -o with no inputs; an empty --backend */
        {{"-o", "SCRATCH", NULL}, "-o"},
        {{"--backend", "", "NOISE", "OUT", NULL}, "--backend"},
        {{"--backend", "nosuch", "NOISE", "OUT", NULL}, "no backend named 'nosuch'"},
        /* arguments where none are taken; -v without --list-backends */
        {{"--list-backends", "extra", NULL}, "--list-backends takes no arguments"},
        {{"--version", "--bogus", NULL}, "--bogus"},
        {{"--help", "NOISE", NULL}, "--help takes no arguments"},
        {{"-v", "NOISE", "OUT", NULL}, "-v applies to --list-backends"},
        /* --completion: a shell it has no script for, no shell, anything after it */
        {{"--completion", "fish", NULL}, "--completion takes bash or zsh, not 'fish'"},
        {{"--completion=", NULL}, "--completion takes bash or zsh, not ''"},
        {{"--completion", NULL}, "option '--completion' needs a value"},
        {{"--completion", "bash", "NOISE", NULL}, "--completion takes no arguments"},
        /* the integral's mode as a separate word */
        {{"--integral", "2d", "NOISE", "OUT.npy", NULL}, "--integral=2d"},
        /* --sigma: out of range, not a number, beside --iters or --integral */
        {{"--sigma", "0", "NOISE", "OUT", NULL}, "--sigma"},
        {{"--sigma", "x", "NOISE", "OUT", NULL}, "--sigma"},
        {{"--sigma", "1000", "NOISE", "OUT", NULL}, "--sigma"},
        {{"--sigma", "2", "--iters", "3", "NOISE", "OUT", NULL}, "--sigma and --iters"},
        {{"--integral", "--sigma", "2", "NOISE", "OUT.npy", NULL}, "--sigma does not apply"},
        /* an output extension that is not a format */
        {{"NOISE", "OUT.tiff2", NULL}, "tiff2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *args[9];
        size_t n = 0;
        for (; cases[i].args[n]; ++n) {
            const char *a = cases[i].args[n];
            args[n] = !strcmp(a, "NOISE") ? input("noise.png")
                    : !strcmp(a, "OUT") ? tmp("o.png")
                    : !strcmp(a, "OUT.tiff2") ? tmp("o.tiff2")
                    : !strcmp(a, "OUT.npy") ? tmp("o.npy")
                    : !strcmp(a, "SCRATCH") ? scratch : a;
        }
        args[n] = NULL;
        result r;
        run(&r, NULL, args);
        ck_assert_msg(r.code == 2, "case %zu (%s): exit %d, want 2; stderr: %s", i, cases[i].names,
                      r.code, r.err);
        assert_one_line_error(&r, cases[i].names);
    }
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

/* gsmooth's own reading of an image file, as 8-bit PGM bytes (header and samples). */
static size_t decoded_pgm(const char *path, char *buf, size_t cap)
{
    result r;
    RUN(&r, "--quiet", "--iters", "0", "--depth", "8", path, tmp("decoded.pgm"));
    ck_assert_msg(r.code == 0, "%s does not read back: %s", path, r.err);
    return read_file(tmp("decoded.pgm"), buf, cap);
}

START_TEST(smooth_writes_every_format)
{
    /* photo.png is 240 x 160 (8-bit after BT.601): the reference output is PGM, whose
     * bytes are a short header and then the samples. */
    enum { W = 240, H = 160 };
    static char want[1 << 16], got[1 << 16];
    result r;
    RUN(&r, "--quiet", input("photo.png"), tmp("ref.pgm"));
    ck_assert_int_eq(r.code, 0);
    size_t want_n = read_file(tmp("ref.pgm"), want, sizeof want);
    ck_assert_uint_eq(want_n, strlen("P5\n240 160\n255\n") + W * H);
    const char *raster = want + want_n - W * H;

    /* Lossless formats hold exactly the reference's pixels. */
    const char *lossless[] = {"o.png", "o.pgm", "o.bmp", "o.tga", "o.PNG"};
    for (size_t i = 0; i < sizeof lossless / sizeof *lossless; ++i) {
        RUN(&r, "--quiet", input("photo.png"), tmp(lossless[i]));
        ck_assert_msg(r.code == 0, "%s: %s", lossless[i], r.err);
        ck_assert_msg(r.err[0] == '\0', "--quiet printed: %s", r.err);
        size_t n = decoded_pgm(tmp(lossless[i]), got, sizeof got);
        ck_assert_msg(n == want_n && memcmp(got, want, n) == 0, "%s: pixels differ from the reference",
                      lossless[i]);
    }
    /* NPY holds the samples raw, as uint8, in a (160, 240) array. */
    RUN(&r, "--quiet", input("photo.png"), tmp("o.npy"));
    ck_assert_int_eq(r.code, 0);
    size_t n = read_file(tmp("o.npy"), got, sizeof got);
    ck_assert_uint_ge(n, W * H + 64);
    ck_assert_ptr_nonnull(memmem(got, 64, "'descr': '|u1'", 14));
    ck_assert_ptr_nonnull(memmem(got, 128, "'shape': (160, 240)", 19));
    ck_assert_mem_eq(got + n - W * H, raster, W * H);
    /* JPEG is lossy: at quality 95 every pixel stays within a few levels. */
    const char *jpegs[] = {"o.jpg", "o.JPEG"};
    for (size_t i = 0; i < 2; ++i) {
        RUN(&r, "--quiet", input("photo.png"), tmp(jpegs[i]));
        ck_assert_msg(r.code == 0, "%s: %s", jpegs[i], r.err);
        n = decoded_pgm(tmp(jpegs[i]), got, sizeof got);
        ck_assert_uint_eq(n, want_n);
        int worst = 0;
        long total = 0;
        for (size_t k = 0; k < W * H; ++k) {
            int d = abs((unsigned char)got[n - W * H + k] - (unsigned char)raster[k]);
            worst = d > worst ? d : worst;
            total += d;
        }
        ck_assert_msg(worst <= 12 && total <= W * H, "%s: max error %d, mean %.2f", jpegs[i], worst,
                      (double)total / (W * H));
    }
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

/* Samples of a 16-bit PGM that gsmooth wrote (header "P5\nW H\n65535\n"). */
static uint16_t *read_pgm16(const char *path, unsigned *w, unsigned *h)
{
    static char buf[1 << 18];
    size_t n = read_file(path, buf, sizeof buf);
    unsigned maxval = 0;
    int header = 0;
    ck_assert_int_eq(sscanf(buf, "P5 %u %u %u%n", w, h, &maxval, &header), 3);
    ck_assert_uint_eq(maxval, 65535);
    ++header; /* the one whitespace byte before the raster */
    ck_assert_uint_eq(n, header + 2ul * *w * *h);
    uint16_t *v = malloc(sizeof *v * *w * *h);
    for (size_t i = 0; i < (size_t)*w * *h; ++i)
        v[i] = (uint16_t)((unsigned char)buf[header + 2 * i] << 8 | (unsigned char)buf[header + 2 * i + 1]);
    return v;
}

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

    /* The pictures: 16-bit, the largest sum at 65535, never decreasing along a row (and
     * down a column for the table); for 2d that largest sum is the bottom-right corner. */
    const char *modes[] = {"--integral=rows", "--integral=2d"};
    for (int m = 0; m < 2; ++m) {
        RUN(&r, "--quiet", modes[m], input("gray16.png"), tmp("view.pgm"));
        ck_assert_msg(r.code == 0, "%s: %s", modes[m], r.err);
        unsigned w, h;
        uint16_t *v = read_pgm16(tmp("view.pgm"), &w, &h);
        ck_assert_uint_eq(w, 130);
        ck_assert_uint_eq(h, 90);
        unsigned top = 0;
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) {
                uint16_t here = v[(size_t)y * w + x];
                top = here > top ? here : top;
                if (x) ck_assert_msg(here >= v[(size_t)y * w + x - 1], "%s: row %u decreases at %u", modes[m], y, x);
                if (m == 1 && y)
                    ck_assert_msg(here >= v[(size_t)(y - 1) * w + x], "%s: column %u decreases at %u", modes[m], x, y);
            }
        ck_assert_uint_eq(top, 65535);
        if (m == 1) ck_assert_uint_eq(v[(size_t)w * h - 1], 65535);
        free(v);
    }
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
    ck_assert_int_eq(r.code, 2); /* a name that is no backend: a usage error */
    assert_one_line_error(&r, "nosuch");
    RUN(&r, "--backend", no_entry_so, input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "gs_plugin_entry");
    const char *none[] = {NULL};
    ck_assert_int_eq(stray_files(none), 0);
}
END_TEST

/* The example plugin built to claim other ABI versions: each refused, with one line that
 * names the file, the version it claims and the versions this gsmooth takes; the same
 * source claiming the current version loads and gives the CPU's bytes. */
START_TEST(abi_versions_refused_for_the_version_alone)
{
    static const struct {
        const char *file, *claims;
    } refused[] = {{"abi_major0.so", "plugin ABI 0.0"}, {"abi_major2.so", "plugin ABI 2.0"},
                   {"abi_newer_minor.so", "plugin ABI 1."}};
    char supports[64], path[512];
    result r;
    RUN(&r, "--version");
    const char *abi = strstr(r.out, "plugin ABI ");
    ck_assert_ptr_nonnull(abi);
    unsigned major = 0, minor = 0;
    ck_assert_int_eq(sscanf(abi, "plugin ABI %u.%u", &major, &minor), 2);
    snprintf(supports, sizeof supports, "supports %u.0 to %u.%u", major, major, minor);
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        snprintf(path, sizeof path, "%s/%s", abi_dir, refused[i].file);
        RUN(&r, "--backend", path, "--integral", input("noise.png"), tmp("o.npy"));
        ck_assert_msg(r.code == 1, "%s: exit %d: %s", refused[i].file, r.code, r.err);
        assert_one_line_error(&r, refused[i].file);
        assert_one_line_error(&r, refused[i].claims);
        assert_one_line_error(&r, supports);
    }
    snprintf(path, sizeof path, "%s/abi_newer_minor.so", abi_dir);
    char newer[32];
    snprintf(newer, sizeof newer, "plugin ABI %u.%u,", major, minor + 1);
    RUN(&r, "--backend", path, "--integral", input("noise.png"), tmp("o.npy"));
    assert_one_line_error(&r, newer);
    RUN(&r, "--backend", "cpu", "--integral", input("gray16.png"), tmp("cpu.npy"));
    ck_assert_int_eq(r.code, 0);
    static char a[1 << 18], b[1 << 18];
    size_t nb = read_file(tmp("cpu.npy"), b, sizeof b);
    ck_assert_uint_gt(nb, 128);
    /* the current ABI, and a plugin built against ABI 1.0 (its shorter descriptor) */
    const char *loads[] = {"abi_current.so", "abi_1_0.so"};
    for (size_t i = 0; i < 2; ++i) {
        snprintf(path, sizeof path, "%s/%s", abi_dir, loads[i]);
        RUN(&r, "--backend", path, "--integral", input("gray16.png"), tmp("fixture.npy"));
        ck_assert_msg(r.code == 0, "the fixture %s does not run: %s", loads[i], r.err);
        size_t na = read_file(tmp("fixture.npy"), a, sizeof a);
        ck_assert_uint_eq(na, nb);
        ck_assert_mem_eq(a, b, na);
    }
    const char *left[] = {"fixture.npy", "cpu.npy", NULL};
    ck_assert_int_eq(stray_files(left), 0);
}
END_TEST

/* A 6 x 4 gray GIF (made with PIL): stb_image reads it. */
static const unsigned char tiny_gif[] = {
    0x47, 0x49, 0x46, 0x38, 0x37, 0x61, 0x06, 0x00, 0x04, 0x00, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x0a, 0x0a, 0x14, 0x14, 0x14, 0x1e, 0x1e, 0x1e, 0x28, 0x28, 0x28, 0x32, 0x32, 0x32, 0x3c,
    0x3c, 0x3c, 0x46, 0x46, 0x46, 0x50, 0x50, 0x50, 0x5a, 0x5a, 0x5a, 0x64, 0x64, 0x64, 0x6e, 0x6e,
    0x6e, 0x78, 0x78, 0x78, 0x82, 0x82, 0x82, 0x8c, 0x8c, 0x8c, 0x96, 0x96, 0x96, 0xa0, 0xa0, 0xa0,
    0xaa, 0xaa, 0xaa, 0xb4, 0xb4, 0xb4, 0xbe, 0xbe, 0xbe, 0xc8, 0xc8, 0xc8, 0xd2, 0xd2, 0xd2, 0xdc,
    0xdc, 0xdc, 0xe6, 0xe6, 0xe6, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
    0x00, 0x00, 0x06, 0x00, 0x04, 0x00, 0x00, 0x08, 0x1e, 0x00, 0x01, 0x04, 0x10, 0x30, 0x80, 0x40,
    0x01, 0x03, 0x07, 0x10, 0x24, 0x50, 0xb0, 0x80, 0x41, 0x03, 0x07, 0x0f, 0x20, 0x44, 0x90, 0x30,
    0x81, 0x42, 0x05, 0x0b, 0x17, 0x02, 0x02, 0x00, 0x3b};

/* The names `dir` holds, sorted and joined by spaces. */
static void listing(const char *dir, char *out, size_t size)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = '\0';
    for (int i = 0; i < n; ++i) {
        if (names[i]->d_name[0] != '.')
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
}

/* Batch outputs: smoothing keeps a lossless writable name (.png .pgm .bmp .tga) and gives
 * every other input .png (a .jpg stays exact, a .gif becomes writable); integrals are .npy;
 * float32 results keep float formats' names and make the rest .tif. */
START_TEST(batch_output_names)
{
    result r;
    write_file(tmp("g.gif"), tiny_gif, sizeof tiny_gif);
    RUN(&r, "--quiet", input("noise.png"), tmp("j.jpg"));
    ck_assert_int_eq(r.code, 0);
    RUN(&r, "--quiet", input("noise.png"), tmp("b.bmp"));
    ck_assert_int_eq(r.code, 0);
    RUN(&r, "--quiet", input("noise.png"), tmp("m.pgm"));
    ck_assert_int_eq(r.code, 0);
    char names[256];
    mkdir(tmp("smooth"), 0755);
    RUN(&r, "--quiet", "-o", tmp("smooth"), tmp("g.gif"), tmp("j.jpg"), tmp("b.bmp"), tmp("m.pgm"),
        input("palette.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    listing(tmp("smooth"), names, sizeof names);
    ck_assert_str_eq(names, "b.bmp g.png j.png m.pgm palette.png");
    mkdir(tmp("integral"), 0755);
    RUN(&r, "--quiet", "--integral", "-o", tmp("integral"), tmp("g.gif"), tmp("j.jpg"),
        tmp("m.pgm"), input("palette.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    listing(tmp("integral"), names, sizeof names);
    ck_assert_str_eq(names, "g.npy j.npy m.npy palette.npy");
    char head[16];
    ck_assert_uint_eq(read_file(tmp("integral/palette.npy"), head, sizeof head), sizeof head);
    ck_assert_mem_eq(head, "\x93NUMPY", 6);
    mkdir(tmp("sat"), 0755);
    RUN(&r, "--quiet", "--integral=2d", "-o", tmp("sat"), input("noise.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    listing(tmp("sat"), names, sizeof names);
    ck_assert_str_eq(names, "noise.npy");
    /* float32 results: PNG, PGM and GIF inputs become float TIFF; a float format keeps its name */
    RUN(&r, "--quiet", "--iters", "0", input("noise.png"), tmp("n.npy"));
    ck_assert_int_eq(r.code, 0);
    mkdir(tmp("float"), 0755);
    RUN(&r, "--quiet", "--depth", "float", "-o", tmp("float"), tmp("g.gif"), tmp("m.pgm"), tmp("n.npy"),
        input("palette.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    listing(tmp("float"), names, sizeof names);
    ck_assert_str_eq(names, "g.tif m.tif n.npy palette.tif");
    char dict[64];
    ck_assert_uint_eq(read_file(tmp("float/n.npy"), dict, sizeof dict), sizeof dict);
    ck_assert_ptr_nonnull(memmem(dict, sizeof dict, "'descr': '<f4'", 14));
}
END_TEST

/* --max-pixels at its boundary, for every reader: width x height - 1 refuses (exit 1, one
 * line naming the file and the option), width x height accepts. */
START_TEST(max_pixels_boundary)
{
    static const struct {
        const char *file;
        unsigned pixels;
    } inputs[] = {{"n.png", 257 * 64}, {"n.pgm", 257 * 64}, {"n.bmp", 257 * 64},
                  {"n.tga", 257 * 64}, {"n.jpg", 257 * 64}, {"g.gif", 6 * 4}};
    result r;
    for (size_t i = 0; i + 1 < sizeof inputs / sizeof *inputs; ++i) {
        RUN(&r, "--quiet", "--iters", "0", input("noise.png"), tmp(inputs[i].file));
        ck_assert_int_eq(r.code, 0);
    }
    write_file(tmp("g.gif"), tiny_gif, sizeof tiny_gif);
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; ++i) {
        char below[16], exact[16];
        snprintf(below, sizeof below, "%u", inputs[i].pixels - 1);
        snprintf(exact, sizeof exact, "%u", inputs[i].pixels);
        RUN(&r, "--max-pixels", below, tmp(inputs[i].file), tmp("out.png"));
        ck_assert_msg(r.code == 1, "%s at --max-pixels %s: exit %d", inputs[i].file, below, r.code);
        assert_one_line_error(&r, inputs[i].file);
        assert_one_line_error(&r, "--max-pixels");
        ck_assert(!file_exists(tmp("out.png")));
        RUN(&r, "--quiet", "--max-pixels", exact, tmp(inputs[i].file), tmp("out.png"));
        ck_assert_msg(r.code == 0, "%s at --max-pixels %s: %s", inputs[i].file, exact, r.err);
        unlink(tmp("out.png"));
    }
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
    /* Nor does it offer smooth_axes: --axis y is refused the same way, not run on rows. */
    RUN(&r, "--backend", example_so, "--axis", "y", input("gray16.png"), tmp("smooth.png"));
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
    /* A second run over the same directory replaces the outputs with the right ones. */
    RUN(&r, "-o", tmp("out"), input("noise.png"), input("gradient.png"));
    ck_assert_int_eq(r.code, 0);
    const char *again[] = {"noise.png", "gradient.png"};
    for (int i = 0; i < 2; ++i) {
        static char a[1 << 17], b[1 << 17];
        RUN(&r, "--quiet", input(again[i]), tmp("single.png"));
        ck_assert_int_eq(r.code, 0);
        char out[600];
        snprintf(out, sizeof out, "%s/%s", tmp("out"), again[i]);
        size_t na = read_file(out, a, sizeof a), nb = read_file(tmp("single.png"), b, sizeof b);
        ck_assert_msg(na > 0 && na == nb && memcmp(a, b, na) == 0, "%s differs from a single run", again[i]);
    }
    RUN(&r, "--quiet", "-o", tmp("nowhere"), input("noise.png")); /* made, as mkdir -p */
    ck_assert_msg(r.code == 0, "%s", r.err);
    ck_assert(file_exists(tmp("nowhere/noise.png")));
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

/* Copies golden input `name` to scratch path `rel`. */
static void copy_input(const char *name, const char *rel)
{
    static char buf[1 << 18];
    size_t n = read_file(input(name), buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    write_file(tmp(rel), buf, n);
}

/* The bytes of `a` and `b` are the same. */
static void assert_same_file(const char *a, const char *b)
{
    static char x[1 << 18], y[1 << 18];
    size_t nx = read_file(a, x, sizeof x), ny = read_file(b, y, sizeof y);
    ck_assert_msg(nx > 0 && nx == ny && memcmp(x, y, nx) == 0, "%s differs from %s", a, b);
}

/* Two folders with the same names: --relative-to keeps them apart in a tree made under a
 * missing -o DIR, each output the bytes of a one-file run; without it the second x.png
 * fails; an input outside ROOT fails alone. */
START_TEST(batch_into_a_tree)
{
    result r;
    mkdir(tmp("in"), 0755), mkdir(tmp("in/a"), 0755), mkdir(tmp("in/b"), 0755);
    mkdir(tmp("in/a/sub"), 0755);
    copy_input("noise.png", "in/a/x.png");
    copy_input("gradient.png", "in/b/x.png");
    RUN(&r, "--quiet", input("photo.png"), tmp("in/a/sub/y.jpg"));
    ck_assert_int_eq(r.code, 0);
    char root[600];
    snprintf(root, sizeof root, "%s/in/", scratch); /* a trailing slash changes nothing */
    RUN(&r, "--quiet", "--relative-to", root, "-o", tmp("out/new"), tmp("in/a/x.png"), tmp("in/b/x.png"),
        tmp("in/a/sub/y.jpg"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    char names[256];
    listing(tmp("out/new"), names, sizeof names);
    ck_assert_str_eq(names, "a b");
    const char *ins[] = {"in/a/x.png", "in/b/x.png", "in/a/sub/y.jpg"};
    const char *outs[] = {"out/new/a/x.png", "out/new/b/x.png", "out/new/a/sub/y.png"};
    for (int i = 0; i < 3; ++i) {
        RUN(&r, "--quiet", tmp(ins[i]), tmp("single.png"));
        ck_assert_int_eq(r.code, 0);
        assert_same_file(tmp(outs[i]), tmp("single.png"));
    }
    /* A relative ROOT and relative inputs, with "." and "..": the same tree. */
    char cwd[600];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(scratch), 0);
    RUN(&r, "--quiet", "--relative-to", "./in/b/..", "-o", "rel", "in/b/../a/x.png", "in/b/x.png");
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(r.code == 0, "%s", r.err);
    assert_same_file(tmp("rel/a/x.png"), tmp("out/new/a/x.png"));
    assert_same_file(tmp("rel/b/x.png"), tmp("out/new/b/x.png"));
    /* Without it, outputs are named by basename: the first in the list wins. */
    RUN(&r, "--quiet", "-o", tmp("flat"), tmp("in/a/x.png"), tmp("in/b/x.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "in/b/x.png: its output") && strstr(r.err, "is already the output of"),
                  "%s", r.err);
    assert_same_file(tmp("flat/x.png"), tmp("out/new/a/x.png"));
    /* Outside ROOT, or beside it with a longer name: that file fails, the others are done. */
    mkdir(tmp("in2"), 0755);
    copy_input("noise.png", "in2/z.png");
    snprintf(root, sizeof root, "%s/in", scratch);
    RUN(&r, "--quiet", "--relative-to", root, "-o", tmp("out3"), tmp("in2/z.png"), tmp("in/a/x.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "in2/z.png: not inside") && strstr(r.err, "2 files, 1 done, 1 failed"), "%s",
                  r.err);
    ck_assert_int_eq(count_lines(r.err), 2); /* its line and the summary */
    ck_assert(file_exists(tmp("out3/a/x.png")));
    /* A directory the tree needs exists as a file: that input fails with one line. */
    write_file(tmp("out3/b"), "file", 4);
    RUN(&r, "--quiet", "--relative-to", root, "-o", tmp("out3"), tmp("in/b/x.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "out3/b: exists and is not a directory"), "%s", r.err);
}
END_TEST

/* -o DIR: missing levels are made; a component that is a file refuses the whole batch in
 * one line; --relative-to needs -o. */
START_TEST(output_dir_creation)
{
    result r;
    RUN(&r, "--quiet", "-o", tmp("p/q/r"), input("noise.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    ck_assert(file_exists(tmp("p/q/r/noise.png")));
    write_file(tmp("plain"), "x", 1);
    const char *dirs[] = {"plain/sub", "plain"};
    for (int i = 0; i < 2; ++i) {
        RUN(&r, "--quiet", "-o", tmp(dirs[i]), input("noise.png"));
        ck_assert_int_eq(r.code, 1);
        assert_one_line_error(&r, "plain: exists and is not a directory");
    }
    RUN(&r, "--relative-to", scratch, input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 2);
    assert_one_line_error(&r, "--relative-to needs -o DIR");
    ck_assert(!file_exists(tmp("o.png")));
    /* --manifest's directory is made too (array tasks write manifests/m-$ID); a component
     * that is a file fails in one line before any input is read. */
    RUN(&r, "--quiet", "-o", tmp("mo"), "--manifest", tmp("logs/m/m-0.jsonl"), input("noise.png"));
    ck_assert_msg(r.code == 0, "%s", r.err);
    char line[4096];
    ck_assert_uint_gt(read_file(tmp("logs/m/m-0.jsonl"), line, sizeof line), 0);
    ck_assert_msg(strstr(line, "\"status\":\"ok\""), "%s", line);
    RUN(&r, "--quiet", "-o", tmp("mo2"), "--manifest", tmp("plain/m.jsonl"), input("noise.png"));
    ck_assert_int_eq(r.code, 1);
    assert_one_line_error(&r, "plain: exists and is not a directory");
    ck_assert(!file_exists(tmp("mo2/noise.png")));
}
END_TEST

/* Batch workers and Slurm tasks make the same directories at once: N processes started
 * together into one new tree all succeed. */
START_TEST(concurrent_tree_creation)
{
    enum { PROCS = 8, DIRS = 6 };
    char rel[64], root[600], out[600];
    const char *args[DIRS + 9]; /* 8 fixed words, the inputs, the NULL */
    int n = 0;
    snprintf(root, sizeof root, "%s/in", scratch);
    snprintf(out, sizeof out, "%s/out/deep/er", scratch);
    args[n++] = gsmooth, args[n++] = "--quiet", args[n++] = "--jobs", args[n++] = "3";
    args[n++] = "--relative-to", args[n++] = root, args[n++] = "-o", args[n++] = out;
    mkdir(tmp("in"), 0755);
    for (int d = 0; d < DIRS; ++d) {
        snprintf(rel, sizeof rel, "in/d%d", d);
        mkdir(tmp(rel), 0755);
        snprintf(rel, sizeof rel, "in/d%d/n%d", d, d);
        mkdir(tmp(rel), 0755);
        snprintf(rel, sizeof rel, "in/d%d/n%d/x.png", d, d);
        copy_input("one_pixel_tall.png", rel);
        args[n++] = strdup(tmp(rel));
    }
    args[n] = NULL;
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; ++p) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, STDOUT_FILENO);
            execv(gsmooth, (char *const *)args);
            _exit(127);
        }
    }
    int ok = 0;
    for (int p = 0; p < PROCS; ++p) {
        int st;
        ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    ck_assert_int_eq(ok, PROCS);
    for (int d = 0; d < DIRS; ++d) {
        snprintf(rel, sizeof rel, "out/deep/er/d%d/n%d/x.png", d, d);
        ck_assert_msg(file_exists(tmp(rel)), "%s missing", rel);
        free((void *)args[8 + d]);
    }
}
END_TEST

/* Formats gsmooth does not read are named by their signature: one line, exit 1, no output. */
START_TEST(unread_formats_named)
{
    static const struct {
        const char *file, *bytes, *name;
        size_t len;
    } cases[] = {
        {"x.avif", "\x00\x00\x00\x1c" "ftypavif\x00\x00\x00\x00", "AVIF", 16},
        {"x.heic", "\x00\x00\x00\x18" "ftypheic\x00\x00\x00\x00", "HEIC", 16},
        {"x.jp2", "\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00", "JPEG 2000", 14},
        {"x.j2k", "\xff\x4f\xff\x51\x00\x2f\x00\x00\x00\x00\x00\x00", "JPEG 2000", 12},
        {"x.jxl", "\xff\x0a\xfa\x7f\x01\x90\x08\x06\x01\x00\x48\x00", "JPEG XL", 12},
        {"y.jxl", "\x00\x00\x00\x0cJXL \r\n\x87\n\x00\x00", "JPEG XL", 14},
    };
    result r;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        write_file(tmp(cases[i].file), cases[i].bytes, cases[i].len);
        char want[128];
        snprintf(want, sizeof want, "%s: %s is not a format gsmooth reads (convert it to PNG first)",
                 cases[i].file, cases[i].name);
        RUN(&r, tmp(cases[i].file), tmp("out.png"));
        ck_assert_msg(r.code == 1, "%s: exit %d", cases[i].file, r.code);
        assert_one_line_error(&r, want);
        ck_assert(!file_exists(tmp("out.png")));
    }
    RUN(&r, "--quiet", "-o", tmp("o"), tmp("x.avif"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "AVIF is not a format gsmooth reads"), "%s", r.err);
    char names[64];
    listing(tmp("o"), names, sizeof names);
    ck_assert_str_eq(names, "");
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

/* Every PNG compression setting decodes to the same pixels (literals and runs at 1, ISA-L's
 * levels 2-3, zlib's 4-9, stored 0), 8 and 16-bit; on a photo, stored is the largest and
 * zlib's "small" no larger than the default (on small 16-bit images ISA-L's levels can beat
 * zlib's). */
START_TEST(png_compression_settings)
{
    const char *presets[] = {"0", "fast", "default", "3", "4", "small", "9"};
    const char *inputs[] = {"photo.png", "gray16.png"};
    enum { N = sizeof presets / sizeof *presets, STORED = 0, DEFAULT = 2, SMALL = 5 };
    static char want[1 << 18], got[1 << 18];
    long sizes[N];
    result r;
    for (int f = 0; f < 2; ++f) {
        size_t want_n = 0;
        for (int i = 0; i < N; ++i) {
            const char *how = presets[i][0] >= '0' && presets[i][0] <= '9' ? "--png-level" : "--compression";
            RUN(&r, "--quiet", how, presets[i], input(inputs[f]), tmp("c.png"));
            ck_assert_msg(r.code == 0, "%s: %s", presets[i], r.err);
            sizes[i] = file_size(tmp("c.png"));
            RUN(&r, "--quiet", "--iters", "0", tmp("c.png"), tmp("c.pgm"));
            ck_assert_int_eq(r.code, 0);
            size_t n = read_file(tmp("c.pgm"), i ? got : want, sizeof want);
            if (i == 0) want_n = n;
            else ck_assert_msg(n == want_n && memcmp(want, got, n) == 0, "%s, %s: pixels differ", inputs[f], presets[i]);
        }
        if (f == 0) {
            for (int i = 1; i < N; ++i) ck_assert_int_gt(sizes[STORED], sizes[i]);
            ck_assert_int_ge(sizes[DEFAULT], sizes[SMALL]);
        }
    }
    RUN(&r, "--png-level", "10", input("gray16.png"), tmp("c.png"));
    ck_assert_int_eq(r.code, 2);
    RUN(&r, "--compression", "tiny", input("gray16.png"), tmp("c.png"));
    ck_assert_int_eq(r.code, 2);
}
END_TEST

/* The lines of `text` that start with `prefix`, and the last of them (NULL: none). */
static int lines_starting(const char *text, const char *prefix, const char **last)
{
    int n = 0;
    *last = NULL;
    for (const char *line = text; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
        if (strncmp(line, prefix, strlen(prefix)) == 0) ++n, *last = line;
    return n;
}

/* Off a terminal, --progress=SECONDS prints plain lines (no carriage return, no escape
 * codes), a final one with every file; without --progress, none; a bad interval is a usage
 * error. */
START_TEST(batch_progress_off_a_terminal)
{
    result r;
    const char *last;
    const char *dirs[] = {"out", "again", "default", "bad"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; ++i) ck_assert_int_eq(mkdir(tmp(dirs[i]), 0755), 0);
    RUN(&r, "--quiet", "--progress=0.001", "-o", tmp("out"), input("noise.png"), tmp("missing.png"),
        input("gray16.png"), input("photo.png"));
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(!strchr(r.err, '\r') && !strchr(r.err, '\033'), "control bytes: %s", r.err);
    ck_assert_msg(lines_starting(r.err, "gsmooth: progress: ", &last) >= 2, "%s", r.err);
    ck_assert_msg(strncmp(last, "gsmooth: progress: 4/4 files, 1 failed, ", 40) == 0, "%s", r.err);
    RUN(&r, "--quiet", "-o", tmp("again"), input("noise.png"), input("gray16.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(r.err[0] == '\0', "without --progress: %s", r.err);
    /* The default interval is longer than this run: only the final line. */
    RUN(&r, "--quiet", "--progress", "-o", tmp("default"), input("noise.png"), input("gray16.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_int_eq(lines_starting(r.err, "gsmooth: progress: 2/2 files, 0 failed, ", &last), 1);
    ck_assert_int_eq(count_lines(r.err), 1);
    const char *bad[] = {"--progress=0", "--progress=x", "--progress=", "--progress=-1", "--progress=1e3",
                         "--progress=."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        RUN(&r, bad[i], "-o", tmp("bad"), input("noise.png"));
        ck_assert_int_eq(r.code, 2);
        assert_one_line_error(&r, "--progress");
    }
    RUN(&r, "--quiet", "--progress=2.5", input("noise.png"), tmp("o.png"));
    ck_assert_int_eq(r.code, 0);
}
END_TEST

/* A tall image gives one line of rows per strip with a tiny interval, the last with every
 * row; CPU strips hold 1 MiB of input, 16384 rows of this width. */
#define TALL_WIDTH 64
#define TALL_HEIGHT 100000
START_TEST(single_file_rows_progress)
{
    static unsigned char pgm[32 + TALL_WIDTH * TALL_HEIGHT];
    int head = snprintf((char *)pgm, 32, "P5\n%d %d\n255\n", TALL_WIDTH, TALL_HEIGHT);
    for (size_t i = 0; i < (size_t)TALL_WIDTH * TALL_HEIGHT; ++i) pgm[head + i] = (unsigned char)(i * 7 % 251);
    write_file(tmp("tall.pgm"), pgm, (size_t)head + TALL_WIDTH * TALL_HEIGHT);
    result r;
    const char *last;
    RUN(&r, "--quiet", "--progress=0.0001", tmp("tall.pgm"), tmp("tall.png"));
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(!strchr(r.err, '\r') && !strchr(r.err, '\033'), "control bytes: %s", r.err);
    ck_assert_msg(lines_starting(r.err, "gsmooth: progress: ", &last) > 2, "%s", r.err);
    ck_assert_int_eq(lines_starting(r.err, "gsmooth: progress: ", &last), count_lines(r.err));
    ck_assert_ptr_nonnull(strstr(r.err, "tall.pgm: 16384/100000 rows (16%), ETA "));
    ck_assert_msg(strstr(last, "tall.pgm: 100000/100000 rows (100%), ETA 0:00\n") != NULL, "%s", r.err);
    ck_assert_int_eq(count_lines(strstr(r.err, "100000/100000")), 1);
    RUN(&r, "--quiet", tmp("tall.pgm"), tmp("tall.png"));
    ck_assert_msg(r.err[0] == '\0', "without --progress: %s", r.err);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s GSMOOTH GOLDEN_DIR ABI_FIXTURE_DIR NO_ENTRY_SO EXAMPLE_SO\n", argv[0]);
        return 2;
    }
    gsmooth = argv[1], golden = argv[2], abi_dir = argv[3], no_entry_so = argv[4];
    example_so = argv[5];
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, sigma_picks_passes);
    tcase_add_test(tc, no_image_to_a_terminal);
    tcase_add_test(tc, bad_environment_values);
    tcase_add_test(tc, failed_file_prints_one_line);
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
    tcase_add_test(tc, abi_versions_refused_for_the_version_alone);
    tcase_add_test(tc, batch_output_names);
    tcase_add_test(tc, max_pixels_boundary);
    tcase_add_test(tc, every_usage_error_is_one_line_and_exit_2);
    tcase_add_test(tc, example_plugin_matches_cpu);
    tcase_add_test(tc, batch_goes_on_past_failures);
    tcase_add_test(tc, parallel_batch_matches_single_runs);
    tcase_add_test(tc, png_compression_settings);
    tcase_add_test(tc, special_output_paths);
    tcase_add_test(tc, batch_progress_off_a_terminal);
    tcase_add_test(tc, single_file_rows_progress);
    tcase_add_test(tc, batch_into_a_tree);
    tcase_add_test(tc, output_dir_creation);
    tcase_add_test(tc, concurrent_tree_creation);
    tcase_add_test(tc, unread_formats_named);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
