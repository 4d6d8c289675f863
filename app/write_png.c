/* write_png.c: the PNG writer: 8- or 16-bit gray, rows Sub-filtered and deflated in chunks on worker threads (pigz-style, one zlib stream), the PNG container written by libpng. */
#include "image_io_internal.h"
#include "png_tuning.h"

#include <errno.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/*
 * Why not libpng's row writer: it filters and deflates on the caller's thread, one row at a
 * time, and offers no way to hand it IDAT data compressed elsewhere. libpng still writes
 * the container: signature and IHDR (png_write_info), each IDAT and IEND through its
 * public chunk API (png_write_chunk_start/_data/_end), which also computes the CRCs. Its default (all five
 * filters tried per row, zlib level 6) took 2.4 s of the 2.5 s end-to-end run on the
 * 4096x4096 benchmark mosaic; see bench/NOTES_E2E.md.
 *
 * The stream: filtered scanlines are cut into CHUNK_BYTES pieces. Each piece is deflated
 * on its own (raw deflate, primed with the previous piece's last 32 KiB, as pigz does) and
 * ends in a sync flush, so the pieces concatenate into one valid deflate stream; the zlib
 * header, the combined Adler-32 and the PNG chunks are added here, in order. Pieces are
 * cut by byte count alone, so the file is the same for every thread count.
 */

/* Filtered bytes per piece. Smaller pieces balance threads better; each costs one sync
 * flush (~5 bytes plus a fresh block header), and memory is the slots' pieces in and out.
 * 256 KiB: 0.03% larger than one unbroken stream on the mosaic (bench/NOTES_E2E.md). */
#define CHUNK_BYTES (256u << 10)
/* Deflate's window: the dictionary each piece is primed with. */
#define DICT_BYTES (32u << 10)
/* Pieces in flight per worker thread: one being deflated, one waiting, so a worker never
 * idles while the caller fills the next. */
#define SLOTS_PER_THREAD 2
/* A cap on worker threads however many CPUs there are: memory per writer stays bounded
 * (about 1.2 MiB per thread) and deflate stops scaling well before it. */
#define MAX_THREADS 16
/* zlib's memLevel default (8 = 128 KiB hash); 9 was 0.07% smaller and 3% slower at
 * level 1 on the mosaic: not worth its memory. */
#define ZLIB_MEM_LEVEL 8
/* zlib's raw-deflate window bits: negative = no zlib header (written here, once). */
#define RAW_WINDOW_BITS (-15)
/* PNG row filter types (PNG specification, section 9.2). */
#define FILTER_NONE 0
#define FILTER_SUB 1
_Static_assert(CHUNK_BYTES >= DICT_BYTES, "a full piece must hold a whole dictionary");
_Static_assert(CHUNK_BYTES <= (1u << 30), "a piece's deflated size must fit zlib's uInt and one IDAT");

/* ---- the process-wide setting (png_tuning.h) ---- */

static atomic_int level_setting = -1;   /* -1: not set, use the environment */
static atomic_uint threads_setting = 0; /* 0 with threads_set 0: environment, else CPUs */
static atomic_int threads_set = 0;

gs_status gs_png_level_parse(const char *text, int *level, char *err, size_t err_size)
{
    static const struct {
        const char *name;
        int level;
    } presets[] = {
        {"fast", GS_PNG_LEVEL_STORE}, {"default", GS_PNG_LEVEL_DEFAULT}, {"small", GS_PNG_LEVEL_SMALL}};
    for (size_t i = 0; text && i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(text, presets[i].name) == 0) {
            *level = presets[i].level;
            return GS_OK;
        }
    }
    if (text && text[0] >= '0' && text[0] <= '0' + GS_PNG_LEVEL_MAX && text[1] == '\0') {
        *level = text[0] - '0';
        return GS_OK;
    }
    return gs_fail(err, err_size, GS_ERR_USAGE,
                   "PNG compression '%s': use fast, default, small or a level 0..%d",
                   text ? text : "", GS_PNG_LEVEL_MAX);
}

gs_status gs_png_set_level(int level, char *err, size_t err_size)
{
    if (level < 0 || level > GS_PNG_LEVEL_MAX)
        return gs_fail(err, err_size, GS_ERR_USAGE, "PNG compression level %d is not 0..%d",
                       level, GS_PNG_LEVEL_MAX);
    atomic_store(&level_setting, level);
    return GS_OK;
}

