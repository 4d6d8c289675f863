#!/usr/bin/python3
"""tiff_check.py: TIFF through gsmooth against an independent writer and reader.

Files written by tifffile (strips, tiles, BigTIFF, 8/16-bit, both byte orders, gray,
gray+alpha, RGB, RGBA, separate planes, MinIsWhite 8 and 16-bit, deflate+predictor, LZMA,
several pages; 1/2/4-bit gray and 1/4/8/16-bit palettes, packed and FillOrder 2; 8/16-bit
CMYK; uncompressed and deflated YCbCr) and by PIL's libtiff codecs (LZW, PackBits, deflate;
JPEG in RGB and YCbCr; CCITT G3/G4); libtiff's old-style JPEG test images against PIL;
decoded samples, smoothing on every axis and integrals compared with numpy; BT.601's
rounding on every 8-bit triple that lands on .5; what gsmooth writes read back by tifffile;
refusals (float16, int32, float RGB, 32-bit, inks other than CMYK, L*a*b*, strip tables that
RowsPerStrip does not make) with their message; the band reader swept across its own
buffers' edges and gsmooth's strips, through a file and through a pipe.

usage: tiff_check.py GSMOOTH
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
try:  # Debian's python3-tifffile: the independent TIFF writer and reader
    import tifffile
except ImportError:
    print("skipped: python3-tifffile is not installed")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
from image_files import Checks, differs, read_pgm  # noqa: E402
from reference import integral, luma, smooth  # noqa: E402

check = Checks()


def run(gsmooth, args, stdin=None):
    return subprocess.run([gsmooth, *args], input=stdin, capture_output=True)


def decode(gsmooth, src, tmp, pipe=False):
    """gsmooth --iters 0 of a file (or of its bytes through a pipe): (samples, maxval) or
    (None, the error)."""
    out = os.path.join(tmp, "decoded.pgm")
    if pipe:
        with open(src, "rb") as f:
            r = run(gsmooth, ["--quiet", "--iters", "0", "-", out], stdin=f.read())
    else:
        r = run(gsmooth, ["--quiet", "--iters", "0", src, out])
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {r.stderr.decode().strip()}"
    return read_pgm(out)


def check_decoded(gsmooth, tmp, name, src, gray, bits, pipe=False):
    """gsmooth's samples of `src` are exactly `gray`, at `bits` (a pipe too when asked)."""
    for via in (False, True) if pipe else (False,):
        got, maxval = decode(gsmooth, src, tmp, via)
        label = f"{name}{' (pipe)' if via else ''} decoded"
        if got is None:
            check(label, False, maxval)
            continue
        check(label, maxval == (1 << bits) - 1 and not differs(got, gray), f"maxval {maxval}; {differs(got, gray)}")


# ---- TIFFs that tifffile cannot write whole: its files with a few inline tags rewritten ----

TAG_IMAGE_WIDTH, TAG_BITS, TAG_PHOTOMETRIC, TAG_THRESHHOLDING, TAG_FILL_ORDER = 256, 258, 262, 263, 266
TAG_ROWS_PER_STRIP, TAG_TILE_WIDTH, TAG_COLORMAP, TAG_INK_SET = 278, 322, 320, 332
TYPE_SHORT, TYPE_LONG = 3, 4


def patch_tags(path, values, renames=None):
    """Rewrite inline values of the first directory of a little-endian classic TIFF
    (tifffile's default): values {tag: int} (SHORT when it fits, else LONG), renames
    {tag: new tag} (a placeholder tifffile wrote, renamed; the order must stay sorted)."""
    import struct
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        ifd = struct.unpack_from("<I", data, 4)[0]
        for i in range(struct.unpack_from("<H", data, ifd)[0]):
            at = ifd + 2 + 12 * i
            tag = struct.unpack_from("<H", data, at)[0]
            if renames and tag in renames:
                struct.pack_into("<H", data, at, renames[tag])
                tag = renames[tag]
            if tag in values:
                v = values[tag]
                if v < 65536:
                    struct.pack_into("<HHIHH", data, at, tag, TYPE_SHORT, 1, v, 0)
                else:
                    struct.pack_into("<HHII", data, at, tag, TYPE_LONG, 1, v)
        f.seek(0)
        f.write(data)


