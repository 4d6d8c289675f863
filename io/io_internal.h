/* io_internal.h: private plumbing shared by the image readers and writers in io/. */
/* Never included outside io/. */

#ifndef GS_IO_INTERNAL_H
#define GS_IO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "image_io.h"

/* Bytes of the file's start kept for format detection; 24 covers the PNG signature plus
 * the IHDR chunk's length, type, width and height. */
#define GS_IO_HEAD_SIZE 32
/* Bytes detection needs at the least: the longest signature (the JPEG 2000 and JPEG XL boxes). */
#define GS_IO_HEAD_MIN 12

/* The host's byte order, decided at compile time: 16-bit samples are native-endian in
 * memory and big-endian (PNG, PGM) or little-endian (NPY) in files. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GS_HOST_LITTLE_ENDIAN 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define GS_HOST_LITTLE_ENDIAN 0
#else
#error "gsmooth needs __BYTE_ORDER__ to know the host's byte order"
#endif

/* Big-endian 32-bit fields (PNG's lengths, CRCs, IHDR sizes; zlib's Adler-32). */
static inline uint32_t gs_load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void gs_store_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* The PNG chunk CRC (ISO 3309, as zlib's crc32), continued from `crc` over n bytes, with
 * ISA-L's carry-less-multiply code: several times zlib's speed, and both PNG readers' and
 * the writer's IDAT chunks run it over every byte of the image data. */
uint32_t gs_png_crc(uint32_t crc, const unsigned char *p, size_t n);

/* Where a PNG's IHDR fields sit from the file's first byte (signature 8, chunk length 4,
 * type 4, then the chunk data), for both PNG readers' looks at the kept head. */
#define GS_PNG_IHDR_TYPE_AT 12
#define GS_PNG_IHDR_WIDTH_AT 16
#define GS_PNG_IHDR_HEIGHT_AT 20
#define GS_PNG_IHDR_DEPTH_AT 24
#define GS_PNG_IHDR_COLOR_AT 25
#define GS_PNG_IHDR_INTERLACE_AT 28
#define GS_PNG_IHDR_END_AT 29 /* one past the interlace byte */
_Static_assert(GS_PNG_IHDR_END_AT <= GS_IO_HEAD_SIZE, "the kept head must cover IHDR");

/* ---- colour to gray: the one implementation of the BT.601 luma (libjpeg's fixed point) ---- */

#define GS_LUMA_R 19595u  /* 0.299 * 2^16, rounded */
#define GS_LUMA_G 38470u  /* 0.587 * 2^16, rounded */
#define GS_LUMA_B 7471u   /* 0.114 * 2^16, rounded so the three sum to exactly 2^16 */
#define GS_LUMA_SHIFT 16
_Static_assert(GS_LUMA_R + GS_LUMA_G + GS_LUMA_B == 1u << GS_LUMA_SHIFT,
               "luma weights must sum to 1.0 so gray pixels (R = G = B) stay unchanged");

/* Y = (19595 R + 38470 G + 7471 B + 32768) >> 16. The inputs are 64-bit because a 16-bit
 * sample times 38470 overflows 32 bits; 8-bit samples go through the same code. */
static inline uint32_t gs_luma(uint64_t r, uint64_t g, uint64_t b)
{
    return (uint32_t)((GS_LUMA_R * r + GS_LUMA_G * g + GS_LUMA_B * b +
                       (UINT64_C(1) << (GS_LUMA_SHIFT - 1))) >> GS_LUMA_SHIFT);
}

/* CMYK to RGB, a channel at a time: the light that `ink` leaves under `black` (0 = no ink,
 * `max` = full: 255 or 65535), (max - ink) (max - black) / max rounded to nearest (max is
 * odd, so there are no ties): PIL's conversion, and read_jpeg.c's on Adobe-inverted samples. */
static inline uint32_t gs_cmyk_light(uint32_t ink, uint32_t black, uint32_t max)
{
    const uint64_t light = (uint64_t)(max - ink) * (max - black);
    return (uint32_t)((light + max / 2) / max);
}

/* Turn one row of `width` pixels of `channels` (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)
 * native-endian `bits`-bit (8 or 16) samples into gray: alpha is dropped, colour goes
 * through gs_luma. dst and src must not overlap. Defined in samples.c. */
void gs_row_to_gray(void *dst, const void *src, uint32_t width, unsigned channels,
                    unsigned bits);

/* ---- where a reader's bytes come from ---- */

/* stdio buffer of an output file: stdio's own is one file-system block (4 KiB), one system
 * call each; 1 MiB makes a large image's writes few. (Inputs: source.c's own buffer.) */
#define GS_FILE_BUFFER_BYTES ((size_t)1 << 20)

/* Give a just-opened FILE a GS_FILE_BUFFER_BYTES buffer, kept in *owned for the caller to free
 * after fclose; without the memory, stdio's own buffer stays. */
static inline void gs_file_buffer(FILE *fp, char **owned)
{
    *owned = malloc(GS_FILE_BUFFER_BYTES);
    if (*owned && setvbuf(fp, *owned, _IOFBF, GS_FILE_BUFFER_BYTES) != 0) {
        free(*owned);
        *owned = NULL;
    }
}

typedef struct gs_source {
    int file;               /* a regular file: read through `in`, seekable; -1 otherwise */
    int fd;                 /* a stream (pipe, FIFO, device): read front to back; -1 otherwise */
    unsigned char *in;      /* the file's or stream's read buffer */
    size_t in_pos, in_len;  /* its unread bytes: in[in_pos..in_len) */
    int at_eof;             /* the file or stream ended */
    unsigned char *replay;  /* the stream's first bytes, kept so rewinding can give them again */
    size_t replay_len;      /* bytes kept */
    size_t replay_pos;      /* next kept byte to give; replay_len when reading new bytes */
    int replay_full;        /* bytes past the kept ones were read: rewinding is refused */
    unsigned char *data;    /* the whole input in memory (gs_source_from_memory); borrowed */
    size_t size;            /* bytes in data */
    size_t pos;             /* read position in data */
    int read_errno;         /* errno of a failed read, 0 if none */
} gs_source;

/* The functions below are defined in source.c. */

/* Open `path` for reading: a regular file (also as standard input) is buffered and
 * seekable; "-", pipes, FIFOs and devices are streams, read front to back in bounded
 * memory. */
gs_status gs_source_open(const char *path, gs_source *src, char *err, size_t err_size);

/* A source over `size` bytes at `data` (borrowed: the caller frees it after closing). */
void gs_source_from_memory(gs_source *src, unsigned char *data, size_t size);

/* Read n bytes; fewer means the input ended, or failed when read_errno is set. May wait
 * for a stream's writer until all n bytes came. */
size_t gs_source_read(gs_source *src, void *buf, size_t n);

/* Read at least one byte and at most n, without waiting for more than a stream has
 * ready; 0 means the input ended (or failed, read_errno). */
size_t gs_source_read_some(gs_source *src, void *buf, size_t n);

/* The input's first bytes for detection: `need` of them (fewer only at the end), and up
 * to n if a stream has them ready, never waiting for more: a stream whose writer stalls
 * after a short header is still judged on that header. */
size_t gs_source_read_head(gs_source *src, void *buf, size_t n, size_t need);

/* Offset of the next byte from the start of a regular file or memory; -1 for a stream. */
int64_t gs_source_tell(gs_source *src);

/* Skip n bytes forward; returns how many there were (fewer at the input's end). */
size_t gs_source_skip(gs_source *src, size_t n);

/* 1 when no byte is left (a stream may wait for its writer to say). */
int gs_source_at_end(gs_source *src);

/* Back to the first byte. A stream goes back only while it has read no more than the
 * bytes it keeps (64 KiB); after that GS_ERR_FORMAT. */
gs_status gs_source_rewind(gs_source *src, char *err, size_t err_size);

/* Close and free; the struct is zeroed. */
void gs_source_close(gs_source *src);

/* Copy the rest of a stream into an unlinked temporary file in $TMPDIR (or /tmp), for a
 * library that must seek (libtiff, cfitsio): on success *fd (the caller's to close) holds
 * *size bytes; past `limit` bytes GS_ERR_TOO_LARGE (callers set it to 8 bytes a pixel of
 * the pixel limit plus 64 MiB); on failure *fd is -1. `format` names the input in the
 * messages. Defined in spool.c. */
gs_status gs_spool_stream(gs_source *src, uint64_t limit, const char *format, int *fd,
                          uint64_t *size, char *err, size_t err_size);

/* ---- readers ---- */

/* The PNG specification's limit on width and height (2^31 - 1), for the reader and writer. */
#define GS_PNG_DIMENSION_MAX 0x7FFFFFFFu

/* The list a user sees when the input is not an image gsmooth reads. */
#define GS_SUPPORTED_INPUTS "PNG, JPEG, TIFF, FITS, WebP, BMP, TGA, PBM/PGM/PPM, GIF, PSD, HDR, NPY"

/* GS_ERR_TOO_LARGE (with the numbers and the limit) when width * height > max_pixels.
 * Every reader calls it before allocating pixel memory. Defined in samples.c. */
gs_status gs_check_pixels(uint32_t width, uint32_t height, uint64_t max_pixels, char *err,
                          size_t err_size);

typedef struct gs_reader_ops {
    /* Deliver `rows` more rows (the generic layer has checked the count and the stride). */
    gs_status (*read_rows)(gs_reader *reader, unsigned char *dst, size_t stride,
                           uint32_t rows, char *err, size_t err_size);
    void (*destroy)(void *impl); /* frees the format's state; never does I/O on the source */
} gs_reader_ops;

struct gs_reader {
    const gs_reader_ops *ops;           /* the format's functions */
    void *impl;                         /* the format's state, owned, freed by ops->destroy */
    gs_source src;                      /* the input, owned */
    unsigned char head[GS_IO_HEAD_SIZE]; /* the input's first bytes, for detection */
    size_t head_len;                    /* valid bytes in head (shorter inputs) */
    gs_image_info info;                 /* what the opener found */
    uint32_t next_row;                  /* rows delivered so far */
    int failed;                         /* a read failed: the decoder's state is unusable */
    uint64_t max_pixels;                /* the pixel limit it was opened with */
    int png_fallback;                   /* the fast PNG reader reads a source that can rewind:
                                           if it refuses the data, libpng reads it again */
    char note[GS_ERR_SIZE];             /* which decoder gave the answer, when that is news */
    char *fits_cards;                   /* a FITS input's WCS cards (80 characters each), owned */
    size_t fits_card_count;             /* cards held */
};

/* Format openers: called with reader->src positioned at the start of the input and
 * reader->head filled. On success they set reader->ops, reader->impl and reader->info;
 * on failure they free what they allocated and leave reader->impl NULL. */
gs_status gs_read_png_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);
gs_status gs_read_jpeg_open(gs_reader *reader, uint64_t max_pixels, char *err,
                            size_t err_size);
