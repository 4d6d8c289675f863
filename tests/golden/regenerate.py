#!/usr/bin/python3
"""regenerate.py: remakes tests/golden/expected/ from cases.txt with the CPU backend.

A file is replaced only when what it holds changed (decoded pixels, or the bytes of an NPY);
then the numpy cross-check runs.

usage: regenerate.py GSMOOTH      (the CMake target regenerate-goldens runs it)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from image_files import read_output  # noqa: E402


def cases():
    with open(os.path.join(HERE, "cases.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                expected, source, *args = line.split()
                yield expected, source, args


def same_content(old, new):
    """PNG and PGM files may differ in bytes (encoder settings) and hold the same image."""
    if not os.path.exists(old):
        return False
    a, a_max = read_output(old)
    b, b_max = read_output(new)
    return a.dtype == b.dtype and a_max == b_max and a.shape == b.shape and np.array_equal(a, b)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gsmooth = sys.argv[1]
    env = dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_CPU_ISA="")
    changed = kept = 0
    os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gsmooth-goldens-") as tmp:
        for expected, source, args in cases():
            new = os.path.join(tmp, expected)
            subprocess.run([gsmooth, "--backend", "cpu", "--quiet", *args,
                            os.path.join(HERE, "inputs", source), new], env=env, check=True)
            old = os.path.join(HERE, "expected", expected)
            if same_content(old, new):
                kept += 1
                continue
            shutil.copyfile(new, old)
            changed += 1
            print("changed", expected)
    print(f"regenerate: {changed} changed, {kept} unchanged")
    return subprocess.run([sys.executable, os.path.join(HERE, "crosscheck.py")]).returncode


if __name__ == "__main__":
    sys.exit(main())
