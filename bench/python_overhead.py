#!/usr/bin/env python3
"""python_overhead.py: where the time of gsmooth.smooth(torch CUDA tensor) goes beyond the kernel.

Python preparation (DLPack views, the result's allocation), the library call, and the call
with its arguments made once; each call queued on torch's current stream alone (what the
calling thread pays) and followed by torch.cuda.synchronize() (until the result is there).

Usage: python3 bench/python_overhead.py [N]   (default 16384; needs torch and a CUDA device)
"""
import ctypes
import sys

import gsmooth
from gsmooth import _n, _prepare, _context
from python_bench import median_ms  # the same warm-up and median, beside this script

SMALL_SIDE = 1024  # images below this side get 1001 timed calls a row


def median_us(fn, reps=31):
    """Median of `reps` timed calls. A call on a small tensor takes tens of microseconds and
    its medians of 31 spread by half their value from run to run: small ones take 1001."""
    return median_ms(fn, reps=reps) * 1e3


def main():
    import torch
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
    t = torch.randint(0, 256, (n, n), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    same = lambda bits, w, h: bits
    ctx = _context("auto")
    p = _prepare(t, same)
    err = _n.error_buffer()
    src, dst = ctypes.byref(p.src), ctypes.byref(p.dst)
    stream = torch.cuda.current_stream().cuda_stream or None
    sync = torch.cuda.synchronize
    rows = [
        ("gsmooth.smooth(t, 3), back once queued", lambda: gsmooth.smooth(t, 3)),
        ("gsmooth.smooth(t, 3) and synchronize", lambda: (gsmooth.smooth(t, 3), sync())),
        ("_prepare (views, torch.empty)", lambda: _prepare(t, same)),
        ("t.__dlpack__(stream=1)", lambda: t.__dlpack__(stream=1)),
        ("t.__dlpack__()", lambda: t.__dlpack__()),
        ("torch.empty_like(t)", lambda: torch.empty_like(t)),
        ("library call, K=3", lambda: _n.lib.gsmooth_smooth(ctx, src, dst, 3, 1, err, _n.ERR_SIZE)),
        ("library call on the stream, K=3", lambda: _n.lib.gsmooth_smooth_on_stream(ctx, src, dst, 3, 1, stream, err,
                                                                                   _n.ERR_SIZE)),
        ("... and synchronize", lambda: (_n.lib.gsmooth_smooth_on_stream(ctx, src, dst, 3, 1, stream, err,
                                                                        _n.ERR_SIZE), sync())),
        ("library call, K=0 (device copy)", lambda: _n.lib.gsmooth_smooth(ctx, src, dst, 0, 1, err, _n.ERR_SIZE)),
        ("library call, K=1", lambda: _n.lib.gsmooth_smooth(ctx, src, dst, 1, 1, err, _n.ERR_SIZE)),
        ("torch.cuda.synchronize()", torch.cuda.synchronize),
    ]
    reps = 31 if n >= SMALL_SIDE else 1001
    print(f"{n}x{n} u8 on {torch.cuda.get_device_name(0)}; medians of {reps}, microseconds")
    for name, fn in rows:
        print(f"  {name:<36} {median_us(fn, reps):9.1f} us", flush=True)
    small = torch.randint(0, 256, (64, 64), dtype=torch.uint8, device="cuda")
    print(f"  {'gsmooth.smooth(64x64 tensor, 3)':<36} {median_us(lambda: gsmooth.smooth(small, 3), 1001):9.1f} us"
          " (median of 1001)")
    print(f"  {'... and synchronize':<36} {median_us(lambda: (gsmooth.smooth(small, 3), sync()), 1001):9.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
