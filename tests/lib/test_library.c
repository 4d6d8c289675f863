/* test_library.c: libgsmooth's public C API (gsmooth.h) as a third party uses it, built against an install through `pkg-config gsmooth`: in-memory calls with strides against the golden images, file to file, every refusal, and a plugin's failures. */
#include <check.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsmooth/gsmooth.h>

static const char *golden; /* tests/golden */
static char scratch[4096]; /* a temporary directory */

/* A PGM (P5, maxval 255 or 65535) read whole: samples as stored, big-endian for 16-bit. */
typedef struct pgm {
    uint32_t width, height, bits;
    unsigned char *data; /* width * height samples, row after row, native order */
} pgm;

static pgm read_pgm(const char *path)
{
    pgm p = {0, 0, 0, NULL};
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    unsigned maxval = 0;
    ck_assert_int_eq(fscanf(f, "P5 %u %u %u", &p.width, &p.height, &maxval), 3);
    fgetc(f); /* the one whitespace after maxval */
    p.bits = maxval > 255 ? 16 : 8;
    const size_t n = (size_t)p.width * p.height;
    p.data = malloc(n * (p.bits / 8));
    ck_assert_uint_eq(fread(p.data, p.bits / 8, n, f), n);
    fclose(f);
    if (p.bits == 16)
        for (size_t i = 0; i < n; ++i) { /* big-endian on disk */
            unsigned char *b = p.data + 2 * i;
            uint16_t v = (uint16_t)(b[0] << 8 | b[1]);
            memcpy(b, &v, 2);
        }
    return p;
}

/* A .npy of uint32 or uint64 (little-endian, C order): its values, after the header. */
static void *read_npy(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    unsigned char head[10];
    ck_assert_uint_eq(fread(head, 1, 10, f), 10);
    ck_assert_int_eq(memcmp(head, "\x93NUMPY", 6), 0);
    const long header = 10 + (head[8] | head[9] << 8);
    fseek(f, 0, SEEK_END);
    *bytes = (size_t)(ftell(f) - header);
    fseek(f, header, SEEK_SET);
    void *v = malloc(*bytes);
    ck_assert_uint_eq(fread(v, 1, *bytes, f), *bytes);
    fclose(f);
    return v;
}

/* An input of the goldens decoded by the library itself (file to file, K=0, to PGM). */
static pgm decoded_input(gsmooth_context *ctx, const char *name)
{
    char in[4096], out[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/inputs/%s", golden, name);
    snprintf(out, sizeof out, "%s/%s.pgm", scratch, name);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.iters = 0;
    ck_assert_msg(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err) == GSMOOTH_OK, "%s", err);
    return read_pgm(out);
}

static gsmooth_context *cpu_context(void)
{
    gsmooth_context_options o;
    gsmooth_context_options_init(&o);
    o.backend = "cpu";
    gsmooth_context *ctx = NULL;
    char err[GSMOOTH_ERR_SIZE];
    ck_assert_msg(gsmooth_context_create(&o, &ctx, err, sizeof err) == GSMOOTH_OK, "%s", err);
    return ctx;
}

/* `p`'s samples copied into rows `pad` bytes longer than needed (a strided buffer). */
static gsmooth_image padded(const pgm *p, size_t pad, void **block)
{
    const size_t row = (size_t)p->width * (p->bits / 8), stride = row + pad;
    *block = malloc(stride * p->height);
    memset(*block, 0xA5, stride * p->height);
    for (uint32_t y = 0; y < p->height; ++y)
        memcpy((char *)*block + y * stride, p->data + y * row, row);
    gsmooth_image im = {*block, stride, p->width, p->height, p->bits, GSMOOTH_MEMORY_HOST, 0};
    return im;
}

/* The rows of a strided image equal the packed samples of `want`. */
static void assert_rows_equal(const gsmooth_image *got, const void *want, const char *what)
{
    const size_t row = (size_t)got->width * (got->bits / 8);
    for (uint32_t y = 0; y < got->height; ++y)
        ck_assert_msg(memcmp((const char *)got->data + y * got->stride, (const char *)want + y * row, row) == 0,
                      "%s: row %u differs", what, y);
}

