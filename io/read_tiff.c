/* read_tiff.c: the TIFF reader on libtiff: the first page, by rows or blocks. */
/* 1/2/4/8/16-bit gray, gray+alpha, palette, RGB(A), CMYK and YCbCr (to BT.601 gray), float
 * gray (32-bit; 64-bit and signed 16-bit to float32), strips or tiles, any codec libtiff has
 * (old-style JPEG too), BigTIFF; streamed by rows or by blocks of tile rows. */

#include "io_internal.h"
#include "tiff_io.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>

/*
 * libtiff reads through procedures over the input (tiff_io.c): a regular file with
 * pread, an in-memory input directly, and a stream (pipe, FIFO) from a spool, an unlinked
 * temporary file, because a TIFF's directory may sit anywhere in the file. libtiff's
 * messages go to this handle's own handlers (TIFFOpenOptions), never the global ones, so
 * worker threads can read TIFFs side by side.
 *
 * Samples come out of libtiff in one of five ways (tiff_kind):
 *   - TIFF_SAMPLES: 8/16-bit gray, gray+extra, RGB, RGB+extra, and JPEG-compressed YCbCr
 *     (libjpeg gives RGB); alpha dropped, colour through gs_luma, MinIsWhite inverted;
 *   - TIFF_INDEXED: a sample a pixel looked up in a gray table: 1/2/4-bit gray (scaled
 *     to 0..255, MinIsWhite inverted) and palettes (the colour map through gs_luma; an
 *     alpha sample beside an 8/16-bit index is dropped). Samples under 8 bits come
 *     packed MSB-first, each row (of the image, a strip or a tile) starting on a byte,
 *     libtiff having undone FillOrder 2 already; they are unpacked to a byte each;
 *   - TIFF_CMYK: 8/16-bit CMYK (InkSet 1; JPEG-compressed too), an extra sample dropped:
 *     each of C, M, Y leaves (max - ink)(max - K)/max of the light (gs_cmyk_light, PIL's
 *     rule), then gs_luma, at the samples' depth;
 *   - TIFF_RGBA: YCbCr other than interleaved JPEG (old-style JPEG, uncompressed,
 *     deflated or LZW YCbCr, separate-plane JPEG YCbCr) through libtiff's RGBA
 *     interface, which undoes the subsampling and applies ReferenceBlackWhite and the
 *     YCbCr coefficients (PIL reads these files through the same interface), then
 *     gs_luma of its 8-bit RGB. It is read a whole strip or tile row at a time;
 *   - TIFF_GRAY_FLOAT: one gray sample a pixel, IEEE float32 kept bit for bit, float64
 *     rounded to nearest float32, signed 16-bit converted exactly; delivered as float32. libtiff
 *     gives every sample in the host's byte order (it swaps 16, 32 and 64-bit samples of
 *     the other order after decoding) and undoes the floating-point predictor (3) inside
 *     the codec, which reorders the bytes of each row back into samples itself.
 *
 * Rows are delivered in one of two ways:
 *   - tiles, strips stored as separate planes, interleaved strips of up to
 *     TIFF_BLOCK_BYTES_MAX, and every TIFF_RGBA image: a block (a tile row, or a strip) of
 *     all planes is decoded into an interleaved buffer of block height x width pixels;
 *   - larger interleaved strips (a whole image in one strip, say): TIFFReadScanline, one
 *     row at a time (libtiff decodes a strip front to back, so memory stays one row plus
 *     libtiff's raw buffer).
 */

/* Interleaved strips up to this size are decoded whole (libtiff inflates a whole strip with
 * libdeflate, a row at a time with the slower zlib); larger ones a row at a time. */
#define TIFF_BLOCK_BYTES_MAX (8u << 20)
/* The tile grid's pixels (tiles across x tile width, tiles down x tile height) may be at
 * most this many times the image's, plus the slack (see plan_blocks). */
#define TIFF_TILE_GRID_FACTOR 4u
#define TIFF_TILE_GRID_SLACK (UINT64_C(1) << 24)
/* The RGBA interface's pixel: 8-bit R, G, B, A packed in a uint32 (TIFFGetR and friends). */
#define TIFF_RGBA_PIXEL_BYTES 4u
/* Directory entries read at a time when the reader looks at a directory itself. */
#define TIFF_DIR_CHUNK_ENTRIES 64u
/* Bytes of one directory entry: classic TIFF (tag 2, type 2, count 4, value 4) and BigTIFF
 * (tag 2, type 2, count 8, value 8); the count sits at byte 4 in both. */
#define TIFF_DIR_ENTRY_CLASSIC 12u
#define TIFF_DIR_ENTRY_BIG 20u
#define TIFF_DIR_ENTRY_COUNT_AT 4u
/* DNG's LinearRaw photometric interpretation (libtiff 4.5's tiff.h does not name it). */
#define TIFF_PHOTOMETRIC_LINEARRAW 34892u

typedef enum tiff_kind {
    TIFF_SAMPLES, /* 8/16-bit samples through gs_row_to_gray */
    TIFF_INDEXED, /* each pixel's first sample through t->lut */
    TIFF_CMYK,    /* 8/16-bit CMYK(+extra) through gs_cmyk_light, then gs_luma */
    TIFF_RGBA,    /* libtiff's RGBA interface */
    TIFF_GRAY_FLOAT, /* float32, float64 or signed 16-bit gray, delivered as float32 */
} tiff_kind;

