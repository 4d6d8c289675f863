/* test_bmp_tga.c: Check suite for the BMP and TGA readers on files made here. */
/* Files are made byte by byte: every header kind, bit depth and origin, widths 1 to 9 and
 * across the readers' chunks, run-length data whose runs cross rows. Each is read from a
 * file and through a pipe against gray values computed here from the pixels put in; the
 * refusals too. */

#define _GNU_SOURCE
#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_io.h"
#include "scratch_dir.h"

/*
 * The expected gray of every pixel is computed here from what the test put in the file,
 * with the rules written out again (not taken from io/): BT.601 in libjpeg's fixed point,
 * a channel of n bits widened as floor(v * 255 / (2^n - 1)), an index past a palette
 * black, pixels that run-length data skips palette index 0.
 */

#define ERR_SIZE 256
#define DEFAULT_MAX_PIXELS ((uint64_t)1 << 30) /* the CLI's default --max-pixels */
#define SCRATCH_SIZE 512
/* Widths every layout is made at: 1 to 9 cross the row padding of every bit depth. */
#define NARROW_MAX 9
/* The readers decode rows in chunks of 4096 pixels; these widths straddle a chunk. */
static const uint32_t chunk_widths[] = {4095, 4096, 4097};
/* Rows per test image: odd, so bottom-up and top-down differ in every row but the middle. */
#define TEST_HEIGHT 3
/* Rows asked for per read, with a stride wider than a row. */
#define ROWS_PER_READ 2
#define STRIDE_EXTRA 5

static char root[SCRATCH_SIZE];
static char scratch[SCRATCH_SIZE];

/* ---- scratch directory ---- */

static void setup(void)
{
    ck_assert_int_eq(gs_test_make_dir(scratch, sizeof scratch, root, "test_"), 0);
}

static void teardown(void)
{
    gs_test_remove_tree(scratch);
}

static const char *in_scratch(const char *name) { return gs_test_path_in(scratch, name); }

/* ---- the rules, written out again ---- */

static uint8_t luma(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((19595u * r + 38470u * g + 7471u * b + 32768u) >> 16);
}

static uint32_t widen(uint32_t v, unsigned bits)
{
    return (uint32_t)((uint64_t)v * 255 / ((UINT64_C(1) << bits) - 1));
}

/* A fixed sequence, so every run makes the same files. */
static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* ---- bytes of a file being made ---- */

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put8(bytes *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put16(bytes *b, uint32_t v)
{
    put8(b, v & 0xFF), put8(b, v >> 8 & 0xFF);
}

static void put32(bytes *b, uint32_t v)
{
    put16(b, v & 0xFFFF), put16(b, v >> 16);
}

static void set32(bytes *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++) b->p[at + i] = (unsigned char)(v >> (8 * i));
}

/* ---- reading a made file: from a file and through a pipe ---- */

typedef struct feeder {
    const char *path;
    const unsigned char *data;
    size_t n;
} feeder;

/* The writer end of a FIFO: open (meets the reader's open), write everything it can. */
static void *feed(void *arg)
{
    const feeder *f = arg;
    int fd = open(f->path, O_WRONLY);
    if (fd < 0) return NULL;
    size_t done = 0;
    while (done < f->n) { /* EPIPE (SIGPIPE ignored) ends it when the reader stops early */
        ssize_t w = write(fd, f->data + done, f->n - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    close(fd);
    return NULL;
}

/* Open `path`, read every row (ROWS_PER_READ at a time, a stride wider than the row) into
 * a fresh buffer of width * height; the status of the first call that failed. */
static gs_status read_all(const char *path, uint64_t max_pixels, gs_image_info *info,
                          uint8_t **out, char *err)
{
    gs_reader *reader = NULL;
    *out = NULL;
    gs_status rc = gs_reader_open(path, max_pixels, &reader, info, err, ERR_SIZE);
    if (rc != GS_OK) return rc;
    const size_t stride = info->width + STRIDE_EXTRA;
    uint8_t *rows = malloc(stride * ROWS_PER_READ);
    uint8_t *img = malloc((size_t)info->width * info->height);
    ck_assert(rows && img);
    for (uint32_t y = 0; y < info->height && rc == GS_OK; y += ROWS_PER_READ) {
        uint32_t n = info->height - y < ROWS_PER_READ ? info->height - y : ROWS_PER_READ;
        rc = gs_reader_read_rows(reader, rows, stride, n, err, ERR_SIZE);
        for (uint32_t r = 0; r < n && rc == GS_OK; r++)
            memcpy(img + (size_t)(y + r) * info->width, rows + r * stride, info->width);
    }
    free(rows);
    gs_reader_close(reader);
    if (rc == GS_OK) *out = img;
    else free(img);
    return rc;
}

/* The same through a FIFO fed by a thread. */
static gs_status read_all_piped(const bytes *file, uint64_t max_pixels, gs_image_info *info,
                                uint8_t **out, char *err)
{
    const char *fifo = in_scratch("in.fifo");
    unlink(fifo);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    feeder f = {fifo, file->p, file->n};
    pthread_t writer;
    ck_assert_int_eq(pthread_create(&writer, NULL, feed, &f), 0);
    gs_status rc = read_all(fifo, max_pixels, info, out, err);
    /* A reader that failed before opening leaves the writer waiting in open: meet it. */
    int fd = open(fifo, O_RDONLY | O_NONBLOCK);
    pthread_join(writer, NULL);
    if (fd >= 0) close(fd);
    unlink(fifo);
    return rc;
}

/* Decode `file` from a file and through a pipe; both must give `want` and the flags. */
static void expect_image(const char *label, const bytes *file, const char *format, uint32_t w,
                         uint32_t h, const uint8_t *want, int was_color, int had_alpha)
{
    const char *path = in_scratch("made.img");
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(file->p, 1, file->n, fp), file->n);
    ck_assert_int_eq(fclose(fp), 0);
    for (int piped = 0; piped <= 1; piped++) {
        gs_image_info info;
        uint8_t *got = NULL;
        char err[ERR_SIZE] = "";
        gs_status rc = piped ? read_all_piped(file, DEFAULT_MAX_PIXELS, &info, &got, err)
                             : read_all(path, DEFAULT_MAX_PIXELS, &info, &got, err);
        const char *how = piped ? "through a pipe" : "from a file";
        ck_assert_msg(rc == GS_OK, "%s %s: %s", label, how, err);
        ck_assert_msg(info.width == w && info.height == h && info.bits == 8,
                      "%s %s: %ux%u %u-bit, want %ux%u 8-bit", label, how, info.width, info.height,
                      info.bits, w, h);
        ck_assert_str_eq(info.format, format);
        ck_assert_msg(info.was_color == was_color && info.had_alpha == had_alpha,
                      "%s %s: was_color %d had_alpha %d, want %d %d", label, how, info.was_color,
                      info.had_alpha, was_color, had_alpha);
        for (size_t i = 0; i < (size_t)w * h; i++)
            ck_assert_msg(got[i] == want[i], "%s %s: pixel (%zu, %zu) is %u, want %u", label, how,
                          i % w, i / w, got[i], want[i]);
        free(got);
    }
}

/* `file` must be refused, from a file and through a pipe, with `status` and a message
 * holding `words`. */
static void expect_refusal(const char *label, const bytes *file, uint64_t max_pixels,
                           gs_status status, const char *words)
{
    const char *path = in_scratch("bad.img");
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(file->p, 1, file->n, fp), file->n);
    ck_assert_int_eq(fclose(fp), 0);
    for (int piped = 0; piped <= 1; piped++) {
        gs_image_info info;
        uint8_t *got = NULL;
        char err[ERR_SIZE] = "";
        gs_status rc = piped ? read_all_piped(file, max_pixels, &info, &got, err)
                             : read_all(path, max_pixels, &info, &got, err);
        const char *how = piped ? "through a pipe" : "from a file";
        free(got);
        ck_assert_msg(rc == status, "%s %s: status %d (%s), want %d", label, how, rc, err, status);
        ck_assert_msg(strstr(err, words) && !strchr(err, '\n'), "%s %s: message \"%s\", want \"%s\"",
                      label, how, err, words);
    }
}

