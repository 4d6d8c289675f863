/* gsmooth_plugin.h: the whole, versioned ABI between the gsmooth host and a backend. */
/*
 * It also states the arithmetic every backend must reproduce bit for bit.
 */
#ifndef GSMOOTH_PLUGIN_H
#define GSMOOTH_PLUGIN_H

/*
 * A backend is a shared object that exports one C symbol, GS_PLUGIN_ENTRY_NAME, of type
 * gs_plugin_entry_fn. It returns a pointer to a static, read-only descriptor. Everything a
 * third-party backend needs is in this header; it depends on nothing else of gsmooth.
 *
 * Versioning. Every struct crossing the boundary starts with its size and the ABI
 * major/minor it was built against. A host refuses a plugin of another major, or of a newer
 * minor than its own. A minor bump only appends fields to the end of a struct; readers look
 * at struct_size before touching an appended field. The fields each minor adds: 1.1
 * smooth_axes (--axis y|xy); 1.2 device_count (--devices); 1.3 memories and
 * gs_plugin_config.memory (strips already in device memory, for libgsmooth's callers);
 * 1.4 float32 samples (GS_DEPTH_F32: a host offers float strips only to a plugin whose
 * descriptor has the bit, so an older plugin is never handed one); 1.5 gs_strip.stream and
 * GS_MEMORY_STREAM (device work queued on a caller's CUDA stream).
 *
 * Data. Kernels work on strips: `rows` rows of `width` samples, with an explicit byte
 * stride for source and destination, so a host can stream an image of any height through
 * a fixed amount of memory. Samples are native-endian uint8_t or uint16_t, or (ABI 1.4)
 * IEEE float32 (in_bits = 32: there are no 32-bit integer samples); integral output is
 * native-endian uint32_t or uint64_t, or float64 for float32 input.
 *
 * Arithmetic. Every backend gives identical bytes for every input; the host checks it
 * against a plain C reference, and users rely on it. For each row independently:
 *
 *   Smoothing, `iters` = K passes (0 <= K <= GS_PLUGIN_MAX_ITERS):
 *   - samples become float32 exactly;
 *   - one pass: out[x] = s / n, with s = (a[x-1] + a[x]) + a[x+1] added in that order in
 *     float32, leaving out the neighbours that fall outside the row, and n the number of
 *     terms: 3 inside, 2 at each end, 1 when the row is one sample wide (the value is
 *     kept). `/` is IEEE float32 division, round to nearest even (a faster sequence is
 *     allowed only if it gives the same bits for every reachable input; halving is exact
 *     as a multiply by 0.5f);
 *   - K passes, each reading only the previous pass's values (double buffering);
 *   - the result is rounded to nearest, ties to even (C's rintf), clamped to [0, 255] or
 *     [0, 65535], and stored at the input's depth. K = 0 copies the input.
 *   The whole row is the signal: no seam at any tile, block, strip or thread boundary.
 *   Compile float code without contraction into FMA and without fast-math.
 *
 *   Along columns (ABI 1.1, smooth_axes): the same passes down each column, the column's
 *   first and last samples taking the 2-term mean; along both axes: K passes along the
 *   rows, then K passes along the columns on those float32 values (no rounding between),
 *   then one rounding as above.
 *
 *   Float32 samples (ABI 1.4, in_bits = 32): the same passes on the samples' values, and
 *   the result stored as float32 (out_bits = 32) with no rounding and no clamping. Integer
 *   samples may also be smoothed to float32 (in_bits 8 or 16, out_bits = 32): the
 *   unrounded passes. Values follow IEEE arithmetic: a NaN spreads one sample a pass, an
 *   infinity stays one (and +Inf beside -Inf makes NaN); subnormals are kept (no flush to
 *   zero). `/ 3` is IEEE division for every float (a faster sequence only where proven
 *   equal, infinities and NaN included). Every NaN result is stored as the one quiet NaN
 *   0x7fc00000 (float64: 0x7ff8000000000000), since hardware differs in the NaN it makes.
 *
 *   Integral rows: out[x] = in[0] + ... + in[x], exact in out_bits (the host picks out_bits
 *   with gs_integral_rows_bits, so no sum overflows).
 *   Integral 2d (summed-area table): out[y][x] = the sum of in[0..y][0..x] over the whole
 *   image, strips after the first continuing from `column_sums`; out_bits from
 *   gs_integral_2d_bits.
 *   Integrals of float32 (out_bits = 64, float64): rows: out[x] = out[x-1] + in[x] in
 *   float64, from left to right (out[0] = in[0]), each addition rounded to nearest even;
 *   2d: out[y][x] = column_sums[x] + row[x] in float64, with row[] the row's integral
 *   above, down each column in order (column_sums float64 too; before the first strip they
 *   hold -0.0, the identity of addition, so row 0 is its row integral, zeros' signs too).
 *   That order is the definition: a backend may scan rows in parallel, never reassociate
 *   one row's sums.
 *   NaN results are stored as above.
 *
 * Errors. Every call returns a gs_plugin_status. On failure it writes one line of text,
 * NUL-terminated and truncated to fit, into the caller-owned buffer `err` of `err_size`
 * bytes (err may be NULL when err_size is 0). Plugins never print, exit, abort, or keep
 * mutable global state.
 *
 * Threading. The descriptor, `probe` and `create` may be called from any thread at any
 * time. One instance is used by one thread at a time (the host serialises calls on it);
 * different instances may run concurrently on different threads. An instance may use
 * threads of its own inside a call, and joins them before the call returns.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PLUGIN_ABI_MAJOR 1
#define GS_PLUGIN_ABI_MINOR 5
#define GS_PLUGIN_ENTRY_NAME "gs_plugin_entry"

/* Most smoothing passes a host asks for (--iters); a backend may rely on it for halos. */
#define GS_PLUGIN_MAX_ITERS 100000u

