"""pngwrite.py: a tiny, dependency-free PNG encoder for test and sample images.

Gray, gray+alpha, RGB, RGBA, palette; 1-16 bit; optional Adam7.
"""
import struct
import zlib

import numpy as np

COLOR_TYPES = {"gray": 0, "rgb": 2, "palette": 3, "graya": 4, "rgba": 6}
CHANNELS = {"gray": 1, "rgb": 3, "palette": 1, "graya": 2, "rgba": 4}
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def _chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def _pack_rows(a, bits):
    """Rows of samples (H, W*C) -> filter-type-0 scanlines."""
    out = bytearray()
    for row in a:
        out.append(0)
        if bits == 16:
            out += row.astype(">u2").tobytes()
        elif bits == 8:
            out += row.astype(np.uint8).tobytes()
        else:
            per = 8 // bits
            padded = np.zeros(((len(row) + per - 1) // per) * per, dtype=np.uint8)
            padded[: len(row)] = row
            groups = padded.reshape(-1, per)
            byte = np.zeros(len(groups), dtype=np.uint16)
            for i in range(per):
                byte = (byte << bits) | groups[:, i]
            out += byte.astype(np.uint8).tobytes()
    return bytes(out)


def encode(pixels, kind="gray", bits=8, palette=None, interlace=False, trns=None, level=9):
    """pixels: (H, W) or (H, W, C) integer array; level: zlib level. Returns PNG bytes."""
    a = np.asarray(pixels)
    h, w = a.shape[0], a.shape[1]
    c = CHANNELS[kind]
    flat = a.reshape(h, w * c)
    ihdr = struct.pack(">IIBBBBB", w, h, bits, COLOR_TYPES[kind], 0, 0, 1 if interlace else 0)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ADAM7:
            sub = a[y0::dy, x0::dx]
            if sub.size:
                raw += _pack_rows(sub.reshape(sub.shape[0], -1), bits)
    else:
        raw = _pack_rows(flat, bits)
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
    if palette is not None:
        png += _chunk(b"PLTE", bytes(np.asarray(palette, dtype=np.uint8).reshape(-1)))
    if trns is not None:
        png += _chunk(b"tRNS", bytes(trns))
    return png + _chunk(b"IDAT", zlib.compress(raw, level)) + _chunk(b"IEND", b"")


def write(path, pixels, **kw):
    with open(path, "wb") as f:
        f.write(encode(pixels, **kw))
