/* test_isal_piece.c: Check suite for the ISA-L piece set-up: its bytes do not depend on where the stream lies. */
/* Pieces deflated by io/isal_piece.c at 2048 addresses 64 KiB apart give one and the same
 * stream at levels 2 and 3, first pieces and pieces primed with a dictionary alike, on
 * generated rows and on the Sub-filtered rows of a real text image; every stream inflates
 * back to its input with zlib, short first pieces too. */

#define _GNU_SOURCE
#include <check.h>
#include <isa-l.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "image_io.h"
#include "isal_piece.h"

#ifndef GS_TEXT_PNG
#error "GS_TEXT_PNG must name tests/external/pillow/default_font_freetype.png"
#endif

/* Addresses tried, 64 KiB apart (ISA-L hashed bits 16 and up of the stream's address):
 * 2048 span 128 MiB of address space, reserved and never touched but for the streams' own
 * pages. Without the lead byte, 4 of these 2048 changed the first generated input's bytes
 * at level 2; the rule the lead replaced (a placement picked by the hash's two low bits)
 * still let 1 of 8192 change the rows of the smoothed text image. */
#define PLACEMENTS 2048u
#define PLACEMENT_STEP ((size_t)1 << 16)
#define INPUT_CAP (256u << 10)
#define OUT_CAP (INPUT_CAP + (INPUT_CAP >> 3) + 4096u)
/* The dictionary a later piece is primed with: deflate's window. */
#define DICT_BYTES (32u << 10)

/* Deflate one piece as io/png_deflate.c does (gs_isal_piece_start, then isal_deflate until
 * the input is in) into out; returns the bytes written. */
static size_t deflate_piece(struct isal_zstream *z, int level, unsigned char *level_buf, const unsigned char *dict,
                            size_t dict_len, const unsigned char *in, size_t len, int last, unsigned char *out)
{
    const int lead = gs_isal_piece_start(z, level, level_buf, ISAL_DEF_LVL3_DEFAULT, dict, dict_len, in, len, last, out);
    ck_assert_int_eq(lead, !dict_len && len ? (int)GS_ISAL_LEAD_BYTES : 0);
    z->next_out = out + lead;
    z->avail_out = (uint32_t)(OUT_CAP - (size_t)lead);
    ck_assert_int_eq(isal_deflate(z), COMP_OK);
    ck_assert_uint_eq(z->avail_in, 0);
    ck_assert_uint_gt(z->avail_out, 0);
    if (last) ck_assert_int_eq(z->internal_state.state, ZSTATE_END);
    return OUT_CAP - z->avail_out;
}

/* The raw deflate stream `in` inflates to exactly `want`. */
static void check_inflates_to(const unsigned char *in, size_t len, const unsigned char *want, size_t want_len,
                              const char *what)
{
    unsigned char *got = malloc(want_len + 1);
    ck_assert_ptr_nonnull(got);
    z_stream s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(inflateInit2(&s, -15), Z_OK);
    s.next_in = (unsigned char *)in;
    s.avail_in = (uInt)len;
    s.next_out = got;
    s.avail_out = (uInt)want_len + 1;
    const int zr = inflate(&s, Z_FINISH);
    ck_assert_msg(zr == Z_STREAM_END, "%s: inflate says %d (%s)", what, zr, s.msg ? s.msg : "");
    ck_assert_msg(s.total_out == want_len && memcmp(got, want, want_len) == 0, "%s: inflates to other bytes", what);
    ck_assert_uint_eq(s.avail_in, 0);
    inflateEnd(&s);
    free(got);
}

/* Test inputs: PNG rows of a 1-pixel-wide image, Sub-filtered (a filter byte, then a
 * difference), like the 1x200 image whose bytes first differed between runs, with four
 * ranges of differences; noise; text at three strides; and a whole 256 KiB piece of
 * Sub-filtered 511-pixel rows of a gradient with noise, where matches skip ahead and
 * positions pass 32 KiB (where a stray hash entry could still be read long after the
 * stream's start, had the lead byte not kept ISA-L off that path). */
#define INPUT_KINDS 9
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

/* The text image's gray rows as a PNG writer filters them (Sub: a filter byte, then each
 * sample less the one before it); `cap` bytes of room. The PNG whose bytes first differed
 * between runs was this image, smoothed. */
static size_t text_rows(unsigned char *buf, size_t cap)
{
    char err[256] = "";
    gs_reader *reader = NULL;
    gs_image_info info;
    ck_assert_msg(gs_reader_open(GS_TEXT_PNG, UINT64_C(1) << 24, &reader, &info, err, sizeof err) == GS_OK, "%s",
                  err);
    ck_assert_uint_eq(info.bits, 8);
    ck_assert_uint_le((size_t)(info.width + 1) * info.height, cap);
    unsigned char *row = malloc(info.width);
    ck_assert_ptr_nonnull(row);
    size_t n = 0;
    for (uint32_t y = 0; y < info.height; ++y) {
        ck_assert_msg(gs_reader_read_rows(reader, row, info.width, 1, err, sizeof err) == GS_OK, "%s", err);
        buf[n++] = 1;
        for (uint32_t x = 0; x < info.width; ++x) buf[n++] = (unsigned char)(row[x] - (x ? row[x - 1] : 0));
    }
    free(row);
    gs_reader_close(reader);
    return n;
}

