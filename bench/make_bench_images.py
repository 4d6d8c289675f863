"""make_bench_images.py: builds the end-to-end benchmark's input PNGs.

8-bit gray PNG mosaics of photo-like tiles (scripts/imagegen.py), never noise or flat
fields.

Usage: /usr/bin/python3 bench/make_bench_images.py OUTDIR [--batch N] [--big] [--giga]
Writes OUTDIR/mosaic4096.png (4096x4096, 16 distinct seeds), OUTDIR/batch/img_NN.png
(N images of 2048x2048, default 64), with --big OUTDIR/mosaic8192.png (8192x8192), and with
--giga OUTDIR/mosaic32768.png (32768x32768, one gigapixel, written band by band).
Files that already exist are kept, so a second run costs nothing.

Why gray: gsmooth smooths gray samples (colour input is converted to luma first), so a
gray input makes every tool (vips, OpenCV, ImageMagick, gsmooth) do the same work on the
same samples. Why Paeth + zlib level 6: it is what libpng writes for photographs by
default, so decoding costs what it costs on a real-world PNG.
"""
import os
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import imagegen  # noqa: E402

TILE = 1024          # side of one photo_like tile: large enough to hold a whole "scene"
POOL_SEEDS = 16      # distinct scenes; larger images reuse them in other orientations
ZLIB_LEVEL = 6       # libpng's default level


def tile_pool():
    """The 16 gray tiles, generated once per run (about 1 s each)."""
    return [imagegen.photo_like(TILE, TILE, seed=s, channels=1, bits=8) for s in range(1, POOL_SEEDS + 1)]


def orient(tile, k):
    """One of the 8 rotations/flips of a tile, so reused scenes do not repeat verbatim."""
    t = np.rot90(tile, k % 4)
    return np.fliplr(t) if (k // 4) % 2 else t


def mosaic(pool, tiles_y, tiles_x, first):
    rows = []
    for ty in range(tiles_y):
        row = []
        for tx in range(tiles_x):
            i = first + ty * tiles_x + tx
            row.append(orient(pool[i % len(pool)], i // len(pool) + ty + 3 * tx))
        rows.append(np.concatenate(row, axis=1))
    return np.ascontiguousarray(np.concatenate(rows, axis=0))


def paeth_filter(img):
    """PNG filter type 4 for every row of an 8-bit gray image, vectorised (Paeth reads
    raw neighbours only, so every row can be filtered at once)."""
    a = np.zeros_like(img, dtype=np.int16)
    b = np.zeros_like(img, dtype=np.int16)
    c = np.zeros_like(img, dtype=np.int16)
    x = img.astype(np.int16)
    a[:, 1:] = x[:, :-1]
    b[1:, :] = x[:-1, :]
    c[1:, 1:] = x[:-1, :-1]
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
    return ((x - pred) & 0xFF).astype(np.uint8)


def chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_png(path, img):
    h, w = img.shape
    filtered = paeth_filter(img)
    raw = np.empty((h, w + 1), dtype=np.uint8)
    raw[:, 0] = 4
    raw[:, 1:] = filtered
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), ZLIB_LEVEL)) + chunk(b"IEND", b""))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def paeth_band(img, above):
    """paeth_filter for a band of rows whose row above is `above` (zeros for the first)."""
    return paeth_filter(np.concatenate([above[None, :], img]))[1:]


def write_png_bands(path, bands, w, h):
    """A PNG from an iterator of row bands, deflated as a stream: memory is one band."""
    comp = zlib.compressobj(ZLIB_LEVEL)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)))
        above = np.zeros(w, dtype=np.uint8)
        for band in bands:
            raw = np.empty((band.shape[0], w + 1), dtype=np.uint8)
            raw[:, 0] = 4
            raw[:, 1:] = paeth_band(band, above)
            above = band[-1].copy()
            data = comp.compress(raw.tobytes())
            if data:
                f.write(chunk(b"IDAT", data))
        f.write(chunk(b"IDAT", comp.flush()) + chunk(b"IEND", b""))
    os.replace(tmp, path)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    batch = 64
    big = "--big" in argv
    giga = "--giga" in argv
    if "--batch" in argv:
        batch = int(argv[argv.index("--batch") + 1])
    os.makedirs(os.path.join(out, "batch"), exist_ok=True)
    wanted = [os.path.join(out, "mosaic4096.png")]
    wanted += [os.path.join(out, "batch", "img_%02d.png" % i) for i in range(batch)]
    if big:
        wanted.append(os.path.join(out, "mosaic8192.png"))
    if giga:
        wanted.append(os.path.join(out, "mosaic32768.png"))
    if all(os.path.exists(p) for p in wanted):
        return 0
    pool = tile_pool()
    jobs = [(wanted[0], 4, 4, 0)]
    jobs += [(os.path.join(out, "batch", "img_%02d.png" % i), 2, 2, 4 * i + 1) for i in range(batch)]
    if big:
        jobs.append((os.path.join(out, "mosaic8192.png"), 8, 8, 5))
    for path, ty, tx, first in jobs:
        if not os.path.exists(path):
            write_png(path, mosaic(pool, ty, tx, first))
    giga_path = os.path.join(out, "mosaic32768.png")
    if giga and not os.path.exists(giga_path):
        side = 32 * TILE
        bands = (mosaic(pool, 1, 32, 7 + 32 * ty) for ty in range(32))
        write_png_bands(giga_path, bands, side, side)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