/* One golden smoothing case in memory: input, passes, axes, expected PGM. */
static void check_smooth_case(const char *input, uint32_t iters, uint32_t axes, const char *expected)
{
    gsmooth_context *ctx = cpu_context();
    pgm in = decoded_input(ctx, input);
    char path[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(path, sizeof path, "%s/expected/%s", golden, expected);
    pgm want = read_pgm(path);
    void *src_block, *dst_block;
    /* odd padding for 8-bit rows; 16-bit samples keep their 2-byte alignment */
    const size_t pad = in.bits == 8 ? 13 : 6;
    gsmooth_image src = padded(&in, pad, &src_block), dst = padded(&in, pad + 4, &dst_block);
    ck_assert_msg(gsmooth_smooth(ctx, &src, &dst, iters, axes, err, sizeof err) == GSMOOTH_OK, "%s", err);
    assert_rows_equal(&dst, want.data, expected);
    /* the padding between rows is the caller's: untouched */
    const size_t row = (size_t)in.width * (in.bits / 8);
    for (uint32_t y = 0; y < in.height; ++y)
        for (size_t b = row; b < dst.stride; ++b)
            ck_assert_uint_eq(((unsigned char *)dst.data)[y * dst.stride + b], 0xA5);
    free(src_block), free(dst_block), free(in.data), free(want.data);
    gsmooth_context_destroy(ctx);
}

START_TEST(smooth_rows_golden) { check_smooth_case("photo.png", 10, GSMOOTH_AXIS_X, "photo_k10.pgm"); }
END_TEST

START_TEST(smooth_16bit_golden) { check_smooth_case("gray16.png", 7, GSMOOTH_AXIS_X, "gray16_k7.pgm"); }
END_TEST

START_TEST(smooth_columns_golden) { check_smooth_case("noise.png", 101, GSMOOTH_AXIS_Y, "noise_y_k101.pgm"); }
END_TEST

START_TEST(smooth_columns_16bit_golden) { check_smooth_case("gray16.png", 7, GSMOOTH_AXIS_Y, "gray16_y_k7.pgm"); }
END_TEST

static void check_integral_case(gsmooth_integral_mode mode, const char *expected)
{
    gsmooth_context *ctx = cpu_context();
    pgm in = decoded_input(ctx, "gray16.png");
    char path[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(path, sizeof path, "%s/expected/%s", golden, expected);
    size_t bytes;
    void *want = read_npy(path, &bytes);
    const uint32_t bits = gsmooth_integral_bits(mode, 16, in.width, in.height);
    ck_assert_uint_eq(bytes, (size_t)in.width * in.height * (bits / 8));
    void *src_block;
    gsmooth_image src = padded(&in, 2, &src_block);
    const size_t stride = (size_t)in.width * (bits / 8) + 24;
    void *out = calloc(in.height, stride);
    gsmooth_image dst = {out, stride, in.width, in.height, bits, GSMOOTH_MEMORY_HOST, 0};
    ck_assert_msg(gsmooth_integral(ctx, &src, &dst, mode, err, sizeof err) == GSMOOTH_OK, "%s", err);
    assert_rows_equal(&dst, want, expected);
    free(out), free(want), free(src_block), free(in.data);
    gsmooth_context_destroy(ctx);
}

START_TEST(integral_rows_golden) { check_integral_case(GSMOOTH_INTEGRAL_ROWS, "gray16_rows.npy"); }
END_TEST

START_TEST(integral_2d_golden) { check_integral_case(GSMOOTH_INTEGRAL_2D, "gray16_2d.npy"); }
END_TEST

START_TEST(file_to_file_golden)
{
    gsmooth_context *ctx = cpu_context();
    char in[4096], out[4096], want_path[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/inputs/photo.png", golden);
    snprintf(out, sizeof out, "%s/photo_k10.pgm", scratch);
    snprintf(want_path, sizeof want_path, "%s/expected/photo_k10.pgm", golden);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.iters = 10;
    gsmooth_file_result r = {.struct_size = sizeof r};
    ck_assert_msg(gsmooth_file(ctx, &fo, in, out, &r, err, sizeof err) == GSMOOTH_OK, "%s", err);
    ck_assert_str_eq(r.backend, "cpu");
    ck_assert_uint_eq(r.bits, 8);
    pgm got = read_pgm(out), want = read_pgm(want_path);
    ck_assert_uint_eq(got.width, r.width);
    ck_assert_uint_eq(got.height, r.height);
    ck_assert_int_eq(memcmp(got.data, want.data, (size_t)got.width * got.height), 0);
    /* a missing input: IO, the file named, and no output left behind */
    snprintf(in, sizeof in, "%s/no-such.png", scratch);
    snprintf(out, sizeof out, "%s/never.png", scratch);
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "no-such.png"));
    ck_assert_int_ne(access(out, F_OK), 0);
    free(got.data), free(want.data);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* What a batch's callback saw. */
typedef struct tally {
    unsigned ok, failed, skipped;
    char last_error[GSMOOTH_ERR_SIZE];
    uint64_t positions;      /* bit p: an outcome for list position p (below 64) */
    uint64_t failed_position; /* the last failed one's */
} tally;

static void count_outcome(void *user, const gsmooth_file_outcome *o)
{
    tally *t = user;
    ck_assert_uint_ge(o->struct_size, offsetof(gsmooth_file_outcome, position) + sizeof o->position);
    if (o->position < 64) t->positions |= UINT64_C(1) << o->position;
    if (o->status == GSMOOTH_FILE_OK) {
        t->ok++;
        ck_assert_uint_gt(o->result->width, 0);
        ck_assert_ptr_nonnull(o->output);
    } else if (o->status == GSMOOTH_FILE_SKIPPED) {
        t->skipped++;
    } else {
        t->failed++;
        t->failed_position = o->position;
        snprintf(t->last_error, sizeof t->last_error, "%s", o->error);
    }
}

START_TEST(batch_in_shards)
{
    gsmooth_context *ctx = cpu_context();
    char err[GSMOOTH_ERR_SIZE], path[4096], out_dir[4096], list[4096];
    snprintf(out_dir, sizeof out_dir, "%s/batch", scratch);
    ck_assert_int_eq(mkdir(out_dir, 0755), 0);
    gsmooth_inputs *in = gsmooth_inputs_create();
    ck_assert_ptr_nonnull(in);
    const char *names[] = {"photo.png", "noise.png", "gray16.png", "gradient.png"};
    for (int i = 0; i < 3; ++i) {
        snprintf(path, sizeof path, "%s/inputs/%s", golden, names[i]);
        ck_assert_int_eq(gsmooth_inputs_add(in, path, err, sizeof err), GSMOOTH_OK);
    }
    /* the fourth, and a missing file, from a list file */
    snprintf(list, sizeof list, "%s/list.txt", scratch);
    FILE *f = fopen(list, "w");
    fprintf(f, "%s/inputs/%s\n%s/missing.png\n", golden, names[3], scratch);
    fclose(f);
    ck_assert_int_eq(gsmooth_inputs_read(in, list, '\n', err, sizeof err), GSMOOTH_OK);
    ck_assert_uint_eq(gsmooth_inputs_count(in), 5);
    gsmooth_file_options each;
    gsmooth_file_options_init(&each);
    each.iters = 10;
    gsmooth_batch_options bo;
    gsmooth_batch_options_init(&bo);
    bo.file = &each;
    bo.out_dir = out_dir;
    bo.finished = count_outcome;
    tally t = {0};
    bo.user = &t;
    bo.shard_count = 2;
    gsmooth_batch_result r = {.struct_size = sizeof r};
    for (uint32_t shard = 0; shard < 2; ++shard) {
        bo.shard_index = shard;
        gsmooth_status rc = gsmooth_batch(ctx, &bo, in, &r, err, sizeof err);
        ck_assert_uint_eq(r.files, shard == 0 ? 3 : 2); /* positions 0, 2, 4 and 1, 3 */
        ck_assert_int_eq(rc, shard == 0 ? GSMOOTH_ERR_IO : GSMOOTH_OK); /* position 4 is missing */
    }
    ck_assert_uint_eq(t.ok, 4);
    ck_assert_uint_eq(t.failed, 1);
    ck_assert_ptr_nonnull(strstr(t.last_error, "missing.png"));
    ck_assert_uint_eq(t.positions, 0x1f); /* each of the five positions once named */
    ck_assert_uint_eq(t.failed_position, 4);
    /* photo.png's output is the golden, byte for byte */
    snprintf(path, sizeof path, "%s/photo.png", out_dir);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.iters = 0;
    char pgm_path[4096];
    snprintf(pgm_path, sizeof pgm_path, "%s/photo_out.pgm", scratch);
    ck_assert_msg(gsmooth_file(ctx, &fo, path, pgm_path, NULL, err, sizeof err) == GSMOOTH_OK, "%s", err);
    snprintf(path, sizeof path, "%s/expected/photo_k10.pgm", golden);
    pgm got = read_pgm(pgm_path), want = read_pgm(path);
    ck_assert_int_eq(memcmp(got.data, want.data, (size_t)got.width * got.height), 0);
    free(got.data), free(want.data);
    /* again with skip_existing: the four outputs are there */
    memset(&t, 0, sizeof t);
    each.skip_existing = 1, bo.shard_index = 0, bo.shard_count = 1;
    ck_assert_int_eq(gsmooth_batch(ctx, &bo, in, &r, err, sizeof err), GSMOOTH_ERR_IO);
    ck_assert_uint_eq(r.skipped, 4);
    ck_assert_uint_eq(t.skipped, 4);
    /* refused before any file */
    bo.shard_index = 2, bo.shard_count = 2;
    ck_assert_int_eq(gsmooth_batch(ctx, &bo, in, &r, err, sizeof err), GSMOOTH_ERR_USAGE);
    bo.shard_index = 0, bo.shard_count = 1;
    snprintf(path, sizeof path, "%s/list.txt/sub", scratch); /* list.txt is a file */
    bo.out_dir = path;
    ck_assert_int_eq(gsmooth_batch(ctx, &bo, in, &r, err, sizeof err), GSMOOTH_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "list.txt: exists and is not a directory"));
    ck_assert_uint_eq(r.files, 0);
    gsmooth_inputs_destroy(in);
    gsmooth_context_destroy(ctx);
}
END_TEST

START_TEST(refusals)
{
    gsmooth_context *ctx = cpu_context();
    char err[GSMOOTH_ERR_SIZE];
    uint8_t a[4 * 6] = {0}, b[4 * 6] = {0};
    gsmooth_image src = {a, 6, 6, 4, 8, GSMOOTH_MEMORY_HOST, 0}, dst = {b, 6, 6, 4, 8, GSMOOTH_MEMORY_HOST, 0};
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &dst, 100001, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_str_eq(err, "iters is a whole number from 0 to 100000, not 100001");
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &dst, 3, 4, err, sizeof err), GSMOOTH_ERR_USAGE);
    gsmooth_image bad = src;
    bad.stride = 5;
    ck_assert_int_eq(gsmooth_smooth(ctx, &bad, &dst, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "stride"));
    bad = src, bad.height = 0;
    ck_assert_int_eq(gsmooth_smooth(ctx, &bad, &dst, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "empty"));
    bad = src, bad.bits = 12;
    ck_assert_int_eq(gsmooth_smooth(ctx, &bad, &dst, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    bad = dst, bad.width = 5;
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &bad, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    uint16_t w16[4 * 6 + 1] = {0}, v16[4 * 6] = {0};
    gsmooth_image odd = {(char *)w16 + 1, 12, 6, 4, 16, GSMOOTH_MEMORY_HOST, 0};
    gsmooth_image out16 = {v16, 12, 6, 4, 16, GSMOOTH_MEMORY_HOST, 0};
    ck_assert_int_eq(gsmooth_smooth(ctx, &odd, &out16, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "2-byte boundaries"));
    bad = src, bad.data = a + 2; /* overlaps src */
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &bad, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_str_eq(err, "source and result overlap");
    ck_assert_int_eq(gsmooth_integral(ctx, &src, &dst, GSMOOTH_INTEGRAL_ROWS, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "needs 32"));
    bad = dst, bad.memory = GSMOOTH_MEMORY_CUDA;
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &bad, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    /* CUDA memory on a context that cannot reach it: a backend error in words */
    gsmooth_image dev_src = src, dev_dst = dst;
    dev_src.memory = dev_dst.memory = GSMOOTH_MEMORY_CUDA;
    ck_assert_int_eq(gsmooth_smooth(ctx, &dev_src, &dev_dst, 3, 0, err, sizeof err), GSMOOTH_ERR_BACKEND);
    ck_assert_ptr_nonnull(strstr(err, "host memory only"));
    /* a call queued on a stream takes CUDA buffers, and a backend that queues on one */
    ck_assert_int_eq(gsmooth_smooth_on_stream(ctx, &src, &dst, 3, 0, NULL, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_str_eq(err, "a call on a CUDA stream takes CUDA buffers, not host memory");
    ck_assert_int_eq(gsmooth_integral_on_stream(ctx, &src, &dst, GSMOOTH_INTEGRAL_ROWS, NULL, err, sizeof err),
                     GSMOOTH_ERR_USAGE); /* checked as gsmooth_integral first: 8-bit result */
    ck_assert_ptr_nonnull(strstr(err, "needs 32"));
    uint32_t r32[4 * 6] = {0};
    gsmooth_image rows32 = {r32, 24, 6, 4, 32, GSMOOTH_MEMORY_HOST, 0};
    ck_assert_int_eq(gsmooth_integral_on_stream(ctx, &src, &rows32, GSMOOTH_INTEGRAL_ROWS, NULL, err, sizeof err),
                     GSMOOTH_ERR_USAGE);
    ck_assert_str_eq(err, "a call on a CUDA stream takes CUDA buffers, not host memory");
    ck_assert_int_eq(gsmooth_smooth_on_stream(ctx, &dev_src, &dev_dst, 3, 0, NULL, err, sizeof err),
                     GSMOOTH_ERR_BACKEND);
    ck_assert_ptr_nonnull(strstr(err, "host memory only"));
    gsmooth_context_destroy(ctx);

    gsmooth_context_options o;
    gsmooth_context_options_init(&o);
    o.devices = "0,0";
    ck_assert_int_eq(gsmooth_context_create(&o, &ctx, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_null(ctx);
    o.devices = NULL, o.backend = "no-such-backend";
    ck_assert_int_eq(gsmooth_context_create(&o, &ctx, err, sizeof err), GSMOOTH_OK);
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &dst, 3, 0, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "no-such-backend"));
    gsmooth_context_destroy(ctx);
    gsmooth_context_destroy(NULL);
}
END_TEST

/* ---- encoder settings per call, versioned structs, the library's own words ---- */

/* Smooth the photo into `out` as PNG at `level` on its own context, deflating on 2 threads. */
typedef struct png_job {
    int level;
    char out[4096];
    gsmooth_status rc;
    char err[GSMOOTH_ERR_SIZE];
} png_job;

static void *write_png_at_level(void *arg)
{
    png_job *j = arg;
    gsmooth_context *ctx = cpu_context();
    char in[4096];
    snprintf(in, sizeof in, "%s/inputs/photo.png", golden);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.compression = j->level;
    fo.encode_threads = 2;
    for (int round = 0; round < 8 && (j->rc = gsmooth_file(ctx, &fo, in, j->out, NULL, j->err, sizeof j->err)) ==
                                        GSMOOTH_OK;
         ++round) {
    }
    gsmooth_context_destroy(ctx);
    return NULL;
}

static long file_size(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return (long)sb.st_size;
}

/* Two contexts at once with different levels each get their own: the stored file is far
 * larger than level 9's, and each equals what one call at that level writes alone. */
START_TEST(compression_per_call)
{
    png_job jobs[2] = {{.level = 0}, {.level = 9}};
    pthread_t tid[2];
    for (int i = 0; i < 2; ++i) {
        snprintf(jobs[i].out, sizeof jobs[i].out, "%s/level%d.png", scratch, jobs[i].level);
        ck_assert_int_eq(pthread_create(&tid[i], NULL, write_png_at_level, &jobs[i]), 0);
    }
    for (int i = 0; i < 2; ++i) pthread_join(tid[i], NULL);
    for (int i = 0; i < 2; ++i) ck_assert_msg(jobs[i].rc == GSMOOTH_OK, "%s", jobs[i].err);
    ck_assert_int_gt(file_size(jobs[0].out), 2 * file_size(jobs[1].out));
    for (int i = 0; i < 2; ++i) {
        png_job alone = {.level = jobs[i].level};
        snprintf(alone.out, sizeof alone.out, "%s/alone%d.png", scratch, alone.level);
        write_png_at_level(&alone);
        ck_assert_msg(alone.rc == GSMOOTH_OK, "%s", alone.err);
        FILE *a = fopen(jobs[i].out, "rb"), *b = fopen(alone.out, "rb");
        int ca, cb;
        do {
            ca = fgetc(a), cb = fgetc(b);
        } while (ca == cb && ca != EOF);
        ck_assert_msg(ca == cb, "level %d: the file written beside another level differs", alone.level);
        fclose(a), fclose(b);
    }
    char err[GSMOOTH_ERR_SIZE];
    int level = -5;
    ck_assert_int_eq(gsmooth_compression_parse("small", &level, err, sizeof err), GSMOOTH_OK);
    ck_assert_int_eq(level, GSMOOTH_COMPRESSION_SMALL);
    ck_assert_int_eq(gsmooth_compression_parse("7", &level, err, sizeof err), GSMOOTH_OK);
    ck_assert_int_eq(level, 7);
    ck_assert_int_eq(gsmooth_compression_parse("10", &level, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "'10'"));
    /* an out-of-range level in the options is refused, in the library's words */
    gsmooth_context *ctx = cpu_context();
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.compression = 10;
    char in[4096], out[4096];
    snprintf(in, sizeof in, "%s/inputs/photo.png", golden);
    snprintf(out, sizeof out, "%s/never.png", scratch);
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "compression"));
    ck_assert_ptr_null(strstr(err, "--"));
    gsmooth_context_destroy(ctx);
}
END_TEST

/* relative_to: outputs keep their path below it, directories made as needed; an input
 * outside it fails alone; a caller of 0.3's first layout (no relative_to) names by basename. */
START_TEST(batch_relative_to)
{
    gsmooth_context *ctx = cpu_context();
    char err[GSMOOTH_ERR_SIZE], path[4096], root[4096], out_dir[4096];
    snprintf(root, sizeof root, "%s/tree", scratch);
    snprintf(out_dir, sizeof out_dir, "%s/made/here", scratch);
    const char *rel[] = {"a/x.png", "b/x.png", "a/sub/y.png"};
    gsmooth_inputs *in = gsmooth_inputs_create();
    static char png[1 << 18];
    snprintf(path, sizeof path, "%s/inputs/noise.png", golden);
    FILE *f = fopen(path, "rb");
    size_t n = fread(png, 1, sizeof png, f);
    fclose(f);
    const char *dirs[] = {"", "/a", "/b", "/a/sub"};
    for (int i = 0; i < 4; ++i) {
        snprintf(path, sizeof path, "%s%s", root, dirs[i]);
        ck_assert_int_eq(mkdir(path, 0755), 0);
    }
    for (int i = 0; i < 3; ++i) {
        snprintf(path, sizeof path, "%s/%s", root, rel[i]);
        f = fopen(path, "wb");
        ck_assert_uint_eq(fwrite(png, 1, n, f), n);
        fclose(f);
        ck_assert_int_eq(gsmooth_inputs_add(in, path, err, sizeof err), GSMOOTH_OK);
    }
    snprintf(path, sizeof path, "%s/inputs/noise.png", golden); /* outside the root */
    ck_assert_int_eq(gsmooth_inputs_add(in, path, err, sizeof err), GSMOOTH_OK);
    tally t;
    memset(&t, 0, sizeof t);
    gsmooth_batch_options bo;
    gsmooth_batch_options_init(&bo);
    ck_assert_ptr_null(bo.relative_to);
    bo.out_dir = out_dir, bo.relative_to = root, bo.finished = count_outcome, bo.user = &t;
    gsmooth_batch_result r = {.struct_size = sizeof r};
    ck_assert_int_eq(gsmooth_batch(ctx, &bo, in, &r, err, sizeof err), GSMOOTH_ERR_IO);
    ck_assert_uint_eq(t.ok, 3);
    ck_assert_uint_eq(t.failed, 1);
    ck_assert_msg(strstr(t.last_error, "noise.png: not inside") != NULL, "%s", t.last_error);
    struct stat sb;
    for (int i = 0; i < 3; ++i) {
        snprintf(path, sizeof path, "%s/%s", out_dir, rel[i]);
        ck_assert_msg(stat(path, &sb) == 0, "%s missing", path);
    }
    /* A struct_size that ends before relative_to: the field is not read. */
    gsmooth_inputs_destroy(in);
    in = gsmooth_inputs_create();
    snprintf(path, sizeof path, "%s/%s", root, rel[2]);
    ck_assert_int_eq(gsmooth_inputs_add(in, path, err, sizeof err), GSMOOTH_OK);
    bo.struct_size = offsetof(gsmooth_batch_options, relative_to);
    ck_assert_msg(gsmooth_batch(ctx, &bo, in, &r, err, sizeof err) == GSMOOTH_OK, "%s", err);
    snprintf(path, sizeof path, "%s/y.png", out_dir);
    ck_assert_int_eq(stat(path, &sb), 0);
    gsmooth_inputs_destroy(in);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* A program built against 0.2 passes its smaller structs: the fields it does not know
 * take their defaults; 0.2's batch options, whose layout changed, are refused. */
START_TEST(older_struct_sizes)
{
    gsmooth_context *ctx = cpu_context();
    char in[4096], out[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/inputs/photo.png", golden);
    snprintf(out, sizeof out, "%s/old.pgm", scratch);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.iters = 10;
    fo.skip_existing = 1; /* past 0.2's size: must be ignored */
    fo.struct_size = offsetof(gsmooth_file_options, max_pixels) + sizeof fo.max_pixels;
    gsmooth_file_result r;
    memset(&r, 0x55, sizeof r);
    r.struct_size = offsetof(gsmooth_file_result, total_ns) + sizeof r.total_ns;
    ck_assert_msg(gsmooth_file(ctx, &fo, in, out, &r, err, sizeof err) == GSMOOTH_OK, "%s", err);
    ck_assert_int_eq(r.skipped, 0x55555555); /* past the caller's size: not written */
    ck_assert_uint_gt(r.width, 0);
    ck_assert_msg(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err) == GSMOOTH_OK, "%s", err);
    char want_path[4096];
    snprintf(want_path, sizeof want_path, "%s/expected/photo_k10.pgm", golden);
    pgm got = read_pgm(out), want = read_pgm(want_path);
    ck_assert_int_eq(memcmp(got.data, want.data, (size_t)got.width * got.height), 0);
    free(got.data), free(want.data);
    fo.struct_size -= 1;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "struct_size"));
    /* 0.2's batch options were 88 bytes on LP64, the file options inside them */
    gsmooth_inputs *list = gsmooth_inputs_create();
    unsigned char old[88];
    memset(old, 0, sizeof old);
    const uint32_t old_size = sizeof old;
    memcpy(old, &old_size, sizeof old_size);
    ck_assert_int_eq(gsmooth_batch(ctx, (const gsmooth_batch_options *)(const void *)old, list, NULL, err,
                                   sizeof err),
                     GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "0.2"));
    gsmooth_inputs_destroy(list);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* skip_existing on one file: the output is kept, the input never read. */
