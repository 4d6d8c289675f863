/* read_png_isal.c: the fast PNG reader for the common case, on ISA-L. */
/* It takes PNGs that are not interlaced, 8/16-bit gray, gray+alpha, RGB, RGBA and 8-bit
 * palette: chunks are parsed here with their CRCs, IDAT inflated by ISA-L and rows
 * unfiltered by png_unfilter.c, giving libpng's pixels; everything else goes to read_png.c. */

#include "io_internal.h"
#include "png_isal_limits.h"
#include "png_unfilter.h"

#include <isa-l.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * libpng stays the reference: this reader must give its pixels, and accept and refuse
 * what it does, for every file (tests/test_image_io.c compares them on PNGs of every
 * filter, level and type; tests/test_png_decoders.c on the damaged corpus; ctest
 * png_conformance on PNGs other programs write, sized across png_isal_limits.h's
 * boundaries; fuzz_png_diff on whatever libFuzzer makes of PNG bytes, fuzz_png_writer_diff
 * on PNGs written from what it makes of a description). The rules kept from libpng 1.6 (reading with
 * gsmooth's settings, read_png.c):
 * - IHDR first, checked as png_check_IHDR does; critical chunks' CRCs are checked, an
 *   ancillary chunk with a bad CRC is dropped; an unknown critical chunk is an error;
 * - a palette image needs its PLTE (at most 256 entries, a multiple of 3 bytes) before
 *   IDAT; indices past the palette give black, as libpng's zero-filled palette does;
 * - the image data is the IDAT chunks in a row; the zlib stream must deliver every row
 *   and end before the IDAT chunks do; a stream error read in the same call as the last
 *   row fails, one read after it (extra data, a bad Adler-32 in a later IDAT) is only a
 *   libpng warning; running out of input or a bad CRC in the IDAT it reads fails;
 * - an input that ends early is an error anywhere up to the end of the IDAT data.
 */

/* The buffer and batch sizes (png_isal_limits.h, where the tests read them). */
#define INPUT_BUFFER GS_PNG_ISAL_INPUT_BYTES
#define BATCH_SLOTS GS_PNG_ISAL_BATCH_SLOTS
#define THREAD_MIN_BATCHES GS_PNG_ISAL_THREAD_MIN_BATCHES
/* PNG's limits and layout (PNG specification, sections 5 and 11). */
#define PNG_SIGNATURE_BYTES 8
#define CHUNK_HEADER_BYTES 8 /* length, type */
#define CHUNK_CRC_BYTES 4
#define IHDR_BYTES 13
#define PNG_MAX_PALETTE 256
#define PNG_UINT_31_MAX 0x7FFFFFFFu
#define COLOR_GRAY 0
#define COLOR_RGB 2
#define COLOR_PALETTE 3
#define COLOR_GRAY_ALPHA 4
#define COLOR_RGBA 6

typedef struct decoder {
    gs_source *src;                  /* the reader's input */
    struct inflate_state zs;         /* ISA-L's inflate, zlib framing, Adler-32 checked */
    unsigned char *in;               /* compressed bytes of the current IDAT */
    uint32_t idat_left;              /* bytes of the current IDAT chunk not read yet */
    uint32_t idat_crc;               /* CRC of the current IDAT chunk so far */
    int idat_over;                   /* the IDAT chunks ended (a non-IDAT chunk header read) */
    int stream_ended;                /* the zlib stream ended */
    uint32_t width, height;          /* image size */
    unsigned color_type, bit_depth;  /* from IHDR */
    unsigned channels;               /* samples per pixel as stored: 1 to 4 */
    unsigned bpp;                    /* bytes per pixel, for the filters (>= 1) */
    size_t row_bytes;                /* one stored row, without its filter byte */
    size_t stride;                   /* one stored row with its filter byte */
    unsigned char *slot[BATCH_SLOTS];/* batches of inflated rows, filter bytes included */
    uint32_t slot_rows[BATCH_SLOTS]; /* rows each holds; 0 while free */
    gs_status slot_rc[BATCH_SLOTS];  /* how inflating it ended */
    char slot_err[BATCH_SLOTS][GS_ERR_SIZE]; /* and why, when it failed */
    uint32_t batch_rows;             /* rows a full batch holds */
    unsigned current;                /* the slot being handed out */
    uint32_t batch_next;             /* next row of the current slot to hand out */
    uint32_t batches_done;           /* batches handed out in full */
    uint32_t batches_total;          /* batches in the image */
    uint32_t rows_inflated;          /* rows inflated so far (by the inflating thread) */
    int threaded;                    /* a second thread inflates ahead */
    pthread_t thread;                /* that thread */
    pthread_mutex_t lock;            /* guards slot_rows, slot_rc, stopping */
    pthread_cond_t changed;          /* a slot was filled or freed, or stopping */
    int stopping;                    /* the inflating thread should end */
    unsigned char *prev;             /* the previous row, unfiltered (zeros before the first) */
    unsigned char *wide;             /* one row as native samples (16-bit colour) */
    const gs_png_unfilter_isa *unfilter; /* the unfilter variant this CPU runs best */
    unsigned char palette[PNG_MAX_PALETTE * 3]; /* zero past the PLTE's entries */
    unsigned char palette_gray[PNG_MAX_PALETTE]; /* each entry's BT.601 gray, made once */
} decoder;


/* The PNG CRC (io_internal.h; the writer's IDAT chunks take it too). */
uint32_t gs_png_crc(uint32_t crc, const unsigned char *p, size_t n)
{
    return crc32_gzip_refl(crc, p, n);
}

static int is_critical(const unsigned char type[4]) { return (type[0] & 0x20) == 0; }

/* Read exactly n bytes, or say why not. */
static gs_status read_exact(decoder *dec, void *buf, size_t n, char *err, size_t err_size)
{
    if (gs_source_read(dec->src, buf, n) == n) return GS_OK;
    if (dec->src->read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(dec->src->read_errno));
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: unexpected end of file (truncated image)");
}

/* Read a chunk's CRC and compare it with `crc`, computed over its type and data. */
static gs_status check_crc(decoder *dec, uint32_t crc, const unsigned char type[4], char *err,
                           size_t err_size, int *ok)
{
    unsigned char stored[CHUNK_CRC_BYTES];
    gs_status rc = read_exact(dec, stored, sizeof stored, err, err_size);
    if (rc != GS_OK) return rc;
    *ok = gs_load_be32(stored) == crc;
    if (!*ok && is_critical(type))
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: %.4s: CRC error", (const char *)type);
    return GS_OK;
}

/* Skip a chunk's data (checking its CRC as libpng does); *ok = CRC matched. */
static gs_status skip_chunk(decoder *dec, const unsigned char type[4], uint32_t length,
                            unsigned char *scratch, char *err, size_t err_size, int *ok)
{
    uint32_t crc = gs_png_crc(0, type, 4);
    while (length > 0) {
        size_t step = length < INPUT_BUFFER ? length : INPUT_BUFFER;
        gs_status rc = read_exact(dec, scratch, step, err, err_size);
        if (rc != GS_OK) return rc;
        crc = gs_png_crc(crc, scratch, step);
        length -= (uint32_t)step;
    }
    return check_crc(dec, crc, type, err, err_size, ok);
}

/* A chunk header: its length (at most 2^31 - 1, as libpng requires) and type. */
static gs_status read_chunk_header(decoder *dec, uint32_t *length, unsigned char type[4],
                                   char *err, size_t err_size)
{
    unsigned char header[CHUNK_HEADER_BYTES];
    gs_status rc = read_exact(dec, header, sizeof header, err, err_size);
    if (rc != GS_OK) return rc;
    *length = gs_load_be32(header);
    memcpy(type, header + 4, 4);
    if (*length > PNG_UINT_31_MAX)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: chunk length too large");
    for (int i = 0; i < 4; i++) {
        unsigned c = type[i] | 0x20;
        if (c < 'a' || c > 'z') return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: invalid chunk type");
    }
    return GS_OK;
}

/* ---- the image data: IDAT chunks into ISA-L ---- */

/* Give the inflater more compressed bytes: the rest of this IDAT, or the next IDAT's.
 * Returns GS_OK with avail_in 0 when the IDAT chunks are over. */
static gs_status refill(decoder *dec, char *err, size_t err_size)
{
    while (dec->idat_left == 0) {
        if (dec->idat_over) return GS_OK;
        int ok;
        static const unsigned char idat[4] = {'I', 'D', 'A', 'T'};
        gs_status rc = check_crc(dec, dec->idat_crc, idat, err, err_size, &ok);
        if (rc != GS_OK) return rc;
        uint32_t length;
        unsigned char type[4];
        rc = read_chunk_header(dec, &length, type, err, err_size);
        if (rc != GS_OK) return rc;
        if (memcmp(type, "IDAT", 4) != 0) {
            dec->idat_over = 1;
            return GS_OK;
        }
        dec->idat_left = length;
        dec->idat_crc = gs_png_crc(0, type, 4);
    }
    size_t step = dec->idat_left < INPUT_BUFFER ? dec->idat_left : INPUT_BUFFER;
    gs_status rc = read_exact(dec, dec->in, step, err, err_size);
    if (rc != GS_OK) return rc;
    dec->idat_crc = gs_png_crc(dec->idat_crc, dec->in, step);
    dec->idat_left -= (uint32_t)step;
    dec->zs.next_in = dec->in;
    dec->zs.avail_in = (uint32_t)step;
    return GS_OK;
}

/* One call of ISA-L's inflate into next_out/avail_out; 1 when it gave bytes or moved its
 * state on. *zr is ISA-L's return; a stream that ended (block state FINISH: all its bytes
 * given out) sets stream_ended. */
static int inflate_once(decoder *dec, int *zr)
{
    const uint32_t out_before = dec->zs.avail_out;
    const enum isal_block_state state_before = dec->zs.block_state;
    const int32_t bits_before = dec->zs.read_in_length;
    *zr = isal_inflate(&dec->zs);
    if (dec->zs.block_state == ISAL_BLOCK_FINISH) dec->stream_ended = 1;
    return dec->zs.avail_out != out_before || dec->zs.block_state != state_before ||
           dec->zs.read_in_length != bits_before;
}

/* Inflate a step, with more compressed bytes only once ISA-L needs them. ISA-L reads its
 * input ahead of its output: it may have taken every compressed byte of the last IDAT and
 * still hold decoded bytes (up to a window's worth), and the stream's end, to give in later
 * calls. zlib takes input as it decodes, so libpng reads the next chunk header (and refuses
 * a bad one, or a chunk that is no IDAT) only when zlib has taken every byte and must give
 * more. Here likewise: with no input, ISA-L is first asked for what it holds, and only a
 * call that gives nothing and moves nothing on reads on; IDAT chunks over then mean the
 * data ended before the stream did ("Not enough image data", as libpng says). */
static gs_status inflate_step(decoder *dec, int *zr, char *err, size_t err_size)
{
    if (dec->zs.avail_in == 0) {
        if (inflate_once(dec, zr) || *zr < 0 || dec->stream_ended) return GS_OK;
        gs_status rc = refill(dec, err, err_size);
        if (rc != GS_OK) return rc;
        if (dec->zs.avail_in == 0)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: Not enough image data");
    }
    inflate_once(dec, zr);
    return GS_OK;
}

/* Inflate `bytes` bytes into `out`. GS_ERR_FORMAT when the data ends or is corrupt, also
 * when the corruption (a bad Adler-32, say) shows in the call that completes the last row:
 * zlib, like ISA-L, reads the stream's end there if it is in the same IDAT, and libpng
 * fails on it. */
static gs_status inflate_into(decoder *dec, unsigned char *out, size_t bytes, char *err,
                              size_t err_size)
{
    dec->zs.next_out = out;
    dec->zs.avail_out = (uint32_t)bytes;
    while (dec->zs.avail_out > 0) {
        if (dec->stream_ended)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: Not enough image data");
        int zr;
        gs_status rc = inflate_step(dec, &zr, err, err_size);
        if (rc != GS_OK) return rc;
        if (zr < 0)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: IDAT: %s",
                           zr == ISAL_INCORRECT_CHECKSUM ? "incorrect data check" : "invalid compressed data");
    }
    return GS_OK;
}

