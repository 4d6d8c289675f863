/* test_float_io.c: Check suite for float samples in the TIFF and .npy readers and writers. */
/* Files of other writers (tests/external/float) decoded bit for bit; gsmooth's own float
 * TIFF and .npy output read back by its reader across sizes; damaged .npy and float TIFF
 * refused with one line. `--write DIR` only writes the round-trip files and their raw
 * samples, for tests/float/check_float_writes.py to read with tifffile and numpy. */

#define _GNU_SOURCE /* memmem */
#include <check.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_io.h"
#include "scratch_dir.h"

#define ERR_SIZE 1024
#define DEFAULT_MAX_PIXELS ((uint64_t)1 << 30) /* the CLI's default --max-pixels */
/* Rows asked for per read: a prime, so reads straddle every strip and tile boundary. */
#define ROWS_PER_READ 7
/* The TIFF writer's strip (write_tiff.c's TIFF_STRIP_BYTES): heights one past a strip's
 * rows cross into a second strip. */
#define WRITER_STRIP_BYTES (256u << 10)
/* The widest row of the size sweep. */
#define SWEEP_WIDTH_MAX 70u

static const char *external_dir; /* tests/external/float */
static char root[PATH_MAX];       /* this run's scratch directory */

/* ---- files ---- */

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    const long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void spill(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static const char *in_root(const char *name) { return gs_test_path_in(root, name); }

/* An expected array as make_float_files.py saves it (numpy 1.0, little-endian, C order):
 * the samples after the header, their bits, and the shape. A parse of its own, not the
 * reader under test. */
typedef struct expected {
    unsigned char *file;
    const unsigned char *data;
    size_t bytes;
    unsigned bits;
    uint32_t width, height;
} expected;

static expected load_expected(const char *path)
{
    expected e = {0};
    size_t size = 0;
    e.file = slurp(path, &size);
    ck_assert_msg(size > 10 && memcmp(e.file, "\x93NUMPY\x01\x00", 8) == 0, "%s: not a numpy 1.0 file", path);
    const size_t header = (size_t)e.file[8] | (size_t)e.file[9] << 8;
    ck_assert(10 + header <= size);
    char text[256];
    ck_assert(header < sizeof text);
    memcpy(text, e.file + 10, header);
    text[header] = '\0';
    e.bits = strstr(text, "'<f4'") ? 32 : strstr(text, "'<u2'") ? 16 : strstr(text, "'|u1'") ? 8 : 0;
    ck_assert_msg(e.bits != 0, "%s: unexpected dtype in %s", path, text);
    const char *shape = strstr(text, "'shape': (");
    ck_assert_ptr_nonnull(shape);
    unsigned h = 0, w = 0;
    ck_assert_int_eq(sscanf(shape, "'shape': (%u, %u)", &h, &w), 2);
    e.height = h, e.width = w;
    e.data = e.file + 10 + header;
    e.bytes = size - 10 - header;
    ck_assert_uint_eq(e.bytes, (size_t)w * h * (e.bits / 8));
    return e;
}

/* Every row of `path` through gs_reader, ROWS_PER_READ at a time; the caller frees. */
static unsigned char *read_all(const char *path, gs_image_info *info, char *note, size_t note_size)
{
    char err[ERR_SIZE] = "";
    gs_reader *reader = NULL;
    gs_status rc = gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, info, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s: %s", path, err);
    const size_t row = (size_t)info->width * (info->bits / 8);
    unsigned char *all = malloc(row * info->height);
    ck_assert_ptr_nonnull(all);
    memset(all, 0xA5, row * info->height); /* a sample left unwritten shows */
    for (uint32_t y = 0; y < info->height; y += ROWS_PER_READ) {
        const uint32_t n = info->height - y < ROWS_PER_READ ? info->height - y : ROWS_PER_READ;
        rc = gs_reader_read_rows(reader, all + (size_t)y * row, row, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "%s rows %u+%u: %s", path, y, n, err);
    }
    const char *got = gs_reader_note(reader);
    snprintf(note, note_size, "%s", got ? got : "-");
    gs_reader_close(reader);
    return all;
}

/* The first sample that differs, as text, or NULL. */
static const char *first_difference(const unsigned char *got, const unsigned char *want, size_t bytes,
                                    unsigned bits, uint32_t width)
{
    static char why[160];
    const size_t step = bits / 8;
    for (size_t i = 0; i < bytes; i += step) {
        if (memcmp(got + i, want + i, step) == 0) continue;
        uint32_t g = 0, w = 0;
        memcpy(&g, got + i, step);
        memcpy(&w, want + i, step);
        snprintf(why, sizeof why, "sample (%zu, %zu): 0x%08x, want 0x%08x", i / step / width, i / step % width, g, w);
        return why;
    }
    return NULL;
}

/* ---- files of other writers ---- */

START_TEST(external_files)
{
    char manifest[PATH_MAX];
    snprintf(manifest, sizeof manifest, "%s/MANIFEST", external_dir);
    FILE *m = fopen(manifest, "r");
    ck_assert_msg(m != NULL, "cannot open %s", manifest);
    char line[512];
    unsigned read_ok = 0, refused = 0;
    while (fgets(line, sizeof line, m)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = '\0';
        char *name = strtok(line, "\t"), *expect = strtok(NULL, "\t"), *words = strtok(NULL, "\t");
        ck_assert(name && expect && words);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", external_dir, name);
        if (strcmp(expect, "refuse") == 0) {
            char err[ERR_SIZE] = "";
            gs_reader *reader = NULL;
            gs_image_info info;
            gs_status rc = gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err);
            ck_assert_msg(rc == GS_ERR_FORMAT && !reader, "%s: opened (%d), want a refusal", name, rc);
            ck_assert_msg(strstr(err, words) && !strchr(err, '\n'), "%s: refusal '%s' lacks '%s'", name, err, words);
            refused++;
            continue;
        }
        /* ../corpus/file.tif (a file of the external corpora) has expect_corpus_file.tif.npy */
        char expect_path[2 * PATH_MAX], note[ERR_SIZE], flat[PATH_MAX];
        snprintf(flat, sizeof flat, "%s", strncmp(name, "../", 3) == 0 ? name + 3 : name);
        for (char *c = flat; *c; c++)
            if (*c == '/') *c = '_';
        snprintf(expect_path, sizeof expect_path, "%s/expect_%s.npy", external_dir, flat);
        expected e = load_expected(expect_path);
        gs_image_info info;
        unsigned char *got = read_all(path, &info, note, sizeof note);
        ck_assert_msg(info.width == e.width && info.height == e.height && info.bits == e.bits,
                      "%s: %ux%u %u-bit, want %ux%u %u-bit", name, info.width, info.height, info.bits, e.width,
                      e.height, e.bits);
        const char *diff = first_difference(got, e.data, e.bytes, e.bits, e.width);
        ck_assert_msg(diff == NULL, "%s: %s", name, diff);
        ck_assert_msg(strcmp(note, words) == 0, "%s: note '%s', want '%s'", name, note, words);
        free(got);
        free(e.file);
        read_ok++;
    }
    fclose(m);
    ck_assert_uint_ge(read_ok, 40);
    ck_assert_uint_ge(refused, 10);
}
END_TEST