START_TEST(file_skip_existing)
{
    gsmooth_context *ctx = cpu_context();
    char out[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(out, sizeof out, "%s/kept.png", scratch);
    FILE *f = fopen(out, "w");
    fputs("not a png", f);
    fclose(f);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.skip_existing = 1;
    gsmooth_file_result r = {.struct_size = sizeof r};
    ck_assert_msg(gsmooth_file(ctx, &fo, "/no/such/input.png", out, &r, err, sizeof err) == GSMOOTH_OK, "%s",
                  err);
    ck_assert_int_eq(r.skipped, 1);
    ck_assert_int_eq(file_size(out), 9);
    fo.skip_existing = 0;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, "/no/such/input.png", out, &r, err, sizeof err), GSMOOTH_ERR_IO);
    ck_assert_int_eq(r.skipped, 0);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* Status names, and messages that name the library's fields, not the command line's flags. */
START_TEST(own_words)
{
    ck_assert_str_eq(gsmooth_status_name(GSMOOTH_ERR_IO), "I/O error");
    ck_assert_str_eq(gsmooth_status_name(GSMOOTH_ERR_USAGE), "usage error");
    ck_assert_ptr_nonnull(gsmooth_status_name((gsmooth_status)99));
    uint32_t major = 0, minor = 99;
    gsmooth_plugin_abi_version(&major, &minor);
    ck_assert_uint_eq(major, 1);
    gsmooth_context *ctx = cpu_context();
    char in[4096], out[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/inputs/photo.png", golden);
    snprintf(out, sizeof out, "%s/never.png", scratch);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.iters = GSMOOTH_MAX_ITERS + 1;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_msg(strstr(err, "iters") && !strstr(err, "--"), "%s", err);
    gsmooth_file_options_init(&fo);
    fo.depth = 12;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_msg(strstr(err, "depth") && !strstr(err, "--"), "%s", err);
    gsmooth_file_options_init(&fo);
    fo.max_pixels = 100;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), GSMOOTH_ERR_TOO_LARGE);
    ck_assert_msg(strstr(err, "pixel limit"), "%s", err);
    gsmooth_context_destroy(ctx);
    gsmooth_context_options co;
    gsmooth_context_options_init(&co);
    co.backend = "cpu";
    co.devices = "0,0";
    ck_assert_int_eq(gsmooth_context_create(&co, &ctx, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_msg(strncmp(err, "devices", 7) == 0 && !strstr(err, "--"), "%s", err);
}
END_TEST

START_TEST(backends_listed)
{
    gsmooth_context *ctx = cpu_context();
    char err[GSMOOTH_ERR_SIZE];
    int cpu = 0;
    for (size_t i = 0; i < gsmooth_context_backend_count(ctx); ++i) {
        gsmooth_backend_info info = {.struct_size = sizeof info};
        ck_assert_int_eq(gsmooth_context_backend(ctx, i, &info, err, sizeof err), GSMOOTH_OK);
        if (info.load_error) continue; /* a file that is no plugin */
        if (strcmp(info.name, "cpu") == 0) cpu = info.available && !info.device_memory && info.devices == 0;
    }
    ck_assert_msg(cpu, "the CPU backend is found beside libgsmooth and can run");
    gsmooth_backend_info info = {.struct_size = sizeof info};
    ck_assert_int_eq(gsmooth_context_backend(ctx, 999, &info, err, sizeof err), GSMOOTH_ERR_USAGE);
    /* a result without its size is refused, not written past */
    gsmooth_backend_info unsized = {.struct_size = 0};
    ck_assert_int_eq(gsmooth_context_backend(ctx, 0, &unsized, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "set struct_size"));
    /* options from a caller that did not call _init */
    gsmooth_context_options raw;
    memset(&raw, 0, sizeof raw);
    gsmooth_context *other = NULL;
    ck_assert_int_eq(gsmooth_context_create(&raw, &other, err, sizeof err), GSMOOTH_ERR_USAGE);
    ck_assert_ptr_null(other);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", GSMOOTH_VERSION_MAJOR, GSMOOTH_VERSION_MINOR, GSMOOTH_VERSION_PATCH);
    ck_assert_str_eq(gsmooth_version(), want);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* ---- a plugin's failure, through both doors into a backend: the buffer calls and the file
 * calls give the same status, and the plugin's words ---- */

/* tests/plugins/refuse_args.c's words, and its failures' statuses: invalid arguments are the
 * backend's failure (the library checked them itself), out of memory stays so. */
#define REFUSE_ARGS_INVALID "test plugin refuses these arguments"
#define REFUSE_ARGS_NOMEM "test plugin out of memory"

static gsmooth_context *refusing_context(void)
{
    const char *plugin = getenv("GS_TEST_REFUSE_ARGS");
    ck_assert_msg(plugin && plugin[0], "GS_TEST_REFUSE_ARGS names the refuse_args test plugin");
    gsmooth_context_options o;
    gsmooth_context_options_init(&o);
    o.backend = plugin;
    gsmooth_context *ctx = NULL;
    char err[GSMOOTH_ERR_SIZE];
    ck_assert_msg(gsmooth_context_create(&o, &ctx, err, sizeof err) == GSMOOTH_OK, "%s", err);
    return ctx;
}

static void assert_plugin_failed(const char *err, const char *reason)
{
    ck_assert_msg(strstr(err, "backend refuse-args failed: ") != NULL, "message: %s", err);
    ck_assert_msg(strstr(err, reason) != NULL, "message: %s", err);
}

START_TEST(plugin_failure_in_memory)
{
    gsmooth_context *ctx = refusing_context();
    char err[GSMOOTH_ERR_SIZE];
    uint8_t a[6 * 4] = {0}, b[6 * 4] = {0};
    uint32_t sums[6 * 4] = {0};
    gsmooth_image src = {a, 6, 6, 4, 8, GSMOOTH_MEMORY_HOST, 0}, dst = {b, 6, 6, 4, 8, GSMOOTH_MEMORY_HOST, 0};
    gsmooth_image table = {sums, 6 * sizeof *sums, 6, 4, 32, GSMOOTH_MEMORY_HOST, 0};
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &dst, 3, GSMOOTH_AXIS_X, err, sizeof err), GSMOOTH_ERR_BACKEND);
    assert_plugin_failed(err, REFUSE_ARGS_INVALID);
    ck_assert_int_eq(gsmooth_smooth(ctx, &src, &dst, 3, GSMOOTH_AXIS_Y, err, sizeof err), GSMOOTH_ERR_BACKEND);
    assert_plugin_failed(err, REFUSE_ARGS_INVALID);
    ck_assert_int_eq(gsmooth_integral(ctx, &src, &table, GSMOOTH_INTEGRAL_ROWS, err, sizeof err), GSMOOTH_ERR_NOMEM);
    assert_plugin_failed(err, REFUSE_ARGS_NOMEM);
    ck_assert_int_eq(gsmooth_integral(ctx, &src, &table, GSMOOTH_INTEGRAL_2D, err, sizeof err), GSMOOTH_ERR_NOMEM);
    assert_plugin_failed(err, REFUSE_ARGS_NOMEM);
    gsmooth_context_destroy(ctx);
}
END_TEST

