/* test_fits.c: the FITS reader and writer against files astropy wrote and cfitsio's and astropy's own. */
/* Every file of tests/external/fits (expected.txt) decodes to exactly the samples of its
 * .npy (raw bits, NaN positions too) from a file, from memory and from a pipe, read in
 * several row counts and strides; the refusals say why in one line; the pixel limit is
 * applied before any pixel memory; the WCS cards are kept; the writer round-trips through
 * the reader and leaves nothing behind when aborted. */

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_internal.h"

#ifndef GS_FITS_DIR
#error "GS_FITS_DIR must name tests/external/fits"
#endif

#define MAX_CASES 64
#define LINE_MAX_LEN 512

typedef struct fits_case {
    char name[LINE_MAX_LEN];
    int ok;            /* "ok": decodes; "fail": refused */
    unsigned bits;     /* 8, 16 or 32 */
    char phrase[LINE_MAX_LEN]; /* in the note (ok) or the error (fail) */
} fits_case;

static fits_case cases[MAX_CASES];
static size_t case_count;

static void load_cases(void)
{
    if (case_count) return;
    FILE *f = fopen(GS_FITS_DIR "/expected.txt", "r");
    ck_assert_msg(f != NULL, "cannot open expected.txt: %s", strerror(errno));
    char line[LINE_MAX_LEN];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        ck_assert_uint_lt(case_count, MAX_CASES);
        fits_case *c = &cases[case_count++];
        char *fields[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; ++i) {
            char *tab = strchr(fields[i - 1], '\t');
            ck_assert_msg(tab != NULL, "expected.txt: a line with fewer than 4 fields");
            *tab = '\0';
            fields[i] = tab + 1;
        }
        snprintf(c->name, sizeof c->name, "%s", fields[0]);
        c->ok = strcmp(fields[1], "ok") == 0;
        c->bits = (unsigned)atoi(fields[2]);
        snprintf(c->phrase, sizeof c->phrase, "%s", fields[3]);
    }
    fclose(f);
    ck_assert_uint_gt(case_count, 20);
}

/* The whole of a small file. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* An .npy of uint8, little-endian uint16 or float32 (this host is little-endian, which
 * io_internal.h states at compile time): the samples, their size in bits, and the shape. */
static unsigned char *load_npy(const char *path, unsigned *bits, uint32_t *width, uint32_t *height)
{
    size_t size = 0;
    unsigned char *file = slurp(path, &size);
    ck_assert_uint_ge(size, 10);
    ck_assert_int_eq(memcmp(file, "\x93NUMPY\x01\x00", 8), 0);
    const size_t header_len = file[8] | (size_t)file[9] << 8;
    char header[512];
    ck_assert_uint_lt(header_len, sizeof header);
    memcpy(header, file + 10, header_len);
    header[header_len] = '\0';
    *bits = strstr(header, "'|u1'") ? 8 : strstr(header, "'<u2'") ? 16 : strstr(header, "'<f4'") ? 32 : 0;
    ck_assert_msg(*bits != 0, "%s: unexpected dtype in %s", path, header);
    ck_assert_ptr_nonnull(strstr(header, "'fortran_order': False"));
    const char *shape = strstr(header, "'shape': (");
    ck_assert_ptr_nonnull(shape);
    unsigned h = 0, w = 0;
    ck_assert_int_eq(sscanf(shape, "'shape': (%u, %u)", &h, &w), 2);
    *width = w, *height = h;
    const size_t bytes = (size_t)w * h * (*bits / 8);
    ck_assert_uint_eq(size, 10 + header_len + bytes);
    unsigned char *samples = malloc(bytes);
    ck_assert_ptr_nonnull(samples);
    memcpy(samples, file + 10 + header_len, bytes);
    free(file);
    return samples;
}

static void path_of(char *out, size_t size, const char *name)
{
    ck_assert_int_lt(snprintf(out, size, "%s/%.*s", GS_FITS_DIR, (int)(size / 2), name), (int)size);
}

/* Every row of an open reader, `per_read` rows a read, each row `pad` bytes apart past its
 * end; compared with `want` (rows packed). */
