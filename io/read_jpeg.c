/* read_jpeg.c: the JPEG reader on libjpeg-turbo, gray straight from the decoder. */
/* Gray is the luma channel, never through RGB; rows are streamed by scanlines, every
 * message is kept from the terminal, and corrupt entropy data is an error. */

#include "io_internal.h"

#include <jpeglib.h>
#include <jerror.h>

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What gsmooth asks of libjpeg-turbo, and why:
 * - Gray is JCS_GRAYSCALE output: for YCbCr files the decoder's own Y, with the chroma
 *   never decoded (as OpenCV's IMREAD_GRAYSCALE); for RGB files libjpeg's fixed-point
 *   BT.601, the same weights as gs_luma. CMYK and YCCK files (libjpeg has no gray output
 *   for them) are decoded to CMYK, read as Adobe-inverted (Photoshop writes them so, and
 *   it is where such files come from), turned into RGB by R = C x K / 255 and so on,
 *   rounded, and then into BT.601 gray. 12-bit JPEG is refused by the library.
 * - The input comes through a source manager on gs_source that never invents data: at the
 *   end of the input it fails, where libjpeg's own would insert an end marker and decode
 *   gray blocks. Warnings that mean corrupt image data are errors for the same reason;
 *   warnings about metadata (extraneous bytes between markers, an unknown JFIF revision,
 *   an unknown Adobe transform, a bad ICC marker) are not, since real cameras write them.
 * - --max-pixels is checked as soon as the frame header is parsed (the source manager looks
 *   before asking for more input), so a stream's huge header is refused before its body.
 * - Memory: mem->max_memory_to_use follows --max-pixels (a progressive file keeps every
 *   DCT coefficient until its last scan), and a progress monitor refuses files with more
 *   scans than any encoder writes (the scan-flood denial of service libjpeg-turbo's own
 *   djpeg guards against with -maxscans).
 */

/* Bytes read from the source per refill. */
#define JPEG_INPUT_BUFFER (64u << 10)
/* Scans a progressive file may have: encoders write about ten; libjpeg-turbo's fuzzers
 * stop at 500. */
#define JPEG_MAX_SCANS 500
/* The decoder's memory cap: every DCT coefficient of a 4-component image at 2 bytes each
 * (8 bytes a pixel) for --max-pixels, plus room for tables and row buffers. */
#define JPEG_BYTES_PER_PIXEL 8u
#define JPEG_MEMORY_SLACK ((size_t)64 << 20)
/* Samples per pixel of the CMYK decode. */
#define CMYK_CHANNELS 4

/* libjpeg's errors and warnings, kept here and ended with a longjmp. */
typedef struct jpeg_errors {
    struct jpeg_error_mgr pub;        /* libjpeg's part; first, so the struct pointer is it */
    jmp_buf jump;                     /* where error_exit returns to */
    char message[JMSG_LENGTH_MAX];    /* the message that ended the call */
    int io_errno;                     /* the input could not be read (not a JPEG problem) */
} jpeg_errors;

/* The input, handed to libjpeg through gs_source. */
typedef struct jpeg_input {
    struct jpeg_source_mgr pub;       /* libjpeg's part; first */
    gs_source *src;                   /* the reader's input */
    uint64_t max_pixels;              /* --max-pixels, checked as soon as the frame header is in */
    int too_large;                    /* it was over: the error is GS_ERR_TOO_LARGE */
    JOCTET buffer[JPEG_INPUT_BUFFER]; /* the bytes libjpeg is reading */
} jpeg_input;

typedef struct decoder {
    struct jpeg_decompress_struct cinfo; /* the decoder */
    jpeg_errors errors;                  /* its error manager */
    jpeg_input input;                    /* its source manager */
    struct jpeg_progress_mgr progress;   /* the scan limit */
    int created;                         /* cinfo was created: destroy it */
    int cmyk;                            /* decoding CMYK, converted to gray here */
    JSAMPLE *cmyk_row;                   /* one CMYK row (cmyk only) */
} decoder;

/* Warnings that mean the image data itself is corrupt: decoding on would invent pixels. */
static int fatal_warning(int code)
{
    switch (code) {
    case JWRN_ARITH_BAD_CODE:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_JPEG_EOF:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_TOO_MUCH_DATA: return 1;
    default: return 0;
    }
}

static void on_error_exit(j_common_ptr cinfo)
{
    jpeg_errors *errors = (jpeg_errors *)cinfo->err;
    if (!errors->message[0]) cinfo->err->format_message(cinfo, errors->message);
    longjmp(errors->jump, 1);
}

/* Level -1 is a warning; higher levels are trace messages, which are dropped. */
static void on_message(j_common_ptr cinfo, int level)
{
    if (level >= 0) return;
    cinfo->err->num_warnings++;
    if (fatal_warning(cinfo->err->msg_code)) on_error_exit(cinfo);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; /* never to a terminal */ }

static void on_progress(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    jpeg_errors *errors = (jpeg_errors *)cinfo->err;
    if (cinfo->is_decompressor && d->input_scan_number > JPEG_MAX_SCANS) {
        snprintf(errors->message, sizeof errors->message,
                 "more than %d scans (a crafted file: encoders write about ten)", JPEG_MAX_SCANS);
        longjmp(errors->jump, 1);
    }
}

/* ---- the source manager ---- */

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }
static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean source_fill(j_decompress_ptr cinfo)
{
    jpeg_input *in = (jpeg_input *)cinfo->src;
    /* Once the frame header (SOF) is parsed the size is known: a stream that claims too
     * many pixels is refused here, before this waits for any more of its body. */
    jpeg_errors *limit_errors = (jpeg_errors *)cinfo->err;
    if (gs_check_pixels(cinfo->image_width, cinfo->image_height, in->max_pixels,
                        limit_errors->message, sizeof limit_errors->message) != GS_OK) {
        in->too_large = 1;
        longjmp(limit_errors->jump, 1);
    }
    /* What the input has ready: a stream's header is judged before its body arrives. */
    size_t got = gs_source_read_some(in->src, in->buffer, sizeof in->buffer);
    if (got == 0) {
        jpeg_errors *errors = (jpeg_errors *)cinfo->err;
        if (in->src->read_errno) {
            errors->io_errno = in->src->read_errno;
            snprintf(errors->message, sizeof errors->message, "%s", strerror(in->src->read_errno));
            longjmp(errors->jump, 1);
        }
        ERREXIT(cinfo, JERR_INPUT_EOF); /* never an invented end marker */
    }
    in->pub.next_input_byte = in->buffer;
    in->pub.bytes_in_buffer = got;
    return TRUE;
}