typedef struct tiff_state {
    TIFF *tif;
    gs_tiff_input in;       /* where libtiff's reads go */
    gs_tiff_messages msgs;  /* libtiff's first error on this handle */
    tiff_kind kind;         /* how samples become gray */
    unsigned channels;      /* samples per pixel held: 1 gray or index, 2 gray or index + extra, 3 RGB, 4 RGB+extra */
    unsigned bits;          /* bits per sample in the file: 1, 2, 4, 8 or 16; TIFF_GRAY_FLOAT also 32, 64 */
    unsigned bytes;         /* bytes per sample held: 1 (up to 8 bits, sub-byte ones unpacked), 2, 4 or 8 */
    int invert;             /* TIFF_SAMPLES MinIsWhite: gray = max - sample */
    uint16_t *lut;          /* TIFF_INDEXED: gray of every sample value (256 or 65536 entries) */
    TIFFRGBAImage rgba;     /* TIFF_RGBA: libtiff's RGBA reader */
    int rgba_begun;         /* rgba needs TIFFRGBAImageEnd */
    size_t row_bytes;       /* one row, interleaved, as held (RGBA: 4 bytes a pixel) */
    unsigned char *line;    /* row mode: the row as libtiff gives it (packed when bits < 8) */
    unsigned char *row;     /* row mode: the row as held (line itself unless unpacked) */
    /* block mode (block != NULL): tiles, separate planes, strips up to TIFF_BLOCK_BYTES_MAX, RGBA */
    int tiled;
    int separate;           /* planes stored apart (PlanarConfig 2) */
    uint32_t block_rows;     /* tile height, or rows per strip */
    uint32_t tile_width;
    uint32_t block_index;    /* block held in `block`; UINT32_MAX before the first */
    unsigned char *block;    /* block_rows x row_bytes */
    unsigned char *piece;   /* one tile, or one strip that must be rearranged (one plane's,
                             * or packed samples), as libtiff decodes it; NULL for strips
                             * decoded straight into block */
    size_t piece_bytes;
    unsigned char *raw;     /* TIFF_RGBA, uncompressed tiles: libtiff's raw buffer (raw_tiles) */
} tiff_state;

/* A libtiff call failed: the read error, else libtiff's error, else `what` with libtiff's
 * latest warning (a fax strip fails after only "Premature EOL"). */