/* Most rows of a smooth_axes window (halo_above + rows + halo_below): a backend may count
 * a window's rows in 32 bits and add a segment of them, or K, without wrapping. A host's
 * strips are far shorter (a few MiB each); a taller window is refused as invalid. */
#define GS_PLUGIN_MAX_WINDOW_ROWS (1u << 31)

#if defined(_WIN32)
#define GS_PLUGIN_EXPORT __declspec(dllexport)
#else
#define GS_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Header fields that open every ABI struct. */
#define GS_ABI_HEADER_FIELDS                                                         \
    uint32_t struct_size; /* sizeof the struct as the writer compiled it */           \
    uint16_t abi_major;   /* GS_PLUGIN_ABI_MAJOR of the writer */                     \
    uint16_t abi_minor    /* GS_PLUGIN_ABI_MINOR of the writer */

/* Fill the header of an ABI struct `s` of type `type`. */
#define GS_ABI_HEADER_INIT(type) \
    sizeof(type), GS_PLUGIN_ABI_MAJOR, GS_PLUGIN_ABI_MINOR

typedef enum gs_plugin_status {
    GS_PLUGIN_OK = 0,
    GS_PLUGIN_ERR_INVALID = 1,     /* bad argument: sizes, strides, depth, null pointer */
    GS_PLUGIN_ERR_UNSUPPORTED = 2, /* operation or depth this plugin does not implement */
    GS_PLUGIN_ERR_NOMEM = 3,       /* host or device memory exhausted */
    GS_PLUGIN_ERR_UNAVAILABLE = 4, /* cannot run here (no driver, no device, ...) */
    GS_PLUGIN_ERR_DEVICE = 5,      /* the device failed during a call */
    GS_PLUGIN_ERR_INTERNAL = 6     /* anything else */
} gs_plugin_status;

/* Operations, as bits in gs_plugin_desc.ops. */
#define GS_OP_SMOOTH_ROWS   (1u << 0)
#define GS_OP_INTEGRAL_ROWS (1u << 1)
#define GS_OP_INTEGRAL_2D   (1u << 2)
#define GS_OP_SMOOTH_AXES   (1u << 3) /* ABI 1.1: smooth_axes */

/* Axes for smooth_axes, as bits. */
#define GS_AXIS_X (1u << 0) /* along each row */
#define GS_AXIS_Y (1u << 1) /* down each column */

/* Sample depths, as bits in gs_plugin_desc.depths. */
#define GS_DEPTH_U8  (1u << 0)
#define GS_DEPTH_U16 (1u << 1)
#define GS_DEPTH_F32 (1u << 2) /* ABI 1.4: float32 samples in, and float32 smoothing out */

/* Where an instance's strips live (ABI 1.3), as values of gs_plugin_config.memory and bits
 * of gs_plugin_desc.memories. */
#define GS_MEMORY_HOST   0u        /* ordinary host memory: every plugin */
#define GS_MEMORY_DEVICE (1u << 0) /* the memory of the instance's device (a CUDA pointer) */
#define GS_MEMORY_STREAM (1u << 1) /* ABI 1.5: device strips take gs_strip.stream */
/* gs_strip.stream for CUDA's legacy default stream: cudaStreamLegacy's value in the CUDA
 * runtime's headers (the per-thread default stream is cudaStreamPerThread, 0x2). */
