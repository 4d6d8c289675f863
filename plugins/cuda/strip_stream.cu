/* strip_stream.cu: the CUDA plugin's strip engine. */
#include "strip_stream.h"

#include <stddef.h>
#include <string.h>

#include "round_up.h"

namespace {

/* Largest single buffer of a host strip's chunk: device memory stays bounded whatever the
 * strip size. */
constexpr size_t kChunkBytes = (size_t)16 << 20;
/* Device-memory strips whose rows the kernels take in place need no staging: a chunk is
 * bounded by its float scratch alone, so one launch covers the strip when none is needed.
 * Scratch is kept per stream slot until the engine is released: 2 x 128 MiB at most beside
 * a caller's own allocations, and the summed-area table's look-back words
 * (gs_cuda_integral_scratch). */
constexpr size_t kDirectChunkBytes = (size_t)128 << 20;
static_assert(kPreferredStripBytes >= kStreams * kChunkBytes, "a preferred strip keeps every slot busy");

void release_buffers(gs_strip_stream *ss)
{
    for (int s = 0; s < kStreams; ++s) {
        slot_buffers *b = &ss->slot[s];
        if (b->h_in) cudaFreeHost(b->h_in);
        if (b->h_out) cudaFreeHost(b->h_out);
        if (b->d_in) cudaFree(b->d_in);
        if (b->d_out) cudaFree(b->d_out);
        if (b->d_scr) cudaFree(b->d_scr);
        b->h_in = b->h_out = b->d_in = b->d_out = b->d_scr = NULL;
    }
    if (ss->d_carry) cudaFree(ss->d_carry);
    if (ss->h_carry) cudaFreeHost(ss->h_carry);
    ss->d_carry = ss->h_carry = NULL;
    gs_cuda_integral_scratch_free(&ss->table_scratch);
    ss->cap_h_in = ss->cap_h_out = ss->cap_d_in = ss->cap_d_out = 0;
    ss->cap_d_scr = ss->cap_carry = 0;
}

/* The shape of one strip's chunks. A chunk writes rows_per_chunk rows of the strip; down
 * columns it reads up to `halo` more rows on each side from the strip's window, so each
 * chunk is a window of its own (gsmooth_plugin.h, smooth_axes). */
struct chunk_plan {
    uint32_t rows_per_chunk;
    uint32_t chunks;
    uint32_t halo;               /* rows of context a chunk reads above and below */
    uint32_t window_rows;        /* rows in the strip's window (above + rows + below) */
    size_t in_row, out_row;      /* packed host row bytes */
    size_t in_pitch, out_pitch;  /* device pitches, GS_CUDA_ALIGN multiples */
    size_t scratch;              /* device float scratch bytes for one chunk */
};

/* Chunk c's window: rows [in0, in1) of the strip's window, its rows written starting at
 * in0 + above. */
struct chunk_rows {
    uint32_t y0, rows;     /* rows of the strip written */
    uint32_t in0, in1;     /* rows of the strip's window read */
    uint32_t above;        /* rows read above the first row written */
};

chunk_rows rows_of_chunk(const chunk_plan &p, const gs_strip *s, const strip_work &w, uint32_t c)
{
    chunk_rows r;
    r.y0 = c * p.rows_per_chunk;
    r.rows = s->rows - r.y0 < p.rows_per_chunk ? s->rows - r.y0 : p.rows_per_chunk;
    const uint32_t first = w.above + r.y0; /* in window coordinates */
    r.in0 = first > p.halo ? first - p.halo : 0;
    r.in1 = first + r.rows + p.halo < p.window_rows ? first + r.rows + p.halo : p.window_rows;
    r.above = first - r.in0;
    return r;
}

/* Where a strip's rows are read and written on the device. Host strips go through the
 * stream slots' staging; device strips are read and written in place when their rows meet the
 * kernels' alignment (GS_CUDA_ALIGN), else copied device to device through d_in / d_out. */
struct strip_io {
    bool device;     /* src and dst are device pointers */
    bool direct_in;  /* the kernels read src in place */
    bool direct_out; /* the kernels write dst in place */
};

/* Rows the kernels may read or write in place: base, stride and the row's own bytes all
 * multiples of GS_CUDA_ALIGN, since they move whole 16-byte vectors up to the row's end
 * (a shorter last row would take them past the caller's allocation). */
bool aligned_rows(const void *p, size_t stride, size_t row_bytes)
{
    return (uintptr_t)p % GS_CUDA_ALIGN == 0 && stride % GS_CUDA_ALIGN == 0 &&
           row_bytes % GS_CUDA_ALIGN == 0;
}

strip_io io_of(const gs_strip_stream *ss, const gs_strip *s)
{
    strip_io io = {ss->device_memory, false, false};
    io.direct_in = io.device && aligned_rows(s->src, s->src_stride, (size_t)s->width * (s->in_bits / 8));
    io.direct_out = io.device && aligned_rows(s->dst, s->dst_stride, (size_t)s->width * (s->out_bits / 8));
    return io;
}

chunk_plan plan_chunks(const gs_strip *s, const strip_work &w, const strip_io &io)
{
    chunk_plan p;
    const bool axes = w.op == OP_AXES;
    p.halo = axes ? w.iters : 0;
    p.window_rows = axes ? w.above + s->rows + w.below : s->rows;
    p.in_row = (size_t)s->width * (s->in_bits / 8);
    p.out_row = (size_t)s->width * (s->out_bits / 8);
    p.in_pitch = gs_round_up(p.in_row, GS_CUDA_ALIGN);
    p.out_pitch = gs_round_up(p.out_row, GS_CUDA_ALIGN);
    const bool xy = axes && (w.axes & GS_AXIS_X);
    size_t scr_row = 0;
    if (w.op == OP_SMOOTH) scr_row = gs_cuda_smooth_scratch_bytes(s->width, 1, w.iters);
    if (xy) scr_row = gs_cuda_smooth_xy_scratch_bytes(s->width, 1, s->in_bits, s->out_bits, w.iters);
    else if (axes) scr_row = gs_cuda_smooth_columns_scratch_bytes(s->width, 1, w.iters);
    const bool direct = io.direct_in && io.direct_out;
    size_t widest = direct ? 0 : p.in_pitch > p.out_pitch ? p.in_pitch : p.out_pitch;
    if (scr_row > widest) widest = scr_row;
    size_t rows = widest ? (direct ? kDirectChunkBytes : kChunkBytes) / widest : s->rows;
    /* A chunk's halo rows are read and computed again by its neighbour: at least two
     * halos' worth of rows written per chunk keeps that to half or less. */
    const size_t halos = 2 * (size_t)p.halo;
    rows = rows > 2 * halos ? rows - halos : halos;
    if (rows < 1) rows = 1;
    if (rows > s->rows) rows = s->rows;
    p.rows_per_chunk = (uint32_t)rows;
    p.chunks = (s->rows + p.rows_per_chunk - 1) / p.rows_per_chunk;
    const size_t in_rows = rows + halos < p.window_rows ? rows + halos : p.window_rows;
    p.scratch = w.op == OP_SMOOTH ? gs_cuda_smooth_scratch_bytes(s->width, p.rows_per_chunk, w.iters)
                : xy ? gs_cuda_smooth_xy_scratch_bytes(s->width, (uint32_t)in_rows, s->in_bits,
                                                       s->out_bits, w.iters)
                : axes ? gs_cuda_smooth_columns_scratch_bytes(s->width, (uint32_t)in_rows, w.iters)
                       : 0;
    return p;
}

/* Grow one buffer of every stream slot to `need` bytes (never shrinks: strips repeat a shape). */
cudaError_t grow(gs_strip_stream *ss, size_t *cap, size_t need, size_t offset_in_slot,
                 bool pinned)
{
    if (need <= *cap) return cudaSuccess;
    cudaError_t settled = gs_strip_stream_settle(ss); /* queued work may still read them */
    if (settled != cudaSuccess) return settled;
    for (int s = 0; s < kStreams; ++s) {
        void **buf = (void **)((char *)&ss->slot[s] + offset_in_slot);
        if (*buf) {
            if (pinned)
                cudaFreeHost(*buf);
            else
                cudaFree(*buf);
            *buf = NULL;
        }
    }
    *cap = 0;
    for (int s = 0; s < kStreams; ++s) {
        void **buf = (void **)((char *)&ss->slot[s] + offset_in_slot);
        cudaError_t e = pinned ? cudaMallocHost(buf, need) : cudaMalloc(buf, need);
        if (e != cudaSuccess) return e;
    }
    *cap = need;
    return cudaSuccess;
}

/* The buffers a strip's chunks use: pinned staging for host strips, device rows unless the
 * kernels work in place, float scratch when the work needs it. */
cudaError_t ensure_buffers(gs_strip_stream *ss, const chunk_plan &p, const strip_io &io)
{
    const size_t r = p.rows_per_chunk;
    const size_t in_rows = r + 2 * (size_t)p.halo < p.window_rows ? r + 2 * (size_t)p.halo : p.window_rows;
    cudaError_t e;
    if (!io.device &&
        (e = grow(ss, &ss->cap_h_in, p.in_row * in_rows, offsetof(slot_buffers, h_in), true)))
        return e;
    if (!io.device &&
        (e = grow(ss, &ss->cap_h_out, p.out_row * r, offsetof(slot_buffers, h_out), true)))
        return e;
    if (!io.direct_in &&
        (e = grow(ss, &ss->cap_d_in, p.in_pitch * in_rows, offsetof(slot_buffers, d_in), false)))
        return e;
    if (!io.direct_out &&
        (e = grow(ss, &ss->cap_d_out, p.out_pitch * r, offsetof(slot_buffers, d_out), false)))
        return e;
    if (p.scratch &&
        (e = grow(ss, &ss->cap_d_scr, p.scratch, offsetof(slot_buffers, d_scr), false)))
        return e;
    return cudaSuccess;
}

/* Wait for chunk `c` (on stream slot c % kStreams), add its times, and copy its rows out. */
cudaError_t finish_chunk(gs_strip_stream *ss, const gs_strip *s, const chunk_plan &p,
                         const strip_io &io, uint32_t c)
{
    const int k = (int)(c % kStreams);
    slot_buffers *b = &ss->slot[k];
    cudaError_t e = cudaStreamSynchronize(ss->stream[k]);
    if (e != cudaSuccess) return e;
    if (io.device) return cudaSuccess; /* untimed (see gs_strip_stream_run), and written on the device */
    float up = 0, kern = 0, down = 0;
    cudaEventElapsedTime(&up, b->ev[EV_START], b->ev[EV_UPLOADED]);
    cudaEventElapsedTime(&kern, b->ev[EV_UPLOADED], b->ev[EV_COMPUTED]);
    cudaEventElapsedTime(&down, b->ev[EV_COMPUTED], b->ev[EV_DOWNLOADED]);
    ss->upload_ns += (uint64_t)(up * 1e6f);
    ss->kernel_ns += (uint64_t)(kern * 1e6f);
    ss->download_ns += (uint64_t)(down * 1e6f);
    const uint32_t y0 = c * p.rows_per_chunk;
    const uint32_t n = s->rows - y0 < p.rows_per_chunk ? s->rows - y0 : p.rows_per_chunk;
    for (uint32_t y = 0; y < n; ++y)
        memcpy((char *)s->dst + (size_t)(y0 + y) * s->dst_stride,
               (const char *)b->h_out + (size_t)y * p.out_row, p.out_row);
    return cudaSuccess;
}

/* A chunk's rows on the device: its window's first row (d_in) and its first row written
 * (d_out), with their pitches. */
struct chunk_rows_on_device {
    const void *d_in;
    size_t in_pitch;
    void *d_out;
    size_t out_pitch;
};

/* Down the columns of one chunk's window, after the passes along its rows for xy. */
cudaError_t compute_axes(const gs_strip *s, const chunk_plan &p, const strip_work &w,
                         slot_buffers *b, const chunk_rows &r, const chunk_rows_on_device &d,
                         cudaStream_t stream)
{
    const uint32_t in_rows = r.in1 - r.in0;
    void *scr = p.scratch ? b->d_scr : NULL;
    if (w.axes & GS_AXIS_X)
        return gs_cuda_smooth_xy(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width, in_rows, r.above,
                                 r.rows, s->in_bits, s->out_bits, w.iters, scr, p.scratch, stream);
    return gs_cuda_smooth_columns(d.d_in, d.in_pitch, s->in_bits, d.d_out, d.out_pitch, s->width,
                                  in_rows, r.above, r.rows, s->in_bits, s->out_bits, w.iters, scr,
                                  p.scratch, stream);
}

/* Enqueue the computation of one chunk on `stream`. */
cudaError_t compute_chunk(gs_strip_stream *ss, const gs_strip *s, const chunk_plan &p,
                          const strip_work &w, slot_buffers *b, const chunk_rows &r,
                          const chunk_rows_on_device &d, cudaStream_t stream)
{
    const uint32_t rows = r.rows, iters = w.iters;
    switch (w.op) {
    case OP_AXES: return compute_axes(s, p, w, b, r, d, stream);
    case OP_SMOOTH:
        if (s->out_bits == 32) /* float32 results, from float32 or integer samples */
            return gs_cuda_smooth_rows_float(d.d_in, d.in_pitch, (float *)d.d_out, d.out_pitch,
                                             s->width, rows, s->in_bits, iters, b->d_scr,
                                             ss->cap_d_scr, stream);
        return gs_cuda_smooth(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width,
                              rows, s->in_bits, iters, b->d_scr, ss->cap_d_scr, stream);
    case OP_ROWS:
        return gs_cuda_integral_rows(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width, rows,
                                     s->in_bits, s->out_bits, stream);
    case OP_2D:
        return gs_cuda_integral_2d(d.d_in, d.in_pitch, d.d_out, d.out_pitch, s->width, rows,
                                   s->in_bits, s->out_bits, ss->d_carry, &ss->table_scratch,
                                   stream);
    }
    return cudaErrorInvalidValue;
}

} /* namespace */

