/* files.c: libgsmooth file to file: the work a file call describes, run through the pipeline. */
#include <string.h>

#include "image_io.h"
#include "library.h"
#include "pipeline.h"
#include "temp_files.h"

void gsmooth_file_options_init(gsmooth_file_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->kind = GSMOOTH_WORK_SMOOTH;
    o->iters = GSMOOTH_DEFAULT_ITERS;
    o->axes = GSMOOTH_AXIS_X;
    o->max_pixels = GSMOOTH_DEFAULT_MAX_PIXELS;
    o->compression = GSMOOTH_COMPRESSION_DEFAULT;
}

gs_status gs_file_options_in(const gsmooth_file_options *given, gsmooth_file_options *full, char *err,
                             size_t err_size)
{
    gsmooth_file_options_init(full);
    if (!given) return GS_OK;
    gs_status rc = gs_struct_in(full, sizeof *full, given, GS_MIN_FILE_OPTIONS, "file options", err,
                                err_size);
    if (rc != GS_OK) return rc;
    if (full->kind != GSMOOTH_WORK_SMOOTH && full->kind != GSMOOTH_WORK_INTEGRAL_ROWS &&
        full->kind != GSMOOTH_WORK_INTEGRAL_2D)
        return gs_fail(err, err_size, GS_ERR_USAGE, "unknown work kind %d", (int)full->kind);
    rc = gs_check_smoothing(full->iters, full->axes, err, err_size);
    if (rc != GS_OK) return rc;
    if (full->depth != 0 && full->depth != 8 && full->depth != 16 && full->depth != 32)
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "depth is 0 (the input's), 8, 16 or 32 (float32), not %u",
                       full->depth);
    if (full->compression != GSMOOTH_COMPRESSION_DEFAULT &&
        (full->compression < 0 || full->compression > GSMOOTH_COMPRESSION_MAX))
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "compression is GSMOOTH_COMPRESSION_DEFAULT or a level 0..%d, not %d",
                       GSMOOTH_COMPRESSION_MAX, full->compression);
    return GS_OK;
}

void gs_work_of(const gsmooth_file_options *o, gs_work *w)
{
    memset(w, 0, sizeof *w);
    w->mode = o->kind == GSMOOTH_WORK_INTEGRAL_ROWS ? GS_MODE_INTEGRAL_ROWS
              : o->kind == GSMOOTH_WORK_INTEGRAL_2D ? GS_MODE_INTEGRAL_2D
                                                    : GS_MODE_SMOOTH;
    w->iters = o->iters;
    w->axes = o->axes ? o->axes : GS_AXIS_X;
    w->depth = (gs_depth_choice)o->depth;
    w->max_pixels = o->max_pixels ? o->max_pixels : GSMOOTH_DEFAULT_MAX_PIXELS;
}

gs_encode_settings gs_encode_of(const gsmooth_file_options *o, unsigned batch_threads)
{
    return gs_encode_settings_make(o->compression, o->encode_threads ? o->encode_threads : batch_threads);
}

gsmooth_status gsmooth_compression_parse(const char *text, int *level, char *err, size_t err_size)
{
    if (!level) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    return gs_encode_level_parse(text, level, err, err_size);
}

gsmooth_status gsmooth_file(gsmooth_context *ctx, const gsmooth_file_options *o, const char *input,
                            const char *output, gsmooth_file_result *result, char *err,
                            size_t err_size)
{
    if (!ctx || !input || !output) return gs_fail(err, err_size, GS_ERR_USAGE, "null argument");
    gs_status rc = result ? gs_struct_out_check(result, GS_MIN_FILE_RESULT, "file result", err, err_size)
                          : GS_OK;
    if (rc != GS_OK) return rc;
    gsmooth_file_options full;
    rc = gs_file_options_in(o, &full, err, err_size);
    if (rc != GS_OK) return rc;
    gs_work work;
    gs_work_of(&full, &work);
    gsmooth_file_result out;
    gs_file_result_of(NULL, NULL, &out);
    if (full.skip_existing && strcmp(output, "-") != 0 && gs_output_exists(output)) {
        out.skipped = 1;
        if (result) gs_struct_out(result, &out, sizeof out);
        return GS_OK;
    }
    gs_job job = {work, gs_encode_of(&full, 0), gs_instances_select, &ctx->instances,
                  ctx->note ? gs_context_note : NULL, gs_instances_runners, gs_instances_runner, ctx,
                  full.progress, full.progress_user};
    gs_phase_times t;
    gs_image_facts facts;
    pthread_mutex_lock(&ctx->call);
    rc = gs_pipeline_run(&job, input, output, &t, &facts, err, err_size);
    pthread_mutex_unlock(&ctx->call);
    gs_file_result_of(&facts, &t, &out);
    if (result) gs_struct_out(result, &out, sizeof out);
    return rc;
}

void gsmooth_remove_temporaries_on_signals(void) { gs_temp_install_signal_cleanup(); }
