/* fuzz_png_writer_diff.c: libFuzzer entry point comparing the PNG readers on PNGs it writes. */
/* The input describes a PNG (size up to 2^20 pixels, colour type, depth, content, row
 * filters, zlib level, strategy, window, flush points, IDAT sizes): the harness writes that
 * PNG with zlib and its own chunk writer, decodes it with both PNG readers and aborts where
 * they differ. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "png_diff_check.h"

/*
 * fuzz_png_diff mutates PNG bytes, so what it makes is small and mostly broken; this harness
 * mutates a description instead, so every input is a valid PNG of any size the pixel limit
 * allows, written the ways encoders write them, and a bug that needs a realistic size or a
 * particular stream layout is a few mutations away. The description (bytes past the input's
 * end read as 0; multi-byte fields big-endian):
 *   0      colour type: % 5 gives gray, RGB, palette, gray+alpha, RGBA
 *   1      flags: 1 16-bit samples (not palette), 2 a tRNS chunk (gray, RGB, palette),
 *          4 bytes after the zlib stream in its last IDAT, 8 one row with filter type 5
 *          (the last two are refusals or warnings: the verdicts must agree too)
 *   2-4    width, 5-7 height: 0 reads as 1; the height is cut to fit 2^20 pixels
 *   8      content: % 6 gives flat, gradient, photo-like, random, rows repeating, sparse
 *   9-12   content seed
 *   13     row filters: % 7 gives None, Sub, Up, Average, Paeth, each row's own, Paeth runs
 *   14     zlib level % 10; 15 strategy % 5 (default, filtered, Huffman only, RLE, fixed)
 *   16     window bits 9 + (% 7); 17 memLevel 1 + (% 9)
 *   18     palette entries - 1
 *   19     low 4 bits: an IDAT ends this many bytes before the stream's end (0: none);
 *          bits 4-5: the stream ends with Z_FINISH (0, 3), a sync flush and an empty fixed
 *          final block (1), or a sync flush and an empty stored final block (2)
 *   20     an empty IDAT after every n-th one (0: none)
 *   21-32  four IDAT sizes, 24 bits each, used in turn (0: the rest of the stream in one)
 *   33...  flush points, 4 bytes each: a 24-bit position (a fraction of the filtered bytes,
 *          in 2^-24) and a mode: % 6 gives Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK,
 *          Z_PARTIAL_FLUSH, a deflateParams change (level and strategy from the mode's
 *          high bits), nothing
 * fuzz/make_seed_corpus.sh writes seeds in this layout.
 */

/* --max-pixels of every run, as in the other harnesses. */
#define GS_FUZZ_MAX_PIXELS (UINT64_C(1) << 20)

/* The description's layout (above). */
#define AT_COLOR 0
#define AT_FLAGS 1
#define AT_WIDTH 2
#define AT_HEIGHT 5
#define AT_CONTENT 8
#define AT_SEED 9
#define AT_FILTERS 13
#define AT_LEVEL 14
#define AT_STRATEGY 15
#define AT_WINDOW 16
#define AT_MEM_LEVEL 17
#define AT_ENTRIES 18
#define AT_END 19
#define AT_EMPTY_EVERY 20
#define AT_IDAT_SIZES 21
#define IDAT_SIZES 4
#define AT_FLUSHES (AT_IDAT_SIZES + 3 * IDAT_SIZES)
#define FLUSH_BYTES 4
#define MAX_FLUSHES 64
#define FLAG_16_BIT 1
#define FLAG_TRNS 2
#define FLAG_TRAILING_BYTES 4
#define FLAG_BAD_FILTER 8
#define TAIL_CUT_MASK 0x0F
#define FINAL_SHIFT 4
#define FINAL_MASK 3
#define POSITION_BITS 24

/* PNG's colour types and filter types (PNG specification, 11.2.2 and 9.2). */
#define COLOR_GRAY 0
#define COLOR_RGB 2
#define COLOR_PALETTE 3
#define COLOR_GRAY_ALPHA 4
#define COLOR_RGBA 6
#define FILTER_NONE 0
#define FILTER_SUB 1
#define FILTER_UP 2
#define FILTER_AVERAGE 3
#define FILTER_PAETH 4
#define FILTER_INVALID 5
#define PNG_MAX_PALETTE 256

