/* read_fits.c: the FITS reader on cfitsio: the first 2-D image HDU, streamed a few rows at a time. */

/*
 * Which HDU: the primary HDU when it holds a 2-D image (NAXIS = 2, or more axes all of
 * length 1 past the second), else the first image extension that does (a note names it).
 * A cube, a 1-D image or a file with no image is refused in one line; so is a
 * tile-compressed image (cfitsio would inflate whole tiles of a size the file chooses).
 *
 * Row order: row 0 delivered is the first row stored in the file (NAXIS2 index 1), as
 * astropy's fits.getdata() array has it (data[0] is the first stored row). FITS viewers
 * draw that row at the bottom; gsmooth keeps the file's order so that a FITS output of a
 * FITS input stores its rows where they were and the WCS still describes them.
 *
 * Samples (info.bits), by BITPIX and scaling (BSCALE, BZERO):
 *   - 8, no scaling: 8-bit samples as stored;
 *   - 16, BSCALE 1 and BZERO 32768 (the standard unsigned convention): 16-bit samples;
 *   - -32, no scaling: float32, the stored IEEE values bit for bit (NaN payloads too);
 *   - -64, no scaling: float32, each double rounded to nearest (a note says so);
 *   - anything else (signed 16, 32, 64, -32 or -64 with scaling, 8 with BZERO -128...):
 *     float32, cfitsio applying BSCALE and BZERO (a note gives BITPIX and the scaling).
 * Undefined pixels (BLANK): where samples are read as float32 from integers they are NaN,
 * cfitsio's null value, the only float that says "no value"; 8 and 16-bit samples are
 * exact integers with no such value, so they keep the stored one (a note gives it).
 *
 * Where the bytes come from: cfitsio opens files by name and seeks. A regular file is
 * opened again as /proc/self/fd/N (its own read position, nothing read into memory); a
 * stream (pipe, FIFO) is first spooled to an unlinked temporary file (gs_spool_stream) and
 * opened the same way; an input already in memory (the fuzz harness) is opened with
 * fits_open_memfile. cfitsio prints nothing unless asked (fits_report_error is never
 * called); every status becomes one line through fits_get_errstatus.
 *
 * World coordinates: the read HDU's WCS cards (fits_wcs_keyword) are kept, 80 characters
 * each, in reader->fits_cards for a FITS output to copy.
 */

#include "io_internal.h"

#include <errno.h>
#include <fitsio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes of a FITS header card, its keyword, and a block (a file is whole blocks). */
#define FITS_CARD 80
#define FITS_KEYWORD 8
#define FITS_BLOCK 2880u
/* Axes cfitsio allows an image (NAXIS 0..999, the standard's limit). */
#define FITS_AXES_MAX 999
/* Spool and messages: 8 bytes a pixel (float64) of the pixel limit, plus room for the
 * headers and the other HDUs of the file (gs_spool_stream's rule). */
#define FITS_SPOOL_BYTES_PER_PIXEL 8u
#define FITS_SPOOL_SLACK (UINT64_C(64) << 20)
/* Float64 samples are read this many at a time into a buffer of doubles, then rounded: a
 * row of any width costs 512 KiB at most. */
#define FITS_DOUBLE_CHUNK ((size_t)64 << 10)
/* The path a regular file or a spool is opened again under. */
#define FITS_FD_PATH "/proc/self/fd/%d"

typedef enum fits_kind {
    FITS_U8,      /* BITPIX 8 as stored (TBYTE) */
    FITS_U16,     /* BITPIX 16 unsigned (TUSHORT) */
    FITS_F32_RAW, /* BITPIX -32 as stored (TFLOAT, no null check) */
    FITS_F64,     /* BITPIX -64 rounded to float32 (TDOUBLE, then a cast) */
    FITS_SCALED,  /* everything else: TFLOAT with cfitsio's scaling, BLANK as NaN */
} fits_kind;

typedef struct fits_state {
    fitsfile *fptr;      /* the open HDU */
    int spool_fd;        /* a stream's spool, owned; -1 otherwise */
    fits_kind kind;      /* how samples are read */
    int naxis;           /* axes of the HDU: first_pixel has this many entries */
    LONGLONG *first_pixel; /* cfitsio's 1-based coordinates of the next read */
    double *doubles;     /* FITS_F64: FITS_DOUBLE_CHUNK samples */
    int raw_fd;          /* the file or spool cfitsio opened again, for the header walk */
    void *mem;           /* an input in memory: cfitsio keeps the addresses of these two */
    size_t mem_size;
} fits_state;

/* One line for a cfitsio status, with what was being done. */
static gs_status fits_failure(int status, const char *what, char *err, size_t err_size)
{
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    const gs_status code = status == MEMORY_ALLOCATION ? GS_ERR_NOMEM
                           : status == FILE_NOT_OPENED || status == READ_ERROR ? GS_ERR_IO
                                                                                : GS_ERR_FORMAT;
    return gs_fail(err, err_size, code, "FITS: %s: %s (cfitsio status %d)", what, text, status);
}