/* One file through the refusing plugin: the status, the message led by the input's name,
 * and no output. */
static void check_file_failure(gsmooth_work_kind kind, uint32_t axes, const char *output,
                               gsmooth_status want, const char *reason)
{
    gsmooth_context *ctx = refusing_context();
    char in[4200], out[4200], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/inputs/gradient.png", golden);
    snprintf(out, sizeof out, "%s/%s", scratch, output);
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.kind = kind, fo.axes = axes;
    ck_assert_int_eq(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err), want);
    assert_plugin_failed(err, reason);
    ck_assert_msg(strncmp(err, in, strlen(in)) == 0, "message: %s", err);
    ck_assert_int_ne(access(out, F_OK), 0);
    gsmooth_context_destroy(ctx);
}

START_TEST(plugin_failure_from_files)
{
    check_file_failure(GSMOOTH_WORK_SMOOTH, GSMOOTH_AXIS_X, "refused_x.png", GSMOOTH_ERR_BACKEND, REFUSE_ARGS_INVALID);
    check_file_failure(GSMOOTH_WORK_SMOOTH, GSMOOTH_AXIS_Y, "refused_y.png", GSMOOTH_ERR_BACKEND, REFUSE_ARGS_INVALID);
    check_file_failure(GSMOOTH_WORK_INTEGRAL_ROWS, 0, "refused_rows.npy", GSMOOTH_ERR_NOMEM, REFUSE_ARGS_NOMEM);
    check_file_failure(GSMOOTH_WORK_INTEGRAL_2D, 0, "refused_2d.npy", GSMOOTH_ERR_NOMEM, REFUSE_ARGS_NOMEM);
}
END_TEST

