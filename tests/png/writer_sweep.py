#!/usr/bin/env python3
"""writer_sweep.py: the long version of png_conformance, run by hand.

Minutes, not for CI: PNGs from OpenCV at every level and strategy, PIL at levels 0/1/6/9 and
optimize, vips at compression 1/6/9, ten sizes from 64x64 to 4096x4096, flat, photo-like and
random, each decoded by the fast reader and by libpng (test_png_conformance), which must
agree on every one.

usage: writer_sweep.py TEST_PNG_CONFORMANCE [--jobs N] [--types gray8,rgb8,...] [--sizes 64,...]
  e.g. /usr/bin/python3 tests/png/writer_sweep.py build/bin/test_png_conformance --jobs 2

Each writer setting is one batch: written into a scratch directory, compared, removed, so
the disk holds one batch per job. Prints each failure, then "N of N equal" and the time.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pngcases as pc  # noqa: E402

SIZES = (64, 100, 128, 256, 500, 512, 1000, 1024, 2048, 4096)
CONTENTS = ("flat", "photo", "random")
PIL_SETTINGS = ((0, False), (1, False), (6, False), (9, False), (None, True))
VIPS_COMPRESSIONS = (1, 6, 9)


def settings(have_vips):
    """Every writer setting: (name, writer, options)."""
    out = [("opencv_l%d_s%d" % (level, strategy), "opencv", dict(level=level, strategy=strategy))
           for level in range(10) for strategy in pc.OPENCV_STRATEGIES]
    out += [("pil_%s" % ("optimize" if optimize else "l%d" % level), "pil",
             dict(level=level, optimize=optimize)) for level, optimize in PIL_SETTINGS]
    if have_vips:
        out += [("vips_c%d" % c, "vips", dict(compression=c)) for c in VIPS_COMPRESSIONS]
    return out


def run_batch(job):
    """Write one setting's files, compare them, remove them: (files, failure lines)."""
    compare, name, writer, opt, kinds, sizes, root = job
    work = tempfile.mkdtemp(prefix=name + "-", dir=root)
    try:
        files = 0
        for kind in kinds:
            for size in sizes:
                for content in CONTENTS:
                    a = pc.pixels(kind, size, size, content, seed=size)
                    path = os.path.join(work, "%s_%s_%dx%d_%s.png" % (name, kind, size, size, content))
                    {"opencv": pc.write_opencv, "pil": pc.write_pil, "vips": pc.write_vips}[writer](
                        path, kind, a, **opt)
                    files += 1
        p = subprocess.run([compare, work], capture_output=True, text=True)
        lines = p.stdout.splitlines()
        failures = [line for line in lines if line.startswith("FAIL ")]
        summary = lines[-1].split() if lines else []
        if p.returncode != 0 and not failures:
            failures = ["FAIL %s: the comparison ended with %d: %s" % (name, p.returncode, p.stderr.strip())]
        if len(summary) < 2 or summary[1] != str(files):
            failures.append("FAIL %s: %d files written, the comparison saw %s" % (name, files, summary[1:2]))
        return files, failures
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare", help="test_png_conformance, built with the tests")
    ap.add_argument("--jobs", type=int, default=2, help="batches written at once (default 2)")
    ap.add_argument("--types", default="gray8", help="PNG types, comma-separated (default gray8)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="square sizes, comma-separated (default the ten from 64 to 4096)")
    args = ap.parse_args()
    kinds = args.types.split(",")
    sizes = [int(n) for n in args.sizes.split(",")]
    for k in kinds:
        if k not in pc.TYPES:
            ap.error("type %s: one of %s" % (k, ", ".join(pc.TYPES)))
    have_vips = pc.VIPS is not None
    if not have_vips:
        print("writer_sweep: vips not found (libvips-tools): its settings are skipped")
    started = time.time()
    root = tempfile.mkdtemp(prefix="gsmooth-sweep-")
    compare = os.path.abspath(args.compare)
    jobs = [(compare, name, writer, opt, [k for k in kinds if writer in pc.WRITERS_OF[k]], sizes, root)
            for name, writer, opt in settings(have_vips)]
    jobs = [j for j in jobs if j[4]]
    total, failures = 0, []
    try:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for files, bad in pool.map(run_batch, jobs):
                total += files
                failures += bad
                for line in bad:
                    print(line)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    equal = total - len([f for f in failures if f.endswith(".png") or ".png:" in f])
    print("writer_sweep: %d of %d equal (%d writer settings, %d sizes, %d contents, types %s), %.0f s"
          % (equal, total, len(jobs), len(sizes), len(CONTENTS), ",".join(kinds), time.time() - started))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
