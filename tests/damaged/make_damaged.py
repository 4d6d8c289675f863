#!/usr/bin/python3
"""make_damaged.py: writes gsmooth's damaged-input corpus and its manifest.

Truncated, flipped, spliced, lying headers, bombs; written deterministically into the
directory given.
"""
import os
import random
import struct
import sys
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pngwrite  # noqa: E402

GOLDEN_INPUTS = os.path.join(ROOT, "tests", "golden", "inputs")

SEED = 5                  # one fixed seed, so every run writes the same bytes
TRUNCATION_STEPS = 20     # cut every 1/20 of each file (the corpus's minimum)
FLIPS_PER_FILE = 8        # flipped-byte variants per base file
PNG_SIG = b"\x89PNG\r\n\x1a\n"
PNG_SIG_LEN = len(PNG_SIG)
IHDR_CRC_AT = PNG_SIG_LEN + 4 + 4 + 13  # length, type, 13 data bytes, then the CRC
PNG_DIMENSION_MAX = 0x7FFFFFFF          # PNG's own limit on width and height (2^31 - 1)

# The bomb: a header claiming 50000 x 50000 gray (2.5 G pixels, over the default
# --max-pixels of 2^30) with an IDAT of zeros. BOMB_ROWS rows really inflate (about 100 MB
# from about 100 kB), enough to prove that decoding streams in bounded memory, few enough
# that the test stays fast; then the data ends and gsmooth must call it truncated.
BOMB_SIDE = 50000
BOMB_ROWS = 2000
BOMB_MAX_PIXELS = str(BOMB_SIDE * BOMB_SIDE + 1)   # a --max-pixels that admits the claim
WIDE_ROW_MAX_PIXELS = str(PNG_DIMENSION_MAX + 1)   # admits a single 2^31 - 1 pixel row

# Expectations, read by tests/test_damaged.c:
#   fail    exit 1, one stderr line naming the file, no output, no temp file, old output kept
#   ok      exit 0 and an output (a valid image under a misleading name, say)
#   either  exit 0 or exit 1 with every "fail" rule: formats without checksums (BMP, TGA,
#           JPEG entropy data) cannot always tell damage from content
# Flags: "rlimit" marks a case that only the memory limit keeps bounded (RLIMIT_AS, or
# ASan's allocation limit under AddressSanitizer): "out of memory" is its right answer;
# "tif" writes the output as .tif, which stores float samples (the float inputs' cases).
cases = []


def tiff_bytes(width, height, strips, rows_per_strip, compression=1, bits=8, spp=1,
               photometric=1, sample_format=1, strip_at=None, next_ifd=0):
    """A little-endian classic TIFF written here byte by byte (so headers can lie): header,
    strip data, then one IFD. strip_at overrides the strip offsets, next_ifd the link."""
    data = b"".join(strips)
    offsets, at = [], 8
    for strip in strips:
        offsets.append(at)
        at += len(strip)
    if strip_at is not None:
        offsets = strip_at
    ifd_at = 8 + len(data) + (8 + len(data)) % 2
    extra = ifd_at + 2 + 12 * 11 + 4  # arrays too long for an entry follow the IFD
    blobs = b""

    def array(values):
        nonlocal blobs
        if len(values) == 1:
            return 1, values[0]
        off = extra + len(blobs)
        blobs += struct.pack("<%dI" % len(values), *values)
        return len(values), off
    n_off, v_off = array(offsets)
    n_cnt, v_cnt = array([len(x) for x in strips])
    entries = [  # tag, type (3 SHORT, 4 LONG), count, value
        (256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, bits), (259, 3, 1, compression),
        (262, 3, 1, photometric), (273, 4, n_off, v_off), (277, 3, 1, spp),
        (278, 4, 1, rows_per_strip), (279, 4, n_cnt, v_cnt), (284, 3, 1, 1),
        (339, 3, 1, sample_format),
    ]
    ifd = struct.pack("<H", len(entries))
    for tag, typ, count, value in entries:
        ifd += struct.pack("<HHI", tag, typ, count) + (struct.pack("<HH", value, 0) if typ == 3 and count == 1
                                                       else struct.pack("<I", value))
    ifd += struct.pack("<I", next_ifd)
    return b"II*\0" + struct.pack("<I", ifd_at) + data + bytes(ifd_at - 8 - len(data)) + ifd + blobs


def tiff_tagged(entries, blobs):
    """A little-endian classic TIFF of the given IFD entries (tag, type, values), types 3
    SHORT and 4 LONG; a value ("blob", i) is the offset of blobs[i], which follow the
    header. Any number of values: arrays that do not fit an entry follow the IFD."""
    out = bytearray(b"II*\0" + bytes(4))
    at = []
    for blob in blobs:
        at.append(len(out))
        out += blob + bytes(len(blob) % 2)
    ifd_at = len(out)
    entries = sorted(entries)
    extra = ifd_at + 2 + 12 * len(entries) + 4
    ifd, tail = bytearray(struct.pack("<H", len(entries))), bytearray()
    for tag, typ, values in entries:
        values = [at[v[1]] if isinstance(v, tuple) else v for v in values]
        raw = struct.pack("<%d%s" % (len(values), "H" if typ == 3 else "I"), *values)
        if len(raw) <= 4:
            ifd += struct.pack("<HHI", tag, typ, len(values)) + raw.ljust(4, b"\0")
        else:
            ifd += struct.pack("<HHII", tag, typ, len(values), extra + len(tail))
            tail += raw
    ifd += bytes(4)
    out += ifd + tail
    struct.pack_into("<I", out, 4, ifd_at)
    return bytes(out)


