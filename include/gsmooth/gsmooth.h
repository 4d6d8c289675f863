/* gsmooth.h: libgsmooth, gsmooth's pipeline as a C library: a context (backend, threads, devices), smoothing and integrals on caller buffers in host or CUDA device memory, and file to file. */
#ifndef GSMOOTH_H
#define GSMOOTH_H

/*
 * Link with `pkg-config --cflags --libs gsmooth` (shared) or `--static` (libgsmooth.a).
 * Backends are plugins (gsmooth_plugin.h), found in this order: the context's plugin_dir,
 * each GSMOOTH_PLUGIN_PATH entry, <dir of libgsmooth.so>/gsmooth/plugins, then
 * <dir of the executable>/../lib/gsmooth/plugins. The arithmetic is the one
 * gsmooth_plugin.h states, bit for bit on every backend.
 *
 * Errors. Every call that can fail returns a gsmooth_status and writes one line of text,
 * NUL-terminated and truncated to fit, into the caller's `err` of `err_size` bytes (err may
 * be NULL when err_size is 0). The messages name the library's own terms (a field, a
 * value), not a command-line flag; the command line adds its flags. The library never
 * prints, exits or aborts; notes (a colour image converted, a backend fallback) go to the
 * context's `note` callback when one is given.
 *
 * Versioning. Every options, info and result struct starts with struct_size: the caller
 * sets it to sizeof the struct as its header declares it (the _init functions do, for
 * options), also in a result it passes to be filled. gsmooth_image, a buffer's plain
 * description, has none: its layout is fixed, and a change to it would be a new type. The
 * library reads options and writes results only up to struct_size, and later versions only
 * append fields, so a program built against an older header keeps working with a newer
 * library: fields it does not know take their defaults and are not written. A struct_size
 * below the struct's size in version 0.2 is refused (GSMOOTH_ERR_USAGE), and so are 0.2's
 * batch options, whose layout 0.3 changed (the file options are now pointed to, so that
 * they can grow).
 *
 * Threading. Every function may be called from any thread. Calls on one context run one
 * at a time: the context holds a lock for the length of each call. Use one context per
 * thread to compute at once; contexts share nothing. A context's backend instances (a
 * CUDA device context, its buffers) are made on first use and kept until
 * gsmooth_context_destroy, so a long-lived context pays device start-up once.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSMOOTH_VERSION_MAJOR 0
#define GSMOOTH_VERSION_MINOR 3
#define GSMOOTH_VERSION_PATCH 0

#if defined(_WIN32)
#define GSMOOTH_API __declspec(dllexport)
#else
#define GSMOOTH_API __attribute__((visibility("default")))
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
GSMOOTH_API const char *gsmooth_version(void);

/* Status codes; the command line exits 2 for GSMOOTH_ERR_USAGE and 1 for the others. */
typedef enum gsmooth_status {
    GSMOOTH_OK = 0,
    GSMOOTH_ERR_USAGE = 1,     /* a bad argument: sizes, depth, passes, a null pointer */
    GSMOOTH_ERR_IO = 2,        /* cannot open, read, write, rename */
    GSMOOTH_ERR_FORMAT = 3,    /* not an image, corrupt or truncated, unsupported variant */
    GSMOOTH_ERR_TOO_LARGE = 4, /* over max_pixels, or size arithmetic would overflow */
    GSMOOTH_ERR_NOMEM = 5,     /* host or device memory exhausted */
    GSMOOTH_ERR_BACKEND = 6    /* no backend for the work, or the backend failed */
} gsmooth_status;

/* A status in a few words ("I/O error", ...); never NULL. */
GSMOOTH_API const char *gsmooth_status_name(gsmooth_status status);

/* The plugin ABI this library loads: plugins of this major and at most this minor. */
GSMOOTH_API void gsmooth_plugin_abi_version(uint32_t *major, uint32_t *minor);

/* Bytes that hold any message the library writes. */
#define GSMOOTH_ERR_SIZE 1024

/* Most smoothing passes (the plugin ABI's limit), and the passes when none are asked for. */
#define GSMOOTH_MAX_ITERS 100000u
#define GSMOOTH_DEFAULT_ITERS 3u
/* The default pixel limit of a file call (2^30 pixels). */
#define GSMOOTH_DEFAULT_MAX_PIXELS (UINT64_C(1) << 30)
/* Most files a batch has in flight. */
#define GSMOOTH_MAX_JOBS 256u

