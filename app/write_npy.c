/* write_npy.c: the NumPy .npy (format version 1.0) writer for exact integral images, streamed one row at a time. */
#include "image_io_internal.h"

#include <stdlib.h>
#include <string.h>

/* Layout from numpy.lib.format: magic, major and minor version, a little-endian uint16
 * header length, then a Python dict literal padded with spaces and ended by '\n' so that
 * the data starts on a 64-byte boundary. */
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_VERSION_MAJOR 1
#define NPY_VERSION_MINOR 0
#define NPY_PREAMBLE_LEN 10 /* magic + 2 version bytes + 2 length bytes */
#define NPY_ALIGN 64
#define NPY_HEADER_MAX 192  /* preamble + dict with two 10-digit sizes, rounded up to 64 */
_Static_assert(NPY_HEADER_MAX % NPY_ALIGN == 0, "the header buffer holds whole 64-byte blocks");

typedef struct npy_out {
    unsigned bytes;     /* bytes per sample: 1, 2, 4 or 8 */
    unsigned char *row; /* one row in little-endian order; only on big-endian hosts */
} npy_out;

/* NumPy's type string for unsigned samples of each width ('|': byte order irrelevant). */
static const char *npy_descr(uint32_t bits)
{
    switch (bits) {
    case 8: return "|u1";
    case 16: return "<u2";
    case 32: return "<u4";
    case 64: return "<u8";
    default: return NULL;
    }
}

/* Copy one row of native samples into little-endian order. */
static void to_little_endian(unsigned char *dst, const unsigned char *src, uint32_t width,
                             unsigned bytes)
{
    for (size_t x = 0; x < width; x++) {
        uint64_t v = 0;
        switch (bytes) {
        case 2: v = ((const uint16_t *)src)[x]; break;
        case 4: v = ((const uint32_t *)src)[x]; break;
        default: v = ((const uint64_t *)src)[x]; break;
        }
        for (unsigned b = 0; b < bytes; b++) dst[x * bytes + b] = (unsigned char)(v >> (8 * b));
    }
}

static gs_status npy_write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    npy_out *st = writer->impl;
    const size_t row_bytes = (size_t)writer->width * st->bytes;
    for (uint32_t r = 0; r < rows; r++) {
        const unsigned char *in = src + (size_t)r * stride;
        if (st->row) { /* big-endian host: reorder; little-endian hosts write rows as they are */
            to_little_endian(st->row, in, writer->width, st->bytes);
            in = st->row;
        }
        gs_status rc = gs_writer_put(writer, in, row_bytes, err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status npy_finish(gs_writer *writer, char *err, size_t err_size)
{
    (void)writer; /* the data ends the file: no trailer */
    (void)err;
    (void)err_size;
    return GS_OK;
}

static void npy_out_destroy(void *impl)
{
    npy_out *st = impl;
    if (!st) return;
    free(st->row);
    free(st);
}

static const gs_writer_ops npy_ops = {
    .write_rows = npy_write_rows,
    .finish = npy_finish,
    .destroy = npy_out_destroy,
};

gs_status gs_write_npy_open(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    npy_out *st = NULL;
    unsigned char header[NPY_HEADER_MAX];
    const char *descr = npy_descr(writer->bits);

    if (!descr) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "NPY output takes 8, 16, 32 or 64-bit samples, not %u-bit",
                     writer->bits);
        goto cleanup;
    }
    st = calloc(1, sizeof *st);
    if (!st) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    st->bytes = writer->bits / 8;
    if (writer->width > SIZE_MAX / st->bytes) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "a row of %u samples does not fit in memory", writer->width);
        goto cleanup;
    }
    if (!GS_HOST_LITTLE_ENDIAN && st->bytes > 1) {
        st->row = malloc((size_t)writer->width * st->bytes);
        if (!st->row) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-sample row", writer->width);
            goto cleanup;
        }
    }

    /* The dict exactly as numpy.save writes it: shape is (rows, columns), C order. */
    char *dict = (char *)header + NPY_PREAMBLE_LEN;
    const size_t dict_room = sizeof header - NPY_PREAMBLE_LEN;
    int len = snprintf(dict, dict_room, "{'descr': '%s', 'fortran_order': False, 'shape': (%u, %u), }",
                       descr, writer->height, writer->width);
    if (len < 0 || (size_t)len >= dict_room) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "NPY header does not fit");
        goto cleanup;
    }
    /* Pad with spaces so preamble + dict + '\n' is a multiple of 64 bytes. */
    size_t total = (NPY_PREAMBLE_LEN + (size_t)len + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t header_len = total - NPY_PREAMBLE_LEN;
    memset(dict + len, ' ', header_len - 1 - (size_t)len);
    dict[header_len - 1] = '\n';
    memcpy(header, NPY_MAGIC, NPY_MAGIC_LEN);
    header[NPY_MAGIC_LEN] = NPY_VERSION_MAJOR;
    header[NPY_MAGIC_LEN + 1] = NPY_VERSION_MINOR;
    header[NPY_MAGIC_LEN + 2] = (unsigned char)(header_len & 0xFF);
    header[NPY_MAGIC_LEN + 3] = (unsigned char)(header_len >> 8);
    rc = gs_writer_put(writer, header, total, err, err_size);
    if (rc != GS_OK) goto cleanup;

    writer->ops = &npy_ops;
    writer->impl = st;
    st = NULL;

cleanup:
    npy_out_destroy(st);
    return rc;
}
