"""gsmooth: exact 3-point row smoothing and integral images of 2-D uint8/uint16/float32 arrays (numpy, or CUDA tensors through DLPack, answered on their own device), on libgsmooth."""
import atexit
import ctypes
import dataclasses
import numbers
import os
import sys
import threading
import typing

import numpy as np

from . import _dlpack
from . import _native as _n

__all__ = ["smooth", "integral", "smooth_file", "integral_file", "batch", "Outcome", "backends",
           "__version__"]
__version__ = _n.lib.gsmooth_version().decode()

_AXES = {"x": _n.AXIS_X, "y": _n.AXIS_Y, "xy": _n.AXIS_X | _n.AXIS_Y}
_MODES = {"rows": _n.INTEGRAL_ROWS, "2d": _n.INTEGRAL_2D}
_CUDA_KINDS = (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED)
_LEGACY_DEFAULT_STREAM = 1  # DLPack's name for CUDA's legacy default stream (the handle 0)

_contexts = {}
_contexts_lock = threading.Lock()
_per_thread = threading.local()  # its error buffer; contexts of its own (threads=)


def _raise(rc, err):
    msg = err.value.decode("utf-8", "replace")
    if rc == _n.ERR_USAGE:
        raise ValueError(msg)
    if rc == _n.ERR_NOMEM:
        raise MemoryError(msg)
    if rc == _n.ERR_IO:
        raise OSError(msg)
    raise RuntimeError(msg)


def _new_context(backend, devices, threads):
    opts = _n.ContextOptions()
    _n.lib.gsmooth_context_options_init(ctypes.byref(opts))
    opts.backend = backend.encode()
    opts.devices = devices.encode() if devices else None
    opts.threads = threads
    h, err = ctypes.c_void_p(), _n.error_buffer()
    rc = _n.lib.gsmooth_context_create(ctypes.byref(opts), ctypes.byref(h), err, _n.ERR_SIZE)
    if rc:
        _raise(rc, err)
    return h.value


class _OwnContext:
    """A context of one thread's own, destroyed with that thread's locals."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        lib = getattr(_n, "lib", None)  # None late in interpreter shutdown
        if lib is not None and self.handle:
            lib.gsmooth_context_destroy(self.handle)
            self.handle = None


def _check_threads(threads):
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads takes a number of CPU threads, not {type(threads).__name__}")
    if not 1 <= threads <= 4096:
        raise ValueError(f"threads takes 1 to 4096 CPU threads, not {threads}")
    return int(threads)


def _context(backend, threads=None):
    """The long-lived library context of a backend (and of GSMOOTH_DEVICES, as the command
    line reads it: host arrays spread their rows over those devices): device start-up is
    paid once a process. With `threads`, the calling thread's own context with that many
    CPU threads: a context runs one call at a time, so calls from several threads with
    their own contexts run at once."""
    if not isinstance(backend, str):
        raise TypeError(f"backend takes a name or a path, not {type(backend).__name__}")
    if not backend:
        raise ValueError("backend needs a name or a path")
    threads = _check_threads(threads)
    devices = os.environ.get("GSMOOTH_DEVICES") or None
    if threads is not None:
        own = getattr(_per_thread, "contexts", None)
        if own is None:
            own = _per_thread.contexts = {}
        held = own.get((backend, devices, threads))
        if held is None:
            held = own[(backend, devices, threads)] = _OwnContext(_new_context(backend, devices, threads))
        return held.handle
    with _contexts_lock:
        handle = _contexts.get((backend, devices))
        if handle is None:
            handle = _contexts[(backend, devices)] = _new_context(backend, devices, 0)
        return handle


@atexit.register
def _close_contexts():
    getattr(_per_thread, "contexts", {}).clear()  # this thread's own
    with _contexts_lock:
        for handle in _contexts.values():
            _n.lib.gsmooth_context_destroy(handle)
        _contexts.clear()


def backends():
    """The backends found, as dicts: name, version, description, path, available, probe (the
    reason it cannot run, or what it found), devices, device_memory, operations. Probing CUDA
    starts it."""
    ctx = _context("auto")
    out = []
    for i in range(_n.lib.gsmooth_context_backend_count(ctx)):
        info, err = _n.BackendInfo(), _n.error_buffer()
        info.struct_size = ctypes.sizeof(info)
        rc = _n.lib.gsmooth_context_backend(ctx, i, ctypes.byref(info), err, _n.ERR_SIZE)
        if rc:
            _raise(rc, err)
        if info.load_error:  # a file in a plugin directory that is no plugin: not a backend
            continue
        text = lambda b: b.decode("utf-8", "replace") if b else ""
        out.append({"name": text(info.name), "version": text(info.version),
                    "description": text(info.description), "path": text(info.path),
                    "available": bool(info.available), "probe": text(info.probe),
                    "devices": int(info.devices), "device_memory": bool(info.device_memory),
                    "operations": text(info.operations).split()})
    return out


def _whole_number(name, value, low, high):
    """`value` as an int from `low` to `high`; bool, float and the like are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} takes a whole number from {low} to {high}, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} takes a whole number from {low} to {high}, not {value}")
    return int(value)


