#!/usr/bin/python3
"""devices_check.py: --devices and GSMOOTH_DEVICES on a backend with pretend devices.

The test backend is tests/plugins/fake_devices.c: one image's strips spread over the chosen
devices (not the 2d integral's), batch files spread over them, the bytes always those of the
CPU backend.

usage: devices_check.py GSMOOTH FAKE_DEVICES_SO
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklog import check, same, summary  # noqa: E402

GSMOOTH, FAKE = (os.path.abspath(p) for p in sys.argv[1:3])



def run(args, env=None):
    e = dict(os.environ, GS_FAKE_DEVICE_LOG=os.path.abspath("log"))
    e.pop("GSMOOTH_DEVICES", None)
    e.pop("GSMOOTH_BACKEND", None)
    e.update(env or {})
    if os.path.exists("log"):
        os.unlink("log")
    r = subprocess.run([GSMOOTH, "--quiet"] + args, capture_output=True, env=e)
    log = []
    if os.path.exists("log"):
        with open("log") as f:
            log = [line.split() for line in f]
    return r, log



def main():
    work = tempfile.mkdtemp(prefix="gs-devices-")
    try:
        os.chdir(work)
        rng = np.random.default_rng(3)
        Image.fromarray(rng.integers(0, 256, (200, 300), dtype=np.uint8)).save("a8.png")
        Image.fromarray(rng.integers(0, 65536, (123, 170), dtype=np.uint16)).save("a16.png")
        fake = ["--backend", FAKE]

        for src in ["a8.png", "a16.png"]:
            height = 200 if src == "a8.png" else 123
            for name, args, spread in [("x5", ["--iters", "5"], True),
                                       ("y5", ["--iters", "5", "--axis", "y"], True),
                                       ("xy3", ["--iters", "3", "--axis", "xy"], True),
                                       ("rows", ["--integral=rows"], True),
                                       ("2d", ["--integral=2d"], False)]:
                ext = ".npy" if "--integral" in args[0] else ".png"
                want, got = f"cpu_{name}{ext}", f"fake_{name}{ext}"
                r, _ = run(args + ["--backend", "cpu", src, want])
                check(r.returncode == 0, f"cpu {name} {src}: {r.stderr!r}")
                r, log = run(args + fake + ["--devices", "all", src, got])
                check(r.returncode == 0 and same(want, got), f"{src} {name} on 3 devices equals the CPU")
                devices = {int(x[0]) for x in log}
                check(sum(int(x[2]) for x in log) == height, f"{src} {name}: every row once ({log})")
                if spread:
                    check(devices == {0, 1, 2}, f"{src} {name}: strips on every device, got {devices}")
                else:
                    check(len(devices) == 1, f"{src} {name}: the 2d integral stays on one device ({devices})")

        r, log = run(fake + ["--devices", "2,0", "--iters", "4", "a8.png", "two.png"])
        check(r.returncode == 0 and {int(x[0]) for x in log} == {0, 2}, f"--devices 2,0 uses 0 and 2: {log}")
        r, log = run(fake + ["--iters", "4", "a8.png", "env.png"], env={"GSMOOTH_DEVICES": "1"})
        check(r.returncode == 0 and {int(x[0]) for x in log} == {1}, "GSMOOTH_DEVICES=1 uses device 1")
        r, log = run(fake + ["--devices", "0", "--iters", "4", "a8.png", "env2.png"], env={"GSMOOTH_DEVICES": "1"})
        check(r.returncode == 0 and {int(x[0]) for x in log} == {0}, "--devices wins over GSMOOTH_DEVICES")
        r, log = run(fake + ["--iters", "4", "a8.png", "none.png"])
        check(r.returncode == 0 and {int(x[0]) for x in log} == {-1}, "no --devices: the plugin's choice")
        check(same("two.png", "none.png") and same("env.png", "none.png"), "the bytes never depend on the devices")
        r, log = run(fake + ["--devices", "7", "a8.png", "seven.png"])
        check(r.returncode == 1 and r.stderr.count(b"\n") == 1 and b"does not exist" in r.stderr
              and not os.path.exists("seven.png"), f"a device that does not exist: exit 1, one line: {r.stderr!r}")
        r, _ = run(["--backend", "cpu", "--devices", "all", "--iters", "4", "a8.png", "cpu_all.png"])
        check(r.returncode == 0 and same("cpu_all.png", "none.png"), "--devices is ignored by a backend without devices")

        # A batch: files spread over the devices, one device a worker. Each file takes tens
        # of milliseconds on the reference, so every worker gets some.
        os.makedirs("in")
        for i in range(9):
            Image.fromarray(rng.integers(0, 256, (int(rng.integers(200, 300)), 400), dtype=np.uint8)).save(f"in/f{i}.png")
        os.makedirs("ref")
        os.makedirs("out")
        files = sorted(f"in/{n}" for n in os.listdir("in"))
        r, _ = run(["--backend", "cpu", "--iters", "100", "-o", "ref"] + files)
        check(r.returncode == 0, "cpu batch")
        r, log = run(fake + ["--devices", "all", "--jobs", "3", "--iters", "100", "-o", "out"] + files)
        check(r.returncode == 0 and {int(x[0]) for x in log} == {0, 1, 2},
              f"batch files spread over the devices: {sorted({int(x[0]) for x in log})}")
        instances = {x[3]: {y[0] for y in log if y[3] == x[3]} for x in log}
        check(len(instances) == 3 and all(len(d) == 1 for d in instances.values()),
              f"batch: one instance a worker, on one device: {instances}")
        check(all(same(f"out/{n}", f"ref/{n}") for n in os.listdir("ref")), "batch on 3 devices equals the CPU")
        # Fewer workers than devices: worker k takes devices k, k + workers, ... as lanes.
        for jobs in ("1", "2"):
            r, log = run(fake + ["--devices", "all", "--jobs", jobs, "--iters", "100", "-o", "out"] + files[:4])
            check(r.returncode == 0 and {int(x[0]) for x in log} == {0, 1, 2},
                  f"--jobs {jobs} with 3 devices uses all of them: {sorted({int(x[0]) for x in log})}")
        # A one-strip image starts only the first device (the second does not even exist).
        Image.fromarray(rng.integers(0, 256, (1, 50), dtype=np.uint8)).save("h1.png")
        r, log = run(fake + ["--devices", "0,5", "h1.png", "h1_out.png"])
        check(r.returncode == 0 and {int(x[0]) for x in log} == {0}, f"one strip, one device started: {r.stderr!r}")
        r = subprocess.run([GSMOOTH, "--list-backends", "-v", "--plugin-dir", os.path.dirname(FAKE)],
                           capture_output=True)
        check(b"devices: 3" in r.stdout, f"--list-backends -v shows the devices: {r.stdout!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)
    return summary("devices_check")


if __name__ == "__main__":
    sys.exit(main())