def tiff_review_cases(out_dir):
    """TIFFs the reader once got wrong: a tile grid far larger than the image, YCbCr JPEG in
    separate planes (libtiff hands back the raw Y, Cb and Cr planes as RGB, so the reader
    takes libtiff's RGBA interface, as PIL does), and a JPEG strip narrower than its strip."""
    zeros = zlib.compress(bytes(1048576 * 16), 9)  # one tile of 2^20 x 16, all tiles share it
    tiles = 4096 // 16
    add(out_dir, "tiff_tile_grid_bomb.tif", tiff_tagged([
        (256, 4, [16]), (257, 4, [4096]), (258, 3, [8]), (259, 3, [8]), (262, 3, [1]), (277, 3, [1]),
        (322, 4, [1048576]), (323, 4, [16]), (324, 4, [("blob", 0)] * tiles), (325, 4, [len(zeros)] * tiles),
    ], [zeros]), "fail")
    # Each plane a valid 16x16 JPEG (no subsampling): valid, and its pixels are PIL's.
    rng = np.random.default_rng(3)
    planes = [pil_bytes(rng.integers(0, 256, (16, 16), dtype=np.uint8), "JPEG", quality=90) for _ in range(3)]
    add(out_dir, "tiff_ycbcr_jpeg_separate.tif", tiff_tagged([
        (256, 4, [16]), (257, 4, [16]), (258, 3, [8, 8, 8]), (259, 3, [7]), (262, 3, [6]), (277, 3, [3]),
        (278, 4, [16]), (273, 4, [("blob", 0), ("blob", 1), ("blob", 2)]), (279, 4, [len(p) for p in planes]),
        (284, 3, [2]), (530, 3, [1, 1]),
    ], planes), "ok")
    wide = [pil_bytes(rng.integers(0, 256, (16, 48), dtype=np.uint8), "JPEG", quality=90) for _ in range(2)]
    narrow = pil_bytes(rng.integers(0, 256, (16, 32), dtype=np.uint8), "JPEG", quality=90)

    def jpeg_tiff(strips):
        return tiff_tagged([
            (256, 4, [48]), (257, 4, [32]), (258, 3, [8]), (259, 3, [7]), (262, 3, [1]), (277, 3, [1]),
            (278, 4, [16]), (273, 4, [("blob", 0), ("blob", 1)]), (279, 4, [len(x) for x in strips]),
        ], strips)
    add(out_dir, "valid_handmade_jpeg_strips.tif", jpeg_tiff(wide), "ok")
    add(out_dir, "tiff_jpeg_strip_narrower.tif", jpeg_tiff([wide[0], narrow]), "fail")


def tiff_lies(out_dir):
    """TIFF headers that lie or refuse, beside the truncated and flipped files."""
    rows = [bytes(range(64)) * 1] * 40
    good = tiff_bytes(64, 40, [b"".join(rows)], 40)
    add(out_dir, "valid_handmade.tif", good, "ok")
    add(out_dir, "tiff_huge_header.tif", tiff_bytes(50000, 50000, [bytes(100)], 50000), "fail")
    add(out_dir, "tiff_huge_width.tif", tiff_bytes(0xFFFFFFFF, 1, [bytes(100)], 1), "fail")
    add(out_dir, "tiff_strip_past_end.tif", tiff_bytes(64, 40, [b"".join(rows)], 40, strip_at=[1 << 30]), "fail")
    add(out_dir, "tiff_short_strip.tif", tiff_bytes(64, 40, [b"".join(rows)[:1000]], 40), "fail")
    add(out_dir, "tiff_zero_width.tif", tiff_bytes(0, 40, [b"".join(rows)], 40), "fail")
    # float32 and int16 gray are read (as float32); whether they are smoothed is the
    # backend's to say, so either answer is right, by the contract's rules
    add(out_dir, "tiff_float.tif", tiff_bytes(16, 40, [bytes(16 * 40 * 4)], 40, bits=32, sample_format=3), "either",
        flags="tif")
    add(out_dir, "tiff_signed.tif", tiff_bytes(32, 40, [bytes(32 * 40 * 2)], 40, bits=16, sample_format=2), "either",
        flags="tif")
    add(out_dir, "tiff_float16.tif", tiff_bytes(16, 40, [bytes(16 * 40 * 2)], 40, bits=16, sample_format=3), "fail")
    add(out_dir, "tiff_signed32.tif", tiff_bytes(16, 40, [bytes(16 * 40 * 4)], 40, bits=32, sample_format=2), "fail")
    # 3 bytes short of its last row: libtiff reads that row's scanline through the bytes
    # that follow in the file (the directory), so the samples are file bytes, never
    # uninitialised ones (valgrind replays it); refusing it is libtiff's to decide
    add(out_dir, "tiff_float_short_strip.tif", tiff_bytes(16, 40, [bytes(16 * 40 * 4 - 3)], 40, bits=32,
                                                          sample_format=3), "either", flags="tif")
    add(out_dir, "tiff_4bit.tif", tiff_bytes(64, 40, [bytes(32 * 40)], 40, bits=4), "ok")  # 4-bit gray is read
    add(out_dir, "tiff_cmyk.tif", tiff_bytes(16, 40, [bytes(16 * 40 * 4)], 40, spp=4, photometric=5), "ok")  # CMYK is read
    add(out_dir, "tiff_bad_compression.tif", tiff_bytes(64, 40, [b"".join(rows)], 40, compression=12345), "fail")
    add(out_dir, "tiff_deflate_garbage.tif", tiff_bytes(64, 40, [bytes(range(256)) * 4], 40, compression=8), "fail")
    # A directory that links to itself: the page count must not loop.
    looped = bytearray(good)
    ifd_at = struct.unpack("<I", good[4:8])[0]
    looped[ifd_at + 2 + 12 * 11: ifd_at + 2 + 12 * 11 + 4] = struct.pack("<I", ifd_at)
    add(out_dir, "tiff_ifd_loop.tif", bytes(looped), "either")
    add(out_dir, "tiff_ifd_past_end.tif", b"II*\0" + struct.pack("<I", 1 << 30) + bytes(64), "fail")
    add(out_dir, "tiff_header_only.tif", b"II*\0", "fail")
    add(out_dir, "tiff_bigtiff_header_only.tif", b"II+\0\x08\0\0\0", "fail")
    # The bomb: 50000 x 50000 gray in one deflate strip of 2000 rows of zeros (~100 MB
    # from ~100 kB), admitted by --max-pixels; then the data ends and it must fail.
    bomb = zlib.compress(bytes(BOMB_SIDE * BOMB_ROWS), 9)
    add(out_dir, "tiff_bomb_admitted.tif", tiff_bytes(BOMB_SIDE, BOMB_SIDE, [bomb], BOMB_SIDE, compression=8),
        "fail", "--max-pixels " + BOMB_MAX_PIXELS)


