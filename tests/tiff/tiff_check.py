#!/usr/bin/python3
"""tiff_check.py: TIFF through gsmooth against an independent writer and reader: files written by tifffile (strips, tiles, BigTIFF, 8/16-bit, both byte orders, gray, gray+alpha, RGB, RGBA, separate planes, MinIsWhite, deflate+predictor, LZMA, several pages) and by PIL's libtiff codecs (LZW, PackBits, deflate; JPEG in RGB and YCbCr); decoded samples, smoothing on every axis and integrals compared with numpy; what gsmooth writes read back by tifffile; refusals (float, signed, 1-bit, palette) with their message; a pipe gives the file's result.

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
from image_files import read_pgm  # noqa: E402
from reference import integral, luma, smooth  # noqa: E402

failures = []
passed = 0


def check(case, ok, detail=""):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(f"{case}: {detail}")


def run(gsmooth, args, stdin=None):
    return subprocess.run([gsmooth, *args], input=stdin, capture_output=True)


def differs(got, want):
    if got.shape != want.shape:
        return f"shape {got.shape}, want {want.shape}"
    diff = np.argwhere(got != want)
    if len(diff) == 0:
        return ""
    y, x = diff[0]
    return f"{len(diff)} samples differ, first at row {y} column {x}: got {got[y, x]}, want {want[y, x]}"


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
        ("float32", lambda p: tifffile.imwrite(p, g.astype(np.float32)), "floating-point"),
        ("int16", lambda p: tifffile.imwrite(p, g.astype(np.int16)), "signed integer"),
        ("uint32", lambda p: tifffile.imwrite(p, g.astype(np.uint32)), "32-bit TIFF samples"),
        ("cmyk", lambda p: tifffile.imwrite(p, np.zeros((20, 30, 4), np.uint8), photometric="separated"),
         "CMYK"),
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
        check_jpeg_ycbcr(gsmooth, tmp)
        check_written(gsmooth, tmp)
        check_levels(gsmooth, tmp)
        check_refusals(gsmooth, tmp)
        check_limits_and_pipe(gsmooth, tmp)
    for f in failures:
        print("FAIL", f)
    print(f"tiff_check: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
