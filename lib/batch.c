/* batch.c: libgsmooth's batch: input lists, and many files into a directory on a pool of workers (the pipeline's batch behind the public outcome and options). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_run.h"
#include "input_list.h"
#include "library.h"

struct gsmooth_inputs {
    gs_input_list list;
};

gsmooth_inputs *gsmooth_inputs_create(void)
{
    gsmooth_inputs *in = calloc(1, sizeof *in);
    if (in) gs_input_list_init(&in->list);
    return in;
}

void gsmooth_inputs_destroy(gsmooth_inputs *inputs)
{
    if (!inputs) return;
    gs_input_list_free(&inputs->list);
    free(inputs);
}

gsmooth_status gsmooth_inputs_add(gsmooth_inputs *inputs, const char *path, char *err, size_t err_size)
{
    if (!inputs || !path) return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "null argument"));
    return gs_public_status(gs_input_list_add(&inputs->list, path, strlen(path), err, err_size));
}

gsmooth_status gsmooth_inputs_read(gsmooth_inputs *inputs, const char *list_file, char separator,
                                   char *err, size_t err_size)
{
    if (!inputs || !list_file) return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "null argument"));
    if (separator != '\n' && separator != '\0')
        return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "a list is split at newlines or NULs"));
    return gs_public_status(gs_input_list_read(&inputs->list, list_file, separator, err, err_size));
}

size_t gsmooth_inputs_count(const gsmooth_inputs *inputs) { return inputs ? inputs->list.count : 0; }

void gsmooth_batch_options_init(gsmooth_batch_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    gsmooth_file_options_init(&o->file);
    o->shard_count = 1;
}

/* The caller's options and callbacks, behind the pipeline's batch events. */
typedef struct batch_relay {
    const gsmooth_batch_options *options;
    gsmooth_context *ctx;
} batch_relay;

static void relay_finished(void *arg, const gs_file_outcome *o)
{
    const batch_relay *r = arg;
    if (!r->options->finished) return;
    gsmooth_file_outcome out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    out.input = o->input, out.output = o->output, out.status = (gsmooth_file_status)o->status;
    out.error = o->error, out.ms = o->ms;
    gs_file_result_of(&o->facts, o->times, &out.result);
    r->options->finished(r->options->user, &out);
}

static void relay_progress(void *arg, unsigned done, unsigned total, uint64_t bytes, double elapsed,
                           double eta)
{
    const batch_relay *r = arg;
    r->options->progress(r->options->user, done, total, bytes, elapsed, eta);
}

static void relay_note(void *arg, const char *file, const char *message)
{
    const batch_relay *r = arg;
    gs_context_note(r->ctx, file, message);
}

_Static_assert((int)GSMOOTH_FILE_OK == (int)GS_FILE_OK && (int)GSMOOTH_FILE_FAILED == (int)GS_FILE_FAILED &&
                   (int)GSMOOTH_FILE_SKIPPED == (int)GS_FILE_SKIPPED,
               "public and internal file statuses agree");

gsmooth_status gsmooth_batch(gsmooth_context *ctx, const gsmooth_batch_options *o,
                             const gsmooth_inputs *inputs, gsmooth_batch_result *result, char *err,
                             size_t err_size)
{
    if (!ctx || !o || !inputs)
        return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "null argument"));
    gs_status rc = result ? gs_struct_out_check(result, GS_SIZE_0_2_BATCH_RESULT, "batch result", err, err_size)
                          : GS_OK;
    if (rc != GS_OK) return gs_public_status(rc);
    gsmooth_batch_result full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    if (result) gs_struct_out(result, &full, sizeof full); /* zeros until the batch has run */
    gsmooth_batch_options given;
    gsmooth_batch_options_init(&given);
    rc = gs_struct_in(&given, sizeof given, o, GS_SIZE_0_2_BATCH_OPTIONS, "batch options", err, err_size);
    if (rc != GS_OK) return gs_public_status(rc);
    o = &given;
    if (!o->out_dir) return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "no output directory"));
    if (o->shard_count == 0 || o->shard_index >= o->shard_count)
        return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE,
                                        "--shard takes I/N with 0 <= I < N, not %u/%u", o->shard_index,
                                        o->shard_count));
    gs_work work;
    rc = gs_work_of(&o->file, &work, err, err_size);
    if (rc != GS_OK) return gs_public_status(rc);
    struct stat sb;
    if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return gs_public_status(gs_fail(err, err_size, GS_ERR_IO, "%s: output directory does not exist",
                                        o->out_dir));
    batch_relay relay = {o, ctx};
    gs_batch_events events = {relay_finished, o->progress ? relay_progress : NULL,
                              ctx->note ? relay_note : NULL, &relay};
    gs_batch_request request = {work, &inputs->list, {o->shard_index, o->shard_count}, o->out_dir,
                                o->jobs, ctx->instances.threads, o->skip_existing};
    gs_batch_result r;
    pthread_mutex_lock(&ctx->call);
    gs_batch_run(&ctx->pool, &request, &events, &r);
    pthread_mutex_unlock(&ctx->call);
    full = (gsmooth_batch_result){sizeof full, r.files, r.done, r.failed, r.skipped, r.elapsed_s, r.bytes};
    if (result) gs_struct_out(result, &full, sizeof full);
    if (r.failed)
        return gs_public_status(gs_fail(err, err_size, GS_ERR_IO, "%u of %u file%s failed", r.failed,
                                        r.files, r.files == 1 ? "" : "s"));
    return GSMOOTH_OK;
}
