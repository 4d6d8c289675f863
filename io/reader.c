/* reader.c: opens an input, detects its format and hands rows out through its reader. */
/* The input is a path or "-"; the format comes from the magic bytes. */

#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/* Fill reader->head with the input's first bytes and put the source back at its start. */
static gs_status read_head(gs_reader *reader, char *err, size_t err_size)
{
    gs_source *src = &reader->src;
    reader->head_len = gs_source_read_head(src, reader->head, sizeof reader->head, GS_IO_HEAD_MIN);
    if (src->read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
    gs_status rc = gs_source_rewind(src, err, err_size);
    if (rc == GS_OK && reader->head_len == 0) rc = gs_fail(err, err_size, GS_ERR_FORMAT, "empty file");
    return rc;
}

/* ---- format detection ---- */

static int head_starts(const gs_reader *reader, const void *magic, size_t len)
{
    return reader->head_len >= len && memcmp(reader->head, magic, len) == 0;
}


/* Signatures of the formats stb_image reads, for the format name and a sharper error. */
static const struct {
    const char *magic;
    size_t len;
    const char *name;
} stb_magic[] = {
    {"8BPS", 4, "PSD"},
    {"#?RADIANCE\n", 11, "HDR"},
    {"#?RGBE\n", 7, "HDR"},
    {"\x53\x80\xF6\x34", 4, "PIC"},
};

/* Formats gsmooth does not read, known by their signatures so the refusal names them. */
static const struct {
    const char *magic;
    size_t len;
    const char *name;
} refused_magic[] = {
    {"\x00\x00\x00\x0CjP  \r\n\x87\n", 12, "JPEG 2000"},
    {"\xFF\x4F\xFF\x51", 4, "JPEG 2000"}, /* a bare codestream: SOC, then SIZ */
    {"\x00\x00\x00\x0CJXL \r\n\x87\n", 12, "JPEG XL"},
    {"\xFF\x0A", 2, "JPEG XL"},
};

/* ISO media files open with a box size, then "ftyp" and the major brand. */
static const struct {
    const char brand[5];
    const char *name;
} refused_brands[] = {
    {"avif", "AVIF"}, {"avis", "AVIF"}, {"heic", "HEIC"}, {"heix", "HEIC"}, {"heim", "HEIC"},
    {"heis", "HEIC"}, {"hevc", "HEIC"}, {"hevx", "HEIC"}, {"mif1", "HEIF"}, {"msf1", "HEIF"},
};

/* The formats of the tables above, by their signatures. NULL: none of them. */
static const char *refused_format(const gs_reader *reader)
{
    const unsigned char *h = reader->head;
    if (reader->head_len >= 12 && memcmp(h + 4, "ftyp", 4) == 0)
        for (size_t i = 0; i < sizeof refused_brands / sizeof refused_brands[0]; i++)
            if (memcmp(h + 8, refused_brands[i].brand, 4) == 0) return refused_brands[i].name;
    for (size_t i = 0; i < sizeof refused_magic / sizeof refused_magic[0]; i++)
        if (head_starts(reader, refused_magic[i].magic, refused_magic[i].len)) return refused_magic[i].name;
    return NULL;
}

/* The fast PNG reader refused the data (`why`): libpng, the reference, reads the input
 * again from its first byte, so a fast-path bug can never refuse a valid file. */
static gs_status png_fall_back(gs_reader *reader, const char *why, char *err, size_t err_size)
{
    char reason[GS_ERR_SIZE];
    snprintf(reason, sizeof reason, "%s", why);
    if (reader->impl) reader->ops->destroy(reader->impl);
    reader->impl = NULL;
    reader->ops = NULL;
    reader->png_fallback = 0;
    gs_status rc = gs_source_rewind(&reader->src, err, err_size);
    if (rc != GS_OK) return rc;
    rc = gs_read_png_open(reader, reader->max_pixels, err, err_size);
    if (rc != GS_OK) return rc;
    snprintf(reader->note, sizeof reader->note, "the fast PNG reader refused it (%.200s); libpng decoded it",
             reason);
    return GS_OK;
}

/* A PNG: the fast reader where it takes the file, else libpng (GSMOOTH_PNG_DECODER above). */
static gs_status open_png(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    const char *decoder = getenv("GSMOOTH_PNG_DECODER");
    const int libpng_only = decoder && strcmp(decoder, "libpng") == 0;
    const int fast_only = decoder && strcmp(decoder, "fast") == 0;
    if (libpng_only || !gs_png_isal_takes(reader->head, reader->head_len))
        return gs_read_png_open(reader, max_pixels, err, err_size);
    /* A stream cannot go back past its first 64 KiB: there the first verdict stands. */
    reader->png_fallback = !fast_only && reader->src.fd < 0;
    gs_status rc = gs_read_png_isal_open(reader, max_pixels, err, err_size);
    if (rc == GS_ERR_FORMAT && reader->png_fallback) return png_fall_back(reader, err, err, err_size);
    return rc;
}

static gs_status open_by_content(gs_reader *reader, uint64_t max_pixels, char *err,
                                 size_t err_size)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

    static const unsigned char jpeg_sig[3] = {0xFF, 0xD8, 0xFF};

    if (head_starts(reader, png_sig, sizeof png_sig)) return open_png(reader, max_pixels, err, err_size);
    if (head_starts(reader, jpeg_sig, sizeof jpeg_sig))
        return gs_read_jpeg_open(reader, max_pixels, err, err_size);
    /* Byte order "II" or "MM", then 42 (classic TIFF) or 43 (BigTIFF) in that order. */
    if (head_starts(reader, "II*\0", 4) || head_starts(reader, "MM\0*", 4) ||
        head_starts(reader, "II+\0", 4) || head_starts(reader, "MM\0+", 4))
        return gs_read_tiff_open(reader, max_pixels, err, err_size);
    /* FITS: the first card is SIMPLE, its keyword padded with blanks to 8 columns, then the
     * value indicator "= " in columns 9-10 (FITS 4.0, section 4.1.2). */
    if (head_starts(reader, "SIMPLE  = ", 10)) return gs_read_fits_open(reader, max_pixels, err, err_size);
    if (head_starts(reader, "\x93NUMPY", 6)) return gs_read_npy_open(reader, max_pixels, err, err_size);
    if (head_starts(reader, "GIF87a", 6) || head_starts(reader, "GIF89a", 6))
        return gs_read_gif_open(reader, max_pixels, err, err_size);
    /* WebP is RIFF, a size, then "WEBP". */
    if (reader->head_len >= 12 && head_starts(reader, "RIFF", 4) && memcmp(reader->head + 8, "WEBP", 4) == 0)
        return gs_read_webp_open(reader, max_pixels, err, err_size);

    if (reader->head_len >= 3 && reader->head[0] == 'P' && gs_pnm_space(reader->head[2])) {
        char kind = (char)reader->head[1];
        if (kind >= '1' && kind <= '6') return gs_read_pnm_open(reader, max_pixels, err, err_size);
        if (kind == '7')
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "Netpbm type P7 (PAM) is not supported (only PBM, PGM and PPM: P1 to P6)");
    }

    if (head_starts(reader, "BM", 2)) return gs_read_bmp_open(reader, max_pixels, err, err_size);

    for (size_t i = 0; i < sizeof stb_magic / sizeof stb_magic[0]; i++)
        if (head_starts(reader, stb_magic[i].magic, stb_magic[i].len))
            return gs_read_stb_open(reader, max_pixels, stb_magic[i].name, err, err_size);

    const char *refused = refused_format(reader);
    if (refused)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "%s is not a format gsmooth reads (convert it to PNG first)",
                       refused);

    /* TGA has no signature: last, with a strict check of its header. */
    return gs_read_tga_open(reader, max_pixels, err, err_size);
}