#define GS_CUDA_STREAM_LEGACY ((void *)0x1)

/* Options for one instance. */
typedef struct gs_plugin_config {
    GS_ABI_HEADER_FIELDS;
    uint32_t threads; /* worker threads a CPU backend may use; 0 = all cores */
    int32_t device;   /* device ordinal for a GPU backend; -1 = plugin's choice */
    /* ---- ABI 1.3 ---- */
    /* GS_MEMORY_HOST, or GS_MEMORY_DEVICE: every strip's src and dst given to this instance
     * are in its device's memory (column_sums stays in host memory). A host asks for it
     * only from a plugin whose descriptor has the bit in `memories`; a plugin reads it only
     * when struct_size covers it. A device-memory call first waits for the work queued on
     * the device's default stream (a caller's producer), and returns with its results
     * written (synchronous, as every call). */
    uint32_t memory;
} gs_plugin_config;

/*
 * One strip of rows. The source holds `rows` rows of `width` samples of `in_bits` bits
 * (8, 16, or 32 for float32) starting at `src`, row r at src + r * src_stride. The
 * destination is laid out likewise at `dst` with `dst_stride`, holding samples of
 * `out_bits` bits: for smoothing equal to in_bits, or 32 (float32) from any input of a
 * plugin with GS_DEPTH_F32; for the integrals 32 or 64 (unsigned), or 64 (float64) for
 * float32 input. Strides are in bytes and at least one row.
 * Source and destination do not overlap.
 */
typedef struct gs_strip {
    GS_ABI_HEADER_FIELDS;
    uint32_t width;     /* samples per row, >= 1 */
    uint32_t rows;      /* rows in this strip, >= 1 */
    uint32_t in_bits;   /* 8 or 16; 32: float32 (ABI 1.4) */
    uint32_t out_bits;  /* in_bits or 32 (smooth), 32/64 (integral) */
    const void *src;    /* first source row */
    size_t src_stride;  /* bytes from one source row to the next */
    void *dst;          /* first destination row */
    size_t dst_stride;  /* bytes from one destination row to the next */
    /* ---- ABI 1.5 ---- */
    /* NULL, or for a device-memory strip given to a plugin with GS_MEMORY_STREAM: the CUDA
     * stream (a cudaStream_t) to queue the call's work on, after the work already queued
     * there. The call then returns once its work is queued, without waiting for the
     * default stream or for its own results, which that stream's later work sees (errors
     * found after queuing show on the stream, as for any CUDA work); an integral_2d call
     * still waits for its strip, whose last row it leaves in host memory. The instance's
     * own buffers stay ordered between calls on different streams. A host sets it only
     * for such a plugin. */
    void *stream;
} gs_strip;

/* Time an instance spent, summed over its calls since create; zero where not measured. */
typedef struct gs_plugin_timings {
    GS_ABI_HEADER_FIELDS;
    uint64_t upload_ns;   /* host to device copies */
    uint64_t kernel_ns;   /* computation */
    uint64_t download_ns; /* device to host copies */
} gs_plugin_timings;

typedef struct gs_plugin_instance gs_plugin_instance; /* opaque, owned by the plugin */

