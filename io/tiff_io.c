/* tiff_io.c: libtiff's I/O procedures over gsmooth's inputs and outputs. */
/* Inputs are files by pread, memory, or a stream spooled to an unlinked temporary file;
 * also output files, per-handle message capture, and the TIFF size rules. */

#include "tiff_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TIFF_SLACK_BYTES (UINT64_C(64) << 20)
#define TIFF_BYTES_PER_PIXEL_MAX 8u /* 16-bit RGBA */
#define CLASSIC_TIFF_LIMIT (UINT64_C(1) << 32)

uint64_t gs_tiff_bytes_limit(uint64_t max_pixels)
{
    if (max_pixels > (UINT64_MAX - TIFF_SLACK_BYTES) / TIFF_BYTES_PER_PIXEL_MAX) return UINT64_MAX;
    return max_pixels * TIFF_BYTES_PER_PIXEL_MAX + TIFF_SLACK_BYTES;
}

int gs_tiff_needs_bigtiff(uint32_t width, uint32_t height, uint32_t bits, uint32_t rows_per_strip)
{
    const uint64_t pixels = (uint64_t)width * height; /* < 2^64 */
    if (pixels >= CLASSIC_TIFF_LIMIT) return 1;       /* a byte a pixel already passes */
    const uint64_t raw = pixels * (bits / 8u);
    const uint64_t strips = rows_per_strip ? ((uint64_t)height + rows_per_strip - 1) / rows_per_strip : height;
    const uint64_t worst = raw + raw / 1000 + strips * 16 + 4096;
    return worst >= CLASSIC_TIFF_LIMIT;
}

/* ---- messages ---- */

static void keep_message(char *line, size_t size, const char *module, const char *fmt, va_list ap)
{
    int n = module ? snprintf(line, size, "%s: ", module) : 0;
    if (n < 0 || (size_t)n >= size) n = 0;
    vsnprintf(line + n, size - (size_t)n, fmt, ap);
    for (char *c = line; *c; ++c)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    gs_tiff_messages *m = user;
    if (m && !m->error[0]) keep_message(m->error, sizeof m->error, module, fmt, ap);
    return 1; /* handled: libtiff's global handler is not called */
}

/* libtiff's JPEG codec only warns when a strip's or tile's JPEG stream is smaller than
 * the strip or tile, then reports the whole size decoded: that is damage, not a remark. */
static int warning_loses_data(const char *fmt)
{
    return strstr(fmt, "Improper JPEG strip/tile size") != NULL;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    gs_tiff_messages *m = user;
    if (!m) return 1;
    va_list again;
    va_copy(again, ap);
    keep_message(m->warning, sizeof m->warning, module, fmt, again);
    va_end(again);
    if (warning_loses_data(fmt)) {
        m->bad_data = 1;
        if (!m->error[0]) keep_message(m->error, sizeof m->error, module, fmt, ap);
    }
    return 1; /* kept, never printed: gsmooth prints no libtiff chatter */
}

static TIFFOpenOptions *options(uint64_t alloc_limit, gs_tiff_messages *msgs)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, msgs);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, msgs);
    if (alloc_limit) TIFFOpenOptionsSetMaxSingleMemAlloc(opts, alloc_limit > INT64_MAX ? INT64_MAX : (tmsize_t)alloc_limit);
    return opts;
}

/* ---- input ---- */

size_t gs_tiff_input_pread(gs_tiff_input *in, uint64_t at, void *buf, size_t n)
{
    if (n == 0 || at >= in->size) return 0;
    const uint64_t left = in->size - at;
    const size_t want = (uint64_t)n < left ? n : (size_t)left;
    if (in->mem) {
        memcpy(buf, in->mem + at, want);
        return want;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(in->fd, (char *)buf + got, want - got, (off_t)(in->base + (int64_t)(at + got)));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            in->read_errno = errno;
            break;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return got;
}

static tmsize_t in_read(thandle_t h, void *buf, tmsize_t n)
{
    gs_tiff_input *in = h;
    if (n <= 0) return 0;
    const size_t got = gs_tiff_input_pread(in, in->pos, buf, (uint64_t)n > SIZE_MAX ? SIZE_MAX : (size_t)n);
    if (in->read_errno) return -1;
    in->pos += got;
    return (tmsize_t)got;
}

static tmsize_t in_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h, (void)buf, (void)n;
    return -1;
}

