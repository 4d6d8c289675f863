"""_native.py: finds libgsmooth.so and declares its C API (include/gsmooth/gsmooth.h) for ctypes."""
import ctypes
import ctypes.util
import os

ERR_SIZE = 1024
OK, ERR_USAGE, ERR_IO, ERR_FORMAT, ERR_TOO_LARGE, ERR_NOMEM, ERR_BACKEND = range(7)
MEMORY_HOST, MEMORY_CUDA = 0, 1
AXIS_X, AXIS_Y = 1, 2
INTEGRAL_ROWS, INTEGRAL_2D = 0, 1
MAX_ITERS = 100000
MAX_JOBS = 256


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("backend", ctypes.c_char_p),
                ("plugin_dir", ctypes.c_char_p), ("threads", ctypes.c_uint),
                ("devices", ctypes.c_char_p),
                ("note", ctypes.c_void_p), ("note_user", ctypes.c_void_p)]


class BackendInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("path", ctypes.c_char_p), ("load_error", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("version", ctypes.c_char_p),
                ("description", ctypes.c_char_p),
                ("abi_major", ctypes.c_uint32), ("abi_minor", ctypes.c_uint32),
                ("operations", ctypes.c_char * 96),
                ("takes_8_bit", ctypes.c_int), ("takes_16_bit", ctypes.c_int),
                ("available", ctypes.c_int), ("probe", ctypes.c_char_p),
                ("devices", ctypes.c_uint32), ("device_memory", ctypes.c_int)]


WORK_SMOOTH, WORK_INTEGRAL_ROWS, WORK_INTEGRAL_2D = 0, 1, 2
COMPRESSION_DEFAULT = -1


# gsmooth_file_options.progress: rows written, rows in all, seconds so far.
PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_double)


class FileOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int),
                ("iters", ctypes.c_uint32), ("axes", ctypes.c_uint32), ("depth", ctypes.c_uint32),
                ("max_pixels", ctypes.c_uint64), ("compression", ctypes.c_int),
                ("encode_threads", ctypes.c_uint), ("skip_existing", ctypes.c_int),
                ("progress", PROGRESS_FN), ("progress_user", ctypes.c_void_p)]


class FileResult(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("bits", ctypes.c_uint32), ("backend", ctypes.c_char_p),
                ("decode_ns", ctypes.c_uint64), ("upload_ns", ctypes.c_uint64), ("kernel_ns", ctypes.c_uint64),
                ("download_ns", ctypes.c_uint64), ("encode_ns", ctypes.c_uint64), ("total_ns", ctypes.c_uint64),
                ("skipped", ctypes.c_int)]


FILE_OK, FILE_FAILED, FILE_SKIPPED = range(3)


class FileOutcome(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("input", ctypes.c_char_p), ("output", ctypes.c_char_p),
                ("status", ctypes.c_int), ("error", ctypes.c_char_p),
                ("result", ctypes.POINTER(FileResult)), ("ms", ctypes.c_double),
                ("position", ctypes.c_uint64)]


# gsmooth_batch_options.finished and .progress: files finished of total, input bytes done,
# seconds so far and left.
FINISHED_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(FileOutcome))
BATCH_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint64,
                                     ctypes.c_double, ctypes.c_double)


class BatchOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("file", ctypes.POINTER(FileOptions)),
                ("out_dir", ctypes.c_char_p), ("jobs", ctypes.c_uint),
                ("shard_index", ctypes.c_uint32), ("shard_count", ctypes.c_uint32),
                ("finished", FINISHED_FN), ("progress", BATCH_PROGRESS_FN), ("user", ctypes.c_void_p),
                ("relative_to", ctypes.c_char_p)]


class BatchResult(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("files", ctypes.c_uint), ("done", ctypes.c_uint),
                ("failed", ctypes.c_uint), ("skipped", ctypes.c_uint), ("elapsed_s", ctypes.c_double),
                ("bytes", ctypes.c_uint64)]


class Image(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("stride", ctypes.c_size_t),
                ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("bits", ctypes.c_uint32), ("memory", ctypes.c_int), ("device", ctypes.c_int32)]