/* ---- reading rows ---- */

/* Point first_pixel at sample `at` of the image (0-based, row-major: at / width is the
 * row), in cfitsio's 1-based coordinates. */
static void locate(fits_state *f, uint64_t at, uint32_t width)
{
    f->first_pixel[0] = (LONGLONG)(at % width) + 1;
    f->first_pixel[1] = (LONGLONG)(at / width) + 1;
}

/* Read `count` samples from sample `at` on (running on through the following rows) into
 * dst, native-endian, as f->kind says. */
static int read_span(fits_state *f, uint32_t width, uint64_t at, size_t count, unsigned char *dst,
                     int *status)
{
    static const float nan_value = NAN; /* cfitsio's null value for undefined pixels */
    int anynul = 0;
    locate(f, at, width);
    switch (f->kind) {
    case FITS_U8:
        return fits_read_pixll(f->fptr, TBYTE, f->first_pixel, (LONGLONG)count, NULL, dst, &anynul, status);
    case FITS_U16:
        return fits_read_pixll(f->fptr, TUSHORT, f->first_pixel, (LONGLONG)count, NULL, dst, &anynul, status);
    case FITS_F32_RAW: /* no null value: no check, the stored bits come through */
        return fits_read_pixll(f->fptr, TFLOAT, f->first_pixel, (LONGLONG)count, NULL, dst, &anynul, status);
    case FITS_SCALED:
        return fits_read_pixll(f->fptr, TFLOAT, f->first_pixel, (LONGLONG)count, (void *)&nan_value, dst,
                               &anynul, status);
    case FITS_F64:
        break;
    }
    /* float64: a chunk at a time, each double rounded to the nearest float (the C cast in
     * the default rounding mode; past FLT_MAX it becomes an infinity, NaN stays NaN). */
    float *out = (float *)(void *)dst;
    for (size_t done = 0; done < count;) {
        const size_t n = count - done < FITS_DOUBLE_CHUNK ? count - done : FITS_DOUBLE_CHUNK;
        locate(f, at + done, width);
        if (fits_read_pixll(f->fptr, TDOUBLE, f->first_pixel, (LONGLONG)n, NULL, f->doubles, &anynul, status))
            return *status;
        for (size_t i = 0; i < n; ++i) out[done + i] = (float)f->doubles[i];
        done += n;
    }
    return 0;
}

static gs_status fits_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    fits_state *f = reader->impl;
    const uint32_t width = reader->info.width, y0 = reader->next_row;
    const size_t row_bytes = (size_t)width * (reader->info.bits / 8);
    int status = 0;
    /* Rows packed one after another are one read (cfitsio runs on into the next rows);
     * otherwise a read a row. The samples land in the caller's buffer. */
    if (stride == row_bytes || rows == 1) {
        read_span(f, width, (uint64_t)y0 * width, (size_t)width * rows, dst, &status);
    } else {
        for (uint32_t r = 0; r < rows && !status; ++r)
            read_span(f, width, (uint64_t)(y0 + r) * width, width, dst + (size_t)r * stride, &status);
    }
    if (status) {
        char what[64];
        snprintf(what, sizeof what, "reading rows %u..%u", y0, y0 + (rows - 1));
        return fits_failure(status, what, err, err_size);
    }
    return GS_OK;
}

static void fits_state_destroy(void *impl)
{
    fits_state *f = impl;
    if (!f) return;
    int status = 0;
    if (f->fptr) fits_close_file(f->fptr, &status); /* read-only: nothing to lose */
    if (f->spool_fd >= 0) close(f->spool_fd);
    free(f->first_pixel);
    free(f->doubles);
    free(f);
}

static const gs_reader_ops fits_ops = {
    .read_rows = fits_read_rows,
    .destroy = fits_state_destroy,
};

/* ---- opening ---- */

/* A FITS file is whole blocks (FITS 4.0, section 3.1). cfitsio reads a block at a time
 * and assumes it: from a file, a short last block fails the read that reaches it, and
 * from memory cfitsio reads the whole block, past the end of the bytes it was given. So a
 * file that ends inside a block is refused before cfitsio sees it, from any source alike
 * (astropy reads one whose data end before the cut, with a warning; cfitsio does not). */
static gs_status check_blocks(uint64_t size, char *err, size_t err_size)
{
    if (size % FITS_BLOCK == 0) return GS_OK;
    return gs_fail(err, err_size, GS_ERR_FORMAT,
                   "FITS: truncated: %llu bytes is not a whole number of %u-byte blocks",
                   (unsigned long long)size, FITS_BLOCK);
}

/* Open the input with cfitsio: memory directly, a file (or a stream's spool) by its
 * descriptor's name; *size is the input's bytes. */
