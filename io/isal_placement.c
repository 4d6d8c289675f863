/* isal_placement.c: where an ISA-L deflate stream lies so its bytes do not depend on it. */
/* A span of 64 KiB windows for ISA-L deflate streams, and the window whose address keeps a
 * stream's bytes independent of it (isal_placement.h says why). */

#define _GNU_SOURCE
#include "isal_placement.h"

#include <isa-l.h>
#include <string.h>
#include <sys/mman.h>

/* CRC-32C (Castagnoli, reflected) of one little-endian 32-bit word from `crc`, with no
 * inversions: what x86's `crc32 r32, r32` computes, which ISA-L's compute_hash is. */
static uint32_t crc32c_word(uint32_t crc, uint32_t word)
{
    crc ^= word;
    for (int i = 0; i < 32; ++i) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    return crc;
}

unsigned gs_isal_hash_low_bits(uint32_t word) { return crc32c_word(0, word) & 3u; }

unsigned gs_isal_stray_low_bits(const void *stream)
{
    /* the register is shifted right by 16 and its low 32 bits hashed */
    return gs_isal_hash_low_bits((uint32_t)((uintptr_t)stream >> 16));
}

size_t gs_isal_home_bytes(void)
{
    return (GS_ISAL_WINDOWS - 1) * GS_ISAL_WINDOW_BYTES + sizeof(struct isal_zstream);
}

int gs_isal_home_map(gs_isal_home *home)
{
    const size_t size = gs_isal_home_bytes();
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        home->base = NULL, home->size = 0;
        return -1;
    }
    home->base = p, home->size = size;
    return 0;
}

void gs_isal_home_over(gs_isal_home *home, void *memory)
{
    home->base = memory, home->size = 0;
}

void gs_isal_home_unmap(gs_isal_home *home)
{
    if (home->base && home->size) munmap(home->base, home->size);
    home->base = NULL, home->size = 0;
}

struct isal_zstream *gs_isal_home_window(const gs_isal_home *home, unsigned k)
{
    return (struct isal_zstream *)(home->base + (size_t)k * GS_ISAL_WINDOW_BYTES);
}

/*
 * The windows' addresses shifted right by 16 are GS_ISAL_WINDOWS consecutive integers, so
 * they hold a run of 8 starting at a multiple of 8: a ^ i for i = 0..7. CRC-32C from 0 is
 * linear, so their hashes are hash(a) ^ hash(i), and hash(0..7) take all four values in their
 * two low bits (test_isal_placement checks it); so some window is free of the input's at most
 * three values.
 */
unsigned gs_isal_home_pick(const gs_isal_home *home, const unsigned char *in, size_t len)
{
    if (len < 6) return 0;
    unsigned taken = 0; /* bit v set: low bits v belong to one of positions 0, 1, 2 */
    for (int pos = 0; pos < 3; ++pos) {
        uint32_t word;
        memcpy(&word, in + pos, sizeof word);
        taken |= 1u << gs_isal_hash_low_bits(word);
    }
    for (unsigned k = 0; k < GS_ISAL_WINDOWS; ++k)
        if (!(taken >> gs_isal_stray_low_bits(gs_isal_home_window(home, k)) & 1u)) return k;
    return 0; /* unreachable: see above */
}