def _candidates():
    """Where libgsmooth.so may be, most specific first."""
    env = os.environ.get("GSMOOTH_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "_lib", "libgsmooth.so")  # a wheel (pip install .)
    # the source tree after scripts/setup.sh: python/gsmooth -> build/lib
    yield os.path.join(here, "..", "..", "build", "lib", "libgsmooth.so")
    found = ctypes.util.find_library("gsmooth")  # an installed libgsmooth
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)  # CDLL releases the GIL around every call
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("gsmooth: libgsmooth.so not found (set GSMOOTH_LIBRARY); tried: " + ", ".join(tried))


lib = _load()
_err = (ctypes.c_char_p, ctypes.c_size_t)
lib.gsmooth_version.restype = ctypes.c_char_p
lib.gsmooth_version.argtypes = []
lib.gsmooth_context_options_init.argtypes = [ctypes.POINTER(ContextOptions)]
lib.gsmooth_context_options_init.restype = None
lib.gsmooth_context_create.argtypes = [ctypes.POINTER(ContextOptions), ctypes.POINTER(ctypes.c_void_p), *_err]
lib.gsmooth_context_create.restype = ctypes.c_int
lib.gsmooth_context_destroy.argtypes = [ctypes.c_void_p]
lib.gsmooth_context_destroy.restype = None
lib.gsmooth_context_backend_count.argtypes = [ctypes.c_void_p]
lib.gsmooth_context_backend_count.restype = ctypes.c_size_t
lib.gsmooth_context_backend.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(BackendInfo), *_err]
lib.gsmooth_context_backend.restype = ctypes.c_int
lib.gsmooth_smooth.argtypes = [ctypes.c_void_p, ctypes.POINTER(Image), ctypes.POINTER(Image),
                               ctypes.c_uint32, ctypes.c_uint32, *_err]
lib.gsmooth_smooth.restype = ctypes.c_int
lib.gsmooth_integral.argtypes = [ctypes.c_void_p, ctypes.POINTER(Image), ctypes.POINTER(Image),
                                 ctypes.c_int, *_err]
lib.gsmooth_integral.restype = ctypes.c_int
lib.gsmooth_smooth_on_stream.argtypes = [ctypes.c_void_p, ctypes.POINTER(Image), ctypes.POINTER(Image),
                                         ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, *_err]
lib.gsmooth_smooth_on_stream.restype = ctypes.c_int
lib.gsmooth_integral_on_stream.argtypes = [ctypes.c_void_p, ctypes.POINTER(Image), ctypes.POINTER(Image),
                                           ctypes.c_int, ctypes.c_void_p, *_err]
lib.gsmooth_integral_on_stream.restype = ctypes.c_int
lib.gsmooth_integral_bits.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
lib.gsmooth_integral_bits.restype = ctypes.c_uint32
lib.gsmooth_file_options_init.argtypes = [ctypes.POINTER(FileOptions)]
lib.gsmooth_file_options_init.restype = None
lib.gsmooth_file.argtypes = [ctypes.c_void_p, ctypes.POINTER(FileOptions), ctypes.c_char_p, ctypes.c_char_p,
                             ctypes.POINTER(FileResult), *_err]
lib.gsmooth_file.restype = ctypes.c_int
lib.gsmooth_compression_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), *_err]
lib.gsmooth_compression_parse.restype = ctypes.c_int

lib.gsmooth_inputs_create.argtypes = []
lib.gsmooth_inputs_create.restype = ctypes.c_void_p
lib.gsmooth_inputs_destroy.argtypes = [ctypes.c_void_p]
lib.gsmooth_inputs_destroy.restype = None
lib.gsmooth_inputs_add.argtypes = [ctypes.c_void_p, ctypes.c_char_p, *_err]
lib.gsmooth_inputs_add.restype = ctypes.c_int
lib.gsmooth_batch_options_init.argtypes = [ctypes.POINTER(BatchOptions)]
lib.gsmooth_batch_options_init.restype = None
lib.gsmooth_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(BatchOptions), ctypes.c_void_p,
                              ctypes.POINTER(BatchResult), *_err]
lib.gsmooth_batch.restype = ctypes.c_int


def error_buffer():
    return ctypes.create_string_buffer(ERR_SIZE)
