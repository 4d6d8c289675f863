/* read_png.c: the libpng reader: every PNG colour type and bit depth to gray. */
/* Output is 8- or 16-bit gray, streamed row by row (interlaced images are decoded whole). */

#include <png.h>

#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/* Largest ancillary chunk (iCCP, zTXt, ...) libpng may allocate: the PNG_USER_CHUNK_MALLOC_MAX
 * of libpng 1.6's default configuration, set here so it holds whatever the build chose;
 * far above any real colour profile or text block. */
#define PNG_CHUNK_MALLOC_MAX ((png_alloc_size_t)8000000)

/* Ancillary chunks gsmooth never uses, read as "unknown, never kept": libpng then skips
 * them without allocating. Read as known chunks, a text or profile chunk whose length
 * field claims up to 2 GB gets a zeroed buffer of that size before its data is read
 * (png_read_buffer), because libpng 1.6.39 reports an over-long chunk only as a benign
 * error: a 60-byte file then costs 2 GB of memory. tRNS is kept (it makes the "alpha
 * dropped" note); IHDR, PLTE, IDAT and IEND are critical and always read. */
static const png_byte ignored_chunks[] = {
    'b', 'K', 'G', 'D', '\0', 'c', 'H', 'R', 'M', '\0', 'e', 'X', 'I', 'f', '\0',
    'g', 'A', 'M', 'A', '\0', 'h', 'I', 'S', 'T', '\0', 'i', 'C', 'C', 'P', '\0',
    'i', 'T', 'X', 't', '\0', 'o', 'F', 'F', 's', '\0', 'p', 'C', 'A', 'L', '\0',
    'p', 'H', 'Y', 's', '\0', 's', 'B', 'I', 'T', '\0', 's', 'C', 'A', 'L', '\0',
    's', 'P', 'L', 'T', '\0', 's', 'R', 'G', 'B', '\0', 't', 'E', 'X', 't', '\0',
    't', 'I', 'M', 'E', '\0', 'z', 'T', 'X', 't', '\0',
};
#define PNG_CHUNK_NAME_BYTES 5 /* four letters and a NUL, as png_set_keep_unknown_chunks reads them */

/* Longest libpng message kept (its own messages are short). */
#define PNG_MESSAGE_SIZE 256

/* What libpng reported; passed as its error pointer and its memory pointer. */
typedef struct png_messages {
    char error[PNG_MESSAGE_SIZE];   /* the message of the png_error that ended the call */
    char warning[PNG_MESSAGE_SIZE]; /* the last warning */
    int out_of_memory;              /* an allocation failed: the error is GS_ERR_NOMEM */
} png_messages;

typedef struct decoder {
    png_structp png;      /* libpng's decoder */
    png_infop info;       /* libpng's header data */
    png_messages msgs;    /* where the handlers put libpng's messages */
    gs_source *src;       /* the reader's input, read by read_callback */
    int io_failed;        /* the input could not be read (not a PNG problem) */
    unsigned channels;    /* samples per pixel after libpng's transforms: 1 or 3 */
    unsigned bits;        /* bits per sample after libpng's transforms: 8 or 16 */
    size_t rowbytes;      /* bytes of one row after libpng's transforms */
    int interlaced;       /* Adam7: decoded whole on the first read */
    unsigned char *row;   /* one RGB row awaiting gray conversion; streaming colour only */
    unsigned char *image; /* the whole decoded image; interlaced only */
    png_bytep *row_ptrs;  /* row pointers into image while png_read_image runs */
} decoder;

/* ---- libpng's messages and memory, kept here: nothing reaches a terminal ---- */

/* libpng's error handler: keeps the message and longjmps to png_jmpbuf. */
static PNG_NORETURN void on_error(png_structp png, png_const_charp msg)
{
    png_messages *msgs = png_get_error_ptr(png);
    if (msgs) snprintf(msgs->error, sizeof msgs->error, "%s", msg ? msg : "unknown libpng error");
    png_longjmp(png, 1);
}

/* libpng's warning handler: keeps the last warning, for context in an error message. */
static void on_warning(png_structp png, png_const_charp msg)
{
    png_messages *msgs = png_get_error_ptr(png);
    if (msgs) snprintf(msgs->warning, sizeof msgs->warning, "%s", msg ? msg : "");
}