int gs_png_level(void)
{
    int level = atomic_load(&level_setting);
    if (level >= 0) return level;
    const char *env = getenv(GS_PNG_LEVEL_ENV);
    if (env && gs_png_level_parse(env, &level, NULL, 0) == GS_OK) return level;
    return GS_PNG_LEVEL_DEFAULT;
}

void gs_png_set_threads(unsigned threads)
{
    atomic_store(&threads_setting, threads);
    atomic_store(&threads_set, 1);
}

static unsigned worker_threads(void)
{
    unsigned n = atomic_load(&threads_setting);
    if (!atomic_load(&threads_set)) {
        const char *env = getenv(GS_PNG_THREADS_ENV);
        char *end;
        errno = 0;
        unsigned long v = env ? strtoul(env, &end, 10) : 0;
        n = env && *env && !*end && !errno && v <= MAX_THREADS ? (unsigned)v : 0;
    }
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)cpus : 1u;
    }
    return n > MAX_THREADS ? MAX_THREADS : n;
}

/* ---- one piece of the stream ---- */

typedef enum piece_state {
    PIECE_FREE,    /* may be filled by the caller */
    PIECE_QUEUED,  /* full, waiting for a worker */
    PIECE_WORKING, /* a worker is deflating it */
    PIECE_DONE,    /* deflated, waiting to be written in order */
    PIECE_FAILED   /* deflate failed (out of memory) */
} piece_state;

typedef struct piece {
    unsigned char *in;   /* filtered bytes, CHUNK_BYTES capacity */
    size_t in_len;       /* bytes in `in` */
    unsigned char *dict; /* the previous piece's last DICT_BYTES, primed before deflating */
    size_t dict_len;     /* 0 for the first piece */
    unsigned char *out;  /* deflated bytes */
    size_t out_len;      /* bytes in `out` */
    size_t out_cap;      /* capacity of `out` */
    uLong adler;         /* Adler-32 of `in` */
    int last;            /* ends the stream (Z_FINISH) rather than with a sync flush */
    piece_state state;   /* guarded by the encoder's lock when there are workers */
} piece;

/* libpng's write side, used for the container only; its errors come back as a status. */
typedef struct container {
    png_structp png;           /* libpng write struct */
    png_infop info;            /* its info struct (IHDR) */
    gs_writer *writer;         /* where the bytes go (gs_writer_put) */
    gs_status status;          /* first failure, GS_OK until then */
    char msg[256];             /* its message */
} container;

typedef struct encoder {
    container out;             /* the PNG container */
    int level;                 /* zlib level */
    unsigned bytes_per_sample; /* 1 or 2 */
    size_t row_bytes;          /* filter byte + samples */
    unsigned char *row;        /* one filtered row, when it does not fit the current piece */
    piece *pieces;             /* ring of slots */
    unsigned slots;            /* pieces in the ring */
    uint64_t filling;          /* sequence number of the piece being filled */
    unsigned char *tail;       /* the last submitted piece's last DICT_BYTES */
    size_t tail_len;           /* bytes in `tail` */
    uint64_t next_write;       /* sequence number of the next piece to write out */
    uLong adler;               /* Adler-32 of everything written so far */
    z_stream inline_z;         /* deflate state when there are no workers */
    int inline_ready;          /* inline_z was initialised */
    pthread_t *threads;        /* workers; NULL when deflating on the caller's thread */
    unsigned thread_count;     /* workers started */
    pthread_mutex_t lock;      /* guards piece states and `stopping` */
    pthread_cond_t work;       /* a piece was queued, or stopping */
    pthread_cond_t done;       /* a piece finished */
    uint64_t next_queued;      /* sequence number workers take next */
    int stopping;              /* workers should exit */
    int sync_ready;            /* lock and conditions were initialised */
} encoder;

static piece *piece_at(encoder *st, uint64_t seq) { return &st->pieces[seq % st->slots]; }

/* Set a piece's state: under the lock when workers may be looking at it. */
static void set_state(encoder *st, piece *p, piece_state state)
{
    if (st->threads) pthread_mutex_lock(&st->lock);
    p->state = state;
    if (st->threads) pthread_mutex_unlock(&st->lock);
}