static void source_skip(j_decompress_ptr cinfo, long count)
{
    struct jpeg_source_mgr *pub = cinfo->src;
    while (count > 0) {
        if (pub->bytes_in_buffer == 0) source_fill(cinfo);
        size_t step = (size_t)count < pub->bytes_in_buffer ? (size_t)count : pub->bytes_in_buffer;
        pub->next_input_byte += step;
        pub->bytes_in_buffer -= step;
        count -= (long)step;
    }
}

/* ---- reading ---- */

/* The status and message for a longjmp out of libjpeg. */
static gs_status jump_status(const decoder *dec, char *err, size_t err_size)
{
    const jpeg_errors *errors = &dec->errors;
    if (dec->input.too_large) return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "%s", errors->message);
    if (errors->io_errno) return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", errors->message);
    if (errors->pub.msg_code == JERR_OUT_OF_MEMORY)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory decoding JPEG: %s", errors->message);
    if (errors->pub.msg_code == JERR_INPUT_EOF)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated JPEG: the data ends before the image does");
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid JPEG: %s", errors->message);
}

/* One CMYK row (Adobe-inverted samples) to gray: RGB = (C, M, Y) x K / 255, then luma. */
static void cmyk_to_gray(uint8_t *dst, const JSAMPLE *src, uint32_t width)
{
    for (uint32_t x = 0; x < width; x++) {
        const JSAMPLE *p = src + (size_t)x * CMYK_CHANNELS;
        /* Adobe-inverted: a stored sample is the ink's complement, 255 - ink. */
        const uint32_t black = UINT8_MAX - p[3];
        dst[x] = (uint8_t)gs_luma(gs_cmyk_light(UINT8_MAX - p[0], black, UINT8_MAX),
                                  gs_cmyk_light(UINT8_MAX - p[1], black, UINT8_MAX),
                                  gs_cmyk_light(UINT8_MAX - p[2], black, UINT8_MAX));
    }
}

