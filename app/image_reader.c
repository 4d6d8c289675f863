/* image_reader.c: opens an input (path or "-"), detects its format from the magic bytes, and hands rows out through the format's reader. */
#include "image_io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First allocation when slurping a stream; it doubles from there. */
#define SLURP_INITIAL_SIZE ((size_t)64 * 1024)

/* ---- colour to gray, one row ---- */

/* One loop body for both sample widths, so 8-bit and 16-bit cannot drift apart. */
#define DEFINE_ROW_TO_GRAY(name, type)                                                   \
    static void name(type *dst, const type *src, uint32_t width, unsigned channels)     \
    {                                                                                    \
        if (channels < 3) { /* gray or gray+alpha: keep the gray sample */              \
            for (uint32_t x = 0; x < width; x++) dst[x] = src[(size_t)x * channels];    \
            return;                                                                      \
        }                                                                                \
        for (uint32_t x = 0; x < width; x++) {                                           \
            const type *p = src + (size_t)x * channels;                                  \
            dst[x] = (type)gs_luma(p[0], p[1], p[2]);                                    \
        }                                                                                \
    }

DEFINE_ROW_TO_GRAY(row_to_gray8, uint8_t)
DEFINE_ROW_TO_GRAY(row_to_gray16, uint16_t)

void gs_row_to_gray(void *dst, const void *src, uint32_t width, unsigned channels,
                    unsigned bits)
{
    if (channels == 1) {
        memcpy(dst, src, (size_t)width * (bits / 8));
        return;
    }
    if (bits == 16)
        row_to_gray16(dst, src, width, channels);
    else
        row_to_gray8(dst, src, width, channels);
}

gs_status gs_check_pixels(uint32_t width, uint32_t height, uint64_t max_pixels, char *err,
                          size_t err_size)
{
    /* Both factors are below 2^32, so the product cannot wrap in 64 bits. */
    uint64_t pixels = (uint64_t)width * height;
    if (pixels <= max_pixels) return GS_OK;
    return gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                   "%ux%u is %llu pixels, over the limit of %llu (--max-pixels)", width, height,
                   (unsigned long long)pixels, (unsigned long long)max_pixels);
}

/* ---- the input source ---- */

size_t gs_source_read(gs_source *src, void *buf, size_t n)
{
    if (!src->fp) {
        size_t left = src->size - src->pos;
        if (n > left) n = left;
        memcpy(buf, src->data + src->pos, n);
        src->pos += n;
        return n;
    }
    errno = 0;
    size_t got = fread(buf, 1, n, src->fp);
    if (got < n && ferror(src->fp)) src->read_errno = errno ? errno : EIO;
    return got;
}

/* Read all of `fd` into memory: stdin and pipes cannot seek back after detection, and
 * stb_image has no streaming anyway. */
static gs_status slurp(int fd, gs_source *src, char *err, size_t err_size)
{
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0;
    gs_status rc = GS_OK;

    for (;;) {
        if (len == cap) {
            if (cap > SIZE_MAX / 2) {
                rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "input is too large to hold in memory");
                goto cleanup;
            }
            size_t new_cap = cap ? cap * 2 : SLURP_INITIAL_SIZE;
            unsigned char *grown = realloc(buf, new_cap);
            if (!grown) {
                rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory reading the input (%zu bytes so far)", len);
                goto cleanup;
            }
            buf = grown;
            cap = new_cap;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(errno));
            goto cleanup;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    src->data = buf;
    src->size = len;
    buf = NULL;

cleanup:
    free(buf);
    return rc;
}