def _check_iters(iters):
    return _whole_number("iters", iters, 0, _n.MAX_ITERS)


def _axes(axis):
    if axis not in _AXES:
        raise ValueError(f"axis takes 'x', 'y' or 'xy', not {axis!r}")
    return _AXES[axis]


def _mode(mode):
    if mode not in _MODES:
        raise ValueError(f"mode takes 'rows' or '2d', not {mode!r}")
    return _MODES[mode]


def _check_shape(shape, ndim):
    if ndim != 2:
        raise ValueError(f"expected a 2-D image (rows, columns), got {ndim} dimension{'s' if ndim != 1 else ''}")
    h, w = shape
    if h == 0 or w == 0:
        raise ValueError(f"empty image ({w}x{h})")
    if h > 0xFFFFFFFF or w > 0xFFFFFFFF:
        raise ValueError(f"image too large ({w}x{h}): at most 2^32-1 a side")
    return int(h), int(w)


def _dtype_error(name):
    hint = ": gsmooth computes in float32, so pass a.astype(numpy.float32)" if name == "float64" else ""
    return TypeError(f"expected uint8, uint16 or float32 samples, got {name}{hint}")


# Sample types a call takes, by name: their bits (float32's 32 bits are the only 32-bit samples).
_SAMPLE_BITS = {"uint8": 8, "uint16": 16, "float32": 32}


def _sample_name(dtype_kind, bits):
    """The name of a sample type from its kind ('u' unsigned, 'f' float) and bits, or None."""
    name = {"u": "uint", "f": "float"}.get(dtype_kind, "?") + str(bits)
    return name if name in _SAMPLE_BITS else None


# ---- host arrays ----

# numpy's sample dtypes in native byte order, to their names: a dict lookup, where
# dtype.name costs about 2 us a call.
_HOST_DTYPES = {np.dtype(name): name for name in _SAMPLE_BITS}


def _host_array(a):
    """`a` as a numpy array libgsmooth takes, with its sample type's name, the address of its
    first sample and its size: uint8/uint16/float32, native order, rows contiguous and apart
    by at least a row; strided views that meet that are used as they are, others copied."""
    arr = a if isinstance(a, np.ndarray) else (np.from_dlpack(a) if hasattr(a, "__dlpack__") else np.asarray(a))
    name = _HOST_DTYPES.get(arr.dtype)
    if name is None:  # not a sample type, or one in the other byte order
        if _sample_name(arr.dtype.kind, arr.dtype.itemsize * 8) is None:
            raise _dtype_error(str(arr.dtype))
        h, w = _check_shape(arr.shape, arr.ndim)
        arr = arr.astype(arr.dtype.newbyteorder("="))
        name = _HOST_DTYPES[arr.dtype]
    else:
        h, w = _check_shape(arr.shape, arr.ndim)
    item = arr.itemsize
    data = arr.ctypes.data
    if (w > 1 and arr.strides[1] != item) or arr.strides[0] < w * item or data % item or arr.strides[0] % item:
        arr = np.array(arr, order="C")  # a fresh, aligned, C-ordered copy
        data = arr.ctypes.data
    return arr, name, data, h, w


