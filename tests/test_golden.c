/* test_golden.c: Check suite: gsmooth on every golden case, pixel for pixel. */
/* Each case of tests/golden/cases.txt runs with one backend (and, for the CPU, optionally
 * one instruction set), and the decoded output is compared with the golden file. */

#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_io.h"
#include "run_process.h"

/* Golden cases the suite can hold. */
#define GS_MAX_CASES 64
/* Option words one case can carry. */
#define GS_MAX_CASE_ARGS 8

typedef struct golden_case {
    char expected[128];                   /* file in expected/ */
    char input[128];                      /* file in inputs/ */
    char words[GS_MAX_CASE_ARGS][32];     /* extra options */
    int word_count;
} golden_case;

static const char *gsmooth, *golden_dir, *backend;
static const char *isa; /* CPU instruction set asked of the CPU plugin, or NULL for its best */
static golden_case cases[GS_MAX_CASES];
static int case_count;

static void load_cases(void)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/cases.txt", golden_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    while (fgets(line, sizeof line, f) && case_count < GS_MAX_CASES) {
        if (line[0] == '#' || line[0] == '\n') continue;
        golden_case *c = &cases[case_count];
        char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
        snprintf(c->expected, sizeof c->expected, "%s", tok);
        tok = strtok_r(NULL, " \t\n", &save);
        if (!tok) continue;
        snprintf(c->input, sizeof c->input, "%s", tok);
        while ((tok = strtok_r(NULL, " \t\n", &save)) && c->word_count < GS_MAX_CASE_ARGS)
            snprintf(c->words[c->word_count++], sizeof c->words[0], "%s", tok);
        ++case_count;
    }
    fclose(f);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc(size > 0 ? (size_t)size : 1);
    *n = fread(buf, 1, (size_t)size, f);
    fclose(f);
    return buf;
}

/* Decode a whole image through gsmooth's own readers. */
static void *decode(const char *path, gs_image_info *info)
{
    gs_reader *r = NULL;
    char err[256];
    ck_assert_msg(gs_reader_open(path, UINT64_C(1) << 30, &r, info, err, sizeof err) == GS_OK,
                  "%s: %s", path, err);
    size_t stride = (size_t)info->width * (info->bits / 8);
    void *pixels = malloc(stride * info->height);
    ck_assert_msg(gs_reader_read_rows(r, pixels, stride, info->height, err, sizeof err) == GS_OK,
                  "%s: %s", path, err);
    gs_reader_close(r);
    return pixels;
}

START_TEST(golden_case_matches)
{
    const golden_case *c = &cases[_i];
    char in[512], want[512], got[600], dir[] = "/tmp/gsmooth-golden-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(in, sizeof in, "%s/inputs/%s", golden_dir, c->input);
    snprintf(want, sizeof want, "%s/expected/%s", golden_dir, c->expected);
    snprintf(got, sizeof got, "%s/%s", dir, c->expected);
    const char *args[GS_MAX_CASE_ARGS + 8];
    int n = 0;
    args[n++] = "--backend", args[n++] = backend, args[n++] = "--quiet";
    for (int i = 0; i < c->word_count; ++i) args[n++] = c->words[i];
    args[n++] = in, args[n++] = got, args[n] = NULL;
    gs_run_result r;
    ck_assert_int_eq(gs_run_process(&r, gsmooth, NULL, args), 0);
    ck_assert_msg(r.code == 0, "%s: exit %d: %s", c->expected, r.code, r.err);

    const char *ext = strrchr(c->expected, '.');
    if (ext && strcmp(ext, ".npy") == 0) {
        size_t na = 0, nb = 0;
        char *a = slurp(want, &na), *b = slurp(got, &nb);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_msg(na == nb && memcmp(a, b, na) == 0, "%s differs from golden", c->expected);
        free(a), free(b);
    } else {
        gs_image_info ia, ib;
        void *a = decode(want, &ia), *b = decode(got, &ib);
        ck_assert_uint_eq(ia.width, ib.width);
        ck_assert_uint_eq(ia.height, ib.height);
        ck_assert_uint_eq(ia.bits, ib.bits);
        size_t bytes = (size_t)ia.width * ia.height * (ia.bits / 8);
        ck_assert_msg(memcmp(a, b, bytes) == 0, "%s: pixels differ from golden", c->expected);
        free(a), free(b);
    }
    unlink(got);
    rmdir(dir);
}
END_TEST

/* The line of `--list-backends -v` output that starts with `prefix`, or NULL. */
static const char *line_starting(const char *text, const char *prefix)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        while (*line == ' ') ++line;
        if (strncmp(line, prefix, strlen(prefix)) == 0) return line;
    }
    return NULL;
}

/* Why the suite cannot run here (exit 77 tells ctest it was skipped), or NULL. */
static const char *skip_reason(void)
{
    static char why[256];
    gs_run_result r;
    const char *args[] = {"--list-backends", "-v", NULL};
    if (gs_run_process(&r, gsmooth, NULL, args) != 0) return "gsmooth did not start";
    char want[64];
    snprintf(want, sizeof want, "%s ", backend);
    const char *line = line_starting(r.out, want);
    if (!line || !strstr(line, " available ")) {
        snprintf(why, sizeof why, "backend %s is not available here (no CUDA device?)", backend);
        return why;
    }
    /* The CPU plugin's probe names the instruction set it settled on: a capped set this
     * CPU lacks falls back to a lower one, which its own suite covers. */
    if (isa) {
        char probe[64];
        snprintf(probe, sizeof probe, "probe:  %s row kernels", isa);
        if (!line_starting(r.out, probe)) {
            snprintf(why, sizeof why, "this CPU does not run the %s kernels", isa);
            return why;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: %s GSMOOTH GOLDEN_DIR BACKEND [CPU_ISA]\n", argv[0]);
        return 2;
    }
    gsmooth = argv[1], golden_dir = argv[2], backend = argv[3];
    isa = argc == 5 ? argv[4] : NULL;
    /* Children inherit the cap (kernels/cpu/cpu_isa.c reads it). */
    if (isa) setenv("GSMOOTH_CPU_ISA", isa, 1);
    else unsetenv("GSMOOTH_CPU_ISA");
    const char *why = skip_reason();
    if (why) {
        printf("skipped: %s\n", why);
        return 77;
    }
    load_cases();
    if (case_count < 8) {
        fprintf(stderr, "only %d golden cases found\n", case_count);
        return 1;
    }
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create(isa ? isa : backend);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, golden_case_matches, 0, case_count);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
