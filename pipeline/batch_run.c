/* batch_run.c: a worker pool over one shard of an input list, reporting every outcome. */
/* Each worker owns its backend instances; two inputs that would share an output are
 * refused over the whole list; finished outputs may be skipped. */
#define _GNU_SOURCE
#include "batch_run.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image_io.h"
#include "usable_cpus.h"

/* One slot of the table of output names: position + 1 of the first input that has it
 * (0: empty), and 32 bits of the name's hash so most probes compare no strings. */
typedef struct output_slot {
    uint32_t position1;
    uint32_t hash;
} output_slot;

typedef struct batch {
    gs_backend_pool *pool;            /* backends */
    const gs_batch_request *req;    /* what to do */
    const gs_batch_events *events;  /* the caller's reporting */
    gs_batch_naming naming;         /* how outputs are named (root and cwd point below) */
    char root[PATH_MAX];            /* request->relative_to made absolute, if given */
    char cwd[PATH_MAX];             /* the working directory, if relative_to is given */
    unsigned threads;               /* CPU threads per file */
    gs_encode_settings encode;      /* how each output is compressed */
    output_slot *outputs;           /* open addressing over every position of the list */
    size_t output_mask;             /* slots - 1 (a power of two, at least twice the list) */
    pthread_mutex_t lock;           /* guards everything below and serialises events */
    uint32_t next;                  /* next shard entry to take */
    unsigned jobs;                  /* workers */
    unsigned next_worker;           /* index of the next worker to start */
    gsmooth_batch_result result;    /* running totals */
    double start_s;                 /* wall clock at start */
} batch;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void gs_batch_plan(unsigned files, unsigned jobs_opt, unsigned threads_opt, unsigned cores,
                   unsigned *jobs, unsigned *threads)
{
    unsigned j = jobs_opt ? jobs_opt : cores;
    if (j > files) j = files;
    if (j < 1) j = 1;
    *jobs = j;
    *threads = threads_opt ? threads_opt : (cores / j ? cores / j : 1);
}

/* DIR/<sub><name> when smoothing into a format gsmooth writes exactly (.png .pgm .bmp
 * .tga .tif .npy .fits); any other input (.jpg, .gif, .ppm, ...) becomes <sub><stem>.png,
 * so a batch never loses precision to a lossy encoder the user did not ask for by name.
 * Smoothing to float32 keeps only the names of formats that store it (.tif .npy .fits), and
 * makes the rest <stem>.tif, the float format most viewers read. An integral is always
 * <stem>.npy (an .npy input's own name already is). `sub` is empty or ends in '/'. */
static int join_output(const gs_batch_naming *n, const char *sub, size_t sub_len, const char *name,
                       size_t name_len, char *out, size_t size)
{
    if (name_len == 0 || name_len >= NAME_MAX + 1) return GS_BATCH_NAME_UNFIT;
    char base[NAME_MAX + 1];
    memcpy(base, name, name_len);
    base[name_len] = '\0';
    gs_out_format fmt;
    int writable = gs_out_format_from_path(base, &fmt, NULL, 0) == GS_OK && gs_out_format_lossless(fmt);
    if (n->mode != GS_MODE_SMOOTH) writable = writable && fmt == GS_OUT_NPY;
    else if (n->float_out) writable = writable && gs_out_format_takes_float(fmt);
    int dir_len = (int)strlen(n->dir);
    while (dir_len > 1 && n->dir[dir_len - 1] == '/') --dir_len; /* "out/" gives out/x.png */
    const char *dot = strrchr(base, '.');
    int stem = !writable && dot && dot != base ? (int)(dot - base) : (int)name_len;
    const char *ext = writable ? "" : n->mode != GS_MODE_SMOOTH ? ".npy" : n->float_out ? ".tif" : ".png";
    int w = snprintf(out, size, "%.*s/%.*s%.*s%s", dir_len, n->dir, (int)sub_len, sub, stem, base, ext);
    return w >= 0 && (size_t)w < size ? GS_BATCH_NAME_OK : GS_BATCH_NAME_UNFIT;
}