static void read_all_and_compare(gs_reader *reader, const gs_image_info *info, const unsigned char *want,
                                 uint32_t per_read, size_t pad, const char *what)
{
    char err[GS_ERR_SIZE];
    const size_t row_bytes = (size_t)info->width * (info->bits / 8);
    const size_t stride = row_bytes + pad;
    unsigned char *buf = malloc(stride * per_read);
    ck_assert_ptr_nonnull(buf);
    for (uint32_t y = 0; y < info->height; y += per_read) {
        const uint32_t n = info->height - y < per_read ? info->height - y : per_read;
        memset(buf, 0xA5, stride * per_read);
        gs_status rc = gs_reader_read_rows(reader, buf, stride, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "%s: rows %u..: %s", what, y, err);
        for (uint32_t r = 0; r < n; ++r)
            ck_assert_msg(memcmp(buf + r * stride, want + (size_t)(y + r) * row_bytes, row_bytes) == 0,
                          "%s: row %u differs from the expected samples", what, y + r);
    }
    free(buf);
}

/* One case through gs_reader_open(path) and the checks of its verdict. */
static void check_case_at(const fits_case *c, const char *path, uint32_t per_read, size_t pad)
{
    char err[GS_ERR_SIZE] = "", npy[600];
    gs_reader *reader = NULL;
    gs_image_info info;
    gs_status rc = gs_reader_open(path, UINT64_C(1) << 30, &reader, &info, err, sizeof err);
    if (!c->ok) {
        ck_assert_msg(rc != GS_OK, "%s: decoded, but must be refused (%s)", c->name, c->phrase);
        ck_assert_msg(strstr(err, c->phrase) != NULL, "%s: error '%s' lacks '%s'", c->name, err, c->phrase);
        ck_assert_msg(strchr(err, '\n') == NULL, "%s: error of more than one line", c->name);
        ck_assert_ptr_null(reader);
        return;
    }
    ck_assert_msg(rc == GS_OK, "%s: %s", c->name, err);
    snprintf(npy, sizeof npy, "%.*s.npy", (int)strlen(path) - 5, path);
    unsigned bits = 0;
    uint32_t width = 0, height = 0;
    unsigned char *want = load_npy(npy, &bits, &width, &height);
    ck_assert_str_eq(info.format, "FITS");
    ck_assert_uint_eq(info.bits, c->bits);
    ck_assert_uint_eq(info.bits, bits);
    ck_assert_uint_eq(info.width, width);
    ck_assert_uint_eq(info.height, height);
    read_all_and_compare(reader, &info, want, per_read, pad, c->name);
    const char *note = gs_reader_note(reader);
    if (c->phrase[0])
        ck_assert_msg(note && strstr(note, c->phrase), "%s: note '%s' lacks '%s'", c->name,
                      note ? note : "(none)", c->phrase);
    else
        ck_assert_msg(note == NULL, "%s: an unexpected note '%s'", c->name, note);
    gs_reader_close(reader);
    free(want);
}

START_TEST(test_files_decode_exactly)
{
    load_cases();
    /* One row a read, 5 (a partial last read), and the whole image with padded rows. */
    static const struct { uint32_t per_read; size_t pad; } ways[] = {{1, 0}, {5, 0}, {5, 12}, {UINT32_MAX, 0}};
    for (size_t i = 0; i < case_count; ++i)
        for (size_t w = 0; w < sizeof ways / sizeof *ways; ++w) {
            char path[600];
            path_of(path, sizeof path, cases[i].name);
            check_case_at(&cases[i], path, ways[w].per_read == UINT32_MAX ? 100000 : ways[w].per_read,
                          ways[w].pad);
        }
}
END_TEST

/* The fuzz harness's way in: the opener on a source in memory. */
START_TEST(test_memory_input)
{
    load_cases();
    for (size_t i = 0; i < case_count; ++i) {
        const fits_case *c = &cases[i];
        char path[600], err[GS_ERR_SIZE] = "";
        path_of(path, sizeof path, c->name);
        size_t size = 0;
        unsigned char *data = slurp(path, &size);
        gs_reader *reader = calloc(1, sizeof *reader);
        ck_assert_ptr_nonnull(reader);
        gs_source_from_memory(&reader->src, data, size);
        reader->head_len = size < sizeof reader->head ? size : sizeof reader->head;
        memcpy(reader->head, data, reader->head_len);
        gs_status rc = gs_read_fits_open(reader, UINT64_C(1) << 30, err, sizeof err);
        if (!c->ok) {
            ck_assert_msg(rc != GS_OK && strstr(err, c->phrase), "%s from memory: '%s'", c->name, err);
        } else {
            ck_assert_msg(rc == GS_OK, "%s from memory: %s", c->name, err);
            char npy[600];
            snprintf(npy, sizeof npy, "%.*s.npy", (int)strlen(path) - 5, path);
            unsigned bits = 0;
            uint32_t width = 0, height = 0;
            unsigned char *want = load_npy(npy, &bits, &width, &height);
            ck_assert_uint_eq(reader->info.bits, bits);
            gs_image_info info = reader->info;
            read_all_and_compare(reader, &info, want, 7, 0, c->name);
            free(want);
        }
        gs_reader_close(reader);
        free(data);
    }
}
END_TEST

