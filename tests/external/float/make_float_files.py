#!/usr/bin/python3
"""make_float_files.py: writes the float TIFF and .npy test files of this folder and their expected arrays.

Run once by hand (the files are committed): `/usr/bin/python3 make_float_files.py [DIR]`.
Files named `*.tif` and `*.npy` are inputs; `expect_<input name>.npy` holds the samples
gsmooth must deliver for it (float32, uint8 or uint16, little-endian, format 1.0); inputs
gsmooth must refuse are listed in REFUSED with a word of the refusal. MANIFEST lists every
input, its expectation (ok or refuse), and the note or the refusal's words.

Writers: tifffile (strips, tiles, both byte orders, float32, float64, int16, no predictor),
floatpred.py (the floating-point predictor with deflate and LZW, which tifffile writes only
with imagecodecs), numpy (every .npy: numpy.lib.format.write_array for each format version;
the '<u1' header, which numpy never writes, by editing a '|u1' one).
"""
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import floatpred  # noqa: E402

SEED = 20261202
NOTE_F64 = "float64 samples rounded to float32"
NOTE_I16 = "signed 16-bit samples read as float32"
# Files of the external corpora gsmooth reads as float32, with the reader's note.
CORPUS_FLOAT = [("pillow/10ct_32bit_128.tiff", "-"), ("pillow/16bit.s.tif", NOTE_I16),
                ("libtiff/test_float64_predictor2_le_lzw.tif", NOTE_F64),
                ("libtiff/test_float64_predictor2_be_lzw.tif", NOTE_F64)]


def float32_values(rng, h, w):
    """Random normal values over many magnitudes, and every special: quiet and signalling
    NaNs with payloads, infinities, signed zeros, subnormals, the extremes."""
    mag = rng.uniform(-40, 38, (h, w))
    a = (rng.standard_normal((h, w)) * 10.0 ** mag).astype(np.float32)
    bits = np.array([0x7FC00000, 0xFFC00001, 0x7FC12345, 0x7F800001, 0x7FA00000,  # NaNs
                     0x7F800000, 0xFF800000, 0x00000000, 0x80000000,  # +-Inf, +-0
                     0x00000001, 0x80000001, 0x007FFFFF, 0x00400000,  # subnormals
                     0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000,  # huge, tiny
                     0x3F800000, 0xBF800000], dtype=np.uint32)
    flat = a.reshape(-1).view(np.uint32)
    where = rng.choice(flat.size, size=min(flat.size, 3 * bits.size), replace=False)
    flat[where] = np.resize(bits, where.size)
    return a


def float64_values(rng, h, w):
    """Doubles that round: ties, values past float32's range (to infinity), under its
    smallest subnormal (to zero), NaNs with payloads, and float32's specials widened."""
    a = float32_values(rng, h, w).astype(np.float64)
    # Bits float32 cannot hold, on the finite values only: arithmetic on a NaN may give
    # either operand's sign (numpy's loops differ with alignment), the files must not.
    wiggle = rng.standard_normal((h, w)) * 1e-9
    finite = np.isfinite(a)
    a[finite] += wiggle[finite] * np.abs(a[finite])
    special = np.array([1e300, -1e300, 1e-300, -1e-300, 1.0 / 3.0, 3.4028235677973366e38,
                        1.0000000596046448, 1.0000001788139343,  # ties: to even down, up
                        float.fromhex("0x1.fffffffp127")], dtype=np.float64)
    nan_bits = np.array([0x7FF8000000000001, 0xFFF8DEADBEEF0000, 0x7FF4000000000000], dtype=np.uint64)
    flat = a.reshape(-1)
    where = rng.choice(flat.size, size=special.size + nan_bits.size, replace=False)
    flat[where[: special.size]] = special
    flat.view(np.uint64)[where[special.size:]] = nan_bits
    return a


def int16_values(rng, h, w):
    a = rng.integers(-32768, 32768, (h, w), dtype=np.int16)
    a.reshape(-1)[:4] = [-32768, 32767, 0, -1]
    return a


def save_npy(path, array, version=(1, 0)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns that 2.0/3.0 are for large headers
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)


