/* formats.c: the output formats gsmooth writes: extensions, names and exactness. */
/* The extensions that choose them, their names, and which ones decode to exactly the
 * samples written. */

#include "io_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *ext; /* with the dot, compared case-insensitively */
    gs_out_format format;
} out_extensions[] = {
    {".png", GS_OUT_PNG}, {".pgm", GS_OUT_PGM}, {".bmp", GS_OUT_BMP}, {".tga", GS_OUT_TGA},
    {".jpg", GS_OUT_JPG}, {".jpeg", GS_OUT_JPG}, {".npy", GS_OUT_NPY}, {".tif", GS_OUT_TIF},
    {".tiff", GS_OUT_TIF}, {".fits", GS_OUT_FITS}, {".fit", GS_OUT_FITS}, {".fts", GS_OUT_FITS},
};

static const struct {
    const char *name; /* for messages */
    int lossless;     /* decodes to exactly the samples written */
    int takes_float;  /* stores IEEE float samples */
} out_formats[] = {
    [GS_OUT_PNG] = {"PNG", 1, 0}, [GS_OUT_PGM] = {"PGM", 1, 0}, [GS_OUT_BMP] = {"BMP", 1, 0},
    [GS_OUT_TGA] = {"TGA", 1, 0}, [GS_OUT_JPG] = {"JPEG", 0, 0}, [GS_OUT_NPY] = {"NPY", 1, 1},
    [GS_OUT_TIF] = {"TIFF", 1, 1}, [GS_OUT_FITS] = {"FITS", 1, 1},
};
_Static_assert(sizeof out_formats / sizeof out_formats[0] == GS_OUT_FORMAT_COUNT,
               "every gs_out_format needs a name");

/* "supported: .png .pgm ..." from the table, so the message cannot go stale. */
static void supported_list(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof out_extensions / sizeof out_extensions[0] && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", out_extensions[i].ext);
        if (n < 0) break;
        used += (size_t)n;
    }
}

gs_status gs_out_format_from_path(const char *path, gs_out_format *out, char *err,
                                  size_t err_size)
{
    char list[96];
    if (!path || !out) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_out_format_from_path: NULL argument");
    if (strcmp(path, "-") == 0) {
        *out = GS_OUT_PNG; /* standard output carries PNG: lossless, and 16-bit capable */
        return GS_OK;
    }
    supported_list(list, sizeof list);

    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) /* ".png" alone is a hidden file's name, not an extension */
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "output name has no extension to choose the format (supported: %s)", list);
    for (size_t i = 0; i < sizeof out_extensions / sizeof out_extensions[0]; i++) {
        if (strcasecmp(dot, out_extensions[i].ext) == 0) {
            *out = out_extensions[i].format;
            return GS_OK;
        }
    }
    return gs_fail(err, err_size, GS_ERR_USAGE, "unknown output extension '%s' (supported: %s)",
                   dot, list);
}

const char *gs_out_format_name(gs_out_format fmt)
{
    if ((unsigned)fmt >= GS_OUT_FORMAT_COUNT) return "unknown";
    return out_formats[fmt].name;
}

int gs_out_format_lossless(gs_out_format fmt)
{
    return (unsigned)fmt < GS_OUT_FORMAT_COUNT && out_formats[fmt].lossless;
}

int gs_out_format_takes_float(gs_out_format fmt)
{
    return (unsigned)fmt < GS_OUT_FORMAT_COUNT && out_formats[fmt].takes_float;
}