static gs_status read_rows(gs_reader *reader, unsigned char *dst, size_t stride, uint32_t rows,
                           char *err, size_t err_size)
{
    decoder *dec = reader->impl;
    struct jpeg_decompress_struct *cinfo = &dec->cinfo;
    if (setjmp(dec->errors.jump)) return jump_status(dec, err, err_size);
    for (uint32_t r = 0; r < rows; r++) {
        JSAMPROW row = dec->cmyk ? dec->cmyk_row : (JSAMPROW)(dst + (size_t)r * stride);
        /* The source manager never suspends, so 0 rows would be a library fault. */
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid JPEG: the decoder gave no row %u",
                           reader->next_row + r);
        if (dec->cmyk) cmyk_to_gray(dst + (size_t)r * stride, dec->cmyk_row, reader->info.width);
    }
    return GS_OK;
}

static void decoder_destroy(void *impl)
{
    decoder *dec = impl;
    if (!dec) return;
    if (dec->created) jpeg_destroy_decompress(&dec->cinfo); /* frees every pool, done or not */
    free(dec->cmyk_row);
    free(dec);
}

static const gs_reader_ops decoder_ops = {
    .read_rows = read_rows,
    .destroy = decoder_destroy,
};

/* The header, the limits and the output settings; the decoder then holds its first row.
 * Only `dec` (never reassigned) is used on the longjmp path. */
static gs_status start(decoder *dec, gs_reader *reader, uint64_t max_pixels, char *err,
                       size_t err_size)
{
    struct jpeg_decompress_struct *cinfo = &dec->cinfo;
    if (setjmp(dec->errors.jump)) return jump_status(dec, err, err_size);

    jpeg_create_decompress(cinfo);
    dec->created = 1;
    uint64_t cap = max_pixels > (UINT64_MAX - JPEG_MEMORY_SLACK) / JPEG_BYTES_PER_PIXEL
                       ? UINT64_MAX
                       : max_pixels * JPEG_BYTES_PER_PIXEL + JPEG_MEMORY_SLACK;
    cinfo->mem->max_memory_to_use = cap > (uint64_t)LONG_MAX ? LONG_MAX : (long)cap;
    dec->progress.progress_monitor = on_progress;
    cinfo->progress = &dec->progress;
    dec->input.src = &reader->src;
    dec->input.max_pixels = max_pixels;
    dec->input.pub.init_source = source_init;
    dec->input.pub.fill_input_buffer = source_fill;
    dec->input.pub.skip_input_data = source_skip;
    dec->input.pub.resync_to_restart = jpeg_resync_to_restart;
    dec->input.pub.term_source = source_term;
    cinfo->src = &dec->input.pub;

    jpeg_read_header(cinfo, TRUE);
    gs_status rc = gs_check_pixels(cinfo->image_width, cinfo->image_height, max_pixels, err, err_size);
    if (rc != GS_OK) return rc;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE: break;
    case JCS_CMYK:
    case JCS_YCCK: dec->cmyk = 1; break;
    default: reader->info.was_color = 1; break; /* YCbCr, RGB */
    }
    reader->info.was_color |= dec->cmyk;
    cinfo->out_color_space = dec->cmyk ? JCS_CMYK : JCS_GRAYSCALE;
    if (dec->cmyk) {
        dec->cmyk_row = malloc((size_t)cinfo->image_width * CMYK_CHANNELS);
        if (!dec->cmyk_row)
            return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-pixel CMYK row",
                           cinfo->image_width);
    }
    jpeg_start_decompress(cinfo); /* a progressive file is read whole here */
    if (cinfo->output_components != (dec->cmyk ? CMYK_CHANNELS : 1) ||
        cinfo->output_width != cinfo->image_width || cinfo->output_height != cinfo->image_height)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "unexpected JPEG layout (%d components)",
                       cinfo->output_components);
    reader->info.width = cinfo->output_width;
    reader->info.height = cinfo->output_height;
    reader->info.bits = 8;
    reader->info.format = "JPEG";
    return GS_OK;
}

gs_status gs_read_jpeg_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    decoder *dec = calloc(1, sizeof *dec);
    if (!dec) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    dec->cinfo.err = jpeg_std_error(&dec->errors.pub);
    dec->errors.pub.error_exit = on_error_exit;
    dec->errors.pub.emit_message = on_message;
    dec->errors.pub.output_message = on_output_message;

    rc = start(dec, reader, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;
    reader->ops = &decoder_ops;
    reader->impl = dec;
    dec = NULL;

cleanup:
    decoder_destroy(dec);
    return rc;
}
