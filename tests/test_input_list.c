/* test_input_list.c: Check suite for the batch's input list and planning. */
/* --files-from, --files0-from, --shard's split, batch output names, the manifest's JSON
 * strings, and the CPUs a batch plans for (the affinity mask). */

#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_run.h"
#include "input_list.h"
#include "manifest.h"
#include "options.h"
#include "test_files.h"
#include "usable_cpus.h"

static char list_path[64];

static void setup(void)
{
    snprintf(list_path, sizeof list_path, "/tmp/gs-list-XXXXXX");
    int fd = mkstemp(list_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void) { unlink(list_path); }

static void read_list(gs_input_list *l, const void *bytes, size_t n, char separator, gs_status want)
{
    char err[GS_ERR_SIZE] = "";
    write_file(list_path, bytes, n);
    gs_input_list_init(l);
    gs_status rc = gs_input_list_read(l, list_path, separator, err, sizeof err);
    ck_assert_msg(rc == want, "status %d, want %d: %s", rc, want, err);
}

START_TEST(lines_and_empty_lines)
{
    gs_input_list l;
    static const char text[] = "a.png\n\nsub dir/b c.png\n\n\nlast.pgm"; /* no final newline */
    read_list(&l, text, sizeof text - 1, '\n', GS_OK);
    ck_assert_uint_eq(l.count, 3);
    ck_assert_str_eq(gs_input_list_at(&l, 0), "a.png");
    ck_assert_str_eq(gs_input_list_at(&l, 1), "sub dir/b c.png");
    ck_assert_str_eq(gs_input_list_at(&l, 2), "last.pgm");
    gs_input_list_free(&l);
}
END_TEST

START_TEST(nul_separated_names_keep_newlines)
{
    gs_input_list l;
    static const char text[] = "one\ntwo.png\0\0three.png\0";
    read_list(&l, text, sizeof text - 1, '\0', GS_OK);
    ck_assert_uint_eq(l.count, 2);
    ck_assert_str_eq(gs_input_list_at(&l, 0), "one\ntwo.png");
    ck_assert_str_eq(gs_input_list_at(&l, 1), "three.png");
    gs_input_list_free(&l);
}
END_TEST

START_TEST(nul_in_a_line_list_is_refused_with_its_line)
{
    gs_input_list l;
    static const char text[] = "a.png\nb.png\nc\0d.png\n";
    char err[GS_ERR_SIZE] = "";
    write_file(list_path, text, sizeof text - 1);
    gs_input_list_init(&l);
    ck_assert_int_eq(gs_input_list_read(&l, list_path, '\n', err, sizeof err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "line 3") && strstr(err, "--files0-from"), "%s", err);
    gs_input_list_free(&l);
}
END_TEST

/* Entries that cross the reader's 64 KiB chunks, one of them longer than a chunk: every
 * byte arrives, in order, and the count is right. */
START_TEST(entries_across_chunks)
{
    const size_t n = 30000, long_len = 150000;
    size_t cap = n * 16 + long_len + 16, used = 0;
    char *text = malloc(cap);
    for (size_t i = 0; i < n; ++i) {
        used += (size_t)sprintf(text + used, "d/%zu.png\n", i);
        if (i == n / 2) {
            memset(text + used, 'x', long_len);
            used += long_len;
            text[used++] = '\n';
        }
    }
    gs_input_list l;
    read_list(&l, text, used, '\n', GS_OK);
    ck_assert_uint_eq(l.count, n + 1);
    for (size_t i = 0, j = 0; i < n; ++i, ++j) {
        char want[32];
        sprintf(want, "d/%zu.png", i);
        ck_assert_str_eq(gs_input_list_at(&l, (uint32_t)j), want);
        if (i == n / 2) {
            ++j;
            ck_assert_uint_eq(strlen(gs_input_list_at(&l, (uint32_t)j)), long_len);
        }
    }
    gs_input_list_free(&l);
    free(text);
}
END_TEST

START_TEST(missing_list_is_an_io_error)
{
    gs_input_list l;
    char err[GS_ERR_SIZE] = "";
    gs_input_list_init(&l);
    ck_assert_int_eq(gs_input_list_read(&l, "/nonexistent/list.txt", '\n', err, sizeof err), GS_ERR_IO);
    ck_assert_msg(strstr(err, "/nonexistent/list.txt"), "%s", err);
    gs_input_list_free(&l);
}
END_TEST

START_TEST(shard_parse)
{
    gs_shard s;
    char err[GS_ERR_SIZE];
    ck_assert_int_eq(gs_shard_parse("0/1", &s.index, &s.count, err, sizeof err), GS_OK);
    ck_assert_uint_eq(s.index, 0);
    ck_assert_uint_eq(s.count, 1);
    ck_assert_int_eq(gs_shard_parse("3/4", &s.index, &s.count, err, sizeof err), GS_OK);
    ck_assert_uint_eq(s.index, 3);
    ck_assert_uint_eq(s.count, 4);
    ck_assert_int_eq(gs_shard_parse("4294967294/4294967295", &s.index, &s.count, err, sizeof err), GS_OK);
    static const char *const bad[] = {"4/4", "1/0", "0/0", "-1/4", "1/-4", "1", "/4", "1/", "a/4",
                                      "1/4x", "1 /4", "+1/4", "0/4294967296", "99999999999999999999/4", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i)
        ck_assert_msg(gs_shard_parse(bad[i], &s.index, &s.count, err, sizeof err) == GS_ERR_USAGE,
                      "accepted '%s'", bad[i]);
}
END_TEST

/* N shards of a list of any length take every position exactly once. */
START_TEST(shards_split_exactly_once)
{
    for (uint32_t total = 0; total < 60; ++total)
        for (uint32_t count = 1; count < 9; ++count) {
            unsigned seen[64] = {0};
            for (uint32_t index = 0; index < count; ++index) {
                gs_shard s = {index, count};
                uint32_t size = gs_shard_size(s, total);
                for (uint32_t k = 0; k < size; ++k) {
                    uint32_t j = gs_shard_position(s, k);
                    ck_assert_uint_lt(j, total);
                    ck_assert_uint_eq(j % count, index);
                    seen[j]++;
                }
            }
            for (uint32_t j = 0; j < total; ++j)
                ck_assert_msg(seen[j] == 1, "total %u, %u shards: position %u taken %u times", total,
                              count, j, seen[j]);
        }
    gs_shard last = {UINT32_MAX - 1, UINT32_MAX};
    ck_assert_uint_eq(gs_shard_size(last, UINT32_MAX), 1);
    ck_assert_uint_eq(gs_shard_size(last, UINT32_MAX - 1), 0);
}
END_TEST

/* The output path of `input` under `dir` (and `root`, with the working directory /w), the
 * result kept at the input's depth or (float_out) made float32. */
static int output_name_as(const char *dir, const char *root, const char *input, gs_mode mode,
                          int float_out, char *out, size_t size)
{
    gs_batch_naming n = {dir, root, "/w", mode, float_out};
    return gs_batch_output_path(&n, input, out, size);
}

static int output_name(const char *dir, const char *root, const char *input, gs_mode mode, char *out,
                       size_t size)
{
    return output_name_as(dir, root, input, mode, 0, out, size);
}

START_TEST(batch_output_names)
{
    /* Every format written exactly keeps its input's name, by any of its extensions; any
     * other input (a lossy one too: .jpeg as .jpg) becomes .png, and an integral .npy. A
     * float32 result keeps the names of formats that store float32 and becomes .tif. */
    static const struct {
        const char *input;
        gs_mode mode;
        int float_out;
        const char *want;
    } cases[] = {
        {"a/b/x.png", GS_MODE_SMOOTH, 0, "o/x.png"},
        {"x.jpg", GS_MODE_SMOOTH, 0, "o/x.png"},
        {"x.jpeg", GS_MODE_SMOOTH, 0, "o/x.png"},
        {"d/y.pgm/", GS_MODE_SMOOTH, 0, "o/y.pgm"},
        {"x.tiff", GS_MODE_SMOOTH, 0, "o/x.tiff"},
        {"x.TIF", GS_MODE_SMOOTH, 0, "o/x.TIF"},
        {"x.bmp", GS_MODE_SMOOTH, 0, "o/x.bmp"},
        {"x.tga", GS_MODE_SMOOTH, 0, "o/x.tga"},
        {"x.npy", GS_MODE_SMOOTH, 0, "o/x.npy"},
        {"x.fits", GS_MODE_SMOOTH, 0, "o/x.fits"},
        {"x.fit", GS_MODE_SMOOTH, 0, "o/x.fit"},
        {"x.fts", GS_MODE_SMOOTH, 0, "o/x.fts"},
        {"d/x.tif", GS_MODE_INTEGRAL_ROWS, 0, "o/x.npy"},
        {"x.fits", GS_MODE_INTEGRAL_2D, 0, "o/x.npy"},
        {"x.npy", GS_MODE_INTEGRAL_ROWS, 0, "o/x.npy"},
        {"x.png", GS_MODE_SMOOTH, 1, "o/x.tif"},
        {"x.jpg", GS_MODE_SMOOTH, 1, "o/x.tif"},
        {"x.pgm", GS_MODE_SMOOTH, 1, "o/x.tif"},
        {"x.tiff", GS_MODE_SMOOTH, 1, "o/x.tiff"},
        {"x.npy", GS_MODE_SMOOTH, 1, "o/x.npy"},
        {"x.fit", GS_MODE_SMOOTH, 1, "o/x.fit"}};
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        ck_assert_int_eq(
            output_name_as("o", NULL, cases[i].input, cases[i].mode, cases[i].float_out, out, sizeof out), 0);
        ck_assert_str_eq(out, cases[i].want);
    }
    ck_assert_int_eq(output_name("o", NULL, "", GS_MODE_SMOOTH, out, sizeof out), GS_BATCH_NAME_UNFIT);
    ck_assert_int_eq(output_name("o", NULL, "/", GS_MODE_SMOOTH, out, sizeof out), GS_BATCH_NAME_UNFIT);
    ck_assert_int_eq(output_name("a-long-directory", NULL, "x.png", GS_MODE_SMOOTH, out, 8),
                     GS_BATCH_NAME_UNFIT);
}
END_TEST

