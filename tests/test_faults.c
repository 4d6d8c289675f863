/* test_faults.c: Check suite for faults outside the input. */
/* A full disk, a missing or read-only output directory, a full stdout, SIGINT/SIGTERM
 * mid-file and mid-batch, and plugins that are broken, unavailable or fail halfway. */

#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "test_files.h"
#include "plugin_loader.h" /* GS_AUTO_CUDA_WORK_PER_CORE */
#include "run_limited.h"
#include "scratch_dir.h"
#include "usable_cpus.h"

/*
 * After every fault: exit 1 (or death by the signal that was sent), exactly one error
 * line naming the file at fault, no output and no temporary file ('.'-prefixed) in the
 * output directory, and an existing output untouched byte for byte.
 *
 * File-system faults need mounts: the suite moves into a mount namespace of its own
 * (unshare, as root), so its tmpfs mounts vanish with it whatever happens. Where that is
 * not allowed (an unprivileged container), those cases print SKIPPED and the reason.
 */

/* Size of the tmpfs that plays a full disk: smaller than any output below, larger than
 * the existing output it holds. */
#define GS_FULL_DISK_SIZE "size=64k"
/* The noise image written to the full disk: 512 x 512 random samples do not compress, so
 * every output format is about 256 KiB, four times the disk. */
#define GS_NOISE_SIDE 512
/* The big image a signal interrupts: 8000 x 8000 with 2000 passes is over a minute of
 * computation on 2 cores, so the signal always lands mid-file. */
#define GS_BIG_SIDE 8000
#define GS_BIG_ITERS "2000"
/* Time the run is given before the signal, once its temporary file exists: it is then
 * decoding, computing and encoding at once. */
#define GS_SIGNAL_DELAY_MS 200
/* How long a temporary file may take to appear, and a signalled run to end. */
#define GS_APPEAR_TIMEOUT_MS 5000
/* ... and this much more for each file that must finish first */
#define GS_FINISH_MS 100
#define GS_DEATH_TIMEOUT_MS 10000
/* Polling interval while waiting for either. */
#define GS_POLL_MS 10
/* An auto run big enough that auto would pick CUDA: cores x GS_AUTO_CUDA_WORK_PER_CORE
 * pixel-passes (plugin_loader.h), made of a 1024 x 1024 image (2^20 pixels) and as many
 * passes as that takes (256 per core today: about 0.1 s of CPU work per core). */
#define GS_AUTO_SIDE 1024
#define GS_AUTO_PIXELS ((uint64_t)GS_AUTO_SIDE * GS_AUTO_SIDE)
/* Wall-clock limit of any one gsmooth run that is not meant to be interrupted. */
#define GS_RUN_TIMEOUT_S 60
/* Check's limit per test: generating the 64 MB image and a few interrupted runs. */
#define GS_FAULTS_TEST_TIMEOUT_S 120
/* The PNG trailer: an IEND chunk (length 0, type, CRC), the last 12 bytes of a complete file. */
static const unsigned char png_iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};

static const char *gsmooth;        /* binary under test */
static const char *golden;         /* tests/golden directory */
static const char *wrong_abi_so;   /* the example plugin claiming ABI major 2 */
static const char *no_entry_so;    /* shared object without the entry symbol */
static const char *unavailable_so; /* "cuda" plugin whose probe says no */
static const char *strip_fault_so; /* plugin failing on its third strip */

static char suite_dir[PATH_MAX]; /* holds everything below; main removes it */
static char inputs[PATH_MAX];    /* generated inputs, shared by all tests */
static char scratch[PATH_MAX];   /* per-test temporary directory */
static int can_mount;        /* the suite has its own mount namespace */
static char no_mount_why[256]; /* why not */
static const char prior[] = "previous contents: must survive a failed run\n";

