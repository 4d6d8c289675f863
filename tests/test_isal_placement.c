/* test_isal_placement.c: Check suite for the ISA-L stream placement. */
/* Its hash is the CPU's CRC-32C, every run of eight windows offers a free one, and a
 * deflate stream's bytes stay the same wherever its home lies. */

#define _GNU_SOURCE
#include <check.h>
#include <isa-l.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "isal_placement.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
/* The CPU's own CRC-32C of a word (SSE4.2), to check the portable one against. */
__attribute__((target("sse4.2"))) static uint32_t cpu_crc32c(uint32_t word)
{
    return _mm_crc32_u32(0, word);
}
#endif

/* Homes tried, 64 KiB apart: 2048 span 129 MiB of address space (reserved, never touched
 * but for the streams' own pages), and give every stray slot of the small inputs' hash
 * masks (1023, 2047) about twice. With ISA-L 2.30 and window 0 always, 16 of 8192 such
 * placements changed input 0's bytes. */
#define PLACEMENTS 2048u
#define OUT_CAP (384u << 10)

/* Raw deflate of `in` as gsmooth's PNG writer does for a stream without a dictionary
 * (png_deflate.c: one piece, ended), in the stream `z`. Returns the bytes written. */
static size_t deflate_at(struct isal_zstream *z, int level, uint8_t *level_buf,
                         const unsigned char *in, size_t len, unsigned char *out)
{
    isal_deflate_init(z);
    z->level = (uint32_t)level;
    z->level_buf = level_buf;
    z->level_buf_size = ISAL_DEF_LVL3_DEFAULT;
    z->gzip_flag = IGZIP_DEFLATE;
    z->flush = SYNC_FLUSH;
    z->end_of_stream = 1;
    z->next_in = (uint8_t *)in;
    z->avail_in = (uint32_t)len;
    z->next_out = out;
    z->avail_out = OUT_CAP;
    ck_assert_int_eq(isal_deflate(z), COMP_OK);
    ck_assert_int_eq(z->avail_in, 0);
    ck_assert_int_eq(z->internal_state.state, ZSTATE_END);
    return OUT_CAP - z->avail_out;
}

START_TEST(hash_is_the_cpus_crc32c)
{
    /* a few words whose CRC-32C (from 0, no inversions) is known */
    const struct {
        uint32_t word, crc;
    } known[] = {{0, 0}, {1, 0xdd45aab8u}, {0x80000000u, 0x82f63b78u}, {0xdeadbeefu, 0x09991d14u}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
        ck_assert_uint_eq(gs_isal_hash_low_bits(known[i].word), known[i].crc & 3u);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2")) {
        uint32_t x = 12345;
        for (int i = 0; i < 100000; ++i) {
            x = x * 1664525u + 1013904223u;
            ck_assert_uint_eq(gs_isal_hash_low_bits(x), cpu_crc32c(x) & 3u);
        }
    }
#endif
}
END_TEST

START_TEST(every_aligned_run_of_eight_windows_has_all_low_bits)
{
    /* the argument in gs_isal_home_pick: hash(0..7) cover the four values */
    unsigned seen = 0;
    for (uint32_t i = 0; i < 8; ++i) seen |= 1u << gs_isal_hash_low_bits(i);
    ck_assert_uint_eq(seen, 0xfu);
    /* and so for any run of 8 starting at a multiple of 8 */
    uint32_t a = 0x9e3779b9u;
    for (int t = 0; t < 1000; ++t, a = a * 2654435761u + 7u) {
        seen = 0;
        for (uint32_t i = 0; i < 8; ++i) seen |= 1u << gs_isal_hash_low_bits((a & ~7u) | i);
        ck_assert_uint_eq(seen, 0xfu);
    }
}
END_TEST

/* Test inputs: PNG rows of a 1-pixel-wide image, Sub-filtered (a filter byte, then a
 * difference), like the 1x200 image whose bytes first differed between runs, with four
 * ranges of differences; noise; text at three strides; and a whole 256 KiB piece of
 * Sub-filtered 511-pixel rows of a gradient with noise, where matches skip ahead and
 * positions pass 32 KiB (the two ways isal_placement.h names for a stray entry to be read). */