/* ---- gsmooth's own float output, read back ---- */

/* Sample (x, y) of the test pattern: a value from a hash over many magnitudes, with the
 * specials (NaN with a payload, infinities, signed zeros, subnormals) at fixed places. */
static double pattern(uint32_t x, uint32_t y)
{
    uint64_t h = ((uint64_t)y << 32 | x) * UINT64_C(0x9E3779B97F4A7C15);
    h ^= h >> 29;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 32;
    switch (h % 16) {
    case 0: return NAN;
    case 1: return (h & 32) ? INFINITY : -INFINITY;
    case 2: return (h & 32) ? 0.0 : -0.0;
    case 3: return (double)(h % 1000) * 1e-45; /* float32 subnormals */
    default: break;
    }
    const double mantissa = (double)(h >> 11) / (double)(UINT64_C(1) << 53) - 0.5;
    return ldexp(mantissa, (int)((h >> 4) % 200) - 100);
}

/* Rows of the pattern as float32 (bits 32) or float64 (bits 64). */
static void *pattern_rows(uint32_t width, uint32_t height, unsigned bits)
{
    unsigned char *rows = malloc((size_t)width * height * (bits / 8));
    ck_assert_ptr_nonnull(rows);
    for (uint32_t y = 0; y < height; y++)
        for (uint32_t x = 0; x < width; x++) {
            const double v = pattern(x, y);
            if (bits == 64) {
                memcpy(rows + ((size_t)y * width + x) * 8, &v, 8);
            } else {
                const float f = (float)v;
                memcpy(rows + ((size_t)y * width + x) * 4, &f, 4);
            }
        }
    return rows;
}