/* What a file call's progress callback saw. */
typedef struct rows_seen {
    uint64_t last;         /* rows_done of the latest call */
    uint64_t total;        /* rows_total of every call (0 before the first) */
    unsigned calls, at_total; /* calls, and those with every row */
    int went_back;         /* rows_done fell, or rows_total changed */
} rows_seen;

static void count_rows(void *user, uint64_t rows_done, uint64_t rows_total, double elapsed_s)
{
    rows_seen *seen = user;
    if (rows_done < seen->last || (seen->calls && rows_total != seen->total) || elapsed_s < 0)
        seen->went_back = 1;
    seen->last = rows_done, seen->total = rows_total;
    seen->calls++;
    seen->at_total += rows_done == rows_total;
}

/* A tall 8-bit PGM, taller than one strip of the CPU backend (1 MiB of rows). */
#define TALL_WIDTH 64u
#define TALL_HEIGHT 40000u

/* Every kind of work on the tall image reports rows that never fall and reach the height
 * exactly once, in the last call, after more than one strip. */
START_TEST(file_progress_reports_rows)
{
    char in[4096], out[4096], err[GSMOOTH_ERR_SIZE];
    snprintf(in, sizeof in, "%s/tall.pgm", scratch);
    FILE *f = fopen(in, "wb");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "P5\n%u %u\n255\n", TALL_WIDTH, TALL_HEIGHT);
    for (uint32_t i = 0; i < TALL_WIDTH * TALL_HEIGHT; ++i) fputc((int)(i * 7 % 251), f);
    ck_assert_int_eq(fclose(f), 0);
    const struct {
        gsmooth_work_kind kind;
        uint32_t axes;
        const char *output; /* the .png integral is the picture, computed twice */
    } cases[] = {
        {GSMOOTH_WORK_SMOOTH, GSMOOTH_AXIS_X, "tall_x.pgm"},
        {GSMOOTH_WORK_SMOOTH, GSMOOTH_AXIS_Y, "tall_y.pgm"},
        {GSMOOTH_WORK_SMOOTH, GSMOOTH_AXIS_X | GSMOOTH_AXIS_Y, "tall_xy.pgm"},
        {GSMOOTH_WORK_INTEGRAL_ROWS, 0, "tall_rows.npy"},
        {GSMOOTH_WORK_INTEGRAL_2D, 0, "tall_2d.npy"},
        {GSMOOTH_WORK_INTEGRAL_2D, 0, "tall_2d.png"},
    };
    gsmooth_context *ctx = cpu_context();
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        rows_seen seen = {0, 0, 0, 0, 0};
        gsmooth_file_options fo;
        gsmooth_file_options_init(&fo);
        fo.kind = cases[c].kind, fo.axes = cases[c].axes;
        fo.progress = count_rows, fo.progress_user = &seen;
        snprintf(out, sizeof out, "%s/%s", scratch, cases[c].output);
        ck_assert_msg(gsmooth_file(ctx, &fo, in, out, NULL, err, sizeof err) == GSMOOTH_OK, "%s", err);
        ck_assert_msg(!seen.went_back, "%s: rows went back", cases[c].output);
        ck_assert_msg(seen.calls > 1, "%s: %u calls", cases[c].output, seen.calls);
        ck_assert_msg(seen.total == TALL_HEIGHT && seen.last == TALL_HEIGHT && seen.at_total == 1,
                      "%s: last %llu of %llu, %u calls at the total", cases[c].output,
                      (unsigned long long)seen.last, (unsigned long long)seen.total, seen.at_total);
    }
    gsmooth_context_destroy(ctx);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    golden = argv[1];
    snprintf(scratch, sizeof scratch, "/tmp/gsmooth-libtest-XXXXXX");
    if (!mkdtemp(scratch)) return 1;
    Suite *s = suite_create("libgsmooth");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, smooth_rows_golden);
    tcase_add_test(tc, smooth_16bit_golden);
    tcase_add_test(tc, smooth_columns_golden);
    tcase_add_test(tc, smooth_columns_16bit_golden);
    tcase_add_test(tc, integral_rows_golden);
    tcase_add_test(tc, integral_2d_golden);
    tcase_add_test(tc, file_to_file_golden);
    tcase_add_test(tc, batch_in_shards);
    tcase_add_test(tc, batch_relative_to);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, backends_listed);
    tcase_add_test(tc, compression_per_call);
    tcase_add_test(tc, older_struct_sizes);
    tcase_add_test(tc, file_skip_existing);
    tcase_add_test(tc, own_words);
    tcase_add_test(tc, plugin_failure_in_memory);
    tcase_add_test(tc, plugin_failure_from_files);
    tcase_add_test(tc, file_progress_reports_rows);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
    return failed ? 1 : 0;
}
