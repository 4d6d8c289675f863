#!/usr/bin/python3
"""reference.py: the independent numpy statement of gsmooth's semantics.

Smoothing, integrals, their dtype rule, the viewing picture, BT.601 gray; shared by
crosscheck.py and large_check.py.
"""
import numpy as np


def luma(r, g, b):
    """libjpeg's fixed-point BT.601 luma, exact in integers."""
    return (19595 * r + 38470 * g + 7471 * b + 32768) >> 16


def jpeg_gray(path):
    """A JPEG's gray as the decoder gives it (PIL's libjpeg): the luma channel of YCbCr
    (draft mode 'L' asks libjpeg for JCS_GRAYSCALE), and for CMYK the Adobe-inverted
    samples taken to RGB and then to luma."""
    from PIL import Image
    im = Image.open(path)
    if im.mode == "CMYK":
        rgb = np.asarray(im.convert("RGB")).astype(np.int64)
        return luma(rgb[..., 0], rgb[..., 1], rgb[..., 2])
    im.draft("L", im.size)
    return np.asarray(im if im.mode == "L" else im.convert("L")).astype(np.int64)


def to_gray(spec, path=None):
    """Ground-truth gray samples of a generated input spec (pngwrite.encode's arguments):
    palettes expanded, colour through libjpeg's fixed-point BT.601 luma, alpha dropped,
    1/2/4-bit gray scaled to 0..255; a JPEG (read from `path`) as jpeg_gray says."""
    if spec["kind"] == "jpeg":
        return jpeg_gray(path), 8
    a = np.asarray(spec["pixels"]).astype(np.int64)
    kind, bits = spec["kind"], spec.get("bits", 8)
    if kind == "palette":
        a = np.asarray(spec["palette"], dtype=np.int64)[a]
        kind, bits = "rgb", 8
    if kind in ("rgb", "rgba"):
        a = luma(a[..., 0], a[..., 1], a[..., 2])
    elif kind == "graya":
        a = a[..., 0]
    if bits < 8:
        a = a * (255 // ((1 << bits) - 1))
        bits = 8
    return a, bits


def passes(a, iters):
    """K passes of the 3-point mean along each row of float32 `a`: ((l + c) + r) / 3
    inside, (l + r) / 2 at the row ends, a 1-pixel row unchanged."""
    three, two = np.float32(3), np.float32(2)
    for _ in range(iters):
        b = a.copy()
        if a.shape[1] > 1:
            b[:, 1:-1] = ((a[:, :-2] + a[:, 1:-1]) + a[:, 2:]) / three
            b[:, 0] = (a[:, 0] + a[:, 1]) / two
            b[:, -1] = (a[:, -2] + a[:, -1]) / two
        a = b
    return a


def smooth(gray, bits, iters, axis="x"):
    """--axis x: the passes along each row; y: down each column; xy: along the rows, then
    down the columns on those float32 values; then rint (ties to even), clamp."""
    a = gray.astype(np.float32)
    if "x" in axis:
        a = passes(a, iters)
    if "y" in axis:
        a = passes(a.T, iters).T
    maxval = (1 << bits) - 1
    return np.clip(np.rint(a), 0, maxval).astype(np.int64)


def integral_dtype(bits, mode, height, width):
    """uint32 while the largest possible sum is below 2^32 (rows of 8-bit input; the 2d
    table of either depth), else uint64; 16-bit rows are always uint64."""
    if mode == "rows" and bits == 16:
        return np.uint64
    count = width if mode == "rows" else width * height
    return np.uint32 if ((1 << bits) - 1) * count < 2**32 else np.uint64


def integral(gray, bits, mode):
    """Inclusive prefix sums along rows ('rows'), or the summed-area table ('2d')."""
    want = np.cumsum(gray.astype(np.uint64), axis=1)
    if mode == "2d":
        want = np.cumsum(want, axis=0)
    return want.astype(integral_dtype(bits, mode, *gray.shape))


def view_picture(values):
    """An integral drawn for viewing: round(v * 65535 / max) as 16-bit, halves up; all
    zeros when the maximum is 0."""
    top = int(values.max())
    if top == 0:
        return np.zeros(values.shape, dtype=np.int64)
    # Exact: uint64 while v * 65535 + top / 2 cannot wrap, Python integers beyond.
    v = values.astype(np.uint64 if top < 2**64 // 65536 else object)
    return ((v * 65535 + top // 2) // top).astype(np.int64)