/* malloc for libpng that notes a failure, so it reads as out of memory, not bad data. */
static png_voidp on_malloc(png_structp png, png_alloc_size_t size)
{
    void *ptr = malloc(size);
    if (!ptr) {
        png_messages *msgs = png_get_mem_ptr(png);
        if (msgs) msgs->out_of_memory = 1;
    }
    return ptr;
}

static void on_free(png_structp png, png_voidp ptr)
{
    (void)png;
    free(ptr);
}

/* ---- reading ---- */

static void read_callback(png_structp png, png_bytep buf, size_t len)
{
    decoder *dec = png_get_io_ptr(png);
    if (gs_source_read(dec->src, buf, len) == len) return;
    if (dec->src->read_errno) {
        dec->io_failed = 1;
        png_error(png, strerror(dec->src->read_errno));
    }
    png_error(png, "unexpected end of file (truncated image)");
}

/* The status and message for a longjmp out of libpng. */
static gs_status jump_status(const decoder *dec, char *err, size_t err_size)
{
    if (dec->io_failed) return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", dec->msgs.error);
    if (dec->msgs.out_of_memory)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory decoding PNG: %s", dec->msgs.error);
    if (dec->msgs.warning[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: %s (after warning: %s)",
                       dec->msgs.error, dec->msgs.warning);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNG: %s", dec->msgs.error);
}


/* Read the header and set up libpng's transforms. Only `dec` (never reassigned) is used on
 * the longjmp path. */
static gs_status read_header(decoder *dec, gs_image_info *info, uint64_t max_pixels,
                             char *err, size_t err_size)
{
    png_structp png = dec->png;
    png_infop pinfo = dec->info;

    if (setjmp(png_jmpbuf(png))) return jump_status(dec, err, err_size);

    /* A dimension over max_pixels cannot fit with a height of 1, so this limit refuses
     * nothing the pixel count would allow, and stops libpng earlier. */
    png_uint_32 limit = max_pixels < GS_PNG_DIMENSION_MAX ? (png_uint_32)max_pixels : GS_PNG_DIMENSION_MAX;
    png_set_user_limits(png, limit, limit);
    png_set_chunk_malloc_max(png, PNG_CHUNK_MALLOC_MAX);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored_chunks,
                                (int)(sizeof ignored_chunks / PNG_CHUNK_NAME_BYTES));
    png_set_read_fn(png, dec, read_callback);
    png_read_info(png, pinfo);

    png_uint_32 width = png_get_image_width(png, pinfo);
    png_uint_32 height = png_get_image_height(png, pinfo);
    int color_type = png_get_color_type(png, pinfo);
    int bit_depth = png_get_bit_depth(png, pinfo);
    gs_status rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) return rc;

    info->was_color = (color_type & PNG_COLOR_MASK_COLOR) != 0; /* palette has the bit too */
    info->had_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 ||
                      png_get_valid(png, pinfo, PNG_INFO_tRNS) != 0;

    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png); /* tRNS becomes alpha here, stripped just below */
    else if (bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(png); /* scales to 0..255 by bit replication */
    png_set_strip_alpha(png);
#if GS_HOST_LITTLE_ENDIAN
    if (bit_depth == 16) png_set_swap(png); /* PNG stores big-endian; callers get native */
#endif
    dec->interlaced = png_set_interlace_handling(png) > 1;
    png_read_update_info(png, pinfo);

    dec->channels = png_get_channels(png, pinfo);
    dec->bits = png_get_bit_depth(png, pinfo);
    dec->rowbytes = png_get_rowbytes(png, pinfo);
    if ((dec->channels != 1 && dec->channels != 3) || (dec->bits != 8 && dec->bits != 16) ||
        dec->rowbytes != (size_t)width * dec->channels * (dec->bits / 8))
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "unexpected PNG layout after conversion (%u channels, %u bits)",
                       dec->channels, dec->bits);

    info->width = width;
    info->height = height;
    info->bits = dec->bits;
    info->format = "PNG";
    return GS_OK;
}