typedef struct gs_plugin_desc {
    GS_ABI_HEADER_FIELDS;
    const char *name;        /* short name for --backend, e.g. "cpu", "cuda" */
    const char *version;     /* the plugin's own version string */
    const char *description; /* one line for --list-backends */
    uint32_t ops;            /* GS_OP_* bits implemented */
    uint32_t depths;         /* GS_DEPTH_* bits accepted */
    uint32_t alignment;      /* byte alignment needed of src, dst and strides; 1 = none */
    uint32_t preferred_strip_bytes; /* source bytes per strip that run well; 0 = any */

    /* Can it run here? GS_PLUGIN_OK, or GS_PLUGIN_ERR_UNAVAILABLE and the reason in words
     * ("no NVIDIA driver", "no CUDA device", ...). On success `err` may receive a one-line
     * summary of what was found (device, driver version). */
    gs_plugin_status (*probe)(char *err, size_t err_size);

    /* Make an instance. On success *out is set and the caller owns it until destroy. */
    gs_plugin_status (*create)(const gs_plugin_config *config, gs_plugin_instance **out,
                               char *err, size_t err_size);
    void (*destroy)(gs_plugin_instance *instance); /* NULL is a no-op */

    /* Smooth each row `iters` times (0 <= iters <= GS_PLUGIN_MAX_ITERS) with the 3-point
     * mean, bit-exact as "Arithmetic" above states. NULL if not in ops. */
    gs_plugin_status (*smooth_rows)(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t iters, char *err, size_t err_size);

    /* Inclusive prefix sum along each row. NULL if not in ops. */
    gs_plugin_status (*integral_rows)(gs_plugin_instance *instance, const gs_strip *strip,
                                      char *err, size_t err_size);

    /* Summed-area table over strips in top-to-bottom order. `column_sums` holds `width`
     * values of out_bits bits: the table's row just above this strip, i.e. value x is the
     * sum of every sample in columns 0..x of all earlier strips' rows (zeros before the
     * first strip). The call writes the strip's table rows and leaves its last row in
     * `column_sums`. NULL if not in ops. */
    gs_plugin_status (*integral_2d)(gs_plugin_instance *instance, const gs_strip *strip,
                                    void *column_sums, char *err, size_t err_size);

    /* Optional (may be NULL): time spent so far, for --time. */
    void (*timings)(const gs_plugin_instance *instance, gs_plugin_timings *out);

    /* ---- ABI 1.1 ---- */

    /* Smooth along `axes` (GS_AXIS_X, GS_AXIS_Y or both), `iters` passes per axis, as
     * "Arithmetic" above states, on a window of rows. `strip->rows` is the number of rows
     * written to dst; src points at the window's first row and holds halo_above + rows +
     * halo_below rows (all `strip->src_stride` apart). The plugin treats the window as the
     * whole image: its first and last rows are column ends. A host streaming a taller image
     * gives min(iters, rows available) rows of halo on each side: a column end that is not
     * the image's spoils one more row per pass, so after `iters` passes the halo has taken
     * all of it and the rows written are exact. NULL if GS_OP_SMOOTH_AXES is not in ops;
     * read only when struct_size covers it. */
    gs_plugin_status (*smooth_axes)(gs_plugin_instance *instance, const gs_strip *strip,
                                    uint32_t axes, uint32_t halo_above, uint32_t halo_below,
                                    uint32_t iters, char *err, size_t err_size);

    /* ---- ABI 1.2 ---- */

    /* Optional (may be NULL: a backend without devices): how many devices `create` takes
     * as gs_plugin_config.device, numbered 0..count-1; 0 when none is usable. A host
     * spreads files or strips over them (--devices), one instance per device; the bytes
     * never depend on the device. Called only after a passing probe. Read only when
     * struct_size covers it. */
    uint32_t (*device_count)(void);

    /* ---- ABI 1.3 ---- */

    /* GS_MEMORY_DEVICE when `create` takes gs_plugin_config.memory = GS_MEMORY_DEVICE: the
     * kernels then run on a caller's device buffers, in place or through its own copy as
     * the plugin chooses (`alignment` is all it may require), with GS_MEMORY_STREAM (ABI
     * 1.5) when such strips may name a stream. 0: host memory only. Read only when
     * struct_size covers it. */
    uint32_t memories;
} gs_plugin_desc;

typedef const gs_plugin_desc *(*gs_plugin_entry_fn)(void);

/* ---- the integrals' output width: follows from the header alone ---- */

/* Bits that hold every sum of `count` samples of `in_bits` bits: 32 while the largest
 * possible sum, (2^in_bits - 1) x count, is below 2^32, else 64. */
static inline uint32_t gs_integral_bits_for_count(uint32_t in_bits, uint64_t count)
{
    const uint64_t max = in_bits == 16 ? 65535u : 255u;
    if (count > UINT64_MAX / max) return 64u; /* the product itself would overflow */
    return max * count <= UINT32_MAX ? 32u : 64u;
}

/* Integral rows: uint32 for 8-bit input (uint64 once 255 x width reaches 2^32), uint64
 * for 16-bit input, float64 for float32 input. */
static inline uint32_t gs_integral_rows_bits(uint32_t in_bits, uint32_t width)
{
    return in_bits >= 16 ? 64u : gs_integral_bits_for_count(in_bits, width);
}

/* Summed-area table: uint32 when (2^in_bits - 1) x width x height is below 2^32, else
 * uint64; float64 for float32 input. */
static inline uint32_t gs_integral_2d_bits(uint32_t in_bits, uint32_t width, uint32_t height)
{
    return in_bits == 32 ? 64u : gs_integral_bits_for_count(in_bits, (uint64_t)width * height);
}

/* The quiet NaN every NaN result is stored as (see "Arithmetic"). */
#define GS_CANONICAL_NAN_F32 UINT32_C(0x7fc00000)
#define GS_CANONICAL_NAN_F64 UINT64_C(0x7ff8000000000000)

#ifdef __cplusplus
}
#endif

#endif /* GSMOOTH_PLUGIN_H */