static toff_t in_seek(thandle_t h, toff_t off, int whence)
{
    gs_tiff_input *in = h;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return (toff_t)-1;
    const uint64_t base = whence == SEEK_CUR ? in->pos : whence == SEEK_END ? in->size : 0;
    if (off > UINT64_MAX - base) return (toff_t)-1;
    in->pos = base + off; /* past the end is allowed; reads there give 0 bytes */
    return in->pos;
}

static int no_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t in_size(thandle_t h) { return ((gs_tiff_input *)h)->size; }

static int no_map(thandle_t h, void **base, toff_t *size)
{
    (void)h, (void)base, (void)size;
    return 0; /* read through the procedures: no mapping counted as resident memory */
}

static void no_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

gs_status gs_tiff_input_open(gs_source *src, uint64_t spool_limit, gs_tiff_input *in, char *err,
                             size_t err_size)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (src->data) {
        in->mem = src->data + src->pos;
        in->size = src->size - src->pos;
        return GS_OK;
    }
    if (src->file >= 0) {
        struct stat sb;
        const int fd = src->file;
        const int64_t at = gs_source_tell(src);
        if (at < 0 || fstat(fd, &sb) != 0)
            return gs_fail(err, err_size, GS_ERR_IO, "cannot read the TIFF file: %s", strerror(errno));
        in->fd = fd;
        in->base = at;
        in->size = sb.st_size > at ? (uint64_t)(sb.st_size - at) : 0;
        return GS_OK;
    }
    in->owns_fd = 1;
    return gs_spool_stream(src, spool_limit, "TIFF", &in->fd, &in->size, err, err_size);
}

void gs_tiff_input_close(gs_tiff_input *in)
{
    if (in->owns_fd && in->fd >= 0) close(in->fd);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}

TIFF *gs_tiff_open_read(gs_tiff_input *in, uint64_t alloc_limit, gs_tiff_messages *msgs)
{
    TIFFOpenOptions *opts = options(alloc_limit, msgs);
    if (!opts) return NULL;
    /* "m": no memory mapping; the procedures above read every byte. */
    TIFF *tif = TIFFClientOpenExt("TIFF", "rm", in, in_read, in_write, in_seek, no_close, in_size,
                                  no_map, no_unmap, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}

/* ---- output ---- */

static tmsize_t out_read(thandle_t h, void *buf, tmsize_t n)
{
    gs_tiff_output *out = h;
    if (n <= 0) return 0;
    size_t got = fread(buf, 1, (size_t)n, out->fp);
    return (tmsize_t)got;
}

static tmsize_t out_write(thandle_t h, void *buf, tmsize_t n)
{
    gs_tiff_output *out = h;
    if (out->discard) return -1;
    if (n <= 0) return 0;
    size_t put = fwrite(buf, 1, (size_t)n, out->fp);
    if (put != (size_t)n && !out->write_errno) out->write_errno = errno ? errno : EIO;
    return (tmsize_t)put;
}

static toff_t out_seek(thandle_t h, toff_t off, int whence)
{
    gs_tiff_output *out = h;
    if (out->discard || off > (toff_t)INT64_MAX) return (toff_t)-1;
    if (fseeko(out->fp, (off_t)off, whence) != 0) return (toff_t)-1;
    const off_t at = ftello(out->fp);
    return at < 0 ? (toff_t)-1 : (toff_t)at;
}

static toff_t out_size(thandle_t h)
{
    gs_tiff_output *out = h;
    struct stat sb;
    if (fflush(out->fp) != 0 || fstat(fileno(out->fp), &sb) != 0) return 0;
    return (toff_t)sb.st_size;
}

TIFF *gs_tiff_open_write(gs_tiff_output *out, int big, gs_tiff_messages *msgs)
{
    TIFFOpenOptions *opts = options(0, msgs);
    if (!opts) return NULL;
    /* "l": little-endian, as most writers; "8": BigTIFF. */
    TIFF *tif = TIFFClientOpenExt("TIFF", big ? "wl8m" : "wlm", out, out_read, out_write, out_seek,
                                  no_close, out_size, no_map, no_unmap, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}