static gs_status open_input(gs_reader *reader, uint64_t max_pixels, fits_state *f, uint64_t *size,
                            char *err, size_t err_size)
{
    gs_source *src = &reader->src;
    int status = 0;
    if (src->data) {
        f->mem = src->data + src->pos;
        f->mem_size = src->size - src->pos;
        *size = f->mem_size;
        gs_status rc = check_blocks(*size, err, err_size);
        if (rc != GS_OK) return rc;
        /* READONLY: cfitsio neither writes to nor reallocates the caller's bytes; it reads
         * them through &f->mem and &f->mem_size until it is closed. */
        if (fits_open_memfile(&f->fptr, "gsmooth-input", READONLY, &f->mem, &f->mem_size, 0, NULL, &status))
            return fits_failure(status, "cannot open", err, err_size);
        return GS_OK;
    }
    int fd = -1;
    if (src->file >= 0) {
        struct stat sb;
        fd = src->file;
        if (fstat(fd, &sb) != 0)
            return gs_fail(err, err_size, GS_ERR_IO, "FITS: cannot read the file: %s", strerror(errno));
        *size = (uint64_t)sb.st_size;
    } else {
        const uint64_t limit = max_pixels > (UINT64_MAX - FITS_SPOOL_SLACK) / FITS_SPOOL_BYTES_PER_PIXEL
                                   ? UINT64_MAX
                                   : max_pixels * FITS_SPOOL_BYTES_PER_PIXEL + FITS_SPOOL_SLACK;
        gs_status spooled = gs_spool_stream(src, limit, "FITS", &f->spool_fd, size, err, err_size);
        if (spooled != GS_OK) return spooled;
        fd = f->spool_fd;
    }
    gs_status rc = check_blocks(*size, err, err_size);
    if (rc != GS_OK) return rc;
    f->raw_fd = fd;
    char path[64];
    snprintf(path, sizeof path, FITS_FD_PATH, fd);
    /* fits_open_diskfile: the name is a plain file name, no extended syntax. */
    if (fits_open_diskfile(&f->fptr, path, READONLY, &status))
        return fits_failure(status, "cannot open", err, err_size);
    return GS_OK;
}

/* 1 when `key` (NUL-terminated, at most 8 characters) is `base` followed by one or more
 * digits, then at most one alternate-WCS letter A-Z when `alt` allows it. */
static int indexed(const char *key, const char *base, int alt)
{
    const size_t n = strlen(base);
    if (strncmp(key, base, n) != 0) return 0;
    const char *p = key + n;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') ++p;
    if (alt && *p >= 'A' && *p <= 'Z') ++p;
    return *p == '\0';
}

/* `base` then digits, '_', digits, an optional letter: CDi_j, PCi_j, PVi_m, PSi_m, and the
 * SIP distortion polynomials A_p_q, B_p_q, AP_p_q, BP_p_q. */