cudaError_t gs_strip_stream_init(gs_strip_stream *ss, bool device_memory)
{
    memset(ss, 0, sizeof *ss);
    ss->device_memory = device_memory;
    cudaError_t e = cudaSuccess;
    for (int s = 0; s < kStreams && e == cudaSuccess; ++s) {
        e = cudaStreamCreateWithFlags(&ss->stream[s], cudaStreamNonBlocking);
        for (int k = 0; k < EV_COUNT && e == cudaSuccess; ++k)
            e = cudaEventCreate(&ss->slot[s].ev[k]);
    }
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ss->queued_done, cudaEventDisableTiming);
    return e;
}

void gs_strip_stream_release(gs_strip_stream *ss)
{
    gs_strip_stream_settle(ss);
    for (int s = 0; s < kStreams; ++s)
        if (ss->stream[s]) cudaStreamSynchronize(ss->stream[s]);
    release_buffers(ss);
    for (int s = 0; s < kStreams; ++s) {
        for (int k = 0; k < EV_COUNT; ++k)
            if (ss->slot[s].ev[k]) cudaEventDestroy(ss->slot[s].ev[k]);
        if (ss->stream[s]) cudaStreamDestroy(ss->stream[s]);
    }
    if (ss->queued_done) cudaEventDestroy(ss->queued_done);
}

