#!/usr/bin/env python3
"""torch_anchors.py: PyTorch anchors for bench/gpu_bench.cu.

avg_pool1d iterated K times and torch.cumsum on 16384x16384 u8.

Usage: python3 bench/torch_anchors.py OUT_FILE [--size N]
Writes lines "op<TAB>anchor<TAB>median ms" that gsmooth_gpu_bench --anchors OUT_FILE prints
beside its own rows. Without torch or without a GPU it writes nothing and says why (exit 0).
Times are medians of CUDA event pairs after warm-up, on the same gradient-plus-noise kind of
image the bench uses (never zeros).
"""
import sys

WARMUPS = 2
REPS_FAST = 10
REPS_SLOW = 3        # a first run above SLOW_MS takes fewer repetitions
SLOW_MS = 50.0
KS = (1, 3, 10, 50, 100)


def median_ms(torch, fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first = 0.0
    for _ in range(WARMUPS):
        start.record(); fn(); end.record(); end.synchronize()
        first = start.elapsed_time(end)
    times = []
    for _ in range(REPS_SLOW if first > SLOW_MS else REPS_FAST):
        start.record(); fn(); end.record(); end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out_path = sys.argv[1]
    n = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--size" else 16384
    lines = []
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"torch anchors: skipped ({e})")
        open(out_path, "w").close()
        return 0
    if not torch.cuda.is_available():
        print("torch anchors: skipped (no CUDA device for torch)")
        open(out_path, "w").close()
        return 0
    dev = torch.device("cuda")
    y = torch.arange(n, device=dev, dtype=torch.int32).view(n, 1)
    x = torch.arange(n, device=dev, dtype=torch.int32).view(1, n)
    gen = torch.Generator(device=dev).manual_seed(1)
    noise = torch.randint(-24, 25, (n, n), device=dev, dtype=torch.int32, generator=gen)
    img = (x * 160 // n + y * 80 // n + noise).clamp(0, 255).to(torch.uint8)
    del noise

    def smooth(k):
        def run():
            v = img.float().unsqueeze(1)  # (rows, 1, width): each row one signal
            for _ in range(k):
                v = F.avg_pool1d(v, kernel_size=3, stride=1, padding=1, count_include_pad=False)
            return v.squeeze(1).round().clamp(0, 255).to(torch.uint8)
        return run

    for k in KS:
        ms = median_ms(torch, smooth(k))
        lines.append(f"smooth K={k}\tPyTorch avg_pool1d x K\t{ms:.4f}")
    ms = median_ms(torch, lambda: torch.cumsum(img, dim=1, dtype=torch.int32))
    lines.append(f"integral rows u8->u32\ttorch.cumsum (int32)\t{ms:.4f}")
    ms = median_ms(torch, lambda: torch.cumsum(torch.cumsum(img, dim=1, dtype=torch.int64), dim=0))
    lines.append(f"integral 2d u8->u64\ttorch.cumsum x2 (int64)\t{ms:.4f}")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"torch anchors ({torch.__version__}, {torch.cuda.get_device_name()}):")
    for line in lines:
        print("  " + line.replace("\t", " | "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
