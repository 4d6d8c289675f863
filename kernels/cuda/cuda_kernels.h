/* cuda_kernels.h: the C-callable launchers of gsmooth's CUDA kernels. */
#ifndef GS_CUDA_KERNELS_H
#define GS_CUDA_KERNELS_H

/*
 * Every launcher works on device memory only and enqueues on `stream`; none synchronises.
 * Pointers prefixed d_ are device pointers. Pitches are in bytes. Launchers return
 * cudaSuccess, cudaErrorInvalidValue for bad arguments (checked before any launch), or the
 * error cudaGetLastError() reported after a launch. They print nothing and keep no state.
 *
 * Alignment: device rows handed to the smoothing and to the integrals must start
 * on a GS_CUDA_ALIGN boundary (base pointer and pitch), because those kernels move pixels
 * in 16-byte vectors. cudaMallocPitch and the plugin's buffers do so.
 */

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Byte alignment of device row starts and pitches (16-byte vector loads and stores). */
#define GS_CUDA_ALIGN 16u

/*
 * Smooth `rows` rows of `width` samples of `bits` (8 or 16) bits `iters` times, d_src ->
 * d_dst (same depth; must not overlap): every pass in registers, neighbours by warp
 * shuffles, pixels in 16-byte vectors, the division by 3 in a sequence proven equal to
 * IEEE division on the device (gs_cuda_check_fast_arith). Rows wider than one block's
 * segment cap the passes of one launch and keep float32 intermediates in d_scratch, which
 * holds at least gs_cuda_smooth_scratch_bytes for the same shape (NULL when that is 0).
 */
cudaError_t gs_cuda_smooth(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                           uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                           void *d_scratch, size_t scratch_bytes, cudaStream_t stream);

/* Bytes of float32 scratch one gs_cuda_smooth call of this shape needs (0 when one launch
 * does all passes); scratch rows are padded to GS_CUDA_ALIGN. */
size_t gs_cuda_smooth_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters);

/*
 * The same passes along rows with the results left unrounded: d_dst receives `width`
 * float32 values a row (float32 output, and the rows half of --axis xy, whose column passes
 * follow; iters = 0 converts); scratch as gs_cuda_smooth_scratch_bytes. `bits` 8 or 16, or
 * 32 for float32 samples: those take IEEE division (__fdiv_rn) in every pass and store
 * every NaN as 0x7fc00000 (iters = 0 too).
 */
cudaError_t gs_cuda_smooth_rows_float(const void *d_src, size_t src_pitch, float *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      uint32_t bits, uint32_t iters, void *d_scratch,
                                      size_t scratch_bytes, cudaStream_t stream);

/*
 * Smoothing down the columns of a window of `window_rows` rows: `iters` (>= 1) passes with
 * the window's first and last rows as column ends, for an image of `bits` samples (8, 16, or
 * 32: float32), then stored at out_bits: rounded to `bits` (out_bits = bits, 8 or 16) or
 * unrounded float32 (out_bits = 32). d_src holds samples of `bits` (src_kind = bits) or
 * float32 (src_kind = 32: the rows pass of xy, `iters` passes from samples of `bits`, which
 * sets the division the passes may take). Float32 samples take IEEE division and store
 * every NaN as 0x7fc00000. Rows [above, above + rows) of the result are written to d_dst.
 * d_scratch holds at least gs_cuda_smooth_columns_scratch_bytes (NULL when that is 0).
 */
cudaError_t gs_cuda_smooth_columns(const void *d_src, size_t src_pitch, uint32_t src_kind,
                                   void *d_dst, size_t dst_pitch, uint32_t width,
                                   uint32_t window_rows, uint32_t above, uint32_t rows,
                                   uint32_t bits, uint32_t out_bits, uint32_t iters,
                                   void *d_scratch, size_t scratch_bytes, cudaStream_t stream);
size_t gs_cuda_smooth_columns_scratch_bytes(uint32_t width, uint32_t window_rows, uint32_t iters);

/*
 * --axis xy over a window of `window_rows` rows: `iters` (>= 1) passes along each row, then
 * `iters` down each column on those floats (the window's first and last rows as column
 * ends), rounded once to `bits` (out_bits = bits) or left float32 (out_bits = 32); rows
 * [above, above + rows) of the result are written to d_dst. 8-bit samples to 8 bits at up
 * to GS_INT_SUMS_XY_MAX_PASSES passes (as integer sums) and from there to 10 (row passes in
 * shared memory), and 16-bit samples to 16 bits at up to GS_CUDA_XY_ONE_PASS_MAX_PASSES (in
 * float) take one pass over the image and no scratch; the rest goes through float32 rows in
 * d_scratch, which holds at least
 * gs_cuda_smooth_xy_scratch_bytes for the same shape (NULL when that is 0).
 */
cudaError_t gs_cuda_smooth_xy(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                              uint32_t width, uint32_t window_rows, uint32_t above, uint32_t rows,
                              uint32_t bits, uint32_t out_bits, uint32_t iters, void *d_scratch,
                              size_t scratch_bytes, cudaStream_t stream);
size_t gs_cuda_smooth_xy_scratch_bytes(uint32_t width, uint32_t window_rows, uint32_t bits,
                                       uint32_t out_bits, uint32_t iters);

/* The passes of gs_cuda_smooth_xy over 8-bit samples to 8 bits past the integer window that
 * run in one pass over the image, their row passes in shared-memory tiles
 * (smooth_xy_tiles.cu): whether it takes rows of `width` at `iters` (nonzero), and the
 * launch, with gs_cuda_smooth_xy's arguments without the scratch. */
