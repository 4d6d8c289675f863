#!/usr/bin/python3
"""crosscheck.py: checks every golden output against an independent numpy implementation of DESIGN.md's semantics, starting from the generator's own arrays (not from gsmooth's decoders)."""
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_inputs  # noqa: E402


def to_gray(spec):
    """Ground-truth gray samples of a generated input, per DESIGN.md 'Pixels in and out'."""
    a = np.asarray(spec["pixels"]).astype(np.int64)
    kind, bits = spec["kind"], spec.get("bits", 8)
    if kind == "palette":
        a = np.asarray(spec["palette"], dtype=np.int64)[a]
        kind, bits = "rgb", 8
    if kind in ("rgb", "rgba"):
        r, g, b = a[..., 0], a[..., 1], a[..., 2]
        a = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16
    elif kind == "graya":
        a = a[..., 0]
    if bits < 8:
        a = a * (255 // ((1 << bits) - 1))
        bits = 8
    return a, bits


def smooth(gray, bits, iters):
    a = gray.astype(np.float32)
    three, two = np.float32(3), np.float32(2)
    for _ in range(iters):
        b = a.copy()
        if a.shape[1] > 1:
            b[:, 1:-1] = ((a[:, :-2] + a[:, 1:-1]) + a[:, 2:]) / three
            b[:, 0] = (a[:, 0] + a[:, 1]) / two
            b[:, -1] = (a[:, -2] + a[:, -1]) / two
        a = b
    maxval = (1 << bits) - 1
    return np.clip(np.rint(a), 0, maxval).astype(np.int64)


def read_output(path):
    if path.endswith(".npy"):
        return np.load(path)
    im = Image.open(path)
    return np.asarray(im).astype(np.int64)


def main():
    images = make_inputs.build_images()
    failures = checked = 0
    with open(os.path.join(HERE, "cases.txt")) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    for expected, source, *args in lines:
        gray, bits = to_gray(images[source])
        opts = dict(a.split("=", 1) if "=" in a else (a, None) for a in args)
        iters = next((int(args[i + 1]) for i, a in enumerate(args) if a == "--iters"), 3)
        if "--integral" in opts or any(a.startswith("--integral") for a in args):
            mode = "2d" if "--integral=2d" in args else "rows"
            want = np.cumsum(gray.astype(np.uint64), axis=1)
            if mode == "2d":
                want = np.cumsum(want, axis=0)
            got = read_output(os.path.join(HERE, "expected", expected))
            limit = (255 if bits == 8 else 65535) * (gray.shape[1] if mode == "rows" else gray.size)
            want_dtype = np.uint32 if (bits == 8 or mode == "2d") and limit < 2**32 else np.uint64
            ok = got.dtype == want_dtype and got.shape == want.shape and np.array_equal(got, want)
        else:
            want = smooth(gray, bits, iters)
            if "--depth" in args and args[args.index("--depth") + 1] == "8" and bits == 16:
                want = np.rint(want / 257.0).astype(np.int64)
            got = read_output(os.path.join(HERE, "expected", expected))
            ok = got.shape == want.shape and np.array_equal(got, want)
        checked += 1
        if not ok:
            failures += 1
            print("MISMATCH", expected)
    print(f"crosscheck: {checked - failures} passed, {failures} failed")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