/* The fast PNG reader (ISA-L inflate) and the PNGs it takes, judged from the head (IHDR's
 * depth, colour type and interlace): the rest go to gs_read_png_open (libpng). libpng
 * stays the reference: where the fast reader refuses a source that can rewind (a regular
 * file), reader.c has libpng read it again, and a stream keeps the first verdict.
 * GSMOOTH_PNG_DECODER=libpng sends every PNG to libpng; =fast keeps the fast reader's own
 * verdict (no second reading), for the tests that compare the two. */
int gs_png_isal_takes(const unsigned char *head, size_t head_len);
gs_status gs_read_png_isal_open(gs_reader *reader, uint64_t max_pixels, char *err,
                                size_t err_size);
/* `format` is the name detected from the magic bytes (PSD, HDR, PIC), or NULL to let
 * stb_image tell which of them it is (the fuzz harness). */
gs_status gs_read_stb_open(gs_reader *reader, uint64_t max_pixels, const char *format,
                           char *err, size_t err_size);
gs_status gs_read_bmp_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);
/* TGA has no signature: reader.c calls this last, and a head that is no TGA header gets
 * the "not an image in a supported format" error. */
gs_status gs_read_tga_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);
gs_status gs_read_pnm_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);
gs_status gs_read_tiff_open(gs_reader *reader, uint64_t max_pixels, char *err,
                            size_t err_size);
