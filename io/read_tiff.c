/* read_tiff.c: the TIFF reader on libtiff: 8/16-bit gray, gray+alpha and RGB(A) (to BT.601 gray), strips or tiles, any codec libtiff has, BigTIFF; the first page, streamed by rows or by bands of tile rows. */
#include "io_internal.h"
#include "tiff_io.h"

#include <errno.h>
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
 * Rows are delivered in one of two ways:
 *   - tiles, strips stored as separate planes, and interleaved strips of up to
 *     TIFF_BAND_BYTES_MAX: a band (a tile row, or a strip) of all planes is decoded into
 *     an interleaved buffer of band height x width pixels;
 *   - larger interleaved strips (a whole image in one strip, say): TIFFReadScanline, one
 *     row at a time (libtiff decodes a strip front to back, so memory stays one row plus
 *     libtiff's raw buffer).
 */

/* Interleaved strips up to this size are decoded whole (libtiff inflates a whole strip with
 * libdeflate, a row at a time with zlib: 3x slower); larger ones a row at a time. */
#define TIFF_BAND_BYTES_MAX (8u << 20)
/* The tile grid's pixels (tiles across x tile width, tiles down x tile height) may be at
 * most this many times the image's, plus the slack (see plan_bands). */
#define TIFF_TILE_GRID_FACTOR 4u
#define TIFF_TILE_GRID_SLACK (UINT64_C(1) << 24)

typedef struct tiff_state {
    TIFF *tif;
    gs_tiff_input in;       /* where libtiff's reads go */
    gs_tiff_messages msgs;  /* libtiff's first error on this handle */
    unsigned channels;      /* samples per pixel: 1 gray, 2 gray+extra, 3 RGB, 4 RGB+extra */
    unsigned bytes;         /* bytes per sample: 1 or 2 */
    int invert;             /* MinIsWhite: gray = max - sample */
    size_t row_bytes;       /* one row, interleaved, native samples */
    unsigned char *row;     /* row mode: the row as libtiff gives it */
    /* band mode (band != NULL): tiles, separate planes, or strips up to TIFF_BAND_BYTES_MAX */
    int tiled;
    int separate;           /* planes stored apart (PlanarConfig 2) */
    uint32_t band_rows;     /* tile height, or rows per strip */
    uint32_t tile_width;
    uint32_t band_index;    /* band held in `band`; UINT32_MAX before the first */
    unsigned char *band;    /* band_rows x row_bytes */
    unsigned char *piece;   /* one tile, or one plane's strip, as libtiff decodes it;
                             * NULL for interleaved strips, decoded straight into band */
    size_t piece_bytes;
} tiff_state;

static gs_status tiff_failure(tiff_state *t, const char *what, char *err, size_t err_size)
{
    if (t->in.read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(t->in.read_errno));
    if (t->msgs.error[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: %s", t->msgs.error);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: %s", what);
}

/* Copy sample plane `plane` (or all interleaved samples when not separate) of `cols`
 * pixels from `src` into the interleaved row `dst`. */
static void place_samples(const tiff_state *t, unsigned char *dst, const unsigned char *src,
                          uint32_t cols, unsigned plane)
{
    if (!t->separate) {
        memcpy(dst, src, (size_t)cols * t->channels * t->bytes);
        return;
    }
    const size_t step = (size_t)t->channels * t->bytes;
    dst += (size_t)plane * t->bytes;
    for (uint32_t x = 0; x < cols; ++x, dst += step, src += t->bytes) memcpy(dst, src, t->bytes);
}

/* Decode band `b` (rows b * band_rows onwards) of every plane into t->band. */
static gs_status load_band(gs_reader *reader, uint32_t b, char *err, size_t err_size)
{
    tiff_state *t = reader->impl;
    const uint32_t width = reader->info.width;
    const uint32_t y0 = b * t->band_rows;
    const uint32_t rows = reader->info.height - y0 < t->band_rows ? reader->info.height - y0 : t->band_rows;
    const unsigned planes = t->separate ? t->channels : 1;
    const size_t plane_px_bytes = (size_t)(t->separate ? 1 : t->channels) * t->bytes;

    for (unsigned s = 0; s < planes; ++s) {
        if (!t->tiled) {
            const tmsize_t want = (tmsize_t)((size_t)rows * width * plane_px_bytes);
            const uint32_t strip = TIFFComputeStrip(t->tif, y0, (uint16_t)s);
            unsigned char *into = t->piece ? t->piece : t->band;
            memset(into, 0, (size_t)want); /* nothing of the last strip can show through */
            if (TIFFReadEncodedStrip(t->tif, strip, into, want) != want || t->msgs.bad_data)
                return tiff_failure(t, "a strip is short or unreadable", err, err_size);
            if (!t->piece) continue; /* interleaved: the strip is the band */
            for (uint32_t r = 0; r < rows; ++r)
                place_samples(t, t->band + (size_t)r * t->row_bytes,
                              t->piece + (size_t)r * width * plane_px_bytes, width, s);
            continue;
        }
        const size_t tile_row = (size_t)t->tile_width * plane_px_bytes;
        for (uint64_t x64 = 0; x64 < width; x64 += t->tile_width) {
            const uint32_t x = (uint32_t)x64;
            const uint32_t tile = TIFFComputeTile(t->tif, x, y0, 0, (uint16_t)s);
            memset(t->piece, 0, t->piece_bytes);
            if (TIFFReadEncodedTile(t->tif, tile, t->piece, (tmsize_t)t->piece_bytes) !=
                (tmsize_t)t->piece_bytes || t->msgs.bad_data)
                return tiff_failure(t, "a tile is short or unreadable", err, err_size);
            const uint32_t cols = width - x < t->tile_width ? width - x : t->tile_width;
            for (uint32_t r = 0; r < rows; ++r)
                place_samples(t, t->band + (size_t)r * t->row_bytes + (size_t)x * t->channels * t->bytes,
                              t->piece + (size_t)r * tile_row, cols, s);
        }
    }
    t->band_index = b;
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

static gs_status tiff_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    tiff_state *t = reader->impl;
    for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t y = reader->next_row + i;
        unsigned char *row;
        if (t->band) {
            const uint32_t b = y / t->band_rows;
            if (b != t->band_index) {
                gs_status rc = load_band(reader, b, err, err_size);
                if (rc != GS_OK) return rc;
            }
            row = t->band + (size_t)(y - b * t->band_rows) * t->row_bytes;
        } else {
            memset(t->row, 0, t->row_bytes);
            if (TIFFReadScanline(t->tif, t->row, y, 0) < 0 || t->msgs.bad_data)
                return tiff_failure(t, "a row is unreadable", err, err_size);
            row = t->row;
        }
        unsigned char *out = dst + (size_t)i * stride;
        gs_row_to_gray(out, row, reader->info.width, t->channels, reader->info.bits);
        if (t->invert) invert_gray(out, reader->info.width, reader->info.bits);
    }
    return GS_OK;
}

static void tiff_state_destroy(void *impl)
{
    tiff_state *t = impl;
    if (!t) return;
    if (t->tif) TIFFCleanup(t->tif);
    gs_tiff_input_close(&t->in);
    free(t->row);
    free(t->band);
    free(t->piece);
    free(t);
}

static const gs_reader_ops tiff_ops = {
    .read_rows = tiff_read_rows,
    .destroy = tiff_state_destroy,
};

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

/* Which photometric interpretations are read, and as how many channels. */
static gs_status check_layout(tiff_state *t, uint16_t photometric, uint16_t spp,
                              uint16_t compression, uint16_t planar, char *err, size_t err_size)
{
    switch (photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
        if (spp > 2) break;
        t->invert = photometric == PHOTOMETRIC_MINISWHITE;
        t->channels = spp;
        return GS_OK;
    case PHOTOMETRIC_RGB:
        if (spp < 3 || spp > 4) break;
        t->channels = spp;
        return GS_OK;
    case PHOTOMETRIC_YCBCR:
        /* JPEG-compressed YCbCr: libjpeg converts to RGB, subsampling included; libtiff
         * does that only for interleaved samples (separate planes come back as Y, Cb, Cr). */
        if (compression == COMPRESSION_JPEG && spp == 3 && planar != PLANARCONFIG_CONTIG)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "YCbCr JPEG TIFF with separate planes is not supported (interleaved only)");
        if (compression != COMPRESSION_JPEG || spp != 3) break;
        if (!TIFFSetField(t->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
            return tiff_failure(t, "JPEG colour mode refused", err, err_size);
        t->channels = 3;
        return GS_OK;
    case PHOTOMETRIC_PALETTE:
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "palette TIFF is not supported (gray, gray+alpha, RGB or RGBA only)");
    default:
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "TIFF photometric interpretation %u is not supported (gray, gray+alpha, RGB "
                       "or RGBA only)", photometric);
    }
    return gs_fail(err, err_size, GS_ERR_FORMAT,
                   "TIFF with %u samples per pixel and photometric interpretation %u is not "
                   "supported (gray, gray+alpha, RGB or RGBA only)", spp, photometric);
}

