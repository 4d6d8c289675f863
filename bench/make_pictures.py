"""make_pictures.py: the README's pictures, from gsmooth itself and from the benchmark's own output.

usage: python3 bench/make_pictures.py BUILD_DIR [GPU_BENCH_LOG [E2E_BENCH_LOG]]
  (Debian python3-pil, python3-numpy, python3-matplotlib)

- docs/images/before-after.png: samples/landscape.png as gray, then smoothed by BUILD_DIR's
  gsmooth along x, y and xy at K=20, side by side (each panel gsmooth's own output).
- docs/images/gpu_time_vs_k.png: milliseconds against K on a 16384^2 u8 image for gsmooth's
  CUDA plugin, the naive global-memory kernel and PyTorch, read from a gsmooth_gpu_bench
  log (bench/run_gpu.sh writes it as bench.log; bench/results/ keeps the dated ones), with
  the date of the log's name in the title.
- docs/images/e2e_vs_tools.png: end-to-end wall time of gsmooth beside vips, OpenCV and
  ImageMagick on the same files, read from the table bench/e2e_bench.sh prints (its
  stdout; bench/results/ keeps the dated ones), dated from the log's name.
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


# The e2e table's rows drawn, by the row's first cell (a "same" row belongs to the row
# above): the workload's label, and the anchors kept, by the start of their names.
E2E_GROUPS = {
    "4096^2 mosaic K=3, wall time": ("4096^2 PNG -> PNG, K=3",
                                     ("vips conv 7x1", "OpenCV blur", "ImageMagick")),
    "8192^2 mosaic K=3 --axis y, wall time": ("8192^2 PNG, --axis xy",
                                              ("vips conv 7x7", "vips convsep", "OpenCV sepFilter2D")),
    "8192^2 TIFF -> TIFF K=3, wall time": ("8192^2 TIFF -> TIFF, K=3", ("vips conv 7x1 int, deflate",)),
}
TOOL_COLOURS = {"gsmooth": "#1f77b4", "vips": "#ff7f0e", "OpenCV": "#2ca02c", "ImageMagick": "#d62728"}


def e2e_rows(log):
    """{workload: [(tool, seconds), ...]} from e2e_bench.sh's table, gsmooth first."""
    groups, current = {}, None
    seconds = re.compile(r"^([0-9.]+) s$")
    with open(log) as f:
        for text in f:
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if len(cells) < 4 or not text.startswith("|"):
                continue
            if cells[0] in E2E_GROUPS:
                current = cells[0]
            elif cells[0] not in ("same", "--axis xy"):
                current = None
            if current is None:
                continue
            label, anchors = E2E_GROUPS[current]
            mine, theirs = seconds.match(cells[1]), seconds.match(cells[3])
            if not mine or not theirs or not any(cells[2].startswith(a) for a in anchors):
                continue
            rows = groups.setdefault(label, [("gsmooth", float(mine.group(1)))])
            rows.append((cells[2], float(theirs.group(1))))
    return groups


def e2e_plot(log):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = e2e_rows(log)
    if not groups:
        sys.exit(f"make_pictures.py: no e2e table rows in {log}")
    date = re.search(r"(\d{4}-\d{2}-\d{2})", os.path.basename(log))
    fig, axes = plt.subplots(len(groups), 1, sharex=True, dpi=110, squeeze=False,
                             figsize=(7.5, 1.0 + 0.42 * sum(len(r) for r in groups.values())),
                             gridspec_kw={"height_ratios": [len(r) for r in groups.values()]})
    axes = axes[:, 0]
    for ax, (label, rows) in zip(axes, groups.items()):
        names = [re.sub(r" \(.*\)$", "", tool) for tool, _ in rows]
        secs = [t for _, t in rows]
        colours = [next((c for n, c in TOOL_COLOURS.items() if tool.startswith(n)), "#7f7f7f")
                   for tool, _ in rows]
        ax.barh(range(len(rows)), secs, color=colours)
        for k, t in enumerate(secs):
            ax.text(t * 1.06, k, f"{t:.2f} s" + ("" if k == 0 else f"  ({t / secs[0]:.1f}x as long)"),
                    va="center", fontsize=7)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(label, fontsize=8, loc="left")
        ax.set_xscale("log")
        ax.grid(True, axis="x", which="both", alpha=0.3)
    every = [t for r in groups.values() for _, t in r]
    axes[-1].set_xlim(min(every) / 2, max(every) * 4)
    axes[-1].set_xlabel("wall seconds, file to file (log; shorter is faster)", fontsize=8)
    fig.suptitle("gsmooth end to end against vips, OpenCV and ImageMagick, 2 cores" +
                 (f" ({date.group(1)})" if date else ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, "docs", "images", "e2e_vs_tools.png"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    before_after(sys.argv[1])
    if len(sys.argv) > 2:
        gpu_plot(sys.argv[2])
    if len(sys.argv) > 3:
        e2e_plot(sys.argv[3])


if __name__ == "__main__":
    main()
