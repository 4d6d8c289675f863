/* deflate_fast.c: raw deflate of literals and runs of one byte, Huffman-coded with ISA-L's tables. */

#include "deflate_fast.h"

#include <isa-l.h>
#include <stdint.h>
#include <string.h>

/* Every SAMPLE_STRIDE-th input byte is counted for the code: on smoothed photos the code
 * comes out as good as from every byte (docs/performance.md), for a third of the counting.
 * Odd, so that both bytes of 16-bit samples are counted. Every byte value is counted once
 * more, so that values the sample missed still have a code; content that repeats with the
 * stride's period can code badly, and is then stored. */
#define SAMPLE_STRIDE 3u
/* Input bytes coded between checks that the output has room: at most 15 bits each. */
#define STEP_BYTES 4096u
#define MAX_CODE_BITS 15u
#define STEP_OUT_BYTES (STEP_BYTES * MAX_CODE_BITS / 8u)
/* A stored block's payload limit (RFC 1951: LEN is 16 bits) and its framing: the 3 header
 * bits padded to a byte, LEN and NLEN. */
#define STORED_MAX 65535u
#define STORED_FRAME 5u
/* The end-of-block symbol; a match's shortest and longest lengths (RFC 1951). */
#define END_OF_BLOCK 256
#define MIN_MATCH 3u
#define MAX_MATCH 258u

/* An 8-byte store of the bit buffer: bits go out least significant first (RFC 1951), so on
 * a little-endian machine the buffer's bytes are the stream's bytes. */
static inline void store_bits(unsigned char *p, uint64_t bits)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &bits, sizeof bits);
#else
    for (unsigned i = 0; i < 8; i++) p[i] = (unsigned char)(bits >> (8 * i));
#endif
}

/* 8 input bytes as one word (any alignment, any byte order: compared for equality only). */
static inline uint64_t load_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Deflate output under way: bits not yet whole bytes are kept in `bits` (count < 8 between
 * calls of flush_bytes); each flush writes 8 bytes at `p`, so the output keeps 8 bytes of
 * room past its end. */
typedef struct bit_writer {
    unsigned char *p;
    uint64_t bits;
    unsigned count;
} bit_writer;

static inline void put_bits(bit_writer *w, uint64_t value, unsigned count)
{
    w->bits |= value << w->count;
    w->count += count;
}

static inline void flush_bytes(bit_writer *w)
{
    store_bits(w->p, w->bits);
    w->p += w->count >> 3;
    w->bits >>= w->count & ~7u; /* count < 64: four codes a flush only while they fit */
    w->count &= 7u;
}

/* An empty stored block (final or the sync-flush marker), ending on a byte boundary. */
static void empty_stored_block(bit_writer *w, int last)
{
    put_bits(w, last ? 1u : 0u, 3); /* BFINAL, BTYPE 00 */
    flush_bytes(w);
    if (w->count) w->count = 8, flush_bytes(w);
    static const unsigned char len_nlen[4] = {0x00, 0x00, 0xff, 0xff};
    memcpy(w->p, len_nlen, sizeof len_nlen);
    w->p += sizeof len_nlen;
}

size_t gs_deflate_stored(const unsigned char *in, size_t len, int last, unsigned char *out)
{
    unsigned char *p = out;
    do {
        const size_t n = len < STORED_MAX ? len : STORED_MAX;
        const int final = last && n == len;
        p[0] = (unsigned char)(final ? 1 : 0);
        p[1] = (unsigned char)(n & 0xff), p[2] = (unsigned char)(n >> 8);
        p[3] = (unsigned char)(~n & 0xff), p[4] = (unsigned char)((~n >> 8) & 0xff);
        memcpy(p + STORED_FRAME, in, n);
        p += STORED_FRAME + n, in += n, len -= n;
    } while (len > 0);
    return (size_t)(p - out);
}

static size_t stored_size(size_t len)
{
    return len + STORED_FRAME * (len / STORED_MAX + 1);
}

size_t gs_deflate_fast_bound(size_t len)
{
    /* the coded attempt stops short of the stored size plus one step's worst case */
    return stored_size(len) + ISAL_DEF_MAX_HDR_SIZE + STEP_OUT_BYTES + 2 * STORED_FRAME + 16;
}

/* Byte counts of the sample, each value once more (above), as ISA-L's histogram. */
static void sample_counts(const unsigned char *in, size_t len, struct isal_huff_histogram *h)
{
    uint32_t lanes[4][256];
    memset(lanes, 0, sizeof lanes);
    const size_t S = SAMPLE_STRIDE;
    size_t i = 0;
    for (; i + 4 * S <= len; i += 4 * S) /* four tables: no count waits on the one before */
        lanes[0][in[i]]++, lanes[1][in[i + S]]++, lanes[2][in[i + 2 * S]]++, lanes[3][in[i + 3 * S]]++;
    for (; i < len; i += S) lanes[0][in[i]]++;
    memset(h, 0, sizeof *h);
    for (int s = 0; s < 256; s++)
        h->lit_len_histogram[s] = 1u + lanes[0][s] + lanes[1][s] + lanes[2][s] + lanes[3][s];
    h->lit_len_histogram[END_OF_BLOCK] = 1;
    for (int s = END_OF_BLOCK + 1; s < ISAL_DEF_LIT_LEN_SYMBOLS; s++) h->lit_len_histogram[s] = 1;
    h->dist_histogram[0] = 1; /* distance 1 */
}

