/* test_plugin_args.c: Check suite for the CPU plugin's refusal of bad arguments before it touches memory. */
/* Each smoothing call with arguments the ABI rules out (no strip, another ABI's strip,
 * unknown axes, too many passes, a stride shorter than a row, a window of more than
 * GS_PLUGIN_MAX_WINDOW_ROWS rows) returns GS_PLUGIN_ERR_INVALID with a one-line reason; the
 * same call with the argument put right runs. */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h"
#include "plugin_or_skip.h"

#define ERR_LEN 256
#define WIDTH 5u
#define ROWS 3u

static const gs_plugin_desc *g_cpu;
static gs_plugin_instance *g_inst;
static uint8_t g_src[ROWS * WIDTH], g_dst[ROWS * WIDTH];

static gs_strip good_strip(void)
{
    return gs_test_strip(g_src, WIDTH, WIDTH, ROWS, 8, g_dst, WIDTH, 8);
}

/* A refusal as invalid, with a reason of one line that contains `why`. */
static void check_invalid(gs_plugin_status st, const char *err, const char *why)
{
    ck_assert_int_eq(st, GS_PLUGIN_ERR_INVALID);
    ck_assert_msg(strstr(err, why) != NULL, "reason '%s' lacks '%s'", err, why);
    ck_assert_ptr_null(strchr(err, '\n'));
}

START_TEST(smooth_axes_refuses_bad_arguments)
{
    char err[ERR_LEN];
    gs_strip s = good_strip();
    ck_assert_msg(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_X | GS_AXIS_Y, 0, 0, 3, err, sizeof err) == GS_PLUGIN_OK,
                  "%s", err);
    check_invalid(g_cpu->smooth_axes(g_inst, NULL, GS_AXIS_Y, 0, 0, 3, err, sizeof err), err, "null strip");
    s.abi_major = GS_PLUGIN_ABI_MAJOR + 1;
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, 0, 3, err, sizeof err), err, "another ABI");
    s = good_strip();
    check_invalid(g_cpu->smooth_axes(g_inst, &s, 0, 0, 0, 3, err, sizeof err), err, "unknown axes");
    check_invalid(g_cpu->smooth_axes(g_inst, &s, 4, 0, 0, 3, err, sizeof err), err, "unknown axes");
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, 0, GS_PLUGIN_MAX_ITERS + 1, err, sizeof err), err,
                  "iterations above");
    s.src_stride = WIDTH - 1;
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, 0, 3, err, sizeof err), err, "stride");
}
END_TEST

/* Windows one row over the limit, by each of its three parts, are refused before any row
 * is read (the buffers hold 3 rows); the limit's value is checked too. A window of exactly
 * the limit is not tried: it would need 2^31 rows of memory. */
START_TEST(smooth_axes_refuses_a_window_over_the_limit)
{
    char err[ERR_LEN];
    const uint32_t max = GS_PLUGIN_MAX_WINDOW_ROWS;
    ck_assert_uint_eq(max, UINT32_C(1) << 31);
    gs_strip s = good_strip();
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, max - ROWS + 1, 0, 3, err, sizeof err), err,
                  "window taller than 2^31 rows");
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, max - ROWS + 1, 3, err, sizeof err), err,
                  "window taller than 2^31 rows");
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_X, UINT32_MAX, UINT32_MAX, 3, err, sizeof err), err,
                  "window taller than 2^31 rows");
    s.rows = max + 1;
    check_invalid(g_cpu->smooth_axes(g_inst, &s, GS_AXIS_Y, 0, 0, 3, err, sizeof err), err,
                  "window taller than 2^31 rows");
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_plugin_args CPU_PLUGIN.so\n");
        return 2;
    }
    g_cpu = gs_test_load_plugin("test_plugin_args", argv[1]);
    if (!g_cpu) return 1;
    char err[ERR_LEN] = "";
    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 0, -1, GS_MEMORY_HOST};
    if (!(g_cpu->ops & GS_OP_SMOOTH_AXES) || g_cpu->create(&cfg, &g_inst, err, sizeof err) != GS_PLUGIN_OK) {
        fprintf(stderr, "test_plugin_args: no smooth_axes, or create failed: %s\n", err);
        return 1;
    }
    Suite *suite = suite_create("plugin_args");
    TCase *tc = tcase_create("smooth_axes");
    tcase_add_test(tc, smooth_axes_refuses_bad_arguments);
    tcase_add_test(tc, smooth_axes_refuses_a_window_over_the_limit);
    suite_add_tcase(suite, tc);
    SRunner *sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    g_cpu->destroy(g_inst);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
