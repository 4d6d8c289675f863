"""_dlpack.py: reads the DLPack tensor an object's __dlpack__ gives (pointer, shape, strides, device) without taking ownership."""
import ctypes

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
KDL_UINT = 1
KDL_FLOAT = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class View:
    """One 2-D tensor as DLPack describes it; keeps the capsule (and so the memory) alive."""

    def __init__(self, capsule):
        self.capsule = capsule  # unconsumed: its destructor calls the producer's deleter
        t = DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
        self.ndim = t.ndim
        self.code, self.bits, self.lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        itemsize = max(t.dtype.bits // 8, 1)
        if t.strides:
            self.strides = tuple(t.strides[i] for i in range(t.ndim))
        else:  # compact row-major
            self.strides = tuple(_compact_strides(self.shape))
        self.byte_strides = tuple(s * itemsize for s in self.strides)
        self.data = (t.data or 0) + t.byte_offset


def _compact_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return reversed(strides)


def device_of(obj):
    """(device_type, device_id) from __dlpack_device__, or None for an object without it."""
    f = getattr(obj, "__dlpack_device__", None)
    if f is None:
        return None
    kind, ident = f()
    return int(kind), int(ident)


def view(obj, stream=None):
    """The DLPack view of `obj`; for CUDA, ask it to make its writes visible on `stream`."""
    capsule = obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream)
    return View(capsule)
