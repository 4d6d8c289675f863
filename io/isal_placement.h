/* isal_placement.h: where an ISA-L deflate stream must lie so its bytes do not depend on it. */
/* ISA-L 2.30's levels 1 and 2 hash the stream's address once. */

#ifndef GS_ISAL_PLACEMENT_H
#define GS_ISAL_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

struct isal_zstream;

/*
 * ISA-L 2.30's level 1 and 2 body (igzip_icf_body_h1_gr_bt.asm, `.write_first_byte`, every
 * x86 variant) hashes input position 2 of a stream without history from a register that
 * still holds the address of the `isal_zstream`: bits 16-47 of that address pick the hash
 * slot (the "stray slot") that position 2 is looked up in and written to. When the stray
 * slot is the hash of input position 0, 1 or 2, the matches found differ, and so do the
 * deflated bytes (same inflated data), which made gsmooth's PNG bytes differ between runs.
 * When the stray slot is any other slot, the output has been one and the same stream in
 * every test, and in a sweep of every stray slot: measured, not proved. Two ways remain for
 * the stray entry to be read: after a match the body jumps back with the hashes of positions
 * before the skip, and table entries are positions modulo 64 Ki with distances modulo 32 Ki,
 * so past 32 KiB an untouched entry and the stray one name positions other than 0 and 2.
 *
 * A home is a span of GS_ISAL_WINDOWS windows 64 KiB apart; a stream (82 KB with ISA-L 2.30)
 * starts at each, overlapping the next window, so one is used at a time. For each stream
 * without a dictionary, gs_isal_home_pick picks a window whose stray slot differs from the
 * hashes of positions 0, 1 and 2 in its two low bits (every hash mask ISA-L uses keeps them).
 * Streams primed with a dictionary do not take that path and may use any window.
 */
#define GS_ISAL_WINDOWS 16u
#define GS_ISAL_WINDOW_BYTES ((size_t)1 << 16)

typedef struct gs_isal_home {
    unsigned char *base; /* window k's stream starts at base + k * GS_ISAL_WINDOW_BYTES */
    size_t size;         /* bytes mapped at base (0: not owned, not unmapped) */
} gs_isal_home;

/* Bytes a home spans: the windows and one stream past the last window's start. */
size_t gs_isal_home_bytes(void);

/* Map a home of its own (untouched pages cost no memory); 0, or -1 out of memory. */
int gs_isal_home_map(gs_isal_home *home);

/* A home over caller-owned memory of gs_isal_home_bytes() bytes aligned to 64 bytes (tests
 * place homes at chosen addresses this way). */
void gs_isal_home_over(gs_isal_home *home, void *memory);

/* Unmap a home from gs_isal_home_map; a zeroed or borrowed home is a no-op. */
void gs_isal_home_unmap(gs_isal_home *home);

/* The stream (not initialised) in window k < GS_ISAL_WINDOWS. */
struct isal_zstream *gs_isal_home_window(const gs_isal_home *home, unsigned k);

/* The window for deflating `in` (len bytes) as a stream without a dictionary: the first
 * whose stray slot's two low bits differ from those of the hashes of positions 0, 1 and 2.
 * Inputs under 6 bytes, which ISA-L's body never sees, take window 0. */
unsigned gs_isal_home_pick(const gs_isal_home *home, const unsigned char *in, size_t len);

/* The two low bits of ISA-L's hash of a 32-bit word (CRC-32C from 0, the SSE4.2 `crc32`). */
unsigned gs_isal_hash_low_bits(uint32_t word);

/* The two low bits of the stray slot of a stream at `stream`. */
unsigned gs_isal_stray_low_bits(const void *stream);

#endif /* GS_ISAL_PLACEMENT_H */