int gs_batch_output_path(const gs_batch_naming *n, const char *input, char *out, size_t size)
{
    const char *path = input;
    size_t len = strlen(input);
    char abs[PATH_MAX];
    if (n->root) {
        if (gs_path_absolute(n->cwd, input, abs, sizeof abs) != 0) return GS_BATCH_NAME_UNFIT;
        size_t root_len = strlen(n->root);
        if (root_len == 1) root_len = 0; /* "/": the separator after it is its own slash */
        if (strncmp(abs, n->root, root_len) != 0 || abs[root_len] != '/' || abs[root_len + 1] == '\0')
            return GS_BATCH_NAME_OUTSIDE; /* elsewhere, a sibling like root2/, or the root itself */
        path = abs + root_len + 1;
        len = strlen(path);
    } else {
        while (len > 1 && input[len - 1] == '/') --len; /* "a/b/" names b */
    }
    const char *name = path + len;
    while (name > path && name[-1] != '/') --name;
    return join_output(n, path, n->root ? (size_t)(name - path) : 0, name, (size_t)(path + len - name),
                       out, size);
}

int gs_path_absolute(const char *cwd, const char *path, char *out, size_t size)
{
    size_t used = 0; /* out[0, used) holds "/a/b"; empty is the root */
    const char *parts[2] = {path[0] == '/' ? "" : cwd, path};
    for (int k = 0; k < 2; ++k) {
        for (const char *p = parts[k]; *p;) {
            while (*p == '/') ++p;
            const char *end = p;
            while (*end && *end != '/') ++end;
            const size_t n = (size_t)(end - p);
            if (n == 2 && p[0] == '.' && p[1] == '.') { /* up one; the root's parent is the root */
                while (used > 0 && out[used - 1] != '/') --used;
                if (used > 0) --used;
            } else if (n > 0 && !(n == 1 && p[0] == '.')) {
                if (used + 1 + n >= size) return -1;
                out[used++] = '/';
                memcpy(out + used, p, n);
                used += n;
            }
            p = end;
        }
    }
    if (size < 2) return -1;
    if (used == 0) out[used++] = '/';
    out[used] = '\0';
    return 0;
}

gs_status gs_make_dirs(const char *dir, char *err, size_t err_size)
{
    struct stat sb;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) return GS_OK; /* the common case: one call */
    char path[PATH_MAX];
    const size_t len = strlen(dir);
    if (len >= sizeof path) return gs_fail(err, err_size, GS_ERR_IO, "%s: directory name too long", dir);
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; ++i) {
        if ((path[i] != '/' && path[i] != '\0') || path[i - 1] == '/') continue;
        const char keep = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0) {
            /* EEXIST: it was there, or another process made it just now. Any error is
             * success when a directory stands there (mkdir may say EACCES or EROFS first). */
            const int e = errno;
            if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                if (e == EEXIST || e == ENOTDIR)
                    return gs_fail(err, err_size, GS_ERR_IO, "%s: exists and is not a directory", path);
                return gs_fail(err, err_size, GS_ERR_IO, "%s: cannot create directory: %s", path,
                               strerror(e));
            }
        }
        path[i] = keep;
    }
    return GS_OK;
}

/* ---- the table of output names: which earlier input already has an input's output ---- */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The 32 bits of a name's hash a slot keeps (the low bits already chose the slot). */
static uint32_t name_tag(uint64_t h) { return (uint32_t)(h ^ (h >> 32)); }

/* The slot holding `out`'s first user, or the empty slot where it would go. */
static output_slot *find_slot(const batch *b, const char *out, char *scratch, size_t scratch_size)
{
    const gs_batch_request *req = b->req;
    uint64_t h = name_hash(out);
    uint32_t tag = name_tag(h);
    for (size_t i = (size_t)h & b->output_mask;; i = (i + 1) & b->output_mask) {
        output_slot *s = &b->outputs[i];
        if (!s->position1) return s;
        if (s->hash == tag &&
            gs_batch_output_path(&b->naming, gs_input_list_at(req->inputs, s->position1 - 1), scratch,
                                 scratch_size) == GS_BATCH_NAME_OK &&
            strcmp(scratch, out) == 0)
            return s;
    }
}

/* Every position of the full list (all shards: tasks must agree on who is first), in
 * linear time. 0, or -1 when out of memory. */
