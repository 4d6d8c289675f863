"""pngcases.py: pixel contents, PNG types and writers shared by the PNG tests.

The writers are libpng (through tests/png/libpng_write), OpenCV, PIL, vips and zlib streams
written here; the PNG conformance test and the writer sweep share them.
"""
import os
import shutil
import struct
import subprocess
import zlib

import numpy as np

# PNG types: samples per pixel, bits per sample, IHDR colour type.
TYPES = {
    "gray8": (1, 8, 0), "gray16": (1, 16, 0), "ga8": (2, 8, 4), "ga16": (2, 16, 4),
    "rgb8": (3, 8, 2), "rgb16": (3, 16, 2), "rgba8": (4, 8, 6), "rgba16": (4, 16, 6),
    "pal8": (1, 8, 3),
}
CONTENTS = ("flat", "photo", "random", "gradient")
# The writers that write each type.
WRITERS_OF = {
    "gray8": ("libpng", "opencv", "pil", "vips", "zlib"),
    "gray16": ("libpng", "opencv", "pil", "vips", "zlib"),
    "ga8": ("libpng", "pil", "vips", "zlib"),
    "ga16": ("libpng", "vips", "zlib"),
    "rgb8": ("libpng", "opencv", "pil", "vips", "zlib"),
    "rgb16": ("libpng", "opencv", "vips", "zlib"),
    "rgba8": ("libpng", "opencv", "pil", "vips", "zlib"),
    "rgba16": ("libpng", "opencv", "vips", "zlib"),
    "pal8": ("libpng", "pil", "vips", "zlib"),
}
# Entries of the palette the palette images use (indices stay below it: other writers
# refuse or remap indices past their palette).
PALETTE_ENTRIES = 200
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Row filters (PNG specification, section 9.2).
FILTER_NONE, FILTER_SUB, FILTER_UP, FILTER_AVERAGE, FILTER_PAETH = range(5)
# zlib's largest stored block (RFC 1951, 3.2.4: LEN is 16 bits).
STORED_BLOCK_MAX = 65535
# OpenCV's PNG strategies (cv2.IMWRITE_PNG_STRATEGY_*: zlib's Z_DEFAULT_STRATEGY .. Z_FIXED).
OPENCV_STRATEGIES = range(5)


def bytes_per_pixel(kind):
    channels, bits, _ = TYPES[kind]
    return channels * bits // 8


def pixels(kind, width, height, content, seed):
    """A (height, width, channels) array of `kind`'s samples (uint8 or uint16)."""
    channels, bits, color = TYPES[kind]
    rng = np.random.default_rng(seed)
    top = PALETTE_ENTRIES - 1 if color == 3 else (1 << bits) - 1
    dtype = np.uint16 if bits == 16 else np.uint8
    shape = (height, width, channels)
    if content == "flat":
        return np.broadcast_to(rng.integers(0, top + 1, channels).astype(dtype), shape).copy()
    if content == "random":
        return rng.integers(0, top + 1, shape, dtype=np.uint32).astype(dtype)
    y = np.arange(height, dtype=np.float32)[:, None, None]
    x = np.arange(width, dtype=np.float32)[None, :, None]
    c = np.arange(channels, dtype=np.float32)[None, None, :]
    if content == "gradient":
        v = (x * 0.37 + y * 0.61 + c * 0.13) / max(1.0, (width * 0.37 + height * 0.61) / 1.7)
        return np.rint(v % 1.0 * top).astype(dtype)
    # photo: shading, soft waves of a few scales, edges and a little sensor noise
    v = 0.45 + 0.25 * np.sin(x * 0.011 + c + seed) * np.cos(y * 0.017) + 0.15 * np.sin(x * 0.13 + y * 0.07)
    v = v + 0.1 * ((x + y * 0.5) % 97 > 60) + rng.normal(0, 0.01, shape).astype(np.float32)
    return np.clip(np.rint(v * top), 0, top).astype(dtype)


def stored_rows(a, kind):
    """The samples as PNG rows store them (16-bit big-endian): (height, row bytes) uint8."""
    h, w = a.shape[0], a.shape[1]
    if TYPES[kind][1] == 16:
        a = a.astype(">u2")
    return np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).reshape(h, -1)


def palette_bytes():
    """The PLTE the hand-made palette images carry: any colours will do."""
    i = np.arange(PALETTE_ENTRIES, dtype=np.uint32)
    return np.stack([i * 37, i * 101, i * 211], 1).astype(np.uint8).tobytes()


# ---- row filters, for the hand-made streams ----