/* Contents, filters, stream ends and flush modes the description picks from. */
enum { CONTENT_FLAT, CONTENT_GRADIENT, CONTENT_PHOTO, CONTENT_RANDOM, CONTENT_REPEATING,
       CONTENT_SPARSE, CONTENT_KINDS };
enum { FILTERS_EACH_ROW = 5, FILTERS_PAETH_RUNS = 6, FILTER_MODES = 7 };
enum { FINAL_FINISH, FINAL_EMPTY_FIXED, FINAL_EMPTY_STORED };
enum { FLUSH_SYNC, FLUSH_FULL, FLUSH_BLOCK, FLUSH_PARTIAL, FLUSH_PARAMS, FLUSH_NOTHING, FLUSH_MODES };
/* zlib's strategies in the description's order. */
static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
#define STRATEGIES (sizeof strategies / sizeof strategies[0])

/* The longest run of Paeth rows written between Sub rows: the reader's 16-row wavefront
 * then mixes the two in a group (the all-Paeth mode fills whole groups). Kept at 6 so that
 * the saved descriptions still make the PNGs they were found with. */
#define PAETH_RUN_MAX 6
#define PAETH_CYCLE_ROWS (PAETH_RUN_MAX * (PAETH_RUN_MAX + 1) / 2 + PAETH_RUN_MAX)
/* Rows of the "repeating" content repeat with a period of at most this many rows. */
#define REPEAT_PERIOD_MAX 64
/* One sample in this many is random in the "sparse" content. */
#define SPARSE_ONE_IN 61
/* Bytes written after the zlib stream with FLAG_TRAILING_BYTES. */
#define TRAILING_BYTES 3
/* IDAT chunks written at most: past it the rest of the stream goes in one (a stream of
 * megabytes in one-byte chunks would be mostly chunk framing). */
#define MAX_IDAT_CHUNKS (1u << 16)
/* Output room deflate is given per call, and zlib's header and trailer. */
#define DEFLATE_STEP (64u << 10)
#define ZLIB_HEADER_BYTES 2
#define ADLER_BYTES 4
#define CHUNK_FRAMING 12 /* length, type, CRC */

/* The per-byte loops that make the pixels and filter them: no coverage feedback there
 * (it would be the same for every input, and tracing their compares took a large share of
 * the time on large images); the reader's code and the description's branches keep it. */
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define NO_COVERAGE
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fatal(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_png_writer_diff: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* ---- the description ---- */

typedef struct spec {
    unsigned color, bits, channels, bpp;  /* colour type, bits a sample, samples a pixel, bytes */
    uint32_t width, height;
    unsigned content;                     /* CONTENT_* */
    uint64_t seed;
    unsigned filters;                     /* FILTER_* for all rows, or FILTERS_* */
    int level, strategy, window_bits, mem_level;
    unsigned entries;                     /* palette entries, 1..256 */
    int trns, trailing, bad_filter;       /* FLAG_* */
    unsigned tail_cut, final;             /* end of the stream */
    unsigned empty_every;                 /* an empty IDAT after every n-th */
    uint32_t idat_sizes[IDAT_SIZES];
    unsigned flushes;                     /* flush points */
    uint32_t flush_at[MAX_FLUSHES];       /* fraction of the filtered bytes, 2^-24 units */
    unsigned flush_mode[MAX_FLUSHES];
} spec;

static unsigned byte_at(const uint8_t *d, size_t size, size_t at) { return at < size ? d[at] : 0; }

static uint32_t be_at(const uint8_t *d, size_t size, size_t at, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++) v = v << 8 | byte_at(d, size, at + i);
    return v;
}