/* Paths made absolute by their text: ".", "..", repeated and trailing slashes. */
START_TEST(lexical_absolute_paths)
{
    static const struct {
        const char *path, *want;
    } cases[] = {{"a/b", "/w/a/b"},     {"./a//b/", "/w/a/b"}, {"../a", "/a"},  {"/x/../../y", "/y"},
                 {".", "/w"},           {"..", "/"},           {"/", "/"},      {"a/./b/../c", "/w/a/c"},
                 {"/r/..x/.y", "/r/..x/.y"}};
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        ck_assert_int_eq(gs_path_absolute("/w", cases[i].path, out, sizeof out), 0);
        ck_assert_str_eq(out, cases[i].want);
    }
    ck_assert_int_eq(gs_path_absolute("/w", "abcdefgh", out, 8), -1);
}
END_TEST

/* With a root, outputs keep their path below it; inputs outside it, its siblings with a
 * longer name and the root itself have no output. */
START_TEST(batch_output_names_relative)
{
    char out[256];
    ck_assert_int_eq(output_name("o", "/w", "a/x.png", GS_MODE_SMOOTH, out, sizeof out), 0);
    ck_assert_str_eq(out, "o/a/x.png");
    ck_assert_int_eq(output_name("o/", "/w/a", "/w/a/sub/y.jpg", GS_MODE_SMOOTH, out, sizeof out), 0);
    ck_assert_str_eq(out, "o/sub/y.png");
    ck_assert_int_eq(output_name("o", "/w/a", "../w/a/./z.tif", GS_MODE_INTEGRAL_2D, out, sizeof out), 0);
    ck_assert_str_eq(out, "o/z.npy");
    ck_assert_int_eq(output_name("o", "/", "b/x.png", GS_MODE_SMOOTH, out, sizeof out), 0);
    ck_assert_str_eq(out, "o/w/b/x.png");
    ck_assert_int_eq(output_name("o", "/w/a", "/w/ab/x.png", GS_MODE_SMOOTH, out, sizeof out),
                     GS_BATCH_NAME_OUTSIDE);
    ck_assert_int_eq(output_name("o", "/w/a", "x.png", GS_MODE_SMOOTH, out, sizeof out),
                     GS_BATCH_NAME_OUTSIDE);
    ck_assert_int_eq(output_name("o", "/w/a", "a/", GS_MODE_SMOOTH, out, sizeof out), GS_BATCH_NAME_OUTSIDE);
    ck_assert_int_eq(output_name("o", "/w/a", "a/../../w/a/x.png", GS_MODE_SMOOTH, out, sizeof out), 0);
    ck_assert_str_eq(out, "o/x.png");
}
END_TEST

