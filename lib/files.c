/* files.c: libgsmooth file to file: the work a file call describes, and one image through the streaming pipeline (decode, backend strips over the context's devices, encode). */
#include <string.h>

#include "library.h"
#include "pipeline.h"

void gsmooth_file_options_init(gsmooth_file_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->kind = GSMOOTH_WORK_SMOOTH;
    o->iters = GS_DEFAULT_ITERS;
    o->axes = GSMOOTH_AXIS_X;
    o->max_pixels = GS_DEFAULT_MAX_PIXELS;
}

gs_status gs_work_of(const gsmooth_file_options *o, gs_work *w, char *err, size_t err_size)
{
    gsmooth_file_options given;
    gsmooth_file_options_init(&given);
    if (o) {
        gs_status rc = gs_struct_in(&given, sizeof given, o, GS_SIZE_0_2_FILE_OPTIONS, "file options",
                                    err, err_size);
        if (rc != GS_OK) return rc;
    }
    o = &given;
    if (o->kind != GSMOOTH_WORK_SMOOTH && o->kind != GSMOOTH_WORK_INTEGRAL_ROWS &&
        o->kind != GSMOOTH_WORK_INTEGRAL_2D)
        return gs_fail(err, err_size, GS_ERR_USAGE, "unknown work kind %d", (int)o->kind);
    gs_status rc = gs_check_smoothing(o->iters, o->axes, err, err_size);
    if (rc != GS_OK) return rc;
    if (o->depth != 0 && o->depth != 8 && o->depth != 16)
        return gs_fail(err, err_size, GS_ERR_USAGE, "--depth takes 8 or 16, not '%u'", o->depth);
    memset(w, 0, sizeof *w);
    w->mode = o->kind == GSMOOTH_WORK_INTEGRAL_ROWS ? GS_MODE_INTEGRAL_ROWS
              : o->kind == GSMOOTH_WORK_INTEGRAL_2D ? GS_MODE_INTEGRAL_2D
                                                    : GS_MODE_SMOOTH;
    w->iters = o->iters;
    w->axes = o->axes ? o->axes : GS_AXIS_X;
    w->depth = (gs_depth_choice)o->depth;
    w->max_pixels = o->max_pixels ? o->max_pixels : GS_DEFAULT_MAX_PIXELS;
    return GS_OK;
}

void gs_file_result_of(const gs_image_facts *facts, const gs_phase_times *t, gsmooth_file_result *r)
{
    memset(r, 0, sizeof *r);
    r->struct_size = sizeof *r;
    if (facts) {
        r->width = facts->width, r->height = facts->height, r->bits = facts->bits;
        r->backend = facts->backend;
    }
    if (t) {
        r->decode_ns = t->decode, r->upload_ns = t->upload, r->kernel_ns = t->kernel;
        r->download_ns = t->download, r->encode_ns = t->encode, r->total_ns = t->total;
    }
}

gsmooth_status gsmooth_file(gsmooth_context *ctx, const gsmooth_file_options *o, const char *input,
                            const char *output, gsmooth_file_result *result, char *err,
                            size_t err_size)
{
    if (!ctx || !input || !output)
        return gs_public_status(gs_fail(err, err_size, GS_ERR_USAGE, "null argument"));
    gs_status rc = result ? gs_struct_out_check(result, GS_SIZE_0_2_FILE_RESULT, "file result", err, err_size)
                          : GS_OK;
    if (rc != GS_OK) return gs_public_status(rc);
    gs_work work;
    rc = gs_work_of(o, &work, err, err_size);
    if (rc != GS_OK) return gs_public_status(rc);
    gs_job job = {work, gs_instances_select, &ctx->instances, ctx->note ? gs_context_note : NULL,
                  gs_instances_runners, gs_instances_runner, ctx};
    gs_phase_times t;
    gs_image_facts facts;
    pthread_mutex_lock(&ctx->call);
    rc = gs_pipeline_run(&job, input, output, &t, &facts, err, err_size);
    pthread_mutex_unlock(&ctx->call);
    gsmooth_file_result full;
    gs_file_result_of(&facts, &t, &full);
    if (result) gs_struct_out(result, &full, sizeof full);
    return gs_public_status(rc);
}
