/* options.c: command-line parsing (getopt_long) from one table of options (also the completion scripts' source), numeric ranges, named values, and the checks between options. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

enum long_only {
    OPT_ITERS = 256, OPT_AXIS, OPT_INTEGRAL, OPT_BACKEND, OPT_PLUGIN_DIR, OPT_THREADS, OPT_MAX_PIXELS,
    OPT_DEPTH, OPT_JOBS, OPT_PNG_LEVEL, OPT_COMPRESSION, OPT_QUIET, OPT_PROGRESS, OPT_TIME, OPT_LIST,
    OPT_FILES_FROM, OPT_FILES0_FROM, OPT_SHARD, OPT_SKIP_EXISTING, OPT_MANIFEST, OPT_DEVICES, OPT_SIGMA,
    OPT_RELATIVE_TO, OPT_COMPLETION
};

/* The names of the values the parser checks itself, each with what it sets. */
static const gs_named_value axis_names[] = {
    {"x", GSMOOTH_AXIS_X}, {"y", GSMOOTH_AXIS_Y}, {"xy", GSMOOTH_AXIS_X | GSMOOTH_AXIS_Y}, {NULL, 0}};
static const gs_named_value integral_names[] = {
    {"rows", GSMOOTH_WORK_INTEGRAL_ROWS}, {"2d", GSMOOTH_WORK_INTEGRAL_2D}, {NULL, 0}};
static const gs_named_value depth_names[] = {{"keep", 0}, {"8", 8}, {"16", 16}, {"float", 32}, {NULL, 0}};
static const gs_named_value shell_names[] = {{"bash", GS_SHELL_BASH}, {"zsh", GS_SHELL_ZSH}, {NULL, 0}};
/* Names the library reads (gsmooth_compression_parse, the backend and device lists): here
 * only to be offered; the completion test has the parser accept each. */
static const gs_named_value compression_names[] = {
    {"fast", 0}, {"default", 0}, {"small", 0}, {"0", 0}, {"1", 0}, {"2", 0}, {"3", 0}, {"4", 0},
    {"5", 0}, {"6", 0}, {"7", 0}, {"8", 0}, {"9", 0}, {NULL, 0}};
static const gs_named_value level_names[] = {
    {"0", 0}, {"1", 0}, {"2", 0}, {"3", 0}, {"4", 0}, {"5", 0}, {"6", 0}, {"7", 0}, {"8", 0}, {"9", 0},
    {NULL, 0}};
static const gs_named_value backend_names[] = {{"auto", 0}, {"cpu", 0}, {"cuda", 0}, {NULL, 0}};
static const gs_named_value devices_names[] = {{"all", 0}, {NULL, 0}};

/* Every option, in --help's order. The parser, its short options and the completion
 * scripts are all made from this table, so a new option is parsed and completed alike. */
