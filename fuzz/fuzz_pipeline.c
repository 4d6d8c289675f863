/* fuzz_pipeline.c: libFuzzer entry point for gsmooth's whole pipeline. */
/* Each input runs decode -> CPU backend -> atomic encode in every mode and output format,
 * and the error contract is checked after each run. */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gsmooth/gsmooth_plugin.h"
#include "image_io.h"
#include "pipeline.h"

/*
 * The harness is also built without libFuzzer, by tests/test_fuzz_regressions.c, which
 * calls LLVMFuzzerTestOneInput on every saved crash and damaged file; so it only uses
 * gsmooth's libraries, the CPU plugin compiled in, and plain POSIX.
 *
 * A contract violation (a failed run that left a file behind or gave no one-line reason,
 * a successful run without its output, an output gsmooth cannot read back, running out of
 * memory on a small image) calls abort(),
 * which libFuzzer reports as a crash with the input saved.
 */

/* --max-pixels of every run. 2^20 pixels is 16 MiB at the worst (stb_image's 16-bit RGBA
 * buffer), so no input can make the fuzzer spend its time in legitimate huge
 * allocations, and any allocation far above that is a bug that -malloc_limit_mb catches. */
#define GS_FUZZ_MAX_PIXELS (UINT64_C(1) << 20)
/* Passes of the smoothing run: two exercise the double buffering; more only cost time. */
#define GS_FUZZ_ITERS 2
/* Pipe capacity asked for, so a whole input fits before the reader starts (the default
 * /proc/sys/fs/pipe-max-size); larger inputs use the memfd path only. */
#define GS_FUZZ_PIPE_BYTES (1 << 20)
/* Output formats the smoothing run cycles through (by input length, so one input always
 * takes the same path). */
static const char *const smooth_exts[] = {"png", "pgm", "bmp", "tga", "jpg", "tif"};
#define GS_FUZZ_SMOOTH_EXTS (sizeof smooth_exts / sizeof smooth_exts[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CPU plugin's entry point, compiled into this program. */
const gs_plugin_desc *gs_plugin_entry(void);

/* How a run gets its input: a memfd is a regular file (the streaming readers, stb from a
 * FILE); a pipe is read whole into memory first (the stdin path, stb from memory). */
typedef enum feed { FEED_FILE, FEED_PIPE } feed;

typedef struct fuzz_run {
    gs_mode mode;           /* what is computed */
    uint32_t iters;         /* smoothing passes */
    gs_depth_choice depth;  /* --depth */
    const char *ext;        /* output extension; NULL: the smoothing cycle */
    feed how;               /* input path */
    uint32_t axes;          /* --axis (GS_AXIS_* bits) */
} fuzz_run;

static const gs_plugin_desc *cpu;     /* the backend */
static gs_plugin_instance *instance;  /* one instance for the whole process */
static int memfd = -1;                /* holds the current input */
static char out_dir[64];              /* empty between runs */

static void remove_out_dir(void);

/* Report a contract violation and abort (libFuzzer saves the input); the output
 * directory goes first, so a replay of many findings leaves nothing behind. */
static void fatal(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_pipeline: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    remove_out_dir();
    abort();
}

static gs_status select_cpu(void *ctx, uint32_t ops, uint64_t work, const gs_plugin_desc **backend,
                            gs_plugin_instance **inst, char *err, size_t err_size)
{
    (void)ctx, (void)ops, (void)work, (void)err, (void)err_size;
    *backend = cpu;
    *inst = instance;
    return GS_OK;
}

/* Empty and remove out_dir (at exit, or before an abort). */
static void remove_out_dir(void)
{
    DIR *d = out_dir[0] ? opendir(out_dir) : NULL;
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    rmdir(out_dir);
}

static void init_once(void)
{
    if (cpu) return;
    cpu = gs_plugin_entry();
    char msg[256] = "";
    /* One worker thread: the instance's threads add nothing but noise to coverage. */
    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 1, -1, GS_MEMORY_HOST};
    if (cpu->create(&cfg, &instance, msg, sizeof msg) != GS_PLUGIN_OK) fatal("cpu create", msg);
    memfd = memfd_create("gsmooth-fuzz-input", MFD_CLOEXEC);
    if (memfd < 0) fatal("memfd_create", strerror(errno));
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(out_dir, sizeof out_dir, "%s/gsmooth-fuzz-XXXXXX", base);
    if (!mkdtemp(out_dir)) fatal("mkdtemp", strerror(errno));
    atexit(remove_out_dir);
}

/* Entries of out_dir other than `allowed` (may be NULL); removes them all. */
static int leftovers(const char *allowed, char *first, size_t first_size)
{
    DIR *d = opendir(out_dir);
    if (!d) fatal("opendir", strerror(errno));
    int n = 0;
    struct dirent *e;
    first[0] = '\0';
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!(allowed && !strcmp(e->d_name, allowed)) && n++ == 0)
            snprintf(first, first_size, "%s", e->d_name);
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    return n;
}