/* ---- public API ---- */

gs_status gs_reader_open(const char *path, uint64_t max_pixels, gs_reader **out,
                         gs_image_info *info, char *err, size_t err_size)
{
    gs_status rc;
    gs_reader *reader = NULL;

    if (out) *out = NULL;
    if (info) memset(info, 0, sizeof *info);
    if (!path || !out || !info)
        return gs_fail(err, err_size, GS_ERR_USAGE, "gs_reader_open: NULL argument");

    reader = calloc(1, sizeof *reader);
    if (!reader) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");

    reader->max_pixels = max_pixels;
    rc = gs_source_open(path, &reader->src, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = read_head(reader, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = open_by_content(reader, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    /* Every opener promises this; checked once here so the row code can rely on it. */
    if (reader->info.width == 0 || reader->info.height == 0 ||
        (reader->info.bits != 8 && reader->info.bits != 16 && reader->info.bits != 32)) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "decoder gave an invalid header (%ux%u, %u-bit)",
                     reader->info.width, reader->info.height, reader->info.bits);
        goto cleanup;
    }
    *info = reader->info;
    *out = reader;
    reader = NULL;

cleanup:
    gs_reader_close(reader);
    return rc;
}

/* The fast PNG reader refused the data after delivering reader->next_row rows: libpng
 * reads the input again, passes over those rows (the same bytes: both give libpng's pixels
 * up to a refusal) and delivers the `rows` asked for. */
static gs_status png_read_again(gs_reader *reader, void *dst, size_t stride, uint32_t rows,
                                char *err, size_t err_size)
{
    const gs_image_info was = reader->info;
    gs_status rc = png_fall_back(reader, err, err, err_size);
    if (rc != GS_OK) return rc;
    if (reader->info.width != was.width || reader->info.height != was.height ||
        reader->info.bits != was.bits)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "libpng reads another header (%ux%u, %u-bit)",
                       reader->info.width, reader->info.height, reader->info.bits);
    unsigned char *row = malloc((size_t)was.width * (was.bits / 8));
    if (!row) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    /* next_row counts up again as the rows pass: some readers index their image by it. */
    const uint32_t delivered = reader->next_row;
    for (reader->next_row = 0; reader->next_row < delivered && rc == GS_OK; reader->next_row++)
        rc = reader->ops->read_rows(reader, row, 0, 1, err, err_size);
    free(row);
    if (rc != GS_OK) return rc;
    return reader->ops->read_rows(reader, dst, stride, rows, err, err_size);
}

