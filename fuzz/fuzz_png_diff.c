/* fuzz_png_diff.c: libFuzzer entry point that decodes each input with both PNG readers (libpng, the reference, and the fast ISA-L path) and aborts where they differ: one accepts what the other refuses, or both accept with other headers or pixels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

/* --max-pixels of every run, as in fuzz_pipeline.c. */
#define GS_FUZZ_MAX_PIXELS (UINT64_C(1) << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct outcome {
    gs_status rc;          /* how the decode ended */
    char err[GS_ERR_SIZE]; /* why, when it failed */
    gs_image_info info;    /* the header, when opened */
    unsigned char *pixels; /* every row, when it succeeded */
    size_t bytes;
} outcome;

static void decode(const uint8_t *data, size_t size, int fast, outcome *o)
{
    memset(o, 0, sizeof *o);
    unsigned char *copy = malloc(size ? size : 1);
    gs_reader *reader = calloc(1, sizeof *reader);
    if (!copy || !reader) abort();
    if (size) memcpy(copy, data, size);
    gs_source_from_memory(&reader->src, copy, size);
    reader->head_len = size < sizeof reader->head ? size : sizeof reader->head;
    memcpy(reader->head, data, reader->head_len);
    o->rc = fast ? gs_read_png_fast_open(reader, GS_FUZZ_MAX_PIXELS, o->err, sizeof o->err)
                 : gs_read_png_open(reader, GS_FUZZ_MAX_PIXELS, o->err, sizeof o->err);
    if (o->rc == GS_OK) {
        o->info = reader->info;
        size_t stride = (size_t)o->info.width * (o->info.bits / 8);
        o->bytes = stride * o->info.height;
        o->pixels = malloc(o->bytes ? o->bytes : 1);
        if (!o->pixels) abort();
        o->rc = gs_reader_read_rows(reader, o->pixels, stride, o->info.height, o->err, sizeof o->err);
    }
    gs_reader_close(reader);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    /* Only what reader.c would send to the fast path. */
    if (size < sizeof png_sig || memcmp(data, png_sig, sizeof png_sig) != 0 ||
        !gs_png_fast_takes(data, size < GS_IO_HEAD_SIZE ? size : GS_IO_HEAD_SIZE))
        return 0;
    outcome ref, fast;
    decode(data, size, 0, &ref);
    decode(data, size, 1, &fast);
    if ((ref.rc == GS_OK) != (fast.rc == GS_OK)) {
        fprintf(stderr, "fuzz_png_diff: libpng %s, the fast path %s\n", ref.rc == GS_OK ? "accepts" : ref.err,
                fast.rc == GS_OK ? "accepts" : fast.err);
        abort();
    }
    if (ref.rc == GS_OK &&
        (ref.info.width != fast.info.width || ref.info.height != fast.info.height ||
         ref.info.bits != fast.info.bits || ref.bytes != fast.bytes ||
         memcmp(ref.pixels, fast.pixels, ref.bytes) != 0)) {
        fprintf(stderr, "fuzz_png_diff: both accept, the pixels differ\n");
        abort();
    }
    free(ref.pixels);
    free(fast.pixels);
    return 0;
}