static const gs_option_spec option_table[] = {
    {{"iters", required_argument, NULL, OPT_ITERS}, GS_VALUE_NUMBER, NULL, "K", "smoothing passes"},
    {{"sigma", required_argument, NULL, OPT_SIGMA}, GS_VALUE_NUMBER, NULL, "S",
      "passes for a Gaussian of S pixels"},
    {{"axis", required_argument, NULL, OPT_AXIS}, GS_VALUE_CHOICE, axis_names, "A",
      "along rows, columns or both"},
    {{"integral", optional_argument, NULL, OPT_INTEGRAL}, GS_VALUE_CHOICE, integral_names, "MODE",
      "write the integral image"},
    {{"depth", required_argument, NULL, OPT_DEPTH}, GS_VALUE_CHOICE, depth_names, "D",
      "output sample depth"},
    {{"backend", required_argument, NULL, OPT_BACKEND}, GS_VALUE_PLUGIN, backend_names, "B",
      "backend name or plugin path"},
    {{"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR}, GS_VALUE_DIR, NULL, "DIR",
      "where plugins are"},
    {{"devices", required_argument, NULL, OPT_DEVICES}, GS_VALUE_CHOICE, devices_names, "D",
      "GPUs: all, or numbers like 0,1"},
    {{"threads", required_argument, NULL, OPT_THREADS}, GS_VALUE_NUMBER, NULL, "N", "CPU threads"},
    {{"max-pixels", required_argument, NULL, OPT_MAX_PIXELS}, GS_VALUE_NUMBER, NULL, "N",
      "largest image taken"},
    {{"compression", required_argument, NULL, OPT_COMPRESSION}, GS_VALUE_CHOICE, compression_names, "C",
      "PNG/TIFF deflate"},
    {{"png-level", required_argument, NULL, OPT_PNG_LEVEL}, GS_VALUE_CHOICE, level_names, "N",
      "PNG/TIFF deflate level"},
    {{"output-dir", required_argument, NULL, 'o'}, GS_VALUE_DIR, NULL, "DIR",
      "batch mode: write into DIR"},
    {{"jobs", required_argument, NULL, OPT_JOBS}, GS_VALUE_NUMBER, NULL, "N",
      "batch: files in flight"},
    {{"files-from", required_argument, NULL, OPT_FILES_FROM}, GS_VALUE_FILE, NULL, "FILE",
      "batch: inputs one a line"},
    {{"files0-from", required_argument, NULL, OPT_FILES0_FROM}, GS_VALUE_FILE, NULL, "FILE",
      "batch: inputs NUL-separated"},
    {{"shard", required_argument, NULL, OPT_SHARD}, GS_VALUE_TEXT, NULL, "I/N",
      "batch: every Nth input from I"},
    {{"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING}, GS_VALUE_NONE, NULL, NULL,
      "skip inputs whose output exists"},
    {{"relative-to", required_argument, NULL, OPT_RELATIVE_TO}, GS_VALUE_DIR, NULL, "ROOT",
      "batch: keep the tree below ROOT"},
    {{"manifest", required_argument, NULL, OPT_MANIFEST}, GS_VALUE_FILE, NULL, "FILE",
      "one JSON line per input"},
    {{"quiet", no_argument, NULL, OPT_QUIET}, GS_VALUE_NONE, NULL, NULL, "no notes"},
    {{"time", no_argument, NULL, OPT_TIME}, GS_VALUE_NONE, NULL, NULL, "phase timings"},
    {{"progress", optional_argument, NULL, OPT_PROGRESS}, GS_VALUE_NUMBER, NULL, "SECONDS",
      "progress on standard error"},
    {{"list-backends", no_argument, NULL, OPT_LIST}, GS_VALUE_NONE, NULL, NULL,
      "list the plugins found"},
    {{"verbose", no_argument, NULL, 'v'}, GS_VALUE_NONE, NULL, NULL,
      "more detail with --list-backends"},
    {{"completion", required_argument, NULL, OPT_COMPLETION}, GS_VALUE_CHOICE, shell_names, "SHELL",
      "print the shell's completion script"},
    {{"help", no_argument, NULL, 'h'}, GS_VALUE_NONE, NULL, NULL, "print the usage"},
    {{"version", no_argument, NULL, 'V'}, GS_VALUE_NONE, NULL, NULL, "print the version"},
};
#define OPTION_COUNT (sizeof option_table / sizeof *option_table)

const gs_option_spec *gs_options_table(size_t *count)
{
    *count = OPTION_COUNT;
    return option_table;
}

/* The value `text` names in `table`; -1 if none. */
static int find_named(const gs_named_value *table, const char *text, int *value)
{
    for (; table->name; ++table)
        if (strcmp(table->name, text) == 0) return *value = table->value, 0;
    return -1;
}

/* "NAME takes a, b or c, not 'TEXT'" into err, from the names of `table`. */
static gsmooth_status not_named(const char *option, const gs_named_value *table, const char *text,
                                char *err, size_t err_size)
{
    char names[128] = "";
    size_t used = 0;
    for (const gs_named_value *v = table; v->name && used < sizeof names; ++v)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                 v == table ? "" : v[1].name ? ", " : " or ", v->name);
    return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "%s takes %s, not '%s'", option, names, text);
}

/* The options that take a whole number: their range and the field they set. */
typedef struct numeric_option {
    int id;           /* getopt_long's value */
    const char *name; /* as typed */
    uint64_t lo, hi;  /* accepted range */
    size_t offset;    /* field in gs_options */
    size_t size;      /* its width: sizeof(uint32_t) or sizeof(uint64_t) */
} numeric_option;

