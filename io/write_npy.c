/* write_npy.c: the NumPy .npy (version 1.0) writer: unsigned images and integrals, float32 images, float64 integrals. */
/* Streamed one row at a time. */

#include "io_internal.h"

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

/* NumPy's type string for samples of each kind and width ('|': byte order irrelevant). */
static const char *npy_descr(gs_sample_kind kind, uint32_t bits)
{
    if (kind == GS_SAMPLES_FLOAT) return bits == 32 ? "<f4" : bits == 64 ? "<f8" : NULL;
    switch (bits) {
    case 8: return "|u1";
    case 16: return "<u2";
    case 32: return "<u4";
    case 64: return "<u8";
    default: return NULL;
    }
}

gs_status gs_write_npy_open(gs_writer *writer, char *err, size_t err_size)
{
    unsigned char header[NPY_HEADER_MAX];
    const char *descr = npy_descr(writer->kind, writer->bits);
    if (!descr)
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "NPY output takes 8, 16, 32 or 64-bit samples, not %u-bit", writer->bits);

    /* The dict exactly as numpy.save writes it: shape is (rows, columns), C order. */
    char *dict = (char *)header + NPY_PREAMBLE_LEN;
    const size_t dict_room = sizeof header - NPY_PREAMBLE_LEN;
    int len = snprintf(dict, dict_room, "{'descr': '%s', 'fortran_order': False, 'shape': (%u, %u), }",
                       descr, writer->height, writer->width);
    if (len < 0 || (size_t)len >= dict_room)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "NPY header does not fit");
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
    return gs_write_raster_open(writer, header, total, 0, err, err_size);
}