static int pair_indexed(const char *key, const char *base, int alt)
{
    const size_t n = strlen(base);
    if (strncmp(key, base, n) != 0) return 0;
    const char *p = key + n;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') ++p;
    if (*p++ != '_' || *p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') ++p;
    if (alt && *p >= 'A' && *p <= 'Z') ++p;
    return *p == '\0';
}

/* `base` exactly, or with one alternate-WCS letter when `alt` allows it. */
static int named(const char *key, const char *base, int alt)
{
    const size_t n = strlen(base);
    if (strncmp(key, base, n) != 0) return 0;
    return key[n] == '\0' || (alt && key[n] >= 'A' && key[n] <= 'Z' && key[n + 1] == '\0');
}

/* The keywords that say where the pixels lie (FITS WCS papers I-IV, the SIP convention)
 * and when they were taken: smoothing moves no pixel, so they stay true of the output. */
static int fits_wcs_keyword(const char *key)
{
    static const char *const indexed_alt[] = {"CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT",
                                              "CNAME", "CRDER", "CSYER"};
    static const char *const pairs_alt[] = {"CD", "PC", "PV", "PS"};
    static const char *const pairs_sip[] = {"A_", "B_", "AP_", "BP_"};
    static const char *const named_alt[] = {"WCSAXES", "WCSNAME", "LONPOLE", "LATPOLE", "RADESYS",
                                            "EQUINOX", "RESTFRQ", "RESTWAV", "SPECSYS", "SSYSOBS",
                                            "VELOSYS", "ZSOURCE", "SSYSSRC", "VELANGL"};
    static const char *const named_plain[] = {"RADECSYS", "EPOCH", "MJD-OBS", "DATE-OBS", "MJDREF",
                                              "MJDREFI", "MJDREFF", "DATEREF", "TIMESYS", "MJD-AVG",
                                              "DATE-AVG", "MJD-BEG", "MJD-END", "DATE-BEG", "DATE-END",
                                              "OBSGEO-X", "OBSGEO-Y", "OBSGEO-Z", "RESTFREQ",
                                              "A_ORDER", "B_ORDER", "AP_ORDER", "BP_ORDER", "A_DMAX",
                                              "B_DMAX"};
    for (size_t i = 0; i < sizeof indexed_alt / sizeof *indexed_alt; ++i)
        if (indexed(key, indexed_alt[i], 1)) return 1;
    if (indexed(key, "CROTA", 0)) return 1; /* the old rotation: no alternate forms */
    for (size_t i = 0; i < sizeof pairs_alt / sizeof *pairs_alt; ++i)
        if (pair_indexed(key, pairs_alt[i], 1)) return 1;
    for (size_t i = 0; i < sizeof pairs_sip / sizeof *pairs_sip; ++i)
        if (pair_indexed(key, pairs_sip[i], 0)) return 1;
    for (size_t i = 0; i < sizeof named_alt / sizeof *named_alt; ++i)
        if (named(key, named_alt[i], 1)) return 1;
    for (size_t i = 0; i < sizeof named_plain / sizeof *named_plain; ++i)
        if (strcmp(key, named_plain[i]) == 0) return 1;
    return 0;
}

/* Keep the HDU's WCS cards, 80 characters each, in reader->fits_cards. */
static gs_status keep_wcs_cards(gs_reader *reader, fits_state *f, char *err, size_t err_size)
{
    int status = 0, nkeys = 0;
    if (fits_get_hdrspace(f->fptr, &nkeys, NULL, &status))
        return fits_failure(status, "reading the header", err, err_size);
    size_t kept = 0;
    char *cards = NULL;
    for (int i = 1; i <= nkeys; ++i) {
        char card[FLEN_CARD];
        if (fits_read_record(f->fptr, i, card, &status)) {
            free(cards);
            return fits_failure(status, "reading the header", err, err_size);
        }
        char key[FITS_KEYWORD + 1];
        size_t k = 0;
        while (k < FITS_KEYWORD && card[k] && card[k] != ' ' && card[k] != '=') key[k] = card[k], ++k;
        key[k] = '\0';
        /* A value card: "KEYWORD = value", the keyword in columns 1-8. */
        if (strlen(card) < FITS_KEYWORD + 2 || memcmp(card + FITS_KEYWORD, "= ", 2) != 0 ||
            !fits_wcs_keyword(key))
            continue;
        if (!cards && !(cards = malloc((size_t)nkeys * FITS_CARD)))
            return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the FITS header");
        /* cfitsio gives the card without its trailing blanks: pad it back to 80. */
        char *to = cards + kept * FITS_CARD;
        const size_t len = strlen(card) < FITS_CARD ? strlen(card) : FITS_CARD;
        memcpy(to, card, len);
        memset(to + len, ' ', FITS_CARD - len);
        ++kept;
    }
    reader->fits_cards = cards;
    reader->fits_card_count = kept;
    return GS_OK;
}

/* Append `text` to the reader's note, "; " between parts. */
static void add_note(gs_reader *reader, const char *text)
{
    const size_t used = strlen(reader->note);
    snprintf(reader->note + used, sizeof reader->note - used, "%s%s", used ? "; " : "", text);
}

/* The HDU's axes, or a refusal naming them (`hdu` is cfitsio's number, 1 = primary). */
typedef struct fits_image {
    int hdu;             /* 1-based */
    int bitpix;
    int naxis;
    LONGLONG axes[FITS_AXES_MAX];
} fits_image;

/* 0: the current HDU holds no pixels (NAXIS 0 or an axis of length 0); 1: a 2-D image;
 * -1: an image of another shape. */
static int image_shape(const fits_image *im)
{
    if (im->naxis == 0) return 0;
    for (int i = 0; i < im->naxis; ++i)
        if (im->axes[i] == 0) return 0;
    if (im->naxis < 2) return -1;
    for (int i = 2; i < im->naxis; ++i)
        if (im->axes[i] != 1) return -1;
    return 1;
}

/* "3-D cube 512x512x40", "1-D image of 100 samples": what an image of another shape is. */
static void describe_shape(const fits_image *im, char *out, size_t size)
{
    if (im->naxis == 1) {
        snprintf(out, size, "1-D image of %lld samples", (long long)im->axes[0]);
        return;
    }
    int n = snprintf(out, size, "%d-D cube ", im->naxis);
    for (int i = 0; i < im->naxis && n > 0 && (size_t)n < size; ++i)
        n += snprintf(out + n, size - (size_t)n, "%s%lld", i ? "x" : "", (long long)im->axes[i]);
}

/* Move to the first HDU that holds a 2-D image; refuse when there is none. */
static gs_status find_image(fits_state *f, fits_image *im, char *err, size_t err_size)
{
    char first_other[160] = ""; /* the first image of another shape, for the refusal */
    for (int hdu = 1;; ++hdu) {
        int status = 0, type = 0;
        if (fits_movabs_hdu(f->fptr, hdu, &type, &status)) {
            if (status == END_OF_FILE && hdu > 1) break; /* past the last HDU */
            char what[48];
            snprintf(what, sizeof what, "reading HDU %d", hdu);
            return fits_failure(status, what, err, err_size);
        }
        if (type != IMAGE_HDU) continue; /* tables; cfitsio reports compressed images as images */
        im->hdu = hdu;
        if (fits_get_img_paramll(f->fptr, FITS_AXES_MAX, &im->bitpix, &im->naxis, im->axes, &status))
            return fits_failure(status, "reading the image size", err, err_size);
        const int shape = image_shape(im);
        if (shape == 0) continue;
        if (shape < 0) {
            if (!first_other[0]) describe_shape(im, first_other, sizeof first_other);
            continue;
        }
        int compressed = fits_is_compressed_image(f->fptr, &status);
        if (status) return fits_failure(status, "reading the image header", err, err_size);
        if (compressed)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "FITS: the image (extension %d) is tile-compressed, which gsmooth does not "
                           "read: uncompress it first (funpack)", hdu - 1);
        return GS_OK;
    }
    if (first_other[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: %s: only 2-D images", first_other);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: no 2-D image HDU");
}

/* A keyword's value as a double, or `fallback` when the header lacks it. */
static int key_double(fitsfile *fptr, const char *key, double fallback, double *value, int *status)
{
    *value = fallback;
    if (fits_read_key(fptr, TDOUBLE, key, value, NULL, status) == KEY_NO_EXIST) {
        *status = 0;
        *value = fallback;
    }
    return *status;
}

/* How the samples are read (fits_kind, at the top), with the note that says what changed. */
static gs_status choose_kind(gs_reader *reader, fits_state *f, const fits_image *im, char *err,
                             size_t err_size)
{
    int status = 0;
    double bscale = 1, bzero = 0;
    if (key_double(f->fptr, "BSCALE", 1, &bscale, &status) || key_double(f->fptr, "BZERO", 0, &bzero, &status))
        return fits_failure(status, "reading BSCALE and BZERO", err, err_size);
    long long blank = 0;
    int has_blank = 1;
    if (fits_read_key(f->fptr, TLONGLONG, "BLANK", &blank, NULL, &status) == KEY_NO_EXIST) {
        status = 0;
        has_blank = 0;
    } else if (status) {
        return fits_failure(status, "reading BLANK", err, err_size);
    }
    const int plain = bscale == 1 && bzero == 0;
    char note[GS_ERR_SIZE / 2];
    if (im->bitpix == BYTE_IMG && plain) {
        f->kind = FITS_U8;
        reader->info.bits = 8;
    } else if (im->bitpix == SHORT_IMG && bscale == 1 && bzero == 32768) {
        f->kind = FITS_U16;
        reader->info.bits = 16;
    } else if (im->bitpix == FLOAT_IMG && plain) {
        f->kind = FITS_F32_RAW;
        reader->info.bits = 32;
    } else if (im->bitpix == DOUBLE_IMG && plain) {
        f->kind = FITS_F64;
        reader->info.bits = 32;
        add_note(reader, "float64 samples rounded to float32");
    } else {
        f->kind = FITS_SCALED;
        reader->info.bits = 32;
        snprintf(note, sizeof note, "BITPIX %d samples with BSCALE %.17g and BZERO %.17g scaled to float32%s",
                 im->bitpix, bscale, bzero,
                 has_blank && im->bitpix > 0 ? ", undefined pixels (BLANK) as NaN" : "");
        add_note(reader, note);
    }
    if (has_blank && (f->kind == FITS_U8 || f->kind == FITS_U16)) {
        snprintf(note, sizeof note, "undefined pixels (BLANK) keep their value %lld",
                 (long long)(blank + (f->kind == FITS_U16 ? 32768 : 0)));
        add_note(reader, note);
    }
    return GS_OK;
}


/* ---- the header walk: what cfitsio is not asked to survive ---- */

/* cfitsio sizes a table's column structures by its TFIELDS before checking anything else
 * (calloc(TFIELDS, 160 bytes), then a loop over them): a few bytes claiming 10^7 columns
 * would take 1.6 GB. So before cfitsio moves through the HDUs, the headers it will pass
 * (every one up to the first 2-D image, the same rule as find_image) are read here and a
 * TFIELDS over the standard's 999 is refused; so is a header with no END card before the
 * input ends, a table whose first eight cards are not its structure keywords in order, and
 * a header whose structure keywords cannot be read or whose data size overflows
 * (the walk could not say where the next header lies, and cfitsio might). Headers only:
 * data units are skipped, not read. */
#define FITS_TFIELDS_MAX 999
/* The structure keywords that open a table's header, in the standard's order. */
#define FITS_TABLE_KEYS 8
static const char *const table_keys[FITS_TABLE_KEYS] = {"XTENSION", "BITPIX", "NAXIS", "NAXIS1",
                                                        "NAXIS2", "PCOUNT", "GCOUNT", "TFIELDS"};

/* One block of the input at `at` (whole blocks: check_blocks). */
static int read_block(const fits_state *f, uint64_t at, unsigned char *block)
{
    if (f->mem) {
        memcpy(block, (const unsigned char *)f->mem + at, FITS_BLOCK);
        return 0;
    }
    for (size_t got = 0; got < FITS_BLOCK;) {
        ssize_t n = pread(f->raw_fd, block + got, FITS_BLOCK - got, (off_t)(at + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

/* A card's integer value (columns 11 on: blanks, the number, then blanks or a comment). */
static int card_integer(const unsigned char *card, long long *value)
{
    char text[FITS_CARD - 10 + 1];
    memcpy(text, card + 10, sizeof text - 1);
    text[sizeof text - 1] = '\0';
    char *end = NULL;
    errno = 0;
    *value = strtoll(text, &end, 10);
    if (end == text || errno) return -1;
    while (*end == ' ') ++end;
    return *end == '\0' || *end == '/' ? 0 : -1;
}

/* `n` bytes of header text (NUL-terminated earlier if they hold a NUL) into out (n + 1
 * bytes) for a message: bytes that are not printable ASCII become '?', so that the message
 * stays one line of text whatever the file holds. */
static void printable_text(char *out, const unsigned char *in, size_t n)
{
    size_t i = 0;
    for (; i < n && in[i]; ++i) out[i] = in[i] >= 0x20 && in[i] <= 0x7e ? (char)in[i] : '?';
    out[i] = '\0';
}

/* A card of printable ASCII alone, as the standard has every header card; a structure
 * keyword's card that is not (a carriage return in a value, say) is refused, since strtoll
 * and cfitsio do not read such a value alike. */
static int card_printable(const unsigned char *card)
{
    for (size_t i = 0; i < FITS_CARD; ++i)
        if (card[i] < 0x20 || card[i] > 0x7e) return 0;
    return 1;
}

static int card_is(const unsigned char *card, const char *key)
{
    char padded[FITS_KEYWORD + 1];
    snprintf(padded, sizeof padded, "%-8s", key);
    return memcmp(card, padded, FITS_KEYWORD) == 0 && memcmp(card + FITS_KEYWORD, "= ", 2) == 0;
}

/* The keywords that give a header's structure: the ones the walk reads and cfitsio sizes
 * the data by, NAXISn aside; an id for each (structure_key_id). */
enum structure_id { KEY_SIMPLE, KEY_XTENSION, KEY_BITPIX, KEY_NAXIS, KEY_PCOUNT, KEY_GCOUNT, KEY_TFIELDS,
                    KEY_GROUPS, FITS_NAMED_STRUCTURE_KEYS };
static const char *const structure_keys[FITS_NAMED_STRUCTURE_KEYS] = {
    "SIMPLE", "XTENSION", "BITPIX", "NAXIS", "PCOUNT", "GCOUNT", "TFIELDS", "GROUPS"};
/* NAXISn's id is FITS_NAMED_STRUCTURE_KEYS + n - 1; every id is below this. */
#define FITS_STRUCTURE_IDS (FITS_NAMED_STRUCTURE_KEYS + FITS_AXES_MAX)

/* The axis n of a NAXISn card (1..FITS_AXES_MAX, the keyword blank-padded to 8 columns,
 * then "= "), or 0. */
static int naxis_card_axis(const unsigned char *card)
{
    if (memcmp(card, "NAXIS", 5) != 0 || memcmp(card + FITS_KEYWORD, "= ", 2) != 0) return 0;
    int axis = 0;
    size_t i = 5;
    for (; i < FITS_KEYWORD && card[i] >= '0' && card[i] <= '9'; ++i) axis = axis * 10 + (card[i] - '0');
    if (i == 5 || card[5] == '0') return 0;
    for (; i < FITS_KEYWORD; ++i)
        if (card[i] != ' ') return 0;
    return axis <= FITS_AXES_MAX ? axis : 0;
}

/* The card's structure keyword id (below FITS_STRUCTURE_IDS), or -1. */
static int structure_key_id(const unsigned char *card)
{
    for (int i = 0; i < FITS_NAMED_STRUCTURE_KEYS; ++i)
        if (card_is(card, structure_keys[i])) return i;
    const int axis = naxis_card_axis(card);
    return axis ? FITS_NAMED_STRUCTURE_KEYS + axis - 1 : -1;
}

/* A card that looks as if it meant to be NAXISn (NAXIS and a digit, in any form): like the
 * structure keywords' cards, it must be printable. */
static int naxis_like(const unsigned char *card)
{
    return memcmp(card, "NAXIS", 5) == 0 && card[5] >= '1' && card[5] <= '9';
}

static gs_status walk_headers(const fits_state *f, uint64_t size, char *err, size_t err_size)
{
    unsigned char block[FITS_BLOCK];
    uint64_t at = 0;
    for (int hdu = 1; at < size; ++hdu) {
        long long bitpix = 0, naxis = -1, pcount = 0, gcount = 1, tfields = -1;
        int image = hdu == 1, table = 0, groups = 0, ended = 0, bad = 0;
        unsigned index = 0; /* of the card in this header */
        fits_image im = {0};
        unsigned char seen[FITS_STRUCTURE_IDS] = {0}; /* structure keywords met in this header */
        while (!ended) {
            /* No END before the input ends: cfitsio, left to parse such a header, sized a
             * table from a TFIELDS it never read (fuzz finding), so it is refused here. */
            if (at >= size)
                return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d's header has no END card", hdu);
            if (read_block(f, at, block) != 0)
                return gs_fail(err, err_size, GS_ERR_IO, "FITS: read failed: %s", strerror(errno ? errno : EIO));
            at += FITS_BLOCK;
            for (const unsigned char *card = block; card < block + FITS_BLOCK && !ended; card += FITS_CARD, ++index) {
                /* A table's first eight cards are its structure keywords in the standard's
                 * order, and cfitsio reads them by position (it took TFIELDS from whatever
                 * eighth card a damaged header had: fuzz finding). */
                if (table && index < FITS_TABLE_KEYS && !card_is(card, table_keys[index]))
                    return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: a table whose card %u is not %s",
                                   hdu, index + 1, table_keys[index]);
                if (memcmp(card, "END     ", FITS_KEYWORD) == 0) {
                    ended = 1;
                    continue;
                }
                const int id = structure_key_id(card);
                if ((id >= 0 || naxis_like(card)) && !card_printable(card)) {
                    char keyword[FITS_KEYWORD + 1]; /* printable: it names the card */
                    printable_text(keyword, card, FITS_KEYWORD);
                    return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: card %u (%s) holds a byte "
                                   "that is not printable ASCII", hdu, index + 1, keyword);
                }
                /* Each structure keyword once (the standard's rule): cfitsio reads BITPIX, NAXIS
                 * and NAXISn by position, the walk by name, and with one repeated the two took
                 * different shapes, cfitsio reading rows from outside the bytes (fuzz finding). */
                if (id < 0) continue;
                if (seen[id]++) {
                    char keyword[FITS_KEYWORD + 1];
                    printable_text(keyword, card, FITS_KEYWORD);
                    keyword[strcspn(keyword, " ")] = '\0';
                    return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: card %u repeats the structure "
                                   "keyword %s", hdu, index + 1, keyword);
                }
                switch (id) {
                case KEY_XTENSION:
                    /* only an extension's first card says what it is */
                    if (index != 0) break;
                    image = memcmp(card + 10, "'IMAGE   '", 10) == 0;
                    table = memcmp(card + 10, "'BINTABLE'", 10) == 0 || memcmp(card + 10, "'TABLE   '", 10) == 0;
                    break;
                case KEY_GROUPS: groups = card[29] == 'T'; break;
                case KEY_BITPIX: bad |= card_integer(card, &bitpix); break;
                case KEY_NAXIS: bad |= card_integer(card, &naxis); break;
                case KEY_PCOUNT: bad |= card_integer(card, &pcount); break;
                case KEY_GCOUNT: bad |= card_integer(card, &gcount); break;
                case KEY_TFIELDS: bad |= card_integer(card, &tfields); break;
                case KEY_SIMPLE: break;
                default: { /* NAXISn */
                    long long v = 0;
                    if (card_integer(card, &v) != 0 || v < 0) bad = 1;
                    else im.axes[id - FITS_NAMED_STRUCTURE_KEYS] = v;
                }
                }
            }
        }
        if (table && tfields < 0)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: a table's TFIELDS cannot be read", hdu);
        if (tfields > FITS_TFIELDS_MAX)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d claims %lld table fields (TFIELDS), over "
                           "the standard's %d", hdu, tfields, FITS_TFIELDS_MAX);
        if (bad || naxis < 0 || naxis > FITS_AXES_MAX || pcount < 0 || gcount < 0 ||
            (bitpix != 8 && bitpix != 16 && bitpix != 32 && bitpix != 64 && bitpix != -32 && bitpix != -64))
            return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: the header's BITPIX, NAXISn, PCOUNT "
                           "or GCOUNT cannot be read", hdu);
        im.naxis = (int)naxis;
        if (image && image_shape(&im) == 1) { /* where find_image stops */
            /* An image has no parameters and one group (PCOUNT 0, GCOUNT 1, the standard's
             * values): cfitsio read a primary image with PCOUNT 32768 from outside the bytes
             * it was given (fuzz finding). */
            if (pcount != 0 || gcount != 1)
                return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: HDU %d: an image with PCOUNT %lld and "
                               "GCOUNT %lld (the standard has 0 and 1)", hdu, pcount, gcount);
            return GS_OK;
        }
        /* Data bytes: |BITPIX| / 8 x GCOUNT x (PCOUNT + NAXIS1 x ... x NAXISn), NAXIS1
         * left out of the product for random groups (NAXIS1 = 0, GROUPS = T). */
        uint64_t product = naxis ? 1 : 0;
        for (int i = groups && im.axes[0] == 0 ? 1 : 0; i < im.naxis; ++i) {
            if (im.axes[i] && product > UINT64_MAX / (uint64_t)im.axes[i]) goto overflow;
            product *= (uint64_t)im.axes[i];
        }
        const uint64_t per_group = product + (uint64_t)pcount, bytes = (uint64_t)(bitpix < 0 ? -bitpix : bitpix) / 8u;
        if (per_group < product || (gcount && per_group > UINT64_MAX / (uint64_t)gcount / bytes)) goto overflow;
        const uint64_t data = bytes * (uint64_t)gcount * per_group;
        if (data > size) return GS_OK; /* past the end: cfitsio finds no next HDU */
        at += (data + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK;
    }
    return GS_OK;
overflow:
    return gs_fail(err, err_size, GS_ERR_FORMAT, "FITS: an HDU's data size overflows 64 bits");
}