FITS_BLOCK = 2880


def fits_header(cards):
    """A FITS header from "KEY = value" strings: 80-column cards, END, blank to a block."""
    text = b"".join(c.encode().ljust(80) for c in cards + ["END"])
    return text + b" " * (-len(text) % FITS_BLOCK)


def fits_lies(out_dir):
    """Hand-made FITS headers that lie or break the standard; every one must be refused.
    Also float32 samples cut short (a float32 image is no valid_ base: its smoothing is
    the pipeline's, and a PNG output cannot hold it)."""
    def image(bitpix, width, height, extra=()):
        return ["SIMPLE  =                    T", "BITPIX  = %20d" % bitpix, "NAXIS   =                    2",
                "NAXIS1  = %20d" % width, "NAXIS2  = %20d" % height] + list(extra)
    data = bytes(FITS_BLOCK)
    add(out_dir, "valid_handmade.fits", fits_header(image(8, 72, 40)) + data, "ok")
    add(out_dir, "fits_huge_header.fits", fits_header(image(8, 50000, 50000)) + data, "fail")
    add(out_dir, "fits_huge_width.fits", fits_header(image(16, 4294967295, 1)) + data, "fail")
    add(out_dir, "fits_wider_than_32_bits.fits", fits_header(image(8, 1 << 33, 1)) + data, "fail")
    # Admitted by --max-pixels: the data are missing, which must be found before reading.
    add(out_dir, "fits_huge_admitted.fits", fits_header(image(-64, 50000, 50000)) + data, "fail",
        "--max-pixels " + BOMB_MAX_PIXELS)
    add(out_dir, "fits_bad_bitpix.fits", fits_header(image(12, 72, 40)) + data, "fail")
    add(out_dir, "fits_negative_naxis1.fits", fits_header(image(8, -72, 40)) + data, "fail")
    add(out_dir, "fits_naxis_1000.fits", fits_header(["SIMPLE  =                    T", "BITPIX  =                    8",
                                                       "NAXIS   =                 1000"]) + data, "fail")
    no_end = b"".join(c.encode().ljust(80) for c in image(8, 72, 40))
    add(out_dir, "fits_missing_end.fits", no_end + b" " * (FITS_BLOCK - len(no_end)) + data, "fail")
    add(out_dir, "fits_no_end_at_all.fits", no_end, "fail")
    add(out_dir, "fits_simple_only.fits", b"SIMPLE  =                    T", "fail")
    add(out_dir, "fits_header_only.fits", fits_header(image(8, 72, 40)), "fail")
    # Every sample present, the data unit's last block cut short (FITS files are whole blocks).
    add(out_dir, "fits_last_block_short.fits", fits_header(image(8, 70, 40)) + bytes(70 * 40), "fail")
    add(out_dir, "fits_half_data.fits", fits_header(image(16, 72, 40)) + data, "fail")
    add(out_dir, "fits_bitpix_missing.fits", fits_header(["SIMPLE  =                    T", "NAXIS   =                    2",
                                                           "NAXIS1  =                   72", "NAXIS2  =                   40"]) + data, "fail")
    add(out_dir, "fits_cube.fits", fits_header(["SIMPLE  =                    T", "BITPIX  =                    8",
                                                 "NAXIS   =                    3", "NAXIS1  =                    8",
                                                 "NAXIS2  =                    8", "NAXIS3  =                   45"]) + data, "fail")
    # An extension that claims more data than the file holds, after an empty primary HDU.
    ext = fits_header(["XTENSION= 'IMAGE   '", "BITPIX  =                   16", "NAXIS   =                    2",
                       "NAXIS1  =                 1000", "NAXIS2  =                 1000", "PCOUNT  =                    0",
                       "GCOUNT  =                    1"])
    primary = fits_header(["SIMPLE  =                    T", "BITPIX  =                    8", "NAXIS   =                    0",
                           "EXTEND  =                    T"])
    add(out_dir, "fits_extension_past_end.fits", primary + ext + data, "fail")
    add(out_dir, "fits_no_image.fits", primary, "fail")
    try:
        import io
        from astropy.io import fits
        buf = io.BytesIO()
        rng = random.Random(SEED)
        fits.PrimaryHDU(np.frombuffer(rng.randbytes(16 * 45 * 4), dtype=">f4").reshape(45, 16)).writeto(buf)
        truncations(out_dir, "float.fits", buf.getvalue())
    except ImportError:
        pass
    add(out_dir, "fits_garbage_after_simple.fits", b"SIMPLE  = " + bytes(range(256)) * 20, "fail")