/* After the last row libpng reads on until the zlib stream ends (what zlib says then is
 * only a warning: extra data, a bad Adler-32 in a later IDAT), then to the end of that IDAT
 * chunk and its CRC. Running out of input, IDAT chunks that end before the stream does, or
 * a bad CRC still fail. */
static gs_status finish_image_data(decoder *dec, char *err, size_t err_size)
{
    unsigned char scratch[4096];
    while (!dec->stream_ended) {
        dec->zs.next_out = scratch;
        dec->zs.avail_out = sizeof scratch;
        int zr;
        gs_status rc = inflate_step(dec, &zr, err, err_size);
        if (rc != GS_OK) return rc;
        if (zr < 0) dec->stream_ended = 1;
    }
    if (dec->idat_over) return GS_OK;
    /* The rest of the current IDAT chunk, and its CRC. */
    while (dec->idat_left > 0) {
        dec->zs.avail_in = 0;
        gs_status rc = refill(dec, err, err_size);
        if (rc != GS_OK) return rc;
    }
    int ok;
    static const unsigned char idat[4] = {'I', 'D', 'A', 'T'};
    return check_crc(dec, dec->idat_crc, idat, err, err_size, &ok);
}

/* ---- unfiltering (PNG specification, section 9; png_unfilter.c) ---- */