typedef struct pipe_feed {
    int fd;
    const unsigned char *data;
    size_t size;
} pipe_feed;

static void *feed_pipe(void *arg)
{
    pipe_feed *p = arg;
    for (size_t put = 0; put < p->size;) {
        ssize_t n = write(p->fd, p->data + put, p->size - put);
        if (n <= 0) break;
        put += (size_t)n;
    }
    close(p->fd);
    return NULL;
}

/* A pipe is spooled, then read like a file; every case, same samples, same verdicts. */
START_TEST(test_pipe_input)
{
    load_cases();
    for (size_t i = 0; i < case_count; ++i) {
        char path[600], pipe_path[64];
        path_of(path, sizeof path, cases[i].name);
        size_t size = 0;
        unsigned char *data = slurp(path, &size);
        int fds[2];
        ck_assert_int_eq(pipe(fds), 0);
        pipe_feed feed = {fds[1], data, size};
        pthread_t writer;
        ck_assert_int_eq(pthread_create(&writer, NULL, feed_pipe, &feed), 0);
        snprintf(pipe_path, sizeof pipe_path, "/dev/fd/%d", fds[0]);
        char err[GS_ERR_SIZE] = "";
        gs_reader *reader = NULL;
        gs_image_info info;
        gs_status rc = gs_reader_open(pipe_path, UINT64_C(1) << 30, &reader, &info, err, sizeof err);
        if (!cases[i].ok) {
            ck_assert_msg(rc != GS_OK && strstr(err, cases[i].phrase), "%s from a pipe: '%s'", cases[i].name, err);
        } else {
            ck_assert_msg(rc == GS_OK, "%s from a pipe: %s", cases[i].name, err);
            char npy[600];
            snprintf(npy, sizeof npy, "%.*s.npy", (int)strlen(path) - 5, path);
            unsigned bits = 0;
            uint32_t width = 0, height = 0;
            unsigned char *want = load_npy(npy, &bits, &width, &height);
            read_all_and_compare(reader, &info, want, 3, 0, cases[i].name);
            free(want);
        }
        gs_reader_close(reader);
        pthread_join(writer, NULL);
        close(fds[0]);
        free(data);
    }
}
END_TEST

/* gen_u8.fits with its cards from card 6 (EXTEND) on replaced by `cards` (then END), opened
 * from memory: the opener's status, err holding its reason. */
static gs_status open_edited_u8(const char *const *cards, size_t count, char *err, size_t err_size)
{
    size_t size = 0;
    unsigned char *data = slurp(GS_FITS_DIR "/gen_u8.fits", &size);
    ck_assert_mem_eq(data + 5 * 80, "EXTEND  =", 9);
    ck_assert_uint_lt(5 + count + 1, 36); /* the header stays one block */
    for (size_t i = 0; i <= count; ++i) {
        char card[81];
        snprintf(card, sizeof card, "%-80s", i < count ? cards[i] : "END");
        memcpy(data + (5 + i) * 80, card, 80);
    }
    gs_reader *reader = calloc(1, sizeof *reader);
    ck_assert_ptr_nonnull(reader);
    gs_source_from_memory(&reader->src, data, size);
    reader->head_len = size < sizeof reader->head ? size : sizeof reader->head;
    memcpy(reader->head, data, reader->head_len);
    err[0] = '\0';
    const gs_status rc = gs_read_fits_open(reader, UINT64_C(1) << 30, err, err_size);
    ck_assert_ptr_null(strchr(err, '\n'));
    gs_reader_close(reader);
    free(data);
    return rc;
}

/* A header that names a structure keyword twice is refused: cfitsio reads BITPIX, NAXIS and
 * NAXISn by position, so a second card could give it another shape than the header walk
 * (the fuzz finding had a second SIMPLE, BITPIX, NAXIS, NAXIS1 and NAXIS2 further down).
 * Other keywords may repeat. */