static gs_status tiff_failure(tiff_state *t, const char *what, char *err, size_t err_size)
{
    if (t->in.read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(t->in.read_errno));
    if (t->msgs.error[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: %s", t->msgs.error);
    if (t->msgs.warning[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: %s (%s)", what, t->msgs.warning);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: %s", what);
}

/* A decode call failed even when it returned success: libtiff's fax codecs report a bad
 * code word as an error, then fill the rest of the strip and succeed; its JPEG codec only
 * warns of a short strip (bad_data). The messages of the directory's reading, which
 * libtiff recovered from, were cleared when the reader opened. */
static int decode_failed(const tiff_state *t)
{
    return t->msgs.bad_data || t->msgs.error[0] != '\0';
}

/* Bytes of one row of `cols` pixels of one stored plane as libtiff lays it out: samples
 * packed at t->bits each, every row starting on a byte. */
static size_t file_row_bytes(const tiff_state *t, uint32_t cols)
{
    const unsigned samples = t->separate ? 1u : t->channels;
    return ((size_t)cols * samples * t->bits + 7u) / 8u;
}

/* Samples of 1, 2 or 4 bits, packed MSB-first, one byte each. */
static void unpack_row(unsigned char *dst, const unsigned char *src, uint32_t cols, unsigned bits)
{
    const unsigned per_byte = 8u / bits, mask = (1u << bits) - 1u;
    for (uint32_t x = 0; x < cols; ++x) {
        const unsigned shift = 8u - bits - (x % per_byte) * bits;
        dst[x] = (unsigned char)((src[x / per_byte] >> shift) & mask);
    }
}

/* Put one row of `cols` pixels of plane `plane` (all samples when not separate), as
 * libtiff decoded it at `src`, into the held interleaved row `dst`. */
static void place_samples(const tiff_state *t, unsigned char *dst, const unsigned char *src,
                          uint32_t cols, unsigned plane)
{
    if (t->bits < 8) { /* one sample a pixel (check_layout): never separate */
        unpack_row(dst, src, cols, t->bits);
        return;
    }
    if (!t->separate) {
        memcpy(dst, src, (size_t)cols * t->channels * t->bytes);
        return;
    }
    const size_t step = (size_t)t->channels * t->bytes;
    dst += (size_t)plane * t->bytes;
    for (uint32_t x = 0; x < cols; ++x, dst += step, src += t->bytes) memcpy(dst, src, t->bytes);
}

/* Block `b` through libtiff's RGBA interface: rows b * block_rows onwards as ABGR pixels,
 * top row first (the orientation requested is the file's own, so nothing is flipped). */
static gs_status load_block_rgba(gs_reader *reader, uint32_t b, uint32_t rows, char *err,
                                size_t err_size)
{
    tiff_state *t = reader->impl;
    memset(t->block, 0, (size_t)rows * t->row_bytes);
    const uint32_t y0 = b * t->block_rows;
    t->rgba.row_offset = (int)y0; /* y0 < height <= INT_MAX: checked when the reader opened */
    t->rgba.col_offset = 0;
    if (!TIFFRGBAImageGet(&t->rgba, (uint32_t *)(void *)t->block, reader->info.width, rows) ||
        decode_failed(t)) {
        char what[64];
        snprintf(what, sizeof what, "rows %u..%u are unreadable", y0, y0 + (rows - 1));
        return tiff_failure(t, what, err, err_size);
    }
    t->block_index = b;
    return GS_OK;
}

/* Decode block `b` (rows b * block_rows onwards) of every plane into t->block. */
static gs_status load_block(gs_reader *reader, uint32_t b, char *err, size_t err_size)
{
    tiff_state *t = reader->impl;
    const uint32_t width = reader->info.width;
    const uint32_t y0 = b * t->block_rows;
    const uint32_t rows = reader->info.height - y0 < t->block_rows ? reader->info.height - y0 : t->block_rows;
    const unsigned planes = t->separate ? t->channels : 1;

    if (t->kind == TIFF_RGBA) return load_block_rgba(reader, b, rows, err, err_size);
    for (unsigned s = 0; s < planes; ++s) {
        if (!t->tiled) {
            const size_t src_row = file_row_bytes(t, width);
            const tmsize_t want = (tmsize_t)((size_t)rows * src_row);
            const uint32_t strip = TIFFComputeStrip(t->tif, y0, (uint16_t)s);
            unsigned char *into = t->piece ? t->piece : t->block;
            memset(into, 0, (size_t)want); /* nothing of the last strip can show through */
            if (TIFFReadEncodedStrip(t->tif, strip, into, want) != want || decode_failed(t)) {
                char what[64];
                snprintf(what, sizeof what, "strip %u is short or unreadable", strip);
                return tiff_failure(t, what, err, err_size);
            }
            if (!t->piece) continue; /* interleaved bytes: the strip is the block */
            for (uint32_t r = 0; r < rows; ++r)
                place_samples(t, t->block + (size_t)r * t->row_bytes, t->piece + (size_t)r * src_row,
                              width, s);
            continue;
        }
        const size_t tile_row = file_row_bytes(t, t->tile_width);
        for (uint64_t x64 = 0; x64 < width; x64 += t->tile_width) {
            const uint32_t x = (uint32_t)x64;
            const uint32_t tile = TIFFComputeTile(t->tif, x, y0, 0, (uint16_t)s);
            memset(t->piece, 0, t->piece_bytes);
            if (TIFFReadEncodedTile(t->tif, tile, t->piece, (tmsize_t)t->piece_bytes) !=
                (tmsize_t)t->piece_bytes || decode_failed(t)) {
                char what[64];
                snprintf(what, sizeof what, "tile %u is short or unreadable", tile);
                return tiff_failure(t, what, err, err_size);
            }
            const uint32_t cols = width - x < t->tile_width ? width - x : t->tile_width;
            for (uint32_t r = 0; r < rows; ++r)
                place_samples(t, t->block + (size_t)r * t->row_bytes + (size_t)x * t->channels * t->bytes,
                              t->piece + (size_t)r * tile_row, cols, s);
        }
    }
    t->block_index = b;
    return GS_OK;
}

/* MinIsWhite: gray counts down from white (applied to the gray row delivered). */
static void invert_gray(unsigned char *gray, uint32_t width, unsigned bits)
{
    if (bits == 16) {
        uint16_t *s = (uint16_t *)gray;
        for (uint32_t x = 0; x < width; ++x) s[x] = (uint16_t)(65535u - s[x]);
    } else {
        for (uint32_t x = 0; x < width; ++x) gray[x] = (unsigned char)(255u - gray[x]);
    }
}

/* TIFF_GRAY_FLOAT: one held row of native-endian samples to float32. float32 is copied, so
 * every bit (NaN payloads too) reaches the caller; float64 goes through C's conversion,
 * which rounds to nearest in the default rounding mode; every int16 is a float32. */
static void float_row(const tiff_state *t, float *out, const unsigned char *row, uint32_t width)
{
    if (t->bits == 32) {
        memcpy(out, row, (size_t)width * sizeof *out);
    } else if (t->bits == 64) {
        for (uint32_t x = 0; x < width; ++x) {
            double d;
            memcpy(&d, row + (size_t)x * sizeof d, sizeof d);
            out[x] = (float)d;
        }
    } else {
        for (uint32_t x = 0; x < width; ++x) {
            int16_t v;
            memcpy(&v, row + (size_t)x * sizeof v, sizeof v);
            out[x] = (float)v;
        }
    }
}

/* One held row to the gray row delivered. */
static void row_to_gray(const tiff_state *t, unsigned char *out, const unsigned char *row,
                        uint32_t width, unsigned out_bits)
{
    switch (t->kind) {
    case TIFF_SAMPLES:
        gs_row_to_gray(out, row, width, t->channels, out_bits);
        if (t->invert) invert_gray(out, width, out_bits);
        return;
    case TIFF_INDEXED: { /* the index is each pixel's first sample; an extra one is alpha */
        const unsigned c = t->channels;
        if (t->bytes == 2) {
            const uint16_t *s = (const uint16_t *)(const void *)row;
            uint16_t *d = (uint16_t *)(void *)out;
            for (uint32_t x = 0; x < width; ++x) d[x] = t->lut[s[(size_t)x * c]];
        } else {
            for (uint32_t x = 0; x < width; ++x) out[x] = (unsigned char)t->lut[row[(size_t)x * c]];
        }
        return;
    }
    case TIFF_CMYK: {
        const unsigned c = t->channels;
        if (out_bits == 16) {
            const uint16_t *p = (const uint16_t *)(const void *)row;
            uint16_t *d = (uint16_t *)(void *)out;
            for (uint32_t x = 0; x < width; ++x, p += c)
                d[x] = (uint16_t)gs_luma(gs_cmyk_light(p[0], p[3], UINT16_MAX), gs_cmyk_light(p[1], p[3], UINT16_MAX),
                                         gs_cmyk_light(p[2], p[3], UINT16_MAX));
        } else {
            const unsigned char *p = row;
            for (uint32_t x = 0; x < width; ++x, p += c)
                out[x] = (unsigned char)gs_luma(gs_cmyk_light(p[0], p[3], UINT8_MAX), gs_cmyk_light(p[1], p[3], UINT8_MAX),
                                                gs_cmyk_light(p[2], p[3], UINT8_MAX));
        }
        return;
    }
    case TIFF_RGBA: {
        const uint32_t *p = (const uint32_t *)(const void *)row;
        for (uint32_t x = 0; x < width; ++x)
            out[x] = (unsigned char)gs_luma(TIFFGetR(p[x]), TIFFGetG(p[x]), TIFFGetB(p[x]));
        return;
    }
    case TIFF_GRAY_FLOAT:
        float_row(t, (float *)(void *)out, row, width);
        return;
    }
}

static gs_status tiff_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    tiff_state *t = reader->impl;
    for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t y = reader->next_row + i;
        const unsigned char *row;
        if (t->block) {
            const uint32_t b = y / t->block_rows;
            if (b != t->block_index) {
                gs_status rc = load_block(reader, b, err, err_size);
                if (rc != GS_OK) return rc;
            }
            row = t->block + (size_t)(y - b * t->block_rows) * t->row_bytes;
        } else {
            memset(t->line, 0, file_row_bytes(t, reader->info.width));
            if (TIFFReadScanline(t->tif, t->line, y, 0) < 0 || decode_failed(t)) {
                char what[64];
                snprintf(what, sizeof what, "row %u is unreadable", y);
                return tiff_failure(t, what, err, err_size);
            }
            if (t->row != t->line) unpack_row(t->row, t->line, reader->info.width, t->bits);
            row = t->row;
        }
        row_to_gray(t, dst + (size_t)i * stride, row, reader->info.width, reader->info.bits);
    }
    return GS_OK;
}

static void tiff_state_destroy(void *impl)
{
    tiff_state *t = impl;
    if (!t) return;
    if (t->rgba_begun) TIFFRGBAImageEnd(&t->rgba);
    if (t->tif) TIFFCleanup(t->tif);
    free(t->raw); /* after TIFFCleanup: libtiff never frees a buffer it was given */
    gs_tiff_input_close(&t->in);
    if (t->row != t->line) free(t->row);
    free(t->line);
    free(t->block);
    free(t->piece);
    free(t->lut);
    free(t);
}

static const gs_reader_ops tiff_ops = {
    .read_rows = tiff_read_rows,
    .destroy = tiff_state_destroy,
};

/* ---- what is read, and the refusals that name what is not ---- */

/* The sample format's name for the refusal message. */
static const char *sample_format_name(uint16_t format)
{
    switch (format) {
    case SAMPLEFORMAT_INT: return "signed integer";
    case SAMPLEFORMAT_IEEEFP: return "floating-point";
    case SAMPLEFORMAT_VOID: return "untyped";
    case SAMPLEFORMAT_COMPLEXINT: return "complex integer";
    case SAMPLEFORMAT_COMPLEXIEEEFP: return "complex floating-point";
    default: return "unknown-format";
    }
}

/* Photometric interpretations refused whatever their samples, named for the message
 * (before the sample format is judged: SGILog data, say, is tagged as signed). NULL for
 * the ones check_layout reads or judges itself. */
static const char *unsupported_photometric(uint16_t photometric, uint16_t compression)
{
    if (photometric == PHOTOMETRIC_LOGL || photometric == PHOTOMETRIC_LOGLUV ||
        compression == COMPRESSION_SGILOG || compression == COMPRESSION_SGILOG24)
        return "SGILog (LogL/LogLuv high dynamic range)";
    switch (photometric) {
    case PHOTOMETRIC_CIELAB: return "CIE L*a*b*";
    case PHOTOMETRIC_ICCLAB: return "ICC L*a*b*";
    case PHOTOMETRIC_ITULAB: return "ITU L*a*b*";
    case PHOTOMETRIC_MASK: return "transparency mask";
    case PHOTOMETRIC_CFA: return "colour filter array (camera raw)";
    case TIFF_PHOTOMETRIC_LINEARRAW: return "linear raw (camera raw)";
    default: return NULL;
    }
}

/* libtiff's default for a missing PhotometricInterpretation, as its RGBA interface takes
 * it: one colour sample is gray (white at 0 for fax codecs), three are RGB. 0 if none. */
static uint16_t default_photometric(uint16_t spp, uint16_t extra, uint16_t compression)
{
    const int colour = (int)spp - (int)extra;
    const int fax = compression == COMPRESSION_CCITTRLE || compression == COMPRESSION_CCITTFAX3 ||
                    compression == COMPRESSION_CCITTFAX4 || compression == COMPRESSION_CCITTRLEW;
    if (colour == 1) return fax ? PHOTOMETRIC_MINISWHITE : PHOTOMETRIC_MINISBLACK;
    if (colour == 3) return PHOTOMETRIC_RGB;
    return UINT16_MAX;
}

/* The gray table of an indexed image: 1/2/4-bit gray scaled to 0..255 (1-bit 0/255,
 * 2-bit x85, 4-bit x17; MinIsWhite counts down from white), or a palette's colour map
 * through gs_luma. Colour-map entries are 16-bit (0..65535); with indices of up to 8 bits
 * the gray is 8-bit from each entry's high byte (v >> 8: what libtiff's RGBA interface
 * and PIL take, and what a writer that stores v8 * 256 or v8 * 257 means by v8), with
 * 16-bit indices the gray is 16-bit from the entries whole, as 16-bit gray keeps its depth. */
static gs_status make_lut(tiff_state *t, uint16_t photometric, char *err, size_t err_size)
{
    const uint32_t values = 1u << t->bits;
    t->lut = calloc(t->bytes == 2 ? 65536u : 256u, sizeof *t->lut);
    if (!t->lut) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    if (photometric != PHOTOMETRIC_PALETTE) {
        const uint32_t top = values - 1u, white = 255u;
        for (uint32_t v = 0; v < values; ++v) {
            const uint32_t g = v * white / top; /* exact: 255 is a multiple of 1, 3 and 15 */
            t->lut[v] = (uint16_t)(photometric == PHOTOMETRIC_MINISWHITE ? white - g : g);
        }
        return GS_OK;
    }
    uint16_t *r = NULL, *g = NULL, *b = NULL;
    if (!TIFFGetField(t->tif, TIFFTAG_COLORMAP, &r, &g, &b) || !r || !g || !b)
        return tiff_failure(t, "palette TIFF without a colour map", err, err_size);
    /* libtiff holds 2^BitsPerSample entries of each (it refuses a shorter ColorMap). */
    const unsigned shift = t->bytes == 2 ? 0u : 8u;
    for (uint32_t v = 0; v < values; ++v)
        t->lut[v] = (uint16_t)gs_luma(r[v] >> shift, g[v] >> shift, b[v] >> shift);
    return GS_OK;
}

/* Which photometric interpretations are read, as how many channels and by which kind. */
static gs_status check_layout(tiff_state *t, uint16_t photometric, uint16_t spp,
                              uint16_t compression, uint16_t planar, char *err, size_t err_size)
{
    const unsigned bits = t->bits;
    const int whole_bytes = bits == 8 || bits == 16;
    switch (photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
        if (spp > 2) break;
        if (bits < 8 && spp != 1)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "%u-bit gray TIFF with an extra sample is not supported (1, 2 and "
                           "4-bit gray only alone)", bits);
        t->channels = spp;
        if (bits < 8) {
            t->kind = TIFF_INDEXED;
            return make_lut(t, photometric, err, err_size);
        }
        t->invert = photometric == PHOTOMETRIC_MINISWHITE;
        return GS_OK;
    case PHOTOMETRIC_PALETTE:
        if (spp > 2 || (bits < 8 && spp != 1))
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "%u-bit palette TIFF with %u samples per pixel is not supported (an "
                           "index, or an 8/16-bit index and alpha)", bits, spp);
        t->channels = spp;
        t->kind = TIFF_INDEXED;
        return make_lut(t, photometric, err, err_size);
    case PHOTOMETRIC_RGB:
        if (spp < 3 || spp > 4) break;
        if (!whole_bytes)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "%u-bit RGB TIFF samples are not supported (8 or 16-bit RGB only)", bits);
        t->channels = spp;
        return GS_OK;
    case PHOTOMETRIC_SEPARATED: {
        uint16_t inks = 0;
        TIFFGetFieldDefaulted(t->tif, TIFFTAG_INKSET, &inks);
        if (inks != INKSET_CMYK)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "separated TIFF of InkSet %u is not supported (CMYK only)", inks);
        if (spp < 4 || spp > 5) break;
        if (!whole_bytes)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "%u-bit CMYK TIFF samples are not supported (8 or 16-bit CMYK only)", bits);
        t->channels = spp;
        t->kind = TIFF_CMYK;
        return GS_OK;
    }
    case PHOTOMETRIC_YCBCR:
        if (spp != 3) break;
        if (compression == COMPRESSION_JPEG && planar == PLANARCONFIG_CONTIG) {
            /* JPEG-compressed YCbCr, interleaved: libjpeg converts to RGB, subsampling
             * included (libtiff does that only for interleaved samples). */
            if (!TIFFSetField(t->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
                return tiff_failure(t, "JPEG colour mode refused", err, err_size);
            t->channels = 3;
            return GS_OK;
        }
        if (bits != 8)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "%u-bit YCbCr TIFF samples are not supported (8-bit YCbCr only)", bits);
        t->channels = 3;
        t->kind = TIFF_RGBA;
        return GS_OK;
    default:
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "TIFF photometric interpretation %u is not supported (gray, gray+alpha, "
                       "palette, RGB, RGBA, CMYK or YCbCr only)", photometric);
    }
    return gs_fail(err, err_size, GS_ERR_FORMAT,
                   "TIFF with %u samples per pixel and photometric interpretation %u is not "
                   "supported (gray, gray+alpha, palette, RGB, RGBA, CMYK or YCbCr only)", spp, photometric);
}