static void write_image(const char *path, gs_out_format fmt, int level, uint32_t width, uint32_t height,
                        unsigned bits, const void *rows)
{
    char err[ERR_SIZE] = "";
    gs_writer *writer = NULL;
    const gs_encode_settings enc = gs_encode_settings_make(level, 1);
    gs_status rc = gs_writer_open_kind(path, fmt, width, height, bits, GS_SAMPLES_FLOAT, &enc, &writer, err,
                                       sizeof err);
    ck_assert_msg(rc == GS_OK, "%s: %s", path, err);
    const size_t row = (size_t)width * (bits / 8);
    /* Rows in uneven pieces, as the pipeline's strips come. */
    for (uint32_t y = 0, n = 1; y < height; y += n, n = n * 2 + 1) {
        if (n > height - y) n = height - y;
        rc = gs_writer_write_rows(writer, (const unsigned char *)rows + (size_t)y * row, row, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "%s: %s", path, err);
    }
    rc = gs_writer_commit(writer, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s: %s", path, err);
}

/* Write the pattern, read it back: float32 bit for bit, float64 rounded to float32 with the note. */
static void round_trip(gs_out_format fmt, int level, uint32_t width, uint32_t height, unsigned bits)
{
    char name[96], note[ERR_SIZE];
    snprintf(name, sizeof name, "rt_%ux%u_%u_%d.%s", width, height, bits, level, fmt == GS_OUT_TIF ? "tif" : "npy");
    const char *path = in_root(name);
    void *rows = pattern_rows(width, height, bits);
    write_image(path, fmt, level, width, height, bits, rows);
    gs_image_info info;
    unsigned char *got = read_all(path, &info, note, sizeof note);
    ck_assert_msg(info.width == width && info.height == height && info.bits == 32, "%s: %ux%u %u-bit", name,
                  info.width, info.height, info.bits);
    float *want = bits == 32 ? rows : pattern_rows(width, height, 32);
    const char *diff = first_difference(got, (const unsigned char *)want, (size_t)width * height * 4, 32, width);
    ck_assert_msg(diff == NULL, "%s: %s", name, diff);
    ck_assert_msg(strcmp(note, bits == 64 ? "float64 samples rounded to float32" : "-") == 0, "%s: note '%s'",
                  name, note);
    if ((void *)want != rows) free(want);
    free(rows);
    free(got);
    unlink(path);
}

START_TEST(own_output_sizes)
{
    static const struct {
        gs_out_format fmt;
        int level;
    } outputs[] = {{GS_OUT_TIF, -1}, {GS_OUT_TIF, 0}, {GS_OUT_TIF, 9}, {GS_OUT_NPY, -1}};
    for (size_t o = 0; o < sizeof outputs / sizeof outputs[0]; o++)
        for (uint32_t w = 1; w <= SWEEP_WIDTH_MAX; w++) {
            round_trip(outputs[o].fmt, outputs[o].level, w, 1 + w % 9, 32);
            if (w % 23 == 1) round_trip(outputs[o].fmt, outputs[o].level, w, 3 + w % 5, 64);
        }
}
END_TEST

/* Heights one row past the writer's strips, so the reader's last block is a single row. */
START_TEST(own_output_strip_edges)
{
    static const uint32_t widths[] = {1, 3, 64, 70};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (unsigned bits = 32; bits <= 64; bits += 32) {
            const uint32_t strip_rows = WRITER_STRIP_BYTES / (widths[i] * (bits / 8));
            round_trip(GS_OUT_TIF, -1, widths[i], strip_rows + 1, bits);
            round_trip(GS_OUT_TIF, 0, widths[i], 2 * strip_rows - 1, bits);
            round_trip(GS_OUT_NPY, -1, widths[i], strip_rows + 1, bits);
        }
}
END_TEST

/* Float output only where the format stores floats; uint outputs keep their descr. */
START_TEST(float_refused_elsewhere)
{
    char err[ERR_SIZE] = "";
    gs_writer *writer = NULL;
    gs_status rc = gs_writer_open_kind(in_root("x.png"), GS_OUT_PNG, 4, 4, 32, GS_SAMPLES_FLOAT, NULL, &writer, err,
                                       sizeof err);
    ck_assert_int_eq(rc, GS_ERR_USAGE);
    ck_assert_ptr_null(writer);
    rc = gs_writer_open_kind(in_root("x.tif"), GS_OUT_TIF, 4, 4, 16, GS_SAMPLES_FLOAT, NULL, &writer, err,
                             sizeof err);
    ck_assert_int_eq(rc, GS_ERR_USAGE);
    const uint32_t v[4] = {1, 2, 3, 4};
    rc = gs_writer_open(in_root("u.npy"), GS_OUT_NPY, 4, 1, 32, NULL, &writer, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s", err);
    ck_assert_int_eq(gs_writer_write_rows(writer, v, sizeof v, 1, err, sizeof err), GS_OK);
    ck_assert_int_eq(gs_writer_commit(writer, err, sizeof err), GS_OK);
    size_t size = 0;
    unsigned char *file = slurp(in_root("u.npy"), &size);
    ck_assert_ptr_nonnull(memmem(file, size, "'descr': '<u4'", 14));
    free(file);
}
END_TEST

/* ---- damaged inputs ---- */

/* A numpy 1.0 header around `dict` (padded to 64 bytes as numpy pads it). */
static size_t npy_header(unsigned char *out, size_t cap, const char *dict, unsigned major)
{
    const size_t pre = major == 1 ? 10 : 12, len = strlen(dict);
    const size_t total = (pre + len + 1 + 63) / 64 * 64;
    ck_assert(total <= cap);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major, out[7] = 0;
    const size_t hlen = total - pre;
    for (size_t i = 0; i < pre - 8; i++) out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out + pre, dict, len);
    memset(out + pre + len, ' ', hlen - len - 1);
    out[total - 1] = '\n';
    return total;
}

/* gs_reader_open or the rows after it must fail with `status` and a line holding `words`. */
static void expect_refusal(const char *label, const void *bytes, size_t n, gs_status status, const char *words,
                           uint64_t max_pixels)
{
    const char *path = in_root("damaged.npy");
    spill(path, bytes, n);
    char err[ERR_SIZE] = "";
    gs_reader *reader = NULL;
    gs_image_info info;
    gs_status rc = gs_reader_open(path, max_pixels, &reader, &info, err, sizeof err);
    if (rc == GS_OK) {
        const size_t row = (size_t)info.width * (info.bits / 8);
        unsigned char *buf = malloc(row);
        ck_assert_ptr_nonnull(buf);
        for (uint32_t y = 0; y < info.height && rc == GS_OK; y++)
            rc = gs_reader_read_rows(reader, buf, row, 1, err, sizeof err);
        free(buf);
        gs_reader_close(reader);
    }
    ck_assert_msg(rc == status, "%s: status %d, want %d (%s)", label, rc, status, err);
    ck_assert_msg(strstr(err, words) != NULL && strchr(err, '\n') == NULL, "%s: '%s' lacks '%s'", label, err,
                  words);
}

START_TEST(damaged_npy)
{
    unsigned char buf[4096];
    const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }";
    size_t h = npy_header(buf, sizeof buf, good, 1);
    memset(buf + h, 0x3F, 60);
    expect_refusal("whole", buf, h + 60, GS_OK, "", DEFAULT_MAX_PIXELS);
    expect_refusal("truncated data", buf, h + 59, GS_ERR_FORMAT, "truncated .npy", DEFAULT_MAX_PIXELS);
    expect_refusal("no data", buf, h, GS_ERR_FORMAT, "truncated .npy", DEFAULT_MAX_PIXELS);
    expect_refusal("truncated header", buf, h - 5, GS_ERR_FORMAT, "truncated .npy", DEFAULT_MAX_PIXELS);
    expect_refusal("magic only", buf, 6, GS_ERR_FORMAT, ".npy", DEFAULT_MAX_PIXELS);
    unsigned char past[64];
    memcpy(past, buf, sizeof past);
    past[8] = 0xFF, past[9] = 0x7F; /* 32767 header bytes in a 64-byte file */
    expect_refusal("header length past the file", past, sizeof past, GS_ERR_FORMAT, "truncated .npy",
                   DEFAULT_MAX_PIXELS);
    h = npy_header(buf, sizeof buf, good, 2);
    buf[8] = 0, buf[9] = 0, buf[10] = 0, buf[11] = 0x10; /* 256 MiB of header */
    expect_refusal("header length huge", buf, h, GS_ERR_FORMAT, "bytes long", DEFAULT_MAX_PIXELS);
    h = npy_header(buf, sizeof buf, good, 4);
    expect_refusal("version 4.0", buf, h + 60, GS_ERR_FORMAT, "version 4.0", DEFAULT_MAX_PIXELS);
    h = npy_header(buf, sizeof buf, good, 1);
    buf[7] = 1;
    expect_refusal("version 1.1", buf, h + 60, GS_ERR_FORMAT, "version 1.1", DEFAULT_MAX_PIXELS);

    static const struct {
        const char *dict, *words;
        gs_status status;
    } headers[] = {
        {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape'", GS_ERR_FORMAT},
        {"{'fortran_order': False, 'shape': (3, 5), }", "no 'descr'", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'shape': (3, 5), }", "no 'fortran_order'", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, -5), }", "negative", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 99999999999999999999999), }", "past 2^64",
         GS_ERR_TOO_LARGE},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4294967296), }", "too large", GS_ERR_TOO_LARGE},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }", "pixel limit", GS_ERR_TOO_LARGE},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", "not a tuple", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), 'extra': 1}", "other than", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 5)}", "twice", GS_ERR_FORMAT},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (3, 5)}", "no ','", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3, 5)}", "True or False", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (03, 5)}", "leading zero", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5)} x", "not padding", GS_ERR_FORMAT},
        {"['descr', '<f4']", "not a dict", GS_ERR_FORMAT},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (3, 5)}", "dtype '=f4' .npy", GS_ERR_FORMAT},
        {"{'descr': '<x9', 'fortran_order': False, 'shape': (3, 5)}", "dtype '<x9'", GS_ERR_FORMAT},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 5)}", "ascontiguousarray", GS_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        h = npy_header(buf, sizeof buf, headers[i].dict, 1);
        memset(buf + h, 0, 60);
        /* The pixel-limit case must be refused before the rows are even looked for. */
        expect_refusal(headers[i].dict, buf, h + 60, headers[i].status, headers[i].words, DEFAULT_MAX_PIXELS);
    }
    /* No newline at the end of the padding. */
    h = npy_header(buf, sizeof buf, good, 1);
    buf[h - 1] = ' ';
    expect_refusal("no newline", buf, h + 60, GS_ERR_FORMAT, "newline", DEFAULT_MAX_PIXELS);
    /* The pixel limit itself: 15 pixels pass at 15, fail at 14. */
    h = npy_header(buf, sizeof buf, good, 1);
    expect_refusal("limit 15", buf, h + 60, GS_OK, "", 15);
    expect_refusal("limit 14", buf, h + 60, GS_ERR_TOO_LARGE, "pixel limit", 14);
}
END_TEST