START_TEST(test_repeated_structure_keyword)
{
    static const struct {
        const char *card; /* as card 6, after NAXIS2 */
        const char *phrase;
    } repeats[] = {
        {"NAXIS1  =                   20", "card 6 repeats the structure keyword NAXIS1"},
        {"NAXIS   =                    1", "card 6 repeats the structure keyword NAXIS"},
        {"BITPIX  =                   16", "card 6 repeats the structure keyword BITPIX"},
        {"SIMPLE  =                    T", "card 6 repeats the structure keyword SIMPLE"},
    };
    char err[GS_ERR_SIZE];
    for (size_t i = 0; i < sizeof repeats / sizeof repeats[0]; ++i) {
        const gs_status rc = open_edited_u8(&repeats[i].card, 1, err, sizeof err);
        ck_assert_msg(rc == GS_ERR_FORMAT && strstr(err, repeats[i].phrase) &&
                          strcmp(strstr(err, repeats[i].phrase), repeats[i].phrase) == 0,
                      "%s: '%s'", repeats[i].card, err);
    }
    /* PCOUNT and GCOUNT once each are the standard's values; twice, refused */
    const char *counts[] = {"PCOUNT  =                    0", "GCOUNT  =                    1",
                            "PCOUNT  =                    0"};
    ck_assert_int_eq(open_edited_u8(counts, 2, err, sizeof err), GS_OK);
    ck_assert_int_eq(open_edited_u8(counts, 3, err, sizeof err), GS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, "card 8 repeats the structure keyword PCOUNT"));
    /* a keyword that is not structure may repeat; a NAXISn written otherwise is no NAXISn */
    const char *others[] = {"OBJECT  = 'M51'", "OBJECT  = 'M51'", "COMMENT twice", "COMMENT twice",
                            "NAXIS1 X=                   20", "NAXIS01 =                   20"};
    ck_assert_msg(open_edited_u8(others, 6, err, sizeof err) == GS_OK, "%s", err);
}
END_TEST

/* The header's claim is checked against --max-pixels before anything is allocated. */
START_TEST(test_pixel_limit)
{
    char err[GS_ERR_SIZE] = "";
    gs_reader *reader = NULL;
    gs_image_info info;
    gs_status rc = gs_reader_open(GS_FITS_DIR "/gen_u16.fits", 37 * 23 - 1, &reader, &info, err, sizeof err);
    ck_assert_int_eq(rc, GS_ERR_TOO_LARGE);
    ck_assert_ptr_null(reader);
    rc = gs_reader_open(GS_FITS_DIR "/gen_u16.fits", 37 * 23, &reader, &info, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s", err);
    gs_reader_close(reader);
}
END_TEST

/* The WCS cards of gen_wcs.fits, and nothing else of its header. */
START_TEST(test_wcs_cards)
{
    static const char *const kept[] = {"WCSAXES", "CRPIX1", "CRPIX2", "CUNIT1", "CUNIT2", "CTYPE1", "CTYPE2",
                                       "CRVAL1", "CRVAL2", "LONPOLE", "LATPOLE", "MJDREF", "DATE-OBS",
                                       "MJD-OBS", "RADESYS", "CD1_1", "CD1_2", "CD2_1", "CD2_2", "EQUINOX",
                                       "A_ORDER", "B_ORDER", "A_2_0", "B_0_2", "WCSNAMEA", "CTYPE1A",
                                       "CTYPE2A", "CRPIX1A", "CRPIX2A", "CRVAL1A", "CRVAL2A", "CDELT1A",
                                       "CDELT2A"};
    const size_t n_kept = sizeof kept / sizeof *kept;
    char err[GS_ERR_SIZE] = "";
    gs_reader *reader = NULL;
    gs_image_info info;
    ck_assert_msg(gs_reader_open(GS_FITS_DIR "/gen_wcs.fits", UINT64_C(1) << 30, &reader, &info, err,
                                 sizeof err) == GS_OK, "%s", err);
    size_t count = 0;
    const char *cards = gs_reader_fits_cards(reader, &count);
    ck_assert_uint_eq(count, n_kept);
    for (size_t i = 0; i < n_kept; ++i) {
        char key[9];
        snprintf(key, sizeof key, "%-8s", kept[i]);
        ck_assert_msg(memcmp(cards + i * 80, key, 8) == 0, "card %zu is '%.8s', not %s", i, cards + i * 80, kept[i]);
        ck_assert_int_eq(cards[i * 80 + 8], '=');
    }
    ck_assert_int_eq(memcmp(cards + 5 * 80, "CTYPE1  = 'RA---TAN-SIP'", 24), 0);
    gs_reader_close(reader);
    /* Other inputs have none. */
    ck_assert_msg(gs_reader_open(GS_FITS_DIR "/gen_u8.fits", UINT64_C(1) << 30, &reader, &info, err, sizeof err) == GS_OK,
                  "%s", err);
    ck_assert_ptr_null(gs_reader_fits_cards(reader, &count));
    ck_assert_uint_eq(count, 0);
    gs_reader_close(reader);
}
END_TEST

/* A scratch directory for the writer's tests. */
static void scratch_dir(char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/gsmooth-fits-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(out));
}