def npy_bytes(array, version=(1, 0)):
    import io
    import warnings
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's remark on versions 2.0 and 3.0
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def npy_header(d, version=1, length=None):
    """A .npy preamble and header around the dict text `d`, padded as numpy pads it;
    `length` overrides the header length field (a lie)."""
    pre = 10 if version == 1 else 12
    total = (pre + len(d) + 1 + 63) // 64 * 64
    text = d.encode() + b" " * (total - pre - len(d) - 1) + b"\n"
    n = len(text) if length is None else length
    field = struct.pack("<H", n) if version == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes([version, 0]) + field + text


def npy_lies(out_dir):
    """.npy headers that lie or refuse, beside the truncated and flipped files: each one
    error line (the samples have no checksum, so the header is all a reader can judge)."""
    good = "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 5), }"
    body = bytes(6 * 5 * 4)
    add(out_dir, "npy_header_length_past_end.npy", npy_header(good, length=60000)[:200], "fail")
    add(out_dir, "npy_header_length_huge_v2.npy", npy_header(good, 2, length=0xFFFFFFF0) + body, "fail")
    add(out_dir, "npy_no_shape.npy", npy_header("{'descr': '<u2', 'fortran_order': False, }") + body, "fail")
    add(out_dir, "npy_shape_negative.npy", npy_header(good.replace("(6, 5)", "(6, -5)")) + body, "fail")
    add(out_dir, "npy_shape_huge.npy", npy_header(good.replace("(6, 5)", "(4000000000, 4000000000)")) + body, "fail")
    add(out_dir, "npy_shape_past_2_64.npy", npy_header(good.replace("(6, 5)", "(6, 123456789012345678901)")) + body,
        "fail")
    add(out_dir, "npy_shape_over_limit.npy", npy_header(good.replace("(6, 5)", "(50000, 50000)")) + body, "fail")
    add(out_dir, "npy_version_9.npy", b"\x93NUMPY\x09\x00" + npy_header(good)[8:] + body, "fail")
    add(out_dir, "npy_version_1_5.npy", b"\x93NUMPY\x01\x05" + npy_header(good)[8:] + body, "fail")
    add(out_dir, "npy_magic_only.npy", b"\x93NUMPY", "fail")
    add(out_dir, "npy_header_not_dict.npy", npy_header("[1, 2, 3]") + body, "fail")
    add(out_dir, "npy_header_unclosed.npy", npy_header(good[:-3]) + body, "fail")
    add(out_dir, "npy_1d.npy", npy_bytes(np.zeros(30, np.uint8)), "fail")
    add(out_dir, "npy_3d.npy", npy_bytes(np.zeros((4, 5, 3), np.uint8)), "fail")
    add(out_dir, "npy_int32.npy", npy_bytes(np.zeros((4, 5), np.int32)), "fail")
    add(out_dir, "npy_fortran.npy", npy_bytes(np.asfortranarray(np.zeros((4, 5), np.uint16))), "fail")
    # uint16, so that the command line reads the rows (float32 samples depend on the backend)
    add(out_dir, "npy_data_short.npy", npy_header(good.replace("<f4", "<u2")) + body[:6 * 5 * 2 - 1], "fail")
    add(out_dir, "valid_npy_v3_u8.npy", npy_bytes(np.arange(60, dtype=np.uint8).reshape(6, 10), (3, 0)), "ok")


def float_tiff_truncations(out_dir):
    """A float32 TIFF of tifffile's (its directory before the samples) cut every tenth:
    each cut is an error, never a short image."""
    try:
        import io
        import tifffile
    except ImportError:
        return
    buf = io.BytesIO()
    values = np.linspace(-1e6, 1e6, 40 * 64, dtype=np.float32).reshape(40, 64)
    tifffile.imwrite(buf, values, rowsperstrip=7)
    data = buf.getvalue()
    for k in range(1, 10):
        cut = len(data) * k // 10
        add(out_dir, "trunc_float32_%06d.tif" % cut, data[:cut], "fail", flags="tif")