/* Float TIFFs of other writers (directory first, samples after it) cut at every eighth
 * past their directory, uncompressed and deflated with predictor 3: an error, never a
 * short image. */
START_TEST(truncated_float_tiff)
{
    static const char *const names[] = {"f32_strips5.tif", "f32_deflate_pred3.tif", "f32_lzw_pred3.tif",
                                        "f64_be_deflate.tif", "f32_tiles_deflate.tif"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", external_dir, names[i]);
        size_t size = 0;
        unsigned char *file = slurp(path, &size);
        for (size_t k = 1; k < 8; k++) {
            const size_t cut = size * k / 8;
            const char *cut_path = in_root("cut.tif");
            spill(cut_path, file, cut);
            char err[ERR_SIZE] = "";
            gs_reader *reader = NULL;
            gs_image_info info;
            gs_status rc = gs_reader_open(cut_path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err);
            if (rc == GS_OK) {
                const size_t row = (size_t)info.width * (info.bits / 8);
                unsigned char *buf = malloc(row * info.height);
                ck_assert_ptr_nonnull(buf);
                rc = gs_reader_read_rows(reader, buf, row, info.height, err, sizeof err);
                free(buf);
                gs_reader_close(reader);
            }
            ck_assert_msg(rc != GS_OK && err[0] && !strchr(err, '\n'), "%s cut at %zu of %zu: %d '%s'", names[i],
                          cut, size, rc, err);
        }
        free(file);
    }
}
END_TEST