static const char *tmp(const char *name) { return gs_test_path_in(scratch, name); }
static const char *gen(const char *name) { return gs_test_path_in(inputs, name); }
static const char *golden_input(const char *name)
{
    return gs_test_path_in(gs_test_path_in(golden, "inputs"), name);
}

/* ---- files ---- */

static void assert_prior_kept(const char *p)
{
    char buf[sizeof prior + 16];
    size_t n = read_file(p, buf, sizeof buf);
    ck_assert_msg(n == strlen(prior) && memcmp(buf, prior, n) == 0,
                  "the existing output %s was changed (%zu bytes now)", p, n);
}

/* Entries of `dir` other than those in `allowed` (NULL-terminated; may be NULL). */
static int strays(const char *dir, const char *const *allowed)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int ok = 0;
        for (const char *const *a = allowed; a && *a; ++a) ok |= !strcmp(*a, e->d_name);
        if (!ok) {
            fprintf(stderr, "test_faults: stray %s/%s%s\n", dir, e->d_name,
                    e->d_name[0] == '.' ? " (a temporary file)" : "");
            ++n;
        }
    }
    closedir(d);
    return n;
}

/* Entries of `dir`: temporary files (a '.' name) and finished ones. */
static void count_entries(const char *dir, int *temps, int *finished)
{
    *temps = *finished = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        ++*(e->d_name[0] == '.' ? temps : finished);
    }
    closedir(d);
}

/* A temporary file exists in `dir`, and at least `finished` finished ones. */
static int has_temp_after(const char *dir, int finished)
{
    int t, f;
    count_entries(dir, &t, &f);
    return t > 0 && f >= finished;
}

/* A PNG that was written to the end: signature first, IEND last. */
static int png_complete(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    unsigned char head[8], tail[sizeof png_iend];
    int ok = fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, "\x89PNG", 4) &&
             fseek(f, -(long)sizeof tail, SEEK_END) == 0 &&
             fread(tail, 1, sizeof tail, f) == sizeof tail && !memcmp(tail, png_iend, sizeof tail);
    fclose(f);
    return ok;
}

/* ---- a PNG writer for the generated inputs (8-bit gray, filter 0, zlib level 1); it
 * runs before any test, so it reports failure by its return value, not by ck_assert ---- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = v >> 24, p[1] = (v >> 16) & 255, p[2] = (v >> 8) & 255, p[3] = v & 255;
}

static int png_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len)
{
    unsigned char head[8], tail[4];
    put_be32(head, len);
    memcpy(head + 4, type, 4);
    put_be32(tail, (uint32_t)crc32(crc32(0, (const Bytef *)type, 4), data, len));
    return fwrite(head, 1, 8, f) == 8 && (len == 0 || fwrite(data, 1, len, f) == len) &&
                   fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

/* `noisy`: random samples (incompressible); else a gradient (compresses well). Returns 0,
 * or -1 with errno-style failure printed. */
static int write_gray_png(const char *p, uint32_t side, int noisy)
{
    int rc = -1, z_open = 0;
    z_stream z;
    unsigned char ihdr[13] = {0}, *row = NULL, *out = NULL;
    FILE *f = fopen(p, "wb");
    if (!f || fwrite("\x89PNG\r\n\x1a\n", 1, 8, f) != 8) goto cleanup;
    put_be32(ihdr, side);
    put_be32(ihdr + 4, side);
    ihdr[8] = 8; /* bit depth; colour type 0 (gray), no interlace */
    if (png_chunk(f, "IHDR", ihdr, sizeof ihdr) != 0) goto cleanup;

    memset(&z, 0, sizeof z);
    if (deflateInit(&z, 1) != Z_OK) goto cleanup;
    z_open = 1;
    size_t cap = deflateBound(&z, (uLong)side + 1);
    row = malloc((size_t)side + 1);
    out = malloc(cap);
    if (!row || !out) goto cleanup;
    uint32_t seed = 12345;
    for (uint32_t y = 0; y < side; ++y) {
        row[0] = 0;
        for (uint32_t x = 0; x < side; ++x) {
            seed = seed * 1103515245u + 12345u; /* any fixed sequence will do */
            row[1 + x] = noisy ? (unsigned char)(seed >> 24) : (unsigned char)(x + y);
        }
        z.next_in = row;
        z.avail_in = side + 1;
        const int flush = y + 1 == side ? Z_FINISH : Z_NO_FLUSH;
        int zrc;
        do {
            z.next_out = out;
            z.avail_out = (uInt)cap;
            zrc = deflate(&z, flush);
            if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR) goto cleanup;
            uint32_t have = (uint32_t)(cap - z.avail_out);
            if (have && png_chunk(f, "IDAT", out, have) != 0) goto cleanup;
        } while (z.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END));
    }
    if (png_chunk(f, "IEND", NULL, 0) != 0) goto cleanup;
    rc = 0;

