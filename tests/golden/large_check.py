#!/usr/bin/python3
"""large_check.py: images several streaming strips tall against the numpy reference.

Heights that are no multiple of a strip, 8 and 16-bit, through gsmooth's smoothing, integral
rows and 2d (exact and viewing pictures), on every CPU instruction set or on one named
backend.

usage: large_check.py GSMOOTH BACKEND      (BACKEND cpu: every instruction set this CPU runs;
                                           any other: that backend, exit 77 if unavailable)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
import pngwrite  # noqa: E402
from image_files import read_output  # noqa: E402
from reference import integral, smooth, view_picture  # noqa: E402

SKIP = 77
# The CPU plugin streams 1 MiB of source rows per strip: 2048-wide 8-bit rows come 512 to
# a strip (1100 = 2 x 512 + 76), 4096-wide 16-bit rows 128 to a strip (777 = 6 x 128 + 9).
# Photo content is a 550x1024 picture tiled 2x2 (the generator costs seconds at full size).
IMAGES = {
    "photo8_2048x1100": lambda: np.tile(imagegen.photo_like(550, 1024, seed=11, channels=1), (2, 2)),
    "noise8_4096x777": lambda: np.random.default_rng(21).integers(0, 256, (777, 4096), dtype=np.uint8),
    "photo16_2048x1100": lambda: np.tile(imagegen.photo_like(550, 1024, seed=12, channels=1, bits=16), (2, 2)),
    "noise16_4096x777": lambda: np.random.default_rng(22).integers(0, 65536, (777, 4096), dtype=np.uint16),
}
# (output extension, gsmooth options, what numpy computes)
RUNS = [
    ("png", ["--iters", "3"], ("smooth", 3)),
    ("pgm", ["--iters", "4"], ("smooth", 4)),
    # down columns: each strip is decoded with K rows of halo on each side, copied over from
    # the previous strip's window; K = 40 makes halos of more than one PNG row batch
    ("pgm", ["--iters", "3", "--axis", "y"], ("smooth", 3, "y")),
    ("png", ["--iters", "2", "--axis", "xy"], ("smooth", 2, "xy")),
    ("pgm", ["--iters", "40", "--axis", "y"], ("smooth", 40, "y")),
    ("png", ["--iters", "40", "--axis", "xy"], ("smooth", 40, "xy")),
    ("npy", ["--integral"], ("rows", None)),
    ("npy", ["--integral=2d"], ("2d", None)),
    ("pgm", ["--integral=2d"], ("2d", "view")),
    ("png", ["--integral=rows"], ("rows", "view")),
]


def expected(gray, bits, what):
    mode, arg = what[:2]
    if mode == "smooth":
        return smooth(gray, bits, arg, *what[2:]), (1 << bits) - 1
    values = integral(gray, bits, mode)
    if arg == "view":
        return view_picture(values), 65535
    return values, None


def first_difference(got, want):
    diff = np.argwhere(got != want)
    y, x = diff[0]
    return f"{len(diff)} samples differ, first at row {y} column {x}: got {got[y, x]}, want {want[y, x]}"


def check_view(name, got, mode):
    """What a viewing picture must be whatever the reference says: the largest sum at
    65535, and sums that never decrease along a row (nor down a column for 2d)."""
    problems = []
    if got.max() != 65535:
        problems.append(f"largest value {got.max()}, want 65535")
    if mode == "2d" and got[-1, -1] != 65535:
        problems.append(f"bottom-right corner {got[-1, -1]}, want 65535")
    if (np.diff(got, axis=1) < 0).any():
        problems.append("decreases along a row")
    if mode == "2d" and (np.diff(got, axis=0) < 0).any():
        problems.append("decreases down a column")
    return [f"{name}: {p}" for p in problems]


def listed(gsmooth, env):
    out = subprocess.run([gsmooth, "--list-backends", "-v"], env=env, capture_output=True, text=True)
    return out.stdout


def configurations(gsmooth, backend):
    """(label, environment) for each run configuration; empty when the backend cannot run."""
    base = dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH="")
    base.pop("GSMOOTH_CPU_ISA", None)
    if backend != "cpu":
        text = listed(gsmooth, base)
        ok = any(l.startswith(backend + " ") and " available " in l for l in text.splitlines())
        return [(backend, base)] if ok else []
    configs = []
    for isa in ("scalar", "avx2", "avx512"):
        env = dict(base, GSMOOTH_CPU_ISA=isa)
        # The CPU plugin's probe names the instruction set it settled on; a capped ISA
        # this CPU lacks falls back to a lower one, which another configuration covers.
        if f"probe:  {isa} row kernels" in listed(gsmooth, env):
            configs.append((f"cpu/{isa}", env))
    return configs


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gsmooth, backend = sys.argv[1], sys.argv[2]
    configs = configurations(gsmooth, backend)
    if not configs:
        print(f"skipped: backend {backend} is not available here (no CUDA device?)")
        return SKIP
    failures, passed = [], 0
    with tempfile.TemporaryDirectory(prefix="gsmooth-large-") as tmp:
        for name, make in IMAGES.items():
            gray = make()
            bits = 16 if gray.dtype == np.uint16 else 8
            src = os.path.join(tmp, name + ".png")
            pngwrite.write(src, gray, kind="gray", bits=bits, level=1)
            gray = gray.astype(np.int64)
            for ext, args, what in RUNS:
                want, want_max = expected(gray, bits, what)
                for label, env in configs:
                    case = f"{label} {name} {' '.join(args)} -> .{ext}"
                    out = os.path.join(tmp, f"out.{ext}")
                    run = subprocess.run([gsmooth, "--backend", backend, "--quiet", *args, src, out],
                                         env=env, capture_output=True, text=True)
                    if run.returncode != 0:
                        failures.append(f"{case}: exit {run.returncode}: {run.stderr.strip()}")
                        continue
                    got, got_max = read_output(out)
                    os.unlink(out)
                    problems = []
                    if got.shape != want.shape:
                        problems.append(f"{case}: shape {got.shape}, want {want.shape}")
                    elif ext == "npy" and got.dtype != want.dtype:
                        problems.append(f"{case}: dtype {got.dtype}, want {want.dtype}")
                    elif want_max is not None and got_max != want_max:
                        problems.append(f"{case}: sample maximum {got_max}, want {want_max}")
                    elif not np.array_equal(got, want):
                        problems.append(f"{case}: {first_difference(got, want)}")
                    if what[1] == "view" and not problems:
                        problems += check_view(case, got, what[0])
                    failures += problems
                    passed += not problems
    for f in failures:
        print("FAIL", f)
    print(f"large: {passed} passed, {len(failures)} failed ({', '.join(l for l, _ in configs)})")
    return 1 if failures or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