int gs_cuda_smooth_xy_tiles_takes(uint32_t width, uint32_t bits, uint32_t out_bits, uint32_t iters);
cudaError_t gs_cuda_smooth_xy_tiles(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                                    uint32_t width, uint32_t window_rows, uint32_t above, uint32_t rows,
                                    uint32_t iters, cudaStream_t stream);

/* The passes of gs_cuda_smooth_xy over 16-bit samples to 16 bits that one launch runs in
 * float, rows then columns, from 1 to GS_CUDA_XY_ONE_PASS_MAX_PASSES, where that measured
 * faster than the two steps: gs_cuda_smooth_xy's arguments without the scratch. */
#define GS_CUDA_XY_ONE_PASS_MAX_PASSES 3u
cudaError_t gs_cuda_smooth_xy_float_one_pass(const void *d_src, size_t src_pitch, void *d_dst,
                                             size_t dst_pitch, uint32_t width, uint32_t window_rows,
                                             uint32_t above, uint32_t rows, uint32_t bits,
                                             uint32_t out_bits, uint32_t iters, cudaStream_t stream);

/*
 * Exhaustive proof, on the device, that the registers variant's fast arithmetic gives the
 * bits of stencil_math.h's formulas: every float s in [0, 3 * 65535] divided by 3 in three
 * instructions, and in two (gs_div3_short) for s = 0 and s > 2^-123, every integer sum s in
 * [0, 3 * 65535] divided from its words (div3_of_magic_sum: pass 1 of the few-pass launch and of
 * one-warp segments of 8-bit samples),
 * every float v in [0, maxval] quantized for maxval 255 and 65535, and every integer sum N
 * in [0, 255 * 3^K] of K = 1 to 4 passes rounded to round(N / 3^K) (round_packed_lane, the
 * few-pass launch's u8 segments away from the row ends). d_counts (two device
 * uint64, zeroed by the caller) gets d_counts[0] += inputs that differ where the formulas
 * must agree (0 expected), and d_counts[1] += two-instruction quotients that differ at or
 * below 2^-123 (5,592,406 expected: the reason for GS_SHORT_DIV_PASSES).
 */
cudaError_t gs_cuda_check_fast_arith(unsigned long long *d_counts, cudaStream_t stream);

/*
 * Integral rows: inclusive prefix sum of each row, in_bits 8/16 -> out_bits 32/64 (sums
 * wrap modulo 2^out_bits, as unsigned C arithmetic does); in_bits 32 (float32) -> out_bits
 * 64 (float64), gs_cuda_float_integral_rows.
 */
cudaError_t gs_cuda_integral_rows(const void *d_src, size_t src_pitch, void *d_dst,
                                  size_t dst_pitch, uint32_t width, uint32_t rows,
                                  uint32_t in_bits, uint32_t out_bits, cudaStream_t stream);

/*
 * Integrals of float32 samples in float64 (integral_float.cu), in the ABI's order: each row
 * summed from left to right from -0.0, one lane a row (never a tree scan); the 2d table then
 * adds each row down each column in order, from d_carry (`width` doubles, the table row
 * above the strip; -0.0 before the first), and leaves the strip's last row there. Every NaN
 * is stored as 0x7ff8000000000000. Source rows 4-byte aligned, destination rows
 * 8-byte aligned. gs_cuda_integral_rows and gs_cuda_integral_2d call these for in_bits 32.
 */
cudaError_t gs_cuda_float_integral_rows(const void *d_src, size_t src_pitch, void *d_dst,
                                        size_t dst_pitch, uint32_t width, uint32_t rows,
                                        cudaStream_t stream);
cudaError_t gs_cuda_float_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      void *d_carry, cudaStream_t stream);

/*
 * Device scratch of gs_cuda_integral_2d: the words its tiles publish to each other, 4.5 KiB
 * for each tile of 512 columns and 64 rows (32 of 16-bit input) in one launch of at most
 * 256 bands: 37 MiB at most, for rows of 16384 pixels. Start from all zeros;
 * gs_cuda_integral_2d allocates and grows it (freeing the old buffer waits for the device)
 * and counts the launches that tag its words; gs_cuda_integral_scratch_free releases it.
 * Calls that share one must run in order (one stream, or streams ordered by events).
 */
typedef struct gs_cuda_integral_scratch {
    void *d;           /* device buffer, NULL until the first call */
    size_t bytes;      /* its size */
    uint32_t launches; /* launches since it was last zeroed */
} gs_cuda_integral_scratch;

/*
 * Summed-area table of a strip, continuing from earlier strips: d_carry holds `width`
 * values of out_bits, the table's row just above this strip (each column's running sum of
 * the row prefixes so far; zeros before the first strip). On return the strip's table is
 * in d_dst and d_carry holds its last row. Rows of up to 16384 pixels take one pass over
 * the input in tiles (scratch is their look-back's); wider rows a row pass and a column pass.
 */
cudaError_t gs_cuda_integral_2d(const void *d_src, size_t src_pitch, void *d_dst,
                                size_t dst_pitch, uint32_t width, uint32_t rows,
                                uint32_t in_bits, uint32_t out_bits, void *d_carry,
                                gs_cuda_integral_scratch *scratch, cudaStream_t stream);

/* Free a scratch's device buffer (waits for the device) and zero the struct. */
void gs_cuda_integral_scratch_free(gs_cuda_integral_scratch *scratch);

#ifdef __cplusplus
}
#endif

#endif /* GS_CUDA_KERNELS_H */