def png_chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_ihdr(width, height, bits=8, colour=0, compression=0, filt=0, interlace=0):
    return png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bits, colour,
                                          compression, filt, interlace))


def add(out_dir, name, data, expect, args="", flags="-"):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)
    cases.append((name, expect, flags, args))


def noise(rng, h, w, channels=1):
    shape = (h, w) if channels == 1 else (h, w, channels)
    return np.frombuffer(rng.randbytes(h * w * channels), dtype=np.uint8).reshape(shape)


def pil_bytes(array, fmt, **kw):
    import io
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format=fmt, **kw)
    return buf.getvalue()


PSD_MODE_GRAY = 1  # stb_image reads only RGB-mode PSD; gray must be refused cleanly
PSD_MODE_RGB = 3


def psd(pixels, mode):
    """A minimal raw (uncompressed, planar) 8-bit PSD; PIL cannot write PSD."""
    h, w = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    planes = pixels.reshape(h, w, channels).transpose(2, 0, 1)
    header = b"8BPS" + struct.pack(">H6xHIIHH", 1, channels, h, w, 8, mode)
    return header + struct.pack(">III", 0, 0, 0) + struct.pack(">H", 0) + planes.tobytes()


def hdr_rgbe(pixels):
    """A flat (not run-length) Radiance HDR; stb reads rows narrower than 8 flat."""
    h, w = pixels.shape[:2]
    head = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %d +X %d\n" % (h, w)
    rgbe = np.zeros((h, w, 4), dtype=np.uint8)
    rgbe[..., :3] = pixels
    rgbe[..., 3] = 128  # exponent: values in [0, 1)
    return head + rgbe.tobytes()


def bases(rng):
    """(name, bytes, checksummed): small valid files of every input format."""
    gray = noise(rng, 40, 64)
    rgb = noise(rng, 24, 32, 3)
    out = [
        ("gray.png", pngwrite.encode(gray, kind="gray"), True),
        ("rgb.png", pngwrite.encode(rgb, kind="rgb"), True),
        ("gray16.png", pngwrite.encode(gray.astype(np.uint16) * 257, kind="gray", bits=16), True),
        ("interlaced.png", pngwrite.encode(gray, kind="gray", interlace=True), True),
        ("palette.png", open(os.path.join(GOLDEN_INPUTS, "palette.png"), "rb").read(), True),
        ("gray.jpg", pil_bytes(gray, "JPEG", quality=90), False),
        ("rgb.jpg", pil_bytes(rgb, "JPEG", quality=90), False),
        ("gray.bmp", pil_bytes(gray, "BMP"), False),
        ("rgb.bmp", pil_bytes(rgb, "BMP"), False),
        ("gray.pgm", pil_bytes(gray, "PPM"), False),
        ("rgb.ppm", pil_bytes(rgb, "PPM"), False),
        ("gray.gif", pil_bytes(gray, "GIF"), False),
        ("gray.tga", pil_bytes(gray, "TGA"), False),
        ("rgb.webp", pil_bytes(rgb, "WEBP", quality=80), False),
        ("rgb_lossless.webp", pil_bytes(rgb, "WEBP", lossless=True), False),
        ("rgb.psd", psd(rgb, PSD_MODE_RGB), False),
        ("rgb.hdr", hdr_rgbe(noise(rng, 6, 7, 3)), False),
        ("gray.npy", npy_bytes(gray), False),
        ("gray16.npy", npy_bytes(gray.astype(">u2") * 257), False),
    ]
    try:  # python3-tifffile, an independent writer: strips, tiles, deflate, BigTIFF
        import io
        import tifffile

        def tif(array, **kw):
            buf = io.BytesIO()
            tifffile.imwrite(buf, array, **kw)
            return buf.getvalue()
        out += [
            ("gray.tif", tif(gray, rowsperstrip=8), False),
            ("gray_deflate.tif", tif(gray, compression="zlib", predictor=True, rowsperstrip=16), False),
            ("rgb_tiles.tif", tif(noise(rng, 40, 70, 3), photometric="rgb", tile=(16, 32)), False),
            ("gray16_bigtiff.tif", tif(gray.astype(np.uint16) * 257, bigtiff=True, tile=(32, 32)), False),
        ]
    except ImportError:
        pass
    try:  # python3-astropy, an independent FITS writer; sizes whose data fill whole blocks,
        # so every cut of these files loses samples
        import io
        from astropy.io import fits

        def fit(array, extension=False):
            buf = io.BytesIO()
            hdus = [fits.PrimaryHDU(), fits.ImageHDU(array)] if extension else [fits.PrimaryHDU(array)]
            fits.HDUList(hdus).writeto(buf)
            return buf.getvalue()
        out += [
            ("gray.fits", fit(noise(rng, 40, 72)), False),
            ("gray16_extension.fits", fit(noise(rng, 30, 48).astype(np.uint16) * 257, extension=True), False),
        ]
    except ImportError:
        pass
    return out


