/* read_npy.c: the NumPy .npy reader: 2-D uint8, uint16 and float32 arrays (float64 rounded), streamed by rows. */
/* The header dict is parsed here by hand, strictly, as the Python literal numpy.save
 * writes; the data is read front to back, so files and pipes are read alike. */

#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Layout (numpy.lib.format): the magic "\x93NUMPY", a major and a minor version byte, the
 * header's length (version 1.0: little-endian uint16; 2.0 and 3.0: uint32), the header (a
 * Python dict literal, ASCII in 1.0 and 2.0, UTF-8 in 3.0: the three keys 'descr',
 * 'fortran_order' and 'shape', padded with spaces and ended by '\n'), then the samples in C
 * order. Whatever does not parse as exactly that is refused: a header is the only place a
 * damaged file can be told from a good one, since the samples carry no checksum.
 */

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_VERSION_AT NPY_MAGIC_LEN        /* major, then minor */
#define NPY_LENGTH_AT (NPY_MAGIC_LEN + 2)   /* the header length's first byte */
#define NPY_LENGTH_BYTES_V1 2u
#define NPY_LENGTH_BYTES_V2 4u              /* versions 2.0 and 3.0 */
#define NPY_VERSION_MAX 3
/* Longest header read: numpy's own np.load refuses headers over 10000 bytes unless told
 * otherwise (max_header_size); a 2-D array's header is under 128 bytes, so 64 KiB is
 * generous and bounds the allocation a lying length could ask for. */
#define NPY_HEADER_MAX ((size_t)64 << 10)
/* Axes a shape may have before it is refused as "not 2-D" (numpy allows 64). */
#define NPY_AXES_MAX 64
/* Longest descr string kept (numpy's simple dtypes are 3 or 4 characters: '<f4', '<c16'). */
#define NPY_DESCR_MAX 16

/* How the file's samples become the samples delivered. */
typedef enum npy_kind {
    NPY_U8,   /* uint8: as is */
    NPY_U16,  /* uint16, either byte order: to native */
    NPY_F32,  /* float32, either byte order: to native, bits kept */
    NPY_F64,  /* float64, either byte order: to native, rounded to float32 */
} npy_kind;

typedef struct npy_state {
    npy_kind kind;
    unsigned bytes;         /* bytes per sample in the file: 1, 2, 4 or 8 */
    int swap;               /* the file's byte order is not the host's */
    size_t file_row_bytes;  /* one row as stored */
    unsigned char *row;     /* NPY_F64: one row as stored, before rounding; else NULL */
} npy_state;

/* ---- the header dict ---- */

typedef struct npy_header {
    char descr[NPY_DESCR_MAX + 1];
    int fortran_order;
    uint64_t shape[NPY_AXES_MAX];
    unsigned axes;
    int have_descr, have_fortran, have_shape;
} npy_header;

typedef struct parser {
    const char *p, *end;
    char *err;
    size_t err_size;
} parser;

static gs_status malformed(parser *ps, const char *what)
{
    return gs_fail(ps->err, ps->err_size, GS_ERR_FORMAT, "invalid .npy header: %s", what);
}

/* Python's whitespace between tokens (the header is one line, but padding is free). */
static void skip_space(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int take(parser *ps, char c)
{
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

static int take_word(parser *ps, const char *word)
{
    skip_space(ps);
    const size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return 0;
    const char next = ps->p + n < ps->end ? ps->p[n] : ' ';
    if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') ||
        next == '_')
        return 0; /* "Falsey" is no False */
    ps->p += n;
    return 1;
}

/* A quoted string of plain characters (no escapes: numpy's keys and simple descrs have
 * none), at most `cap` of them, into out. */
static gs_status parse_string(parser *ps, char *out, size_t cap, const char *what)
{
    skip_space(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"')) return malformed(ps, what);
    const char quote = *ps->p++;
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != quote) {
        const unsigned char c = (unsigned char)*ps->p;
        if (c == '\\' || c < 0x20 || c >= 0x7F || n == cap) return malformed(ps, what);
        out[n++] = (char)c;
        ps->p++;
    }
    if (ps->p >= ps->end) return malformed(ps, what);
    ps->p++;
    out[n] = '\0';
    return GS_OK;
}

/* A non-negative decimal integer as Python writes one (no sign, no leading zeros); a
 * minus sign or a value past 2^63 gets its own refusal, naming it. */
static gs_status parse_axis(parser *ps, uint64_t *out)
{
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == '-')
        return gs_fail(ps->err, ps->err_size, GS_ERR_FORMAT, "invalid .npy header: a negative size in 'shape'");
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return malformed(ps, "'shape' is not a tuple of sizes");
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return malformed(ps, "a size in 'shape' has a leading zero");
    uint64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        const unsigned d = (unsigned)(*ps->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return gs_fail(ps->err, ps->err_size, GS_ERR_TOO_LARGE, "invalid .npy header: a size in 'shape' "
                           "is past 2^64");
        v = v * 10 + d;
        ps->p++;
    }
    /* Python 2's long suffix, which numpy's reader still strips from 1.0 and 2.0 headers. */
    if (ps->p < ps->end && *ps->p == 'L') ps->p++;
    *out = v;
    return GS_OK;
}