/* ---- --write DIR: files for the Python check ---- */

static const char *write_dir; /* --write DIR */

/* Each file beside `<name>.raw`, the native samples given to the writer. */
START_TEST(write_for_python)
{
    const char *dir = write_dir;
    static const struct {
        const char *name;
        gs_out_format fmt;
        int level;
        uint32_t width, height;
        unsigned bits;
    } files[] = {
        {"f32_default.tif", GS_OUT_TIF, -1, 37, 29, 32}, {"f32_store.tif", GS_OUT_TIF, 0, 37, 29, 32},
        {"f32_level9.tif", GS_OUT_TIF, 9, 70, 3000, 32}, {"f64_default.tif", GS_OUT_TIF, -1, 41, 13, 64},
        {"f64_store.tif", GS_OUT_TIF, 0, 41, 13, 64},     {"f32.npy", GS_OUT_NPY, -1, 37, 29, 32},
        {"f64.npy", GS_OUT_NPY, -1, 41, 13, 64},         {"f32_1x1.npy", GS_OUT_NPY, -1, 1, 1, 32},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        void *rows = pattern_rows(files[i].width, files[i].height, files[i].bits);
        write_image(path, files[i].fmt, files[i].level, files[i].width, files[i].height, files[i].bits, rows);
        snprintf(path, sizeof path, "%s/%s.raw", dir, files[i].name);
        spill(path, rows, (size_t)files[i].width * files[i].height * (files[i].bits / 8));
        free(rows);
    }
}
END_TEST