START_TEST(json_strings)
{
    char out[256];
    gs_json_string("plain/dir é.png", out, sizeof out);
    ck_assert_str_eq(out, "\"plain/dir é.png\"");
    gs_json_string("q\"b\\n\nt\t\x01", out, sizeof out);
    ck_assert_str_eq(out, "\"q\\\"b\\\\n\\nt\\t\\u0001\"");
    gs_json_string("bad\xff\xc3(\xed\xa0\x80z", out, sizeof out); /* stray, truncated, surrogate */
    ck_assert_str_eq(out, "\"bad\\udcff\\udcc3(\\udced\\udca0\\udc80z\"");
    char small[8];
    size_t n = gs_json_string("abcdefghij", small, sizeof small);
    ck_assert_uint_eq(n, 12); /* the length it needs, like snprintf; what fits is cut */
    ck_assert_uint_eq(strlen(small), 7);
}
END_TEST

/* Under taskset or a Slurm/cgroup CPU set, the jobs and threads follow the CPUs granted. */
START_TEST(usable_cpus_follow_the_affinity_mask)
{
    cpu_set_t all, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof all, &all), 0);
    ck_assert_uint_eq(gs_usable_cpus(), (unsigned)CPU_COUNT(&all));
    int first = 0;
    while (!CPU_ISSET(first, &all)) ++first;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    unsigned n = gs_usable_cpus();
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
    ck_assert_uint_eq(n, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("input_list");
    TCase *tc = tcase_create("list");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lines_and_empty_lines);
    tcase_add_test(tc, nul_separated_names_keep_newlines);
    tcase_add_test(tc, nul_in_a_line_list_is_refused_with_its_line);
    tcase_add_test(tc, entries_across_chunks);
    tcase_add_test(tc, missing_list_is_an_io_error);
    tcase_add_test(tc, shard_parse);
    tcase_add_test(tc, shards_split_exactly_once);
    tcase_add_test(tc, batch_output_names);
    tcase_add_test(tc, lexical_absolute_paths);
    tcase_add_test(tc, batch_output_names_relative);
    tcase_add_test(tc, json_strings);
    tcase_add_test(tc, usable_cpus_follow_the_affinity_mask);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
