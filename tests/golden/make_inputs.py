#!/usr/bin/python3
"""make_inputs.py: writes the golden input images (deterministic).

Into tests/golden/inputs/: PNGs from the arrays below (the ground truth), and JPEGs encoded
by PIL's libjpeg (whose ground truth is the decoder's own gray, reference.to_gray).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
import pngwrite  # noqa: E402


def build_images():
    """name -> keyword arguments of pngwrite.encode; the arrays are the ground truth."""
    rng = np.random.default_rng(2026)
    y, x = np.mgrid[0:96, 0:300]
    images = {
        # colour photo-like content (8-bit RGB): exercises BT.601 and real structure
        "photo.png": dict(pixels=imagegen.photo_like(160, 240, seed=3), kind="rgb"),
        # horizontal, vertical and diagonal ramps
        "gradient.png": dict(pixels=((x * 255 // 299 + y) % 256).astype(np.uint8), kind="gray"),
        # white noise: every rounding path, extremes included
        "noise.png": dict(pixels=rng.integers(0, 256, (64, 257), dtype=np.uint8), kind="gray"),
        # one pixel wide (n = 1 everywhere) and one pixel tall
        "one_pixel_wide.png": dict(pixels=rng.integers(0, 256, (50, 1), dtype=np.uint8), kind="gray"),
        "one_pixel_tall.png": dict(pixels=rng.integers(0, 256, (1, 4099), dtype=np.uint8), kind="gray"),
        # 16-bit gray photo content
        "gray16.png": dict(pixels=imagegen.photo_like(90, 130, seed=5, channels=1, bits=16),
                           kind="gray", bits=16),
        # RGBA colour at 16 bits per channel: alpha dropped, 64-bit luma arithmetic
        "colour.png": dict(pixels=np.concatenate(
            [imagegen.photo_like(70, 110, seed=7, bits=16),
             rng.integers(0, 65536, (70, 110, 1), dtype=np.uint16)], -1).astype(np.uint16),
            kind="rgba", bits=16),
        # Adam7 interlaced gray
        "interlaced.png": dict(pixels=imagegen.photo_like(77, 133, seed=9, channels=1),
                               kind="gray", interlace=True),
        # palette image with 4-bit indices
        "palette.png": dict(pixels=(x[:40, :90] // 6 + y[:40, :90] // 5) % 16, kind="palette", bits=4,
                            palette=rng.integers(0, 256, (16, 3))),
        # 2-bit gray: scaled to 0..255 when read
        "gray2.png": dict(pixels=(x[:30, :61] // 16 + y[:30, :61] // 8) % 4, kind="gray", bits=2),
        # JPEG: YCbCr 4:2:0 baseline, progressive, and Adobe CMYK (odd sizes: partial MCUs)
        "photo420.jpg": dict(pixels=imagegen.photo_like(101, 157, seed=13), kind="jpeg", mode="RGB",
                             save=dict(quality=88)),
        "progressive.jpg": dict(pixels=imagegen.photo_like(64, 203, seed=14), kind="jpeg", mode="RGB",
                                save=dict(quality=75, progressive=True)),
        "cmyk.jpg": dict(pixels=imagegen.photo_like(45, 77, seed=15), kind="jpeg", mode="CMYK",
                         save=dict(quality=95)),
    }
    return images


def write_jpeg(path, spec):
    from PIL import Image
    im = Image.fromarray(spec["pixels"], "RGB")
    if spec["mode"] != "RGB":
        im = im.convert(spec["mode"])
    im.save(path, **spec["save"])


def main():
    out = os.path.join(HERE, "inputs")
    os.makedirs(out, exist_ok=True)
    for name, spec in build_images().items():
        if spec["kind"] == "jpeg":
            write_jpeg(os.path.join(out, name), spec)
        else:
            pngwrite.write(os.path.join(out, name), **spec)
        print("wrote", name)


if __name__ == "__main__":
    main()
