/* fuzz_deflate_roundtrip.c: libFuzzer entry point: the writer's level-1 deflate inflates back with zlib. */
/* The input's first byte picks whether the piece ends the stream and where it is cut in
 * two pieces; the rest is the bytes to deflate. Any difference, a stream zlib refuses or an
 * output past the bound aborts. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deflate_fast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const int last = data[0] & 1;
    const size_t len = size - 1;
    const size_t cut = len * (data[0] >> 1) / 127; /* the first piece's bytes */
    const unsigned char *in = data + 1;
    const size_t bound = gs_deflate_fast_bound(cut) + gs_deflate_fast_bound(len - cut);
    unsigned char *out = malloc(bound), *back = malloc(len + 1);
    if (!out || !back) abort();
    const size_t first = gs_deflate_fast(in, cut, 0, out);
    if (first > gs_deflate_fast_bound(cut)) abort();
    const size_t n = first + gs_deflate_fast(in + cut, len - cut, last, out + first);
    if (n > bound) abort();
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) abort();
    z.next_in = out, z.avail_in = (uInt)n;
    z.next_out = back, z.avail_out = (uInt)len + 1;
    const int r = inflate(&z, Z_SYNC_FLUSH);
    if (r != (last ? Z_STREAM_END : Z_OK) && !(r == Z_BUF_ERROR && !last && n == 0)) {
        fprintf(stderr, "inflate returned %d (%s)\n", r, z.msg ? z.msg : "");
        abort();
    }
    if (z.total_out != len || z.avail_in != 0 || memcmp(back, in, len) != 0) abort();
    inflateEnd(&z);
    free(out);
    free(back);
    return 0;
}