static size_t files_in(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    unsigned long n = 0;
    ck_assert_int_eq(fscanf(p, "%lu", &n), 1);
    pclose(p);
    return n;
}

/* Write `samples` (rows packed) as FITS, with `cards`, rows in reads of 4. */
static void write_fits(const char *path, gs_sample_kind kind, unsigned bits, uint32_t width, uint32_t height,
                       const unsigned char *samples, const char *cards, size_t card_count)
{
    char err[GS_ERR_SIZE] = "";
    gs_writer *w = NULL;
    ck_assert_msg(gs_writer_open_kind(path, GS_OUT_FITS, width, height, bits, kind, NULL, &w, err, sizeof err) == GS_OK,
                  "%s", err);
    if (card_count) ck_assert_msg(gs_writer_keep_cards(w, cards, card_count, err, sizeof err) == GS_OK, "%s", err);
    const size_t row_bytes = (size_t)width * (bits / 8);
    for (uint32_t y = 0; y < height; y += 4) {
        const uint32_t n = height - y < 4 ? height - y : 4;
        ck_assert_msg(gs_writer_write_rows(w, samples + y * row_bytes, row_bytes, n, err, sizeof err) == GS_OK, "%s", err);
    }
    ck_assert_msg(gs_writer_commit(w, err, sizeof err) == GS_OK, "%s", err);
}

/* FITS in, FITS out, FITS in: the same samples and the same WCS cards, for every file the
 * reader delivers as 8, 16 or float32 samples. */
START_TEST(test_writer_round_trip)
{
    load_cases();
    char dir[512], out[700];
    scratch_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/out.fits", dir);
    for (size_t i = 0; i < case_count; ++i) {
        if (!cases[i].ok) continue;
        char path[600], err[GS_ERR_SIZE] = "";
        path_of(path, sizeof path, cases[i].name);
        gs_reader *in = NULL;
        gs_image_info info;
        ck_assert_msg(gs_reader_open(path, UINT64_C(1) << 30, &in, &info, err, sizeof err) == GS_OK, "%s", err);
        const size_t row_bytes = (size_t)info.width * (info.bits / 8);
        unsigned char *samples = malloc(row_bytes * info.height);
        ck_assert_ptr_nonnull(samples);
        ck_assert_msg(gs_reader_read_rows(in, samples, row_bytes, info.height, err, sizeof err) == GS_OK, "%s", err);
        size_t count = 0;
        const char *cards = gs_reader_fits_cards(in, &count);
        write_fits(out, info.bits == 32 ? GS_SAMPLES_FLOAT : GS_SAMPLES_UINT, info.bits, info.width, info.height,
                   samples, cards, count);
        gs_reader *back = NULL;
        gs_image_info again;
        ck_assert_msg(gs_reader_open(out, UINT64_C(1) << 30, &back, &again, err, sizeof err) == GS_OK, "%s: %s",
                      cases[i].name, err);
        ck_assert_uint_eq(again.bits, info.bits);
        read_all_and_compare(back, &again, samples, 6, 0, cases[i].name);
        /* Written samples are never scaled or rounded again: no note on reading them back. */
        ck_assert_msg(gs_reader_note(back) == NULL, "%s: note '%s'", cases[i].name, gs_reader_note(back));
        size_t count_back = 0;
        const char *cards_back = gs_reader_fits_cards(back, &count_back);
        ck_assert_uint_eq(count_back, count);
        if (count) ck_assert_int_eq(memcmp(cards_back, cards, count * 80), 0);
        gs_reader_close(back);
        gs_reader_close(in);
        free(samples);
    }
    unlink(out);
    ck_assert_uint_eq(files_in(dir), 0);
    rmdir(dir);
}
END_TEST