/* Interlaced rows arrive in seven passes, so the image is decoded whole on first use. */
static gs_status decode_whole(decoder *dec, uint32_t height, char *err, size_t err_size)
{
    size_t image_bytes, ptr_bytes;
    if (__builtin_mul_overflow(dec->rowbytes, height, &image_bytes) ||
        __builtin_mul_overflow(sizeof *dec->row_ptrs, height, &ptr_bytes))
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "interlaced image does not fit in memory");
    dec->image = malloc(image_bytes);
    dec->row_ptrs = malloc(ptr_bytes);
    if (!dec->image || !dec->row_ptrs)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for an interlaced %zu x %u image",
                       dec->rowbytes, height);
    for (uint32_t y = 0; y < height; y++) dec->row_ptrs[y] = dec->image + (size_t)y * dec->rowbytes;

    if (setjmp(png_jmpbuf(dec->png))) return jump_status(dec, err, err_size);
    png_read_image(dec->png, dec->row_ptrs);

    free(dec->row_ptrs);
    dec->row_ptrs = NULL;
    return GS_OK;
}

static gs_status stream_rows(decoder *dec, uint32_t width, unsigned char *dst, size_t stride,
                             uint32_t rows, char *err, size_t err_size)
{
    if (setjmp(png_jmpbuf(dec->png))) return jump_status(dec, err, err_size);
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *out = dst + (size_t)r * stride;
        if (dec->channels == 1) { /* gray: libpng writes the caller's row directly */
            png_read_row(dec->png, out, NULL);
        } else {
            png_read_row(dec->png, dec->row, NULL);
            gs_row_to_gray(out, dec->row, width, dec->channels, dec->bits);
        }
    }
    return GS_OK;
}

static gs_status read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    decoder *dec = reader->impl;
    if (!dec->interlaced) return stream_rows(dec, reader->info.width, dst, stride, rows, err, err_size);

    if (!dec->image) {
        gs_status rc = decode_whole(dec, reader->info.height, err, err_size);
        if (rc != GS_OK) return rc;
    }
    for (uint32_t r = 0; r < rows; r++)
        gs_row_to_gray(dst + (size_t)r * stride,
                       dec->image + (size_t)(reader->next_row + r) * dec->rowbytes,
                       reader->info.width, dec->channels, dec->bits);
    return GS_OK;
}

static void decoder_destroy(void *impl)
{
    decoder *dec = impl;
    if (!dec) return;
    if (dec->png) png_destroy_read_struct(&dec->png, dec->info ? &dec->info : NULL, NULL);
    free(dec->row_ptrs);
    free(dec->image);
    free(dec->row);
    free(dec);
}

static const gs_reader_ops decoder_ops = {
    .read_rows = read_rows,
    .destroy = decoder_destroy,
};

gs_status gs_read_png_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    decoder *dec = NULL;

    /* Refuse a huge header from its raw bytes, before libpng allocates anything for it. */
    if (reader->head_len >= GS_PNG_IHDR_DEPTH_AT /* through the height */ &&
        memcmp(reader->head + GS_PNG_IHDR_TYPE_AT, "IHDR", 4) == 0) {
        rc = gs_check_pixels(gs_load_be32(reader->head + GS_PNG_IHDR_WIDTH_AT),
                        gs_load_be32(reader->head + GS_PNG_IHDR_HEIGHT_AT), max_pixels, err, err_size);
        if (rc != GS_OK) goto cleanup;
    }

    dec = calloc(1, sizeof *dec);
    if (!dec) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    dec->src = &reader->src;
    dec->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &dec->msgs, on_error, on_warning,
                                       &dec->msgs, on_malloc, on_free);
    if (dec->png) dec->info = png_create_info_struct(dec->png);
    if (!dec->png || !dec->info) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG decoder%s%s",
                     dec->msgs.error[0] ? ": " : "", dec->msgs.error);
        goto cleanup;
    }

    rc = read_header(dec, &reader->info, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    if (!dec->interlaced && dec->channels != 1) {
        dec->row = malloc(dec->rowbytes);
        if (!dec->row) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", dec->rowbytes);
            goto cleanup;
        }
    }
    reader->ops = &decoder_ops;
    reader->impl = dec;
    dec = NULL;

cleanup:
    decoder_destroy(dec);
    return rc;
}