/* Float and signed samples: gray alone (one sample a pixel, black at 0), IEEE 32 or 64
 * bits, or signed 16 bits. Colour is refused rather than mixed to gray: the fixed-point
 * luma is defined on unsigned integers, and a float rule would be a second formula. The
 * conversions that change samples say so in the reader's note. */
static gs_status check_float(tiff_state *t, gs_reader *reader, uint16_t format, uint16_t bps,
                             uint16_t spp, uint16_t photometric, char *err, size_t err_size)
{
    const int ieee = format == SAMPLEFORMAT_IEEEFP;
    if (ieee ? bps != 32 && bps != 64 : bps != 16)
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "TIFF with %u-bit %s samples is not supported (%s)", bps, sample_format_name(format),
                       ieee ? "32 or 64-bit floating-point only" : "16-bit signed integers only");
    if (spp != 1 || photometric != PHOTOMETRIC_MINISBLACK)
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "%s TIFF with %u samples per pixel and photometric interpretation %u is not "
                       "supported (one gray sample, black at 0, only): convert it to gray first",
                       ieee ? "floating-point" : "signed integer", spp, photometric);
    t->kind = TIFF_GRAY_FLOAT;
    t->bits = bps;
    t->bytes = bps / 8u;
    t->channels = 1;
    if (bps == 64) snprintf(reader->note, sizeof reader->note, "float64 samples rounded to float32");
    if (!ieee) snprintf(reader->note, sizeof reader->note, "signed 16-bit samples read as float32");
    return GS_OK;
}