/* ---- runner ---- */

static Suite *float_io_suite(void)
{
    Suite *s = suite_create("float_io");
    TCase *tc = tcase_create("float_io");
    tcase_set_timeout(tc, 120);
    if (write_dir) { /* the Python check's files alone */
        tcase_add_test(tc, write_for_python);
        suite_add_tcase(s, tc);
        return s;
    }
    tcase_add_test(tc, external_files);
    tcase_add_test(tc, own_output_sizes);
    tcase_add_test(tc, own_output_strip_edges);
    tcase_add_test(tc, float_refused_elsewhere);
    tcase_add_test(tc, damaged_npy);
    tcase_add_test(tc, truncated_float_tiff);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) write_dir = argv[2];
    else if (argc != 2) {
        fprintf(stderr, "usage: test_float_io EXTERNAL_FLOAT_DIR | --write DIR\n");
        return 2;
    }
    external_dir = write_dir ? NULL : argv[1];
    if (gs_test_make_dir(root, sizeof root, NULL, "gs_float_io_") != 0) {
        perror("test_float_io: cannot create a scratch directory");
        return EXIT_FAILURE;
    }
    SRunner *runner = srunner_create(float_io_suite());
    srunner_run_all(runner, CK_NORMAL);
    const int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    /* files left behind fail the run: a suite cleans up after itself */
    const int left = gs_test_remove_tree(root) != 0;
    return failed == 0 && !left ? EXIT_SUCCESS : EXIT_FAILURE;
}