cudaStream_t gs_strip_stream_queue(const gs_strip_stream *ss, const gs_strip *s)
{
    return ss->device_memory ? (cudaStream_t)s->stream : NULL;
}

cudaError_t gs_strip_stream_settle(gs_strip_stream *ss)
{
    if (!ss->queued_pending) return cudaSuccess;
    cudaError_t e = cudaEventSynchronize(ss->queued_done);
    if (e == cudaSuccess) ss->queued_pending = false;
    return e;
}

namespace {

/* Where a call's work starts: a caller's stream (queued), after the engine's last queued
 * work, or the engine's own streams after the caller's producer on the default stream
 * (DLPack asks it to queue its writes there) and after the engine's last queued work. */
cudaError_t begin_call(gs_strip_stream *ss, cudaStream_t queue, bool device)
{
    /* A caller's earlier non-sticky error on this thread (a stream query's NotReady) is not
     * this call's: the launches below read the last error. */
    cudaGetLastError();
    cudaError_t e = cudaSuccess;
    if (queue) return ss->queued_pending ? cudaStreamWaitEvent(queue, ss->queued_done, 0) : e;
    if (device) e = cudaStreamSynchronize(cudaStreamLegacy);
    for (int k = 0; k < kStreams && e == cudaSuccess && ss->queued_pending; ++k)
        e = cudaStreamWaitEvent(ss->stream[k], ss->queued_done, 0);
    return e;
}

/* After a queued call's work: the event that later calls, and frees, wait for. */
cudaError_t end_queued(gs_strip_stream *ss, cudaStream_t queue)
{
    cudaError_t e = cudaEventRecord(ss->queued_done, queue);
    if (e == cudaSuccess) ss->queued_pending = true;
    return e;
}

} /* namespace */