/* The depths read at all; check_layout narrows them for RGB and YCbCr (whole bytes). */
static int bits_supported(unsigned bits)
{
    return bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16;
}

/* An unsigned integer of `n` bytes in the file's byte order. */
static uint64_t load_uint(const unsigned char *p, size_t n, int big_endian)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | p[big_endian ? i : n - 1 - i];
    return v;
}

/* The current directory's entry for `tag` as the file holds it: its count, and its value
 * when it is one SHORT, LONG or LONG8 (else 0). libtiff's own view may differ: it keeps
 * only as many strip offsets as the layout needs, dropping the rest without a word, and
 * cuts one uncompressed strip into strips of its own choosing. 0 when the entry is absent,
 * -1 when the directory cannot be read. */
static int find_entry(tiff_state *t, uint32_t tag, uint64_t *count, uint64_t *value)
{
    enum { TYPE_SHORT = 3, TYPE_LONG = 4, TYPE_LONG8 = 16 }; /* TIFF field types */
    const int big = TIFFIsBigTIFF(t->tif), be = TIFFIsBigEndian(t->tif);
    const size_t entry = big ? TIFF_DIR_ENTRY_BIG : TIFF_DIR_ENTRY_CLASSIC;
    const size_t count_bytes = big ? 8u : 2u, field = big ? 8u : 4u;
    unsigned char buf[TIFF_DIR_CHUNK_ENTRIES * TIFF_DIR_ENTRY_BIG];
    uint64_t at = TIFFCurrentDirOffset(t->tif);
    if (gs_tiff_input_pread(&t->in, at, buf, count_bytes) != count_bytes) return -1;
    uint64_t entries = load_uint(buf, count_bytes, be);
    at += count_bytes;
    while (entries > 0) {
        const size_t n = entries < TIFF_DIR_CHUNK_ENTRIES ? (size_t)entries : TIFF_DIR_CHUNK_ENTRIES;
        if (gs_tiff_input_pread(&t->in, at, buf, n * entry) != n * entry) return -1;
        for (size_t e = 0; e < n; ++e) {
            const unsigned char *p = buf + e * entry;
            if (load_uint(p, 2, be) != tag) continue;
            const uint64_t type = load_uint(p + 2, 2, be);
            const unsigned char *v = p + TIFF_DIR_ENTRY_COUNT_AT + field;
            *count = load_uint(p + TIFF_DIR_ENTRY_COUNT_AT, field, be);
            *value = *count != 1                       ? 0
                     : type == TYPE_SHORT              ? load_uint(v, 2, be)
                     : type == TYPE_LONG               ? load_uint(v, 4, be)
                     : type == TYPE_LONG8 && big       ? load_uint(v, 8, be)
                                                       : 0;
            return 1;
        }
        entries -= n;
        at += n * entry;
    }
    return 0;
}