static int plan_outputs(batch *b)
{
    const gs_batch_request *req = b->req;
    size_t slots = 16;
    while (slots < 2 * (size_t)req->inputs->count) slots *= 2;
    b->outputs = calloc(slots, sizeof *b->outputs);
    if (!b->outputs) return -1;
    b->output_mask = slots - 1;
    char out[PATH_MAX], scratch[PATH_MAX];
    for (uint32_t j = 0; j < req->inputs->count; ++j) {
        if (gs_batch_output_path(&b->naming, gs_input_list_at(req->inputs, j), out, sizeof out) !=
            GS_BATCH_NAME_OK)
            continue; /* fails when processed, with its reason */
        output_slot *s = find_slot(b, out, scratch, sizeof scratch);
        if (s->position1) continue; /* a later user: found again when it is processed */
        s->position1 = j + 1;
        s->hash = name_tag(name_hash(out));
    }
    return 0;
}

/* ---- one input ---- */

static gs_status process(batch *b, gs_instances *w, uint32_t j, gsmooth_file_outcome *o, char *out,
                         size_t out_size, char *err, size_t err_size, gsmooth_file_result *r)
{
    const gs_batch_request *req = b->req;
    const char *in = o->input;
    if (strcmp(in, "-") == 0)
        return gs_fail(err, err_size, GS_ERR_USAGE, "-: standard input cannot be used in batch mode");
    const int named = gs_batch_output_path(&b->naming, in, out, out_size);
    if (named == GS_BATCH_NAME_OUTSIDE)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: not inside %s, which output paths are relative to",
                       in, req->relative_to);
    if (named != GS_BATCH_NAME_OK)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: no output name can be formed from it in %s",
                       in, req->out_dir);
    o->output = out;
    char scratch[PATH_MAX];
    const output_slot *first = find_slot(b, out, scratch, sizeof scratch);
    if (first->position1 != j + 1) {
        const char *earlier = gs_input_list_at(req->inputs, first->position1 - 1);
        if (strcmp(earlier, in) == 0)
            return gs_fail(err, err_size, GS_ERR_USAGE, "%s: listed twice (first at position %u)", in,
                           first->position1 - 1);
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: its output %s is already the output of %s",
                       in, out, earlier);
    }
    struct stat in_sb, out_sb;
    if (stat(in, &in_sb) == 0 && stat(out, &out_sb) == 0 && in_sb.st_dev == out_sb.st_dev &&
        in_sb.st_ino == out_sb.st_ino)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%s: its output %s is the input itself", in, out);
    if (req->skip_existing && gs_output_exists(out)) {
        o->status = GSMOOTH_FILE_SKIPPED;
        r->skipped = 1;
        return GS_OK;
    }
    /* The output's directory: the tree below out_dir grows as its inputs need it. */
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(out, '/') - out), out);
    char why[GS_ERR_SIZE];
    if (gs_make_dirs(parent, why, sizeof why) != GS_OK)
        return gs_fail(err, err_size, GS_ERR_IO, "%s: %s", in, why);
    gs_job job = {req->work, b->encode, gs_instances_select, w, b->events->note, gs_instances_runners,
                  gs_instances_runner, b->events->note_user, NULL, NULL}; /* progress counts files */
    gs_phase_times t;
    gs_image_facts facts;
    gs_status rc = gs_pipeline_run(&job, in, out, &t, &facts, err, err_size);
    gs_file_result_of(&facts, rc == GS_OK ? &t : NULL, r);
    return rc;
}

