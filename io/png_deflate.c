/* png_deflate.c: one zlib stream deflated in fixed-size pieces on worker threads. */
/* Each piece is primed with the previous piece's last 32 KiB (at level 1, literals and
 * byte runs, it needs none) and ended with a sync flush, and handed to a sink in order. */

#include "png_deflate.h"
#include "deflate_fast.h"
#include "io_internal.h"
#include "isal_piece.h"

#include <errno.h>
#include <isa-l.h>
#include <pthread.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Bytes per piece. Smaller pieces balance threads better; each costs one sync flush (~5
 * bytes plus a fresh block header), and memory is the slots' pieces in and out. At 256 KiB
 * the file is measured barely larger than one unbroken stream (tests/test_png_size.c holds
 * the writer to zlib's size). */
#define CHUNK_BYTES (256u << 10)
/* Deflate's window: the dictionary each piece is primed with. */
#define DICT_BYTES (32u << 10)
/* Pieces in flight: one being deflated per worker, one the caller fills, and
 * WAITING_SLOTS_MAX waiting, so that a worker never idles while the caller fills the next
 * (with 2 workers, one waiting piece each). Each slot holds about 0.55 MiB (a piece in and
 * out, its dictionary); many workers need few waiting pieces, since each takes one far less
 * often than the caller fills one (16 workers with 16 waiting pieces: 38.5 MiB peak for the
 * gigapixel mosaic on 16 cores). */
#define WAITING_SLOTS_MAX 2u
/* zlib's memLevel default (8 = 128 KiB hash); 9 was measured barely smaller and slower at
 * level 1 on the benchmark mosaic: not worth its memory. */
#define ZLIB_MEM_LEVEL 8
/* zlib's raw-deflate window bits: negative = no zlib header (written here, once). */
#define RAW_WINDOW_BITS (-15)
/* Room added to deflateBound for the sync flush marker that ends a piece. */
#define FLUSH_MARKER_ROOM 64
/* Level 1 codes literals and byte runs (deflate_fast.c): twice as fast as ISA-L's level 2
 * on the smoothed benchmark mosaic, and a tenth larger. Levels 2 and 3 are ISA-L's (igzip):
 * its level 2 was measured both faster and smaller than zlib's level 1. Level 0 (stored)
 * and 4 to 9 are zlib's. */
#define FAST_LEVEL 1
#define ISAL_LEVEL_MIN 2
#define ISAL_LEVEL_MAX 3
_Static_assert(CHUNK_BYTES >= DICT_BYTES, "a full piece must hold a whole dictionary");
_Static_assert(CHUNK_BYTES <= (1u << 30), "a piece's deflated size must fit zlib's uInt and one IDAT");

typedef enum piece_state {
    PIECE_FREE,    /* may be filled by the caller */
    PIECE_QUEUED,  /* full, waiting for a worker */
    PIECE_WORKING, /* a worker is deflating it */
    PIECE_DONE,    /* deflated, waiting to be handed out in order */
    PIECE_FAILED   /* deflate failed (out of memory) */
} piece_state;

typedef struct piece {
    unsigned char *in;   /* bytes to deflate, CHUNK_BYTES capacity */
    size_t in_len;       /* bytes in `in` */
    unsigned char *dict; /* the previous piece's last DICT_BYTES, primed before deflating */
    size_t dict_len;     /* 0 for the first piece */
    unsigned char *out;  /* deflated bytes */
    size_t out_len;      /* bytes in `out` */
    size_t out_cap;      /* capacity of `out` */
    uLong adler;         /* Adler-32 of `in` */
    int last;            /* ends the stream (Z_FINISH) rather than with a sync flush */
    piece_state state;   /* guarded by the lock when there are workers */
} piece;

struct gs_deflate {
    int level;                 /* zlib level */
    gs_deflate_sink sink;      /* where finished pieces go */
    void *sink_ctx;            /* its context */
    unsigned char *staging;    /* an append that does not fit the current piece */
    size_t staging_cap;        /* max_append */
    int reserved_in_piece;     /* the last reserve pointed into the current piece */
    piece *pieces;             /* ring of slots */
    unsigned slots;            /* pieces in the ring */
    uint64_t filling;          /* sequence number of the piece being filled */
    unsigned char *tail;       /* the last submitted piece's last DICT_BYTES */
    size_t tail_len;           /* bytes in `tail` */
    uint64_t next_write;       /* sequence number of the next piece to hand out */
    uLong adler;               /* Adler-32 of everything handed out so far */
    struct compressor *inline_c; /* the compressor when there are no workers */
    pthread_t *threads;        /* workers; NULL when deflating on the caller's thread */
    unsigned thread_count;     /* workers started */
    pthread_mutex_t lock;      /* guards piece states and `stopping` */
    pthread_cond_t work;       /* a piece was queued, or stopping */
    pthread_cond_t done;       /* a piece finished */
    uint64_t next_queued;      /* sequence number workers take next */
    int stopping;              /* workers should exit */
    int sync_ready;            /* lock and conditions were initialised */
};

static piece *piece_at(gs_deflate *d, uint64_t seq) { return &d->pieces[seq % d->slots]; }

/* Set a piece's state: under the lock when workers may be looking at it. */
static void set_state(gs_deflate *d, piece *p, piece_state state)
{
    if (d->threads) pthread_mutex_lock(&d->lock);
    p->state = state;
    if (d->threads) pthread_mutex_unlock(&d->lock);
}

static piece_state get_state(gs_deflate *d, piece *p)
{
    if (d->threads) pthread_mutex_lock(&d->lock);
    piece_state state = p->state;
    if (d->threads) pthread_mutex_unlock(&d->lock);
    return state;
}

/* One thread's raw-deflate state: zlib's or ISA-L's, by level (level 1 needs none). */
typedef struct compressor {
    int level;               /* the stream's level */
    int fast_level;          /* level 1 (deflate_fast.c): no state */
    int isal;                /* ISA-L does this level */
    z_stream z;              /* zlib's state (zlib levels), initialised once */
    struct isal_zstream iz;  /* ISA-L's state, set up afresh for each piece */
    uint8_t *level_buf;      /* ISA-L's working memory for levels 1 to 3 */
} compressor;

static void compressor_free(compressor *c)
{
    if (!c) return;
    if (!c->isal && !c->fast_level) deflateEnd(&c->z);
    free(c->level_buf);
    free(c);
}

static compressor *compressor_new(int level)
{
    compressor *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->level = level;
    c->fast_level = level == FAST_LEVEL;
    c->isal = level >= ISAL_LEVEL_MIN && level <= ISAL_LEVEL_MAX;
    if (c->fast_level) return c;
    if (c->isal) {
        c->level_buf = malloc(ISAL_DEF_LVL3_DEFAULT);
        if (c->level_buf) return c;
    } else if (deflateInit2(&c->z, level, Z_DEFLATED, RAW_WINDOW_BITS, ZLIB_MEM_LEVEL,
                            Z_DEFAULT_STRATEGY) == Z_OK) {
        return c;
    } else {
        c->isal = 1; /* nothing to deflateEnd */
    }
    compressor_free(c);
    return NULL;
}

/* Make room in p->out when a piece came out larger than deflateBound (flush markers). */
static int grow_out(piece *p)
{
    size_t cap = p->out_cap * 2;
    unsigned char *out = realloc(p->out, cap);
    if (!out) return -1;
    p->out = out, p->out_cap = cap;
    return 0;
}

/* Deflate one piece with zlib: primed with its dictionary, ended by a sync flush (or the
 * stream's end). 0, or -1 on failure. */
static int zlib_piece(z_stream *z, piece *p)
{
    int zr = deflateReset(z);
    if (zr == Z_OK && p->dict_len) zr = deflateSetDictionary(z, p->dict, (uInt)p->dict_len);
    if (zr != Z_OK) return -1;
    z->next_in = p->in;
    z->avail_in = (uInt)p->in_len;
    const int flush = p->last ? Z_FINISH : Z_SYNC_FLUSH;
    for (;;) {
        if (p->out_len == p->out_cap && grow_out(p) != 0) return -1;
        z->next_out = p->out + p->out_len;
        z->avail_out = (uInt)(p->out_cap - p->out_len);
        zr = deflate(z, flush);
        p->out_len = p->out_cap - z->avail_out;
        if (zr == Z_STREAM_END) return 0;
        if (zr != Z_OK && zr != Z_BUF_ERROR) return -1;
        /* Z_SYNC_FLUSH is complete when input is used up and output space is left over. */
        if (!p->last && z->avail_in == 0 && z->avail_out > 0) return 0;
    }
}

/* The same with ISA-L: a fresh stream per piece, primed, sync-flushed or ended; a stream's
 * first piece leads with its first byte stored, so that no piece's bytes depend on where
 * the compressor's memory lies (isal_piece.h). */
static int isal_piece(compressor *c, piece *p)
{
    struct isal_zstream *iz = &c->iz;
    const int lead = gs_isal_piece_start(iz, c->level, c->level_buf, ISAL_DEF_LVL3_DEFAULT, p->dict, p->dict_len,
                                         p->in, p->in_len, p->last, p->out);
    if (lead < 0) return -1;
    p->out_len = (size_t)lead;
    for (;;) {
        if (p->out_len == p->out_cap && grow_out(p) != 0) return -1;
        iz->next_out = p->out + p->out_len;
        iz->avail_out = (uint32_t)(p->out_cap - p->out_len);
        if (isal_deflate(iz) != COMP_OK) return -1;
        p->out_len = p->out_cap - iz->avail_out;
        /* Done once the input is in and there was room left: nothing is held back. */
        if (iz->avail_in == 0 && iz->avail_out > 0 &&
            (!p->last || iz->internal_state.state == ZSTATE_END))
            return 0;
    }
}

/* Why GS_DEFLATE_WORKER_NICE is added to each deflate worker (Linux: per thread): a decode
 * feeding this stream has one serial stage, the PNG reader's inflating thread; every
 * thread of the run shares the cores, and while workers outnumbered the free cores that
 * thread got about 0.66 of one (the 32768^2 mosaic on 2 cores). Queued pieces can wait a
 * moment; with the workers yielding, the run took 4.04-4.35 s instead of 4.40-4.53
 * (docs/performance.md). Other processes see the workers yield too, which suits a batch
 * on a shared node. */

/* Lower this worker thread's priority by GS_DEFLATE_WORKER_NICE; a failure changes nothing
 * else. */
static void lower_worker_priority(void)
{
#if defined(__linux__)
    const id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0) return;
    (void)setpriority(PRIO_PROCESS, tid, now + GS_DEFLATE_WORKER_NICE);
#endif
}