def row_filters(pattern, height, group):
    """The filter type of every row: one filter for all, a fixed mix, or runs of 1 to
    group + 1 Paeth rows between Sub rows (runs that end before, at and past a group
    of `group` rows, the reader's wavefront)."""
    if pattern in ("none", "sub", "up", "average", "paeth"):
        return np.full(height, ("none", "sub", "up", "average", "paeth").index(pattern), np.uint8)
    if pattern == "mixed":
        return (np.arange(height) * 7 % 5).astype(np.uint8)
    assert pattern == "paeth_runs"
    out, run = [], 1
    while len(out) < height:
        out += [FILTER_PAETH] * run + [FILTER_SUB]
        run = run % (group + 1) + 1
    return np.array(out[:height], np.uint8)


def filter_rows(rows, bpp, filters):
    """rows: (h, n) uint8 stored rows; filters: each row's type. Returns the filtered
    stream, a filter byte before each row."""
    x = rows.astype(np.int16)
    a = np.zeros_like(x)
    a[:, bpp:] = x[:, :-bpp]
    b = np.zeros_like(x)
    b[1:] = x[:-1]
    c = np.zeros_like(x)
    c[1:, bpp:] = x[:-1, :-bpp]
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
    predicted = np.choose(filters[:, None].astype(np.intp),
                          [np.zeros_like(x), a, b, (a + b) >> 1, paeth])
    out = np.empty((rows.shape[0], rows.shape[1] + 1), np.uint8)
    out[:, 0] = filters
    out[:, 1:] = (x - predicted).astype(np.uint8)
    return out.tobytes()


# ---- zlib streams and PNG chunks written here ----

def zlib_stream(data, level=6, wbits=15, mem_level=8, strategy=zlib.Z_DEFAULT_STRATEGY,
                flushes=(), final="finish"):
    """A zlib stream of `data`, flushed (zlib.Z_SYNC_FLUSH, Z_FULL_FLUSH, ...) at the given
    (offset, mode) points, ended by Z_FINISH ("finish"), or by a sync flush and an empty
    final block: fixed Huffman ("empty_fixed", what Z_FINISH writes after a flush) or stored
    ("empty_stored", written here)."""
    raw = zlib.compressobj(level, zlib.DEFLATED, -wbits, mem_level, strategy)
    out, at = [], 0
    for offset, mode in sorted(flushes):
        out.append(raw.compress(data[at:offset]))
        out.append(raw.flush(mode))
        at = offset
    out.append(raw.compress(data[at:]))
    if final == "finish":
        out.append(raw.flush(zlib.Z_FINISH))
    elif final == "empty_fixed":
        out.append(raw.flush(zlib.Z_SYNC_FLUSH))
        out.append(raw.flush(zlib.Z_FINISH))
    else:
        assert final == "empty_stored"
        out.append(raw.flush(zlib.Z_SYNC_FLUSH))  # ends byte-aligned
        out.append(b"\x01\x00\x00\xff\xff")      # BFINAL, stored, LEN 0, NLEN
    return zlib_wrap(b"".join(out), data, wbits, level)


def zlib_wrap(deflated, data, wbits=15, level=6):
    """RFC 1950's header and Adler-32 around a raw deflate stream of `data`."""
    cmf = 8 | (wbits - 8) << 4
    flg = (0 if level < 2 else 1 if level < 6 else 2 if level == 6 else 3) << 6
    flg += 31 - (cmf * 256 + flg) % 31
    return bytes([cmf, flg]) + deflated + struct.pack(">I", zlib.adler32(data))


def stored_stream(data, blocks):
    """A zlib stream of stored blocks: `data` cut into `blocks` blocks of near-equal size
    (each at most 65535 bytes). Its length is len(data) + 5 * blocks + 6."""
    assert -(-len(data) // STORED_BLOCK_MAX) <= blocks <= max(1, len(data))
    out, at = [], 0
    for i in range(blocks):
        n = (len(data) - at) // (blocks - i)
        out.append(struct.pack("<BHH", 1 if i == blocks - 1 else 0, n, n ^ 0xFFFF))
        out.append(data[at:at + n])
        at += n
    return zlib_wrap(b"".join(out), data, 15, 0)


def chunk(tag, body):
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))