def expect_of(array):
    """What gsmooth delivers: float32 for any float or int16 input, the unsigned ones as they are."""
    if array.dtype.kind in "fi":
        with np.errstate(all="ignore"):
            return array.astype(np.float32)
    return array.astype(array.dtype.newbyteorder("<"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    rng = np.random.default_rng(SEED)
    manifest = []

    def ok(name, source, note="-"):
        save_npy(os.path.join(out, "expect_" + name + ".npy"), expect_of(source))
        manifest.append((name, "ok", note))

    def refuse(name, words):
        manifest.append((name, "refuse", words))

    def tif(name, array, **kw):
        tifffile.imwrite(os.path.join(out, name), array, **kw)

    # TIFF, tifffile: float32 strips of odd heights, tiles, both byte orders, deflate without
    # a predictor, BigTIFF; float64; int16.
    f32 = float32_values(rng, 23, 37)
    tif("f32_strips5.tif", f32, rowsperstrip=5)
    ok("f32_strips5.tif", f32)
    tif("f32_be_strips3.tif", f32, rowsperstrip=3, byteorder=">")
    ok("f32_be_strips3.tif", f32)
    f32t = float32_values(rng, 40, 50)
    tif("f32_tiles_deflate.tif", f32t, tile=(16, 16), compression="zlib")
    ok("f32_tiles_deflate.tif", f32t)
    tif("f32_be_tiles.tif", f32t, tile=(32, 16), byteorder=">")
    ok("f32_be_tiles.tif", f32t)
    tif("f32_bigtiff.tif", f32, bigtiff=True, rowsperstrip=7)
    ok("f32_bigtiff.tif", f32)
    one = float32_values(rng, 1, 1)
    tif("f32_1x1.tif", one)
    ok("f32_1x1.tif", one)
    f64 = float64_values(rng, 21, 19)
    tif("f64_strips7.tif", f64, rowsperstrip=7)
    ok("f64_strips7.tif", f64, NOTE_F64)
    tif("f64_be_deflate.tif", f64, rowsperstrip=4, byteorder=">", compression="zlib")
    ok("f64_be_deflate.tif", f64, NOTE_F64)
    i16 = int16_values(rng, 17, 29)
    tif("i16_strips3.tif", i16, rowsperstrip=3)
    ok("i16_strips3.tif", i16, NOTE_I16)
    tif("i16_be_deflate.tif", i16, byteorder=">", compression="zlib", predictor=True)
    ok("i16_be_deflate.tif", i16, NOTE_I16)

    # TIFF, floatpred.py: the floating-point predictor with deflate and LZW, strips and tiles.
    f32p = float32_values(rng, 33, 45)
    for name, kw in [("f32_deflate_pred3.tif", dict(compression="deflate", rows_per_strip=5)),
                     ("f32_lzw_pred3.tif", dict(compression="lzw", rows_per_strip=6)),
                     ("f32_be_deflate_pred3.tif", dict(compression="deflate", rows_per_strip=9, big_endian=True)),
                     ("f32_be_lzw_pred3.tif", dict(compression="lzw", rows_per_strip=33, big_endian=True)),
                     ("f32_tiles_deflate_pred3.tif", dict(compression="deflate", tile=(16, 32))),
                     ("f32_lzw_nopred.tif", dict(compression="lzw", predictor=1, rows_per_strip=11))]:
        floatpred.write_tiff(os.path.join(out, name), f32p, **kw)
        ok(name, f32p)
    f64p = float64_values(rng, 14, 27)
    floatpred.write_tiff(os.path.join(out, "f64_deflate_pred3.tif"), f64p, compression="deflate", rows_per_strip=5)
    ok("f64_deflate_pred3.tif", f64p, NOTE_F64)
    floatpred.write_tiff(os.path.join(out, "f64_be_lzw_pred3.tif"), f64p, compression="lzw", rows_per_strip=3,
                         big_endian=True)
    ok("f64_be_lzw_pred3.tif", f64p, NOTE_F64)

    # TIFF refused: half floats, 32-bit signed, float RGB, float gray with alpha.
    g = np.zeros((6, 8), np.float32)
    tif("refuse_f16.tif", g.astype(np.float16))
    refuse("refuse_f16.tif", "16-bit floating-point")
    tif("refuse_i32.tif", g.astype(np.int32))
    refuse("refuse_i32.tif", "32-bit signed integer")
    tif("refuse_f32_rgb.tif", np.zeros((6, 8, 3), np.float32), photometric="rgb")
    refuse("refuse_f32_rgb.tif", "convert it to gray first")
    tif("refuse_f32_gray_alpha.tif", np.zeros((6, 8, 2), np.float32), photometric="minisblack",
        extrasamples=[2])
    refuse("refuse_f32_gray_alpha.tif", "convert it to gray first")

    # .npy, numpy: every accepted dtype, each format version, a trailing axis of 1.
    u8 = rng.integers(0, 256, (19, 31), dtype=np.uint8)
    u16 = rng.integers(0, 65536, (13, 27), dtype=np.uint16)
    n32 = float32_values(rng, 25, 33)
    n64 = float64_values(rng, 11, 23)
    for version in ((1, 0), (2, 0), (3, 0)):
        v = "v%d" % version[0]
        save_npy(os.path.join(out, "u1_%s.npy" % v), u8, version)
        ok("u1_%s.npy" % v, u8)
        save_npy(os.path.join(out, "f4_%s.npy" % v), n32, version)
        ok("f4_%s.npy" % v, n32)
    for name, array, note in [("u2_le.npy", u16.astype("<u2"), "-"), ("u2_be.npy", u16.astype(">u2"), "-"),
                              ("f4_le.npy", n32.astype("<f4"), "-"), ("f4_be.npy", n32.astype(">f4"), "-"),
                              ("f8_le.npy", n64.astype("<f8"), NOTE_F64), ("f8_be.npy", n64.astype(">f8"), NOTE_F64),
                              ("f8_be_v2.npy", n64.astype(">f8"), NOTE_F64),
                              ("f4_hw1.npy", n32[:, :, None], "-"), ("u1_1x1.npy", u8[:1, :1], "-"),
                              ("f4_1xN.npy", n32[:1], "-"), ("f4_Nx1.npy", n32[:, :1], "-")]:
        save_npy(os.path.join(out, name), array, (2, 0) if name.endswith("_v2.npy") else (1, 0))
        ok(name, array[:, :, 0] if array.ndim == 3 else array, note)
    # '<u1': a byte order mark numpy never writes for one byte, but a valid descr.
    save_npy(os.path.join(out, "u1_lt.npy"), u8)
    with open(os.path.join(out, "u1_lt.npy"), "r+b") as f:
        data = f.read()
        assert data.count(b"'|u1'") == 1
        f.seek(0)
        f.write(data.replace(b"'|u1'", b"'<u1'"))
    ok("u1_lt.npy", u8)

    # .npy refused: other dtypes, Fortran order, other shapes.
    for name, array, words in [("refuse_i4.npy", u8.astype(np.int32), "int32 .npy"),
                               ("refuse_u4.npy", u8.astype(np.uint32), "uint32 .npy"),
                               ("refuse_f2.npy", u8.astype(np.float16), "float16 .npy"),
                               ("refuse_c8.npy", u8.astype(np.complex64), "complex64 .npy"),
                               ("refuse_bool.npy", u8 > 3, "bool .npy"),
                               ("refuse_fortran.npy", np.asfortranarray(n32), "ascontiguousarray"),
                               ("refuse_3d.npy", np.zeros((4, 5, 3), np.float32), "(4, 5, 3)"),
                               ("refuse_1d.npy", np.zeros(7, np.uint8), "(7,)"),
                               ("refuse_0d.npy", np.zeros((), np.uint8), "()"),
                               ("refuse_empty.npy", np.zeros((0, 5), np.uint8), "no pixels"),
                               ("refuse_structured.npy", np.zeros((3, 4), dtype=[("a", "<f4"), ("b", "<u2")]),
                                "structured")]:
        save_npy(os.path.join(out, name), array)
        refuse(name, words)

    # The float files of the external corpora (../libtiff, ../pillow), by tifffile, over
    # libtiff's tiffcp -c none where tifffile leaves the codec to imagecodecs (LZW).
    for rel, note in CORPUS_FLOAT:
        source = os.path.join(HERE, "..", rel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with tifffile.TiffFile(source) as tf:
                compressed = int(tf.pages[0].compression) != 1
            if compressed:
                with tempfile.TemporaryDirectory() as tmp:
                    plain = os.path.join(tmp, "plain.tif")
                    subprocess.run(["tiffcp", "-c", "none", source, plain], check=True, capture_output=True)
                    samples = tifffile.imread(plain)
            else:
                samples = tifffile.imread(source)
        name = "../" + rel
        save_npy(os.path.join(out, "expect_" + rel.replace("/", "_") + ".npy"), expect_of(samples))
        manifest.append((name, "ok", note))

    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("# input\texpect\tnote or refusal words (written by make_float_files.py)\n")
        for row in manifest:
            f.write("\t".join(row) + "\n")
    print("make_float_files.py: %d inputs in %s (tifffile %s, numpy %s)" %
          (len(manifest), out, tifffile.__version__, np.__version__))


if __name__ == "__main__":
    main()