cudaError_t gs_strip_stream_copy(gs_strip_stream *ss, const gs_strip *s)
{
    const cudaStream_t queue = gs_strip_stream_queue(ss, s);
    const cudaStream_t stream = queue ? queue : ss->stream[0];
    cudaError_t e = begin_call(ss, queue, true);
    const size_t row = (size_t)s->width * (s->in_bits / 8);
    /* packed rows in one copy: a 2D copy of many narrow rows runs far below the rate */
    if (e == cudaSuccess && s->src_stride == row && s->dst_stride == row)
        e = cudaMemcpyAsync(s->dst, s->src, row * s->rows, cudaMemcpyDeviceToDevice, stream);
    else if (e == cudaSuccess)
        e = cudaMemcpy2DAsync(s->dst, s->dst_stride, s->src, s->src_stride, row, s->rows,
                              cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess) e = queue ? end_queued(ss, queue) : cudaStreamSynchronize(stream);
    return e;
}

cudaError_t gs_strip_stream_set_carry(gs_strip_stream *ss, const gs_strip *s,
                                      const void *column_sums, size_t bytes)
{
    /* the pinned carry is rewritten from the host: queued work that reads it ends first */
    cudaError_t e = gs_strip_stream_settle(ss);
    if (e != cudaSuccess) return e;
    if (ss->cap_carry < bytes) {
        if (ss->d_carry) cudaFree(ss->d_carry);
        if (ss->h_carry) cudaFreeHost(ss->h_carry);
        ss->d_carry = ss->h_carry = NULL;
        ss->cap_carry = 0;
        e = cudaMalloc(&ss->d_carry, bytes);
        if (e == cudaSuccess) e = cudaMallocHost(&ss->h_carry, bytes);
        if (e == cudaSuccess) ss->cap_carry = bytes;
    }
    if (e != cudaSuccess) return e;
    /* on the stream of the run's first chunk: the caller's, or slot 0's */
    const cudaStream_t queue = gs_strip_stream_queue(ss, s);
    memcpy(ss->h_carry, column_sums, bytes);
    return cudaMemcpyAsync(ss->d_carry, ss->h_carry, bytes, cudaMemcpyHostToDevice,
                           queue ? queue : ss->stream[0]);
}

