/* test_cuda_stream.c: the CUDA plugin's device work queued on a caller's stream (gs_strip.stream). */
/*
 * A queued call must return before its work runs, leave the result exact once the stream
 * has run it, and keep the instance's own buffers ordered when the next call names another
 * stream. A stream is held shut by a host function that waits for the test to open it
 * (at most kGateSeconds; a call that waited for its own work would find the gate still
 * shut when it times out, and the test says so rather than hanging). Each shape runs once
 * unheld first: growing the engine's buffers frees the old ones, and cudaFree waits for
 * the device.
 * Usage: test_cuda_stream CUDA_PLUGIN.so. Exits 77 (ctest's skip) when the plugin's probe
 * fails. Check runs in-process (CK_NOFORK): a CUDA context does not survive fork.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <check.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gsmooth/gsmooth_plugin.h"
#include "plugin_or_skip.h"
#include "reference.h"

#define ERR_LEN 512

static const gs_plugin_desc *g_cuda;
static gs_plugin_instance *g_inst; /* device strips */

/* ---- a gate that holds a stream ---- */

enum { kGateSeconds = 10 };

typedef struct gate {
    atomic_int open;      /* set by the test once its calls have returned */
    atomic_int timed_out; /* the host function gave up waiting */
} gate;

static void CUDART_CB wait_for_gate(void *arg)
{
    gate *g = arg;
    const time_t until = time(NULL) + kGateSeconds;
    while (!atomic_load(&g->open)) {
        if (time(NULL) > until) {
            atomic_store(&g->timed_out, 1);
            return;
        }
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
}

static void shut(gate *g, cudaStream_t s)
{
    atomic_store(&g->open, 0);
    atomic_store(&g->timed_out, 0);
    ck_assert_int_eq(cudaLaunchHostFunc(s, wait_for_gate, g), cudaSuccess);
}

/* Whether a held stream has work pending; the query's NotReady is not left as this thread's
 * last error (the plugin's next launch would read it). */
static int still_pending(cudaStream_t s)
{
    const cudaError_t e = cudaStreamQuery(s);
    cudaGetLastError();
    return e == cudaErrorNotReady;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Open a gate from another thread after `delay_ms`. */
typedef struct opener {
    gate *g;
    long delay_ms;
} opener;

static void *open_later(void *arg)
{
    opener *o = arg;
    struct timespec nap = {o->delay_ms / 1000, (o->delay_ms % 1000) * 1000000L};
    nanosleep(&nap, NULL);
    atomic_store(&o->g->open, 1);
    return NULL;
}

/* A stream of its own and pinned memory (allocated before any stream is held) to look at
 * a result while the stream that computes it is held. */
static cudaStream_t g_peek;
static uint8_t *g_peek_buf;
static const size_t kPeekBytes = (size_t)1024 * 700;

/* ---- images on the device ---- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint8_t next_byte(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint8_t)(g_rng >> 32);
}

typedef struct image {
    uint32_t width, height;
    uint8_t *host;   /* packed u8 rows */
    void *d_src, *d_dst;
} image;

static image make_image(uint32_t width, uint32_t height)
{
    image im = {width, height, malloc((size_t)width * height), NULL, NULL};
    ck_assert_ptr_nonnull(im.host);
    for (size_t i = 0; i < (size_t)width * height; ++i) im.host[i] = next_byte();
    ck_assert_int_eq(cudaMalloc(&im.d_src, (size_t)width * height), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&im.d_dst, (size_t)width * height), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(im.d_src, im.host, (size_t)width * height, cudaMemcpyHostToDevice),
                     cudaSuccess);
    ck_assert_int_eq(cudaMemset(im.d_dst, 0xA5, (size_t)width * height), cudaSuccess);
    return im;
}

static void free_image(image *im)
{
    cudaFree(im->d_src), cudaFree(im->d_dst), free(im->host);
}