static const numeric_option numeric_options[] = {
    {OPT_ITERS, "--iters", 0, GSMOOTH_MAX_ITERS, offsetof(gs_options, file.iters), sizeof(uint32_t)},
    {OPT_THREADS, "--threads", 1, GS_MAX_THREADS_OPTION, offsetof(gs_options, context.threads),
     sizeof(unsigned)},
    {OPT_MAX_PIXELS, "--max-pixels", 1, GS_MAX_PIXELS_OPTION, offsetof(gs_options, file.max_pixels),
     sizeof(uint64_t)},
    {OPT_JOBS, "--jobs", 1, GSMOOTH_MAX_JOBS, offsetof(gs_options, jobs), sizeof(unsigned)},
};
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "unsigned fields are stored as uint32_t");

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

/* Set the field of numeric option `opt` from `text`; GSMOOTH_ERR_USAGE with the range. */
static gsmooth_status set_number(gs_options *o, const numeric_option *opt, const char *text, char *err,
                            size_t err_size)
{
    uint64_t v;
    if (parse_u64(text, opt->lo, opt->hi, &v))
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "%s takes a whole number from %llu to %llu, not '%s'",
                       opt->name, (unsigned long long)opt->lo, (unsigned long long)opt->hi, text);
    unsigned char *field = (unsigned char *)o + opt->offset;
    if (opt->size == sizeof(uint32_t)) {
        uint32_t narrow = (uint32_t)v; /* hi fits: every 32-bit option's range does */
        memcpy(field, &narrow, sizeof narrow);
    } else {
        memcpy(field, &v, sizeof v);
    }
    return GSMOOTH_OK;
}

gsmooth_status gs_shard_parse(const char *text, uint32_t *index, uint32_t *count, char *err,
                              size_t err_size)
{
    const char *slash = strchr(text, '/');
    char head[32];
    uint64_t i = 0, n = 0;
    int ok = slash && text[0] >= '0' && text[0] <= '9' && slash[1] >= '0' && slash[1] <= '9' &&
             (size_t)(slash - text) < sizeof head;
    if (ok) {
        memcpy(head, text, (size_t)(slash - text));
        head[slash - text] = '\0';
        ok = parse_u64(head, 0, UINT32_MAX - 1, &i) == 0 && parse_u64(slash + 1, 1, UINT32_MAX, &n) == 0 &&
             i < n;
    }
    if (!ok)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                           "--shard takes I/N with 0 <= I < N (e.g. 0/4), not '%s'", text);
    *index = (uint32_t)i, *count = (uint32_t)n;
    return GSMOOTH_OK;
}

/* --progress's SECONDS: a whole or decimal number above 0 ("10", "0.5"); -1 on anything
 * else (a sign, an exponent, "inf": a log line interval is written plainly). */