/* A tuple of sizes: "()", "(n,)", "(n, m)", "(n, m,)", ... ("(n)" is no tuple in Python). */
static gs_status parse_shape(parser *ps, npy_header *h)
{
    if (!take(ps, '(')) return malformed(ps, "'shape' is not a tuple");
    h->axes = 0;
    if (take(ps, ')')) return GS_OK;
    for (;;) {
        if (h->axes == NPY_AXES_MAX)
            return gs_fail(ps->err, ps->err_size, GS_ERR_FORMAT, "invalid .npy header: more than %u axes",
                           NPY_AXES_MAX);
        gs_status rc = parse_axis(ps, &h->shape[h->axes]);
        if (rc != GS_OK) return rc;
        h->axes++;
        const int comma = take(ps, ',');
        if (take(ps, ')')) {
            if (h->axes == 1 && !comma) return malformed(ps, "'shape' is not a tuple");
            return GS_OK;
        }
        if (!comma) return malformed(ps, "'shape' is not a tuple of sizes");
    }
}

/* The dict: its three keys once each in any order, a trailing comma allowed, then only the
 * padding (spaces and the final newline). */
static gs_status parse_header(parser *ps, npy_header *h)
{
    memset(h, 0, sizeof *h);
    if (!take(ps, '{')) return malformed(ps, "not a dict");
    while (!take(ps, '}')) {
        char key[16];
        gs_status rc = parse_string(ps, key, sizeof key - 1, "a key is not a plain string");
        if (rc != GS_OK) return rc;
        if (!take(ps, ':')) return malformed(ps, "no ':' after a key");
        if (strcmp(key, "descr") == 0 && !h->have_descr) {
            skip_space(ps);
            if (ps->p < ps->end && (*ps->p == '[' || *ps->p == '{'))
                return gs_fail(ps->err, ps->err_size, GS_ERR_FORMAT,
                               ".npy of a structured dtype: gsmooth reads uint8, uint16 and float32 "
                               "(and float64, rounded to float32)");
            rc = parse_string(ps, h->descr, NPY_DESCR_MAX, "'descr' is not a dtype string");
            h->have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !h->have_fortran) {
            if (take_word(ps, "True")) h->fortran_order = 1;
            else if (!take_word(ps, "False")) return malformed(ps, "'fortran_order' is not True or False");
            h->have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !h->have_shape) {
            rc = parse_shape(ps, h);
            h->have_shape = 1;
        } else {
            return malformed(ps, "a key other than 'descr', 'fortran_order' and 'shape', or one twice");
        }
        if (rc != GS_OK) return rc;
        if (!take(ps, ',')) {
            if (!take(ps, '}')) return malformed(ps, "no ',' or '}' after a value");
            break;
        }
    }
    skip_space(ps);
    if (ps->p != ps->end) return malformed(ps, "bytes after the dict that are not padding");
    if (!h->have_descr) return malformed(ps, "no 'descr'");
    if (!h->have_fortran) return malformed(ps, "no 'fortran_order'");
    if (!h->have_shape) return malformed(ps, "no 'shape'");
    return GS_OK;
}

/* ---- what is read ---- */