/* The result still holds the 0xA5 it was filled with: its work has not run. */
static void expect_untouched(const image *im, const char *what)
{
    const size_t n = (size_t)im->width * im->height;
    ck_assert(n <= kPeekBytes);
    ck_assert_int_eq(cudaMemcpyAsync(g_peek_buf, im->d_dst, n, cudaMemcpyDeviceToHost, g_peek), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(g_peek), cudaSuccess);
    for (size_t i = 0; i < n; ++i)
        if (g_peek_buf[i] != 0xA5)
            ck_abort_msg("%s: written before its stream ran (byte %zu)", what, i);
}

static gs_strip strip_on(const image *im, cudaStream_t stream)
{
    gs_strip s = gs_test_strip(im->d_src, im->width, im->width, im->height, 8, im->d_dst, im->width, 8);
    s.stream = stream ? (void *)stream : GS_CUDA_STREAM_LEGACY;
    return s;
}

/* The smoothed image on the device equals the C reference's, byte for byte. */
static void expect_smoothed(const image *im, uint32_t iters, uint32_t axes, const char *what)
{
    const size_t n = (size_t)im->width * im->height;
    uint8_t *want = malloc(n), *got = malloc(n);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(gs_ref_smooth_image(im->host, im->width, want, im->width, im->width,
                                         im->height, 8, iters, axes),
                     0);
    ck_assert_int_eq(cudaMemcpy(got, im->d_dst, n, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < n; ++i)
        if (want[i] != got[i])
            ck_abort_msg("%s: pixel (%zu, %zu) is %u, the reference %u", what, i % im->width,
                         i / im->width, got[i], want[i]);
    free(want), free(got);
}

static void smooth_queued(const image *im, cudaStream_t stream, uint32_t iters, uint32_t axes)
{
    char err[ERR_LEN] = "";
    gs_strip s = strip_on(im, stream);
    ck_assert_msg(g_cuda->smooth_axes(g_inst, &s, axes, 0, 0, iters, err, sizeof err) == GS_PLUGIN_OK,
                  "smooth_axes on a stream: %s", err);
}

/* ---- tests ---- */

/* Each kind of call returns while its stream is held shut, and its result is exact once the
 * stream runs: rows, columns as a chain of launches through the float scratch (K = 20),
 * both axes, no passes (a device copy), rows that go through the engine's device copies
 * (width not a multiple of 16), and the legacy default stream. */
START_TEST(queued_calls_return_before_their_work)
{
    static const struct { uint32_t width, iters, axes; int legacy; } cases[] = {
        {1024, 3, GS_AXIS_X, 0},  {1024, 20, GS_AXIS_Y, 0},           {1000, 3, GS_AXIS_Y, 0},
        {1024, 0, GS_AXIS_X, 0},  {1000, 10, GS_AXIS_X | GS_AXIS_Y, 0}, {1024, 3, GS_AXIS_Y, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        cudaStream_t stream = NULL;
        if (!cases[c].legacy) ck_assert_int_eq(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
        image im = make_image(cases[c].width, 600);
        smooth_queued(&im, stream, cases[c].iters, cases[c].axes); /* buffers grown */
        ck_assert_int_eq(cudaStreamSynchronize(stream ? stream : cudaStreamLegacy), cudaSuccess);
        ck_assert_int_eq(cudaMemset(im.d_dst, 0xA5, (size_t)im.width * im.height), cudaSuccess);
        gate g;
        shut(&g, stream ? stream : cudaStreamLegacy);
        smooth_queued(&im, stream, cases[c].iters, cases[c].axes);
        const int pending = still_pending(stream ? stream : cudaStreamLegacy);
        char what[96];
        snprintf(what, sizeof what, "case %zu: width %u K=%u axes 0x%x", c, cases[c].width,
                 cases[c].iters, cases[c].axes);
        expect_untouched(&im, what); /* queued behind the gate, not run on a stream of its own */
        atomic_store(&g.open, 1);
        ck_assert_int_eq(cudaStreamSynchronize(stream ? stream : cudaStreamLegacy), cudaSuccess);
        ck_assert_msg(!atomic_load(&g.timed_out) && pending, "%s: the call waited for its stream's work",
                      what);
        expect_smoothed(&im, cases[c].iters, cases[c].axes, what);
        free_image(&im);
        if (stream) cudaStreamDestroy(stream);
    }
}
END_TEST

/* A call on stream B after one on stream A that is held shut: B waits for A's work (they
 * share the instance's scratch), and both results are exact. */
START_TEST(calls_on_two_streams_keep_their_order)
{
    cudaStream_t a, b;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
    image first = make_image(1000, 700), second = make_image(1000, 700);
    smooth_queued(&first, a, 20, GS_AXIS_Y); /* buffers grown */
    ck_assert_int_eq(cudaStreamSynchronize(a), cudaSuccess);
    ck_assert_int_eq(cudaMemset(first.d_dst, 0xA5, (size_t)first.width * first.height), cudaSuccess);
    gate g;
    shut(&g, a);
    smooth_queued(&first, a, 20, GS_AXIS_Y);
    smooth_queued(&second, b, 20, GS_AXIS_Y);
    /* a short wait for B: were it not ordered after A, its few milliseconds would be done */
    struct timespec nap = {0, 200000000};
    nanosleep(&nap, NULL);
    const int b_pending = still_pending(b);
    expect_untouched(&first, "first, on the held stream A");
    expect_untouched(&second, "second, on stream B after A");
    atomic_store(&g.open, 1);
    ck_assert_int_eq(cudaStreamSynchronize(a), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(b), cudaSuccess);
    ck_assert_msg(!atomic_load(&g.timed_out), "a call waited for a stream held shut");
    ck_assert_msg(b_pending, "stream B ran before A's work");
    expect_smoothed(&first, 20, GS_AXIS_Y, "first, on stream A");
    expect_smoothed(&second, 20, GS_AXIS_Y, "second, on stream B");
    free_image(&first), free_image(&second);
    cudaStreamDestroy(a), cudaStreamDestroy(b);
}
END_TEST

/* Integrals queued on a stream: rows return at once; a 2d table waits for its strip (its
 * last row comes back to host memory) and carries across strips. */
START_TEST(integrals_on_a_stream)
{
    const uint32_t width = 1000, height = 90;
    cudaStream_t stream;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    image im = make_image(width, height);
    const size_t out_bytes = (size_t)width * height * 4;
    void *d_out = NULL;
    ck_assert_int_eq(cudaMalloc(&d_out, out_bytes), cudaSuccess);
    uint32_t *want = malloc(out_bytes), *got = malloc(out_bytes), *col = calloc(width, 4);
    ck_assert(want && got && col);
    char err[ERR_LEN] = "";
    for (int table = 0; table < 2; ++table) {
        memset(col, 0, (size_t)width * 4);
        for (uint32_t y = 0; y < height; ++y) {
            if (table)
                gs_ref_integral_2d_row(im.host + (size_t)y * width, want + (size_t)y * width, col,
                                       width, 8, 32);
            else
                gs_ref_integral_row(im.host + (size_t)y * width, want + (size_t)y * width, width, 8, 32);
        }
        ck_assert_int_eq(cudaMemset(d_out, 0xA5, out_bytes), cudaSuccess);
        memset(col, 0, (size_t)width * 4);
        gate g = {1, 0}; /* open: only the rows are held */
        if (!table) { /* one strip, queued behind the gate (buffers grown by a first run) */
            gs_strip s = strip_on(&im, stream);
            s.out_bits = 32, s.dst = d_out, s.dst_stride = (size_t)width * 4;
            ck_assert_msg(g_cuda->integral_rows(g_inst, &s, err, sizeof err) == GS_PLUGIN_OK, "%s", err);
            ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
            shut(&g, stream);
            ck_assert_msg(g_cuda->integral_rows(g_inst, &s, err, sizeof err) == GS_PLUGIN_OK, "%s", err);
            ck_assert(still_pending(stream));
        }
        atomic_store(&g.open, 1);
        for (uint32_t y0 = 0; table && y0 < height; y0 += 32) { /* strips of 32 rows, carried */
            gs_strip s = strip_on(&im, stream);
            s.rows = height - y0 < 32 ? height - y0 : 32;
            s.src = (const uint8_t *)im.d_src + (size_t)y0 * width;
            s.out_bits = 32, s.dst = (uint8_t *)d_out + (size_t)y0 * width * 4;
            s.dst_stride = (size_t)width * 4;
            ck_assert_msg(g_cuda->integral_2d(g_inst, &s, col, err, sizeof err) == GS_PLUGIN_OK, "%s", err);
            ck_assert_int_eq(memcmp(col, want + (size_t)(y0 + s.rows - 1) * width, (size_t)width * 4), 0);
        }
        ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
        ck_assert(!atomic_load(&g.timed_out));
        ck_assert_int_eq(cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        ck_assert_msg(memcmp(want, got, out_bytes) == 0, "integral %s on a stream differs", table ? "2d" : "rows");
    }
    free(want), free(got), free(col);
    cudaFree(d_out);
    free_image(&im);
    cudaStreamDestroy(stream);
}
END_TEST

/* A waited call (no stream) after a queued one that is held, on the same instance and
 * scratch: it waits for the held work (a thread opens the gate after 300 ms), and both are
 * exact. */
START_TEST(waited_call_after_a_queued_one)
{
    cudaStream_t stream;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    image first = make_image(1024, 500), second = make_image(1024, 500);
    smooth_queued(&first, stream, 20, GS_AXIS_Y); /* buffers grown */
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    gate g;
    shut(&g, stream);
    smooth_queued(&first, stream, 20, GS_AXIS_Y);
    opener o = {&g, 300};
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, open_later, &o), 0);
    char err[ERR_LEN] = "";
    gs_strip s = strip_on(&second, NULL);
    s.stream = NULL;
    const double t0 = seconds_now();
    ck_assert_msg(g_cuda->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, 0, 20, err, sizeof err) == GS_PLUGIN_OK,
                  "%s", err);
    const double waited = seconds_now() - t0;
    pthread_join(thread, NULL);
    ck_assert_msg(!atomic_load(&g.timed_out), "the gate timed out");
    ck_assert_msg(waited >= 0.25, "the waited call took %.3f s: it did not wait for the queued work",
                  waited);
    expect_smoothed(&second, 20, GS_AXIS_Y, "waited call");
    ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
    expect_smoothed(&first, 20, GS_AXIS_Y, "queued call before it");
    free_image(&first), free_image(&second);
    cudaStreamDestroy(stream);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cuda_stream CUDA_PLUGIN.so\n");
        return 2;
    }
    g_cuda = gs_test_load_plugin("test_cuda_stream", argv[1]);
    if (!g_cuda) return 1;
    char why[ERR_LEN] = "";
    const int skip = gs_test_device_or_skip(g_cuda, why, sizeof why);
    if (skip) return skip;
    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 0, 0, GS_MEMORY_DEVICE};
    char err[ERR_LEN] = "";
    if (g_cuda->create(&cfg, &g_inst, err, sizeof err) != GS_PLUGIN_OK) {
        fprintf(stderr, "test_cuda_stream: create: %s\n", err);
        return 1;
    }
    /* the plugin runs on device 0; the test's own allocations and streams too */
    if (cudaSetDevice(0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&g_peek, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMallocHost((void **)&g_peek_buf, kPeekBytes) != cudaSuccess)
        return 1;

    Suite *suite = suite_create("cuda_stream");
    TCase *tc = tcase_create("queued");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, queued_calls_return_before_their_work);
    tcase_add_test(tc, calls_on_two_streams_keep_their_order);
    tcase_add_test(tc, integrals_on_a_stream);
    tcase_add_test(tc, waited_call_after_a_queued_one);
    suite_add_tcase(suite, tc);
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    g_cuda->destroy(g_inst);
    return failed == 0 ? 0 : 1;
}