def split_idat(stream, sizes=(), cuts=(), empty_every=0):
    """IDAT bodies: `stream` cut into chunks of the sizes given (cycled; none: one chunk),
    also at each offset in `cuts` (negative: from the end), with an empty IDAT after every
    `empty_every`-th one (0: none)."""
    edges = []
    if sizes:
        at, i = 0, 0
        while at < len(stream):
            at += sizes[i % len(sizes)]
            i += 1
            edges.append(at)
    edges += [c % len(stream) if c < 0 else c for c in cuts]
    bounds = [0] + sorted(e for e in set(edges) if 0 < e < len(stream)) + [len(stream)]
    bodies = [stream[x:y] for x, y in zip(bounds, bounds[1:])]
    if empty_every:
        bodies = [b for i, body in enumerate(bodies)
                  for b in ([body, b""] if (i + 1) % empty_every == 0 else [body])]
    return bodies


def png_file(kind, width, height, bodies, trns=False):
    channels, bits, color = TYPES[kind]
    out = [PNG_SIGNATURE, chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bits, color, 0, 0, 0))]
    if color == 3:
        out.append(chunk(b"PLTE", palette_bytes()))
    if trns:
        out.append(chunk(b"tRNS", bytes(range(0, 250, 5))[:PALETTE_ENTRIES] if color == 3 else
                         b"\x00\x07" * channels))
    out += [chunk(b"IDAT", b) for b in bodies]
    out.append(chunk(b"IEND", b""))
    return b"".join(out)


# ---- other programs' writers ----

def write_libpng(tool, path, kind, a, idat, level, filt, trns=False):
    """tests/png/libpng_write: libpng with IDATs of `idat` bytes (0: one IDAT)."""
    _, bits, color = TYPES[kind]
    raw = path + ".raw"
    with open(raw, "wb") as f:
        f.write(stored_rows(a, kind).tobytes())
    try:
        subprocess.run([tool, raw, path, str(a.shape[1]), str(a.shape[0]), str(color), str(bits),
                        str(idat), str(level), str(filt), str(PALETTE_ENTRIES), str(int(trns))],
                       check=True)
    finally:
        os.unlink(raw)


def write_opencv(path, kind, a, level=None, strategy=None):
    """cv2.imwrite at a level and strategy, or with OpenCV's defaults (None)."""
    import cv2
    channels = TYPES[kind][0]
    img = a[..., 0] if channels == 1 else a[..., [2, 1, 0] + ([3] if channels == 4 else [])]
    params = [] if level is None else [cv2.IMWRITE_PNG_COMPRESSION, level, cv2.IMWRITE_PNG_STRATEGY, strategy]
    if not cv2.imwrite(path, np.ascontiguousarray(img), params):
        raise RuntimeError("cv2.imwrite failed: " + path)


def write_pil(path, kind, a, level=None, optimize=False):
    """Image.save at a level, with optimize, or with PIL's defaults (neither)."""
    from PIL import Image
    if kind == "gray16":
        img = Image.fromarray(np.ascontiguousarray(a[..., 0]))  # mode I;16
    elif kind == "pal8":
        img = Image.fromarray(np.ascontiguousarray(a[..., 0]), "L").convert("P")
        img.putpalette(palette_bytes())
    else:
        img = Image.fromarray(np.ascontiguousarray(a[..., 0] if a.shape[2] == 1 else a))
    kw = {"optimize": True} if optimize else {} if level is None else {"compress_level": level}
    img.save(path, format="PNG", **kw)


VIPS = shutil.which("vips")
VIPS_INTERPRETATION = {1: ("b-w", "grey16"), 2: ("b-w", "grey16"), 3: ("srgb", "rgb16"), 4: ("srgb", "rgb16")}


def write_vips(path, kind, a, compression=None):
    """vips rawload ... out.png[compression=N] (None: vips's default); a palette image is
    vips's own: it quantises an RGBA picture of the same content to one."""
    palette = TYPES[kind][2] == 3
    if palette:  # the indices as colours: the content keeps its kind (flat stays flat)
        kind = "rgba8"
        i = a[..., 0].astype(np.uint16)
        a = np.stack([i, 255 - i, (i * 3) & 0xFF, np.full_like(i, 255)], -1).astype(np.uint8)
    channels, bits, _ = TYPES[kind]
    raw = path + ".raw"
    np.ascontiguousarray(a).tofile(raw)  # native byte order, as rawload reads ushort
    options = ",".join(([] if compression is None else ["compression=%d" % compression]) +
                       (["palette"] if palette else []))
    interp = VIPS_INTERPRETATION[channels][bits == 16]
    try:
        subprocess.run([VIPS, "rawload", raw, "%s[%s]" % (path, options) if options else path, str(a.shape[1]),
                        str(a.shape[0]), str(channels), "--format", "ushort" if bits == 16 else "uchar",
                        "--interpretation", interp], check=True, env=dict(os.environ, VIPS_CONCURRENCY="1"))
    finally:
        os.unlink(raw)
