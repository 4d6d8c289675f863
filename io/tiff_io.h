/* tiff_io.h: what the TIFF reader and writer share. */
/* libtiff's I/O procedures over gsmooth's inputs and output files, per-handle message
 * capture, and the size rules (spool cap, allocation cap, when to write BigTIFF). */

#ifndef GS_TIFF_IO_H
#define GS_TIFF_IO_H

#include <stdint.h>
#include <stdio.h>
#include <tiffio.h>

#include "io_internal.h"

/* libtiff's first error on one handle, one line, and its latest warning: a reader's
 * refusal names it when a call failed without an error (libtiff's fax codecs fail a strip
 * after only a warning). Warnings never reach the terminal; the ones that mean a decode
 * filled less than it reported set bad_data, with the warning as the error. */
typedef struct gs_tiff_messages {
    char error[GS_ERR_SIZE / 2];
    char warning[GS_ERR_SIZE / 4];
    int bad_data;
} gs_tiff_messages;

/* A TIFF input as libtiff reads it: a file (or spool) by pread, or bytes in memory. */
typedef struct gs_tiff_input {
    int fd;                   /* the file or spool; -1 for memory */
    int owns_fd;              /* the spool: closed with the input */
    int64_t base;             /* offset of the TIFF's first byte in fd */
    uint64_t size;            /* bytes of TIFF */
    const unsigned char *mem; /* the input in memory, or NULL */
    uint64_t pos;             /* libtiff's read position */
    int read_errno;           /* errno of a failed read, 0 if none */
} gs_tiff_input;

/* Bytes a TIFF may take, both spooled from a stream and in any one allocation while
 * reading (libtiff's or a tile buffer): 8 a pixel of max_pixels (16-bit RGBA,
 * uncompressed) plus 64 MiB for directories and worst-case codecs. */
uint64_t gs_tiff_bytes_limit(uint64_t max_pixels);

/* The input of `src` (positioned at its first byte): a regular file is read in place, a
 * stream is copied to an unlinked temporary file in $TMPDIR (or /tmp) first, refused past
 * `spool_limit` bytes. */
gs_status gs_tiff_input_open(gs_source *src, uint64_t spool_limit, gs_tiff_input *in,
                             char *err, size_t err_size);
void gs_tiff_input_close(gs_tiff_input *in);
/* Read up to n bytes at offset `at` of the TIFF without moving libtiff's read position
 * (the reader's own look at a directory); returns the bytes read, fewer at the end or on
 * a read error (then in->read_errno is set). */
size_t gs_tiff_input_pread(gs_tiff_input *in, uint64_t at, void *buf, size_t n);

/* libtiff handles with this file's procedures and message handlers; NULL on failure
 * (msgs->error says why, if libtiff said). */
TIFF *gs_tiff_open_read(gs_tiff_input *in, uint64_t alloc_limit, gs_tiff_messages *msgs);
/* A TIFF output: the writer's temporary file (seekable), and the errno of a failed write. */
typedef struct gs_tiff_output {
    FILE *fp;
    int write_errno;
    int discard; /* set before an abort: libtiff's flush in TIFFCleanup then writes nothing */
} gs_tiff_output;

/* Writing to out->fp, BigTIFF when `big`. */
TIFF *gs_tiff_open_write(gs_tiff_output *out, int big, gs_tiff_messages *msgs);

/* 1 when a width x height image of `bits`-bit samples, deflated in strips of
 * `rows_per_strip`, could pass classic TIFF's 4 GiB offsets: deflate's worst case
 * (stored blocks) grows data by under 0.1%; the header, directory and strip tables add
 * a few bytes a strip. */
int gs_tiff_needs_bigtiff(uint32_t width, uint32_t height, uint32_t bits, uint32_t rows_per_strip);

#endif /* GS_TIFF_IO_H */