/* numpy's name of a dtype string, for the refusal ("<i4": int32); NULL if it has none. */
static const char *dtype_name(const char *descr)
{
    static const struct {
        const char *code, *name;
    } names[] = {
        {"b1", "bool"},       {"i1", "int8"},       {"i2", "int16"},       {"i4", "int32"},
        {"i8", "int64"},      {"u1", "uint8"},      {"u2", "uint16"},      {"u4", "uint32"},
        {"u8", "uint64"},     {"f2", "float16"},    {"f4", "float32"},     {"f8", "float64"},
        {"f16", "float128"},  {"c8", "complex64"},  {"c16", "complex128"}, {"c32", "complex256"},
    };
    /* '=' (the writing machine's order) is never in numpy's files and is named as it is. */
    if (descr[0] != '<' && descr[0] != '>' && descr[0] != '|') return NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(descr + 1, names[i].code) == 0) return names[i].name;
    return NULL;
}

/* The dtypes read: uint8 (any byte-order mark: one byte has none), uint16, float32 and
 * float64 little- or big-endian. */
static gs_status pick_kind(npy_state *n, const char *descr, char *err, size_t err_size)
{
    const char order = descr[0];
    const char *code = descr + 1;
    const int explicit_order = order == '<' || order == '>';
    if (strcmp(code, "u1") == 0 && (explicit_order || order == '|')) {
        n->kind = NPY_U8, n->bytes = 1;
        return GS_OK;
    }
    if (explicit_order) {
        n->swap = (order == '<') != GS_HOST_LITTLE_ENDIAN;
        if (strcmp(code, "u2") == 0) n->kind = NPY_U16, n->bytes = 2;
        else if (strcmp(code, "f4") == 0) n->kind = NPY_F32, n->bytes = 4;
        else if (strcmp(code, "f8") == 0) n->kind = NPY_F64, n->bytes = 8;
        if (n->bytes) return GS_OK;
    }
    const char *name = dtype_name(descr);
    return gs_fail(err, err_size, GS_ERR_FORMAT,
                   "%s%s%s .npy: gsmooth reads uint8, uint16 and float32 (and float64, rounded to float32)",
                   name ? "" : "dtype '", name ? name : descr, name ? "" : "'");
}

/* The shape as (height, width): 2-D, or 3-D with a last axis of 1 (one channel). */
static gs_status pick_size(const npy_header *h, uint32_t *width, uint32_t *height, char *err,
                           size_t err_size)
{
    const int two_d = h->axes == 2 || (h->axes == 3 && h->shape[2] == 1);
    if (!two_d) {
        char shape[160] = "(";
        size_t at = 1;
        unsigned shown = 0;
        /* Each size takes at most 22 characters (", " and 20 digits): 32 left is room. */
        for (; shown < h->axes && at < sizeof shape - 32; shown++)
            at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%llu", shown ? ", " : "",
                                   (unsigned long long)h->shape[shown]);
        snprintf(shape + at, sizeof shape - at, "%s%s)", shown < h->axes ? ", ..." : "",
                 h->axes == 1 ? "," : "");
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       ".npy of shape %s: gsmooth reads 2-D arrays (height, width), or (height, width, 1)",
                       shape);
    }
    if (h->shape[0] == 0 || h->shape[1] == 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, ".npy of shape (%llu, %llu) holds no pixels",
                       (unsigned long long)h->shape[0], (unsigned long long)h->shape[1]);
    if (h->shape[0] > UINT32_MAX || h->shape[1] > UINT32_MAX)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, ".npy of shape (%llu, %llu) is too large (at most "
                       "%u a side)", (unsigned long long)h->shape[0], (unsigned long long)h->shape[1],
                       UINT32_MAX);
    *height = (uint32_t)h->shape[0];
    *width = (uint32_t)h->shape[1];
    return GS_OK;
}

/* ---- rows ---- */

static void swap_bytes(unsigned char *p, size_t count, unsigned bytes)
{
    for (size_t i = 0; i < count; i++, p += bytes)
        for (unsigned a = 0, b = bytes - 1; a < b; a++, b--) {
            const unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* float64 to float32, rounded to nearest (C's conversion in the default rounding mode);
 * NaN stays NaN, infinities and signed zeros stay. */
static void round_row(float *dst, const unsigned char *src, uint32_t width)
{
    for (uint32_t x = 0; x < width; x++) {
        double d;
        memcpy(&d, src + (size_t)x * sizeof d, sizeof d);
        dst[x] = (float)d;
    }
}

static gs_status npy_read_rows(gs_reader *reader, unsigned char *dst, size_t stride, uint32_t rows,
                               char *err, size_t err_size)
{
    npy_state *n = reader->impl;
    const uint32_t width = reader->info.width;
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *out = dst + (size_t)r * stride;
        unsigned char *into = n->row ? n->row : out;
        const size_t got = gs_source_read(&reader->src, into, n->file_row_bytes);
        if (reader->src.read_errno)
            return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(reader->src.read_errno));
        if (got != n->file_row_bytes)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated .npy: the data ends in row %u of %u",
                           reader->next_row + r, reader->info.height);
        if (n->swap) swap_bytes(into, width, n->bytes);
        if (n->kind == NPY_F64) round_row((float *)(void *)out, into, width);
    }
    return GS_OK;
}

