/* test_streams.c: Check suite for pipes as input and output. */
/* Every format through a real pipe gives the bytes of the file, a FIFO path works as input,
 * a huge header is refused before its body arrives, and a truncated pipe or a reader that
 * goes away fails cleanly. */

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "run_limited.h"
#include "test_files.h"

/* A run that does not end within this many seconds is a failure (SIGALRM kills it): the
 * refusal tests rely on it to show that gsmooth did not wait for a body. */
#define GS_STREAM_TIMEOUT_S 20
/* Largest input this suite feeds through a pipe. */
#define GS_STREAM_MAX_INPUT (4u << 20)

static const char *gsmooth, *golden, *damaged;
static char scratch[256];

static const char *tmp(const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", scratch, name);
    return p;
}

static void setup(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/gsmooth-streams-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; ++s) n += *s == '\n';
    return n;
}

static const gs_limits limits = {0, GS_STREAM_TIMEOUT_S};

/* Start gsmooth with `args`, its standard input the read end of a fresh pipe (a FIFO in
 * the scratch directory), write `n` bytes of `data` into it, then close it unless
 * `hold_open` (then the writer blocks, as a slow or stalled producer does, until gsmooth
 * has ended). Returns when gsmooth has ended. */
static void run_piped(gs_child_result *r, const char *const *args, const void *data, size_t n,
                      int hold_open)
{
    const char *fifo = tmp("in.fifo");
    unlink(fifo);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    gs_child child;
    ck_assert_int_eq(gs_child_start(&child, gsmooth, args, fifo, NULL, &limits), 0);
    int fd = open(fifo, O_WRONLY); /* meets gsmooth's open of its stdin */
    ck_assert_int_ge(fd, 0);
    size_t done = 0;
    while (done < n) { /* EPIPE ends the writing early if gsmooth stops reading */
        ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    if (!hold_open) close(fd);
    ck_assert_int_eq(gs_child_wait(&child, r), 0);
    if (hold_open) close(fd);
    unlink(fifo);
}

static size_t load(const char *path, char **data)
{
    *data = malloc(GS_STREAM_MAX_INPUT);
    ck_assert_ptr_nonnull(*data);
    size_t n = read_file(path, *data, GS_STREAM_MAX_INPUT);
    ck_assert_msg(n > 0 && n < GS_STREAM_MAX_INPUT, "%s: %zu bytes", path, n);
    return n;
}

static void assert_same_file(const char *a, const char *b, const char *what)
{
    static char x[GS_STREAM_MAX_INPUT], y[GS_STREAM_MAX_INPUT];
    size_t nx = read_file(a, x, sizeof x), ny = read_file(b, y, sizeof y);
    ck_assert_msg(nx > 0 && nx == ny && memcmp(x, y, nx) == 0, "%s: the pipe's output differs", what);
}

/* Every input format through a real pipe: the same output bytes and the same notes as
 * from the file. */
START_TEST(every_format_through_a_pipe)
{
    static const char *const inputs[] = {
        "G:photo.png", "G:gray16.png", "G:interlaced.png", "G:palette.png", "G:photo420.jpg",
        "G:progressive.jpg", "G:cmyk.jpg", "D:valid_gray.bmp", "D:valid_rgb.bmp",
        "D:valid_gray.tga", "D:valid_gray.gif", "D:valid_rgb.psd", "D:valid_rgb.hdr",
        "D:valid_gray.pgm", "D:valid_rgb.ppm", NULL};
    for (const char *const *in = inputs; *in; ++in) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s%s", (*in)[0] == 'G' ? golden : damaged,
                 (*in)[0] == 'G' ? "inputs/" : "", *in + 2);
        gs_child_result a, b;
        ck_assert_int_eq(gs_child_run(&a, gsmooth, (const char *const[]){"--iters", "2", path,
                                      tmp("file.png"), NULL}, NULL, &limits), 0);
        ck_assert_msg(a.exited && a.code == 0, "%s from the file: %s", *in, a.err);
        char *data;
        size_t n = load(path, &data);
        run_piped(&b, (const char *const[]){"--iters", "2", "-", tmp("pipe.png"), NULL}, data, n, 0);
        free(data);
        ck_assert_msg(b.exited && b.code == 0, "%s through a pipe: %s", *in, b.err);
        assert_same_file(tmp("file.png"), tmp("pipe.png"), *in);
        /* The same notes, the file's name replaced by "-". */
        ck_assert_int_eq(count_lines(a.err), count_lines(b.err));
    }
}
END_TEST