/* What gsmooth wrote, gsmooth must read back whole. */
static void check_readback(const char *path)
{
    gs_reader *reader = NULL;
    gs_image_info info;
    char msg[GS_ERR_SIZE];
    if (gs_reader_open(path, GS_FUZZ_MAX_PIXELS, &reader, &info, msg, sizeof msg) != GS_OK)
        fatal("an output gsmooth wrote does not read back", msg);
    size_t stride = (size_t)info.width * (info.bits / 8);
    void *row = malloc(stride);
    if (!row) fatal("malloc", NULL);
    for (uint32_t y = 0; y < info.height; ++y)
        if (gs_reader_read_rows(reader, row, stride, 1, msg, sizeof msg) != GS_OK)
            fatal("an output gsmooth wrote does not read back", msg);
    free(row);
    gs_reader_close(reader);
}

/* The input as a path: /proc/self/fd/N of the memfd, or of a pipe holding all of it. */
static int input_path(const uint8_t *data, size_t size, feed how, char *path, size_t path_size,
                      int *pipe_rd)
{
    *pipe_rd = -1;
    if (how == FEED_PIPE) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) fatal("pipe2", strerror(errno));
        fcntl(fds[1], F_SETPIPE_SZ, GS_FUZZ_PIPE_BYTES);
        int cap = fcntl(fds[1], F_GETPIPE_SZ);
        if (cap > 0 && size <= (size_t)cap) {
            if (size && write(fds[1], data, size) != (ssize_t)size) fatal("pipe write", strerror(errno));
            close(fds[1]); /* the reader sees end of input after the data */
            *pipe_rd = fds[0];
            snprintf(path, path_size, "/proc/self/fd/%d", fds[0]);
            return 0;
        }
        close(fds[0]), close(fds[1]); /* too big for the pipe: use the file */
    }
    if (ftruncate(memfd, 0) != 0) fatal("ftruncate", strerror(errno));
    if (size && pwrite(memfd, data, size, 0) != (ssize_t)size) fatal("pwrite", strerror(errno));
    snprintf(path, path_size, "/proc/self/fd/%d", memfd);
    return 0;
}

static void run_one(const uint8_t *data, size_t size, const fuzz_run *r)
{
    gs_job job = {.work = {r->mode, r->iters, r->axes, r->depth, GS_FUZZ_MAX_PIXELS},
                  .encode = gs_encode_settings_make(-1, 1),
                  .select = select_cpu};

    char in[64], out[128], name[16], err[GS_ERR_SIZE] = "", stray[256];
    const char *ext = r->ext ? r->ext : smooth_exts[size % GS_FUZZ_SMOOTH_EXTS];
    snprintf(name, sizeof name, "out.%s", ext);
    snprintf(out, sizeof out, "%s/%s", out_dir, name);
    int pipe_rd;
    input_path(data, size, r->how, in, sizeof in, &pipe_rd);

    gs_phase_times times;
    gs_status rc = gs_pipeline_run(&job, in, out, &times, NULL, err, sizeof err);
    if (pipe_rd >= 0) close(pipe_rd);

    if ((int)rc < 0 || rc >= GS_ERR_COUNT) fatal("status out of range", NULL);
    if (rc == GS_OK) {
        if (access(out, F_OK) != 0) fatal("success without an output", out);
        if (strcmp(ext, "npy") != 0) check_readback(out);
        if (leftovers(name, stray, sizeof stray)) fatal("success left a stray file", stray);
        return;
    }
    if (rc == GS_ERR_USAGE) fatal("a run with valid options gave a usage error", err);
    /* Inputs are held to 2^20 pixels: a few tens of MiB at most. Running out of memory
     * (under the replay's address-space limit, or a NULL from an allocator limit) means an
     * allocation followed a claim in the file rather than the pixel limit. */
    if (rc == GS_ERR_NOMEM) fatal("out of memory on an input held to --max-pixels 2^20", err);
    if (!err[0]) fatal("a failure without a message", NULL);
    if (strchr(err, '\n')) fatal("a failure message of more than one line", err);
    if (leftovers(NULL, stray, sizeof stray)) fatal("a failed run left a file behind", stray);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    const fuzz_run runs[] = {
        {GS_MODE_SMOOTH, GS_FUZZ_ITERS, GS_DEPTH_KEEP, NULL, FEED_FILE, GS_AXIS_X},
        {GS_MODE_INTEGRAL_ROWS, 0, GS_DEPTH_KEEP, "npy", FEED_PIPE, GS_AXIS_X},
        {GS_MODE_INTEGRAL_2D, 0, GS_DEPTH_KEEP, "png", FEED_FILE, GS_AXIS_X},
        {GS_MODE_SMOOTH, 0, size % 2 ? GS_DEPTH_TO_8 : GS_DEPTH_TO_16, "pgm", FEED_PIPE, GS_AXIS_X},
        /* down the columns, or rows then columns: windows with halos between strips */
        {GS_MODE_SMOOTH, GS_FUZZ_ITERS, GS_DEPTH_KEEP, "pgm", FEED_FILE,
         size % 2 ? GS_AXIS_Y : GS_AXIS_X | GS_AXIS_Y},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) run_one(data, size, &runs[i]);
    return 0;
}