/* Band mode's buffers: a band of interleaved rows and one decoded strip or tile. */
static gs_status plan_bands(tiff_state *t, const gs_image_info *info, uint32_t strip_rows,
                            uint64_t alloc_limit, char *err, size_t err_size)
{
    uint32_t band_rows = strip_rows;
    if (t->tiled) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(t->tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(t->tif, TIFFTAG_TILELENGTH, &th);
        if (tw == 0 || th == 0) return tiff_failure(t, "tiles without a size", err, err_size);
        t->tile_width = tw;
        band_rows = th;
        const uint64_t tile = TIFFTileSize64(t->tif); /* 0 when the size overflows */
        if (tile == 0) return tiff_failure(t, "tile size overflows", err, err_size);
        /* A tile may be larger than the image, but not larger than what --max-pixels
         * allows libtiff to allocate (its header alone claims it). */
        if (tile > alloc_limit)
            return gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                           "TIFF tile of %ux%u (%llu bytes) is over the memory limit that "
                           "--max-pixels sets (%llu bytes)", tw, th, (unsigned long long)tile,
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
        t->piece_bytes = (size_t)tile;
    } else if (band_rows == 0) {
        band_rows = 1;
    }
    if (band_rows > info->height) band_rows = info->height;
    t->band_rows = band_rows;
    const uint64_t band = (uint64_t)band_rows * t->row_bytes;
    if (band > SIZE_MAX / 2) return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "TIFF band of %u rows does not fit in memory", band_rows);
    if (!t->tiled && t->separate) /* one strip of one plane: a part of the band's size */
        t->piece_bytes = (size_t)band_rows * info->width * t->bytes;
    t->band = calloc(1, (size_t)band);
    if (t->piece_bytes) t->piece = calloc(1, t->piece_bytes);
    if (!t->band || (t->piece_bytes && !t->piece))
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-row TIFF band", band_rows);
    t->band_index = UINT32_MAX;
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
    if (!TIFFGetField(t->tif, TIFFTAG_PHOTOMETRIC, &photometric)) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid TIFF: no photometric interpretation");
        goto cleanup;
    }
    if (format != SAMPLEFORMAT_UINT) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "TIFF with %s samples is not supported (unsigned 8 or 16-bit integers only)",
                     sample_format_name(format));
        goto cleanup;
    }
    if (bps != 8 && bps != 16) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%u-bit TIFF samples are not supported (8 or 16-bit only)", bps);
        goto cleanup;
    }
    rc = check_layout(t, photometric, spp, compression, planar, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    t->bytes = bps / 8u;
    t->tiled = TIFFIsTiled(t->tif);
    t->separate = planar == PLANARCONFIG_SEPARATE && t->channels > 1;
    const uint64_t row_bytes = (uint64_t)width * t->channels * t->bytes;
    if (row_bytes > SIZE_MAX / 4) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "TIFF row of %u pixels does not fit in memory", width);
        goto cleanup;
    }
    t->row_bytes = (size_t)row_bytes;
    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = bps;
    uint32_t rows_per_strip = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    const uint32_t strip_rows = rows_per_strip < height ? rows_per_strip : height;
    if (t->tiled || t->separate || (uint64_t)strip_rows * row_bytes <= TIFF_BAND_BYTES_MAX) {
        rc = plan_bands(t, &reader->info, strip_rows, limit, err, err_size);
        if (rc != GS_OK) goto cleanup;
    } else {
        /* A scanline as libtiff gives it; YCbCr JPEG gives RGB, which TIFFScanlineSize64
         * knows once JPEGCOLORMODE is set. */
        const uint64_t line = TIFFScanlineSize64(t->tif); /* 0 when the size overflows */
        if (line == 0 || line != row_bytes) {
            rc = tiff_failure(t, "row size disagrees with the header", err, err_size);
            goto cleanup;
        }
        t->row = calloc(1, t->row_bytes);
        if (!t->row) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", t->row_bytes);
            goto cleanup;
        }
    }

    const tdir_t pages = TIFFNumberOfDirectories(t->tif);
    reader->info.pages = pages > 1 ? (uint32_t)pages : 1u;
    reader->info.format = "TIFF";
    reader->info.was_color = t->channels >= 3;
    reader->info.had_alpha = t->channels == 2 || t->channels == 4;
    reader->ops = &tiff_ops;
    reader->impl = t;
    t = NULL;

cleanup:
    tiff_state_destroy(t);
    return rc;
}
