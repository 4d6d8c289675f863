/* deflate_huffman_only.h: raw deflate of literals alone, Huffman-coded with ISA-L's tables. */

#ifndef GS_DEFLATE_HUFFMAN_ONLY_H
#define GS_DEFLATE_HUFFMAN_ONLY_H

#include <stddef.h>

/*
 * The writer's fastest deflate level: no match search, each byte a literal of one dynamic
 * Huffman block whose code ISA-L builds (isal_create_hufftables_subset) from the byte counts
 * of a sample of the input. On the Sub-filtered rows of smoothed photos, matches are rare
 * and this coded twice as fast as ISA-L's level 1 for about a tenth more bytes
 * (docs/performance.md). Where the coded bytes would not come out smaller than the input,
 * the input is stored instead.
 *
 * The output is a run of raw deflate blocks (RFC 1951) ending on a byte boundary: the coded
 * block and an empty stored block that is final when `last` is set and otherwise is the
 * sync-flush marker, so that such pieces concatenate into one stream.
 */

/* The out bytes gs_deflate_huffman_only may need for `len` input bytes. */
size_t gs_deflate_huffman_only_bound(size_t len);

/* Deflate `len` bytes of `in` into `out` (gs_deflate_huffman_only_bound(len) bytes);
 * returns the bytes written. The same input gives the same bytes. */
size_t gs_deflate_huffman_only(const unsigned char *in, size_t len, int last, unsigned char *out);

#endif /* GS_DEFLATE_HUFFMAN_ONLY_H */