static void npy_destroy(void *impl)
{
    npy_state *n = impl;
    if (!n) return;
    free(n->row);
    free(n);
}

static const gs_reader_ops npy_ops = {
    .read_rows = npy_read_rows,
    .destroy = npy_destroy,
};

/* ---- opening ---- */

gs_status gs_read_npy_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    npy_state *n = NULL;
    char *text = NULL;
    unsigned char pre[NPY_LENGTH_AT + NPY_LENGTH_BYTES_V2];

    if (gs_source_read(&reader->src, pre, NPY_LENGTH_AT) != NPY_LENGTH_AT ||
        memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "not a .npy file (no \\x93NUMPY magic and version)");
        goto cleanup;
    }
    const unsigned major = pre[NPY_VERSION_AT], minor = pre[NPY_VERSION_AT + 1];
    if (major < 1 || major > NPY_VERSION_MAX || minor != 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, ".npy format version %u.%u is not supported (1.0, 2.0 "
                     "and 3.0 only)", major, minor);
        goto cleanup;
    }
    const size_t length_bytes = major == 1 ? NPY_LENGTH_BYTES_V1 : NPY_LENGTH_BYTES_V2;
    if (gs_source_read(&reader->src, pre + NPY_LENGTH_AT, length_bytes) != length_bytes) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "truncated .npy: the file ends in its preamble");
        goto cleanup;
    }
    uint64_t header_len = 0;
    for (size_t i = length_bytes; i-- > 0;) header_len = header_len << 8 | pre[NPY_LENGTH_AT + i];
    if (header_len > NPY_HEADER_MAX) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid .npy header: %llu bytes long (at most %zu "
                     "are read)", (unsigned long long)header_len, NPY_HEADER_MAX);
        goto cleanup;
    }
    text = malloc(header_len ? (size_t)header_len : 1);
    if (!text) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    if (gs_source_read(&reader->src, text, (size_t)header_len) != header_len) {
        rc = reader->src.read_errno
                 ? gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(reader->src.read_errno))
                 : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated .npy: the file ends inside its %llu-byte "
                           "header", (unsigned long long)header_len);
        goto cleanup;
    }
    /* numpy ends the padding with '\n'; a header without it was cut or not written by numpy. */
    if (header_len == 0 || text[header_len - 1] != '\n') {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid .npy header: it does not end with a newline");
        goto cleanup;
    }
    npy_header h;
    parser ps = {text, text + header_len, err, err_size};
    rc = parse_header(&ps, &h);
    if (rc != GS_OK) goto cleanup;

    n = calloc(1, sizeof *n);
    if (!n) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    rc = pick_kind(n, h.descr, err, err_size);
    if (rc != GS_OK) goto cleanup;
    if (h.fortran_order) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "Fortran-order .npy is not supported: save it in C order "
                     "(numpy.save(path, numpy.ascontiguousarray(a)))");
        goto cleanup;
    }
    uint32_t width = 0, height = 0;
    rc = pick_size(&h, &width, &height, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    /* width < 2^32 and bytes <= 8: the row's size fits in 64 bits; it must fit a size_t. */
    const uint64_t row_bytes = (uint64_t)width * n->bytes;
    if (row_bytes > SIZE_MAX / 4) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, ".npy row of %u samples does not fit in memory", width);
        goto cleanup;
    }
    n->file_row_bytes = (size_t)row_bytes;
    if (n->kind == NPY_F64) {
        n->row = malloc(n->file_row_bytes);
        if (!n->row) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-sample row", width);
            goto cleanup;
        }
        snprintf(reader->note, sizeof reader->note, "float64 samples rounded to float32");
    }
    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = n->kind == NPY_U8 ? 8u : n->kind == NPY_U16 ? 16u : 32u;
    reader->info.format = "NPY";
    reader->info.pages = 1;
    reader->ops = &npy_ops;
    reader->impl = n;
    n = NULL;

cleanup:
    free(text);
    npy_destroy(n);
    return rc;
}