static piece_state get_state(encoder *st, piece *p)
{
    if (st->threads) pthread_mutex_lock(&st->lock);
    piece_state state = p->state;
    if (st->threads) pthread_mutex_unlock(&st->lock);
    return state;
}

/* Deflate one piece with `z` (raw deflate, already initialised at the encoder's level).
 * Returns Z_OK or a zlib error. */
static int deflate_piece(z_stream *z, piece *p)
{
    int zr = deflateReset(z);
    if (zr == Z_OK && p->dict_len) zr = deflateSetDictionary(z, p->dict, (uInt)p->dict_len);
    if (zr != Z_OK) return zr;
    p->adler = adler32(1L, p->in, (uInt)p->in_len);
    z->next_in = p->in;
    z->avail_in = (uInt)p->in_len;
    p->out_len = 0;
    const int flush = p->last ? Z_FINISH : Z_SYNC_FLUSH;
    for (;;) {
        if (p->out_len == p->out_cap) { /* deflateBound was exceeded: only by flush markers */
            size_t cap = p->out_cap * 2;
            unsigned char *out = realloc(p->out, cap);
            if (!out) return Z_MEM_ERROR;
            p->out = out, p->out_cap = cap;
        }
        z->next_out = p->out + p->out_len;
        z->avail_out = (uInt)(p->out_cap - p->out_len);
        zr = deflate(z, flush);
        p->out_len = p->out_cap - z->avail_out;
        if (zr == Z_STREAM_END) break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) return zr;
        /* Z_SYNC_FLUSH is complete when input is used up and output space is left over. */
        if (!p->last && z->avail_in == 0 && z->avail_out > 0) break;
    }
    return Z_OK;
}

static int zstream_init(z_stream *z, int level)
{
    memset(z, 0, sizeof *z);
    return deflateInit2(z, level, Z_DEFLATED, RAW_WINDOW_BITS, ZLIB_MEM_LEVEL, Z_DEFAULT_STRATEGY);
}

static void *worker_main(void *arg)
{
    encoder *st = arg;
    z_stream z;
    int ready = zstream_init(&z, st->level) == Z_OK;
    pthread_mutex_lock(&st->lock);
    for (;;) {
        /* Pieces are queued and taken in sequence, so the slot of next_queued holds that
         * piece once it is queued (its earlier occupant was taken already). */
        while (!st->stopping && piece_at(st, st->next_queued)->state != PIECE_QUEUED)
            pthread_cond_wait(&st->work, &st->lock);
        if (st->stopping) break;
        piece *p = piece_at(st, st->next_queued++);
        p->state = PIECE_WORKING;
        pthread_mutex_unlock(&st->lock);
        int ok = ready && deflate_piece(&z, p) == Z_OK;
        pthread_mutex_lock(&st->lock);
        p->state = ok ? PIECE_DONE : PIECE_FAILED;
        pthread_cond_broadcast(&st->done);
    }
    pthread_mutex_unlock(&st->lock);
    if (ready) deflateEnd(&z);
    return NULL;
}

/* ---- PNG chunks ---- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* libpng callbacks: bytes go through the atomic writer; failures become a status. */
static void container_write(png_structp png, png_bytep data, size_t n)
{
    container *c = png_get_io_ptr(png);
    char msg[sizeof c->msg];
    gs_status st = gs_writer_put(c->writer, data, n, msg, sizeof msg);
    if (st != GS_OK) {
        c->status = st;
        snprintf(c->msg, sizeof c->msg, "%s", msg);
        png_error(png, c->msg);
    }
}

static void container_flush(png_structp png) { (void)png; /* commit flushes and syncs */ }

static void container_error(png_structp png, png_const_charp msg)
{
    container *c = png_get_error_ptr(png);
    if (c->status == GS_OK) {
        c->status = GS_ERR_FORMAT;
        snprintf(c->msg, sizeof c->msg, "libpng: %s", msg);
    }
    png_longjmp(png, 1);
}

static void container_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* nothing libpng warns about here changes the file */
}

