/* deflate_fast.h: raw deflate of literals and runs of one byte, Huffman-coded with ISA-L's tables. */

#ifndef GS_DEFLATE_FAST_H
#define GS_DEFLATE_FAST_H

#include <stddef.h>

/*
 * The writer's fastest deflate level: no match search. One dynamic Huffman block, its code
 * built by ISA-L (isal_create_hufftables_subset) from the byte counts of a sample of the
 * input; each 8 bytes that all repeat the byte before them start a run, coded as matches at
 * distance 1 to the run's end, and other bytes are literals. On the Sub-filtered rows of
 * smoothed photos longer matches are rare: this coded twice as fast as ISA-L's level 2 for
 * about a tenth more bytes (docs/performance.md); flat areas cost a few bits a run, but
 * content that repeats further back (tiles, text) is not found. Where the coded bytes
 * would not come out smaller than the input, the input is stored instead.
 *
 * The output is a run of raw deflate blocks (RFC 1951) ending on a byte boundary: the coded
 * block and an empty stored block that is final when `last` is set and otherwise is the
 * sync-flush marker, so that such pieces concatenate into one stream.
 */

/* The out bytes gs_deflate_fast may need for `len` input bytes. */
size_t gs_deflate_fast_bound(size_t len);

/* Deflate `len` bytes of `in` into `out` (gs_deflate_fast_bound(len) bytes);
 * returns the bytes written. The same input gives the same bytes. */
size_t gs_deflate_fast(const unsigned char *in, size_t len, int last, unsigned char *out);

/* `len` bytes of `in` as stored blocks (RFC 1951: 5 bytes of framing each 65535 bytes or
 * fewer), the last one final when `last`; returns the bytes written. They end on a byte
 * boundary, so the next piece follows without a marker. */
size_t gs_deflate_stored(const unsigned char *in, size_t len, int last, unsigned char *out);

#endif /* GS_DEFLATE_FAST_H */