/* Unfilter `rows` stored rows at `batch` in place, the row above the first in `up`. */
static gs_status unfilter_batch(const decoder *dec, unsigned char *batch, uint32_t rows,
                                const unsigned char *up, char *err, size_t err_size)
{
    if (gs_png_unfilter_batch(dec->unfilter, batch, dec->stride, rows, up, dec->row_bytes, dec->bpp) != 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: bad adaptive filter value");
    return GS_OK;
}

/* ---- rows out ---- */

/* One unfiltered stored row into a row of gray samples at the image's depth. */
static void to_gray(const decoder *dec, const unsigned char *x, unsigned char *dst,
                    unsigned char *wide)
{
    const uint32_t w = dec->width;
    if (dec->color_type == COLOR_PALETTE) {
        for (uint32_t i = 0; i < w; i++) dst[i] = dec->palette_gray[x[i]];
        return;
    }
    if (dec->bit_depth == 8) {
        gs_row_to_gray(dst, x, w, dec->channels, 8);
        return;
    }
    /* 16-bit samples are big-endian in the file and native in memory. */
    uint16_t *native = dec->channels == 1 ? (uint16_t *)(void *)dst : (uint16_t *)(void *)wide;
    const size_t samples = (size_t)w * dec->channels;
    for (size_t i = 0; i < samples; i++) {
        uint16_t v = (uint16_t)(x[2 * i] << 8 | x[2 * i + 1]);
        memcpy(native + i, &v, sizeof v); /* dst rows need not be 2-byte aligned */
    }
    if (dec->channels != 1) gs_row_to_gray(dst, wide, w, dec->channels, 16);
}

/* ---- batches: inflated here, or ahead on a second thread ---- */

/* Inflate the next batch into `slot` (on whichever thread inflates). */
static void fill_slot(decoder *dec, unsigned slot)
{
    uint32_t left = dec->height - dec->rows_inflated;
    uint32_t n = left < dec->batch_rows ? left : dec->batch_rows;
    char *err = dec->slot_err[slot];
    gs_status rc = inflate_into(dec, dec->slot[slot], (size_t)n * dec->stride, err, GS_ERR_SIZE);
    dec->rows_inflated += n;
    if (rc == GS_OK && dec->rows_inflated == dec->height) rc = finish_image_data(dec, err, GS_ERR_SIZE);
    if (dec->threaded) pthread_mutex_lock(&dec->lock);
    dec->slot_rc[slot] = rc;
    dec->slot_rows[slot] = n;
    if (dec->threaded) {
        pthread_cond_broadcast(&dec->changed);
        pthread_mutex_unlock(&dec->lock);
    }
}

static void *inflate_main(void *arg)
{
    decoder *dec = arg;
    for (uint32_t b = 0; b < dec->batches_total; b++) {
        unsigned slot = b % BATCH_SLOTS;
        pthread_mutex_lock(&dec->lock);
        while (!dec->stopping && dec->slot_rows[slot] != 0) pthread_cond_wait(&dec->changed, &dec->lock);
        int stop = dec->stopping;
        pthread_mutex_unlock(&dec->lock);
        if (stop) break;
        fill_slot(dec, slot);
        if (dec->slot_rc[slot] != GS_OK) break; /* the consumer reports it */
    }
    return NULL;
}

/* Make the next batch current: wait for it (or inflate it here), check it, unfilter it. */
static gs_status take_batch(decoder *dec, char *err, size_t err_size)
{
    unsigned slot = dec->batches_done % BATCH_SLOTS;
    if (dec->threaded) {
        pthread_mutex_lock(&dec->lock);
        while (dec->slot_rows[slot] == 0 && dec->slot_rc[slot] == GS_OK)
            pthread_cond_wait(&dec->changed, &dec->lock);
        pthread_mutex_unlock(&dec->lock);
    } else {
        fill_slot(dec, slot);
    }
    if (dec->slot_rc[slot] != GS_OK)
        return gs_fail(err, err_size, dec->slot_rc[slot], "%s", dec->slot_err[slot]);
    dec->current = slot;
    dec->batch_next = 0;
    return unfilter_batch(dec, dec->slot[slot], dec->slot_rows[slot], dec->prev, err, err_size);
}

/* The current batch is handed out: keep its last row, free its slot. */
static void release_batch(decoder *dec)
{
    unsigned slot = dec->current;
    memcpy(dec->prev, dec->slot[slot] + (size_t)(dec->slot_rows[slot] - 1) * dec->stride + 1,
           dec->row_bytes);
    if (dec->threaded) pthread_mutex_lock(&dec->lock);
    dec->slot_rows[slot] = 0;
    if (dec->threaded) {
        pthread_cond_broadcast(&dec->changed);
        pthread_mutex_unlock(&dec->lock);
    }
    dec->batches_done++;
}

static gs_status read_rows(gs_reader *reader, unsigned char *dst, size_t stride, uint32_t rows,
                           char *err, size_t err_size)
{
    decoder *dec = reader->impl;
    for (uint32_t r = 0; r < rows; r++) {
        if (dec->batch_next == 0) {
            gs_status rc = take_batch(dec, err, err_size);
            if (rc != GS_OK) return rc;
        }
        const unsigned slot = dec->current;
        to_gray(dec, dec->slot[slot] + (size_t)dec->batch_next * dec->stride + 1,
                dst + (size_t)r * stride, dec->wide);
        if (++dec->batch_next == dec->slot_rows[slot]) {
            release_batch(dec);
            dec->batch_next = 0;
        }
    }
    return GS_OK;
}

static void decoder_destroy(void *impl)
{
    decoder *dec = impl;
    if (!dec) return;
    if (dec->threaded) {
        pthread_mutex_lock(&dec->lock);
        dec->stopping = 1;
        pthread_cond_broadcast(&dec->changed);
        pthread_mutex_unlock(&dec->lock);
        pthread_join(dec->thread, NULL);
        pthread_cond_destroy(&dec->changed);
        pthread_mutex_destroy(&dec->lock);
    }
    free(dec->in);
    for (unsigned i = 0; i < BATCH_SLOTS; i++) free(dec->slot[i]);
    free(dec->prev);
    free(dec->wide);
    free(dec);
}

static const gs_reader_ops decoder_ops = {
    .read_rows = read_rows,
    .destroy = decoder_destroy,
};

/* ---- the header ---- */

int gs_png_isal_takes(const unsigned char *head, size_t head_len)
{
    /* signature, IHDR length and type, then width, height, depth, colour type,
     * compression, filter method, interlace at 16..28 */
    if (head_len < GS_PNG_IHDR_END_AT || memcmp(head + GS_PNG_IHDR_TYPE_AT, "IHDR", 4) != 0) return 0;
    const unsigned depth = head[GS_PNG_IHDR_DEPTH_AT], color = head[GS_PNG_IHDR_COLOR_AT];
    const unsigned interlace = head[GS_PNG_IHDR_INTERLACE_AT];
    if (interlace != 0) return 0;
    switch (color) {
    case COLOR_PALETTE: return depth == 8;
    case COLOR_GRAY:
    case COLOR_RGB:
    case COLOR_GRAY_ALPHA:
    case COLOR_RGBA: return depth == 8 || depth == 16;
    default: return 0;
    }
}

/* IHDR's fields, checked as png_check_IHDR does for the types this reader takes. */
static gs_status parse_ihdr(decoder *dec, const unsigned char *d, uint64_t max_pixels, char *err,
                            size_t err_size)
{
    dec->width = gs_load_be32(d);
    dec->height = gs_load_be32(d + 4);
    dec->bit_depth = d[8];
    dec->color_type = d[9];
    if (dec->width == 0 || dec->width > PNG_UINT_31_MAX || dec->height == 0 ||
        dec->height > PNG_UINT_31_MAX)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: Invalid IHDR data");
    if (d[10] != 0 || d[11] != 0 || d[12] != 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: Invalid IHDR data");
    gs_status rc = gs_check_pixels(dec->width, dec->height, max_pixels, err, err_size);
    if (rc != GS_OK) return rc;
    switch (dec->color_type) {
    case COLOR_GRAY: dec->channels = 1; break;
    case COLOR_GRAY_ALPHA: dec->channels = 2; break;
    case COLOR_RGB: dec->channels = 3; break;
    case COLOR_RGBA: dec->channels = 4; break;
    default: dec->channels = 1; break; /* palette indices */
    }
    dec->bpp = dec->channels * (dec->bit_depth / 8);
    if (dec->width > (SIZE_MAX - 1) / dec->bpp)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "a PNG row of %u pixels does not fit in memory", dec->width);
    dec->row_bytes = (size_t)dec->width * dec->bpp;
    dec->stride = dec->row_bytes + 1;
    return GS_OK;
}

/* Signature, IHDR and the chunks before the first IDAT. */
static gs_status read_header(decoder *dec, gs_image_info *info, uint64_t max_pixels, char *err,
                             size_t err_size)
{
    unsigned char buf[PNG_SIGNATURE_BYTES + CHUNK_HEADER_BYTES + IHDR_BYTES];
    gs_status rc = read_exact(dec, buf, sizeof buf, err, err_size);
    if (rc != GS_OK) return rc;
    /* The signature, IHDR's length and type were checked by the caller on the head. */
    if (gs_load_be32(buf + PNG_SIGNATURE_BYTES) != IHDR_BYTES)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: IHDR: invalid");
    int ok;
    rc = check_crc(dec, gs_png_crc(0, buf + GS_PNG_IHDR_TYPE_AT, 4 + IHDR_BYTES), buf + GS_PNG_IHDR_TYPE_AT, err, err_size, &ok);
    if (rc != GS_OK) return rc;
    rc = parse_ihdr(dec, buf + PNG_SIGNATURE_BYTES + CHUNK_HEADER_BYTES, max_pixels, err, err_size);
    if (rc != GS_OK) return rc;

    int have_plte = 0, have_trns = 0;
    for (;;) {
        uint32_t length;
        unsigned char type[4];
        rc = read_chunk_header(dec, &length, type, err, err_size);
        if (rc != GS_OK) return rc;
        if (memcmp(type, "IDAT", 4) == 0) {
            dec->idat_left = length;
            dec->idat_crc = gs_png_crc(0, type, 4);
            break;
        }
        if (memcmp(type, "IHDR", 4) == 0)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: IHDR: out of place");
        if (memcmp(type, "IEND", 4) == 0)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: No image in file");
        if (memcmp(type, "PLTE", 4) == 0) {
            if (have_plte)
                return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: PLTE: duplicate");
            int palette_image = dec->color_type == COLOR_PALETTE;
            if (length > PNG_MAX_PALETTE * 3 || length % 3 != 0 || length == 0) {
                if (palette_image) return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: PLTE: invalid");
                rc = skip_chunk(dec, type, length, dec->in, err, err_size, &ok);
                if (rc != GS_OK) return rc;
                continue;
            }
            unsigned char entries[PNG_MAX_PALETTE * 3];
            rc = read_exact(dec, entries, length, err, err_size);
            if (rc != GS_OK) return rc;
            rc = check_crc(dec, gs_png_crc(gs_png_crc(0, type, 4), entries, length), type, err, err_size, &ok);
            if (rc != GS_OK) return rc;
            have_plte = 1;
            if (palette_image) memcpy(dec->palette, entries, length);
            continue;
        }
        if (is_critical(type))
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: %.4s: unknown critical chunk",
                           (const char *)type);
        rc = skip_chunk(dec, type, length, dec->in, err, err_size, &ok);
        if (rc != GS_OK) return rc;
        /* tRNS only matters for the "alpha dropped" note: libpng keeps a valid one. */
        if (ok && memcmp(type, "tRNS", 4) == 0 && !have_trns)
            have_trns = (dec->color_type == COLOR_GRAY && length == 2) ||
                        (dec->color_type == COLOR_RGB && length == 6) ||
                        (dec->color_type == COLOR_PALETTE && have_plte && length > 0);
    }
    if (dec->color_type == COLOR_PALETTE && !have_plte)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: Missing PLTE before IDAT");
    if (dec->color_type == COLOR_PALETTE) /* the luma of each entry, once, not per pixel */
        gs_row_to_gray(dec->palette_gray, dec->palette, PNG_MAX_PALETTE, 3, 8);

    info->width = dec->width;
    info->height = dec->height;
    info->bits = dec->color_type == COLOR_PALETTE ? 8 : dec->bit_depth;
    info->was_color = (dec->color_type & 2) != 0; /* RGB, RGBA and palette */
    info->had_alpha = (dec->color_type & 4) != 0 || have_trns;
    info->format = "PNG";
    return GS_OK;
}