/* Deflate one piece; 0, or -1 (out of memory, or a compressor error). */
static int deflate_piece(compressor *c, piece *p)
{
    p->adler = isal_adler32(1, p->in, p->in_len); /* AVX2: zlib's adler32 showed in profiles */
    p->out_len = 0;
    if (c->fast_level) { /* p->out holds its bound (gs_deflate_open) */
        p->out_len = gs_deflate_fast(p->in, p->in_len, p->last, p->out);
        return 0;
    }
    return c->isal ? isal_piece(c, p) : zlib_piece(&c->z, p);
}

static void *worker_main(void *arg)
{
    gs_deflate *d = arg;
    lower_worker_priority();
    compressor *c = compressor_new(d->level);
    pthread_mutex_lock(&d->lock);
    for (;;) {
        /* Pieces are queued and taken in sequence, so the slot of next_queued holds that
         * piece once it is queued (its earlier occupant was taken already). */
        while (!d->stopping && piece_at(d, d->next_queued)->state != PIECE_QUEUED)
            pthread_cond_wait(&d->work, &d->lock);
        if (d->stopping) break;
        piece *p = piece_at(d, d->next_queued++);
        p->state = PIECE_WORKING;
        pthread_mutex_unlock(&d->lock);
        int ok = c && deflate_piece(c, p) == 0;
        pthread_mutex_lock(&d->lock);
        p->state = ok ? PIECE_DONE : PIECE_FAILED;
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->lock);
    compressor_free(c);
    return NULL;
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

/* Hand the deflated piece `p` to the sink, with the zlib header before the first and the
 * Adler-32 after the last; frees the slot. */
static gs_status write_piece(gs_deflate *d, piece *p, char *err, size_t err_size)
{
    unsigned char head[2], tail[4];
    size_t head_len = 0, tail_len = 0;
    if (d->next_write == 0) zlib_header(d->level, head), head_len = sizeof head;
    d->adler = adler32_combine(d->adler, p->adler, (z_off_t)p->in_len);
    if (p->last) gs_store_be32(tail, (uint32_t)d->adler), tail_len = sizeof tail;
    gs_status rc = d->sink(d->sink_ctx, head, head_len, p->out, p->out_len, tail, tail_len, err,
                           err_size);
    set_state(d, p, PIECE_FREE);
    d->next_write++;
    return rc;
}

/* Wait for the oldest unwritten piece and hand it out. */
static gs_status drain_one(gs_deflate *d, char *err, size_t err_size)
{
    piece *p = piece_at(d, d->next_write);
    piece_state state;
    if (!d->threads) {
        state = p->state;
    } else {
        pthread_mutex_lock(&d->lock);
        while (p->state == PIECE_QUEUED || p->state == PIECE_WORKING)
            pthread_cond_wait(&d->done, &d->lock);
        state = p->state;
        pthread_mutex_unlock(&d->lock);
    }
    if (state != PIECE_DONE)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory compressing PNG data");
    return write_piece(d, p, err, err_size);
}

/* The piece being filled is complete: keep its tail as the next piece's dictionary,
 * deflate it here or queue it, hand out what is finished, and start the next piece once
 * its slot is free (blocking only then, or at the end of the stream). */
static gs_status submit(gs_deflate *d, int last, char *err, size_t err_size)
{
    piece *p = piece_at(d, d->filling);
    p->last = last;
    /* level 1 primes nothing: no dictionary to keep */
    d->tail_len = d->level == FAST_LEVEL ? 0 : p->in_len < DICT_BYTES ? p->in_len : DICT_BYTES;
    memcpy(d->tail, p->in + p->in_len - d->tail_len, d->tail_len);
    if (!d->threads) {
        p->state = deflate_piece(d->inline_c, p) == 0 ? PIECE_DONE : PIECE_FAILED;
    } else {
        pthread_mutex_lock(&d->lock);
        p->state = PIECE_QUEUED;
        pthread_cond_signal(&d->work);
        pthread_mutex_unlock(&d->lock);
    }
    const uint64_t next = d->filling + 1;
    gs_status rc = GS_OK;
    while (rc == GS_OK && d->next_write < next) {
        piece_state s = get_state(d, piece_at(d, d->next_write));
        int ready = s == PIECE_DONE || s == PIECE_FAILED;
        if (!ready && !last && next - d->next_write < d->slots) break; /* slot is free */
        rc = drain_one(d, err, err_size);
    }
    if (rc != GS_OK || last) return rc;
    /* The slot's previous piece is handed out, so no worker holds its buffers. */
    piece *n = piece_at(d, next);
    unsigned char *spare = n->dict;
    n->dict = d->tail, n->dict_len = d->tail_len;
    d->tail = spare, d->tail_len = 0;
    n->in_len = 0;
    d->filling = next;
    return GS_OK;
}

unsigned char *gs_deflate_reserve(gs_deflate *d, size_t n)
{
    piece *p = piece_at(d, d->filling);
    d->reserved_in_piece = CHUNK_BYTES - p->in_len >= n;
    return d->reserved_in_piece ? p->in + p->in_len : d->staging;
}

gs_status gs_deflate_append(gs_deflate *d, size_t n, char *err, size_t err_size)
{
    if (d->reserved_in_piece) { /* already in place */
        piece *p = piece_at(d, d->filling);
        p->in_len += n;
        return p->in_len == CHUNK_BYTES ? submit(d, 0, err, err_size) : GS_OK;
    }
    const unsigned char *src = d->staging;
    while (n > 0) {
        piece *p = piece_at(d, d->filling);
        size_t take = CHUNK_BYTES - p->in_len < n ? CHUNK_BYTES - p->in_len : n;
        memcpy(p->in + p->in_len, src, take);
        p->in_len += take, src += take, n -= take;
        if (p->in_len == CHUNK_BYTES) {
            gs_status rc = submit(d, 0, err, err_size);
            if (rc != GS_OK) return rc;
        }
    }
    return GS_OK;
}

gs_status gs_deflate_finish(gs_deflate *d, char *err, size_t err_size)
{
    return submit(d, 1, err, err_size);
}

static void stop_workers(gs_deflate *d)
{
    if (!d->threads) return;
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    pthread_cond_broadcast(&d->work);
    pthread_mutex_unlock(&d->lock);
    for (unsigned i = 0; i < d->thread_count; i++) pthread_join(d->threads[i], NULL);
    free(d->threads);
    d->threads = NULL;
}

void gs_deflate_close(gs_deflate *d)
{
    if (!d) return;
    stop_workers(d);
    if (d->sync_ready) {
        pthread_cond_destroy(&d->done);
        pthread_cond_destroy(&d->work);
        pthread_mutex_destroy(&d->lock);
    }
    compressor_free(d->inline_c);
    for (unsigned i = 0; d->pieces && i < d->slots; i++) {
        free(d->pieces[i].in);
        free(d->pieces[i].dict);
        free(d->pieces[i].out);
    }
    free(d->pieces);
    free(d->tail);
    free(d->staging);
    free(d);
}

gs_status gs_deflate_to_memory(void *ctx, const unsigned char *head, size_t head_len,
                               const unsigned char *body, size_t body_len,
                               const unsigned char *tail, size_t tail_len, char *err,
                               size_t err_size)
{
    gs_deflate_memory *m = ctx;
    const unsigned char *span[3] = {head, body, tail};
    const size_t len[3] = {head_len, body_len, tail_len};
    for (int i = 0; i < 3; i++) {
        if (m->cap - m->len < len[i]) {
            size_t cap = m->cap ? m->cap : 1u << 16;
            while (cap - m->len < len[i]) cap *= 2;
            unsigned char *bytes = realloc(m->bytes, cap);
            if (!bytes) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory gathering PNG data");
            m->bytes = bytes, m->cap = cap;
        }
        if (len[i]) memcpy(m->bytes + m->len, span[i], len[i]);
        m->len += len[i];
    }
    return GS_OK;
}

/* Start the workers; with fewer than two wanted, or if none can start, deflate inline. */
static void start_workers(gs_deflate *d, unsigned wanted)
{
    if (wanted < 2) return;
    d->threads = calloc(wanted, sizeof *d->threads);
    if (!d->threads) return;
    for (; d->thread_count < wanted; d->thread_count++)
        if (pthread_create(&d->threads[d->thread_count], NULL, worker_main, d) != 0) break;
    if (d->thread_count == 0) {
        free(d->threads);
        d->threads = NULL;
    }
}

gs_status gs_deflate_open(int level, unsigned threads, size_t max_append, gs_deflate_sink sink,
                          void *sink_ctx, gs_deflate **out, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    gs_deflate *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    d->level = level;
    d->sink = sink;
    d->sink_ctx = sink_ctx;
    d->adler = 1L;
    d->slots = threads < 2 ? 2 : threads + 1 + WAITING_SLOTS_MAX;
    d->staging_cap = max_append;
    d->staging = malloc(max_append ? max_append : 1);
    d->tail = malloc(DICT_BYTES);
    d->pieces = calloc(d->slots, sizeof *d->pieces);
    int ok = d->staging && d->tail && d->pieces;
    for (unsigned i = 0; ok && i < d->slots; i++) {
        piece *p = &d->pieces[i];
        p->out_cap = level == FAST_LEVEL ? gs_deflate_fast_bound(CHUNK_BYTES)
                                                 : deflateBound(NULL, CHUNK_BYTES) + FLUSH_MARKER_ROOM;
        p->in = malloc(CHUNK_BYTES);
        p->dict = malloc(DICT_BYTES);
        p->out = malloc(p->out_cap);
        ok = p->in && p->dict && p->out;
    }
    if (!ok) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the PNG encoder");
        goto cleanup;
    }
    if (threads >= 2 && pthread_mutex_init(&d->lock, NULL) == 0) {
        pthread_cond_init(&d->work, NULL);
        pthread_cond_init(&d->done, NULL);
        d->sync_ready = 1;
        start_workers(d, threads);
    }
    if (!d->threads) { /* one thread wanted, or none could start: deflate inline, same bytes */
        d->inline_c = compressor_new(level);
        if (!d->inline_c) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG encoder");
            goto cleanup;
        }
    }
    *out = d;
    d = NULL;

cleanup:
    gs_deflate_close(d);
    return rc;
}
