/* write_pgm.c: the binary PGM (P5) writer, 8 or 16-bit, streamed. */
/* A text header, then big-endian rows. */

#include "io_internal.h"

#include <stdio.h>

#define PGM_MAXVAL_8 255u
#define PGM_MAXVAL_16 65535u
#define PGM_HEADER_MAX 48 /* "P5\n" + two 10-digit sizes + "65535" + separators */

gs_status gs_write_pgm_open(gs_writer *writer, char *err, size_t err_size)
{
    char header[PGM_HEADER_MAX];
    if (writer->bits != 8 && writer->bits != 16)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "PGM holds 8- or 16-bit samples, not %u-bit",
                       writer->bits);
    int len = snprintf(header, sizeof header, "P5\n%u %u\n%u\n", writer->width, writer->height,
                       writer->bits == 16 ? PGM_MAXVAL_16 : PGM_MAXVAL_8);
    if (len < 0 || (size_t)len >= sizeof header)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "PGM header does not fit");
    return gs_write_raster_open(writer, header, (size_t)len, 1, err, err_size);
}