static void read_spec(const uint8_t *d, size_t size, spec *s)
{
    static const unsigned colors[] = {COLOR_GRAY, COLOR_RGB, COLOR_PALETTE, COLOR_GRAY_ALPHA, COLOR_RGBA};
    static const unsigned samples[] = {1, 3, 1, 2, 4};
    memset(s, 0, sizeof *s);
    const unsigned pick = byte_at(d, size, AT_COLOR) % 5;
    const unsigned flags = byte_at(d, size, AT_FLAGS);
    s->color = colors[pick];
    s->channels = samples[pick];
    s->bits = (flags & FLAG_16_BIT) && s->color != COLOR_PALETTE ? 16 : 8;
    s->bpp = s->channels * s->bits / 8;
    s->width = be_at(d, size, AT_WIDTH, 3);
    s->height = be_at(d, size, AT_HEIGHT, 3);
    if (s->width == 0) s->width = 1;
    if (s->height == 0) s->height = 1;
    if (s->width > GS_FUZZ_MAX_PIXELS) s->width = (uint32_t)GS_FUZZ_MAX_PIXELS;
    if (s->height > GS_FUZZ_MAX_PIXELS / s->width) s->height = (uint32_t)(GS_FUZZ_MAX_PIXELS / s->width);
    s->content = byte_at(d, size, AT_CONTENT) % CONTENT_KINDS;
    s->seed = be_at(d, size, AT_SEED, 4);
    s->filters = byte_at(d, size, AT_FILTERS) % FILTER_MODES;
    s->level = (int)(byte_at(d, size, AT_LEVEL) % 10);
    s->strategy = strategies[byte_at(d, size, AT_STRATEGY) % STRATEGIES];
    s->window_bits = 9 + (int)(byte_at(d, size, AT_WINDOW) % 7);
    s->mem_level = 1 + (int)(byte_at(d, size, AT_MEM_LEVEL) % 9);
    s->entries = byte_at(d, size, AT_ENTRIES) + 1;
    s->trns = (flags & FLAG_TRNS) && (s->color == COLOR_GRAY || s->color == COLOR_RGB ||
                                      s->color == COLOR_PALETTE);
    s->trailing = (flags & FLAG_TRAILING_BYTES) != 0;
    s->bad_filter = (flags & FLAG_BAD_FILTER) != 0;
    s->tail_cut = byte_at(d, size, AT_END) & TAIL_CUT_MASK;
    s->final = byte_at(d, size, AT_END) >> FINAL_SHIFT & FINAL_MASK;
    s->empty_every = byte_at(d, size, AT_EMPTY_EVERY);
    for (unsigned i = 0; i < IDAT_SIZES; i++) s->idat_sizes[i] = be_at(d, size, AT_IDAT_SIZES + 3 * i, 3);
    for (size_t at = AT_FLUSHES; at + FLUSH_BYTES <= size && s->flushes < MAX_FLUSHES; at += FLUSH_BYTES) {
        s->flush_at[s->flushes] = be_at(d, size, at, 3);
        s->flush_mode[s->flushes++] = d[at + 3];
    }
}

/* ---- the pixels, as PNG stores them ---- */

/* splitmix64: a small, well-mixed generator; the content is a function of the seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The stored rows (row_bytes each, 16-bit samples big-endian; palette indices may pass the
 * palette's end, where both readers give black). */
NO_COVERAGE static void make_rows(const spec *s, unsigned char *rows, size_t row_bytes)
{
    uint64_t state = s->seed;
    const unsigned char level = (unsigned char)next_random(&state);
    const unsigned step_x = 1 + (unsigned)(next_random(&state) % 7), step_y = (unsigned)(next_random(&state) % 5);
    const uint32_t period = 1 + (uint32_t)(next_random(&state) % REPEAT_PERIOD_MAX);
    for (uint32_t y = 0; y < s->height; y++) {
        unsigned char *row = rows + (size_t)y * row_bytes;
        if (s->content == CONTENT_REPEATING && y >= period) {
            memcpy(row, row - (size_t)period * row_bytes, row_bytes);
            continue;
        }
        for (size_t i = 0; i < row_bytes; i++) {
            unsigned char v;
            switch (s->content) {
            case CONTENT_FLAT: v = level; break;
            case CONTENT_GRADIENT: v = (unsigned char)((i / s->bpp) * step_x + y * step_y + i % s->bpp); break;
            case CONTENT_PHOTO: /* the byte above or to the left, nudged: smooth, with noise */
                v = (unsigned char)((y ? (row - row_bytes)[i] : i >= s->bpp ? row[i - s->bpp] : level) +
                                    (int)(next_random(&state) % 5) - 2);
                break;
            case CONTENT_SPARSE:
                v = next_random(&state) % SPARSE_ONE_IN ? level : (unsigned char)next_random(&state);
                break;
            default: v = (unsigned char)next_random(&state); break;
            }
            row[i] = v;
        }
    }
}

