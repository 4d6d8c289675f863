"""make_pictures.py: the README's pictures, from gsmooth itself and from the benchmark's own output.

usage: python3 bench/make_pictures.py BUILD_DIR [GPU_BENCH_LOG]
  (Debian python3-pil, python3-numpy, python3-matplotlib)

- docs/images/before-after.png: samples/landscape.png as gray, then smoothed by BUILD_DIR's
  gsmooth along x, y and xy at K=20, side by side (each panel gsmooth's own output).
- docs/images/gpu_time_vs_k.png: milliseconds against K on a 16384^2 u8 image for gsmooth's
  CUDA plugin, the naive global-memory kernel and PyTorch, read from a gsmooth_gpu_bench
  log (bench/run_gpu.sh writes it as bench.log; bench/results/ keeps the dated ones), with
  the date of the log's name in the title.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K = 20


def before_after(build):
    gsmooth = os.path.join(build, "bin", "gsmooth")
    sample = os.path.join(ROOT, "samples", "landscape.png")
    panels = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in (("gray", ["--iters", "0"]), ("x", ["--axis", "x"]), ("y", ["--axis", "y"]),
                           ("xy", ["--axis", "xy"])):
            out = os.path.join(tmp, name + ".png")
            extra = [] if name == "gray" else ["--iters", str(K)]
            subprocess.check_call([gsmooth, "--quiet", *args, *extra, sample, out])
            panels.append(np.asarray(Image.open(out)))
    h = min(p.shape[0] for p in panels)
    gap = np.full((h, 6), 255, np.uint8)
    row = []
    for p in panels:
        row += [p[:h], gap]
    strip = Image.fromarray(np.hstack(row[:-1]))
    if strip.width > 1600:
        strip = strip.resize((1600, round(strip.height * 1600 / strip.width)), Image.LANCZOS)
    strip.save(os.path.join(ROOT, "docs", "images", "before-after.png"), optimize=True)


def gpu_plot(log):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = {"gsmooth (CUDA plugin)": "registers (plugin default)",
              "naive kernel (global memory, a launch a pass)": "pingpong (global memory)",
              "PyTorch avg_pool1d x K": "PyTorch avg_pool1d x K",
              "copy floor": "floor (bytes / D2D rate)"}
    points = {label: [] for label in series}
    line = re.compile(r"^smooth K=(\d+)\s+(.+?)\s{2,}([0-9.]+)")
    with open(log) as f:
        for text in f:
            m = line.match(text)
            if not m:
                continue
            for label, impl in series.items():
                if m.group(2).strip() == impl:
                    points[label].append((int(m.group(1)), float(m.group(3))))
    date = re.search(r"(\d{4}-\d{2}-\d{2})", os.path.basename(log))
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label, pts in points.items():
        if pts:
            ks, ms = zip(*sorted(pts))
            ax.plot(ks, ms, "--" if label == "copy floor" else "-o", label=label, markersize=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("passes K")
    ax.set_ylabel("ms, 16384 x 16384 u8 (log)")
    ax.set_title("Smoothing along rows on an NVIDIA H200" + (f" ({date.group(1)})" if date else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, "docs", "images", "gpu_time_vs_k.png"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    before_after(sys.argv[1])
    if len(sys.argv) > 2:
        gpu_plot(sys.argv[2])


if __name__ == "__main__":
    main()