gs_status gs_reader_read_rows(gs_reader *reader, void *dst, size_t stride, uint32_t rows,
                              char *err, size_t err_size)
{
    if (!reader || (!dst && rows))
        return gs_fail(err, err_size, GS_ERR_USAGE, "gs_reader_read_rows: NULL argument");
    if (reader->failed)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "an earlier read from this image failed");
    if (rows > reader->info.height - reader->next_row)
        return gs_fail(err, err_size, GS_ERR_USAGE, "asked for rows %u..%u of an image of %u rows",
                       reader->next_row, reader->next_row + (rows - 1), reader->info.height);
    size_t row_bytes = (size_t)reader->info.width * (reader->info.bits / 8);
    if (rows > 1 && stride < row_bytes)
        return gs_fail(err, err_size, GS_ERR_USAGE, "row stride %zu is below the row size %zu",
                       stride, row_bytes);
    if (rows == 0) return GS_OK;

    gs_status rc = reader->ops->read_rows(reader, dst, stride, rows, err, err_size);
    if (rc == GS_ERR_FORMAT && reader->png_fallback) rc = png_read_again(reader, dst, stride, rows, err, err_size);
    if (rc != GS_OK) {
        reader->failed = 1;
        return rc;
    }
    reader->next_row += rows;
    return GS_OK;
}

const char *gs_reader_note(const gs_reader *reader)
{
    return reader && reader->note[0] ? reader->note : NULL;
}

const char *gs_reader_fits_cards(const gs_reader *reader, size_t *count)
{
    const int any = reader && reader->fits_cards && reader->fits_card_count;
    if (count) *count = any ? reader->fits_card_count : 0;
    return any ? reader->fits_cards : NULL;
}

void gs_reader_close(gs_reader *reader)
{
    if (!reader) return;
    free(reader->fits_cards);
    if (reader->ops && reader->impl) reader->ops->destroy(reader->impl);
    gs_source_close(&reader->src);
    free(reader);
}