/* Output compression, for PNG (deflate of Sub-filtered rows) and TIFF (Adobe Deflate):
 * 0 stores; for PNG, 1 codes literals and runs of one byte with no match search, 2..3 are
 * ISA-L's levels and 4..9 zlib's; for TIFF (libtiff's deflate), 1..3 are deflate level 1
 * and 4..9 that level. Every level decodes to the same pixels. */
#define GSMOOTH_COMPRESSION_DEFAULT (-1) /* the library's choice: GSMOOTH_COMPRESSION_DEFAULT_LEVEL */
#define GSMOOTH_COMPRESSION_DEFAULT_LEVEL 2
#define GSMOOTH_COMPRESSION_FAST 1
#define GSMOOTH_COMPRESSION_SMALL 6
#define GSMOOTH_COMPRESSION_MAX 9

/* "fast", "default", "small" or a digit 0..9 into a compression level. */
GSMOOTH_API gsmooth_status gsmooth_compression_parse(const char *text, int *level, char *err,
                                                     size_t err_size);

/* ---- contexts ---- */

typedef struct gsmooth_context gsmooth_context; /* opaque */

typedef struct gsmooth_context_options {
    uint32_t struct_size;   /* sizeof(gsmooth_context_options): set by _init */
    const char *backend;    /* "auto" (or NULL), "cpu", "cuda", or a path to a plugin .so */
    const char *plugin_dir; /* searched before the usual places; NULL: none */
    unsigned threads;       /* CPU threads a call may use; 0: every CPU this process may use */
    const char *devices;    /* "all" or "0,1,...": the devices calls spread strips over;
                               NULL: the backend's choice (device 0) */
    /* Notes about a file or a fallback, one line each (NULL: dropped). Called on the
     * calling thread, or on a pipeline thread during a file call. */
    void (*note)(void *user, const char *file, const char *message);
    void *note_user;        /* passed to note */
} gsmooth_context_options;

/* Fill `o` with the defaults: auto backend, every CPU, no notes. */
GSMOOTH_API void gsmooth_context_options_init(gsmooth_context_options *o);

/* Make a context. Finds the plugins (loading them, not starting any device). */
GSMOOTH_API gsmooth_status gsmooth_context_create(const gsmooth_context_options *o,
                                                  gsmooth_context **out, char *err,
                                                  size_t err_size);
/* Free a context and its backend instances. NULL is a no-op. */
GSMOOTH_API void gsmooth_context_destroy(gsmooth_context *ctx);

/* What a context found: one plugin file. Strings live as long as the context. */
typedef struct gsmooth_backend_info {
    uint32_t struct_size;    /* the caller's sizeof(gsmooth_backend_info) */
    const char *path;        /* the file */
    const char *load_error;  /* why it is no plugin this library takes, or NULL; when set,
                                only path is valid */
    const char *name;        /* "cpu", "cuda", ... */
    const char *version;     /* the plugin's version */
    const char *description; /* one line */
    uint32_t abi_major, abi_minor; /* the plugin ABI it was built against */
    char operations[96];     /* "smooth smooth-axes integral-rows integral-2d", or "none" */
    int takes_8_bit, takes_16_bit; /* sample depths it takes */
    int available;           /* its probe passed: it can run here */
    const char *probe;       /* the probe's words: the reason, or what was found */
    uint32_t devices;        /* devices it can use (0: a backend without devices) */
    int device_memory;       /* takes buffers in its device's memory (CUDA pointers) */
} gsmooth_backend_info;

/* Plugin files found, in search order (the first of a name wins; files that failed to
 * load are listed with load_error). gsmooth_context_backend probes plugin i (a CUDA probe
 * starts a device context: tens to hundreds of milliseconds, once). */
GSMOOTH_API size_t gsmooth_context_backend_count(gsmooth_context *ctx);
GSMOOTH_API gsmooth_status gsmooth_context_backend(gsmooth_context *ctx, size_t i,
                                                   gsmooth_backend_info *out, char *err,
                                                   size_t err_size);

/* ---- buffers ---- */

typedef enum gsmooth_memory {
    GSMOOTH_MEMORY_HOST = 0, /* ordinary memory */
    GSMOOTH_MEMORY_CUDA = 1  /* a CUDA device pointer on `device` */
} gsmooth_memory;

/* A 2-D image or result: `height` rows of `width` samples of `bits` bits, native-endian and
 * contiguous within a row, row y at (char *)data + y * stride. Samples are uint8 (8),
 * uint16 (16) or IEEE float32 (32: there are no 32-bit integer samples); integral results
 * are uint32 (32) or uint64 (64), or float64 (64) for float32 samples. */