/* Still WebP images; an animation is refused. */
gs_status gs_read_webp_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size);
gs_status gs_read_gif_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);
/* cfitsio's process-wide set-up, once, before any FITS file is opened or created by any
 * thread (fits_setup.c): cfitsio's status, 0 when it is ready. */
int gs_fits_setup(void);

/* The first 2-D image of a FITS file (the primary HDU, else the first image extension
 * that holds one), through cfitsio; read_fits.c. */
gs_status gs_read_fits_open(gs_reader *reader, uint64_t max_pixels, char *err,
                            size_t err_size);
/* NumPy .npy (format 1.0, 2.0, 3.0): 2-D uint8, uint16 and float32 arrays, float64 rounded
 * to float32 with a note; read_npy.c. */
gs_status gs_read_npy_open(gs_reader *reader, uint64_t max_pixels, char *err,
                           size_t err_size);

/* Netpbm's whitespace (the header's separators), for the detector and the reader. */
static inline int gs_pnm_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- writers ---- */

/* The atomic output file (out_file.c): a temporary file beside the target, renamed onto
 * it only by gs_out_file_commit; "-" is standard output, written directly. */
typedef struct gs_out_file {
    FILE *fp;       /* the temporary file, or stdout */
    char *fp_buffer; /* fp's buffer (GS_FILE_BUFFER_BYTES), or NULL for stdio's own */
    char *path;     /* final path (a symlink's target); NULL for stdout */
    char *tmp_path; /* temporary file, unlinked unless renamed; NULL for stdout */
    int tmp_slot;   /* tmp_path's slot in the signal cleanup table + 1 (temp_files.h); 0: none */
    uint64_t put_bytes;      /* bytes given to gs_out_file_put */
    uint64_t writeback_at;   /* put_bytes at which to start the kernel's write-out again */
    uint64_t writeback_from; /* file offset up to which write-out was started */
    uint64_t durable_from;   /* put_bytes when the last background fdatasync was asked for */
    struct gs_background_sync *durable; /* that fdatasync's thread (background_sync.h), or NULL */
} gs_out_file;