static unsigned paeth(int a, int b, int c)
{
    const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* The filter type of row y. */
NO_COVERAGE static unsigned row_filter(const spec *s, uint32_t y, uint64_t *state)
{
    if (s->bad_filter && y == s->height / 2) return FILTER_INVALID;
    if (s->filters <= FILTER_PAETH) return s->filters;
    if (s->filters == FILTERS_EACH_ROW) return (unsigned)(next_random(state) % 5);
    /* Runs of 1, 2, ... PAETH_RUN_MAX Paeth rows, each followed by one Sub row. */
    uint32_t at = y % PAETH_CYCLE_ROWS;
    for (uint32_t run = 1; run <= PAETH_RUN_MAX; at -= run + 1, run++)
        if (at <= run) return at < run ? FILTER_PAETH : FILTER_SUB;
    return FILTER_SUB;
}

/* Filter every row: a filter byte, then the row's bytes less their predictor. */
NO_COVERAGE static void filter_rows(const spec *s, const unsigned char *rows, size_t row_bytes, unsigned char *out)
{
    uint64_t state = s->seed ^ UINT64_C(0x5DEECE66D);
    const unsigned bpp = s->bpp;
    for (uint32_t y = 0; y < s->height; y++) {
        const unsigned char *x = rows + (size_t)y * row_bytes;
        const unsigned char *up = y ? x - row_bytes : NULL;
        unsigned char *o = out + (size_t)y * (row_bytes + 1);
        const unsigned f = row_filter(s, y, &state);
        o[0] = (unsigned char)f;
        for (size_t i = 0; i < row_bytes; i++) {
            const int a = i >= bpp ? x[i - bpp] : 0, b = up ? up[i] : 0;
            const int c = up && i >= bpp ? up[i - bpp] : 0;
            unsigned pred = 0;
            switch (f) {
            case FILTER_SUB: pred = (unsigned)a; break;
            case FILTER_UP: pred = (unsigned)b; break;
            case FILTER_AVERAGE: pred = (unsigned)(a + b) >> 1; break;
            case FILTER_PAETH: pred = paeth(a, b, c); break;
            default: break; /* None, and the invalid type (its bytes as they are) */
            }
            o[1 + i] = (unsigned char)(x[i] - pred);
        }
    }
}

/* ---- the zlib stream ---- */

typedef struct buffer {
    unsigned char *p;
    size_t len, cap;
} buffer;

static void reserve(buffer *b, size_t more)
{
    if (b->cap - b->len >= more) return;
    size_t cap = b->cap ? b->cap : DEFLATE_STEP;
    while (cap - b->len < more) cap *= 2;
    if (!(b->p = realloc(b->p, cap))) fatal("out of memory", NULL);
    b->cap = cap;
}

static void append(buffer *b, const void *p, size_t n)
{
    reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void append_be32(buffer *b, uint32_t v)
{
    const unsigned char q[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                                (unsigned char)v};
    append(b, q, sizeof q);
}

/* Deflate `n` bytes at `in` with `flush` until zlib has taken them and finished the flush. */
static void deflate_all(z_stream *z, const unsigned char *in, size_t n, int flush, buffer *out)
{
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)n;
    for (;;) {
        reserve(out, DEFLATE_STEP);
        z->next_out = out->p + out->len;
        z->avail_out = DEFLATE_STEP;
        const int zr = deflate(z, flush);
        out->len += DEFLATE_STEP - z->avail_out;
        if (zr == Z_STREAM_END) return;
        if (zr != Z_OK && zr != Z_BUF_ERROR) fatal("deflate failed", z->msg);
        if (flush != Z_FINISH && z->avail_in == 0 && z->avail_out > 0) return;
    }
}

/* The zlib stream: RFC 1950's header, raw deflate with the description's flushes and end,
 * the Adler-32. */
static void make_stream(const spec *s, const unsigned char *data, size_t n, buffer *out)
{
    static const int flush_of[] = {Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK, Z_PARTIAL_FLUSH};
    const unsigned cmf = 8u | (unsigned)(s->window_bits - 8) << 4;
    unsigned flg = (unsigned)(s->level < 2 ? 0 : s->level < 6 ? 1 : s->level == 6 ? 2 : 3) << 6;
    flg += 31 - (cmf * 256 + flg) % 31;
    const unsigned char header[ZLIB_HEADER_BYTES] = {(unsigned char)cmf, (unsigned char)flg};
    append(out, header, sizeof header);

    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, s->level, Z_DEFLATED, -s->window_bits, s->mem_level, s->strategy) != Z_OK)
        fatal("deflateInit2 failed", NULL);
    /* Flush points in order of position (a few: insertion sort). */
    size_t at[MAX_FLUSHES];
    unsigned order[MAX_FLUSHES];
    for (unsigned i = 0; i < s->flushes; i++) {
        at[i] = (size_t)(((uint64_t)s->flush_at[i] * n) >> POSITION_BITS);
        unsigned j = i;
        for (; j > 0 && at[order[j - 1]] > at[i]; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    size_t done = 0;
    for (unsigned k = 0; k < s->flushes; k++) {
        const unsigned i = order[k], mode = s->flush_mode[i] % FLUSH_MODES;
        deflate_all(&z, data + done, at[i] - done, Z_NO_FLUSH, out);
        done = at[i];
        if (mode < FLUSH_PARAMS) {
            deflate_all(&z, NULL, 0, flush_of[mode], out);
        } else if (mode == FLUSH_PARAMS) {
            const unsigned high = s->flush_mode[i] / FLUSH_MODES;
            reserve(out, DEFLATE_STEP); /* deflateParams may flush what it holds */
            z.next_out = out->p + out->len;
            z.avail_out = DEFLATE_STEP;
            const int zr = deflateParams(&z, (int)(high % 10), strategies[high / 10 % STRATEGIES]);
            out->len += DEFLATE_STEP - z.avail_out;
            if (zr != Z_OK && zr != Z_BUF_ERROR) fatal("deflateParams failed", z.msg);
        }
    }
    deflate_all(&z, data + done, n - done, Z_NO_FLUSH, out);
    if (s->final == FINAL_EMPTY_FIXED || s->final == FINAL_EMPTY_STORED)
        deflate_all(&z, NULL, 0, Z_SYNC_FLUSH, out);
    if (s->final == FINAL_EMPTY_STORED) {
        static const unsigned char last_stored[] = {0x01, 0x00, 0x00, 0xFF, 0xFF}; /* BFINAL, LEN 0 */
        append(out, last_stored, sizeof last_stored);
    } else {
        deflate_all(&z, NULL, 0, Z_FINISH, out);
    }
    deflateEnd(&z);
    append_be32(out, (uint32_t)adler32(adler32(0, NULL, 0), data, (uInt)n));
}

/* ---- the PNG ---- */

static void put_chunk(buffer *png, const char *type, const unsigned char *body, size_t n)
{
    append_be32(png, (uint32_t)n);
    append(png, type, 4);
    if (n) append(png, body, n);
    uLong crc = crc32(crc32(0, NULL, 0), (const Bytef *)type, 4);
    if (n) crc = crc32(crc, body, (uInt)n); /* a NULL body would restart the CRC */
    append_be32(png, (uint32_t)crc);
}

/* The IDAT chunks: the stream cut at the description's sizes, at tail_cut bytes before the
 * stream's end (not counting bytes written after it), with empty IDATs between. */
static void put_idats(const spec *s, buffer *png, const unsigned char *stream, size_t n, size_t stream_end)
{
    const size_t cut = s->tail_cut && s->tail_cut < stream_end ? stream_end - s->tail_cut : 0;
    size_t at = 0;
    unsigned chunks = 0;
    while (at < n) {
        size_t size = s->idat_sizes[chunks % IDAT_SIZES];
        if (size == 0 || size > n - at || chunks + 1 >= MAX_IDAT_CHUNKS) size = n - at;
        if (cut > at && cut < at + size) size = cut - at;
        put_chunk(png, "IDAT", stream + at, size);
        at += size;
        chunks++;
        if (s->empty_every && chunks % s->empty_every == 0 && at < n) put_chunk(png, "IDAT", NULL, 0);
    }
}

static void make_png(const spec *s, const unsigned char *stream, size_t n, size_t stream_end, buffer *png)
{
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    append(png, signature, sizeof signature);
    unsigned char ihdr[13] = {0};
    for (int i = 0; i < 4; i++) {
        ihdr[i] = (unsigned char)(s->width >> (24 - 8 * i));
        ihdr[4 + i] = (unsigned char)(s->height >> (24 - 8 * i));
    }
    ihdr[8] = (unsigned char)s->bits, ihdr[9] = (unsigned char)s->color;
    put_chunk(png, "IHDR", ihdr, sizeof ihdr);
    uint64_t state = s->seed ^ UINT64_C(0xC0FFEE);
    if (s->color == COLOR_PALETTE) {
        unsigned char plte[3 * PNG_MAX_PALETTE];
        for (unsigned i = 0; i < 3 * s->entries; i++) plte[i] = (unsigned char)next_random(&state);
        put_chunk(png, "PLTE", plte, 3 * s->entries);
    }
    if (s->trns) {
        unsigned char trns[PNG_MAX_PALETTE];
        const size_t len = s->color == COLOR_PALETTE ? 1 + next_random(&state) % s->entries
                                                     : (s->color == COLOR_RGB ? 6 : 2);
        for (size_t i = 0; i < len; i++) trns[i] = (unsigned char)next_random(&state);
        put_chunk(png, "tRNS", trns, len);
    }
    put_idats(s, png, stream, n, stream_end);
    put_chunk(png, "IEND", NULL, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spec s;
    read_spec(data, size, &s);
    const size_t row_bytes = (size_t)s.width * s.bpp;
    const size_t filtered_bytes = (row_bytes + 1) * s.height;
    unsigned char *rows = malloc(row_bytes * s.height);
    unsigned char *filtered = malloc(filtered_bytes);
    if (!rows || !filtered) fatal("out of memory", NULL);
    make_rows(&s, rows, row_bytes);
    filter_rows(&s, rows, row_bytes, filtered);
    free(rows);

    buffer stream = {0}, png = {0};
    make_stream(&s, filtered, filtered_bytes, &stream);
    free(filtered);
    const size_t stream_end = stream.len;
    static const unsigned char trailing[TRAILING_BYTES] = {0x00, 0x5A, 0xA5};
    if (s.trailing) append(&stream, trailing, sizeof trailing);
    reserve(&png, stream.len + stream.len / 4 + CHUNK_FRAMING * 8 + 4096);
    make_png(&s, stream.p, stream.len, stream_end, &png);
    free(stream.p);

    char why[GS_PNG_DIFF_WHY_SIZE];
    const gs_png_diff_verdict v = gs_png_diff_compare(png.p, png.len, GS_FUZZ_MAX_PIXELS, why, sizeof why);
    if (v == GS_PNG_DIFF_DIFFERENT) fatal("the readers differ", why);
    if (v == GS_PNG_DIFF_NOT_FAST) fatal("wrote a PNG the fast reader does not take", NULL);
    /* Written valid (no bad filter type; bytes after the stream are a libpng warning): a
     * refusal by both is a harness bug or a libpng one, worth a look either way. */
    if (v == GS_PNG_DIFF_BOTH_REFUSE && !s.bad_filter) fatal("both readers refuse a valid PNG", why);
    free(png.p);
    return 0;
}