/*
 * Stream a strip through the stream slots. Chunk c uses slot c % kStreams: its rows are packed
 * into pinned h_in on the host while the other slot's chunk is on the device; then upload,
 * compute, download are enqueued with events between them. The 2d table's column pass
 * needs the previous chunk's last row, so each chunk's compute waits on the event of the
 * chunk before it. Every slot's stream is drained before returning, on error too.
 */
cudaError_t gs_strip_stream_run(gs_strip_stream *ss, const gs_strip *s, const strip_work &w)
{
    const strip_io io = io_of(ss, s);
    const chunk_plan p = plan_chunks(s, w, io);
    const cudaStream_t queue = gs_strip_stream_queue(ss, s);
    cudaError_t e = ensure_buffers(ss, p, io);
    if (e == cudaSuccess) e = begin_call(ss, queue, io.device);
    /* Device strips are a library caller's, who times its own calls: no events but the one
     * the 2d table's chunks chain on (each costs time against a short kernel). */
    const bool timed = !io.device;
    uint32_t finished = 0;
    for (uint32_t c = 0; c < p.chunks && e == cudaSuccess; ++c) {
        const int k = (int)(c % kStreams);
        slot_buffers *b = &ss->slot[k];
        /* a queued call's chunks follow one another on the caller's stream */
        cudaStream_t stream = queue ? queue : ss->stream[k];
        if (c >= (uint32_t)kStreams && !queue) {
            e = finish_chunk(ss, s, p, io, c - kStreams);
            if (e != cudaSuccess) break;
            ++finished;
        }
        const chunk_rows r = rows_of_chunk(p, s, w, c);
        const uint32_t in_rows = r.in1 - r.in0;
        const char *src_rows = (const char *)s->src + (size_t)r.in0 * s->src_stride;
        char *dst_rows = (char *)s->dst + (size_t)r.y0 * s->dst_stride;
        const chunk_rows_on_device d = {
            io.direct_in ? (const void *)src_rows : b->d_in, io.direct_in ? s->src_stride : p.in_pitch,
            io.direct_out ? (void *)dst_rows : b->d_out, io.direct_out ? s->dst_stride : p.out_pitch};
        if (!io.device)
            for (uint32_t y = 0; y < in_rows; ++y)
                memcpy((char *)b->h_in + (size_t)y * p.in_row, src_rows + (size_t)y * s->src_stride,
                       p.in_row);
        if (timed && (e = cudaEventRecord(b->ev[EV_START], stream))) break;
        if (!io.direct_in &&
            (e = cudaMemcpy2DAsync(b->d_in, p.in_pitch, io.device ? (const void *)src_rows : b->h_in,
                                   io.device ? s->src_stride : p.in_row, p.in_row, in_rows,
                                   io.device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice,
                                   stream)))
            break;
        if (timed && (e = cudaEventRecord(b->ev[EV_UPLOADED], stream))) break;
        if (w.op == OP_2D && c > 0) {
            const slot_buffers *prev = &ss->slot[(c - 1) % kStreams];
            if ((e = cudaStreamWaitEvent(stream, prev->ev[EV_COMPUTED], 0))) break;
        }
        if ((e = compute_chunk(ss, s, p, w, b, r, d, stream))) break;
        if ((timed || w.op == OP_2D) && (e = cudaEventRecord(b->ev[EV_COMPUTED], stream))) break;
        if (!io.direct_out &&
            (e = cudaMemcpy2DAsync(io.device ? (void *)dst_rows : b->h_out,
                                   io.device ? s->dst_stride : p.out_row, b->d_out, p.out_pitch,
                                   p.out_row, r.rows,
                                   io.device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost,
                                   stream)))
            break;
        if (timed && (e = cudaEventRecord(b->ev[EV_DOWNLOADED], stream))) break;
    }
    if (queue) { /* marked even after an error: chunks queued before it still run */
        const cudaError_t marked = end_queued(ss, queue);
        return e != cudaSuccess ? e : marked;
    }
    if (e == cudaSuccess) {
        for (uint32_t c = finished; c < p.chunks && e == cudaSuccess; ++c)
            e = finish_chunk(ss, s, p, io, c);
    }
    for (uint32_t k = 0; k < (uint32_t)kStreams && k < p.chunks; ++k) cudaStreamSynchronize(ss->stream[k]);
    return e;
}