/* The strip or tile tables must hold exactly as many entries as the file's layout has
 * strips (its RowsPerStrip, as TIFFNumberOfStrips counts) or tiles (TIFFNumberOfTiles).
 * A writer whose RowsPerStrip overflowed leaves more entries than one strip a plane
 * needs, and libtiff would read each plane from the first of them, rows apart. */
static gs_status check_strile_count(tiff_state *t, const gs_image_info *info, uint16_t planes,
                                    char *err, size_t err_size)
{
    const int tiled = TIFFIsTiled(t->tif);
    uint64_t count = 0, rows_per_strip = UINT32_MAX; /* RowsPerStrip's default: one strip */
    if (!tiled && find_entry(t, TIFFTAG_ROWSPERSTRIP, &count, &rows_per_strip) < 0)
        return tiff_failure(t, "the directory cannot be read", err, err_size);
    if (!tiled && count != 1) rows_per_strip = UINT32_MAX;
    const uint64_t strips = rows_per_strip == 0 ? 1 : (info->height + rows_per_strip - 1) / rows_per_strip;
    const uint64_t need = tiled ? TIFFNumberOfTiles(t->tif) : strips * planes;
    const uint32_t tags[2] = {tiled ? TIFFTAG_TILEOFFSETS : TIFFTAG_STRIPOFFSETS,
                              tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS};
    for (unsigned i = 0; i < 2; ++i) {
        uint64_t have = 0, unused = 0;
        const int found = find_entry(t, tags[i], &have, &unused);
        if (found < 0) return tiff_failure(t, "the directory cannot be read", err, err_size);
        if (found == 0 || have == need) continue;
        const char *what = i == 0 ? "offsets" : "byte counts";
        if (tiled)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "invalid TIFF: %llu tile %s where the tile grid of the %ux%u image "
                           "(%u plane%s) has %llu tiles", (unsigned long long)have, what,
                           info->width, info->height, planes, planes == 1 ? "" : "s",
                           (unsigned long long)need);
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "invalid TIFF: %llu strip %s where %u rows in strips of %llu rows (%u "
                       "plane%s) make %llu strips", (unsigned long long)have, what, info->height,
                       (unsigned long long)rows_per_strip, planes, planes == 1 ? "" : "s",
                       (unsigned long long)need);
    }
    return GS_OK;
}

/* ---- buffers ---- */

