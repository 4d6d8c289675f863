/* image_io.h: streaming image readers and atomic (temp file + rename) writers for every format gsmooth supports. */
#ifndef GS_IMAGE_IO_H
#define GS_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "encode_settings.h"
#include "status.h"

/* What a reader found in the file's header. */
typedef struct gs_image_info {
    uint32_t width;     /* samples per row */
    uint32_t height;    /* rows */
    uint32_t bits;      /* 8 or 16: depth of the gray samples read_rows delivers; 32: IEEE
                           float32 samples (there are no 32-bit integer samples) */
    int was_color;      /* 1 if colour (or palette) was converted to gray with BT.601 */
    int had_alpha;      /* 1 if an alpha channel was dropped */
    const char *format; /* "PNG", "JPEG", "PGM", ... */
    uint32_t pages;     /* pages (TIFF directories) in the file, of which the first is read; 0 or 1 otherwise */
} gs_image_info;

typedef struct gs_reader gs_reader;

/*
 * Open `path` ("-" = standard input; pipes and FIFOs are read front to back, never whole)
 * and read its header.
 * A header whose width*height exceeds max_pixels is refused with GS_ERR_TOO_LARGE before
 * any pixel memory is allocated. Format is detected from content, not from the name.
 * On failure *out is NULL and `err` holds the cause (without the file name: the caller
 * adds it).
 */
gs_status gs_reader_open(const char *path, uint64_t max_pixels, gs_reader **out,
                         gs_image_info *info, char *err, size_t err_size);

/* Deliver the next `rows` rows, top to bottom, as native-endian gray samples of info.bits
 * bits, row r at dst + r * stride. */
gs_status gs_reader_read_rows(gs_reader *reader, void *dst, size_t stride, uint32_t rows,
                              char *err, size_t err_size);

/* Which decoder gave the answer, when that is news ("the fast PNG reader refused it (...);
 * libpng decoded it"), or what was converted ("float64 samples rounded to float32"), or
 * NULL. Final once every row was read; owned by the reader. */
const char *gs_reader_note(const gs_reader *reader);

/* A FITS input's world-coordinate header cards (WCS: CTYPEn, CRPIXn, CRVALn, CDELTn,
 * CUNITn, CROTAn, CDi_j, PCi_j, PVi_m, WCSAXES, RADESYS, EQUINOX, LONPOLE, LATPOLE,
 * MJD-OBS, DATE-OBS, ...), each 80 characters with no separator, `*count` of them; NULL
 * and 0 for any other input. Owned by the reader. Smoothing keeps pixels where they are,
 * so a FITS output of a smoothed FITS input carries them (gs_writer_keep_cards). */
const char *gs_reader_fits_cards(const gs_reader *reader, size_t *count);

void gs_reader_close(gs_reader *reader); /* NULL is a no-op */

typedef enum gs_out_format {
    GS_OUT_PNG,
    GS_OUT_PGM,
    GS_OUT_BMP,
    GS_OUT_TGA,
    GS_OUT_JPG,
    GS_OUT_NPY,
    GS_OUT_TIF,
    GS_OUT_FITS,
    GS_OUT_FORMAT_COUNT /* not a format: how many there are */
} gs_out_format;

/* Output format from the path's extension (case-insensitive); "-" is PNG on stdout.
 * GS_ERR_USAGE for an unknown or missing extension. */
gs_status gs_out_format_from_path(const char *path, gs_out_format *out, char *err,
                                  size_t err_size);

const char *gs_out_format_name(gs_out_format fmt);

/* 1 when the format decodes to exactly the samples written (every format but JPEG). */
int gs_out_format_lossless(gs_out_format fmt);

/* 1 when the format stores IEEE float samples (float32 images, float64 integrals): TIFF,
 * FITS and NPY. */
int gs_out_format_takes_float(gs_out_format fmt);

/* How a writer's samples are to be read: unsigned integers or IEEE floats. */
typedef enum gs_sample_kind {
    GS_SAMPLES_UINT = 0,  /* 8/16-bit images, 32/64-bit integrals */
    GS_SAMPLES_FLOAT = 1  /* 32: float32 images; 64: float64 integrals */
} gs_sample_kind;

typedef struct gs_writer gs_writer;

/* Temporary files are named ".<output name>" + GS_TEMP_SUFFIX with the X's random, beside
 * the output: never an output's name, so a run killed with SIGKILL leaves nothing under an
 * output name, and `find DIR -name '.*.gsmooth-??????' -type f -delete` clears them. */
#define GS_TEMP_SUFFIX ".gsmooth-XXXXXX"

/* 1 when a finished output exists at `path`: a regular file (through symbolic links).
 * Outputs appear only by rename, so such a file is complete. */
int gs_output_exists(const char *path);

/*
 * Start writing a `width` x `height` image of `bits`-bit unsigned samples to `path`: 8 or
 * 16 for every image format (16 is refused by BMP, TGA and JPEG), 32 or 64 for NPY, TIFF
 * and FITS. Data goes to a temporary file in the target directory, renamed onto `path`
 * only by gs_writer_commit; "-" writes to standard output directly. PNG and TIFF compress
 * as `encode` says (NULL: the default level, one deflate thread per CPU).
 */
gs_status gs_writer_open(const char *path, gs_out_format fmt, uint32_t width, uint32_t height,
                         uint32_t bits, const gs_encode_settings *encode, gs_writer **out,
                         char *err, size_t err_size);

/* gs_writer_open for samples of either kind: GS_SAMPLES_FLOAT with bits 32 (float32) or
 * 64 (float64), taken by the formats of gs_out_format_takes_float and refused by the
 * others (GS_ERR_USAGE, naming the formats that take it). */
gs_status gs_writer_open_kind(const char *path, gs_out_format fmt, uint32_t width,
                              uint32_t height, uint32_t bits, gs_sample_kind kind,
                              const gs_encode_settings *encode, gs_writer **out, char *err,
                              size_t err_size);

/* Header cards to copy into a FITS output (gs_reader_fits_cards' form: `count` cards of 80
 * characters), before the first row is written; the writer copies them. Other formats
 * ignore them. */
gs_status gs_writer_keep_cards(gs_writer *writer, const char *cards, size_t count, char *err,
                               size_t err_size);

/* Append `rows` rows of native-endian samples, row r at src + r * stride. */
gs_status gs_writer_write_rows(gs_writer *writer, const void *src, size_t stride,
                               uint32_t rows, char *err, size_t err_size);

/* Finish the file, flush, fsync, close and rename into place; frees the writer. */
gs_status gs_writer_commit(gs_writer *writer, char *err, size_t err_size);

/* Drop everything written: close and unlink the temporary file; frees the writer.
 * NULL is a no-op. */
void gs_writer_abort(gs_writer *writer);

#endif /* GS_IMAGE_IO_H */
