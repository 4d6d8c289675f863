#!/usr/bin/env python3
"""python_bench.py: the Python module against its anchors, measured in the same run.

Numpy arrays of 8-bit and float32 samples (scipy, OpenCV, np.cumsum), the fixed cost of a call on small arrays, and,
with a CUDA device, torch tensors (avg_pool1d,
torch.cumsum, and the plugin's kernel time from gsmooth_gpu_bench's log).

Usage: python3 bench/python_bench.py [--size N] [--cuda-size N] [--kernel-log BENCH_LOG]
Each line prints gsmooth's median (of 9; of 31 for the CUDA calls set beside the kernel), the anchor's, and anchor / gsmooth. Targets:
in memory 4096^2 K=3 >= 20x scipy; a 16384^2 torch CUDA tensor at K=3 <= 1.15x the kernel.
"""
import re
import sys
import time

import numpy as np

import gsmooth

WARMUP, REPS = 2, 9


def median_ms(fn, reps=REPS):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def photo_like(n, rng):
    """Gradient plus noise, like the GPU bench's image (never zeros)."""
    y = np.arange(n, dtype=np.int32)[:, None]
    x = np.arange(n, dtype=np.int32)[None, :]
    noise = rng.integers(-24, 25, size=(n, n), dtype=np.int32)
    return np.clip(x * 160 // n + y * 80 // n + noise, 0, 255).astype(np.uint8)


def line(what, ms, anchor=None, anchor_ms=None, target=""):
    text = f"{what:<44} gsmooth {ms:9.3f} ms"
    if anchor_ms:
        text += f"   {anchor:<30} {anchor_ms:9.3f} ms   {anchor_ms / ms:7.1f}x"
    print(text + (f"   target {target}" if target else ""), flush=True)


def peer_smoothers():
    """The peers' K=3 smoothing of a float32 array along its rows, edges replicated: scipy's
    uniform_filter1d and OpenCV's blur, three times each, as (name, function); a peer that
    is not installed is left out, with a line saying so."""
    peers = []
    try:
        from scipy.ndimage import uniform_filter1d
        scipy3 = lambda g: uniform_filter1d(g, 3, axis=1, mode="nearest")
        peers.append(("scipy uniform_filter1d x3", lambda g: scipy3(scipy3(scipy3(g)))))
    except ImportError as e:
        print(f"scipy anchor skipped: {e}")
    try:
        import cv2
        blur = lambda g: cv2.blur(g, (3, 1), borderType=cv2.BORDER_REPLICATE)
        peers.append(("cv2.blur x3 (float32)", lambda g: blur(blur(blur(g)))))
    except ImportError as e:
        print(f"OpenCV anchor skipped: {e}")
    return peers


def peer_anchors(f, scipy_target=""):
    """The peers' K=3 smoothing of float32 `f` along its rows, timed (scipy's 5 runs)."""
    anchors = [(name, median_ms(lambda: fn(f), 5 if name.startswith("scipy") else REPS),
                scipy_target if name.startswith("scipy") else "") for name, fn in peer_smoothers()]
    return anchors or [(None, None, "")]


def bench_host(n, rng):
    a = photo_like(n, rng)
    print(f"== numpy arrays, {n}x{n} u8, {gsmooth.backends()[0]['probe']}")
    ms = median_ms(lambda: gsmooth.smooth(a, 3, backend="cpu"))
    for name, anchor_ms, target in peer_anchors(a.astype(np.float32), ">= 20x"):
        line(f"smooth K=3 {n}^2 (numpy in, numpy out)", ms, name, anchor_ms, target)
    ms = median_ms(lambda: gsmooth.integral(a, "rows", backend="cpu"))
    line(f"integral rows {n}^2", ms, "np.cumsum(axis=1, uint32)",
         median_ms(lambda: np.cumsum(a, axis=1, dtype=np.uint32)))
    ms = median_ms(lambda: gsmooth.integral(a, "2d", backend="cpu"))
    line(f"integral 2d {n}^2", ms, "np.cumsum twice (uint32)",
         median_ms(lambda: np.cumsum(np.cumsum(a, axis=0, dtype=np.uint32), axis=1)))


def per_call_us(fn, calls=2000):
    """Microseconds a call: the median of 9 batches of `calls` calls (one call is too short
    for the clock)."""
    return median_ms(lambda: [fn() for _ in range(calls)]) * 1e3 / calls


def bench_small(rng):
    """A call's fixed cost: small numpy arrays, as for tiles or patches, beside the peers'
    calls on the same array."""
    print("== numpy arrays, small: microseconds a call")
    for n in (1, 64):
        a = photo_like(n, rng)
        us = per_call_us(lambda: gsmooth.smooth(a, 3, backend="cpu"))
        text = f"{f'smooth K=3 {n}^2 (numpy in, numpy out)':<44} gsmooth {us:9.2f} us"
        for name, anchor_us in small_anchors(a.astype(np.float32)):
            text += f"   {name} {anchor_us:.2f} us ({anchor_us / us:.1f}x)"
        print(text, flush=True)


def small_anchors(f):
    """The peers' K=3 along rows of a small float32 array, microseconds a call."""
    return [(name, per_call_us(lambda: fn(f))) for name, fn in peer_smoothers()]


def science_like(n, rng):
    """Float32 values as instruments give them: a smooth field, noise, negatives, no zeros."""
    y = np.linspace(-3.0, 5.0, n, dtype=np.float32)[:, None]
    x = np.linspace(-2.0, 7.0, n, dtype=np.float32)[None, :]
    return (np.sin(x) * np.cos(y) * 1e3 + rng.standard_normal((n, n), dtype=np.float32)).astype(np.float32)


def bench_host_float(n, rng):
    """Float32 in, float32 out (float64 for the integrals) beside the peers' float paths."""
    f = science_like(n, rng)
    print(f"== numpy arrays, {n}x{n} float32")
    ms = median_ms(lambda: gsmooth.smooth(f, 3, backend="cpu"))
    for name, anchor_ms, target in peer_anchors(f):
        line(f"smooth K=3 {n}^2 float32", ms, name, anchor_ms, target)
    ms = median_ms(lambda: gsmooth.integral(f, "rows", backend="cpu"))
    line(f"integral rows {n}^2 float32 -> float64", ms, "np.cumsum(axis=1, float64)",
         median_ms(lambda: np.cumsum(f, axis=1, dtype=np.float64)))
    ms = median_ms(lambda: gsmooth.integral(f, "2d", backend="cpu"))
    line(f"integral 2d {n}^2 float32 -> float64", ms, "np.cumsum twice (float64)",
         median_ms(lambda: np.cumsum(np.cumsum(f, axis=1, dtype=np.float64), axis=0)))


def kernel_ms(log, op, impl):
    """A row of gsmooth_gpu_bench's table: `op` by `impl`, its milliseconds."""
    try:
        text = open(log).read()
    except OSError:
        return None
    for row in text.splitlines():
        if row.startswith(op + " ") and impl in row:
            m = re.search(re.escape(impl) + r"\s+([0-9.]+)", row)
            if m:
                return float(m.group(1))
    return None


def bench_cuda(n, log):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"== torch CUDA tensors: skipped ({e})")
        return
    if not torch.cuda.is_available():
        print("== torch CUDA tensors: skipped (no CUDA device)")
        return
    print(f"== torch CUDA tensors, {n}x{n} u8 on {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    rng = np.random.default_rng(1)
    t = torch.from_numpy(photo_like(n, rng)).to("cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def cuda_ms(fn, reps=REPS):
        for _ in range(WARMUP):
            fn()
        times = []
        for _ in range(reps):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        return times[len(times) // 2]

    def pool3():
        x = t.view(n, 1, n).float()
        for _ in range(3):
            x = F.avg_pool1d(F.pad(x, (1, 1), mode="replicate"), 3, stride=1)
        return x.round().to(torch.uint8)

    def back_to_back(fn, calls=10):
        # calls queued one after another: each call's Python and launch overlap the work
        # queued before it, as in a model's forward pass
        return cuda_ms(lambda: [fn() for _ in range(calls)], 11) / calls

    ms = cuda_ms(lambda: gsmooth.smooth(t, 3), 31)
    wall = median_ms(lambda: gsmooth.smooth(t, 3), 31)
    wall_done = median_ms(lambda: (gsmooth.smooth(t, 3), torch.cuda.synchronize()), 31)
    queued = back_to_back(lambda: gsmooth.smooth(t, 3))
    line(f"smooth K=3 {n}^2 (torch CUDA in and out)", ms, "torch avg_pool1d x3", cuda_ms(pool3, 5), ">= 20x")
    print(f"{'':44} wall clock: the call (back once queued) {wall:.3f} ms; "
          f"with torch.cuda.synchronize() {wall_done:.3f} ms")
    print(f"{'':44} 10 calls back to back: {queued:.3f} ms a call (CUDA events)")
    k = kernel_ms(log, "smooth K=3", "registers (plugin default)") if log else None
    if k:
        print(f"{'':44} kernel alone (gsmooth_gpu_bench, same run) {k:.3f} ms: call / kernel = "
              f"{ms / k:.2f}x alone, {queued / k:.2f}x back to back (target <= 1.15x)")
    ms = cuda_ms(lambda: gsmooth.smooth(t, 50))
    line(f"smooth K=50 {n}^2 (torch CUDA)", ms)
    ms = cuda_ms(lambda: gsmooth.integral(t, "rows"), 31)
    line(f"integral rows {n}^2 (torch CUDA)", ms, "torch.cumsum(dim=1)",
         cuda_ms(lambda: torch.cumsum(t, dim=1, dtype=torch.int32)))
    k = kernel_ms(log, "integral rows u8->u32", "warp-shuffle scan") if log else None
    if k:
        print(f"{'':44} kernel alone (gsmooth_gpu_bench) {k:.3f} ms: call / kernel = {ms / k:.2f}x")


def main():
    args = sys.argv[1:]
    opt = lambda name, default: args[args.index(name) + 1] if name in args else default
    bench_host(int(opt("--size", 4096)), np.random.default_rng(0))
    bench_host_float(int(opt("--size", 4096)), np.random.default_rng(2))
    bench_small(np.random.default_rng(3))
    bench_cuda(int(opt("--cuda-size", 16384)), opt("--kernel-log", None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