def _host_image(arr, data, h, w):
    """The libgsmooth image of an h x w numpy array whose first sample is at `data`."""
    return _n.Image(data, arr.strides[0] if h > 1 else w * arr.itemsize, w, h, arr.itemsize * 8,
                    _n.MEMORY_HOST, 0)


def _same_kind(a, result):
    """A result for a host input that was not a numpy array: its own kind where it can say so."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack__"):
        return result
    module = __import__(type(a).__module__.split(".")[0])
    from_dlpack = getattr(module, "from_dlpack", None)
    return from_dlpack(result) if from_dlpack else result


# ---- CUDA tensors (DLPack) ----

def _current_stream(a):
    """The CUDA stream handle the call is queued on: cupy's current stream for a cupy
    array, else the legacy default stream (0)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(a, cupy.ndarray):
        with cupy.cuda.Device(a.device.id):  # the current stream of a's device
            return cupy.cuda.get_current_stream().ptr
    return 0


def _cuda_dlpack(a, stream):
    """a's DLPack view, its producer's pending writes ordered before `stream` (a handle;
    0, the legacy default stream, is 1 to DLPack)."""
    try:
        return _dlpack.view(a, stream=stream or _LEGACY_DEFAULT_STREAM)
    except BufferError as e:  # the producer cannot export this array as it is
        raise ValueError(f"cannot read this CUDA array through DLPack: {e}") from e


def _cuda_view(a, stream):
    v = _cuda_dlpack(a, stream)
    kind = {_dlpack.KDL_UINT: "u", _dlpack.KDL_FLOAT: "f"}.get(v.code)
    if kind is None or _sample_name(kind, v.bits) is None or v.lanes != 1:
        raise _dtype_error(f"DLPack type code {v.code}, {v.bits} bits")
    h, w = _check_shape(v.shape, v.ndim)
    item = v.bits // 8
    rows_ok = (w == 1 or v.byte_strides[1] == item) and (h == 1 or v.byte_strides[0] >= w * item)
    return v, h, w, rows_ok


def _framework(a):
    """The library `a` belongs to: torch or cupy where a class in its ancestry says so."""
    roots = [c.__module__.split(".")[0] for c in type(a).__mro__]
    known = [r for r in roots if r in ("torch", "cupy")]
    return __import__(known[0] if known else roots[0])


def _cuda_empty(a, h, w, name, device_id):
    """An uninitialised h x w result of dtype `name` ("uint32", "float32", ...), of a's own
    kind on its device."""
    fw = _framework(a)
    if fw.__name__ == "torch":
        dtype = getattr(fw, name, None)
        if dtype is None:
            raise TypeError(f"this torch has no {name}: gsmooth needs torch 2.3 or later for it")
        return fw.empty((h, w), dtype=dtype, device=a.device)
    if fw.__name__ == "cupy":
        with fw.cuda.Device(device_id):
            return fw.empty((h, w), dtype=name)
    raise TypeError(f"CUDA arrays of {fw.__name__}: gsmooth answers torch and cupy tensors")