TRUNCATED_FORMATS = (".png", ".jpg", ".bmp", ".pgm", ".ppm", ".gif", ".tga", ".psd", ".hdr", ".tif",
                     ".webp", ".fits")

# Bytes at the end of a file that no decoder needs for the first image: PNG's IEND chunk
# (12 bytes), GIF's trailer byte and the image data's terminator before it (PIL reads a GIF
# without both), the TGA 2.0 footer PIL writes (26 bytes). A cut inside them leaves a
# complete image, so either outcome is right there.
TAIL_NOT_NEEDED = {".png": 12, ".gif": 2, ".tga": 26}


def truncations(out_dir, name, data):
    """Every truncated file is a bad input: the image's data ends before the image does."""
    stem, ext = os.path.splitext(name)
    cuts = sorted({len(data) * k // TRUNCATION_STEPS for k in range(1, TRUNCATION_STEPS)} |
                  {1, len(data) - 1})
    for cut in cuts:
        e = "either" if cut >= len(data) - TAIL_NOT_NEEDED.get(ext, 0) else "fail"
        add(out_dir, "trunc_%s_%06d%s" % (stem, cut, ext), data[:cut], e)


def flips(out_dir, name, data, rng, checksummed):
    stem, ext = os.path.splitext(name)
    for i in range(FLIPS_PER_FILE):
        pos = rng.randrange(len(data))
        mutated = bytearray(data)
        mutated[pos] ^= 1 << rng.randrange(8)
        # A PNG flip anywhere after the signature breaks a chunk's CRC or its length; a
        # flip in the signature makes it no PNG at all (stb then refuses it too).
        e = "fail" if checksummed else "either"
        add(out_dir, "flip_%s_%02d_at%06d%s" % (stem, i, pos, ext), bytes(mutated), e)


def png_header_lies(out_dir, gray_png):
    idat_etc = gray_png[IHDR_CRC_AT + 4:]
    lies = [
        ("ihdr_zero_width", dict(width=0, height=40)),
        ("ihdr_zero_height", dict(width=64, height=0)),
        ("ihdr_width_2p31", dict(width=1 << 31, height=40)),
        ("ihdr_height_2p31", dict(width=64, height=1 << 31)),
        ("ihdr_bit_depth_3", dict(width=64, height=40, bits=3)),
        ("ihdr_bit_depth_32", dict(width=64, height=40, bits=32)),
        ("ihdr_colour_type_1", dict(width=64, height=40, colour=1)),
        ("ihdr_colour_type_7", dict(width=64, height=40, colour=7)),
        ("ihdr_palette_16bit", dict(width=64, height=40, bits=16, colour=3)),
        ("ihdr_rgb_4bit", dict(width=64, height=40, bits=4, colour=2)),
        ("ihdr_compression_1", dict(width=64, height=40, compression=1)),
        ("ihdr_filter_1", dict(width=64, height=40, filt=1)),
        ("ihdr_interlace_2", dict(width=64, height=40, interlace=2)),
        ("ihdr_wider_than_data", dict(width=640, height=40)),
        ("ihdr_taller_than_data", dict(width=64, height=4000)),
    ]
    for name, kw in lies:
        add(out_dir, name + ".png", PNG_SIG + png_ihdr(**kw) + idat_etc, "fail")
    # A palette image without PLTE, and a bad CRC on IHDR and on IDAT.
    add(out_dir, "palette_without_plte.png",
        PNG_SIG + png_ihdr(64, 40, 8, 3) + idat_etc, "fail")
    bad = bytearray(gray_png)
    bad[IHDR_CRC_AT] ^= 0xFF
    add(out_dir, "bad_crc_ihdr.png", bytes(bad), "fail")
    idat_at = gray_png.index(b"IDAT")
    idat_len = struct.unpack(">I", gray_png[idat_at - 4:idat_at])[0]
    bad = bytearray(gray_png)
    bad[idat_at + 4 + idat_len] ^= 0xFF
    add(out_dir, "bad_crc_idat.png", bytes(bad), "fail")
    # No IDAT at all; IDAT holding something that is not zlib.
    add(out_dir, "no_idat.png", PNG_SIG + png_ihdr(64, 40) + png_chunk(b"IEND", b""), "fail")
    add(out_dir, "idat_not_zlib.png", PNG_SIG + png_ihdr(64, 40) +
        png_chunk(b"IDAT", b"this is not a zlib stream" * 20) + png_chunk(b"IEND", b""), "fail")
    # A valid zlib stream with bad filter-type bytes (5 is undefined).
    rows = b"".join(b"\x05" + bytes(64) for _ in range(40))
    add(out_dir, "bad_filter_type.png", PNG_SIG + png_ihdr(64, 40) +
        png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""), "fail")
    # Ancillary chunks whose length claims 2 GB, in front of the image data: memory must
    # not follow the claim (the file is 60 bytes).
    for tag in (b"tEXt", b"zTXt", b"iTXt", b"iCCP", b"sPLT", b"eXIf", b"prVt"):
        add(out_dir, "huge_%s_chunk.png" % tag.decode(), PNG_SIG + png_ihdr(64, 40) +
            struct.pack(">I", 0x7FFFFFF0) + tag + b"key\0value", "fail")