typedef struct gsmooth_image {
    void *data;            /* first sample of row 0 */
    size_t stride;         /* bytes from one row to the next, >= width * bits / 8 */
    uint32_t width, height; /* >= 1 each */
    uint32_t bits;         /* 8, 16 or 32 (float32) for samples; 32 or 64 for integral results */
    gsmooth_memory memory; /* where data lives; source and result in the same place */
    int32_t device;        /* the CUDA device ordinal, for GSMOOTH_MEMORY_CUDA */
} gsmooth_image;

/* Axes for smoothing, as bits. */
#define GSMOOTH_AXIS_X 1u /* along each row */
#define GSMOOTH_AXIS_Y 2u /* down each column */

/* Smooth `src` into `dst` (same size; dst at src's depth, or 32 bits: float32, the
 * unrounded passes, from any source; float32 sources give float32, NaN stored as the quiet
 * NaN 0x7fc00000, as gsmooth_plugin.h states; their spans, from the first row's first
 * byte to the last row's last, must not overlap, even where interleaved rows would not
 * touch): `iters` passes
 * (0..GSMOOTH_MAX_ITERS) along each axis in `axes` (0 means X). Host buffers run on the
 * context's backend (auto: CUDA for large work when it can run, else the CPU); CUDA
 * buffers run on their own device with a backend that takes device memory, without a
 * copy when base, stride and a row's bytes are multiples of 16. */
GSMOOTH_API gsmooth_status gsmooth_smooth(gsmooth_context *ctx, const gsmooth_image *src,
                                          const gsmooth_image *dst, uint32_t iters,
                                          uint32_t axes, char *err, size_t err_size);

typedef enum gsmooth_integral_mode {
    GSMOOTH_INTEGRAL_ROWS = 0, /* prefix sums along each row */
    GSMOOTH_INTEGRAL_2D = 1    /* summed-area table */
} gsmooth_integral_mode;

/* The result's bits for an integral of a width x height image of in_bits samples: 32 or
 * 64, so that no sum overflows (0 for a bad mode or depth); 64 (float64, summed in the
 * order gsmooth_plugin.h states) for float32 samples. */
GSMOOTH_API uint32_t gsmooth_integral_bits(gsmooth_integral_mode mode, uint32_t in_bits,
                                           uint32_t width, uint32_t height);

/* Integral of `src` into `dst` (same size, bits = gsmooth_integral_bits). */
GSMOOTH_API gsmooth_status gsmooth_integral(gsmooth_context *ctx, const gsmooth_image *src,
                                            const gsmooth_image *dst,
                                            gsmooth_integral_mode mode, char *err,
                                            size_t err_size);

/* As gsmooth_smooth and gsmooth_integral, on CUDA buffers only, queued on `cuda_stream`
 * (a cudaStream_t of the buffers' device; NULL: CUDA's legacy default stream) after the
 * work already queued there, as a CUDA library call is (since 0.3). The call returns once
 * the work is queued: the result is ready for the stream's later work, and a caller that
 * reads it from the host synchronises the stream first. Errors found while queuing are
 * returned (the result may then be partly written); a device fault after that shows on
 * the stream, as for any CUDA work. The buffers must stay allocated until the stream has
 * run the work (stream-ordered allocators, as torch's and cupy's, keep that for memory
 * allocated on that stream). A context's device work shares its buffers, so each queued
 * call also waits, on the device, for the context's previous one, whatever its stream:
 * streams that must overlap take a context each. Two cases wait on the host: a 2d
 * integral (its result), and a first call of a larger shape, which grows the context's
 * buffers once the earlier work is done. */
GSMOOTH_API gsmooth_status gsmooth_smooth_on_stream(gsmooth_context *ctx, const gsmooth_image *src,
                                                    const gsmooth_image *dst, uint32_t iters,
                                                    uint32_t axes, void *cuda_stream, char *err,
                                                    size_t err_size);
GSMOOTH_API gsmooth_status gsmooth_integral_on_stream(gsmooth_context *ctx,
                                                      const gsmooth_image *src,
                                                      const gsmooth_image *dst,
                                                      gsmooth_integral_mode mode,
                                                      void *cuda_stream, char *err,
                                                      size_t err_size);

/* ---- file to file: the command line's pipeline ---- */

