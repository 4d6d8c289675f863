/* isal_piece.h: an ISA-L deflate stream set up for one piece, its bytes independent of where the stream lies. */

#ifndef GS_ISAL_PIECE_H
#define GS_ISAL_PIECE_H

#include <stddef.h>

struct isal_zstream;

/*
 * ISA-L 2.30's levels 1 and 2 (igzip_icf_body, `.write_first_byte`, every x86 variant) hash
 * input position 2 of a stream with no history from a register that does not hold the
 * input (it holds bits of the stream's address), so the matches found, and the deflated
 * bytes, depended on where the `isal_zstream` lay in memory: the same image gave other PNG
 * bytes from run to run (the inflated data were the same). That path is taken only by a
 * stream with no history. So no stream here starts without one: a piece primed with a
 * dictionary (the previous piece's tail) never takes it, and the first piece of a stream
 * sends its first byte as a stored block of its own and primes ISA-L with that byte.
 * The lead block takes GS_ISAL_LEAD_BYTES where ISA-L would have coded the byte as a
 * literal of about one: about 5 bytes more a stream.
 */
#define GS_ISAL_LEAD_BYTES 6u /* the stored block of one byte: header byte, LEN, NLEN, the byte */

/*
 * Set up `z` (anywhere in memory) to deflate `len` bytes of `in` as one piece at ISA-L
 * `level` with `level_buf` (level_buf_size bytes): primed with `dict` (dict_len bytes, 0 for
 * a stream's first piece), ending with a sync flush, or with the stream's end when `last`.
 * For a first piece of at least one byte, the stored block of its first byte is written to
 * `lead` (GS_ISAL_LEAD_BYTES of room) and the stream goes on from the second byte. The
 * caller then runs isal_deflate on `z`, its output after the lead, until the input is in.
 * Returns the bytes written to `lead` (0 or GS_ISAL_LEAD_BYTES), or -1 when ISA-L refuses the
 * dictionary.
 */
int gs_isal_piece_start(struct isal_zstream *z, int level, unsigned char *level_buf, size_t level_buf_size,
                        const unsigned char *dict, size_t dict_len, const unsigned char *in, size_t len,
                        int last, unsigned char *lead);

#endif /* GS_ISAL_PIECE_H */