def png_stream_trailers(out_dir):
    """The zlib stream's end, where libpng's verdict turns on which IDAT holds it: a stream
    error zlib meets while inflating the last row fails, one met afterwards (reading on to
    the stream's end) is only a warning. The fast reader must give the same verdicts."""
    width, height = 64, 40
    rows = b"".join(b"\x00" + bytes((x * 3 + y * 5) & 0xFF for x in range(width))
                    for y in range(height))
    whole = zlib.compress(rows, 6)
    body, adler = whole[:-4], whole[-4:]
    bad_adler = bytes(b ^ 0xFF for b in adler)
    head = PNG_SIG + png_ihdr(width, height)
    iend = png_chunk(b"IEND", b"")
    cases_here = [
        ("trailer_ok.png", [whole], "ok"),
        # the Adler-32 in the IDAT of the last row: zlib reports it with that row
        ("trailer_bad_adler.png", [body + bad_adler], "fail"),
        # the same bad Adler-32 alone in a second IDAT: read after the rows, a warning
        ("trailer_bad_adler_split.png", [body, bad_adler], "ok"),
        # the IDAT chunks end where the Adler-32 should start
        ("trailer_no_adler.png", [body], "fail"),
        # bytes after the stream's end, in its IDAT and in an IDAT of their own
        ("trailer_extra_data.png", [whole + b"junk after the stream"], "ok"),
        ("trailer_extra_idat.png", [whole, b"junk after the stream"], "ok"),
    ]
    flushed = zlib.compressobj(6)
    cut = flushed.compress(rows) + flushed.flush(zlib.Z_SYNC_FLUSH)
    # every row is there, but the stream never ends (no final block, no Adler-32)
    cases_here.append(("trailer_stream_cut_after_rows.png", [cut], "fail"))
    for name, idats, expect in cases_here:
        add(out_dir, name, head + b"".join(png_chunk(b"IDAT", d) for d in idats) + iend, expect)


def bombs(out_dir):
    zeros = zlib.compressobj(9)
    row = bytes(BOMB_SIDE + 1)  # filter byte 0, then zero samples
    body = b"".join(zeros.compress(row) for _ in range(BOMB_ROWS)) + zeros.flush()
    bomb = PNG_SIG + png_ihdr(BOMB_SIDE, BOMB_SIDE) + png_chunk(b"IDAT", body) + \
        png_chunk(b"IEND", b"")
    # Refused by the default --max-pixels before anything is allocated.
    add(out_dir, "bomb_50000x50000.png", bomb, "fail")
    # Admitted: gsmooth streams it in strips until the data ends, in bounded memory.
    add(out_dir, "bomb_50000x50000_admitted.png", bomb, "fail",
        "--max-pixels " + BOMB_MAX_PIXELS)
    # Interlaced images are decoded whole: under the address-space limit that allocation
    # must fail cleanly ("out of memory"), not kill the process.
    ibomb = PNG_SIG + png_ihdr(BOMB_SIDE, BOMB_SIDE, interlace=1) + \
        png_chunk(b"IDAT", body) + png_chunk(b"IEND", b"")
    add(out_dir, "bomb_interlaced_admitted.png", ibomb, "fail",
        "--max-pixels " + BOMB_MAX_PIXELS, "rlimit")
    # One row of 2^31 - 1 pixels: a strip buffer of 2 GB cannot be had under the limit.
    wide = PNG_SIG + png_ihdr(PNG_DIMENSION_MAX, 1) + png_chunk(b"IDAT", body) + \
        png_chunk(b"IEND", b"")
    add(out_dir, "bomb_wide_row_admitted.png", wide, "fail",
        "--max-pixels " + WIDE_ROW_MAX_PIXELS, "rlimit")
    # stb formats and Netpbm claiming huge sizes, with almost no data.
    add(out_dir, "huge_header.pgm", b"P5\n50000 50000\n255\n" + bytes(100), "fail")
    add(out_dir, "huge_admitted.pgm", b"P5\n50000 50000\n255\n" + bytes(100), "fail",
        "--max-pixels " + BOMB_MAX_PIXELS)
    add(out_dir, "huge_width.pgm", b"P5\n4294967295 1\n255\n" + bytes(100), "fail")
    add(out_dir, "huge_header.bmp", b"BM" + struct.pack("<IHHI", 0, 0, 0, 54) +
        struct.pack("<IiiHHIIiiII", 40, 50000, 50000, 1, 8, 0, 0, 0, 0, 0, 0), "fail")
    add(out_dir, "huge_header.gif", b"GIF89a" + struct.pack("<HH", 50000, 50000) +
        b"\x00\x00\x00" + b"," + struct.pack("<HHHH", 0, 0, 50000, 50000) + b"\x00\x08", "fail")
    add(out_dir, "huge_header.psd", b"8BPS" + struct.pack(">H6xHIIHH", 1, 1, 50000, 50000, 8, 1),
        "fail")
    add(out_dir, "huge_header.hdr", b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 50000 +X 50000\n",
        "fail")