/* ---- BMP ---- */

#define BMP_RLE8 1
#define BMP_RLE4 2
#define BMP_BITFIELDS 3
#define BMP_ALPHABITFIELDS 6

typedef struct bmp_layout {
    uint32_t header;      /* 12 (OS/2 v1), 16 (OS/2 v2), 40, 52, 56, 108, 124 */
    unsigned bpp;
    uint32_t compression;
    uint32_t colors_used; /* the header's field */
    unsigned palette;     /* entries written */
    uint32_t masks[4];    /* for bit fields: after a 40-byte header, else inside it */
    unsigned masks_after; /* masks written after a 40-byte header: 3 or 4 */
    size_t gap;           /* bytes between the palette and the pixels */
} bmp_layout;

/* Headers and palette of a BMP; the pixel offset is patched once known (bmp_pixels_start). */
static void bmp_begin(bytes *b, const bmp_layout *l, int32_t w, int32_t h, const unsigned char *palette)
{
    put(b, "BM", 2);
    put32(b, 0), put32(b, 0), put32(b, 0); /* file size, reserved, offset (patched) */
    put32(b, l->header);
    if (l->header == 12) {
        put16(b, (uint32_t)w), put16(b, (uint32_t)h), put16(b, 1), put16(b, l->bpp);
    } else {
        unsigned char field[124] = {0};
        bytes hb = {0};
        put32(&hb, (uint32_t)w), put32(&hb, (uint32_t)h), put16(&hb, 1), put16(&hb, l->bpp);
        put32(&hb, l->compression), put32(&hb, 0), put32(&hb, 2835), put32(&hb, 2835);
        put32(&hb, l->colors_used), put32(&hb, 0);
        for (int i = 0; i < 4; i++) put32(&hb, l->masks[i]);
        memcpy(field, hb.p, hb.n);
        free(hb.p);
        put(b, field, l->header - 4);
    }
    for (unsigned i = 0; i < l->masks_after; i++) put32(b, l->masks[i]);
    const unsigned entry = l->header == 12 ? 3 : 4;
    put(b, palette, (size_t)l->palette * entry);
    for (size_t i = 0; i < l->gap; i++) put8(b, 0xEE);
    set32(b, 10, (uint32_t)b->n);
}

/* A palette of `n` random entries (blue, green, red[, 0]) and its gray per index. */
static void random_palette(unsigned char *pal, uint8_t *gray, unsigned n, unsigned entry)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned char *e = pal + (size_t)i * entry;
        e[0] = (unsigned char)rnd(), e[1] = (unsigned char)rnd(), e[2] = (unsigned char)rnd();
        if (entry == 4) e[3] = 0;
        gray[i] = luma(e[2], e[1], e[0]);
    }
}

