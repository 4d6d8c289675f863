/* png_diff_check.c: one in-memory PNG decoded by both PNG readers, outcomes compared. */
/* libpng and the fast reader are called as reader.c calls them; the result says whether the
 * verdicts, headers and pixels agree. */

#include "png_diff_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

/* Rows asked for per read: a count no batch size divides, so reads and batches drift. */
#define ROWS_PER_READ 7

typedef struct outcome {
    gs_status rc;          /* how the decode ended */
    char err[GS_ERR_SIZE]; /* why, when it failed */
    gs_image_info info;    /* the header, when opened */
    unsigned char *pixels; /* every row, when it succeeded */
    size_t bytes;          /* bytes in pixels */
} outcome;

/* Out of memory in a test harness: nothing to compare, and no way to go on. */
static void *must_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "png_diff_check: out of memory for %zu bytes\n", n);
        abort();
    }
    return p;
}

/* One reader over a private copy of the input (a reader must not rely on bytes past its
 * end), with the head kept as reader.c keeps it; no fallback between the two. */
static void decode(const uint8_t *data, size_t size, uint64_t max_pixels, int fast, outcome *o)
{
    memset(o, 0, sizeof *o);
    unsigned char *copy = must_alloc(size);
    gs_reader *reader = calloc(1, sizeof *reader);
    if (!reader) abort();
    if (size) memcpy(copy, data, size);
    gs_source_from_memory(&reader->src, copy, size);
    reader->head_len = size < sizeof reader->head ? size : sizeof reader->head;
    memcpy(reader->head, data, reader->head_len);
    o->rc = fast ? gs_read_png_isal_open(reader, max_pixels, o->err, sizeof o->err)
                 : gs_read_png_open(reader, max_pixels, o->err, sizeof o->err);
    if (o->rc == GS_OK) {
        o->info = reader->info;
        const size_t stride = (size_t)o->info.width * (o->info.bits / 8);
        o->bytes = stride * o->info.height;
        o->pixels = must_alloc(o->bytes);
        for (uint32_t y = 0; y < o->info.height && o->rc == GS_OK; y += ROWS_PER_READ) {
            uint32_t n = o->info.height - y < ROWS_PER_READ ? o->info.height - y : ROWS_PER_READ;
            o->rc = gs_reader_read_rows(reader, o->pixels + (size_t)y * stride, stride, n, o->err,
                                        sizeof o->err);
        }
    }
    gs_reader_close(reader);
    free(copy);
}

/* The first pixel byte where a and b differ (they hold `bytes` each and do differ). */
static size_t first_difference(const unsigned char *a, const unsigned char *b, size_t bytes)
{
    size_t i = 0;
    while (i < bytes && a[i] == b[i]) i++;
    return i;
}

gs_png_diff_verdict gs_png_diff_compare(const uint8_t *data, size_t size, uint64_t max_pixels,
                                        char *why, size_t why_size)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    char none[1];
    if (!why || why_size == 0) why = none, why_size = sizeof none;
    why[0] = '\0';
    if (size < sizeof png_sig || memcmp(data, png_sig, sizeof png_sig) != 0 ||
        !gs_png_isal_takes(data, size < GS_IO_HEAD_SIZE ? size : GS_IO_HEAD_SIZE))
        return GS_PNG_DIFF_NOT_FAST;

    outcome ref, fast;
    decode(data, size, max_pixels, 0, &ref);
    decode(data, size, max_pixels, 1, &fast);
    gs_png_diff_verdict verdict = GS_PNG_DIFF_BOTH_ACCEPT;
    if ((ref.rc == GS_OK) != (fast.rc == GS_OK)) {
        snprintf(why, why_size, "libpng %s, the fast reader %s", ref.rc == GS_OK ? "accepts" : ref.err,
                 fast.rc == GS_OK ? "accepts" : fast.err);
        verdict = GS_PNG_DIFF_DIFFERENT;
    } else if (ref.rc != GS_OK) {
        snprintf(why, why_size, "%s", ref.err);
        verdict = GS_PNG_DIFF_BOTH_REFUSE;
    } else if (ref.info.width != fast.info.width || ref.info.height != fast.info.height ||
               ref.info.bits != fast.info.bits || ref.info.was_color != fast.info.was_color ||
               ref.info.had_alpha != fast.info.had_alpha) {
        snprintf(why, why_size,
                 "headers differ: libpng %ux%u %u-bit colour %d alpha %d, the fast reader %ux%u "
                 "%u-bit colour %d alpha %d",
                 ref.info.width, ref.info.height, ref.info.bits, ref.info.was_color,
                 ref.info.had_alpha, fast.info.width, fast.info.height, fast.info.bits,
                 fast.info.was_color, fast.info.had_alpha);
        verdict = GS_PNG_DIFF_DIFFERENT;
    } else if (memcmp(ref.pixels, fast.pixels, ref.bytes) != 0) {
        const size_t at = first_difference(ref.pixels, fast.pixels, ref.bytes);
        const size_t row_bytes = (size_t)ref.info.width * (ref.info.bits / 8);
        snprintf(why, why_size, "pixels differ from row %zu, byte %zu: libpng %u, the fast reader %u",
                 at / row_bytes, at % row_bytes, ref.pixels[at], fast.pixels[at]);
        verdict = GS_PNG_DIFF_DIFFERENT;
    }
    free(ref.pixels);
    free(fast.pixels);
    return verdict;
}
