/* strip_stream.h: the CUDA plugin's strip engine: strips streamed through the kernels. */
#ifndef GS_CUDA_STRIP_STREAM_H
#define GS_CUDA_STRIP_STREAM_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "gsmooth/gsmooth_plugin.h"

/*
 * A strip call cuts the strip into chunks of rows (bounded bytes in any one buffer, so
 * device memory stays bounded whatever the strip size) and runs them round-robin on
 * kStreams stream slots, each a stream with its own buffers and events: while one chunk's
 * rows are copied into its slot's pinned staging on the host, the previous chunk uploads,
 * computes and downloads on the other slot's stream. The engine keeps no global state;
 * calls on one engine must not overlap. A device strip that names a caller's stream
 * (gs_strip.stream) runs every chunk on that stream and returns once they are queued; the
 * engine then remembers an event after them, which its next call's streams wait for and
 * which any freeing of its buffers waits for on the host.
 */

constexpr int kStreams = 2; /* double buffering: copy-in overlaps GPU work */
static_assert(kStreams >= 2, "overlap needs two streams at least");
/* The strip height the engine asks for (the descriptor's preferred strip bytes): four
 * chunks of host rows, so the pipeline fills. */
constexpr uint32_t kPreferredStripBytes = 64u << 20;

enum { EV_START, EV_UPLOADED, EV_COMPUTED, EV_DOWNLOADED, EV_COUNT };

/* Device buffers of one stream slot, and its pinned host staging. */
struct slot_buffers {
    void *h_in, *h_out;          /* pinned staging, packed rows */
    void *d_in, *d_out, *d_scr;  /* device rows (pitched) and float scratch */
    cudaEvent_t ev[EV_COUNT];    /* per chunk: start, uploaded, computed, downloaded */
};

/* One engine: its stream slots, their buffers (grown to the largest strip seen), the 2d
 * carry and the summed event times. Zeroed and set up by gs_strip_stream_init. */
struct gs_strip_stream {
    bool device_memory;               /* strips are in device memory (ABI 1.3 config.memory) */
    cudaStream_t stream[kStreams];    /* one per stream slot */
    slot_buffers slot[kStreams];      /* buffers, sized by `cap_*` below */
    size_t cap_h_in, cap_h_out;       /* bytes of each h_in / h_out */
    size_t cap_d_in, cap_d_out, cap_d_scr; /* bytes of each d_in / d_out / d_scr */
    void *d_carry, *h_carry;          /* 2d: the table row above the strip (device, pinned) */
    size_t cap_carry;                 /* bytes of d_carry and h_carry */
    gs_cuda_integral_scratch table_scratch; /* 2d: the tiles' look-back words */
    cudaEvent_t queued_done;          /* after the last call queued on a caller's stream */
    bool queued_pending;              /* queued_done may not have happened yet */
    uint64_t upload_ns, kernel_ns, download_ns; /* summed event times (host strips) */
};

enum op_kind { OP_SMOOTH, OP_ROWS, OP_2D, OP_AXES };

/* What a call computes: the operation, its passes, and for OP_AXES the axes and the rows
 * of the strip's window above and below the rows written. */
struct strip_work {
    op_kind op;
    uint32_t iters;
    uint32_t axes;
    uint32_t above, below;
};

/* Every call below runs on the calling thread's current device, which must be the one the
 * engine was set up on, and returns cudaSuccess or the first CUDA error. */

/* Zero `ss` and create its streams and events; on failure gs_strip_stream_release still
 * frees what was made. */
cudaError_t gs_strip_stream_init(gs_strip_stream *ss, bool device_memory);

/* Wait for the engine's streams, then free its buffers, events and streams. */
void gs_strip_stream_release(gs_strip_stream *ss);

/* The caller's stream a strip names (gs_strip.stream), for a device-memory engine; NULL
 * when the strip names none, and the call waits for its own work. */
cudaStream_t gs_strip_stream_queue(const gs_strip_stream *ss, const gs_strip *s);

/* Compute `w` over a checked strip: queued on the strip's stream (gs_strip_stream_queue),
 * or every slot drained before returning, on error too. */
cudaError_t gs_strip_stream_run(gs_strip_stream *ss, const gs_strip *s, const strip_work &w);

/* A device strip's rows copied unchanged, device to device (smoothing with no passes),
 * queued on the strip's stream or waited for. */
cudaError_t gs_strip_stream_copy(gs_strip_stream *ss, const gs_strip *s);

/* Upload the 2d table's row above the next strip (`bytes` of host memory) ahead of an
 * OP_2D run of strip `s`, on the stream that run starts on; the run leaves the strip's
 * last row in d_carry. */
cudaError_t gs_strip_stream_set_carry(gs_strip_stream *ss, const gs_strip *s,
                                      const void *column_sums, size_t bytes);

/* Wait on the host for the work queued on a caller's stream (buffers about to be reused
 * from the host, or freed). */
cudaError_t gs_strip_stream_settle(gs_strip_stream *ss);

#endif /* GS_CUDA_STRIP_STREAM_H */