gs_status gs_read_png_isal_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    decoder *dec = calloc(1, sizeof *dec);
    if (!dec) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    dec->src = &reader->src;
    dec->in = malloc(INPUT_BUFFER);
    if (!dec->in) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    rc = read_header(dec, &reader->info, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    size_t batch_rows = gs_png_isal_batch_rows(dec->stride, GS_PNG_UNFILTER_WAVE_ROWS);
    dec->batch_rows = batch_rows < dec->height ? (uint32_t)batch_rows : dec->height;
    dec->batches_total = (dec->height + dec->batch_rows - 1) / dec->batch_rows;
    for (unsigned i = 0; i < BATCH_SLOTS; i++)
        if (!(dec->slot[i] = malloc(dec->stride * dec->batch_rows))) break;
    dec->prev = calloc(1, dec->row_bytes);
    dec->wide = malloc((size_t)dec->width * dec->bpp);
    if (!dec->slot[BATCH_SLOTS - 1] || !dec->prev || !dec->wide) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for %zu-byte PNG rows", dec->stride);
        goto cleanup;
    }
    dec->unfilter = gs_png_unfilter_best();
    isal_inflate_init(&dec->zs);
    dec->zs.crc_flag = ISAL_ZLIB;
    /* A second thread inflates ahead for a large file; a stream stays on this thread, so a
     * stalled writer can never hold up the end of a failed read. */
    if (dec->batches_total >= THREAD_MIN_BATCHES && reader->src.fd < 0 &&
        pthread_mutex_init(&dec->lock, NULL) == 0) {
        pthread_cond_init(&dec->changed, NULL);
        dec->threaded = 1; /* before the thread starts: it reads the flag */
        if (pthread_create(&dec->thread, NULL, inflate_main, dec) != 0) {
            dec->threaded = 0;
            pthread_cond_destroy(&dec->changed);
            pthread_mutex_destroy(&dec->lock);
        }
    }
    reader->ops = &decoder_ops;
    reader->impl = dec;
    dec = NULL;

cleanup:
    decoder_destroy(dec);
    return rc;
}