typedef enum gsmooth_work_kind {
    GSMOOTH_WORK_SMOOTH = 0,
    GSMOOTH_WORK_INTEGRAL_ROWS = 1,
    GSMOOTH_WORK_INTEGRAL_2D = 2
} gsmooth_work_kind;

typedef struct gsmooth_file_options {
    uint32_t struct_size;   /* sizeof(gsmooth_file_options): set by _init */
    gsmooth_work_kind kind; /* smoothing or an integral */
    uint32_t iters;         /* smoothing passes (default 3) */
    uint32_t axes;          /* GSMOOTH_AXIS_* (0: X) */
    uint32_t depth;         /* smoothing output bits: 0 = the input's, 8 or 16, or 32:
                               float32, the unrounded passes (TIFF, FITS, NPY outputs) */
    uint64_t max_pixels;    /* larger images are refused before any pixel memory (2^30) */
    /* since 0.3 */
    int compression;        /* GSMOOTH_COMPRESSION_DEFAULT, or a level 0..9 (PNG, TIFF) */
    unsigned encode_threads; /* deflate threads per output, at most 12: 0 one per CPU this
                                process may use (a batch: its CPUs split between the files
                                in flight) */
    int skip_existing;      /* an output that is already a regular file is kept, the input
                               not read, and the call succeeds (result: skipped) */
    /* since 0.3 */
    /* Rows of the output written so far, of rows_total (the image's height), and seconds
     * since the call began: called by gsmooth_file after each strip is written, from the
     * thread that writes the output (a pipeline thread; the caller's own for an integral's
     * .png or .pgm picture), one call at a time and at most once a strip. rows_done never
     * decreases and equals rows_total in exactly one call, the last, once every row is
     * written (a later failure to commit the output can still fail the call). Not called
     * for a skipped output, nor by gsmooth_batch, whose progress counts files. NULL: no
     * calls. */
    void (*progress)(void *user, uint64_t rows_done, uint64_t rows_total, double elapsed_s);
    void *progress_user;    /* passed to progress */
} gsmooth_file_options;

/* Fill `o` with the defaults: smooth, 3 passes along X, input depth, default compression. */
GSMOOTH_API void gsmooth_file_options_init(gsmooth_file_options *o);

/* What a file call learnt, and where its time went (nanoseconds). */
typedef struct gsmooth_file_result {
    uint32_t struct_size;         /* the caller's sizeof(gsmooth_file_result) */
    uint32_t width, height, bits; /* the input (0 until known) */
    const char *backend;          /* the backend that ran it (static string), or NULL */
    uint64_t decode_ns, upload_ns, kernel_ns, download_ns, encode_ns, total_ns;
    /* since 0.3 */
    int skipped;                  /* skip_existing: the output was there, nothing was done */
} gsmooth_file_result;

/* Read `input` (PNG, JPEG, TIFF, PGM/PPM, BMP, GIF, ...; "-": standard input), compute, and
 * write `output` (its extension picks the format; "-": standard output). The output
 * appears only if everything succeeded: it is written to a temporary file beside it and
 * renamed into place, and an existing file is left untouched on failure. Strips spread
 * over the context's devices. `result` may be NULL. */
GSMOOTH_API gsmooth_status gsmooth_file(gsmooth_context *ctx, const gsmooth_file_options *o,
                                        const char *input, const char *output,
                                        gsmooth_file_result *result, char *err,
                                        size_t err_size);

/* Remove the temporary files of outputs being written when the process gets SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT, then die of that signal as it would have. For programs
 * that do not handle those signals themselves (the command line calls it); the handlers
 * are installed on the first call; later calls change nothing. */
GSMOOTH_API void gsmooth_remove_temporaries_on_signals(void);

/* ---- many files: the command line's batch (-o DIR) ---- */

/* Since 0.3: create `dir` and every missing directory above it, as `mkdir -p` does (mode
 * 0777 less the umask), safely when other processes create the same ones at once (a
 * directory that appears meanwhile is success). GSMOOTH_ERR_IO naming the component that
 * is not a directory or could not be made. */
GSMOOTH_API gsmooth_status gsmooth_make_directories(const char *dir, char *err, size_t err_size);


/* A list of input paths, kept compactly (about 8 bytes a path beyond its text: a million
 * paths are fine). */
typedef struct gsmooth_inputs gsmooth_inputs; /* opaque */

