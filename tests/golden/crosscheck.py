#!/usr/bin/python3
"""crosscheck.py: checks every golden output against the independent numpy reference.

The reference is reference.py; it starts from the generator's own arrays (not from gsmooth's
decoders).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_inputs  # noqa: E402
from image_files import read_output  # noqa: E402
from reference import integral, smooth, to_gray  # noqa: E402


def main():
    images = make_inputs.build_images()
    failures = checked = 0
    with open(os.path.join(HERE, "cases.txt")) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    for expected, source, *args in lines:
        gray, bits = to_gray(images[source], os.path.join(HERE, "inputs", source))
        opts = dict(a.split("=", 1) if "=" in a else (a, None) for a in args)
        iters = next((int(args[i + 1]) for i, a in enumerate(args) if a == "--iters"), 3)
        if "--integral" in opts or any(a.startswith("--integral") for a in args):
            mode = "2d" if "--integral=2d" in args else "rows"
            want = integral(gray, bits, mode)
            got, _ = read_output(os.path.join(HERE, "expected", expected))
            ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
        else:
            axis = args[args.index("--axis") + 1] if "--axis" in args else "x"
            want = smooth(gray, bits, iters, axis)
            if "--depth" in args and args[args.index("--depth") + 1] == "8" and bits == 16:
                want = np.rint(want / 257.0).astype(np.int64)
            got, _ = read_output(os.path.join(HERE, "expected", expected))
            ok = got.shape == want.shape and np.array_equal(got, want)
        checked += 1
        if not ok:
            failures += 1
            print("MISMATCH", expected)
    print(f"crosscheck: {checked - failures} passed, {failures} failed")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