def _cuda_image(v, h, w):
    stride = v.byte_strides[0] if h > 1 else w * (v.bits // 8)
    return _n.Image(v.data, stride, w, h, v.bits, _n.MEMORY_CUDA, v.device_id)


class _Prepared:
    """One call's arguments: the source and result as libgsmooth images, what keeps their
    memory alive, the result to hand back, and for CUDA buffers the stream handle the work
    is queued on (0: the legacy default stream; None: host memory, a waited call)."""
    __slots__ = ("src", "dst", "keep", "result", "stream")

    def __init__(self, src, dst, keep, result, stream=None):
        self.src, self.dst, self.keep, self.result, self.stream = src, dst, keep, result, stream


class _TorchNames:
    """What a torch CUDA call looks up, found once: its sample dtypes to their names, and
    the accessor of a device's current stream as a raw handle (torch's private one costs
    about a microsecond where torch.cuda.current_stream() builds a Stream object)."""
    __slots__ = ("samples", "stream_handle")

    def __init__(self, torch):
        self.samples = {torch.uint8: "uint8", torch.float32: "float32"}
        if hasattr(torch, "uint16"):
            self.samples[torch.uint16] = "uint16"
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.stream_handle = raw or (lambda ordinal: torch.cuda.current_stream(ordinal).cuda_stream)


_torch_names = None


def _prepare_torch_cuda(t, result_of):
    """A torch CUDA tensor read through torch's own accessors (DLPack's capsules cost tens
    of microseconds a call, a fifth of a 16384^2 K=3 kernel). The work is queued on torch's
    current stream of the tensor's device, after what torch queued there, as a torch
    operation is: the result (and a contiguous copy of the input) is allocated on that
    stream, so torch's allocator keeps its memory until the work has run; an input made on
    another stream is the caller's to keep (Tensor.record_stream), as for torch's own
    operations."""
    global _torch_names
    torch = sys.modules["torch"]
    if _torch_names is None:
        _torch_names = _TorchNames(torch)
    name = _torch_names.samples.get(t.dtype)
    if name is None:
        raise _dtype_error(str(t.dtype).replace("torch.", ""))
    bits = _SAMPLE_BITS[name]
    h, w = _check_shape(tuple(t.shape), t.dim())
    if (w > 1 and t.stride(1) != 1) or (h > 1 and t.stride(0) < w):
        t = t.contiguous()
    device = t.device
    ordinal = device.index if device.index is not None else torch.cuda.current_device()
    out_name = result_of(name, w, h)
    dtype = getattr(torch, out_name, None)
    if dtype is None:
        raise TypeError(f"this torch has no {out_name}: gsmooth needs torch 2.3 or later for it")
    # empty_like takes the device from t: 1.8 us a call where torch.empty(device=) took 5.7
    out = torch.empty_like(t, dtype=dtype, memory_format=torch.contiguous_format)
    out_bits = out.element_size() * 8
    src = _n.Image(t.data_ptr(), t.stride(0) * (bits // 8) if h > 1 else w * (bits // 8), w, h,
                   bits, _n.MEMORY_CUDA, ordinal)
    dst = _n.Image(out.data_ptr(), w * (out_bits // 8), w, h, out_bits, _n.MEMORY_CUDA, ordinal)
    return _Prepared(src, dst, (t,), out, _torch_names.stream_handle(ordinal))


def _is_torch_tensor(a):
    """A torch.Tensor, subclasses (Parameter) included, without importing torch."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


def _prepare(a, result_of):
    """Check `a`, allocate the result (on a's device for a CUDA tensor), describe both."""
    if not isinstance(a, np.ndarray) and _is_torch_tensor(a):
        if a.is_cuda:  # read through data_ptr(), which needs no detach (1 us)
            return _prepare_torch_cuda(a, result_of)
        a = a.detach()  # a CPU tensor that requires grad exports no DLPack
    dev = None if isinstance(a, np.ndarray) else _dlpack.device_of(a)
    if dev is not None and dev[0] in _CUDA_KINDS:
        stream = _current_stream(a)
        v, h, w, rows_ok = _cuda_view(a, stream)
        if not rows_ok:  # not contiguous within rows: a dense copy on the device
            fw = _framework(a)
            if hasattr(fw, "ascontiguousarray"):
                a = fw.ascontiguousarray(a)
            elif hasattr(a, "contiguous"):
                a = a.contiguous()
            else:
                raise ValueError(f"CUDA arrays of {fw.__name__} need contiguous rows")
            v, h, w, rows_ok = _cuda_view(a, stream)
        out_name = result_of(_sample_name("f" if v.code == _dlpack.KDL_FLOAT else "u", v.bits), w, h)
        out = _cuda_empty(a, h, w, out_name, v.device_id)
        ov = _cuda_dlpack(out, stream)
        dst = _cuda_image(ov, h, w)
        return _Prepared(_cuda_image(v, h, w), dst, (v, ov), out, stream)
    arr, name, data, h, w = _host_array(a)
    out_name = result_of(name, w, h)
    out = np.empty((h, w), dtype=arr.dtype if out_name == name else out_name)
    return _Prepared(_host_image(arr, data, h, w), _host_image(out, out.ctypes.data, h, w), (arr,), out)




def _error_buffer():
    """This thread's buffer for the library's message (made once, not per call)."""
    buf = getattr(_per_thread, "err", None)
    if buf is None:
        buf = _per_thread.err = _n.error_buffer()
    return buf


def _run(call, queued, a, result_of, backend, threads):
    """Prepare `a` and run `call(ctx, src, dst, err)` with the GIL released (ctypes), or
    for CUDA buffers `queued(ctx, src, dst, stream, err)`, which queues the work on the
    stream; result_of(sample type name, w, h) names the result's dtype."""
    p = _prepare(a, result_of)
    ctx = _context(backend, threads)
    err = _error_buffer()
    if p.stream is None:
        rc = call(ctx, ctypes.byref(p.src), ctypes.byref(p.dst), err)
    else:
        rc = queued(ctx, ctypes.byref(p.src), ctypes.byref(p.dst), p.stream or None, err)
    if rc:
        _raise(rc, err)
    return _same_kind(a, p.result) if p.stream is None else p.result


def _passes(iters, sigma):
    """The passes asked for: `iters` (default 3), or for a Gaussian-like blur of `sigma`
    pixels K = round(3 sigma^2 / 2), the K whose variance 2K/3 is nearest sigma^2."""
    if sigma is None:
        return _check_iters(3 if iters is None else iters)
    if iters is not None:
        raise ValueError("give iters or sigma, not both")
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"sigma takes a number of pixels, not {type(sigma).__name__}")
    if not sigma > 0 or 1.5 * sigma * sigma + 0.5 > _n.MAX_ITERS:
        raise ValueError(f"sigma takes a number of pixels above 0 (at most "
                         f"{((_n.MAX_ITERS - 0.5) / 1.5) ** 0.5:.1f}), not {sigma}")
    return int(1.5 * sigma * sigma + 0.5)


def _smooth_result(dtype):
    """The result type of smooth(dtype=...): the input's (None), or float32."""
    if dtype is None:
        return lambda name, w, h: name
    if np.dtype(dtype) != np.float32:
        raise TypeError(f"dtype takes None (the input's) or float32, not {np.dtype(dtype).name}")
    return lambda name, w, h: "float32"


def smooth(a, iters=None, axis="x", backend="auto", sigma=None, threads=None, dtype=None):
    """Smooth a 2-D uint8/uint16/float32 image with `iters` passes (default 3) of the 3-point
    mean along `axis` ('x': rows, 'y': columns, 'xy': rows then columns), bit-exact as the
    gsmooth command; or give `sigma` in pixels for K = round(3 sigma^2 / 2) passes, close to
    a Gaussian of that sigma (docs/sigma.md). The result has the input's dtype, or with
    dtype=numpy.float32 the unrounded passes. Float32 follows IEEE arithmetic (a NaN
    spreads one sample a pass; every NaN comes back as the one quiet NaN). A CUDA tensor
    (torch, cupy) runs on its own device, queued on its library's current stream as that
    library's own operations are (the call returns before the result is computed; reading
    it waits, as for any CUDA tensor), and comes back as one of its kind. `threads`: CPU threads for the call (default
    every CPU, calls from several threads taking turns); given, the calling thread gets a
    context of its own, so that threads each given 1 compute at once (as in a thread pool)."""
    iters = _passes(iters, sigma)
    axes = _axes(axis)
    return _run(lambda ctx, s, d, e: _n.lib.gsmooth_smooth(ctx, s, d, iters, axes, e, _n.ERR_SIZE),
                lambda ctx, s, d, q, e: _n.lib.gsmooth_smooth_on_stream(ctx, s, d, iters, axes, q, e,
                                                                        _n.ERR_SIZE),
                a, _smooth_result(dtype), backend, threads)


def integral(a, mode="rows", backend="auto", threads=None):
    """Integral image of a 2-D uint8/uint16/float32 image: 'rows' (prefix sums along each row)
    or '2d' (summed-area table), exact in uint32, or uint64 where a sum could pass 2^32 (for
    16-bit 'rows', always); float32 in float64, each row summed from left to right, then
    down each column, as numpy.cumsum does it. A CUDA tensor as for smooth (a '2d' table
    waits for its result). `threads` as for smooth."""
    m = _mode(mode)

    def result_of(name, w, h):
        bits = _n.lib.gsmooth_integral_bits(m, _SAMPLE_BITS[name], w, h)
        return "float64" if name == "float32" else f"uint{bits}"
    return _run(lambda ctx, s, d, e: _n.lib.gsmooth_integral(ctx, s, d, m, e, _n.ERR_SIZE),
                lambda ctx, s, d, q, e: _n.lib.gsmooth_integral_on_stream(ctx, s, d, m, q, e, _n.ERR_SIZE),
                a, result_of, backend, threads)


# ---- file to file, as the gsmooth command does it ----

def _compression_level(compression):
    if compression is None:
        return _n.COMPRESSION_DEFAULT
    if isinstance(compression, bool) or not isinstance(compression, (str, numbers.Integral)):
        raise TypeError(f"compression takes 'fast', 'default', 'small' or a level 0..9, not "
                        f"{type(compression).__name__}")
    level, err = ctypes.c_int(), _n.error_buffer()
    rc = _n.lib.gsmooth_compression_parse(str(compression).encode(), ctypes.byref(level), err, _n.ERR_SIZE)
    if rc:
        _raise(rc, err)
    return level.value


def _progress_callback(progress, raised, c_type=_n.PROGRESS_FN, counts="rows_done, rows_total"):
    """`progress` as the library's callback of `c_type`, whose arguments after `user` begin
    with the two `counts`; the first exception it raises goes into `raised` (an exception
    must not unwind through C) and later calls are skipped."""
    if not callable(progress):
        raise TypeError(f"progress takes a callable({counts}) or None, not {type(progress).__name__}")

    def call(user, done, total, *rest):
        if raised:
            return
        try:
            progress(done, total)
        except BaseException as e:  # KeyboardInterrupt too: nothing may unwind into C
            raised.append(e)
    return c_type(call)


def _integral_kind(mode):
    return _n.WORK_INTEGRAL_ROWS if _mode(mode) == _n.INTEGRAL_ROWS else _n.WORK_INTEGRAL_2D


def _file_options(kind, iters, axis, depth, compression, sigma):
    """What a file call computes and how it writes it; iters, axis and depth apply to smoothing."""
    opts = _n.FileOptions()
    _n.lib.gsmooth_file_options_init(ctypes.byref(opts))
    opts.kind = kind
    if kind == _n.WORK_SMOOTH:
        opts.iters = _passes(iters, sigma)
        opts.axes = _axes(axis)
        whole = isinstance(depth, numbers.Integral) and not isinstance(depth, bool)
        if not (depth is None or depth == "float" or (whole and depth in (8, 16))):
            raise ValueError(f"depth takes None (the input's), 8, 16 or 'float', not {depth!r}")
        opts.depth = 32 if depth == "float" else int(depth or 0)
    opts.compression = _compression_level(compression)
    return opts


def _file(kind, src, dst, iters, axis, depth, compression, backend, progress, sigma=None):
    opts = _file_options(kind, iters, axis, depth, compression, sigma)
    raised = []
    if progress is not None:
        opts.progress = _progress_callback(progress, raised)  # opts keeps it alive for the call
    result, err = _n.FileResult(), _n.error_buffer()
    result.struct_size = ctypes.sizeof(result)
    rc = _n.lib.gsmooth_file(_context(backend), ctypes.byref(opts), os.fsencode(src), os.fsencode(dst),
                             ctypes.byref(result), err, _n.ERR_SIZE)
    if rc:
        _raise(rc, err)
    if raised:
        raise raised[0]
    return _file_facts(result)


def _file_facts(result):
    """What a gsmooth_file_result says of the input: width, height, bits, the backend."""
    return {"width": result.width, "height": result.height, "bits": result.bits,
            "backend": result.backend.decode() if result.backend else None}


def smooth_file(src, dst, iters=None, axis="x", depth=None, compression=None, backend="auto",
                progress=None, sigma=None):
    """Read the image file `src`, smooth it as smooth() does, and write `dst` (its extension
    picks the format), streaming in bounded memory as the command does. `compression`:
    'fast', 'default', 'small' or a level 0..9 for PNG and TIFF outputs (None: the default).
    `depth`: None keeps the input's, 8 or 16, or 'float' for the unrounded float32 passes
    (into .tif, .fits or .npy), as the command's --depth. Returns what was read: width,
    height, bits and the backend that ran. The output appears whole or not at all. `iters`
    and `sigma` are as for smooth().

    `progress`: None, or a callable progress(rows_done, rows_total), called after each strip
    is written, from one of the library's threads (not necessarily the caller's); the last
    call is (rows_total, rows_total). An exception it raises does not stop the work: later
    calls are skipped, the call finishes (the output is written) and then raises that
    exception."""
    return _file(_n.WORK_SMOOTH, src, dst, iters, axis, depth, compression, backend, progress, sigma)


def integral_file(src, dst, mode="rows", compression=None, backend="auto", progress=None):
    """Integral image of the image file `src` into `dst` (.npy, .tif or .fits, exact; .png or
    .pgm give a 16-bit picture scaled to the image's maximum, for viewing), as integral()
    gives it; `compression` applies to a TIFF or PNG output; `progress` as for smooth_file()."""
    return _file(_integral_kind(mode), src, dst, 0, "x", None, compression, backend, progress)


# ---- many files into a directory, as the command's -o DIR does it ----

_STATUSES = {_n.FILE_OK: "ok", _n.FILE_FAILED: "failed", _n.FILE_SKIPPED: "skipped"}
_UINT32_MAX = 0xFFFFFFFF


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What batch() made of one input. `input`: the item as given; `output`: the path it is
    written to (or would have been), None when no name could be formed; `status`: 'ok',
    'failed' or 'skipped'; `error`: a failure's one-line cause, else None; `width`, `height`,
    `bits`: the input's (0 where it was not read that far); `backend`: the one that ran, or
    None; `ms`: wall time spent on it."""
    input: typing.Any
    output: typing.Optional[str]
    status: str
    error: typing.Optional[str]
    width: int
    height: int
    bits: int
    backend: typing.Optional[str]
    ms: float


def _c_path(name, path):
    """`path` as the bytes of a C string; a NUL byte, where it would end, is refused."""
    b = os.fsencode(path)
    if b"\0" in b:
        raise ValueError(f"{name}: embedded null byte")
    return b


def _input_paths(inputs):
    """`inputs` as a list of the caller's items and a list of their bytes. A NUL byte is
    refused here: the library takes C strings, which would end at it."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        raise TypeError("inputs takes an iterable of paths, not one path")
    given = list(inputs)
    return given, [_c_path(f"inputs[{i}]", p) for i, p in enumerate(given)]


def _shard(shard):
    """(index, count) as two numbers the library takes; it checks that index < count."""
    if shard is None:
        return 0, 1
    if not isinstance(shard, tuple) or len(shard) != 2:
        raise TypeError(f"shard takes None or a pair (index, count), not {shard!r}")
    return (_whole_number("shard index", shard[0], 0, _UINT32_MAX),
            _whole_number("shard count", shard[1], 0, _UINT32_MAX))


def batch(inputs, out_dir, *, iters=None, sigma=None, axis="x", depth=None, compression=None,
          integral=None, jobs=None, shard=None, relative_to=None, skip_existing=False,
          backend="auto", progress=None):
    """Smooth each image file of `inputs` (an iterable of paths) into the directory `out_dir`,
    as `gsmooth -o DIR` does: on a pool of `jobs` workers (None: one per CPU), each output
    named by its input's basename (an input in a format not written exactly, such as .jpg,
    as <stem>.png; with depth='float', one in a format without float32 samples as
    <stem>.tif; every integral as <stem>.npy), or with `relative_to` a directory, by the
    input's path below it (an input outside it fails); `out_dir` and the directories below
    it are made as `mkdir -p` would. `iters`, `sigma`, `axis`, `depth` and `compression` are
    as for smooth_file(); `integral` 'rows' or '2d' writes integrals (.npy) instead of
    smoothing. `shard` (index, count) takes this task's share: positions j with j % count ==
    index. `skip_existing`: an output already there is kept and its input not read.

    Returns a list of Outcome, one per input of the shard, in input order. A file that fails
    (unreadable, or its output name already taken by an earlier input) does not raise: its
    Outcome says 'failed' and why, and the batch goes on. What stops the batch before any
    file is tried raises as the other calls do: TypeError or ValueError for a bad argument
    or shard, OSError when `out_dir` cannot be a directory.

    `progress`: None, or a callable progress(done, total) called after each file with the
    files finished of the shard's, from one of the library's worker threads, one call at a
    time. An exception it raises does not stop the batch: later calls are skipped, the batch
    finishes and then raises it. For a tqdm bar:

        with tqdm(total=len(paths)) as bar:
            gsmooth.batch(paths, "out", progress=lambda done, total: bar.update(done - bar.n))

    The batch holds its backend's context throughout: `progress` must not call gsmooth on
    the same backend, which would wait for the batch to end."""
    given, encoded = _input_paths(inputs)
    if integral is None:
        opts = _file_options(_n.WORK_SMOOTH, iters, axis, depth, compression, sigma)
    elif iters is not None or sigma is not None or axis != "x" or depth is not None:
        raise ValueError("integral takes no iters, sigma, axis or depth")
    else:
        opts = _file_options(_integral_kind(integral), None, "x", None, compression, None)
    opts.skip_existing = bool(skip_existing)
    bo = _n.BatchOptions()
    _n.lib.gsmooth_batch_options_init(ctypes.byref(bo))
    bo.file = ctypes.pointer(opts)
    bo.out_dir = _c_path("out_dir", out_dir)
    bo.jobs = 0 if jobs is None else _whole_number("jobs", jobs, 1, _n.MAX_JOBS)
    bo.shard_index, bo.shard_count = _shard(shard)
    bo.relative_to = None if relative_to is None else _c_path("relative_to", relative_to)
    ctx = _context(backend)

    raised, finished = [], []

    def on_finished(user, outcome):
        # The outcome's strings live only for this call: copied.
        try:
            o = outcome.contents
            if o.struct_size < ctypes.sizeof(_n.FileOutcome):
                raise RuntimeError("libgsmooth is older than this module: its outcomes have no position")
            finished.append((o.position, o.input, {
                "output": os.fsdecode(o.output) if o.output is not None else None,
                "status": _STATUSES[o.status],
                "error": o.error.decode("utf-8", "replace") if o.error is not None else None,
                **_file_facts(o.result.contents), "ms": o.ms}))
        except BaseException as e:  # nothing may unwind into C
            raised.append(e)

    # Named here so that they live until the call returns: the library calls them until then.
    # A function type called with nothing is NULL: no progress calls.
    finished_fn = _n.FINISHED_FN(on_finished)
    progress_fn = _n.BATCH_PROGRESS_FN() if progress is None else \
        _progress_callback(progress, raised, _n.BATCH_PROGRESS_FN, "done, total")
    bo.finished, bo.progress = finished_fn, progress_fn
    paths = _n.lib.gsmooth_inputs_create()
    if not paths:
        raise MemoryError("out of memory for the list of inputs")
    try:
        err = _n.error_buffer()
        for b in encoded:
            rc = _n.lib.gsmooth_inputs_add(paths, b, err, _n.ERR_SIZE)
            if rc:
                _raise(rc, err)
        result = _n.BatchResult()
        result.struct_size = ctypes.sizeof(result)
        rc = _n.lib.gsmooth_batch(ctx, ctypes.byref(bo), paths, ctypes.byref(result), err, _n.ERR_SIZE)
    finally:
        _n.lib.gsmooth_inputs_destroy(paths)
    if rc and not result.failed:  # refused before any file was tried
        _raise(rc, err)
    if raised:
        raise raised[0]
    return _in_input_order(finished, given, encoded, range(bo.shard_index, len(given), bo.shard_count))


def _in_input_order(finished, given, encoded, positions):
    """The outcomes, which come in the order files finish, in list order by their position;
    each is checked against the path at its position."""
    finished.sort(key=lambda f: f[0])
    if [f[0] for f in finished] != list(positions) or \
            any(f[1] != encoded[j] for f, j in zip(finished, positions)):
        raise RuntimeError("the library's outcomes do not match the inputs, position for position")
    return [Outcome(input=given[j], **f[2]) for f, j in zip(finished, positions)]