/* Block mode's buffers: a block of interleaved rows and one decoded strip or tile. */
static gs_status plan_blocks(tiff_state *t, const gs_image_info *info, uint32_t strip_rows,
                            uint64_t alloc_limit, char *err, size_t err_size)
{
    uint32_t block_rows = strip_rows;
    if (t->tiled) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(t->tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(t->tif, TIFFTAG_TILELENGTH, &th);
        if (tw == 0 || th == 0) return tiff_failure(t, "tiles without a size", err, err_size);
        t->tile_width = tw;
        block_rows = th;
        const uint64_t tile = TIFFTileSize64(t->tif); /* 0 when the size overflows */
        if (tile == 0) return tiff_failure(t, "tile size overflows", err, err_size);
        /* A tile may be larger than the image, but not larger than what --max-pixels
         * allows libtiff to allocate (its header alone claims it). */
        if (tile > alloc_limit)
            return gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                           "TIFF tile of %ux%u (%llu bytes) is over the memory limit that "
                           "the pixel limit sets (%llu bytes)", tw, th, (unsigned long long)tile,
                           (unsigned long long)alloc_limit);
        /* Every tile of the grid is decoded, padding included: the grid may pass the image
         * by at most TIFF_TILE_GRID_FACTOR times its pixels plus TIFF_TILE_GRID_SLACK (tiles
         * of 256 on a 100x100 image pass; a 16x16 image in tiles 2^28 wide does not). */
        const uint64_t grid_w = ((uint64_t)info->width + tw - 1) / tw * tw;
        const uint64_t grid_h = ((uint64_t)info->height + th - 1) / th * th;
        const uint64_t grid_max = TIFF_TILE_GRID_FACTOR * (uint64_t)info->width * info->height + TIFF_TILE_GRID_SLACK;
        if (grid_w > grid_max / grid_h)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "invalid TIFF: tiles of %ux%u for a %ux%u image would decode %llux%llu pixels",
                           tw, th, info->width, info->height, (unsigned long long)grid_w,
                           (unsigned long long)grid_h);
        /* The RGBA interface decodes tiles into its own buffer. */
        if (t->kind != TIFF_RGBA) t->piece_bytes = (size_t)tile;
    } else if (block_rows == 0) {
        block_rows = 1;
    }
    if (block_rows > info->height) block_rows = info->height;
    t->block_rows = block_rows;
    const uint64_t block = (uint64_t)block_rows * t->row_bytes;
    if (block > SIZE_MAX / 2) return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "TIFF block of %u rows does not fit in memory", block_rows);
    /* The RGBA block holds a whole strip or tile row at 4 bytes a pixel: libtiff's RGBA
     * interface decodes a strip from its start for every call, so a block never cuts one. */
    if (t->kind == TIFF_RGBA && block > alloc_limit)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                       "TIFF block of %u rows (%llu bytes as RGBA) is over the memory limit that "
                       "the pixel limit sets (%llu bytes)", block_rows, (unsigned long long)block,
                       (unsigned long long)alloc_limit);
    /* One strip of one plane, or of packed samples: rearranged into the block. */
    if (!t->tiled && (t->separate || t->bits < 8))
        t->piece_bytes = (size_t)block_rows * file_row_bytes(t, info->width);
    t->block = calloc(1, (size_t)block);
    if (t->piece_bytes) t->piece = calloc(1, t->piece_bytes);
    if (!t->block || (t->piece_bytes && !t->piece))
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-row TIFF block", block_rows);
    t->block_index = UINT32_MAX;
    return GS_OK;
}

/* Row mode's buffers: the row as libtiff gives it, and unpacked when its samples are packed. */
static gs_status plan_rows(tiff_state *t, const gs_image_info *info, char *err, size_t err_size)
{
    /* YCbCr JPEG gives RGB, which TIFFScanlineSize64 knows once JPEGCOLORMODE is set. */
    const uint64_t line = TIFFScanlineSize64(t->tif); /* 0 when the size overflows */
    const size_t want = file_row_bytes(t, info->width);
    if (line == 0 || line != want) return tiff_failure(t, "row size disagrees with the header", err, err_size);
    t->line = calloc(1, want);
    t->row = t->bits < 8 ? calloc(1, t->row_bytes) : t->line;
    if (!t->line || !t->row)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", t->row_bytes);
    return GS_OK;
}

/* TIFF_RGBA: libtiff's RGBA reader over the image, in the file's own orientation. */
static gs_status begin_rgba(tiff_state *t, char *err, size_t err_size)
{
    char why[1024]; /* TIFFRGBAImageOK's and TIFFRGBAImageBegin's message buffer */
    why[0] = '\0';
    if (!TIFFRGBAImageOK(t->tif, why) || !TIFFRGBAImageBegin(&t->rgba, t->tif, 1, why)) {
        if (t->msgs.error[0] || t->in.read_errno) return tiff_failure(t, why, err, err_size);
        return gs_fail(err, err_size, GS_ERR_FORMAT, "YCbCr TIFF that libtiff's RGBA interface "
                       "cannot read: %s", why);
    }
    t->rgba_begun = 1;
    t->rgba.req_orientation = t->rgba.orientation;
    if (t->rgba.height > INT_MAX) /* the interface's row offset is an int */
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "YCbCr TIFF of %u rows is too tall to read",
                       t->rgba.height);
    return GS_OK;
}

/* TIFF_RGBA over uncompressed tiles: libtiff's RGBA interface refuses an uncompressed tile
 * unless its raw buffer is exactly one tile ("Invalid tile byte count ... Expected 768, got
 * 1024"), which holds only for memory-mapped files: the buffer it makes itself is rounded
 * up to 1 KiB. A buffer of exactly one tile, handed to libtiff, passes that check; a tile
 * whose byte count passes it fails to read ("Data buffer too small"). */
static gs_status raw_tiles(tiff_state *t, uint16_t compression, char *err, size_t err_size)
{
    if (t->kind != TIFF_RGBA || !t->tiled || compression != COMPRESSION_NONE) return GS_OK;
    const tmsize_t tile = TIFFTileSize(t->tif); /* plan_blocks held it to the allocation cap */
    if (tile <= 0) return tiff_failure(t, "tile size overflows", err, err_size);
    t->raw = malloc((size_t)tile);
    if (!t->raw) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a TIFF tile");
    if (!TIFFReadBufferSetup(t->tif, t->raw, tile)) return tiff_failure(t, "raw buffer refused", err, err_size);
    return GS_OK;
}