static void *worker_main(void *arg)
{
    batch *b = arg;
    const gs_batch_request *req = b->req;
    gs_instances w;
    pthread_mutex_lock(&b->lock);
    unsigned index = b->next_worker++;
    pthread_mutex_unlock(&b->lock);
    gs_instances_init(&w, b->pool, b->threads);
    gs_instances_share_devices(&w, index, b->jobs); /* files spread over the devices, if any */
    for (;;) {
        pthread_mutex_lock(&b->lock);
        uint32_t k = b->next < b->result.files ? b->next++ : b->result.files;
        pthread_mutex_unlock(&b->lock);
        if (k >= b->result.files) break;
        const uint32_t j = gs_shard_position(req->shard, k);
        gsmooth_file_result r;
        gs_file_result_of(NULL, NULL, &r);
        gsmooth_file_outcome o = {.struct_size = sizeof o, .input = gs_input_list_at(req->inputs, j),
                                  .status = GSMOOTH_FILE_OK, .result = &r, .position = j};
        char out[PATH_MAX], err[GS_ERR_SIZE];
        double t0 = now_s();
        gs_status rc = process(b, &w, j, &o, out, sizeof out, err, sizeof err, &r);
        o.ms = (now_s() - t0) * 1e3;
        if (rc != GS_OK) o.status = GSMOOTH_FILE_FAILED, o.error = err;
        struct stat sb;
        uint64_t bytes = o.status == GSMOOTH_FILE_OK && stat(o.input, &sb) == 0 ? (uint64_t)sb.st_size : 0;

        pthread_mutex_lock(&b->lock);
        if (o.status == GSMOOTH_FILE_OK) b->result.done++, b->result.bytes += bytes;
        else if (o.status == GSMOOTH_FILE_SKIPPED) b->result.skipped++;
        else b->result.failed++;
        if (b->events->finished) b->events->finished(b->events->user, &o);
        unsigned finished = b->result.done + b->result.failed + b->result.skipped;
        double elapsed = now_s() - b->start_s;
        double eta = finished ? elapsed / finished * (b->result.files - finished) : 0;
        if (b->events->progress)
            b->events->progress(b->events->user, finished, b->result.files, b->result.bytes, elapsed, eta);
        pthread_mutex_unlock(&b->lock);
    }
    gs_instances_release(&w);
    return NULL;
}

/* Nothing was tried: every input of the shard fails with this one cause. */
static void fail_all(batch *b, const char *why)
{
    const gs_batch_request *req = b->req;
    for (uint32_t k = 0; k < b->result.files; ++k) {
        gsmooth_file_result r;
        gs_file_result_of(NULL, NULL, &r);
        const uint32_t j = gs_shard_position(req->shard, k);
        gsmooth_file_outcome o = {.struct_size = sizeof o,
                                  .input = gs_input_list_at(req->inputs, j),
                                  .status = GSMOOTH_FILE_FAILED,
                                  .error = why,
                                  .result = &r,
                                  .position = j};
        if (b->events->finished) b->events->finished(b->events->user, &o);
    }
    b->result.failed = b->result.files;
}

void gs_batch_run(gs_backend_pool *pool, const gs_batch_request *request,
                  const gs_batch_events *events, gsmooth_batch_result *result)
{
    batch b;
    memset(&b, 0, sizeof b);
    b.pool = pool;
    b.req = request;
    b.events = events;
    b.result.struct_size = sizeof b.result;
    b.result.files = gs_shard_size(request->shard, request->inputs->count);
    b.start_s = now_s();
    pthread_mutex_init(&b.lock, NULL);
    unsigned jobs;
    gs_batch_plan(b.result.files, request->jobs, request->threads, gs_usable_cpus(), &jobs, &b.threads);
    if (jobs > GSMOOTH_MAX_JOBS) jobs = GSMOOTH_MAX_JOBS;
    b.jobs = jobs;
    if (b.result.files == 0) goto cleanup;
    b.naming = (gs_batch_naming){request->out_dir, NULL, NULL, request->work.mode,
                                 request->work.depth == GS_DEPTH_TO_FLOAT};
    if (request->relative_to) {
        if (!getcwd(b.cwd, sizeof b.cwd) || gs_path_absolute(b.cwd, request->relative_to, b.root,
                                                             sizeof b.root) != 0) {
            fail_all(&b, "the directory output paths are relative to cannot be made absolute");
            goto cleanup;
        }
        b.naming.root = b.root, b.naming.cwd = b.cwd;
    }
    if (plan_outputs(&b) != 0) {
        fail_all(&b, "out of memory for the batch's table of outputs");
        goto cleanup;
    }
    /* Deflate threads per file, like the kernel's, unless the caller chose. */
    b.encode = gs_encode_settings_make(request->compression,
                                       request->encode_threads ? request->encode_threads : b.threads);

    pthread_t tid[GSMOOTH_MAX_JOBS];
    unsigned started = 0;
    for (unsigned j = 1; j < jobs; ++j) {
        if (pthread_create(&tid[j], NULL, worker_main, &b) != 0) break; /* fewer workers */
        started = j;
    }
    worker_main(&b); /* this thread is a worker too */
    for (unsigned j = 1; j <= started; ++j) pthread_join(tid[j], NULL);

cleanup:
    b.result.elapsed_s = now_s() - b.start_s;
    *result = b.result;
    free(b.outputs);
    pthread_mutex_destroy(&b.lock);
}