/* A chunk whose data is head + body + tail, written by libpng (length, type, CRC). */
static gs_status put_chunk(encoder *st, const char type[4], const unsigned char *head,
                           size_t head_len, const unsigned char *body, size_t body_len,
                           const unsigned char *tail, size_t tail_len, char *err, size_t err_size)
{
    container *c = &st->out;
    if (setjmp(png_jmpbuf(c->png)))
        return gs_fail(err, err_size, c->status != GS_OK ? c->status : GS_ERR_IO, "%s", c->msg);
    png_write_chunk_start(c->png, (png_const_bytep)type, (png_uint_32)(head_len + body_len + tail_len));
    if (head_len) png_write_chunk_data(c->png, head, head_len);
    if (body_len) png_write_chunk_data(c->png, body, body_len);
    if (tail_len) png_write_chunk_data(c->png, tail, tail_len);
    png_write_chunk_end(c->png);
    return GS_OK;
}

/* zlib's two header bytes for `level` (RFC 1950: FLEVEL as zlib writes it, FCHECK). */
static void zlib_header(int level, unsigned char out[2])
{
    unsigned flevel = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
    unsigned cmf = 0x78; /* deflate, 32 KiB window */
    unsigned flg = flevel << 6;
    flg += 31 - (cmf * 256 + flg) % 31;
    out[0] = (unsigned char)cmf, out[1] = (unsigned char)flg;
}

/* Write the deflated piece `p` as one IDAT chunk, with the zlib header before the
 * first and the Adler-32 after the last; frees the slot. */
static gs_status write_piece(encoder *st, piece *p, char *err, size_t err_size)
{
    unsigned char head[2], tail[4];
    size_t head_len = 0, tail_len = 0;
    if (st->next_write == 0) zlib_header(st->level, head), head_len = sizeof head;
    st->adler = adler32_combine(st->adler, p->adler, (z_off_t)p->in_len);
    if (p->last) put_be32(tail, (uint32_t)st->adler), tail_len = sizeof tail;
    gs_status rc = put_chunk(st, "IDAT", head, head_len, p->out, p->out_len, tail, tail_len, err,
                             err_size);
    set_state(st, p, PIECE_FREE);
    st->next_write++;
    return rc;
}

/* Wait for the oldest unwritten piece and write it. */
static gs_status drain_one(encoder *st, char *err, size_t err_size)
{
    piece *p = piece_at(st, st->next_write);
    piece_state state;
    if (!st->threads) {
        state = p->state;
    } else {
        pthread_mutex_lock(&st->lock);
        while (p->state == PIECE_QUEUED || p->state == PIECE_WORKING)
            pthread_cond_wait(&st->done, &st->lock);
        state = p->state;
        pthread_mutex_unlock(&st->lock);
    }
    if (state != PIECE_DONE)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory compressing PNG data");
    return write_piece(st, p, err, err_size);
}

/* The piece being filled is complete: keep its tail as the next piece's dictionary,
 * deflate it here or queue it, write out what is finished, and start the next piece once
 * its slot is free (blocking only then, or at the end of the stream). */
static gs_status submit(encoder *st, int last, char *err, size_t err_size)
{
    piece *p = piece_at(st, st->filling);
    p->last = last;
    st->tail_len = p->in_len < DICT_BYTES ? p->in_len : DICT_BYTES;
    memcpy(st->tail, p->in + p->in_len - st->tail_len, st->tail_len);
    if (!st->threads) {
        p->state = deflate_piece(&st->inline_z, p) == Z_OK ? PIECE_DONE : PIECE_FAILED;
    } else {
        pthread_mutex_lock(&st->lock);
        p->state = PIECE_QUEUED;
        pthread_cond_signal(&st->work);
        pthread_mutex_unlock(&st->lock);
    }
    const uint64_t next = st->filling + 1;
    gs_status rc = GS_OK;
    while (rc == GS_OK && st->next_write < next) {
        piece_state s = get_state(st, piece_at(st, st->next_write));
        int ready = s == PIECE_DONE || s == PIECE_FAILED;
        if (!ready && !last && next - st->next_write < st->slots) break; /* slot is free */
        rc = drain_one(st, err, err_size);
    }
    if (rc != GS_OK || last) return rc;
    /* The slot's previous piece is written, so no worker holds its buffers. */
    piece *n = piece_at(st, next);
    unsigned char *spare = n->dict;
    n->dict = st->tail, n->dict_len = st->tail_len;
    st->tail = spare, st->tail_len = 0;
    n->in_len = 0;
    st->filling = next;
    return GS_OK;
}