static gs_status source_open(const char *path, gs_source *src, char *err, size_t err_size)
{
    if (strcmp(path, "-") == 0) return slurp(STDIN_FILENO, src, err, err_size);

    gs_status rc = GS_OK;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gs_fail(err, err_size, GS_ERR_IO, "cannot open: %s", strerror(errno));

    if (fstat(fd, &st) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot stat: %s", strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "is a directory, not an image file");
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) { /* FIFO, device, socket: cannot seek, read it whole */
        rc = slurp(fd, src, err, err_size);
        goto cleanup;
    }
    src->fp = fdopen(fd, "rb");
    if (!src->fp) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot open: %s", strerror(errno));
        goto cleanup;
    }
    fd = -1; /* the FILE owns it now */

cleanup:
    if (fd >= 0) close(fd);
    return rc;
}

static void source_close(gs_source *src)
{
    if (src->fp) fclose(src->fp);
    free(src->data);
    memset(src, 0, sizeof *src);
}

/* Fill reader->head with the input's first bytes and put the source back at its start. */
static gs_status read_head(gs_reader *reader, char *err, size_t err_size)
{
    gs_source *src = &reader->src;
    reader->head_len = gs_source_read(src, reader->head, sizeof reader->head);
    if (src->read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
    if (src->fp) {
        if (fseek(src->fp, 0, SEEK_SET) != 0)
            return gs_fail(err, err_size, GS_ERR_IO, "cannot seek: %s", strerror(errno));
    } else {
        src->pos = 0;
    }
    if (reader->head_len == 0) return gs_fail(err, err_size, GS_ERR_FORMAT, "empty file");
    return GS_OK;
}

/* ---- format detection ---- */

static int head_starts(const gs_reader *reader, const void *magic, size_t len)
{
    return reader->head_len >= len && memcmp(reader->head, magic, len) == 0;
}


/* Signatures of the formats stb_image reads, for the format name and a sharper error.
 * TGA has no signature: stb_image decides it when nothing here matched. */
static const struct {
    const char *magic;
    size_t len;
    const char *name;
} stb_magic[] = {
    {"\xFF\xD8\xFF", 3, "JPEG"},
    {"BM", 2, "BMP"},
    {"GIF87a", 6, "GIF"},
    {"GIF89a", 6, "GIF"},
    {"8BPS", 4, "PSD"},
    {"#?RADIANCE\n", 11, "HDR"},
    {"#?RGBE\n", 7, "HDR"},
    {"\x53\x80\xF6\x34", 4, "PIC"},
};

static gs_status open_by_content(gs_reader *reader, uint64_t max_pixels, char *err,
                                 size_t err_size)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

    if (head_starts(reader, png_sig, sizeof png_sig))
        return gs_read_png_open(reader, max_pixels, err, err_size);

    if (reader->head_len >= 3 && reader->head[0] == 'P' && gs_pnm_space(reader->head[2])) {
        char kind = (char)reader->head[1];
        if (kind == '5' || kind == '6') return gs_read_pnm_open(reader, max_pixels, err, err_size);
        if ((kind >= '1' && kind <= '4') || kind == '7')
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "Netpbm type P%c is not supported (only binary PGM P5 and PPM P6)", kind);
    }

    for (size_t i = 0; i < sizeof stb_magic / sizeof stb_magic[0]; i++)
        if (head_starts(reader, stb_magic[i].magic, stb_magic[i].len))
            return gs_read_stb_open(reader, max_pixels, stb_magic[i].name, err, err_size);

    return gs_read_stb_open(reader, max_pixels, NULL, err, err_size);
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

    rc = source_open(path, &reader->src, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = read_head(reader, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = open_by_content(reader, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    /* Every opener promises this; checked once here so the row code can rely on it. */
    if (reader->info.width == 0 || reader->info.height == 0 ||
        (reader->info.bits != 8 && reader->info.bits != 16)) {
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
    if (rc != GS_OK) {
        reader->failed = 1;
        return rc;
    }
    reader->next_row += rows;
    return GS_OK;
}

void gs_reader_close(gs_reader *reader)
{
    if (!reader) return;
    if (reader->ops && reader->impl) reader->ops->destroy(reader->impl);
    source_close(&reader->src);
    free(reader);
}