GSMOOTH_API gsmooth_inputs *gsmooth_inputs_create(void); /* NULL when out of memory */
GSMOOTH_API void gsmooth_inputs_destroy(gsmooth_inputs *inputs); /* NULL is a no-op */
/* Append one path (taken exactly as written). */
GSMOOTH_API gsmooth_status gsmooth_inputs_add(gsmooth_inputs *inputs, const char *path, char *err,
                                              size_t err_size);
/* Append the paths of a list file ("-": standard input), one a line (separator '\n') or
 * NUL-separated ('\0'); empty entries are skipped. */
GSMOOTH_API gsmooth_status gsmooth_inputs_read(gsmooth_inputs *inputs, const char *list_file,
                                               char separator, char *err, size_t err_size);
GSMOOTH_API size_t gsmooth_inputs_count(const gsmooth_inputs *inputs);

typedef enum gsmooth_file_status {
    GSMOOTH_FILE_OK = 0,
    GSMOOTH_FILE_FAILED = 1,
    GSMOOTH_FILE_SKIPPED = 2 /* skip_existing: its output was there */
} gsmooth_file_status;

/* What became of one input of a batch. Pointers live for the length of the callback. */
typedef struct gsmooth_file_outcome {
    uint32_t struct_size;       /* sizeof(gsmooth_file_outcome) in the library */
    const char *input;          /* as listed */
    const char *output;         /* its output path; NULL when none could be formed */
    gsmooth_file_status status;
    const char *error;          /* failed: the one-line cause; otherwise NULL */
    const gsmooth_file_result *result; /* what the run learnt, and its times (zeros if
                                    unknown); pointed to, so that the result can grow */
    double ms;                  /* wall time spent on it */
    /* since 0.3 */
    uint64_t position;          /* its place in the list, from 0 (outcomes come in the order
                                   files finish, and a path may be listed twice) */
} gsmooth_file_outcome;

typedef struct gsmooth_batch_options {
    uint32_t struct_size;        /* sizeof(gsmooth_batch_options): set by _init */
    const gsmooth_file_options *file; /* what to compute for each input, how to write it,
                                    whether to skip existing outputs (NULL: the defaults) */
    const char *out_dir;         /* each result goes to out_dir/<name>, named as the CLI
                                    names them (docs/cli.md, --output-dir) */
    unsigned jobs;               /* files in flight; 0: one per CPU; each file gets the
                                    context's threads, or when those are 0 the CPUs split
                                    between the files */
    uint32_t shard_index, shard_count; /* this task's share: positions j with
                                    j mod shard_count == shard_index ({0, 1}: all) */
    /* Called once per input of the shard, one call at a time (from worker threads). */
    void (*finished)(void *user, const gsmooth_file_outcome *outcome);
    /* After each input: files finished of total, input bytes done, seconds so far and left. */
    void (*progress)(void *user, unsigned done, unsigned total, uint64_t bytes_done,
                     double elapsed_s, double eta_s);
    void *user;                  /* passed to finished and progress */
    const char *relative_to;     /* since 0.3; NULL: each output is named by its input's
                                    basename. Else a directory (taken against the working
                                    directory, "." and ".." resolved by the text, symlinks
                                    not followed): each output keeps its input's path
                                    relative to it, below out_dir; an input outside it fails */
} gsmooth_batch_options;

/* Fill `o` with the defaults: the file defaults, automatic jobs, the whole list. */
GSMOOTH_API void gsmooth_batch_options_init(gsmooth_batch_options *o);

typedef struct gsmooth_batch_result {
    uint32_t struct_size;                  /* the caller's sizeof(gsmooth_batch_result) */
    unsigned files, done, failed, skipped; /* counts over this shard */
    double elapsed_s;                      /* wall time */
    uint64_t bytes;                        /* input bytes of the files done */
} gsmooth_batch_result;

/* Process this shard of `inputs` into o->out_dir on a pool of workers, going on past a
 * failed file (reported through `finished`). out_dir and the directories below it that
 * the outputs need are created as `mkdir -p` would (several processes may create the same
 * ones at once). Two inputs whose outputs would share a name are found over the whole
 * list: the later one fails. Returns GSMOOTH_OK when every file
 * was done or skipped, GSMOOTH_ERR_IO when one failed (err: how many), or an error before
 * any file was tried (a bad shard, out_dir not a directory). `result` may be NULL. */
GSMOOTH_API gsmooth_status gsmooth_batch(gsmooth_context *ctx, const gsmooth_batch_options *o,
                                         const gsmooth_inputs *inputs, gsmooth_batch_result *result,
                                         char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GSMOOTH_H */