/* Append bytes to the stream, submitting pieces as they fill. */
static gs_status append(encoder *st, const unsigned char *src, size_t n,
                        char *err, size_t err_size)
{
    while (n > 0) {
        piece *p = piece_at(st, st->filling);
        size_t take = CHUNK_BYTES - p->in_len < n ? CHUNK_BYTES - p->in_len : n;
        memcpy(p->in + p->in_len, src, take);
        p->in_len += take, src += take, n -= take;
        if (p->in_len == CHUNK_BYTES) {
            gs_status rc = submit(st, 0, err, err_size);
            if (rc != GS_OK) return rc;
        }
    }
    return GS_OK;
}

/* ---- row filters ---- */

/* One row as PNG stores it: the filter byte, then big-endian samples, each byte minus the
 * same byte of the sample to its left (Sub). Rows are smoothed along x, so neighbours
 * differ little: on the mosaic Sub beat None, Up, Average, Paeth and libpng's per-row
 * choice at every zlib level (bench/NOTES_E2E.md). Level 0 stores rows unfiltered. */
static void filter_row(unsigned char *dst, const unsigned char *src, uint32_t width,
                       unsigned bytes_per_sample, int level)
{
    if (bytes_per_sample == 1) {
        if (level == 0) {
            dst[0] = FILTER_NONE;
            memcpy(dst + 1, src, width);
            return;
        }
        dst[0] = FILTER_SUB;
        dst[1] = src[0];
        for (uint32_t x = 1; x < width; x++) dst[1 + x] = (unsigned char)(src[x] - src[x - 1]);
        return;
    }
    unsigned char *d = dst + 1;
    dst[0] = level == 0 ? FILTER_NONE : FILTER_SUB;
    unsigned prev_hi = 0, prev_lo = 0;
    for (uint32_t x = 0; x < width; x++) {
        uint16_t v; /* native-endian; memcpy because callers promise no alignment */
        memcpy(&v, src + 2 * (size_t)x, sizeof v);
        unsigned hi = v >> 8u, lo = v & 0xFFu;
        d[2 * x] = (unsigned char)(level == 0 ? hi : hi - prev_hi);
        d[2 * x + 1] = (unsigned char)(level == 0 ? lo : lo - prev_lo);
        prev_hi = hi, prev_lo = lo;
    }
}

/* ---- the writer's operations ---- */