gs_status gs_read_fits_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    const int setup = gs_fits_setup();
    if (setup) return fits_failure(setup, "setting up cfitsio", err, err_size);
    gs_status rc = GS_OK;
    fits_image *im = calloc(1, sizeof *im); /* 8 KiB of axes: off the stack */
    fits_state *f = calloc(1, sizeof *f);
    if (!im || !f) {
        free(im);
        free(f);
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    }
    f->spool_fd = f->raw_fd = -1;
    uint64_t size = 0;
    rc = open_input(reader, max_pixels, f, &size, err, err_size);
    if (rc == GS_OK) rc = walk_headers(f, size, err, err_size);
    if (rc == GS_OK) rc = find_image(f, im, err, err_size);
    if (rc != GS_OK) goto cleanup;

    if (im->axes[0] > UINT32_MAX || im->axes[1] > UINT32_MAX) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "FITS image of %lldx%lld samples: a side over 2^32 - 1",
                     (long long)im->axes[0], (long long)im->axes[1]);
        goto cleanup;
    }
    const uint32_t width = (uint32_t)im->axes[0], height = (uint32_t)im->axes[1];
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    /* The data unit must be in the file: cfitsio would otherwise find out only at the row
     * that is missing (and a file cut inside its last block reads as zeros there). */
    int status = 0;
    LONGLONG head_start = 0, data_start = 0, data_end = 0;
    if (fits_get_hduaddrll(f->fptr, &head_start, &data_start, &data_end, &status)) {
        rc = fits_failure(status, "reading the image header", err, err_size);
        goto cleanup;
    }
    const uint64_t sample_bytes = (uint64_t)(im->bitpix < 0 ? -im->bitpix : im->bitpix) / 8u;
    const uint64_t pixels = (uint64_t)width * height; /* both under 2^32: no overflow */
    if (pixels > UINT64_MAX / 8u) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "FITS image of %ux%u samples does not fit in memory",
                     width, height);
        goto cleanup;
    }
    const uint64_t data_bytes = pixels * sample_bytes;
    if (data_start < 0 || (uint64_t)data_start > size || size - (uint64_t)data_start < data_bytes) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "FITS: truncated: the %ux%u image needs %llu bytes of data from byte %lld, the file has %llu bytes",
                     width, height, (unsigned long long)data_bytes, (long long)data_start, (unsigned long long)size);
        goto cleanup;
    }
    /* cfitsio's own extent of the data unit too: it locates rows inside that extent, so one
     * that runs past the bytes (the header's PCOUNT or GCOUNT read otherwise than above) would
     * have it read outside them. A file of whole blocks holding the image's data holds its
     * padded data unit, so only such a header is refused here. */
    if (data_end < data_start || (uint64_t)data_end > size) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "FITS: the image's data unit (bytes %lld to %lld, as cfitsio reads the header) runs past "
                     "the file's %llu bytes", (long long)data_start, (long long)data_end, (unsigned long long)size);
        goto cleanup;
    }

    reader->info.width = width;
    reader->info.height = height;
    reader->info.format = "FITS";
    if (im->hdu > 1) {
        char note[160], value[FLEN_VALUE] = "", name[FLEN_VALUE];
        if (fits_read_key(f->fptr, TSTRING, "EXTNAME", value, NULL, &status)) status = 0, value[0] = '\0';
        printable_text(name, (const unsigned char *)value, strlen(value)); /* the note is one line too */
        snprintf(note, sizeof note, "image from extension %d%s%s%s (the primary HDU holds none)", im->hdu - 1,
                 name[0] ? " (EXTNAME '" : "", name, name[0] ? "')" : "");
        add_note(reader, note);
    }
    rc = choose_kind(reader, f, im, err, err_size);
    if (rc != GS_OK) goto cleanup;
    f->naxis = im->naxis;
    f->first_pixel = malloc((size_t)im->naxis * sizeof *f->first_pixel);
    if (f->kind == FITS_F64) f->doubles = malloc(FITS_DOUBLE_CHUNK * sizeof *f->doubles);
    if (!f->first_pixel || (f->kind == FITS_F64 && !f->doubles)) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    for (int i = 0; i < im->naxis; ++i) f->first_pixel[i] = 1;
    rc = keep_wcs_cards(reader, f, err, err_size);
    if (rc != GS_OK) goto cleanup;
    reader->ops = &fits_ops;
    reader->impl = f;
    f = NULL;

cleanup:
    if (rc != GS_OK) {
        free(reader->fits_cards);
        reader->fits_cards = NULL;
        reader->fits_card_count = 0;
        reader->note[0] = '\0';
    }
    fits_state_destroy(f);
    free(im);
    return rc;
}