/* Uncompressed palette BMPs of every index width, both row orders, widths 1..9. */
START_TEST(bmp_palettes)
{
    static const unsigned depths[] = {1, 2, 4, 8};
    for (unsigned d = 0; d < 4; d++)
        for (uint32_t w = 1; w <= NARROW_MAX; w++)
            for (int top_down = 0; top_down <= 1; top_down++) {
                const unsigned bpp = depths[d], entries = bpp == 8 ? 200 : 1u << bpp;
                bmp_layout l = {40, bpp, 0, entries, entries, {0}, 0, 0};
                unsigned char pal[256 * 4];
                uint8_t gray[256];
                random_palette(pal, gray, entries, 4);
                bytes b = {0};
                bmp_begin(&b, &l, (int32_t)w, top_down ? -TEST_HEIGHT : TEST_HEIGHT, pal);
                uint8_t want[NARROW_MAX * TEST_HEIGHT];
                const size_t stride = ((size_t)w * bpp + 31) / 32 * 4;
                for (uint32_t i = 0; i < TEST_HEIGHT; i++) {
                    unsigned char row[64] = {0};
                    memset(row, 0xA5, stride); /* padding bits and bytes must not matter */
                    const uint32_t y = top_down ? i : TEST_HEIGHT - 1 - i;
                    for (uint32_t x = 0; x < w; x++) {
                        unsigned index = rnd() % entries, shift = 8 - bpp - (x * bpp) % 8;
                        row[x * bpp / 8] &= (unsigned char)~(((1u << bpp) - 1) << shift);
                        row[x * bpp / 8] |= (unsigned char)(index << shift);
                        want[y * w + x] = gray[index];
                    }
                    put(&b, row, stride);
                }
                char label[64];
                snprintf(label, sizeof label, "%u-bit palette, width %u, %s", bpp, w, top_down ? "top-down" : "bottom-up");
                expect_image(label, &b, "BMP", w, TEST_HEIGHT, want, 1, 0);
                free(b.p);
            }
}
END_TEST

/* One 16/24/32-bit pixel: random bytes; its gray by the layout's masks. */
static uint8_t pixel_gray(const uint32_t *masks, uint32_t v)
{
    uint32_t c[3];
    for (int i = 0; i < 3; i++) {
        uint32_t m = masks[i];
        unsigned shift = 0, bits = 0;
        if (!m) {
            c[i] = 0;
            continue;
        }
        while (!(m >> shift & 1)) shift++;
        while (shift + bits < 32 && (m >> (shift + bits) & 1)) bits++;
        c[i] = widen((v & m) >> shift, bits);
    }
    return luma(c[0], c[1], c[2]);
}

