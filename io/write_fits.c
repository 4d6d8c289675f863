/* write_fits.c: FITS output through cfitsio (placeholder until the FITS writer lands). */

#include "io_internal.h"

gs_status gs_write_fits_open(gs_writer *writer, char *err, size_t err_size)
{
    (void)writer;
    return gs_fail(err, err_size, GS_ERR_USAGE, "FITS output is not built in");
}