gs_status gs_read_tiff_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    tiff_state *t = calloc(1, sizeof *t);
    if (!t) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");

    const uint64_t limit = gs_tiff_bytes_limit(max_pixels);
    rc = gs_tiff_input_open(&reader->src, limit, &t->in, err, err_size);
    if (rc != GS_OK) goto cleanup;
    t->tif = gs_tiff_open_read(&t->in, limit, &t->msgs);
    if (!t->tif) {
        rc = tiff_failure(t, "not a readable TIFF", err, err_size);
        goto cleanup;
    }

    uint32_t width = 0, height = 0;
    uint16_t bps = 0, spp = 0, format = 0, photometric = 0, planar = 0, compression = 0;
    uint16_t extra = 0, *extra_kinds = NULL;
    if (!TIFFGetField(t->tif, TIFFTAG_IMAGEWIDTH, &width) ||
        !TIFFGetField(t->tif, TIFFTAG_IMAGELENGTH, &height) || width == 0 || height == 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: no image size");
        goto cleanup;
    }
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_EXTRASAMPLES, &extra, &extra_kinds);
    if (!TIFFGetField(t->tif, TIFFTAG_PHOTOMETRIC, &photometric) &&
        (photometric = default_photometric(spp, extra, compression)) == UINT16_MAX) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "invalid TIFF: no photometric interpretation for %u samples per pixel", spp);
        goto cleanup;
    }
    /* The refusals name the feature: the codec first, then the colour space, then the
     * sample format and depth. */
    if (!TIFFIsCODECConfigured(compression)) {
        const TIFFCodec *codec = TIFFFindCODEC(compression);
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "TIFF compression %u%s%s%s is not supported (libtiff was built without it)",
                     compression, codec ? " (" : "", codec ? codec->name : "", codec ? ")" : "");
        goto cleanup;
    }
    const char *colour = unsupported_photometric(photometric, compression);
    if (colour) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%s TIFF is not supported (gray, gray+alpha, palette, RGB, RGBA, CMYK or YCbCr only)",
                     colour);
        goto cleanup;
    }
    if (format == SAMPLEFORMAT_IEEEFP || format == SAMPLEFORMAT_INT) {
        rc = check_float(t, reader, format, bps, spp, photometric, err, err_size);
        if (rc != GS_OK) goto cleanup;
    } else if (format != SAMPLEFORMAT_UINT) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "TIFF with %s samples is not supported (unsigned integers, 32/64-bit "
                     "floating-point and 16-bit signed integers only)", sample_format_name(format));
        goto cleanup;
    } else if (!bits_supported(bps)) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%u-bit TIFF samples are not supported (1, 2, 4, 8 or 16-bit only)", bps);
        goto cleanup;
    } else {
        t->bits = bps;
        t->bytes = bps == 16 ? 2u : 1u;
        rc = check_layout(t, photometric, spp, compression, planar, err, err_size);
        if (rc != GS_OK) goto cleanup;
    }
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    t->tiled = TIFFIsTiled(t->tif);
    t->separate = planar == PLANARCONFIG_SEPARATE && t->channels > 1;
    const uint64_t pixel_bytes = t->kind == TIFF_RGBA ? TIFF_RGBA_PIXEL_BYTES : (uint64_t)t->channels * t->bytes;
    const uint64_t row_bytes = (uint64_t)width * pixel_bytes;
    if (row_bytes > SIZE_MAX / 4) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "TIFF row of %u pixels does not fit in memory", width);
        goto cleanup;
    }
    t->row_bytes = (size_t)row_bytes;
    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = t->kind == TIFF_GRAY_FLOAT ? 32u : t->kind == TIFF_RGBA || bps < 16 ? 8u : 16u;
    uint32_t rows_per_strip = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    rc = check_strile_count(t, &reader->info, planar == PLANARCONFIG_SEPARATE ? spp : 1, err, err_size);
    if (rc != GS_OK) goto cleanup;
    if (t->kind == TIFF_RGBA) {
        rc = begin_rgba(t, err, err_size);
        if (rc != GS_OK) goto cleanup;
    }
    const uint32_t strip_rows = rows_per_strip < height ? rows_per_strip : height;
    if (t->tiled || t->separate || t->kind == TIFF_RGBA ||
        (uint64_t)strip_rows * row_bytes <= TIFF_BLOCK_BYTES_MAX)
        rc = plan_blocks(t, &reader->info, strip_rows, limit, err, err_size);
    else
        rc = plan_rows(t, &reader->info, err, err_size);
    if (rc == GS_OK) rc = raw_tiles(t, compression, err, err_size);
    if (rc != GS_OK) goto cleanup;

    const tdir_t pages = TIFFNumberOfDirectories(t->tif);
    reader->info.pages = pages > 1 ? (uint32_t)pages : 1u;
    reader->info.format = "TIFF";
    reader->info.was_color = t->channels >= 3 || photometric == PHOTOMETRIC_PALETTE;
    reader->info.had_alpha = t->kind == TIFF_CMYK ? t->channels == 5 : t->channels == 2 || t->channels == 4;
    reader->ops = &tiff_ops;
    reader->impl = t;
    /* From here on, any error or warning is a decode's (decode_failed, tiff_failure). */
    t->msgs.error[0] = t->msgs.warning[0] = '\0';
    t = NULL;

cleanup:
    tiff_state_destroy(t);
    return rc;
}