cleanup:
    if (z_open) deflateEnd(&z);
    free(row);
    free(out);
    if (f && fclose(f) != 0) rc = -1;
    if (rc != 0) fprintf(stderr, "test_faults: cannot write %s\n", p);
    return rc;
}

/* ---- running gsmooth ---- */

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; ++s) n += *s == '\n';
    return n;
}

static void run(gs_child_result *r, const char *const *args, const char *stdout_path)
{
    gs_child c;
    gs_limits lim = {0, GS_RUN_TIMEOUT_S};
    ck_assert_int_eq(gs_child_start(&c, gsmooth, args, NULL, stdout_path, &lim), 0);
    ck_assert_int_eq(gs_child_wait(&c, r), 0);
}

/* Exit 1 and exactly one stderr line mentioning each needle (NULL-terminated). */
static void assert_one_line_failure(const gs_child_result *r, const char *const *needles)
{
    char how[128];
    ck_assert_msg(r->exited && r->code == 1, "want exit 1, got %s; stderr: %s",
                  gs_child_describe(r, how, sizeof how), r->err);
    ck_assert_msg(count_lines(r->err) == 1, "want one stderr line, got %d: %s",
                  count_lines(r->err), r->err);
    for (const char *const *n = needles; *n; ++n)
        ck_assert_msg(strstr(r->err, *n) != NULL, "stderr lacks '%s': %s", *n, r->err);
}

/* ---- mounts ---- */

