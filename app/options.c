/* options.c: command-line parsing (getopt_long) with range checks on every number. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h" /* GS_PLUGIN_MAX_ITERS */
#include "png_tuning.h"

enum long_only {
    OPT_ITERS = 256, OPT_INTEGRAL, OPT_BACKEND, OPT_PLUGIN_DIR, OPT_THREADS, OPT_MAX_PIXELS,
    OPT_DEPTH, OPT_JOBS, OPT_PNG_LEVEL, OPT_COMPRESSION, OPT_QUIET, OPT_PROGRESS, OPT_TIME, OPT_LIST, OPT_HELP, OPT_VERSION
};

static const struct option long_options[] = {
    {"iters", required_argument, NULL, OPT_ITERS},
    {"integral", optional_argument, NULL, OPT_INTEGRAL},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"max-pixels", required_argument, NULL, OPT_MAX_PIXELS},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"png-level", required_argument, NULL, OPT_PNG_LEVEL},
    {"compression", required_argument, NULL, OPT_COMPRESSION},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"time", no_argument, NULL, OPT_TIME},
    {"list-backends", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"verbose", no_argument, NULL, 'v'},
    {"output-dir", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
};

/* Parse a whole decimal number in [lo, hi]; -1 on anything else. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

void gs_options_print_help(FILE *to)
{
    fputs(
        "Usage: gsmooth [OPTIONS] INPUT OUTPUT          smooth each row (3 passes)\n"
        "       gsmooth --integral[=rows|2d] INPUT OUT.npy\n"
        "       gsmooth [OPTIONS] -o DIR INPUT...        batch: writes DIR/<input name>\n"
        "       gsmooth --list-backends [-v] | --help | --version\n"
        "\n"
        "Smooths every row of a grayscale image with the iterated 3-point mean, exactly\n"
        "(identical bytes on every backend), or writes its integral image.\n"
        "\n"
        "Options:\n"
        "  --iters K          smoothing passes, 0..100000 (default 3)\n"
        "  --integral[=MODE]  rows (default): prefix sum of each row; 2d: summed-area table\n"
        "  --backend B        auto (default), cpu, cuda, or a path to a plugin .so\n"
        "  --plugin-dir DIR   look for plugins in DIR first\n"
        "  --threads N        CPU threads (default: all cores)\n"
        "  --max-pixels N     refuse larger images before decoding (default 1073741824)\n"
        "  --depth D          keep (default), 8 or 16: output sample depth\n"
        "  -o, --output-dir DIR  batch mode: write each result into DIR\n"
        "  --jobs N           batch: files in flight (default: one per core, threads split)\n"
        "  --compression C    PNG output: fast (stored), default (zlib 1), small (zlib 6)\n"
        "  --png-level N      PNG output: zlib level 0..9 (same pixels at every level)\n"
        "  --quiet            no notes on stderr (errors are still printed)\n"
        "  --progress         batch progress (files, MB/s, ETA) on stderr even with --quiet;\n"
        "                     shown by default in batch mode when stderr is a terminal\n"
        "  --time             print decode/upload/kernel/download/encode timings\n"
        "  --list-backends    list plugins; with -v, paths, ABI, operations, probe\n"
        "  -v, --verbose      more detail (with --list-backends)\n"
        "  --help, --version\n"
        "\n"
        "Input: PNG (any type, 8/16-bit, interlaced), JPEG, BMP, TGA, PGM/PPM, GIF, PSD, HDR;\n"
        "'-' reads standard input. Colour becomes gray (BT.601). Output by extension:\n"
        ".png .pgm (8/16-bit), .bmp .tga .jpg (8-bit), .npy (integrals); '-' writes PNG to\n"
        "standard output.\n"
        "Environment: GSMOOTH_BACKEND (default for --backend), GSMOOTH_PLUGIN_PATH\n"
        "(colon-separated plugin directories).\n"
        "Exit status: 0 success, 1 failure at run time, 2 usage error.\n",
        to);
}

gs_status gs_options_parse(int argc, char **argv, gs_options *o, char *err, size_t err_size)
{
    memset(o, 0, sizeof *o);
    o->action = GS_ACTION_RUN;
    o->iters = GS_DEFAULT_ITERS;
    o->max_pixels = GS_DEFAULT_MAX_PIXELS;
    o->png_level = -1;
    const char *env_backend = getenv("GSMOOTH_BACKEND");
    o->backend = env_backend && *env_backend ? env_backend : "auto";
    int iters_given = 0;
    uint64_t v;

    opterr = 0; /* we print our own one-line errors */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":vo:", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_ITERS:
            if (parse_u64(optarg, 0, GS_PLUGIN_MAX_ITERS, &v))
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--iters takes a whole number from 0 to %u, not '%s'",
                               GS_PLUGIN_MAX_ITERS, optarg);
            o->iters = (uint32_t)v;
            iters_given = 1;
            break;
        case OPT_INTEGRAL:
            if (!optarg || strcmp(optarg, "rows") == 0) o->mode = GS_MODE_INTEGRAL_ROWS;
            else if (strcmp(optarg, "2d") == 0) o->mode = GS_MODE_INTEGRAL_2D;
            else
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--integral takes 'rows' or '2d', not '%s'", optarg);
            break;
        case OPT_BACKEND: o->backend = optarg; break;
        case OPT_PLUGIN_DIR: o->plugin_dir = optarg; break;
        case OPT_THREADS:
            if (parse_u64(optarg, 1, GS_MAX_THREADS_OPTION, &v))
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--threads takes a number from 1 to %d, not '%s'",
                               GS_MAX_THREADS_OPTION, optarg);
            o->threads = (unsigned)v;
            break;
        case OPT_MAX_PIXELS:
            if (parse_u64(optarg, 1, UINT64_C(1) << 40, &v))
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--max-pixels takes a number from 1 to 2^40, not '%s'", optarg);
            o->max_pixels = v;
            break;
        case OPT_DEPTH:
            if (strcmp(optarg, "keep") == 0) o->depth = GS_DEPTH_KEEP;
            else if (strcmp(optarg, "8") == 0) o->depth = GS_DEPTH_TO_8;
            else if (strcmp(optarg, "16") == 0) o->depth = GS_DEPTH_TO_16;
            else
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--depth takes keep, 8 or 16, not '%s'", optarg);
            break;
        case OPT_JOBS:
            if (parse_u64(optarg, 1, 256, &v))
                return gs_fail(err, err_size, GS_ERR_USAGE,
                               "--jobs takes a number from 1 to 256, not '%s'", optarg);
            o->jobs = (unsigned)v;
            break;
        case OPT_PNG_LEVEL:
        case OPT_COMPRESSION:
            if (gs_png_level_parse(optarg, &o->png_level, err, err_size) != GS_OK) return GS_ERR_USAGE;
            break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_PROGRESS: o->progress = 1; break;
        case OPT_TIME: o->time = 1; break;
        case OPT_LIST: o->action = GS_ACTION_LIST; break;
        case OPT_HELP: o->action = GS_ACTION_HELP; return GS_OK;
        case OPT_VERSION: o->action = GS_ACTION_VERSION; return GS_OK;
        case 'v': o->verbose = 1; break;
        case 'o': o->out_dir = optarg; break;
        case ':':
            return gs_fail(err, err_size, GS_ERR_USAGE, "option '%s' needs a value",
                           argv[optind - 1]);
        default:
            return gs_fail(err, err_size, GS_ERR_USAGE, "unknown option '%s'",
                           argv[optind - 1]);
        }
    }
    if (o->action == GS_ACTION_LIST) return GS_OK;
    if (*o->backend == '\0')
        return gs_fail(err, err_size, GS_ERR_USAGE, "--backend needs a name or a path");
    if (o->mode != GS_MODE_SMOOTH && iters_given)
        return gs_fail(err, err_size, GS_ERR_USAGE, "--iters does not apply to --integral");
    if (o->mode != GS_MODE_SMOOTH && o->depth != GS_DEPTH_KEEP)
        return gs_fail(err, err_size, GS_ERR_USAGE, "--depth does not apply to --integral");

    o->inputs = argv + optind;
    o->input_count = argc - optind;
    if (o->out_dir) {
        if (o->input_count < 1)
            return gs_fail(err, err_size, GS_ERR_USAGE, "-o DIR needs at least one INPUT");
        return GS_OK;
    }
    if (o->input_count != 2)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       o->input_count < 2 ? "missing INPUT or OUTPUT (try --help)"
                                          : "too many arguments: give INPUT OUTPUT, or -o DIR for several inputs");
    o->output = o->inputs[1];
    o->input_count = 1;
    return GS_OK;
}
