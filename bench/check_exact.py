"""check_exact.py: checks that gsmooth's PNG output has exactly the formula's pixels.

The formula is the design's smoothing (float32, 3-point mean, K passes, rint, clamp); both
PNGs are read with a strict decoder of its own.

Usage: /usr/bin/python3 bench/check_exact.py INPUT.png OUTPUT.png [K [AXIS]]   (AXIS x, y, xy)
Prints one line, "exact" or what differs; exits 0 only when exact. INPUT must be a gray
8- or 16-bit PNG (what bench/make_bench_images.py writes), read with OpenCV when present.
OUTPUT is read by the strict decoder here, which checks every chunk CRC and the zlib
stream's Adler-32, so it also vouches for the file gsmooth wrote.
"""
import os
import struct
import sys
import zlib

import numpy as np

# The one numpy statement of the semantics, shared with the golden tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
from reference import smooth  # noqa: E402


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(tag + body) & 0xFFFFFFFF != crc:
            raise ValueError("%s: bad CRC in %s" % (path, tag))
        if tag == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat.append(body)
        elif tag == b"IEND":
            break
        pos += 12 + length
    w, h, bits, ctype, _, _, interlace = ihdr
    if ctype != 0 or interlace or bits not in (8, 16):
        raise ValueError("%s: only gray 8/16-bit non-interlaced PNGs are checked" % path)
    d = zlib.decompressobj()
    raw = d.decompress(b"".join(idat)) + d.flush()
    if not d.eof or d.unused_data:
        raise ValueError("%s: zlib stream not properly ended" % path)
    bpp = bits // 8
    stride = w * bpp
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        f, cur = rows[y, 0], rows[y, 1:].astype(np.int32)
        if f == 0:
            line = cur
        elif f == 1:  # Sub: a running sum per byte lane, modulo 256
            lanes = cur.reshape(-1, bpp)
            line = (np.cumsum(lanes, axis=0) & 0xFF).reshape(-1)
        elif f == 2:
            line = (cur + prev) & 0xFF
        else:  # Average and Paeth need a scalar loop; they are rare in what gsmooth writes
            line = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 3:
                    p = (a + b) >> 1
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (cur[x] + p) & 0xFF
        out[y] = line
        prev = line
    if bits == 16:
        out = (out[:, 0::2] << 8) | out[:, 1::2]
    return out.astype(np.uint16 if bits == 16 else np.uint8), bits


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    k = int(argv[3]) if len(argv) > 3 else 3
    axis = argv[4] if len(argv) > 4 else "x"
    try:  # the input is Paeth-filtered, which the strict decoder undoes slowly (scalar)
        import cv2
        src = cv2.imread(argv[1], cv2.IMREAD_UNCHANGED)
    except ImportError:
        src = None
    if src is None or src.ndim != 2:
        src, _ = read_png(argv[1])
    got, _ = read_png(argv[2])  # gsmooth's own output: Sub rows, decoded vectorised
    bits = 16 if src.dtype == np.uint16 else 8
    want = smooth(src, bits, k, axis).astype(src.dtype)
    if got.shape != want.shape or got.dtype != want.dtype:
        print("differs: shape/depth %s %s vs %s %s" % (got.shape, got.dtype, want.shape, want.dtype))
        return 1
    bad = np.argwhere(got != want)
    if len(bad):
        y, x = bad[0]
        print("differs: %d pixels, first at (%d,%d): %d, expected %d" % (len(bad), x, y, got[y, x], want[y, x]))
        return 1
    print("exact")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