/* The file layout: header and data in whole 2880-byte blocks, the data big-endian with the
 * unsigned offset (a 16-bit 0 is stored as 0x8000). */
START_TEST(test_writer_layout)
{
    char dir[512], out[700];
    scratch_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/layout.fits", dir);
    const uint16_t row[3] = {0, 1, 65535};
    write_fits(out, GS_SAMPLES_UINT, 16, 3, 1, (const unsigned char *)row, NULL, 0);
    size_t size = 0;
    unsigned char *file = slurp(out, &size);
    ck_assert_uint_eq(size, 2 * 2880);
    ck_assert_int_eq(memcmp(file, "SIMPLE  =                    T", 30), 0);
    const unsigned char data[6] = {0x80, 0x00, 0x80, 0x01, 0x7F, 0xFF};
    ck_assert_int_eq(memcmp(file + 2880, data, 6), 0);
    for (size_t i = 2880 + 6; i < size; ++i) ck_assert_int_eq(file[i], 0);
    free(file);
    unlink(out);
    rmdir(dir);
}
END_TEST

/* An aborted write leaves no file, and an existing output as it was; a failed open too. */
START_TEST(test_writer_abort)
{
    char dir[512], out[700], err[GS_ERR_SIZE];
    scratch_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/kept.fits", dir);
    FILE *f = fopen(out, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("old", f);
    fclose(f);
    gs_writer *w = NULL;
    ck_assert_int_eq(gs_writer_open_kind(out, GS_OUT_FITS, 8, 8, 32, GS_SAMPLES_FLOAT, NULL, &w, err, sizeof err), GS_OK);
    float rows[16] = {0};
    ck_assert_int_eq(gs_writer_write_rows(w, rows, 32, 2, err, sizeof err), GS_OK);
    gs_writer_abort(w);
    ck_assert_uint_eq(files_in(dir), 1);
    size_t size = 0;
    unsigned char *old = slurp(out, &size);
    ck_assert_uint_eq(size, 3);
    free(old);
    /* Samples of a size FITS has no BITPIX for: refused, nothing created. */
    ck_assert_int_ne(gs_writer_open_kind(out, GS_OUT_FITS, 8, 8, 24, GS_SAMPLES_UINT, NULL, &w, err, sizeof err), GS_OK);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_uint_eq(files_in(dir), 1);
    /* A kept card cfitsio refuses (a keyword with a character FITS forbids) fails the
     * write in one line. */
    ck_assert_int_eq(gs_writer_open_kind(out, GS_OUT_FITS, 8, 8, 8, GS_SAMPLES_UINT, NULL, &w, err, sizeof err), GS_OK);
    char bad[81];
    snprintf(bad, sizeof bad, "%-80s", "CT#PE1  = 'RA---TAN'");
    ck_assert_int_eq(gs_writer_keep_cards(w, bad, 1, err, sizeof err), GS_OK);
    unsigned char eight[64] = {0};
    gs_status rc = gs_writer_write_rows(w, eight, 8, 8, err, sizeof err);
    if (rc == GS_OK) rc = gs_writer_commit(w, err, sizeof err);
    else gs_writer_abort(w);
    ck_assert_msg(rc != GS_OK, "a card with a bad keyword was written");
    ck_assert_ptr_nonnull(strstr(err, "FITS: kept header card 1"));
    ck_assert_uint_eq(files_in(dir), 1);
    unlink(out);
    rmdir(dir);
}
END_TEST

static Suite *fits_suite(void)
{
    Suite *s = suite_create("fits");
    TCase *read = tcase_create("read");
    tcase_set_timeout(read, 60);
    tcase_add_test(read, test_files_decode_exactly);
    tcase_add_test(read, test_memory_input);
    tcase_add_test(read, test_pipe_input);
    tcase_add_test(read, test_repeated_structure_keyword);
    tcase_add_test(read, test_pixel_limit);
    tcase_add_test(read, test_wcs_cards);
    suite_add_tcase(s, read);
    TCase *write = tcase_create("write");
    tcase_set_timeout(write, 60);
    tcase_add_test(write, test_writer_round_trip);
    tcase_add_test(write, test_writer_layout);
    tcase_add_test(write, test_writer_abort);
    suite_add_tcase(s, write);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(fits_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