static int mount_tmpfs(const char *dir, const char *options, int read_only)
{
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    if (mount("tmpfs", dir, "tmpfs", 0, options) != 0) {
        snprintf(no_mount_why, sizeof no_mount_why, "mount -t tmpfs %s: %s", dir, strerror(errno));
        return -1;
    }
    if (read_only) {
        write_file(gs_test_path_in(dir, "keep.png"), prior, strlen(prior));
        if (mount("tmpfs", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, options) != 0) {
            snprintf(no_mount_why, sizeof no_mount_why, "remount ro %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    return 0;
}

#define SKIP_WITHOUT_MOUNTS(what)                                                      \
    do {                                                                               \
        if (!can_mount) {                                                              \
            printf("test_faults: SKIPPED %s: %s\n", what, no_mount_why);               \
            fflush(stdout);                                                            \
            return;                                                                    \
        }                                                                              \
    } while (0)

/* ---- fixtures ---- */

static void setup(void)
{
    ck_assert_int_eq(gs_test_make_dir(scratch, sizeof scratch, suite_dir, "test-"), 0);
}

/* A forked test that fails ends before its teardown: main removes suite_dir as well (its
 * mounts went with the test's process, or go with the namespace). */
static void teardown(void)
{
    static const char *const mounts[] = {"full", "ro"};
    for (size_t i = 0; i < sizeof mounts / sizeof *mounts; ++i)
        umount2(tmp(mounts[i]), MNT_DETACH); /* most tests mounted nothing */
    gs_test_remove_tree(scratch);
}

/* ---- output faults ---- */

START_TEST(full_disk)
{
    SKIP_WITHOUT_MOUNTS("full disk");
    if (mount_tmpfs(tmp("full"), GS_FULL_DISK_SIZE, 0) != 0) {
        can_mount = 0;
        SKIP_WITHOUT_MOUNTS("full disk");
    }
    const char *full = tmp("full");
    write_file(gs_test_path_in(full, "keep.png"), prior, strlen(prior));
    const char *formats[] = {"keep.png", "new.pgm", "new.bmp", "new.npy"};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; ++i) {
        gs_child_result r;
        const char *out = gs_test_path_in(full, formats[i]);
        int integral = strstr(formats[i], ".npy") != NULL;
        run(&r, integral ? ARGS("--quiet", "--integral", gen("noise.png"), out)
                         : ARGS("--quiet", gen("noise.png"), out), NULL);
        assert_one_line_failure(&r, ARGS(formats[i]));
        assert_prior_kept(gs_test_path_in(full, "keep.png"));
        ck_assert_int_eq(strays(full, ARGS("keep.png")), 0);
    }
    /* Batch: the file fails, the batch says so, nothing is left. */
    gs_child_result r;
    run(&r, ARGS("--quiet", "-o", full, gen("noise.png")), NULL);
    ck_assert_msg(r.exited && r.code == 1, "batch onto a full disk: %s", r.err);
    ck_assert_msg(strstr(r.err, "noise.png") != NULL, "batch error lacks the file: %s", r.err);
    ck_assert_int_eq(strays(full, ARGS("keep.png")), 0);
}
END_TEST

START_TEST(read_only_directory)
{
    SKIP_WITHOUT_MOUNTS("read-only output directory");
    if (mount_tmpfs(tmp("ro"), GS_FULL_DISK_SIZE, 1) != 0) {
        can_mount = 0;
        SKIP_WITHOUT_MOUNTS("read-only output directory");
    }
    const char *ro = tmp("ro");
    gs_child_result r;
    run(&r, ARGS("--quiet", golden_input("noise.png"), gs_test_path_in(ro, "keep.png")), NULL);
    assert_one_line_failure(&r, ARGS("keep.png"));
    assert_prior_kept(gs_test_path_in(ro, "keep.png"));
    run(&r, ARGS("--quiet", golden_input("noise.png"), gs_test_path_in(ro, "new.png")), NULL);
    assert_one_line_failure(&r, ARGS("new.png"));
    run(&r, ARGS("--quiet", "-o", ro, golden_input("noise.png")), NULL);
    ck_assert_msg(r.exited && r.code == 1, "batch into a read-only directory: %s", r.err);
    ck_assert_int_eq(strays(ro, ARGS("keep.png")), 0);
}
END_TEST

START_TEST(missing_output_directory)
{
    gs_child_result r;
    run(&r, ARGS("--quiet", golden_input("noise.png"), tmp("no-such-dir/o.png")), NULL);
    assert_one_line_failure(&r, ARGS("no-such-dir"));
    ck_assert_int_eq(strays(scratch, NULL), 0);
    /* A batch makes its directory, as mkdir -p. */
    run(&r, ARGS("--quiet", "-o", tmp("no-such-dir"), golden_input("noise.png")), NULL);
    ck_assert_msg(r.exited && r.code == 0, "batch into a missing directory: %s", r.err);
    ck_assert_int_eq(strays(tmp("no-such-dir"), ARGS("noise.png")), 0);
}
END_TEST

/* A PNG to standard output when standard output is full: a write error, not a success. */
START_TEST(stdout_full)
{
    gs_child_result r;
    run(&r, ARGS("--quiet", gen("noise.png"), "-"), "/dev/full");
    assert_one_line_failure(&r, ARGS("gsmooth: -: "));
}
END_TEST

/* ---- signals ---- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) continue;
}

/* Start gsmooth, wait for a temporary file in `dir` once `finished` outputs are there, let
 * it run GS_SIGNAL_DELAY_MS more, send `sig`, and wait for it to end. */
static void interrupt_run_after(const char *const *args, const char *dir, int finished, int sig,
                                gs_child_result *r)
{
    gs_child c;
    ck_assert_int_eq(gs_child_start(&c, gsmooth, args, NULL, NULL, NULL), 0);
    /* the files before it get GS_FINISH_MS each on top (sanitizer builds are slow) */
    const int appear_ms = GS_APPEAR_TIMEOUT_MS + finished * GS_FINISH_MS;
    int waited = 0;
    while (!has_temp_after(dir, finished) && waited < appear_ms)
        sleep_ms(GS_POLL_MS), waited += GS_POLL_MS;
    int appeared = has_temp_after(dir, finished);
    sleep_ms(GS_SIGNAL_DELAY_MS);
    ck_assert_int_eq(kill(c.pid, sig), 0);
    for (waited = 0; waited < GS_DEATH_TIMEOUT_MS; waited += GS_POLL_MS) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        /* WNOWAIT: only look; gs_child_wait reaps it and collects its output. */
        if (waitid(P_PID, (id_t)c.pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid) break;
        sleep_ms(GS_POLL_MS);
    }
    if (waited >= GS_DEATH_TIMEOUT_MS) kill(c.pid, SIGKILL);
    ck_assert_int_eq(gs_child_wait(&c, r), 0);
    ck_assert_msg(waited < GS_DEATH_TIMEOUT_MS, "gsmooth ignored signal %d for %d ms", sig,
                  GS_DEATH_TIMEOUT_MS);
    ck_assert_msg(appeared, "no temporary file appeared in %s within %d ms: nothing to test", dir,
                  appear_ms);
    char how[128];
    ck_assert_msg(!(r->exited && r->code == 0), "an interrupted run reported success");
    ck_assert_msg(!r->exited || r->code == 128 + sig || r->code == 1,
                  "interrupted run ended with %s", gs_child_describe(r, how, sizeof how));
    ck_assert_msg(r->exited || r->signal == sig, "interrupted run ended with %s",
                  gs_child_describe(r, how, sizeof how));
}

static void interrupt_run(const char *const *args, const char *dir, int sig, gs_child_result *r)
{
    interrupt_run_after(args, dir, 0, sig, r);
}

static void signal_mid_file(int sig)
{
    const char *dir = tmp("sig");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    write_file(gs_test_path_in(dir, "keep.png"), prior, strlen(prior));
    gs_child_result r;
    interrupt_run(ARGS("--quiet", "--iters", GS_BIG_ITERS, gen("big.png"), gs_test_path_in(dir, "keep.png")),
                  dir, sig, &r);
    assert_prior_kept(gs_test_path_in(dir, "keep.png"));
    ck_assert_int_eq(strays(dir, ARGS("keep.png")), 0);
}

START_TEST(sigint_mid_file) { signal_mid_file(SIGINT); }
END_TEST

START_TEST(sigterm_mid_file) { signal_mid_file(SIGTERM); }
END_TEST

/* Two small files finish, the big one is interrupted: the small outputs are whole, the
 * big one and every temporary file are gone. */
static void signal_mid_batch(int sig)
{
    const char *dir = tmp("batch");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    gs_child_result r;
    interrupt_run(ARGS("--quiet", "--iters", GS_BIG_ITERS, "--jobs", "1", "-o", dir,
                       golden_input("noise.png"), golden_input("gradient.png"), gen("big.png")),
                  dir, sig, &r);
    ck_assert_int_eq(strays(dir, ARGS("noise.png", "gradient.png")), 0);
    const char *small[] = {"noise.png", "gradient.png"};
    for (size_t i = 0; i < sizeof small / sizeof *small; ++i) {
        const char *p = gs_test_path_in(dir, small[i]);
        ck_assert_msg(access(p, F_OK) != 0 || png_complete(p), "%s is a partial file", p);
    }
}

START_TEST(sigint_mid_batch) { signal_mid_batch(SIGINT); }
END_TEST

START_TEST(sigterm_mid_batch) { signal_mid_batch(SIGTERM); }
END_TEST

/* More files than the signal cleanup table has slots (256, io/temp_files.c) finish, then the
 * big one is interrupted: each finished file gave its slot back, so the big one's temporary
 * file is still in the table and the handler removes it. */
#define GS_MANY_FILES 300
START_TEST(sigint_after_more_files_than_slots)
{
    /* gs_test_path_in's buffers are a ring of 16: keep these three in our own */
    char dir[PATH_MAX], in[PATH_MAX], list[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", tmp("many"));
    snprintf(in, sizeof in, "%s", tmp("many_in"));
    snprintf(list, sizeof list, "%s", tmp("many.list"));
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(mkdir(in, 0755), 0);
    char small[128];
    const size_t n = read_file(golden_input("gray2.png"), small, sizeof small);
    ck_assert_uint_gt(n, 0);
    FILE *f = fopen(list, "w");
    ck_assert_ptr_nonnull(f);
    static char names[GS_MANY_FILES][16];
    const char *allowed[GS_MANY_FILES + 1];
    for (int i = 0; i < GS_MANY_FILES; ++i) {
        snprintf(names[i], sizeof names[i], "n%03d.png", i);
        allowed[i] = names[i];
        write_file(gs_test_path_in(in, names[i]), small, n);
        fprintf(f, "%s\n", gs_test_path_in(in, names[i]));
    }
    allowed[GS_MANY_FILES] = NULL;
    fprintf(f, "%s\n", gen("big.png"));
    ck_assert_int_eq(fclose(f), 0);
    gs_child_result r;
    interrupt_run_after(ARGS("--quiet", "--iters", GS_BIG_ITERS, "--jobs", "1", "-o", dir,
                             "--files-from", list),
                        dir, GS_MANY_FILES, SIGINT, &r);
    ck_assert_int_eq(strays(dir, allowed), 0);
}
END_TEST

/* ---- plugin faults ---- */

/* --backend PLUGIN on a run with an existing output: one line naming the plugin file
 * and the cause; the output untouched, nothing left. */
static void check_refused_plugin(const char *plugin, const char *const *needles)
{
    write_file(tmp("keep.png"), prior, strlen(prior));
    gs_child_result r;
    run(&r, ARGS("--quiet", "--backend", plugin, golden_input("noise.png"), tmp("keep.png")), NULL);
    assert_one_line_failure(&r, needles);
    assert_prior_kept(tmp("keep.png"));
    ck_assert_int_eq(strays(scratch, ARGS("keep.png", "x.so")), 0);
}

START_TEST(plugin_not_a_shared_object)
{
    static const char text[] = "this is a text file, not an ELF object\n";
    write_file(tmp("x.so"), text, strlen(text));
    check_refused_plugin(tmp("x.so"), ARGS("x.so"));
}
END_TEST

START_TEST(plugin_missing_entry) { check_refused_plugin(no_entry_so, ARGS("no_entry", "gs_plugin_entry")); }
END_TEST

START_TEST(plugin_wrong_abi) { check_refused_plugin(wrong_abi_so, ARGS("abi_major2", "2.0")); }
END_TEST

START_TEST(plugin_unavailable)
{
    check_refused_plugin(unavailable_so, ARGS("cuda", "no NVIDIA driver (simulated"));
}
END_TEST

/* The kernel fails on its third strip, after two strips went to the encoder. */
START_TEST(plugin_fails_mid_image)
{
    check_refused_plugin(strip_fault_so, ARGS("noise.png", "simulated device fault on strip"));
    /* The same in batch mode: each file fails alone, the batch reports it, nothing left. */
    const char *dir = tmp("out");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    gs_child_result r;
    run(&r, ARGS("--quiet", "--backend", strip_fault_so, "-o", dir, golden_input("noise.png"),
                 golden_input("gray16.png")), NULL);
    ck_assert_msg(r.exited && r.code == 1, "batch with a failing backend: %s", r.err);
    ck_assert_msg(strstr(r.err, "simulated device fault") != NULL, "no cause given: %s", r.err);
    ck_assert_int_eq(strays(dir, NULL), 0);
}
END_TEST

/* auto with an unavailable "cuda" on a job big enough for CUDA: the CPU does it, and one
 * note says why, once per run (also in batch mode). */
START_TEST(auto_falls_back_to_cpu)
{
    long cores = (long)gs_usable_cpus();
    uint64_t min_work = gs_auto_cuda_min_work();
    uint64_t iters = (min_work + GS_AUTO_PIXELS - 1) / GS_AUTO_PIXELS;
    if (iters > GS_PLUGIN_MAX_ITERS) {
        printf("test_faults: SKIPPED auto fallback: %ld cores need %llu passes, over --iters' "
               "limit\n", cores, (unsigned long long)iters);
        fflush(stdout);
        return;
    }
    char iters_arg[32];
    snprintf(iters_arg, sizeof iters_arg, "%llu", (unsigned long long)iters);
    const char *plugins = tmp("plugins");
    ck_assert_int_eq(mkdir(plugins, 0755), 0);
    ck_assert_int_eq(symlink(unavailable_so, gs_test_path_in(plugins, "fault_cuda.so")), 0);
    gs_child_result r;
    run(&r, ARGS("--plugin-dir", plugins, "--backend", "auto", "--iters", iters_arg,
                 gen("auto.png"), tmp("auto_out.png")), NULL);
    ck_assert_msg(r.exited && r.code == 0, "auto did not fall back: %s", r.err);
    ck_assert_msg(count_lines(r.err) == 1 && strstr(r.err, "note") &&
                      strstr(r.err, "no NVIDIA driver (simulated"),
                  "want one note with the probe's reason, got: %s", r.err);
    ck_assert(png_complete(tmp("auto_out.png")));

    const char *dir = tmp("batch");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(symlink(gen("auto.png"), tmp("auto2.png")), 0);
    run(&r, ARGS("--plugin-dir", plugins, "--backend", "auto", "--iters", iters_arg, "-o", dir,
                 gen("auto.png"), tmp("auto2.png")), NULL);
    ck_assert_msg(r.exited && r.code == 0, "auto batch did not fall back: %s", r.err);
    int notes = 0;
    for (const char *p = r.err; (p = strstr(p, "no NVIDIA driver (simulated")); ++p) ++notes;
    ck_assert_msg(notes == 1, "want the fallback note once per run, got %d: %s", notes, r.err);
}
END_TEST

/* Junk in a plugin directory (a text file, a foreign ABI, no entry symbol) does not stop
 * auto from finding the CPU, and prints nothing. */
START_TEST(junk_plugins_ignored)
{
    const char *plugins = tmp("plugins");
    ck_assert_int_eq(mkdir(plugins, 0755), 0);
    static const char text[] = "not an ELF object\n";
    write_file(gs_test_path_in(plugins, "text.so"), text, strlen(text));
    ck_assert_int_eq(symlink(wrong_abi_so, gs_test_path_in(plugins, "abi_major2.so")), 0);
    ck_assert_int_eq(symlink(no_entry_so, gs_test_path_in(plugins, "no_entry.so")), 0);
    gs_child_result r;
    run(&r, ARGS("--plugin-dir", plugins, "--backend", "auto", golden_input("noise.png"),
                 tmp("o.png")), NULL);
    ck_assert_msg(r.exited && r.code == 0 && r.err[0] == '\0', "junk plugins disturbed the run: %s",
                  r.err);
    /* ... and the CPU it found gives the bytes of a run without the junk. */
    run(&r, ARGS("--backend", "cpu", golden_input("noise.png"), tmp("ref.png")), NULL);
    ck_assert_msg(r.exited && r.code == 0, "reference run: %s", r.err);
    static char a[1 << 17], b[1 << 17];
    size_t na = read_file(tmp("o.png"), a, sizeof a), nb = read_file(tmp("ref.png"), b, sizeof b);
    ck_assert_msg(na > 8 && na == nb && memcmp(a, b, na) == 0, "output differs from a plain CPU run");
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: %s GSMOOTH GOLDEN_DIR WRONG_ABI_SO NO_ENTRY_SO FAULT_UNAVAILABLE_SO "
                        "FAULT_STRIP_SO\n", argv[0]);
        return 2;
    }
    /* Absolute paths: some tests link to the plugins from another directory. */
    static char resolved[7][PATH_MAX];
    for (int i = 1; i < argc; ++i) {
        if (!realpath(argv[i], resolved[i])) {
            fprintf(stderr, "test_faults: %s: %s\n", argv[i], strerror(errno));
            return 2;
        }
    }
    gsmooth = resolved[1], golden = resolved[2], wrong_abi_so = resolved[3];
    no_entry_so = resolved[4], unavailable_so = resolved[5], strip_fault_so = resolved[6];

    /* A private mount namespace: tmpfs mounts made here are invisible outside and vanish
     * with this process, even if it crashes. */
    if (unshare(CLONE_NEWNS) != 0)
        snprintf(no_mount_why, sizeof no_mount_why, "cannot get a mount namespace (unshare: %s; "
                 "needs root or CAP_SYS_ADMIN)", strerror(errno));
    else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        snprintf(no_mount_why, sizeof no_mount_why, "cannot make mounts private: %s", strerror(errno));
    else
        can_mount = 1;

    /* Inputs shared by every test, made once: noise for the full disk, a 64 MB image for
     * the signals, an image big enough for auto to want CUDA. */
    if (gs_test_make_dir(suite_dir, sizeof suite_dir, NULL, "gsmooth-faults-") != 0) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    snprintf(inputs, sizeof inputs, "%s", gs_test_path_in(suite_dir, "inputs"));
    if (mkdir(inputs, 0755) != 0) {
        perror("mkdir");
        return EXIT_FAILURE;
    }
    if (write_gray_png(gen("noise.png"), GS_NOISE_SIDE, 1) != 0 ||
        write_gray_png(gen("big.png"), GS_BIG_SIDE, 0) != 0 ||
        write_gray_png(gen("auto.png"), GS_AUTO_SIDE, 0) != 0) {
        gs_test_remove_tree(suite_dir);
        return EXIT_FAILURE;
    }

    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, GS_FAULTS_TEST_TIMEOUT_S);
    tcase_add_test(tc, full_disk);
    tcase_add_test(tc, read_only_directory);
    tcase_add_test(tc, missing_output_directory);
    tcase_add_test(tc, stdout_full);
    tcase_add_test(tc, sigint_mid_file);
    tcase_add_test(tc, sigterm_mid_file);
    tcase_add_test(tc, sigint_mid_batch);
    tcase_add_test(tc, sigterm_mid_batch);
    tcase_add_test(tc, sigint_after_more_files_than_slots);
    tcase_add_test(tc, plugin_not_a_shared_object);
    tcase_add_test(tc, plugin_missing_entry);
    tcase_add_test(tc, plugin_wrong_abi);
    tcase_add_test(tc, plugin_unavailable);
    tcase_add_test(tc, plugin_fails_mid_image);
    tcase_add_test(tc, auto_falls_back_to_cpu);
    tcase_add_test(tc, junk_plugins_ignored);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    /* files left behind fail the run: a suite cleans up after itself */
    const int left = gs_test_remove_tree(suite_dir) != 0;
    return failed || left ? EXIT_FAILURE : EXIT_SUCCESS;
}
