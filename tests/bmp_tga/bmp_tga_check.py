#!/usr/bin/python3
"""bmp_tga_check.py: BMP and TGA files written by other programs through gsmooth.

PIL (every mode it writes, both TGA row orders, raw and run-length) and OpenCV (gray and
colour BMP), through gsmooth --iters 0, from the file and through a pipe, against PIL's
decode in BT.601 gray; widths 1 to 9 (every row padding), rows wider than the readers'
4096-pixel chunk, images whose runs cross rows; the colour and alpha notes.

usage: bmp_tga_check.py GSMOOTH
"""
import io
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
try:
    from PIL import Image
except ImportError:
    print("skipped: python3-pil is not installed")
    sys.exit(SKIP)
try:
    import cv2
except ImportError:
    cv2 = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
from image_files import Checks, read_pgm  # noqa: E402
from reference import luma  # noqa: E402

NARROW = range(1, 10)       # 1..9: every padding of every BMP bit depth
HEIGHTS = (1, 4)
WIDE = (4095, 4097)         # the readers decode rows in chunks of 4096 pixels
COLOUR_NOTE = "colour converted"
ALPHA_NOTE = "alpha channel dropped"

check = Checks()


def picture(rng, h, w, channels):
    """Noise with flat stretches, so run-length encoders make runs (some across rows)."""
    a = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
    flat = rng.random((h, w)) < 0.5
    a[flat] = a.reshape(-1, channels)[0]
    return a[..., 0] if channels == 1 else a


def pil_image(rng, mode, h, w):
    if mode == "1":
        return Image.fromarray(picture(rng, h, w, 1) > 127)
    if mode == "P":
        return Image.fromarray(picture(rng, h, w, 3)).quantize(colors=37)
    channels = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[mode]
    return Image.fromarray(picture(rng, h, w, channels), mode)


def truth(data):
    """What gsmooth must give: PIL's decode of the bytes, colour to BT.601, alpha dropped."""
    im = Image.open(io.BytesIO(data))
    im.load()
    if im.mode in ("1", "L", "LA"):
        return np.asarray(im.convert("L")).astype(np.int64)
    rgb = np.asarray(im.convert("RGB")).astype(np.int64)
    return luma(rgb[..., 0], rgb[..., 1], rgb[..., 2])


def run(gsmooth, data, tmp, piped):
    out = os.path.join(tmp, "out.pgm")
    if os.path.exists(out):
        os.unlink(out)
    if piped:  # subprocess feeds stdin through a pipe
        p = subprocess.run([gsmooth, "--iters", "0", "-", out], input=data, capture_output=True)
    else:
        src = os.path.join(tmp, "in.img")
        with open(src, "wb") as f:
            f.write(data)
        p = subprocess.run([gsmooth, "--iters", "0", src, out], capture_output=True)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        return None, err
    return read_pgm(out)[0], err


def compare(gsmooth, tmp, case, data, colour, alpha):
    want = truth(data)
    for piped in (False, True):
        how = "pipe" if piped else "file"
        got, err = run(gsmooth, data, tmp, piped)
        if got is None:
            check(f"{case} ({how})", False, err.strip())
            continue
        if got.shape != want.shape:
            check(f"{case} ({how})", False, f"shape {got.shape}, want {want.shape}")
            continue
        diff = np.argwhere(got != want)
        check(f"{case} ({how})", len(diff) == 0,
              f"{len(diff)} pixels differ, first at {tuple(diff[0])}" if len(diff) else "")
        check(f"{case} ({how}) notes", (COLOUR_NOTE in err) == colour and (ALPHA_NOTE in err) == alpha,
              f"stderr {err.strip()!r}, want colour {colour} alpha {alpha}")


def encoded(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return buf.getvalue()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    gsmooth = sys.argv[1]
    rng = np.random.default_rng(7)
    sizes = [(h, w) for w in NARROW for h in HEIGHTS] + [(3, w) for w in WIDE]
    with tempfile.TemporaryDirectory() as tmp:
        # PIL's BMP writer: 1-bit and 8-bit palettes (L as a gray palette), 24 and 32-bit
        # (RGBA as BI_RGB, whose fourth byte PIL and Windows read as unused).
        for mode, colour in (("1", False), ("L", False), ("P", True), ("RGB", True), ("RGBA", True)):
            for h, w in sizes:
                if mode == "RGBA" and w in WIDE:
                    continue
                im = pil_image(rng, mode, h, w)
                compare(gsmooth, tmp, f"PIL BMP {mode} {w}x{h}", encoded(im, "BMP"), colour, False)
        # PIL's TGA writer: every mode, raw and run-length, bottom-up and top-down.
        for mode, colour, alpha in (("1", False, False), ("L", False, False), ("LA", False, True),
                                    ("P", True, False), ("RGB", True, False), ("RGBA", True, True)):
            for rle in (False, True):
                if mode == "1" and rle:
                    continue  # no run-length form of 1-bit TGA
                for orientation in (-1, 1):
                    for h, w in sizes:
                        if w in WIDE and mode not in ("1", "RGB"):
                            continue
                        im = pil_image(rng, mode, h, w)
                        data = encoded(im, "TGA", rle=rle, orientation=orientation)
                        compare(gsmooth, tmp, f"PIL TGA {mode} {'rle' if rle else 'raw'} "
                                f"{'top-down' if orientation == 1 else 'bottom-up'} {w}x{h}",
                                data, colour, alpha)
        # OpenCV's BMP writer: 8-bit gray (a gray palette) and 24-bit colour.
        if cv2 is not None:
            for h, w in sizes:
                for channels in (1, 3):
                    a = picture(rng, h, w, channels)
                    ok, buf = cv2.imencode(".bmp", a)
                    check(f"OpenCV encodes {w}x{h}", ok)
                    compare(gsmooth, tmp, f"OpenCV BMP {channels}-channel {w}x{h}", buf.tobytes(),
                            channels == 3, False)
    return check.report("bmp_tga_check")


if __name__ == "__main__":
    sys.exit(main())