#define ALL_INPUTS (INPUT_KINDS + 1)

static size_t input_of(int kind, unsigned char *buf)
{
    return kind < INPUT_KINDS ? make_input(kind, buf) : text_rows(buf, INPUT_CAP);
}

/* One stream of two pieces: the first without a dictionary, the second primed with the
 * first's last DICT_BYTES, as the PNG writer cuts a long stream; or one piece, the stream's
 * first and last, when `split` is 0. Returns the bytes written to out. */
static size_t deflate_stream(struct isal_zstream *z, int level, unsigned char *level_buf, const unsigned char *in,
                             size_t len, size_t split, unsigned char *out)
{
    if (!split) return deflate_piece(z, level, level_buf, NULL, 0, in, len, 1, out);
    size_t n = deflate_piece(z, level, level_buf, NULL, 0, in, split, 0, out);
    const size_t dict_len = split < DICT_BYTES ? split : DICT_BYTES;
    return n + deflate_piece(z, level, level_buf, in + split - dict_len, dict_len, in + split, len - split, 1, out + n);
}

START_TEST(stream_bytes_do_not_depend_on_where_it_lies)
{
    const int level = _i; /* gsmooth's default, 2, and 3: both ISA-L's */
    const size_t span = (size_t)(PLACEMENTS - 1) * PLACEMENT_STEP + sizeof(struct isal_zstream);
    unsigned char *region = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                                 -1, 0);
    ck_assert_ptr_ne(region, MAP_FAILED);
    unsigned char *level_buf = malloc(ISAL_DEF_LVL3_DEFAULT);
    ck_assert_ptr_nonnull(level_buf);
    static unsigned char in[INPUT_CAP], first[2 * OUT_CAP], out[2 * OUT_CAP];
    for (int kind = 0; kind < ALL_INPUTS; ++kind) {
        const size_t len = input_of(kind, in);
        for (int two = 0; two < 2; ++two) {
            const size_t split = two ? len / 2 : 0;
            size_t first_len = 0;
            unsigned differ = 0, first_differ = 0;
            for (unsigned p = 0; p < PLACEMENTS; ++p) {
                struct isal_zstream *z = (struct isal_zstream *)(region + (size_t)p * PLACEMENT_STEP);
                const size_t n = deflate_stream(z, level, level_buf, in, len, split, out);
                if (p == 0) {
                    memcpy(first, out, n);
                    first_len = n;
                    char what[64];
                    snprintf(what, sizeof what, "level %d, input %d, %s", level, kind, two ? "two pieces" : "one piece");
                    check_inflates_to(out, n, in, len, what);
                } else if (n != first_len || memcmp(out, first, n) != 0) {
                    if (differ++ == 0) first_differ = p;
                }
            }
            ck_assert_msg(differ == 0, "level %d, input %d, %s: %u of %u placements give other bytes, the first at %p",
                          level, kind, two ? "two pieces" : "one piece", differ, PLACEMENTS,
                          (void *)(region + (size_t)first_differ * PLACEMENT_STEP));
        }
    }
    free(level_buf);
    munmap(region, span);
}
END_TEST

/* First pieces of 0 to 8 bytes (the lead byte alone, and inputs too short for ISA-L's
 * match search) make streams that inflate back, ended or followed by a primed piece. */
START_TEST(short_first_pieces_inflate)
{
    static const unsigned char text[] = "abcabcabcabcabcabcabcabc";
    struct isal_zstream *z = malloc(sizeof *z);
    unsigned char *level_buf = malloc(ISAL_DEF_LVL3_DEFAULT);
    static unsigned char out[2 * OUT_CAP];
    ck_assert_ptr_nonnull(z);
    ck_assert_ptr_nonnull(level_buf);
    for (int level = 2; level <= 3; ++level) {
        for (size_t len = 0; len <= 8; ++len) {
            char what[64];
            snprintf(what, sizeof what, "level %d, %zu bytes", level, len);
            size_t n = deflate_stream(z, level, level_buf, text, len, 0, out);
            check_inflates_to(out, n, text, len, what);
            if (len < 1) continue;
            n = deflate_stream(z, level, level_buf, text, sizeof text - 1, len, out);
            check_inflates_to(out, n, text, sizeof text - 1, what);
        }
    }
    free(level_buf);
    free(z);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("isal_piece");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, stream_bytes_do_not_depend_on_where_it_lies, 2, 4);
    tcase_add_test(tc, short_first_pieces_inflate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