/* Check the target (not a directory, device or FIFO) and create the temporary file. */
gs_status gs_out_file_open(gs_out_file *f, const char *path, char *err, size_t err_size);
/* Write n bytes; a short write is GS_ERR_IO with strerror. */
gs_status gs_out_file_put(gs_out_file *f, const void *buf, size_t n, char *err, size_t err_size);
/* Flush; for a file also fsync, close, rename into place and sync the directory. */
gs_status gs_out_file_commit(gs_out_file *f, char *err, size_t err_size);
/* Close, and unlink the temporary file unless it was renamed; frees the paths. */
void gs_out_file_discard(gs_out_file *f);

typedef struct gs_writer_ops {
    /* Append `rows` rows (the generic layer has checked the count and the stride). */
    gs_status (*write_rows)(gs_writer *writer, const unsigned char *src, size_t stride,
                            uint32_t rows, char *err, size_t err_size);
    /* Write whatever follows the last row (trailer, or the whole encoded image for the
     * formats that need every row first); the generic layer then flushes and renames. */
    gs_status (*finish)(gs_writer *writer, char *err, size_t err_size);
    void (*destroy)(void *impl); /* frees the format's state; never writes */
} gs_writer_ops;

struct gs_writer {
    const gs_writer_ops *ops; /* the format's functions */
    void *impl;               /* the format's state, owned, freed by ops->destroy */
    gs_out_file out;          /* where the bytes go */
    gs_out_format format;     /* what is written */
    uint32_t width;           /* samples per row */
    uint32_t height;          /* rows */
    uint32_t bits;            /* bits per sample in the caller's rows */
    gs_sample_kind kind;      /* unsigned integers or IEEE floats */
    uint32_t rows_written;    /* rows accepted so far */
    char *cards;              /* FITS header cards to copy (80 characters each), owned */
    size_t card_count;        /* cards held */
    gs_encode_settings encode; /* PNG and TIFF: level and deflate threads */
    int failed;               /* a write failed: only abort (or a failing commit) remains */
};

/* Format openers: write the header of streaming formats; validate bits and size limits.
 * On failure they free what they allocated and leave writer->impl NULL. */
gs_status gs_write_png_open(gs_writer *writer, char *err, size_t err_size);
gs_status gs_write_stb_open(gs_writer *writer, char *err, size_t err_size); /* BMP TGA JPG */
gs_status gs_write_pgm_open(gs_writer *writer, char *err, size_t err_size);
gs_status gs_write_npy_open(gs_writer *writer, char *err, size_t err_size);
gs_status gs_write_tiff_open(gs_writer *writer, char *err, size_t err_size); /* write_tiff.c */
gs_status gs_write_fits_open(gs_writer *writer, char *err, size_t err_size); /* write_fits.c */

/* Shared by PGM and NPY: write `header`, then stream rows with each sample in the file's
 * byte order (big-endian or little-endian); writer->bits must be 8, 16, 32 or 64. */
gs_status gs_write_raster_open(gs_writer *writer, const void *header, size_t header_len,
                               int big_endian, char *err, size_t err_size);

#endif /* GS_IO_INTERNAL_H */