def netpbm_lies(out_dir):
    lies = [
        ("pgm_zero_width", b"P5\n0 10\n255\n" + bytes(10)),
        ("pgm_maxval_zero", b"P5\n4 4\n0\n" + bytes(16)),
        ("pgm_maxval_70000", b"P5\n4 4\n70000\n" + bytes(32)),
        ("pgm_no_space_after_maxval", b"P5\n4 4\n255" + bytes(16)),
        ("pgm_negative", b"P5\n-4 4\n255\n" + bytes(16)),
        ("pgm_header_only", b"P5\n4 4\n255\n"),
        ("pgm_comment_forever", b"P5\n# " + b"x" * 4000),
        ("pgm_plain_short", b"P2\n2 2\n255\n0 1 2\n"),
        ("pgm_plain_letter", b"P2\n2 2\n255\n0 1 x 3\n"),
        ("pgm_plain_sign", b"P2\n2 1\n255\n0 -1\n"),
        ("pbm_plain_digit_2", b"P1\n2 1\n0 2\n"),
        ("pbm_p4_short", b"P4\n8 2\n\xff"),
        ("pam_p7", b"P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\x00\x01"),
        ("pgm_digits_overflow", b"P5\n99999999999999999999 1\n255\n"),
    ]
    for name, data in lies:
        add(out_dir, name + ".pgm", data, "fail")


def splices(out_dir, files):
    pairs = [("gray.png", "gray.jpg"), ("gray.jpg", "gray.png"), ("gray.png", "rgb.png"),
             ("gray.bmp", "gray.gif"), ("gray.gif", "gray.png"), ("gray.pgm", "gray.bmp")]
    for a, b in pairs:
        da, db = files[a], files[b]
        data = da[: len(da) // 2] + db[len(db) // 2:]
        ea = os.path.splitext(a)[1]
        # Only PNG's CRCs prove a splice wrong; elsewhere the bytes may still be an image.
        e = "fail" if ea == ".png" else "either"
        add(out_dir, "splice_%s_%s%s" % (a.replace(".", "_"), b.replace(".", "_"), ea), data, e)


def misnamed(out_dir, files):
    # Format comes from the content, never the name: these are valid images.
    add(out_dir, "jpeg_named.png", files["gray.jpg"], "ok")
    add(out_dir, "png_named.jpg", files["gray.png"], "ok")
    add(out_dir, "bmp_named.pgm", files["gray.bmp"], "ok")
    # And a damaged file under a misleading name is still refused by its real format.
    add(out_dir, "png_truncated_named.jpg", files["gray.png"][: len(files["gray.png"]) // 2],
        "fail")


def odd_files(out_dir):
    add(out_dir, "empty.png", b"", "fail")
    add(out_dir, "one_byte.png", b"\x89", "fail")
    add(out_dir, "signature_only.png", PNG_SIG, "fail")
    add(out_dir, "text.png", b"hello, this is not an image\n", "fail")
    add(out_dir, "zeros.bin", bytes(4096), "fail")
    add(out_dir, "jpeg_soi_only.jpg", b"\xff\xd8\xff", "fail")
    add(out_dir, "bmp_magic_only.bmp", b"BM", "fail")
    add(out_dir, "gif_magic_only.gif", b"GIF89a", "fail")
    # A PSD in a colour mode stb_image does not read: refused with a reason, not crashed.
    add(out_dir, "gray_mode.psd", psd(np.zeros((4, 4), dtype=np.uint8), PSD_MODE_GRAY), "fail")
    add(out_dir, "jpeg_scan_flood.jpg", scan_flood(), "fail")


def scan_flood():
    """A progressive JPEG whose last scan repeats 2000 times: a decoder that does not limit
    scans spends time and memory on each (libjpeg-turbo's djpeg has -maxscans for it)."""
    data = pil_bytes(np.arange(64 * 64, dtype=np.uint8).reshape(64, 64), "JPEG", quality=80,
                     progressive=True)
    last_sos = data.rfind(b"\xff\xda")
    scan = data[last_sos:-2]  # the last SOS with its entropy data, before EOI
    return data[:-2] + scan * 2000 + b"\xff\xd9"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_damaged.py OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        os.unlink(os.path.join(out_dir, old))
    rng = random.Random(SEED)
    base = bases(rng)
    files = {name: data for name, data, _ in base}
    for name, data, checksummed in base:
        add(out_dir, "valid_" + name, data, "ok")
        if os.path.splitext(name)[1] in TRUNCATED_FORMATS:
            truncations(out_dir, name, data)
        flips(out_dir, name, data, rng, checksummed)
    png_header_lies(out_dir, files["gray.png"])
    png_stream_trailers(out_dir)
    tiff_lies(out_dir)
    tiff_review_cases(out_dir)
    fits_lies(out_dir)
    npy_lies(out_dir)
    float_tiff_truncations(out_dir)
    bombs(out_dir)
    netpbm_lies(out_dir)
    splices(out_dir, files)
    misnamed(out_dir, files)
    odd_files(out_dir)
    with open(os.path.join(out_dir, "MANIFEST"), "w") as f:
        f.write("# name\texpect\tflags\textra gsmooth arguments (written by make_damaged.py)\n")
        for name, expect, flags, args in cases:
            f.write("%s\t%s\t%s\t%s\n" % (name, expect, flags, args))
    print("make_damaged.py: %d cases in %s" % (len(cases), out_dir))


if __name__ == "__main__":
    main()