#define INPUT_KINDS 9
#define INPUT_CAP (256u << 10)
static size_t make_input(int kind, unsigned char *buf)
{
    uint32_t x = 2463534242u + (uint32_t)kind * 977u;
    size_t n = 0;
    if (kind < 4) {
        const uint32_t range = 3u + 20u * (uint32_t)kind;
        for (; n < 400; n += 2) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            buf[n] = 1, buf[n + 1] = (unsigned char)(x % (2u * range + 1u) - range);
        }
    } else if (kind == 4) {
        for (; n < 1000; ++n) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            buf[n] = (unsigned char)(x >> 24);
        }
    } else if (kind == 8) {
        for (uint32_t y = 0; n + 512 <= INPUT_CAP; ++y) {
            buf[n++] = 1;
            unsigned char prev = 0;
            for (uint32_t col = 0; col < 511; ++col) {
                const uint32_t r = (col * 2654435761u + y * 40503u) >> 30; /* noise 0..3 */
                const unsigned char v = (unsigned char)((col + y) / 4 + r);
                buf[n++] = (unsigned char)(v - prev);
                prev = v;
            }
        }
    } else {
        static const char words[] = "the quick brown fox jumps over the lazy dog ";
        const size_t stride = 2u * (size_t)kind - 3u;
        for (; n < 700; ++n) buf[n] = (unsigned char)words[(n * stride + n / 45u) % (sizeof words - 1)];
    }
    return n;
}

START_TEST(stream_bytes_do_not_depend_on_the_home)
{
    const int level = _i == 0 ? 2 : 1; /* gsmooth's default, and "fast" */
    const size_t home_bytes = gs_isal_home_bytes();
    const size_t span = (size_t)(PLACEMENTS - 1) * GS_ISAL_WINDOW_BYTES + home_bytes;
    unsigned char *region = mmap(NULL, span, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_ptr_ne(region, MAP_FAILED);
    uint8_t *level_buf = malloc(ISAL_DEF_LVL3_DEFAULT);
    ck_assert_ptr_nonnull(level_buf);
    static unsigned char in[INPUT_CAP], first[OUT_CAP], out[OUT_CAP];
    for (int kind = 0; kind < INPUT_KINDS; ++kind) {
        const size_t len = make_input(kind, in);
        size_t first_len = 0;
        unsigned differ = 0, first_differ = 0;
        for (unsigned p = 0; p < PLACEMENTS; ++p) {
            gs_isal_home home;
            gs_isal_home_over(&home, region + (size_t)p * GS_ISAL_WINDOW_BYTES);
            const unsigned k = gs_isal_home_pick(&home, in, len);
            ck_assert_uint_lt(k, GS_ISAL_WINDOWS);
            const size_t n = deflate_at(gs_isal_home_window(&home, k), level, level_buf, in, len, out);
            if (p == 0) {
                memcpy(first, out, n);
                first_len = n;
            } else if (n != first_len || memcmp(out, first, n) != 0) {
                if (differ++ == 0) first_differ = p;
            }
        }
        ck_assert_msg(differ == 0,
                      "level %d, input %d: %u of %u homes give other bytes, the first at %p",
                      level, kind, differ, PLACEMENTS,
                      (void *)(region + (size_t)first_differ * GS_ISAL_WINDOW_BYTES));
    }
    free(level_buf);
    munmap(region, span);
}
END_TEST

START_TEST(mapped_home_holds_a_stream_in_every_window)
{
    gs_isal_home home;
    ck_assert_int_eq(gs_isal_home_map(&home), 0);
    for (unsigned k = 0; k < GS_ISAL_WINDOWS; ++k) {
        struct isal_zstream *z = gs_isal_home_window(&home, k);
        memset(z, 0xa5, sizeof *z); /* every byte of every window's stream is mapped */
        ck_assert((unsigned char *)(z + 1) <= home.base + home.size);
    }
    gs_isal_home_unmap(&home);
    ck_assert_ptr_null(home.base);
    gs_isal_home_unmap(&home); /* twice is a no-op */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("isal_placement");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hash_is_the_cpus_crc32c);
    tcase_add_test(tc, every_aligned_run_of_eight_windows_has_all_low_bits);
    tcase_add_loop_test(tc, stream_bytes_do_not_depend_on_the_home, 0, 2);
    tcase_add_test(tc, mapped_home_holds_a_stream_in_every_window);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