static int parse_seconds(const char *s, double *out)
{
    size_t digits = strspn(s, "0123456789"), rest = 0;
    if (s[digits] == '.') rest = 1 + strspn(s + digits + 1, "0123456789");
    if ((digits == 0 && rest <= 1) || s[digits + rest] != '\0') return -1; /* no digit at all */
    double v = strtod(s, NULL);
    if (!(v > 0) || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static const numeric_option *find_numeric(int id)
{
    for (size_t i = 0; i < sizeof numeric_options / sizeof *numeric_options; ++i)
        if (numeric_options[i].id == id) return &numeric_options[i];
    return NULL;
}

void gs_options_print_help(FILE *to)
{
    fprintf(to,
        "Usage: gsmooth [OPTIONS] INPUT OUTPUT        smooth each row exactly (%u passes)\n"
        "       gsmooth --integral[=rows|2d] INPUT OUT.npy|OUT.tif|OUT.fits\n"
        "       gsmooth [OPTIONS] -o DIR INPUT...      batch: writes DIR/<input name>\n"
        "       gsmooth --list-backends [-v] | -h, --help | -V, --version\n"
        "\n"
        "  --iters K | --sigma S  passes, 0..%u (default %u), or K = round(3 S^2 / 2)\n"
        "  --axis x|y|xy          along rows (default), down columns, or both\n"
        "  --integral[=rows|2d]   prefix sums of each row, or the summed-area table\n"
        "  --depth keep|8|16|float  output samples (default: the input's; float: float32)\n"
        "  --backend B            auto (default), cpu, cuda, or a plugin .so path\n"
        "  --plugin-dir DIR, --devices all|0,1,...  where plugins are; which GPUs\n"
        "  --threads N, --max-pixels N              CPU threads; largest image taken\n"
        "  --compression fast|default|small|0..9    PNG/TIFF deflate; or --png-level N\n"
        "  -o, --output-dir DIR   batch mode (DIR made if missing); with --jobs N,\n"
        "                         --files-from FILE, --files0-from FILE, --shard I/N,\n"
        "                         --skip-existing, --relative-to ROOT (keep the tree),\n"
        "                         --manifest FILE (one JSON line per input)\n"
        "  --quiet, --time, -v/--verbose (with --list-backends), --completion bash|zsh\n"
        "  --progress[=S]         files, or one file's rows: a bar on a terminal, else a\n"
        "                         line every S seconds (default %g)\n"
        "\n"
        "Reads PNG JPEG TIFF WebP GIF BMP TGA PNM PSD HDR FITS NPY ('-': stdin); colour\n"
        "becomes gray (BT.601). Writes by extension .png .pgm .tif .bmp .tga .jpg .fits\n"
        ".npy; integrals exactly to .npy .tif .fits ('-': PNG to stdout, not a terminal).\n"
        "Exit 0: done, 1: failed at run time, 2: usage error. More: man gsmooth.\n",
        GSMOOTH_DEFAULT_ITERS, GSMOOTH_MAX_ITERS, GSMOOTH_DEFAULT_ITERS, GS_PROGRESS_SECONDS);
}

/* --sigma's passes: K = round(3 S^2 / 2), the K whose variance 2K/3 is closest to S^2;
 * GSMOOTH_ERR_USAGE for anything but a number in (0, the largest sigma of MAX_ITERS]. */
gsmooth_status gs_sigma_passes(const char *text, uint32_t *passes, char *err, size_t err_size)
{
    char *end = NULL;
    errno = 0;
    const double s = text && *text ? strtod(text, &end) : -1;
    const double k = 1.5 * s * s;
    if (!text || !*text || errno || *end || !(s > 0) || k + 0.5 > GSMOOTH_MAX_ITERS)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                           "--sigma takes a number of pixels above 0 (at most %.1f), not '%s'",
                           sqrt((GSMOOTH_MAX_ITERS - 0.5) / 1.5), text ? text : "");
    *passes = (uint32_t)(k + 0.5);
    return GSMOOTH_OK;
}

/* The CPU plugin's instruction-set cap: one of its names, or not set. */
static int cpu_isa_cap_valid(const char *cap)
{
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    if (!cap || !*cap) return 1;
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
        if (strcmp(cap, names[i]) == 0) return 1;
    return 0;
}

gsmooth_status gs_options_parse(int argc, char **argv, gs_options *o, char *err, size_t err_size)
{
    memset(o, 0, sizeof *o);
    o->action = GS_ACTION_RUN;
    gsmooth_context_options_init(&o->context);
    gsmooth_file_options_init(&o->file);
    const char *env_backend = getenv("GSMOOTH_BACKEND");
    o->context.backend = env_backend && *env_backend ? env_backend : "auto";
    o->shard_count = 1;
    o->progress_seconds = GS_PROGRESS_SECONDS;
    const char *devices = getenv("GSMOOTH_DEVICES");
    o->devices_from = "GSMOOTH_DEVICES";
    int iters_given = 0, shard_given = 0, compression_given = 0, verbose_given = 0;
    const char *sigma = NULL;
    int integral_bare = 0; /* --integral without =MODE: a following "2d" was meant as its mode */

    /* getopt_long's tables from option_table: the long options, and the short ones (each
     * with a letter for its value; ':' first, so a missing value is told apart). */
    struct option long_options[OPTION_COUNT + 1];
    char short_options[2 * OPTION_COUNT + 2] = ":";
    size_t shorts = 1;
    for (size_t i = 0; i < OPTION_COUNT; ++i) {
        long_options[i] = option_table[i].getopt;
        if (option_table[i].getopt.val < 256) {
            short_options[shorts++] = (char)option_table[i].getopt.val;
            if (option_table[i].getopt.has_arg == required_argument) short_options[shorts++] = ':';
        }
    }
    long_options[OPTION_COUNT] = (struct option){NULL, 0, NULL, 0};
    short_options[shorts] = '\0';

    opterr = 0; /* we print our own one-line errors */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        const numeric_option *numeric = find_numeric(c);
        if (numeric) {
            if (set_number(o, numeric, optarg, err, err_size) != GSMOOTH_OK) return GSMOOTH_ERR_USAGE;
            iters_given |= c == OPT_ITERS;
            continue;
        }
        switch (c) {
        case OPT_INTEGRAL: {
            int kind = GSMOOTH_WORK_INTEGRAL_ROWS;
            integral_bare = !optarg;
            if (optarg && find_named(integral_names, optarg, &kind) != 0)
                return not_named("--integral", integral_names, optarg, err, err_size);
            o->file.kind = (gsmooth_work_kind)kind;
            break;
        }
        case OPT_AXIS: {
            int axes;
            if (find_named(axis_names, optarg, &axes) != 0)
                return not_named("--axis", axis_names, optarg, err, err_size);
            o->file.axes = (uint32_t)axes;
            break;
        }
        case OPT_BACKEND: o->context.backend = optarg; break;
        case OPT_PLUGIN_DIR: o->context.plugin_dir = optarg; break;
        case OPT_DEPTH: {
            int depth;
            if (find_named(depth_names, optarg, &depth) != 0)
                return not_named("--depth", depth_names, optarg, err, err_size);
            o->file.depth = (uint32_t)depth;
            break;
        }
        case OPT_COMPLETION: {
            int shell;
            if (find_named(shell_names, optarg, &shell) != 0)
                return not_named("--completion", shell_names, optarg, err, err_size);
            o->completion = (gs_shell)shell;
            o->action = GS_ACTION_COMPLETION;
            break;
        }
        case OPT_PNG_LEVEL:
        case OPT_COMPRESSION:
            if (gsmooth_compression_parse(optarg, &o->file.compression, err, err_size) != GSMOOTH_OK) {
                char why[GSMOOTH_ERR_SIZE];
                snprintf(why, sizeof why, "%s", err);
                return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "%s: %s",
                                   c == OPT_COMPRESSION ? "--compression" : "--png-level", why);
            }
            compression_given = 1;
            break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_PROGRESS:
            if (optarg && parse_seconds(optarg, &o->progress_seconds) != 0)
                return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                                   "--progress takes seconds above 0, like 10 or 0.5, not '%s'", optarg);
            o->progress = 1;
            break;
        case OPT_TIME: o->time = 1; break;
        case OPT_LIST: o->action = GS_ACTION_LIST; break;
        case 'h': o->action = GS_ACTION_HELP; break;
        case 'V': o->action = GS_ACTION_VERSION; break;
        case OPT_SIGMA: sigma = optarg; break;
        case 'v': o->verbose = 1, verbose_given = 1; break;
        case 'o': o->out_dir = optarg; break;
        case OPT_FILES_FROM:
        case OPT_FILES0_FROM:
            if (o->list_count == GS_MAX_LIST_OPTIONS)
                return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "at most %d --files-from/--files0-from",
                               GS_MAX_LIST_OPTIONS);
            o->lists[o->list_count++] = (gs_list_option){optarg, c == OPT_FILES_FROM ? '\n' : '\0'};
            break;
        case OPT_SHARD:
            if (gs_shard_parse(optarg, &o->shard_index, &o->shard_count, err, err_size) != GSMOOTH_OK)
                return GSMOOTH_ERR_USAGE;
            shard_given = 1;
            break;
        case OPT_SKIP_EXISTING: o->file.skip_existing = 1; break;
        case OPT_MANIFEST:
            if (!*optarg) return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--manifest needs a file name");
            o->manifest = optarg;
            break;
        case OPT_DEVICES: devices = optarg, o->devices_from = "--devices"; break;
        case OPT_RELATIVE_TO:
            if (!*optarg) return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--relative-to needs a directory");
            o->relative_to = optarg;
            break;
        case ':':
            return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "option '%s' needs a value",
                           argv[optind - 1]);
        default: {
            /* getopt_long takes a unique prefix; one that starts two names gets here too. */
            const char *typed = argv[optind - 1];
            size_t len = strncmp(typed, "--", 2) == 0 ? strcspn(typed + 2, "=") : 0;
            unsigned starts = 0;
            for (size_t i = 0; len && i < OPTION_COUNT; ++i)
                starts += strncmp(option_table[i].getopt.name, typed + 2, len) == 0;
            if (starts > 1)
                return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                                   "ambiguous option '%s' (it starts %u option names)", typed, starts);
            return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "unknown option '%s'", typed);
        }
        }
    }
    static const char *const action_names[] = {"", "--help", "--version", "--list-backends", "--completion"};
    if (o->action != GS_ACTION_RUN && optind < argc)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "%s takes no arguments, not '%s'",
                           action_names[o->action], argv[optind]);
    if (verbose_given && o->action != GS_ACTION_LIST)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "-v applies to --list-backends only");
    if (!cpu_isa_cap_valid(getenv("GSMOOTH_CPU_ISA")))
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                           "GSMOOTH_CPU_ISA=%s: expected scalar, avx2 or avx512", getenv("GSMOOTH_CPU_ISA"));
    if (o->action != GS_ACTION_RUN) return GSMOOTH_OK;
    if (sigma) {
        if (iters_given)
            return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                               "--sigma and --iters both set the passes: give one");
        if (gs_sigma_passes(sigma, &o->file.iters, err, err_size) != GSMOOTH_OK) return GSMOOTH_ERR_USAGE;
        o->sigma = sigma;
    }
    /* The library checks the devices when the context is made (main names the setting). */
    if (devices && *devices) o->context.devices = devices;
    if (*o->context.backend == '\0')
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--backend needs a name or a path");
    if (!compression_given) { /* the variable is a default: an invalid value is ignored */
        const char *env = getenv("GSMOOTH_PNG_LEVEL");
        int level;
        if (env && gsmooth_compression_parse(env, &level, NULL, 0) == GSMOOTH_OK) o->file.compression = level;
    }
    /* Deflate on as many threads as the kernel; without --threads, GSMOOTH_PNG_THREADS
     * (a count; 0 or invalid: the library's choice). */
    o->file.encode_threads = o->context.threads;
    const char *png_threads = getenv("GSMOOTH_PNG_THREADS");
    uint64_t env_threads;
    if (!o->context.threads && png_threads && parse_u64(png_threads, 0, 16, &env_threads) == 0)
        o->file.encode_threads = (unsigned)env_threads;
    const int smoothing = o->file.kind == GSMOOTH_WORK_SMOOTH;
    if (!smoothing && (iters_given || sigma))
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "%s does not apply to --integral",
                           sigma ? "--sigma" : "--iters");
    if (!smoothing && o->file.axes & GSMOOTH_AXIS_Y)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                       "--axis applies to smoothing; --integral=2d sums down the columns too");
    if (!smoothing && o->file.depth != 0)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--depth does not apply to --integral");

    unsigned from_stdin = 0;
    for (unsigned i = 0; i < o->list_count; ++i) from_stdin += strcmp(o->lists[i].path, "-") == 0;
    if (from_stdin > 1)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "standard input can hold only one list ('-' given %u times)",
                       from_stdin);
    o->inputs = argv + optind;
    o->input_count = argc - optind;
    if (o->out_dir) {
        if (o->input_count < 1 && o->list_count == 0)
            return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                           "-o DIR needs at least one INPUT, --files-from or --files0-from");
        return GSMOOTH_OK;
    }
    if (o->list_count)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--files-from and --files0-from need -o DIR");
    if (shard_given) return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--shard needs -o DIR");
    if (o->input_count == 3 && !smoothing && integral_bare &&
        (strcmp(o->inputs[0], "rows") == 0 || strcmp(o->inputs[0], "2d") == 0))
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                           "too many arguments: for the integral's mode write --integral=%s", o->inputs[0]);
    if (o->relative_to) return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--relative-to needs -o DIR");
    if (o->input_count != 2)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE,
                       o->input_count < 2 ? "missing INPUT or OUTPUT (try --help)"
                                          : "too many arguments: give INPUT OUTPUT, or -o DIR for several inputs");
    o->output = o->inputs[1];
    o->input_count = 1;
    if (o->manifest && strcmp(o->manifest, "-") == 0 && strcmp(o->output, "-") == 0)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_USAGE, "--manifest - and OUTPUT - would share standard output");
    return GSMOOTH_OK;
}
