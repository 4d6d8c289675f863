/* batch.c: libgsmooth's batch: input lists, and many files into a directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (!inputs || !path) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    return gs_input_list_add(&inputs->list, path, strlen(path), err, err_size);
}

gsmooth_status gsmooth_inputs_read(gsmooth_inputs *inputs, const char *list_file, char separator,
                                   char *err, size_t err_size)
{
    if (!inputs || !list_file) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    if (separator != '\n' && separator != '\0')
        return gs_fail(err, err_size, GS_ERR_USAGE, "a list is split at newlines or NULs");
    return gs_input_list_read(&inputs->list, list_file, separator, err, err_size);
}

size_t gsmooth_inputs_count(const gsmooth_inputs *inputs) { return inputs ? inputs->list.count : 0; }

void gsmooth_batch_options_init(gsmooth_batch_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->shard_count = 1;
}

gsmooth_status gsmooth_batch(gsmooth_context *ctx, const gsmooth_batch_options *o,
                             const gsmooth_inputs *inputs, gsmooth_batch_result *result, char *err,
                             size_t err_size)
{
    if (!ctx || !o || !inputs) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    gs_status rc = result ? gs_struct_out_check(result, GS_MIN_BATCH_RESULT, "batch result", err, err_size)
                          : GS_OK;
    if (rc != GS_OK) return rc;
    gsmooth_batch_result full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    if (result) gs_struct_out(result, &full, sizeof full); /* zeros until the batch has run */
    if (o->struct_size == sizeof(gs_batch_options_0_2))
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "batch options of version 0.2 (the file options held by value): rebuild "
                       "against gsmooth.h 0.3");
    gsmooth_batch_options given;
    gsmooth_batch_options_init(&given);
    rc = gs_struct_in(&given, sizeof given, o, GS_MIN_BATCH_OPTIONS, "batch options", err, err_size);
    if (rc != GS_OK) return rc;
    o = &given;
    if (!o->out_dir) return gs_fail(err, err_size, GS_ERR_USAGE, "no output directory");
    if (o->shard_count == 0 || o->shard_index >= o->shard_count)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "shard_index is below shard_count, and shard_count at least 1, not %u of %u",
                       o->shard_index, o->shard_count);
    gsmooth_file_options file;
    rc = gs_file_options_in(o->file, &file, err, err_size);
    if (rc != GS_OK) return rc;
    if (o->relative_to && !*o->relative_to)
        return gs_fail(err, err_size, GS_ERR_USAGE, "relative_to is NULL or a directory name, not empty");
    rc = gs_make_dirs(o->out_dir, err, err_size);
    if (rc != GS_OK) return rc;
    gs_batch_request request = {.compression = file.compression,
                                .encode_threads = file.encode_threads,
                                .inputs = &inputs->list,
                                .shard = {o->shard_index, o->shard_count},
                                .out_dir = o->out_dir,
                                .relative_to = o->relative_to,
                                .jobs = o->jobs,
                                .threads = ctx->instances.threads,
                                .skip_existing = file.skip_existing};
    gs_work_of(&file, &request.work);
    gs_batch_events events = {o->finished, o->progress, o->user, ctx->note ? gs_context_note : NULL, ctx};
    pthread_mutex_lock(&ctx->call);
    gs_batch_run(&ctx->pool, &request, &events, &full);
    pthread_mutex_unlock(&ctx->call);
    if (result) gs_struct_out(result, &full, sizeof full);
    if (full.failed)
        return gs_fail(err, err_size, GS_ERR_IO, "%u of %u file%s failed", full.failed, full.files,
                       full.files == 1 ? "" : "s");
    return GSMOOTH_OK;
}

gsmooth_status gsmooth_make_directories(const char *dir, char *err, size_t err_size)
{
    if (!dir || !*dir) return gs_fail(err, err_size, GS_ERR_USAGE, "no directory name");
    return gs_make_dirs(dir, err, err_size);
}