/* The coded block and its closing stored block into out, which ends at `end`; the bytes
 * written, or 0 where they would pass `end`. */
static size_t coded(const unsigned char *in, size_t len, int last, unsigned char *out,
                    const unsigned char *end)
{
    struct isal_huff_histogram h;
    sample_counts(in, len, &h);
    struct isal_hufftables t;
    if (isal_create_hufftables_subset(&t, &h) != 0) return 0;
    /* code (bit-reversed, as it goes out) in the low 32 bits, its length in the high */
    uint64_t code[END_OF_BLOCK + 1];
    unsigned longest = 0;
    for (int s = 0; s <= END_OF_BLOCK; s++) {
        code[s] = t.lit_table[s] | (uint64_t)t.lit_table_sizes[s] << 32;
        if (t.lit_table_sizes[s] > longest) longest = t.lit_table_sizes[s];
    }
    if (longest > MAX_CODE_BITS) return 0;
    /* ISA-L's header: whole bytes, then deflate_hdr_extra_bits in the next; its BFINAL bit
     * is cleared, the block being followed by the closing stored block */
    const unsigned char *hdr = t.deflate_hdr;
    if ((size_t)(end - out) < (size_t)t.deflate_hdr_count + 1) return 0;
    memcpy(out, hdr, t.deflate_hdr_count);
    out[0] &= 0xfe;
    bit_writer w = {out + t.deflate_hdr_count, 0, 0};
    if (t.deflate_hdr_extra_bits)
        put_bits(&w, hdr[t.deflate_hdr_count] & ((1u << t.deflate_hdr_extra_bits) - 1u),
                 t.deflate_hdr_extra_bits);
    /* a run's match: distance 1 and a length code, each with its extra bits (ISA-L's tables:
     * code above bit 5, its length in bits 4:0) */
    const uint32_t dist1 = t.dist_table[0];
    /* four codes a flush while they fit the buffer beside < 8 pending bits, else two */
    const int four = 4 * longest + 7 <= 64;
#define PUT(s) put_bits(&w, (uint32_t)code[s], (unsigned)(code[s] >> 32))
    if (len > 0) PUT(in[0]), flush_bytes(&w); /* a run needs the byte before it */
    for (size_t start = 1; start < len; start += STEP_BYTES) {
        if ((size_t)(end - w.p) < STEP_OUT_BYTES + 8) return 0;
        const size_t stop = len - start < STEP_BYTES ? len : start + STEP_BYTES;
        size_t i = start;
        /* 8 bytes at a time: all equal to the byte before, a run (of 8 bytes at least, to
         * the step's end), else 8 literals */
        while (i + 8 <= stop) {
            const uint64_t repeated = UINT64_C(0x0101010101010101) * in[i - 1];
            if (load_u64(in + i) != repeated) {
                if (four) {
                    PUT(in[i]), PUT(in[i + 1]), PUT(in[i + 2]), PUT(in[i + 3]), flush_bytes(&w);
                    PUT(in[i + 4]), PUT(in[i + 5]), PUT(in[i + 6]), PUT(in[i + 7]), flush_bytes(&w);
                } else {
                    for (int k = 0; k < 8; k += 2) PUT(in[i + k]), PUT(in[i + k + 1]), flush_bytes(&w);
                }
                i += 8;
                continue;
            }
            size_t j = i + 8;
            while (j + 8 <= stop && load_u64(in + j) == repeated) j += 8;
            while (j < stop && in[j] == in[i - 1]) j++;
            /* a run is at least 8 bytes, and no match leaves 1 or 2 of it, so matches cover
             * it whole */
            size_t run = j - i;
            while (run > 0) {
                /* at most 258 a match, and never a remainder of 1 or 2 */
                size_t n = run > MAX_MATCH ? MAX_MATCH : run;
                if (run - n > 0 && run - n < MIN_MATCH) n = run - MIN_MATCH;
                const uint32_t length = t.len_table[n - MIN_MATCH];
                put_bits(&w, length >> 5, length & 31u);
                put_bits(&w, dist1 >> 5, dist1 & 31u);
                flush_bytes(&w);
                run -= n;
            }
            i = j;
        }
        for (; i < stop; i++) PUT(in[i]), flush_bytes(&w);
    }
    if ((size_t)(end - w.p) < 2 * STORED_FRAME + 16) return 0;
    PUT(END_OF_BLOCK);
#undef PUT
    flush_bytes(&w);
    empty_stored_block(&w, last);
    return (size_t)(w.p - out);
}

size_t gs_deflate_fast(const unsigned char *in, size_t len, int last, unsigned char *out)
{
    const size_t as_stored = stored_size(len);
    if (len > 0) {
        const size_t n = coded(in, len, last, out, out + gs_deflate_fast_bound(len));
        if (n > 0 && n < as_stored) return n;
    }
    return gs_deflate_stored(in, len, last, out);
}