def pack_samples(values, bits):
    """Samples of 1, 2 or 4 bits packed MSB-first, every row starting on a byte."""
    h, w = values.shape
    per = 8 // bits
    padded = np.zeros((h, -(-w // per) * per), np.uint8)
    padded[:, :w] = values
    groups = padded.reshape(h, -1, per)
    packed = np.zeros(groups.shape[:2], np.uint8)
    for i in range(per):
        packed |= groups[:, :, i] << (8 - bits * (i + 1))
    return packed


def write_packed(path, values, bits, photometric=1, colormap=None, reversed_bits=False, tile=None, **kw):
    """A 1/2/4-bit TIFF: tifffile writes the packed bytes as 8-bit samples (rows, and
    tiles 16 bytes wide, match libtiff's layout for the packed samples), then BitsPerSample,
    ImageWidth, TileWidth and PhotometricInterpretation are rewritten. FillOrder 2
    (reversed_bits) stands in a Threshholding tag renamed."""
    h, w = values.shape
    packed = pack_samples(values, bits)
    extratags = []
    if colormap is not None:
        extratags.append((TAG_COLORMAP, "H", colormap.size, colormap.ravel().tolist(), True))
    if reversed_bits:
        packed = np.unpackbits(packed[..., None], axis=-1)[..., ::-1].copy()
        packed = np.packbits(packed, axis=-1)[..., 0]
        extratags.append((TAG_THRESHHOLDING, "H", 1, 2, True))
    tile_px = None
    if tile:
        tile_px = tile[1] * 8 // bits  # tile=(rows, bytes): the bytes hold this many samples
    tifffile.imwrite(path, packed, photometric="minisblack", extratags=extratags, tile=tile, **kw)
    values_ = {TAG_BITS: bits, TAG_IMAGE_WIDTH: w, TAG_PHOTOMETRIC: photometric}
    if tile_px:
        values_[TAG_TILE_WIDTH] = tile_px
    patch_tags(path, values_, {TAG_THRESHHOLDING: TAG_FILL_ORDER} if reversed_bits else None)


def palette_lut(rng, entries):
    """A colour map (3, entries) of 16-bit values: v8 * 257, v8 * 256 (PIL's writer) and
    anything at all, so the rule for the high byte is seen."""
    cmap = rng.integers(0, 65536, (3, entries), dtype=np.uint16)
    v8 = rng.integers(0, 256, (3, entries), dtype=np.uint16)
    cmap[:, 0::3] = (v8 * 257)[:, 0::3]
    cmap[:, 1::3] = (v8 * 256)[:, 1::3]
    return cmap


def palette_gray(cmap, index, bits):
    """The gray of a palette image: the map's high byte (16-bit entries whole for 16-bit
    indices), then luma."""
    lut = cmap.astype(np.int64) >> (8 if bits <= 8 else 0)
    return luma(lut[0][index], lut[1][index], lut[2][index])


def cmyk_gray(cmyk, top):
    """CMYK's gray: each of C, M, Y leaves (top - ink)(top - K) / top of the light, rounded
    (PIL's conversion), then luma."""
    ink = cmyk.astype(np.int64)
    light = ((top - ink[..., :3]) * (top - ink[..., 3:4]) + top // 2) // top
    return luma(light[..., 0], light[..., 1], light[..., 2])


def layout_inputs(rng):
    """(name, truth gray int64, bits, writer) for the layouts that are not 8/16-bit gray or
    RGB samples: 1/2/4-bit gray (tifffile's bools; packed; PIL's CCITT G3/G4), palettes,
    CMYK, and 16-bit MinIsWhite."""
    h, w = 45, 77  # no multiple of a byte's samples, nor of a tile
    tw = tifffile.imwrite
    bw = rng.integers(0, 2, (h, w)).astype(bool)
    two = rng.integers(0, 4, (h, w), dtype=np.uint8)
    four = rng.integers(0, 16, (h, w), dtype=np.uint8)
    idx8 = rng.integers(0, 256, (h, w), dtype=np.uint8)
    idx16 = rng.integers(0, 65536, (h, w), dtype=np.uint16)
    g16 = imagegen.photo_like(h, w, seed=35, channels=1, bits=16)
    cmyk8 = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    cmyk16 = rng.integers(0, 65536, (h, w, 4), dtype=np.uint16)
    cmap1, cmap4, cmap8, cmap16 = (palette_lut(rng, 1 << b) for b in (1, 4, 8, 16))
    as64 = lambda a: a.astype(np.int64)  # noqa: E731
    cases = [
        # tifffile writes bools as MinIsWhite unless told: a set bit is black
        ("gray1_miniswhite", 255 - as64(bw) * 255, 8, lambda p: tw(p, bw, rowsperstrip=16)),
        ("gray1_strips", as64(bw) * 255, 8, lambda p: tw(p, bw, photometric="minisblack", rowsperstrip=7)),
        ("gray1_tiles", as64(bw) * 255, 8, lambda p: tw(p, bw, photometric="minisblack", tile=(16, 32))),
        ("gray2_strips", as64(two) * 85, 8, lambda p: write_packed(p, two, 2, rowsperstrip=10)),
        ("gray2_miniswhite_fillorder2", 255 - as64(two) * 85, 8,
         lambda p: write_packed(p, two, 2, photometric=0, reversed_bits=True, rowsperstrip=9)),
        ("gray4_strips_deflate", as64(four) * 17, 8,
         lambda p: write_packed(p, four, 4, compression="zlib", rowsperstrip=8)),
        ("gray4_tiles", as64(four) * 17, 8, lambda p: write_packed(p, four, 4, tile=(16, 16))),
        ("gray4_miniswhite_one_strip", 255 - as64(four) * 17, 8, lambda p: write_packed(p, four, 4, photometric=0)),
        ("palette1", palette_gray(cmap1, bw.astype(np.int64), 1), 8,
         lambda p: write_packed(p, bw.astype(np.uint8), 1, photometric=3, colormap=cmap1, rowsperstrip=5)),
        ("palette4_tiles", palette_gray(cmap4, as64(four), 4), 8,
         lambda p: write_packed(p, four, 4, photometric=3, colormap=cmap4, tile=(32, 16))),
        ("palette8", palette_gray(cmap8, as64(idx8), 8), 8,
         lambda p: tw(p, idx8, photometric="palette", colormap=cmap8, rowsperstrip=6)),
        ("palette8_tiles_deflate", palette_gray(cmap8, as64(idx8), 8), 8,
         lambda p: tw(p, idx8, photometric="palette", colormap=cmap8, tile=(16, 48), compression="zlib")),
        ("palette16", palette_gray(cmap16, as64(idx16), 16), 16,
         lambda p: tw(p, idx16, photometric="palette", colormap=cmap16, rowsperstrip=11)),
        ("cmyk8_strips", cmyk_gray(cmyk8, 255), 8, lambda p: tw(p, cmyk8, photometric="separated", rowsperstrip=10)),
        ("cmyk8_alpha_planes", cmyk_gray(cmyk8, 255), 8,
         lambda p: tw(p, np.moveaxis(np.dstack([cmyk8, idx8]), 2, 0), photometric="separated",
                      planarconfig="separate", extrasamples=["unassalpha"], rowsperstrip=8)),
        ("cmyk16_tiles", cmyk_gray(cmyk16, 65535), 16, lambda p: tw(p, cmyk16, photometric="separated", tile=(16, 32))),
        ("gray16_miniswhite", 65535 - as64(g16), 16, lambda p: tw(p, g16, photometric="miniswhite", rowsperstrip=13)),
        ("gray16_miniswhite_big_endian_tiles", 65535 - as64(g16), 16,
         lambda p: tw(p, g16, photometric="miniswhite", byteorder=">", tile=(16, 32))),
    ]
    try:
        from PIL import Image
    except ImportError:
        return cases
    for codec in ("group3", "group4"):  # PIL through libtiff's fax codecs (MinIsWhite)
        cases.append((f"gray1_{codec}", as64(bw) * 255, 8,
                      lambda p, c=codec: Image.fromarray(bw).save(p, compression=c)))
    return cases


def check_layouts(gsmooth, tmp, rng):
    """Each layout decoded exactly, from a file and from a pipe; two of them smoothed and
    integrated too."""
    for name, gray, bits, write in layout_inputs(rng):
        src = os.path.join(tmp, name + ".tif")
        write(src)
        check_decoded(gsmooth, tmp, name, src, gray, bits, pipe=True)
        if name == "cmyk8_strips":  # the rule is PIL's: its RGB of the same file, then luma
            check_decoded(gsmooth, tmp, name + " against PIL", src, pil_libtiff_gray(src), 8)
        if name in ("gray4_tiles", "palette8"):
            check_input(gsmooth, tmp, name + "_full", gray, bits, lambda p, s=src: os.replace(s, p))


def check_luma_rounding(gsmooth, tmp):
    """BT.601's rounding constant: every 8-bit RGB triple whose weighted sum lands on .5
    before the shift (19595 R + 38470 G + 7471 B = 32768 mod 65536, 274 of them) rounds up;
    32767 there would round each of them down."""
    g, b = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    triples = []
    for r in range(256):
        half = (19595 * r + 38470 * g + 7471 * b) % 65536 == 32768
        triples += [(r, gg, bb) for gg, bb in zip(g[half], b[half])]
    triples = np.array(triples, dtype=np.uint8)
    rgb = np.concatenate([triples, triples[::-1]]).reshape(4, -1, 3)  # 4 rows of 137
    want = luma(*(rgb[..., i].astype(np.int64) for i in range(3)))
    src = os.path.join(tmp, "luma_half.tif")
    tifffile.imwrite(src, rgb, photometric="rgb")
    check_decoded(gsmooth, tmp, f"rgb8 luma at .5 ({len(triples)} triples)", src, want, 8)


def pil_libtiff_gray(path):
    """PIL's reading through libtiff (its RGBA interface for YCbCr and old-style JPEG),
    then luma: the independent reference for those. libtiff's global handler prints its
    warnings from inside PIL; they go to /dev/null."""
    from PIL import Image, TiffImagePlugin
    TiffImagePlugin.READ_LIBTIFF = True
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        rgb = np.asarray(Image.open(path).convert("RGB")).astype(np.int64)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
        TiffImagePlugin.READ_LIBTIFF = False
    return luma(rgb[..., 0], rgb[..., 1], rgb[..., 2])


def check_ycbcr(gsmooth, tmp):
    """YCbCr other than interleaved JPEG: uncompressed and deflated, strips, tiles (the
    uncompressed ones need a raw buffer of one tile) and separate planes (tifffile, which
    subsamples only in JPEG), and libtiff's old-style JPEG test images (subsampled 2x1 and
    2x2); each the gray of PIL's RGB (PIL reads them through libtiff's RGBA interface too)."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        return
    rgb = imagegen.photo_like(37, 61, seed=72, channels=3)
    cases = [dict(rowsperstrip=5), dict(tile=(16, 32)), dict(rowsperstrip=8, compression="zlib"),
             dict(tile=(32, 16), compression="zlib"), dict(rowsperstrip=7, planarconfig="separate")]
    for kw in cases:
        name = f"ycbcr {kw}"
        src = os.path.join(tmp, "ycbcr.tif")
        data = np.moveaxis(rgb, 2, 0) if kw.get("planarconfig") == "separate" else rgb
        tifffile.imwrite(src, data, photometric="ycbcr", subsampling=(1, 1), **kw)
        check_decoded(gsmooth, tmp, name, src, pil_libtiff_gray(src), 8, pipe=True)
    corpus = os.path.join(HERE, "..", "external", "libtiff")
    for f in sorted(os.listdir(corpus)) if os.path.isdir(corpus) else []:
        if f.startswith("ojpeg_"):
            src = os.path.join(corpus, f)
            check_decoded(gsmooth, tmp, f"old-style JPEG {f}", src, pil_libtiff_gray(src), 8, pipe=True)


def check_strile_counts(gsmooth, tmp):
    """Strip tables that do not hold what RowsPerStrip makes are refused: RowsPerStrip
    2^31 + 1 over 13 strips a plane (Pillow's tiff_overflow_rows_per_strip.tif), and a
    RowsPerStrip that asks for more strips than the tables hold."""
    rgb = np.moveaxis(imagegen.photo_like(60, 40, seed=73, channels=3), 2, 0)
    for name, rows in (("overflowed", (1 << 31) + 1), ("too small", 4)):
        src = os.path.join(tmp, "striles.tif")
        tifffile.imwrite(src, rgb, photometric="rgb", planarconfig="separate", rowsperstrip=5)
        patch_tags(src, {TAG_ROWS_PER_STRIP: rows})
        out = os.path.join(tmp, "striles.pgm")
        r = run(gsmooth, [src, out])
        err = r.stderr.decode()
        check(f"refuse strip tables, RowsPerStrip {name}", r.returncode == 1 and len(err.strip().splitlines()) == 1
              and "36 strip offsets" in err and not os.path.exists(out), f"exit {r.returncode}: {err!r}")


# ---- the band reader at every boundary ----
#
# read_tiff.c decodes a band (a strip, or a row of tiles) into a buffer of band x width
# pixels, interleaved strips of up to TIFF_BAND_BYTES_MAX (8 MiB) whole and larger ones a
# row at a time (TIFFReadScanline); a strip of one plane, or of packed 1/2/4-bit samples,
# passes through a piece buffer of its own; tiles are placed column by column. gsmooth's
# pipeline asks for strips of 1 MiB of rows (the CPU plugin's preferred size; 1024 rows of
# 1024 8-bit pixels). A pipe is spooled in 1 MiB chunks to a temporary file, after
# source.c's 64 KiB stream buffer and its 64 KiB replay of the head.
BAND_BYTES_MAX = 8 << 20
PIPELINE_STRIP_BYTES = 1 << 20
STREAM_BYTES = 64 << 10
SPOOL_CHUNK = 1 << 20


def around(n):
    return (n - 1, n, n + 1)


def sweep_case(gsmooth, tmp, name, gray, bits, write, pipe=False):
    src = os.path.join(tmp, "sweep.tif")
    write(src)
    check_decoded(gsmooth, tmp, name, src, gray, bits, pipe=pipe)


def check_boundaries(gsmooth, tmp, rng):
    as64 = lambda a: a.astype(np.int64)  # noqa: E731
    tw = tifffile.imwrite
    # Tiles: the image's edges -1/0/+1 rows and columns from a tile's (16 x 32), for 8-bit
    # gray, 16-bit RGB in separate planes, 1-bit and packed 4-bit gray.
    th, tc = 16, 32
    for h in around(2 * th):
        for w in around(2 * tc):
            g8 = rng.integers(0, 256, (h, w), dtype=np.uint8)
            rgb16 = rng.integers(0, 65536, (3, h, w), dtype=np.uint16)
            bw = rng.integers(0, 2, (h, w)).astype(bool)
            four = rng.integers(0, 16, (h, w), dtype=np.uint8)
            lum16 = luma(as64(rgb16[0]), as64(rgb16[1]), as64(rgb16[2]))
            tag = f"{h}x{w} in tiles of {th}x{tc}"
            sweep_case(gsmooth, tmp, f"gray8 {tag}", as64(g8), 8, lambda p: tw(p, g8, tile=(th, tc)), pipe=w == 2 * tc)
            sweep_case(gsmooth, tmp, f"rgb16 planes {tag}", lum16, 16,
                       lambda p: tw(p, rgb16, photometric="rgb", planarconfig="separate", tile=(th, tc)))
            sweep_case(gsmooth, tmp, f"gray1 {tag}", as64(bw) * 255, 8,
                       lambda p: tw(p, bw, photometric="minisblack", tile=(th, tc)))
            sweep_case(gsmooth, tmp, f"gray4 {tag}", as64(four) * 17, 8,
                       lambda p: write_packed(p, four, 4, tile=(th, tc * 4 // 8)))
    # Strips of packed samples: widths -1/0/+1 pixel from a whole byte (and from 8 bytes
    # of 1-bit samples), heights -1/0/+1 row from two strips of 4.
    for bits, widths in ((1, around(8) + around(64)), (2, around(4)), (4, around(2))):
        for w in widths:
            for h in around(8):
                v = rng.integers(0, 1 << bits, (h, w), dtype=np.uint8)
                sweep_case(gsmooth, tmp, f"gray{bits} {h}x{w} in strips of 4", as64(v) * (255 // ((1 << bits) - 1)), 8,
                           lambda p: write_packed(p, v, bits, rowsperstrip=4))
    # The band buffer's limit: interleaved strips of 8 MiB - 1 row, 8 MiB (band mode) and
    # 8 MiB + 1 row (row mode), and a column either side; a second, partial strip follows.
    width = 2048
    for w, rows in [(width, r) for r in around(BAND_BYTES_MAX // width)] + [(width - 1, 4096), (width + 1, 4096)]:
        g8 = rng.integers(0, 256, (rows + 3, w), dtype=np.uint8)
        sweep_case(gsmooth, tmp, f"gray8 {w} wide, strips of {rows} rows ({rows * w - BAND_BYTES_MAX:+d} B from 8 MiB)",
                   as64(g8), 8, lambda p: tw(p, g8, rowsperstrip=rows), pipe=rows == 4097)
    for rows in around(BAND_BYTES_MAX // width)[1:]:  # a byte a pixel once unpacked or looked up
        bw = rng.integers(0, 2, (rows + 3, width)).astype(bool)
        sweep_case(gsmooth, tmp, f"gray1 {width} wide, strips of {rows} rows", as64(bw) * 255, 8,
                   lambda p: tw(p, bw, photometric="minisblack", rowsperstrip=rows))
    idx = rng.integers(0, 256, (4097 + 3, width), dtype=np.uint8)
    cmap = palette_lut(rng, 256)
    sweep_case(gsmooth, tmp, f"palette8 {width} wide, strips of 4097 rows", palette_gray(cmap, as64(idx), 8), 8,
               lambda p: tw(p, idx, photometric="palette", colormap=cmap, rowsperstrip=4097))
    # gsmooth's strips of 1024 rows (1024 8-bit, or 512 16-bit, pixels a row): heights
    # -1/0/+1 from one and two of them, TIFF strips and tiles that meet their edges or cut
    # across them; smoothing down columns (strips read with halos) on the tallest.
    for w, dtype, bits in ((PIPELINE_STRIP_BYTES >> 10, np.uint8, 8), (PIPELINE_STRIP_BYTES >> 11, np.uint16, 16)):
        strip = PIPELINE_STRIP_BYTES // (w * bits // 8)
        for h in around(strip) + (2 * strip + 1,):
            g = rng.integers(0, 1 << bits, (h, w), dtype=dtype)
            layouts = [("strips of 1024", dict(rowsperstrip=strip)), ("strips of 1000", dict(rowsperstrip=1000)),
                       ("tiles of 48x64", dict(tile=(48, 64)))] if bits == 8 else [("strips of 1000", dict(rowsperstrip=1000))]
            for label, kw in layouts:
                src = os.path.join(tmp, "sweep.tif")
                tw(src, g, **kw)
                name = f"gray{bits} {h}x{w} in {label}"
                check_decoded(gsmooth, tmp, name, src, as64(g), bits, pipe=h == strip + 1)
                if h == 2 * strip + 1:
                    out = os.path.join(tmp, "sweep_y.pgm")
                    r = run(gsmooth, ["--quiet", "--iters", "3", "--axis", "y", src, out])
                    got = read_pgm(out)[0] if r.returncode == 0 else None
                    want = smooth(as64(g), bits, 3, "y")
                    check(f"{name} --axis y K=3", got is not None and not differs(got, want),
                          r.stderr.decode() if got is None else differs(got, want))
    # A pipe's bytes: files of 64 KiB and 1 MiB -1/0/+1 byte (zeros after the image).
    for size in around(STREAM_BYTES) + around(SPOOL_CHUNK):
        g8 = rng.integers(0, 256, ((size - 1024) // 256, 256), dtype=np.uint8)

        def write_sized(p, g8=g8, size=size):
            tw(p, g8, rowsperstrip=64)
            with open(p, "ab") as f:
                f.write(bytes(size - os.path.getsize(p)))
        sweep_case(gsmooth, tmp, f"gray8 file of {size} bytes", as64(g8), 8, write_sized, pipe=True)


def inputs(rng):
    """(name, truth gray int64, bits, writer) for each input file; writer(path) makes it."""
    h, w = 333, 517  # odd, several strips and tiles, no multiple of a tile
    g8 = imagegen.photo_like(h, w, seed=31, channels=1)
    g16 = imagegen.photo_like(h, w, seed=32, channels=1, bits=16)
    rgb8 = imagegen.photo_like(h, w, seed=33, channels=3)
    rgb16 = imagegen.photo_like(h, w, seed=34, channels=3, bits=16)
    alpha8 = rng.integers(0, 256, (h, w, 1), dtype=np.uint8)
    as64 = lambda a: a.astype(np.int64)  # noqa: E731
    lum = lambda a: luma(as64(a[..., 0]), as64(a[..., 1]), as64(a[..., 2]))  # noqa: E731
    tw = tifffile.imwrite
    return [
        ("gray8_strips16", as64(g8), 8, lambda p: tw(p, g8, rowsperstrip=16)),
        ("gray8_one_strip", as64(g8), 8, lambda p: tw(p, g8, rowsperstrip=h)),
        ("gray8_deflate_predictor", as64(g8), 8,
         lambda p: tw(p, g8, compression="zlib", predictor=True, rowsperstrip=40)),
        ("gray16_little", as64(g16), 16, lambda p: tw(p, g16, rowsperstrip=7)),
        ("gray16_big_endian", as64(g16), 16, lambda p: tw(p, g16, byteorder=">", rowsperstrip=50)),
        ("gray16_deflate_predictor_tiles", as64(g16), 16,
         lambda p: tw(p, g16, tile=(64, 48), compression="zlib", predictor=True)),
        ("gray8_tiles", as64(g8), 8, lambda p: tw(p, g8, tile=(32, 256))),
        ("gray8_lzma", as64(g8), 8, lambda p: tw(p, g8, compression="lzma", rowsperstrip=64)),
        ("gray8_bigtiff", as64(g8), 8, lambda p: tw(p, g8, bigtiff=True, rowsperstrip=33)),
        ("gray16_bigtiff_tiles", as64(g16), 16, lambda p: tw(p, g16, bigtiff=True, tile=(128, 128))),
        ("gray8_miniswhite", 255 - as64(g8), 8, lambda p: tw(p, g8, photometric="miniswhite")),
        ("gray8_alpha", as64(g8), 8,
         lambda p: tw(p, np.dstack([g8, alpha8[..., 0]]), photometric="minisblack", extrasamples=["unassalpha"])),
        ("rgb8", lum(rgb8), 8, lambda p: tw(p, rgb8, photometric="rgb", rowsperstrip=20)),
        ("rgb16_separate_planes", lum(rgb16), 16,
         lambda p: tw(p, np.moveaxis(rgb16, 2, 0), photometric="rgb", planarconfig="separate", rowsperstrip=60)),
        ("rgb8_separate_tiles", lum(rgb8), 8,
         lambda p: tw(p, np.moveaxis(rgb8, 2, 0), photometric="rgb", planarconfig="separate", tile=(48, 64))),
        ("rgba8_tiles", lum(rgb8), 8,
         lambda p: tw(p, np.dstack([rgb8, alpha8]), photometric="rgb", extrasamples=["unassalpha"], tile=(16, 512))),
        ("gray8_three_pages", as64(g8), 8,
         lambda p: tw(p, np.stack([g8, 255 - g8, g8 // 2]), photometric="minisblack")),
    ]


def large_inputs():
    """Several pipeline strips tall (the CPU plugin takes 1 MiB of rows a strip: 256 rows of
    2048 16-bit samples, 256 of 4096 8-bit), with TIFF bands that never line up with them."""
    g16 = np.tile(imagegen.photo_like(550, 1024, seed=81, channels=1, bits=16), (2, 2))
    g8 = np.random.default_rng(82).integers(0, 256, (777, 4096), dtype=np.uint8)
    tw = tifffile.imwrite
    return [
        ("large16_tiles_2048x1100", g16.astype(np.int64), 16,
         lambda p: tw(p, g16, tile=(96, 128), compression="zlib", predictor=True)),
        ("large8_strips_4096x777", g8.astype(np.int64), 8, lambda p: tw(p, g8, rowsperstrip=50)),
        ("large8_one_strip_4096x777", g8.astype(np.int64), 8, lambda p: tw(p, g8, rowsperstrip=777)),
    ]


def pil_inputs():
    """Codecs tifffile cannot write without imagecodecs, written by PIL through libtiff."""
    try:
        from PIL import Image
    except ImportError:
        return []
    g8 = imagegen.photo_like(211, 301, seed=41, channels=1)
    im = Image.fromarray(g8)
    return [
        (f"gray8_{c}", g8.astype(np.int64), 8, lambda p, c=c: im.save(p, compression=c))
        for c in ("tiff_lzw", "packbits", "tiff_adobe_deflate")
    ]


def check_input(gsmooth, tmp, name, gray, bits, write):
    src = os.path.join(tmp, name + ".tif")
    write(src)
    # the decoded samples, exactly
    out = os.path.join(tmp, "copy.pgm")
    r = run(gsmooth, ["--iters", "0", src, out])
    if r.returncode != 0:
        check(name, False, f"exit {r.returncode}: {r.stderr.decode().strip()}")
        return
    got, maxval = read_pgm(out)
    check(f"{name} decoded", maxval == (1 << bits) - 1 and not differs(got, gray),
          f"maxval {maxval}; {differs(got, gray)}")
    if name.endswith("pages"):
        check(f"{name} note", b"3 pages: only the first is read" in r.stderr, r.stderr.decode())
    # smoothing on each axis, written as TIFF and read back by tifffile
    for axis, k in (("x", 3), ("y", 3), ("xy", 3)) + ((("y", 40), ("xy", 40)) if name.startswith("large") else ()):
        out = os.path.join(tmp, "smooth.tif")
        r = run(gsmooth, ["--quiet", "--iters", str(k), "--axis", axis, src, out])
        if r.returncode != 0:
            check(f"{name} --axis {axis} K={k}", False, f"exit {r.returncode}: {r.stderr.decode().strip()}")
            continue
        got = tifffile.imread(out)
        want = smooth(gray, bits, k, axis)
        check(f"{name} --axis {axis} K={k} -> .tif", got.dtype == (np.uint16 if bits == 16 else np.uint8)
              and not differs(got.astype(np.int64), want), f"dtype {got.dtype}; {differs(got.astype(np.int64), want)}")
    # exact integrals as TIFF
    for mode, flag in (("rows", "--integral"), ("2d", "--integral=2d")):
        out = os.path.join(tmp, "integral.tif")
        r = run(gsmooth, ["--quiet", flag, src, out])
        if r.returncode != 0:
            check(f"{name} {flag}", False, f"exit {r.returncode}: {r.stderr.decode().strip()}")
            continue
        got = tifffile.imread(out)
        want = integral(gray, bits, mode)
        check(f"{name} {flag} -> .tif", got.dtype == want.dtype and not differs(got, want),
              f"dtype {got.dtype} want {want.dtype}; {differs(got, want)}")


def check_jpeg_ycbcr(gsmooth, tmp):
    """JPEG-compressed YCbCr TIFF (PIL through libtiff): libjpeg gives RGB, then BT.601.
    Lossy, and PIL's own read converts differently, so the check is a tolerance."""
    try:
        from PIL import Image
    except ImportError:
        return
    rgb = imagegen.photo_like(96, 160, seed=71, channels=3)
    for mode in ("YCbCr", "RGB"):  # photometric 6 (YCbCr) and 2 (RGB), both JPEG-compressed
        src = os.path.join(tmp, f"jpeg_{mode}.tif")
        Image.fromarray(rgb).convert(mode).save(src, compression="jpeg", quality=95)
        with tifffile.TiffFile(src) as f:
            photometric = f.pages[0].photometric
        back = np.asarray(Image.open(src).convert("RGB")).astype(np.int64)
        want = luma(back[..., 0], back[..., 1], back[..., 2])
        out = os.path.join(tmp, "jpeg.pgm")
        r = run(gsmooth, ["--quiet", "--iters", "0", src, out])
        got = read_pgm(out)[0] if r.returncode == 0 else None
        worst = int(np.abs(got - want).max()) if got is not None and got.shape == want.shape else None
        check(f"jpeg {mode} (photometric {photometric})", worst is not None and worst <= 3,
              f"exit {r.returncode}, worst difference {worst}: {r.stderr.decode().strip()}")


def check_written(gsmooth, tmp):
    """How gsmooth writes TIFF: one gray sample, deflate with the horizontal predictor,
    strips, the right sample format; 8, 16, 32 and 64-bit."""
    g16 = imagegen.photo_like(300, 700, seed=51, channels=1, bits=16)
    src = os.path.join(tmp, "w16.tif")
    tifffile.imwrite(src, g16)
    g8 = imagegen.photo_like(300, 700, seed=52, channels=1)
    src8 = os.path.join(tmp, "w8.tif")
    tifffile.imwrite(src8, g8)
    for args, dtype in ((["--depth", "8", src], np.uint8), ([src], np.uint16), (["--integral", src], np.uint64),
                        (["--integral=2d", src8], np.uint32)):
        out = os.path.join(tmp, "w.tiff")
        r = run(gsmooth, ["--quiet", *args, out])
        if r.returncode != 0:
            check(f"write {args}", False, r.stderr.decode().strip())
            continue
        with tifffile.TiffFile(out) as f:
            page = f.pages[0]
            ok = (page.dtype == dtype and page.samplesperpixel == 1 and page.compression == 8
                  and page.predictor == 2 and not page.is_tiled and not f.is_bigtiff
                  and page.photometric == 1)
            check(f"write {args} tags", ok, f"dtype {page.dtype} spp {page.samplesperpixel} compression "
                  f"{page.compression} predictor {page.predictor} photometric {page.photometric}")


def check_levels(gsmooth, tmp):
    """The PNG compression settings choose the TIFF deflate level: --png-level 0 writes
    uncompressed strips, --compression small a smaller file than the default; the same
    pixels every time."""
    g = imagegen.photo_like(400, 600, seed=91, channels=1)
    src = os.path.join(tmp, "levels.tif")
    tifffile.imwrite(src, g)
    want = smooth(g.astype(np.int64), 8, 3)
    sizes = {}
    for label, args, compression, predictor in (("default", [], 8, 2), ("store", ["--png-level", "0"], 1, 1),
                                                ("small", ["--compression", "small"], 8, 2)):
        out = os.path.join(tmp, f"level_{label}.tif")
        r = run(gsmooth, ["--quiet", *args, src, out])
        if r.returncode != 0:
            check(f"level {label}", False, r.stderr.decode().strip())
            continue
        with tifffile.TiffFile(out) as f:
            page = f.pages[0]
            got = page.asarray().astype(np.int64)
            check(f"level {label}", page.compression == compression and page.predictor == predictor
                  and not differs(got, want), f"compression {page.compression} predictor {page.predictor}; "
                  f"{differs(got, want)}")
        sizes[label] = os.path.getsize(out)
    check("--compression small is smaller than the default",
          sizes.get("small", 1) < sizes.get("default", 0) < sizes.get("store", 0), str(sizes))


def check_refusals(gsmooth, tmp):
    g = np.zeros((20, 30), dtype=np.uint8)
    cases = [
        # float32, float64 and int16 gray are read (tests/test_float_io.c); these are not
        ("float16", lambda p: tifffile.imwrite(p, g.astype(np.float16)), "16-bit floating-point"),
        ("int32", lambda p: tifffile.imwrite(p, g.astype(np.int32)), "32-bit signed integer"),
        ("float32 RGB", lambda p: tifffile.imwrite(p, np.zeros((20, 30, 3), np.float32), photometric="rgb"),
         "convert it to gray first"),
        ("uint32", lambda p: tifffile.imwrite(p, g.astype(np.uint32)), "32-bit TIFF samples"),
        ("multi-ink", lambda p: tifffile.imwrite(p, np.zeros((20, 30, 4), np.uint8), photometric="separated",
                                                extratags=[(TAG_INK_SET, "H", 1, 2, True)]), "InkSet 2"),
        ("cielab", lambda p: tifffile.imwrite(p, np.zeros((20, 30, 3), np.uint8), photometric="cielab"),
         "L*a*b*"),
    ]
    for name, write, words in cases:
        src = os.path.join(tmp, name + ".tif")
        write(src)
        out = os.path.join(tmp, name + "_out.png")
        r = run(gsmooth, [src, out])
        err = r.stderr.decode()
        lines = err.strip().splitlines()
        check(f"refuse {name}", r.returncode == 1 and len(lines) == 1 and words in err
              and src in err and not os.path.exists(out), f"exit {r.returncode}: {err!r}")


def check_limits_and_pipe(gsmooth, tmp):
    g = imagegen.photo_like(120, 250, seed=61, channels=1)
    src = os.path.join(tmp, "limit.tif")
    tifffile.imwrite(src, g, tile=(32, 32))
    n = 120 * 250
    r = run(gsmooth, ["--max-pixels", str(n - 1), src, os.path.join(tmp, "l.png")])
    check("--max-pixels N-1 refuses", r.returncode == 1 and b"pixels" in r.stderr, r.stderr.decode())
    r = run(gsmooth, ["--quiet", "--max-pixels", str(n), src, os.path.join(tmp, "l.pgm")])
    check("--max-pixels N reads", r.returncode == 0, r.stderr.decode())
    with open(src, "rb") as f:
        data = f.read()
    r = run(gsmooth, ["--quiet", "-", os.path.join(tmp, "pipe.pgm")], stdin=data)
    got = read_pgm(os.path.join(tmp, "pipe.pgm"))[0] if r.returncode == 0 else None
    check("pipe gives the file's result", got is not None and not differs(got, smooth(g.astype(np.int64), 8, 3)),
          r.stderr.decode())
    # a stream over the spool limit (8 bytes a pixel of --max-pixels + 64 MiB) is refused
    r = run(gsmooth, ["--max-pixels", "1", "-", os.path.join(tmp, "big.pgm")], stdin=b"II*\0" + bytes(70 << 20))
    check("spool limit", r.returncode == 1 and b"spool limit" in r.stderr, r.stderr.decode())


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gsmooth = sys.argv[1]
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="gsmooth-tiff-") as tmp:
        for name, gray, bits, write in inputs(rng) + large_inputs() + pil_inputs():
            check_input(gsmooth, tmp, name, gray, bits, write)
        check_layouts(gsmooth, tmp, rng)
        check_luma_rounding(gsmooth, tmp)
        check_ycbcr(gsmooth, tmp)
        check_strile_counts(gsmooth, tmp)
        check_boundaries(gsmooth, tmp, rng)
        check_jpeg_ycbcr(gsmooth, tmp)
        check_written(gsmooth, tmp)
        check_levels(gsmooth, tmp)
        check_refusals(gsmooth, tmp)
        check_limits_and_pipe(gsmooth, tmp)
    return check.report("tiff_check")


if __name__ == "__main__":
    sys.exit(main())