/* 16/24/32-bit BMPs: BI_RGB's defaults and bit fields in each place masks can be. */
START_TEST(bmp_true_colour)
{
    static const struct {
        const char *name;
        bmp_layout l;
        uint32_t gray_masks[3]; /* what the reader must apply */
        int alpha;
    } kinds[] = {
        {"16-bit BI_RGB (x1r5g5b5)", {40, 16, 0, 0, 0, {0}, 0, 0}, {0x7C00, 0x03E0, 0x001F}, 0},
        {"16-bit 5-6-5 after a 40-byte header", {40, 16, BMP_BITFIELDS, 0, 0, {0xF800, 0x07E0, 0x001F}, 3, 0},
         {0xF800, 0x07E0, 0x001F}, 0},
        {"16-bit 4-4-4-4 in a v5 header", {124, 16, BMP_BITFIELDS, 0, 0, {0x0F00, 0x00F0, 0x000F, 0xF000}, 0, 0},
         {0x0F00, 0x00F0, 0x000F}, 1},
        {"16-bit 2-3-1 in a v2 header", {52, 16, BMP_BITFIELDS, 0, 0, {0x0030, 0x000E, 0x0001}, 0, 0},
         {0x0030, 0x000E, 0x0001}, 0},
        {"24-bit BI_RGB", {40, 24, 0, 0, 0, {0}, 0, 0}, {0xFF0000, 0x00FF00, 0x0000FF}, 0},
        {"24-bit with a 16-colour palette and a gap", {40, 24, 0, 16, 16, {0}, 0, 37},
         {0xFF0000, 0x00FF00, 0x0000FF}, 0},
        {"24-bit bit fields, blue high", {40, 24, BMP_BITFIELDS, 0, 0, {0x0000FF, 0x00FF00, 0xFF0000}, 3, 0},
         {0x0000FF, 0x00FF00, 0xFF0000}, 0},
        {"32-bit BI_RGB (x8)", {40, 32, 0, 0, 0, {0}, 0, 0}, {0xFF0000, 0x00FF00, 0x0000FF}, 0},
        {"32-bit RGBA in a v4 header", {108, 32, BMP_BITFIELDS, 0, 0, {0xFF, 0xFF00, 0xFF0000, 0xFF000000}, 0, 0},
         {0xFF, 0xFF00, 0xFF0000}, 1},
        {"32-bit ALPHABITFIELDS after a 40-byte header",
         {40, 32, BMP_ALPHABITFIELDS, 0, 0, {0xFF000000, 0xFF00, 0xFF, 0xFF0000}, 4, 0},
         {0xFF000000, 0xFF00, 0xFF}, 1},
        {"32-bit 10-10-10 in a v3 header", {56, 32, BMP_BITFIELDS, 0, 0, {0x3FF00000, 0xFFC00, 0x3FF}, 0, 0},
         {0x3FF00000, 0xFFC00, 0x3FF}, 0},
        {"24-bit OS/2 v1", {12, 24, 0, 0, 0, {0}, 0, 0}, {0xFF0000, 0x00FF00, 0x0000FF}, 0},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (uint32_t w = 1; w <= NARROW_MAX; w++)
            for (int top_down = 0; top_down <= (kinds[k].l.header != 12); top_down++) {
                const bmp_layout *l = &kinds[k].l;
                unsigned char pal[16 * 4];
                uint8_t unused[16];
                random_palette(pal, unused, l->palette, 4);
                bytes b = {0};
                bmp_begin(&b, l, (int32_t)w, top_down ? -TEST_HEIGHT : TEST_HEIGHT, pal);
                uint8_t want[NARROW_MAX * TEST_HEIGHT];
                const unsigned bytes_per = l->bpp / 8;
                const size_t stride = ((size_t)w * l->bpp + 31) / 32 * 4;
                for (uint32_t i = 0; i < TEST_HEIGHT; i++) {
                    unsigned char row[NARROW_MAX * 4 + 4];
                    for (size_t j = 0; j < stride; j++) row[j] = (unsigned char)rnd();
                    const uint32_t y = top_down ? i : TEST_HEIGHT - 1 - i;
                    for (uint32_t x = 0; x < w; x++) {
                        uint32_t v = 0;
                        for (unsigned j = 0; j < bytes_per; j++) v |= (uint32_t)row[x * bytes_per + j] << (8 * j);
                        want[y * w + x] = pixel_gray(kinds[k].gray_masks, v);
                    }
                    put(&b, row, stride);
                }
                char label[128];
                snprintf(label, sizeof label, "%s, width %u, %s", kinds[k].name, w, top_down ? "top-down" : "bottom-up");
                expect_image(label, &b, "BMP", w, TEST_HEIGHT, want, 1, kinds[k].alpha);
                free(b.p);
            }
}
END_TEST

/* OS/2 headers: v1 with 3-byte entries and a palette shorter than 256 whose size only the
 * pixel offset tells (the file stb_image read 4 entries short), v2 of 16 and 64 bytes. */
START_TEST(bmp_os2_palettes)
{
    static const uint32_t headers[] = {12, 16, 64};
    for (int k = 0; k < 3; k++)
        for (uint32_t w = 1; w <= NARROW_MAX; w++) {
            const unsigned entry = headers[k] == 12 ? 3 : 4, entries = headers[k] == 12 ? 20 : 256;
            bmp_layout l = {headers[k], 8, 0, 0, entries, {0}, 0, 0};
            unsigned char pal[256 * 4];
            uint8_t gray[256];
            random_palette(pal, gray, entries, entry);
            bytes b = {0};
            bmp_begin(&b, &l, (int32_t)w, TEST_HEIGHT, pal);
            uint8_t want[NARROW_MAX * TEST_HEIGHT];
            const size_t stride = ((size_t)w + 3) / 4 * 4;
            for (uint32_t i = 0; i < TEST_HEIGHT; i++) {
                unsigned char row[12] = {0};
                for (uint32_t x = 0; x < w; x++) {
                    row[x] = (unsigned char)(rnd() % entries);
                    want[(TEST_HEIGHT - 1 - i) * w + x] = gray[row[x]];
                }
                put(&b, row, stride);
            }
            char label[64];
            snprintf(label, sizeof label, "OS/2 %u-byte header, width %u", headers[k], w);
            expect_image(label, &b, "BMP", w, TEST_HEIGHT, want, 1, 0);
            free(b.p);
        }
}
END_TEST

/* Rows wider than the reader's 4096-pixel chunk, 1-bit and 24-bit; and a pixel offset
 * 100,000 bytes past the palette, beyond what a pipe keeps for going back (64 KiB). */
START_TEST(bmp_wide_rows_and_far_pixels)
{
    for (size_t k = 0; k < sizeof chunk_widths / sizeof chunk_widths[0]; k++)
        for (unsigned bpp = 1; bpp <= 24; bpp += 23) {
            const uint32_t w = chunk_widths[k];
            bmp_layout l = {40, bpp, 0, bpp == 1 ? 2 : 0, bpp == 1 ? 2 : 0, {0}, 0, k == 0 ? 100000 : 0};
            unsigned char pal[8];
            uint8_t gray[2];
            random_palette(pal, gray, l.palette, 4);
            bytes b = {0};
            bmp_begin(&b, &l, (int32_t)w, TEST_HEIGHT, pal);
            uint8_t *want = malloc((size_t)w * TEST_HEIGHT);
            const size_t stride = ((size_t)w * bpp + 31) / 32 * 4;
            unsigned char *row = malloc(stride);
            ck_assert(want && row);
            for (uint32_t i = 0; i < TEST_HEIGHT; i++) {
                for (size_t j = 0; j < stride; j++) row[j] = (unsigned char)rnd();
                for (uint32_t x = 0; x < w; x++)
                    want[(TEST_HEIGHT - 1 - i) * (size_t)w + x] =
                        bpp == 1 ? gray[row[x / 8] >> (7 - x % 8) & 1]
                                 : luma(row[3 * x + 2], row[3 * x + 1], row[3 * x]);
                put(&b, row, stride);
            }
            char label[64];
            snprintf(label, sizeof label, "%u-bit, width %u", bpp, w);
            expect_image(label, &b, "BMP", w, TEST_HEIGHT, want, 1, 0);
            free(row);
            free(want);
            free(b.p);
        }
}
END_TEST

/* Random index images through an RLE encoder of the test's own (encoded runs, absolute
 * runs padded to 16 bits, an end of line per row, an end of bitmap), RLE8 and RLE4, both
 * row orders; a tall one so the data crosses the reader's 16 KiB read-ahead. */
static void rle_image(unsigned bpp, uint32_t w, uint32_t h, int top_down)
{
    const unsigned entries = bpp == 8 ? 256 : 16;
    bmp_layout l = {40, bpp, bpp == 8 ? BMP_RLE8 : BMP_RLE4, entries, entries, {0}, 0, 0};
    unsigned char pal[256 * 4];
    uint8_t gray[256];
    random_palette(pal, gray, entries, 4);
    bytes b = {0};
    bmp_begin(&b, &l, (int32_t)w, top_down ? -(int32_t)h : (int32_t)h, pal);
    const size_t data_at = b.n;
    uint8_t *want = malloc((size_t)w * h);
    uint8_t *idx = malloc(w);
    ck_assert(want && idx);
    for (uint32_t i = 0; i < h; i++) {
        const uint32_t y = top_down ? i : h - 1 - i;
        for (uint32_t x = 0; x < w;) { /* segments of runs and noise */
            uint32_t n = 1 + rnd() % 12;
            if (n > w - x) n = w - x;
            const int run = rnd() % 2;
            const unsigned a = rnd() % entries, c = rnd() % entries;
            for (uint32_t j = 0; j < n; j++)
                idx[x + j] = (uint8_t)(run ? (bpp == 8 || j % 2 == 0 ? a : c) : rnd() % entries);
            if (run || n < 3) { /* encoded: one value (RLE4: two alternating) */
                put8(&b, n), put8(&b, bpp == 8 ? a : (a << 4 | (n > 1 ? c : 0)));
                if (!run)
                    for (uint32_t j = 0; j < n; j++) idx[x + j] = (uint8_t)(bpp == 8 || j % 2 == 0 ? a : (n > 1 ? c : 0));
            } else { /* absolute */
                put8(&b, 0), put8(&b, n);
                const size_t start = b.n;
                if (bpp == 8)
                    for (uint32_t j = 0; j < n; j++) put8(&b, idx[x + j]);
                else
                    for (uint32_t j = 0; j < n; j += 2) put8(&b, idx[x + j] << 4 | (j + 1 < n ? idx[x + j + 1] : 0));
                if ((b.n - start) % 2) put8(&b, 0);
            }
            for (uint32_t j = 0; j < n; j++) want[(size_t)y * w + x + j] = gray[idx[x + j]];
            x += n;
        }
        if (i + 1 < h) put8(&b, 0), put8(&b, 0);
    }
    put8(&b, 0), put8(&b, 1);
    ck_assert((data_at - 0) % 2 == 0); /* the word padding above counts from an even offset */
    char label[64];
    snprintf(label, sizeof label, "RLE%u %ux%u %s", bpp, w, h, top_down ? "top-down" : "bottom-up");
    expect_image(label, &b, "BMP", w, h, want, 1, 0);
    free(idx);
    free(want);
    free(b.p);
}

START_TEST(bmp_rle_round_trips)
{
    for (unsigned bpp = 4; bpp <= 8; bpp += 4) {
        for (uint32_t w = 1; w <= NARROW_MAX; w++)
            for (int top_down = 0; top_down <= 1; top_down++) rle_image(bpp, w, TEST_HEIGHT, top_down);
        rle_image(bpp, 301, 199, 0);
    }
}
END_TEST

/* Run-length data that bends the format, with the image each must give (Pillow's rules):
 * runs past the row's end, deltas, an early end of bitmap, no end of bitmap at all. */
START_TEST(bmp_rle_escapes)
{
    static const struct {
        const char *name;
        unsigned bpp;
        uint32_t w, h;
        unsigned char data[32];
        size_t len;
        uint8_t want[12]; /* indices, top row first */
    } cases[] = {
        /* An encoded run past the row's end is cut there (3x2: the bottom row 7 7 7), the
         * end of line finds the row full, an end of bitmap leaves the last pixel unset. */
        {"encoded run cut at the row's end", 8, 3, 2, {5, 7, 0, 0, 2, 4, 0, 1}, 8, {4, 4, 0, 7, 7, 7}},
        /* An absolute run goes on into the next row; x then counts past the width, so the
         * encoded run after it writes nothing; the end of line pads the row reached. */
        {"absolute run across rows", 8, 3, 2, {2, 7, 0, 3, 1, 2, 3, 0, 5, 9, 0, 0}, 12, {2, 3, 0, 7, 7, 1}},
        /* A delta of 1 right, 1 up from (1, 0) to (2, 1): skipped pixels are index 0; the
         * data may end at the last pixel with no end of bitmap. */
        {"delta", 8, 3, 2, {1, 5, 0, 2, 1, 1, 1, 6}, 8, {0, 0, 6, 5, 0, 0}},
        /* An end of bitmap after the first pixel: the rest is index 0. */
        {"early end of bitmap", 8, 2, 2, {1, 9, 0, 1}, 4, {0, 0, 9, 0}},
        /* End of line in mid-row pads it; the next run starts the next row. */
        {"end of line", 8, 3, 2, {1, 4, 0, 0, 2, 5, 0, 1}, 8, {5, 5, 0, 4, 0, 0}},
        /* RLE4: an odd absolute run (5 nibbles in 3 bytes, padded to 16 bits), then an
         * encoded run of alternating nibbles cut at the row's end. */
        {"RLE4 odd absolute run", 4, 5, 2, {0, 5, 0x12, 0x34, 0x50, 0, 0, 0, 9, 0xAB}, 10,
         {10, 11, 10, 11, 10, 1, 2, 3, 4, 5}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const unsigned entries = 1u << cases[k].bpp;
        bmp_layout l = {40, cases[k].bpp, cases[k].bpp == 8 ? BMP_RLE8 : BMP_RLE4, entries, entries, {0}, 0, 0};
        unsigned char pal[256 * 4];
        uint8_t gray[256];
        random_palette(pal, gray, entries, 4);
        bytes b = {0};
        bmp_begin(&b, &l, (int32_t)cases[k].w, (int32_t)cases[k].h, pal);
        put(&b, cases[k].data, cases[k].len);
        uint8_t want[12];
        for (uint32_t i = 0; i < cases[k].w * cases[k].h; i++) want[i] = gray[cases[k].want[i]];
        expect_image(cases[k].name, &b, "BMP", cases[k].w, cases[k].h, want, 1, 0);
        free(b.p);
    }
}
END_TEST

/* Indices past the palette: black, except past a palette that is the gray ramp 0, 1, 2,
 * ... (Pillow reads such files as gray levels), where an index is its own level; a gray
 * palette converts no colour. */
START_TEST(bmp_palette_edges)
{
    for (int ramp = 0; ramp <= 1; ramp++) {
        unsigned char pal[3 * 4] = {0};
        uint8_t gray[3];
        if (ramp)
            for (unsigned i = 0; i < 3; i++) pal[4 * i] = pal[4 * i + 1] = pal[4 * i + 2] = (unsigned char)i, gray[i] = (uint8_t)i;
        else
            random_palette(pal, gray, 3, 4);
        bmp_layout l = {40, 8, 0, 3, 3, {0}, 0, 0};
        bytes b = {0};
        bmp_begin(&b, &l, 4, 1, pal);
        static const unsigned char row[4] = {0, 2, 3, 200};
        put(&b, row, 4);
        uint8_t want[4] = {gray[0], gray[2], (uint8_t)(ramp ? 3 : 0), (uint8_t)(ramp ? 200 : 0)};
        expect_image(ramp ? "index past a gray-ramp palette" : "index past a palette", &b, "BMP", 4, 1, want,
                     !ramp, 0);
        free(b.p);
    }
    /* A pixel offset pointing into the headers (0, and the info header's end) means the
     * pixels follow the palette, as Pillow reads such files; the last row needs no padding. */
    for (int k = 0; k < 2; k++) {
        unsigned char pal[2 * 4] = {10, 20, 30, 0, 200, 100, 50, 0};
        bmp_layout l = {40, 8, 0, 2, 2, {0}, 0, 0};
        bytes b = {0};
        bmp_begin(&b, &l, 3, 2, pal);
        set32(&b, 10, k == 0 ? 0 : 54);
        static const unsigned char rows[7] = {1, 0, 1, 0xEE, 0, 0, 1}; /* no padding after the last */
        put(&b, rows, sizeof rows);
        const uint8_t a = luma(30, 20, 10), c = luma(50, 100, 200);
        const uint8_t want[6] = {a, a, c, c, a, c};
        expect_image(k == 0 ? "pixel offset 0" : "pixel offset 54", &b, "BMP", 3, 2, want, 1, 0);
        free(b.p);
    }
}
END_TEST

START_TEST(bmp_refusals)
{
    unsigned char pal[256 * 4] = {0};
    bmp_layout l8 = {40, 8, 0, 0, 256, {0}, 0, 0};
    bytes b = {0};
    /* Pixel data shorter than the rows: truncated (a bottom-up file fails at open). */
    bmp_begin(&b, &l8, 5, 4, pal);
    for (int i = 0; i < 3 * 8 + 4; i++) put8(&b, 1); /* the last row one pixel short */
    expect_refusal("short pixel data", &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "truncated BMP");
    b.n = 0;
    bmp_begin(&b, &(bmp_layout){40, 8, BMP_RLE8, 0, 256, {0}, 0, 0}, 5, 4, pal);
    put8(&b, 5), put8(&b, 1), put8(&b, 0), put8(&b, 0), put8(&b, 3);
    expect_refusal("short run-length data", &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "truncated BMP");
    /* Headers that lie or that BMP has not. */
    static const struct {
        const char *name;
        bmp_layout l;
        int32_t w, h;
        const char *words;
    } bad[] = {
        {"a 66-byte header", {66, 8, 0, 0, 0, {0}, 0, 0}, 4, 4, "header of 66 bytes"},
        {"width 0", {40, 24, 0, 0, 0, {0}, 0, 0}, 0, 4, "invalid BMP header"},
        {"negative width", {40, 24, 0, 0, 0, {0}, 0, 0}, -4, 4, "invalid BMP header"},
        {"3 bits per pixel", {40, 3, 0, 0, 0, {0}, 0, 0}, 4, 4, "3 bits per pixel"},
        {"RLE8 of 4-bit pixels", {40, 4, BMP_RLE8, 0, 16, {0}, 0, 0}, 4, 4, "RLE8 needs 8 bits"},
        {"embedded JPEG", {124, 24, 4, 0, 0, {0}, 0, 0}, 4, 4, "JPEG"},
        {"embedded PNG", {124, 24, 5, 0, 0, {0}, 0, 0}, 4, 4, "PNG"},
        {"a mask of two runs", {40, 16, BMP_BITFIELDS, 0, 0, {0xF00F, 0x0F0, 0x0, 0}, 3, 0}, 4, 4, "mask"},
        {"a mask past 16 bits", {40, 16, BMP_BITFIELDS, 0, 0, {0x1F0000, 0x7E0, 0x1F, 0}, 3, 0}, 4, 4, "mask"},
        {"70000 colours", {40, 8, 0, 70000, 0, {0}, 0, 0}, 4, 4, "palette of 70000"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        b.n = 0;
        bmp_begin(&b, &bad[k].l, bad[k].w, bad[k].h, pal);
        for (int i = 0; i < 256; i++) put8(&b, 0);
        expect_refusal(bad[k].name, &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, bad[k].words);
    }
    /* Over --max-pixels from the header alone, before any pixel. */
    b.n = 0;
    bmp_begin(&b, &(bmp_layout){40, 24, 0, 0, 0, {0}, 0, 0}, 100000, -100000, pal);
    expect_refusal("100000x100000", &b, DEFAULT_MAX_PIXELS, GS_ERR_TOO_LARGE, "--max-pixels");
    b.n = 0;
    bmp_begin(&b, &(bmp_layout){40, 8, BMP_RLE8, 0, 256, {0}, 0, 0}, 2000, 2000, pal);
    expect_refusal("RLE8 2000x2000 at a 1 Mpx limit", &b, UINT64_C(1) << 20, GS_ERR_TOO_LARGE, "--max-pixels");
    free(b.p);
}
END_TEST

/* ---- TGA ---- */

enum tga_kind { TGA_GRAY8, TGA_GRAY16, TGA_RGB15, TGA_RGB16, TGA_RGB24, TGA_RGB32,
                TGA_MAP8_24, TGA_MAP8_16, TGA_MAP8_32, TGA_MAP16_24, TGA_KINDS };

static const struct {
    const char *name;
    unsigned type, depth, map_depth, attribute_bits;
    int colour, alpha;
} tga_kinds[TGA_KINDS] = {
    [TGA_GRAY8] = {"8-bit gray", 3, 8, 0, 0, 0, 0},
    [TGA_GRAY16] = {"gray+alpha", 3, 16, 0, 8, 0, 1},
    [TGA_RGB15] = {"15-bit colour", 2, 15, 0, 0, 1, 0},
    [TGA_RGB16] = {"16-bit colour, 1 alpha bit", 2, 16, 0, 1, 1, 1},
    [TGA_RGB24] = {"24-bit colour", 2, 24, 0, 0, 1, 0},
    [TGA_RGB32] = {"32-bit colour", 2, 32, 0, 8, 1, 1},
    [TGA_MAP8_24] = {"8-bit indices, 24-bit map", 1, 8, 24, 0, 1, 0},
    [TGA_MAP8_16] = {"8-bit indices, 16-bit map", 1, 8, 16, 0, 1, 0},
    [TGA_MAP8_32] = {"8-bit indices, 32-bit map", 1, 8, 32, 8, 1, 1},
    [TGA_MAP16_24] = {"16-bit indices, 24-bit map", 1, 16, 24, 0, 1, 0},
};

/* A colour map's first index and length: values below and past it are black. */
#define TGA_MAP_FIRST 3
#define TGA_MAP_LENGTH 7
#define TGA_MAP16_FIRST 300

static uint8_t five_bit_gray(uint32_t v)
{
    return luma(widen(v >> 10 & 31, 5), widen(v >> 5 & 31, 5), widen(v & 31, 5));
}

/* A TGA of `kind`, origin from `descriptor` bits (0x10 right to left, 0x20 top down),
 * raw or run-length (packets of random kinds and lengths that run on across rows). */
static void tga_image(enum tga_kind kind, uint32_t w, uint32_t h, unsigned origin, int rle)
{
    const unsigned pb = (tga_kinds[kind].depth + 7) / 8, map_eb = (tga_kinds[kind].map_depth + 7) / 8;
    const unsigned first = kind == TGA_MAP16_24 ? TGA_MAP16_FIRST : TGA_MAP_FIRST;
    const int mapped = tga_kinds[kind].type == 1;
    bytes b = {0};
    static const char id[] = "id!"; /* an ID field to skip */
    put8(&b, sizeof id - 1);
    put8(&b, mapped || kind == TGA_RGB24); /* a true-colour file may carry a map too: skipped */
    put8(&b, tga_kinds[kind].type | (rle ? 8u : 0u));
    put16(&b, mapped ? first : 0), put16(&b, mapped || kind == TGA_RGB24 ? TGA_MAP_LENGTH : 0);
    put8(&b, mapped ? tga_kinds[kind].map_depth : kind == TGA_RGB24 ? 24 : 0);
    put16(&b, 0), put16(&b, 0), put16(&b, w), put16(&b, h);
    put8(&b, tga_kinds[kind].depth), put8(&b, origin | tga_kinds[kind].attribute_bits);
    put(&b, id, sizeof id - 1);
    uint8_t map_gray[TGA_MAP_LENGTH];
    for (unsigned i = 0; i < (mapped || kind == TGA_RGB24 ? TGA_MAP_LENGTH : 0); i++) {
        unsigned char e[4];
        for (unsigned j = 0; j < 4; j++) e[j] = (unsigned char)rnd();
        put(&b, e, map_eb ? map_eb : 3);
        map_gray[i] = map_eb == 2 ? five_bit_gray(e[0] | (uint32_t)e[1] << 8) : luma(e[2], e[1], e[0]);
    }
    /* The pixels in file order, and each one's gray. */
    const size_t total = (size_t)w * h;
    unsigned char *px = malloc(total * pb);
    uint8_t *gray_of = malloc(total), *want = malloc(total);
    ck_assert(px && gray_of && want);
    for (size_t i = 0; i < total; i++) {
        unsigned char *p = px + i * pb;
        for (unsigned j = 0; j < pb; j++) p[j] = (unsigned char)rnd();
        if (mapped) { /* indices around the map: below, inside, past */
            const unsigned index = first - 2 + rnd() % (TGA_MAP_LENGTH + 4);
            p[0] = (unsigned char)index;
            if (pb == 2) p[1] = (unsigned char)(index >> 8);
            gray_of[i] = index >= first && index < first + TGA_MAP_LENGTH ? map_gray[index - first] : 0;
        } else if (kind == TGA_GRAY8 || kind == TGA_GRAY16) {
            gray_of[i] = p[0];
        } else if (pb == 2) {
            gray_of[i] = five_bit_gray(p[0] | (uint32_t)p[1] << 8);
        } else {
            gray_of[i] = luma(p[2], p[1], p[0]);
        }
    }
    if (!rle) {
        put(&b, px, total * pb);
    } else { /* a run packet repeats one pixel: make the stream's pixels agree with it */
        for (size_t i = 0; i < total;) {
            size_t n = 1 + rnd() % 128;
            if (n > total - i) n = total - i;
            if (rnd() % 2) {
                put8(&b, 0x80u | (unsigned)(n - 1));
                put(&b, px + i * pb, pb);
                for (size_t j = 1; j < n; j++) {
                    memcpy(px + (i + j) * pb, px + i * pb, pb);
                    gray_of[i + j] = gray_of[i];
                }
            } else {
                put8(&b, (unsigned)(n - 1));
                put(&b, px + i * pb, n * pb);
            }
            i += n;
        }
    }
    for (size_t i = 0; i < total; i++) {
        const size_t fy = i / w, fx = i % w;
        const size_t y = origin & 0x20 ? fy : h - 1 - fy, x = origin & 0x10 ? w - 1 - fx : fx;
        want[y * w + x] = gray_of[i];
    }
    static const char footer[] = "\0\0\0\0\0\0\0\0TRUEVISION-XFILE.";
    put(&b, footer, sizeof footer);
    char label[128];
    snprintf(label, sizeof label, "TGA %s%s %ux%u, origin 0x%02x", rle ? "RLE " : "", tga_kinds[kind].name, w, h, origin);
    expect_image(label, &b, "TGA", w, h, want, tga_kinds[kind].colour, tga_kinds[kind].alpha);
    free(want);
    free(gray_of);
    free(px);
    free(b.p);
}

START_TEST(tga_every_kind_and_origin)
{
    for (int kind = 0; kind < TGA_KINDS; kind++)
        for (unsigned origin = 0; origin <= 0x30; origin += 0x10)
            for (int rle = 0; rle <= 1; rle++)
                for (uint32_t w = 1; w <= NARROW_MAX; w++) tga_image((enum tga_kind)kind, w, TEST_HEIGHT, origin, rle);
}
END_TEST

START_TEST(tga_wide_rows)
{
    for (size_t k = 0; k < sizeof chunk_widths / sizeof chunk_widths[0]; k++)
        for (unsigned origin = 0; origin <= 0x30; origin += 0x30)
            for (int rle = 0; rle <= 1; rle++) tga_image(TGA_RGB32, chunk_widths[k], TEST_HEIGHT, origin, rle);
}
END_TEST

/* Pillow's 1-bit gray TGA (type 3, depth 1): rows of bits padded to a byte, every origin. */
START_TEST(tga_bilevel)
{
    for (uint32_t w = 1; w <= NARROW_MAX; w++)
        for (unsigned origin = 0; origin <= 0x30; origin += 0x10) {
            bytes b = {0};
            const unsigned char head[18] = {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, (unsigned char)w, 0,
                                            TEST_HEIGHT, 0, 1, (unsigned char)origin};
            put(&b, head, sizeof head);
            uint8_t want[NARROW_MAX * TEST_HEIGHT];
            for (uint32_t i = 0; i < TEST_HEIGHT; i++) {
                unsigned char row[2] = {(unsigned char)rnd(), (unsigned char)rnd()};
                put(&b, row, (w + 7) / 8);
                const uint32_t y = origin & 0x20 ? i : TEST_HEIGHT - 1 - i;
                for (uint32_t j = 0; j < w; j++) {
                    const uint32_t x = origin & 0x10 ? w - 1 - j : j;
                    want[y * w + x] = row[j / 8] >> (7 - j % 8) & 1 ? 255 : 0;
                }
            }
            char label[64];
            snprintf(label, sizeof label, "1-bit TGA, width %u, origin 0x%02x", w, origin);
            expect_image(label, &b, "TGA", w, TEST_HEIGHT, want, 0, 0);
            free(b.p);
        }
}
END_TEST

START_TEST(tga_refusals)
{
    /* 18-byte headers that are no TGA (it has no signature): "not an image". */
    static const struct {
        const char *name;
        unsigned char h[18];
    } not_tga[] = {
        {"image type 0", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0}},
        {"image type 4", {0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0}},
        {"map type 2", {0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 24, 0}},
        {"12-bit colour", {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 12, 0}},
        {"24-bit gray", {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 24, 0}},
        {"mapped without a map", {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0}},
        {"an 8-bit map", {0, 1, 1, 0, 0, 4, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0}},
        {"width 0", {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 24, 0}},
        {"interleaved", {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0x40}},
        {"run-length 1-bit", {0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 1, 0}},
    };
    bytes b = {0};
    for (size_t k = 0; k < sizeof not_tga / sizeof not_tga[0]; k++) {
        b.n = 0;
        put(&b, not_tga[k].h, sizeof not_tga[k].h);
        for (int i = 0; i < 64; i++) put8(&b, 0);
        expect_refusal(not_tga[k].name, &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "not an image");
    }
    /* Truncated pixels (raw, run-length, top-down so read row by row) and colour map. */
    static const unsigned char raw_gray[18] = {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0};
    static const unsigned char rle_top[18] = {0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0x20};
    static const unsigned char mapped[18] = {0, 1, 1, 0, 0, 0, 1, 24, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0};
    b.n = 0;
    put(&b, raw_gray, 18);
    for (int i = 0; i < 15; i++) put8(&b, 7);
    expect_refusal("15 of 16 raw pixels", &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "truncated TGA");
    b.n = 0;
    put(&b, rle_top, 18);
    put8(&b, 0x80 | 9), put8(&b, 5), put8(&b, 2), put8(&b, 1);
    expect_refusal("a raw packet cut short", &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "truncated TGA");
    b.n = 0;
    put(&b, mapped, 18);
    for (int i = 0; i < 100; i++) put8(&b, 1);
    expect_refusal("a colour map cut short", &b, DEFAULT_MAX_PIXELS, GS_ERR_FORMAT, "colour map");
    /* Over --max-pixels from the header alone. */
    static const unsigned char huge[18] = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 24, 0};
    b.n = 0;
    put(&b, huge, 18);
    expect_refusal("65535x65535", &b, UINT64_C(1) << 30, GS_ERR_TOO_LARGE, "--max-pixels");
    free(b.p);
}
END_TEST

static Suite *bmp_tga_suite(void)
{
    Suite *s = suite_create("bmp_tga");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bmp_palettes);
    tcase_add_test(tc, bmp_true_colour);
    tcase_add_test(tc, bmp_os2_palettes);
    tcase_add_test(tc, bmp_wide_rows_and_far_pixels);
    tcase_add_test(tc, bmp_rle_round_trips);
    tcase_add_test(tc, bmp_rle_escapes);
    tcase_add_test(tc, bmp_palette_edges);
    tcase_add_test(tc, bmp_refusals);
    tcase_add_test(tc, tga_every_kind_and_origin);
    tcase_add_test(tc, tga_wide_rows);
    tcase_add_test(tc, tga_bilevel);
    tcase_add_test(tc, tga_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a reader that stops early: its pipe's writer gets EPIPE */
    if (gs_test_make_dir(root, sizeof root, NULL, "gs_bmp_tga_") != 0) {
        perror("test_bmp_tga: cannot create a scratch directory");
        return EXIT_FAILURE;
    }
    SRunner *runner = srunner_create(bmp_tga_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    /* files left behind fail the run: a suite cleans up after itself */
    const int left = gs_test_remove_tree(root) != 0;
    return failed == 0 && !left ? EXIT_SUCCESS : EXIT_FAILURE;
}