/* A FIFO named as the input file is read as a stream too. */
START_TEST(fifo_path_as_input)
{
    char path[600], *data;
    snprintf(path, sizeof path, "%s/inputs/photo.png", golden);
    size_t n = load(path, &data);
    const char *fifo = tmp("named.fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    gs_child child;
    gs_child_result r, ref;
    ck_assert_int_eq(gs_child_start(&child, gsmooth,
                                    (const char *const[]){"--quiet", fifo, tmp("fifo.png"), NULL},
                                    NULL, NULL, &limits), 0);
    int fd = open(fifo, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
    close(fd);
    free(data);
    ck_assert_int_eq(gs_child_wait(&child, &r), 0);
    ck_assert_msg(r.exited && r.code == 0, "%s", r.err);
    ck_assert_int_eq(gs_child_run(&ref, gsmooth, (const char *const[]){"--quiet", path,
                                  tmp("ref.png"), NULL}, NULL, &limits), 0);
    assert_same_file(tmp("ref.png"), tmp("fifo.png"), "FIFO input");
}
END_TEST

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Headers that claim 100000 x 100000 (JPEG and GIF: 65535 x 65535, their largest), written
 * into a pipe whose writer then blocks: each must be refused on its header alone (a reader
 * that waited for the body would wait until the time limit kills it). */
START_TEST(huge_header_refused_before_the_body)
{
    unsigned char png[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    put_be32(png + 16, 100000);
    put_be32(png + 20, 100000);
    png[24] = 8; /* 8-bit gray, deflate, no interlace */
    put_be32(png + 29, (uint32_t)crc32(0, png + 12, 17));
    /* SOI, SOF0 (8-bit, 65535 x 65535, one component), then nothing. */
    static const unsigned char jpeg[] = {0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0xFF, 0xFF,
                                         0xFF, 0xFF, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xC4};
    static const char pgm[] = "P5\n100000 100000\n255\n";
    /* A 65535 x 65535 logical screen, no global table: giflib has read all it needs. */
    static const unsigned char gif[] = {'G', 'I', 'F', '8', '9', 'a', 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0};
    static const char plain_pgm[] = "P2\n100000 100000\n65535\n";
    unsigned char bmp[54] = {'B', 'M'};
    bmp[10] = 54, bmp[14] = 40;              /* pixel offset, BITMAPINFOHEADER size */
    put_be32(bmp + 18, 0xA0860100);          /* width 100000, little-endian */
    put_be32(bmp + 22, 0xA0860100);          /* height 100000 */
    bmp[26] = 1, bmp[28] = 24;               /* planes, bits per pixel */
    const struct {
        const void *data;
        size_t n;
        const char *what;
    } cases[] = {{png, sizeof png, "PNG"}, {jpeg, sizeof jpeg, "JPEG"},
                 {pgm, sizeof pgm - 1, "PGM"}, {bmp, sizeof bmp, "BMP"},
                 {gif, sizeof gif, "GIF"}, {plain_pgm, sizeof plain_pgm - 1, "plain PGM"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        gs_child_result r;
        run_piped(&r, (const char *const[]){"-", tmp("huge.png"), NULL}, cases[i].data, cases[i].n, 1);
        ck_assert_msg(r.exited && r.code == 1, "%s header: not refused while the pipe stayed open (%s)",
                      cases[i].what, r.exited ? r.err : "killed at the time limit");
        ck_assert_msg(count_lines(r.err) == 1 && strstr(r.err, "--max-pixels"), "%s: %s",
                      cases[i].what, r.err);
        ck_assert(access(tmp("huge.png"), F_OK) != 0);
    }
}
END_TEST

/* A producer that stops half-way: one line naming the cause, no output, and an existing
 * output left as it was. */
START_TEST(truncated_pipe)
{
    char path[600], *data;
    snprintf(path, sizeof path, "%s/inputs/photo.png", golden);
    size_t n = load(path, &data);
    static const char prior[] = "previous contents";
    write_file(tmp("keep.png"), prior, strlen(prior));
    gs_child_result r;
    run_piped(&r, (const char *const[]){"--quiet", "-", tmp("keep.png"), NULL}, data, n / 2, 0);
    free(data);
    ck_assert_msg(r.exited && r.code == 1, "exit %d: %s", r.code, r.err);
    ck_assert_msg(count_lines(r.err) == 1 && strstr(r.err, "-: "), "%s", r.err);
    char buf[64] = "";
    ck_assert_uint_eq(read_file(tmp("keep.png"), buf, sizeof buf), strlen(prior));
    ck_assert_str_eq(buf, prior);
}
END_TEST

/* A consumer that reads a little and goes away (`gsmooth - | head -c 100`): one line
 * about the broken pipe, exit 1, not a silent death by SIGPIPE. */
START_TEST(reader_closes_stdout_early)
{
    const char *fifo = tmp("out.fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    gs_child child;
    gs_child_result r;
    /* A 1 MiB stored PNG (level 0): it outgrows the pipe's buffer, so EPIPE must come. */
    ck_assert_int_eq(gs_child_start(&child, gsmooth,
                                    (const char *const[]){"--quiet", "--png-level", "0",
                                                          tmp("big.pgm"), "-", NULL},
                                    NULL, fifo, &limits), 0);
    int fd = open(fifo, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    char head[100];
    ck_assert_int_gt(read(fd, head, sizeof head), 0);
    close(fd);
    ck_assert_int_eq(gs_child_wait(&child, &r), 0);
    ck_assert_msg(r.exited && r.code == 1, "want exit 1, got %s: %s",
                  r.exited ? "an exit" : "a signal", r.err);
    ck_assert_msg(count_lines(r.err) == 1 && strstr(r.err, "Broken pipe"), "%s", r.err);
}
END_TEST

/* A gray PGM large enough that its PNG outgrows any pipe buffer: 1024 x 1024 of noise. */
static void make_big_pgm(const char *path)
{
    enum { SIDE = 1024 };
    static unsigned char pgm[32 + SIDE * SIDE];
    int h = snprintf((char *)pgm, 32, "P5\n%d %d\n255\n", SIDE, SIDE);
    uint32_t seed = 12345;
    for (size_t i = 0; i < (size_t)SIDE * SIDE; ++i) {
        seed = seed * 1103515245u + 12345u;
        pgm[h + i] = (unsigned char)(seed >> 24);
    }
    write_file(path, pgm, (size_t)h + (size_t)SIDE * SIDE);
}

static void setup_big(void)
{
    setup();
    make_big_pgm(tmp("big.pgm"));
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s GSMOOTH GOLDEN_DIR DAMAGED_DIR\n", argv[0]);
        return 2;
    }
    gsmooth = argv[1], golden = argv[2], damaged = argv[3];
    signal(SIGPIPE, SIG_IGN); /* our writes into a pipe gsmooth stopped reading */
    Suite *s = suite_create("streams");
    TCase *tc = tcase_create("streams");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 4 * GS_STREAM_TIMEOUT_S);
    tcase_add_test(tc, every_format_through_a_pipe);
    tcase_add_test(tc, fifo_path_as_input);
    tcase_add_test(tc, huge_header_refused_before_the_body);
    tcase_add_test(tc, truncated_pipe);
    suite_add_tcase(s, tc);
    TCase *out = tcase_create("stdout");
    tcase_add_checked_fixture(out, setup_big, teardown);
    tcase_set_timeout(out, 4 * GS_STREAM_TIMEOUT_S);
    tcase_add_test(out, reader_closes_stdout_early);
    suite_add_tcase(s, out);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