static gs_status write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                            uint32_t rows, char *err, size_t err_size)
{
    encoder *st = writer->impl;
    for (uint32_t r = 0; r < rows; r++) {
        const unsigned char *row = src + (size_t)r * stride;
        piece *p = piece_at(st, st->filling);
        gs_status rc;
        if (CHUNK_BYTES - p->in_len >= st->row_bytes) { /* filter straight into the piece */
            filter_row(p->in + p->in_len, row, writer->width, st->bytes_per_sample, st->level);
            p->in_len += st->row_bytes;
            rc = p->in_len == CHUNK_BYTES ? submit(st, 0, err, err_size) : GS_OK;
        } else {
            filter_row(st->row, row, writer->width, st->bytes_per_sample, st->level);
            rc = append(st, st->row, st->row_bytes, err, err_size);
        }
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status finish(gs_writer *writer, char *err, size_t err_size)
{
    encoder *st = writer->impl;
    gs_status rc = submit(st, 1, err, err_size);
    if (rc == GS_OK) rc = put_chunk(st, "IEND", NULL, 0, NULL, 0, NULL, 0, err, err_size);
    return rc;
}

static void stop_workers(encoder *st)
{
    if (!st->threads) return;
    pthread_mutex_lock(&st->lock);
    st->stopping = 1;
    pthread_cond_broadcast(&st->work);
    pthread_mutex_unlock(&st->lock);
    for (unsigned i = 0; i < st->thread_count; i++) pthread_join(st->threads[i], NULL);
    free(st->threads);
    st->threads = NULL;
}

static void encoder_destroy(void *impl)
{
    encoder *st = impl;
    if (!st) return;
    stop_workers(st);
    if (st->sync_ready) {
        pthread_cond_destroy(&st->done);
        pthread_cond_destroy(&st->work);
        pthread_mutex_destroy(&st->lock);
    }
    if (st->inline_ready) deflateEnd(&st->inline_z);
    if (st->out.png) png_destroy_write_struct(&st->out.png, &st->out.info);
    for (unsigned i = 0; st->pieces && i < st->slots; i++) {
        free(st->pieces[i].in);
        free(st->pieces[i].dict);
        free(st->pieces[i].out);
    }
    free(st->pieces);
    free(st->tail);
    free(st->row);
    free(st);
}

static const gs_writer_ops encoder_ops = {
    .write_rows = write_rows,
    .finish = finish,
    .destroy = encoder_destroy,
};

/* Start the workers; with fewer than two wanted, or if none can start, deflate inline. */
static void start_workers(encoder *st, unsigned wanted)
{
    if (wanted < 2) return;
    st->threads = calloc(wanted, sizeof *st->threads);
    if (!st->threads) return;
    for (; st->thread_count < wanted; st->thread_count++)
        if (pthread_create(&st->threads[st->thread_count], NULL, worker_main, st) != 0) break;
    if (st->thread_count == 0) {
        free(st->threads);
        st->threads = NULL;
    }
}

/* libpng writes the signature and IHDR: gray, 8 or 16 bits, no interlace. */
static gs_status write_header(gs_writer *writer, encoder *st, char *err, size_t err_size)
{
    container *c = &st->out;
    c->writer = writer;
    c->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, container_error, container_warning);
    if (!c->png || !(c->info = png_create_info_struct(c->png)))
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for libpng");
    if (setjmp(png_jmpbuf(c->png)))
        return gs_fail(err, err_size, c->status != GS_OK ? c->status : GS_ERR_IO, "%s", c->msg);
    png_set_write_fn(c->png, c, container_write, container_flush);
    /* libpng's default 1,000,000-pixel limit applies to writing too; PNG allows 2^31-1. */
    png_set_user_limits(c->png, 0x7FFFFFFFu, 0x7FFFFFFFu);
    png_set_IHDR(c->png, c->info, writer->width, writer->height, (int)writer->bits,
                 PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    return GS_OK;
}

gs_status gs_write_png_open(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    encoder *st = NULL;

    if (writer->bits != 8 && writer->bits != 16) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "PNG holds 8- or 16-bit samples, not %u-bit",
                     writer->bits);
        goto cleanup;
    }
    if (writer->width == 0 || writer->height == 0 || writer->width > 0x7FFFFFFFu ||
        writer->height > 0x7FFFFFFFu) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "PNG cannot hold a %ux%u image",
                     writer->width, writer->height);
        goto cleanup;
    }
    st = calloc(1, sizeof *st);
    if (!st) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    st->level = gs_png_level();
    st->bytes_per_sample = writer->bits / 8;
    st->row_bytes = 1 + (size_t)writer->width * st->bytes_per_sample;
    st->adler = 1L;
    unsigned threads = worker_threads();
    st->slots = threads < 2 ? 2 : threads * SLOTS_PER_THREAD + 1;
    st->row = malloc(st->row_bytes);
    st->tail = malloc(DICT_BYTES);
    st->pieces = calloc(st->slots, sizeof *st->pieces);
    int ok = st->row && st->tail && st->pieces;
    for (unsigned i = 0; ok && i < st->slots; i++) {
        piece *p = &st->pieces[i];
        p->out_cap = deflateBound(NULL, CHUNK_BYTES) + 64; /* + the sync flush marker */
        p->in = malloc(CHUNK_BYTES);
        p->dict = malloc(DICT_BYTES);
        p->out = malloc(p->out_cap);
        ok = p->in && p->dict && p->out;
    }
    if (!ok) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the PNG encoder");
        goto cleanup;
    }
    if (threads < 2) {
        if (zstream_init(&st->inline_z, st->level) != Z_OK) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG encoder");
            goto cleanup;
        }
        st->inline_ready = 1;
    } else {
        if (pthread_mutex_init(&st->lock, NULL) != 0) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG encoder");
            goto cleanup;
        }
        pthread_cond_init(&st->work, NULL);
        pthread_cond_init(&st->done, NULL);
        st->sync_ready = 1;
        start_workers(st, threads);
        if (!st->threads) { /* no thread could start: deflate inline, same bytes */
            if (zstream_init(&st->inline_z, st->level) != Z_OK) {
                rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG encoder");
                goto cleanup;
            }
            st->inline_ready = 1;
        }
    }
    rc = write_header(writer, st, err, err_size);
    if (rc != GS_OK) goto cleanup;

    writer->ops = &encoder_ops;
    writer->impl = st;
    st = NULL;

cleanup:
    encoder_destroy(st);
    return rc;
}
