#!/usr/bin/python3
"""cuda_devices_check.py: the CUDA backend on every device against one device and the CPU.

Byte for byte, --devices all against one device and the CPU: one image several strips tall
(its strips spread over the devices) in every mode, and a batch (its files spread). Exit 77
without a CUDA device.

usage: cuda_devices_check.py GSMOOTH
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklog import check, same, summary  # noqa: E402

GSMOOTH = os.path.abspath(sys.argv[1])



def run(args):
    env = dict(os.environ)
    env.pop("GSMOOTH_DEVICES", None)
    env.pop("GSMOOTH_BACKEND", None)
    return subprocess.run([GSMOOTH, "--quiet"] + args, capture_output=True, env=env)


def write_pgm(path, a):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n%d\n" % (a.shape[1], a.shape[0], 65535 if a.dtype == np.uint16 else 255))
        f.write(a.astype(">u2" if a.dtype == np.uint16 else np.uint8).tobytes())



def main():
    listing = subprocess.run([GSMOOTH, "--list-backends", "-v"], capture_output=True, text=True).stdout
    cuda = [line for line in listing.splitlines() if line.startswith("cuda ")]
    if not cuda or "unavailable" in cuda[0]:
        print("skipped: no CUDA device")
        return 77
    devices = next((int(line.split()[1]) for line in listing.splitlines() if line.strip().startswith("devices:")), 1)
    print(f"cuda_devices_check: {devices} device(s)")
    work = tempfile.mkdtemp(prefix="gs-cuda-devices-")
    try:
        os.chdir(work)
        rng = np.random.default_rng(5)
        # 8-bit 12000 x 6000 (69 MB: several 64 MiB CUDA strips; spread, 2 a device at least)
        # and 16-bit 3001 x 2500, with a lone 1 among zeros in one row (far passes).
        a8 = rng.integers(0, 256, (6000, 12000), dtype=np.uint8)
        a16 = rng.integers(0, 65536, (2500, 3001), dtype=np.uint16)
        a16[1234, :] = 0
        a16[1234, 1500] = 1
        write_pgm("a8.pgm", a8)
        write_pgm("a16.pgm", a16)
        runs = [("x3", ["--iters", "3"], ".pgm"), ("x90", ["--iters", "90"], ".pgm"),
                ("y7", ["--iters", "7", "--axis", "y"], ".pgm"), ("xy3", ["--iters", "3", "--axis", "xy"], ".pgm"),
                ("rows", ["--integral=rows"], ".npy"), ("2d", ["--integral=2d"], ".npy")]
        for src in ["a8.pgm", "a16.pgm"]:
            for name, args, ext in runs:
                outs = {}
                for label, backend in [("cpu", ["--backend", "cpu"]),
                                       ("one", ["--backend", "cuda", "--devices", "0"]),
                                       ("all", ["--backend", "cuda", "--devices", "all"])]:
                    outs[label] = f"{label}_{name}_{src}{ext}"
                    r = run(args + backend + [src, outs[label]])
                    check(r.returncode == 0, f"{src} {name} {label}: {r.stderr!r}")
                check(same(outs["cpu"], outs["one"]) and same(outs["cpu"], outs["all"]),
                      f"{src} {name}: CPU, one device and all devices give the same bytes")
                for o in outs.values():
                    os.unlink(o)
        os.makedirs("in")
        for i in range(12):
            write_pgm(f"in/f{i}.pgm", rng.integers(0, 256, (int(rng.integers(500, 1500)), 2048), dtype=np.uint8))
        files = sorted(f"in/{n}" for n in os.listdir("in"))
        for label, backend in [("cpu", ["--backend", "cpu"]), ("all", ["--backend", "cuda", "--devices", "all"])]:
            os.makedirs(label)
            r = run(backend + ["--iters", "50", "-o", label] + files)
            check(r.returncode == 0, f"batch {label}: {r.stderr!r}")
        check(all(same(f"cpu/{n}", f"all/{n}") for n in os.listdir("cpu")), "batch over all devices equals the CPU")
        r = run(["--backend", "cuda", "--devices", str(devices), "a16.pgm", "none.pgm"])
        check(r.returncode == 1 and b"does not exist" in r.stderr and r.stderr.count(b"\n") == 1,
              f"device {devices} does not exist: exit 1, one line: {r.stderr!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)
    return summary("cuda_devices_check")


if __name__ == "__main__":
    sys.exit(main())
