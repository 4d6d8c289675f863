#!/usr/bin/python3
"""batch_scale_check.py: batch at scale through the built binary.

--files-from/--files0-from mixed with positional inputs, --shard splits, --skip-existing,
--manifest records (JSON, whole lines, non-UTF-8 names), outputs two inputs share, exit
codes and one-line errors.

usage: batch_scale_check.py GSMOOTH
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklog import check, same, summary  # noqa: E402

GSMOOTH = os.path.abspath(sys.argv[1])
KEYS = {"input", "output", "status", "error", "width", "height", "bits", "backend", "ms"}



def run(args, stdin=None, env=None):
    e = dict(os.environ, GSMOOTH_BACKEND="cpu")
    e.pop("GSMOOTH_DEVICES", None)
    if env:
        e.update(env)
    return subprocess.run([GSMOOTH, "--quiet"] + args, input=stdin, capture_output=True, env=e)


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data.endswith(b"\n") or not data, f"{path}: ends with a whole line")
    out = []
    for line in data.splitlines():
        rec = json.loads(line)
        check(set(rec) == KEYS, f"{path}: keys {sorted(rec)}")
        out.append(rec)
    return out



def main():
    work = tempfile.mkdtemp(prefix="gs-scale-")
    try:
        os.chdir(work)
        rng = np.random.default_rng(7)
        os.makedirs("in/sub")
        names = []
        for i in range(23):
            h, w = int(rng.integers(1, 40)), int(rng.integers(1, 60))
            if i % 3 == 0:
                a = rng.integers(0, 65536, (h, w), dtype=np.uint16)
                name = f"in/g{i:02d}.pgm" if i % 2 else f"in/g{i:02d}.png"
                Image.fromarray(a).save(name) if name.endswith(".png") else write_pgm16(name, a)
            else:
                a = rng.integers(0, 256, (h, w), dtype=np.uint8)
                name = f"in/g{i:02d}.png"
                Image.fromarray(a).save(name)
            names.append(name)
        # an input whose name is not UTF-8, and one that is not an image
        odd = os.fsdecode(b"in/caf\xe9 \xff.png")
        Image.fromarray(rng.integers(0, 256, (5, 7), dtype=np.uint8)).save(odd)
        names.append(odd)
        with open("in/bad.png", "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n not really")
        names.append("in/bad.png")
        # a second input with the output name of g01.png: the later one must fail
        shutil.copy("in/g02.png", "in/sub/g01.png")
        names.append("in/sub/g01.png")

        # The list: two positional inputs, then a line list, then a NUL list.
        positional, by_line, by_nul = names[:2], names[2:15], names[15:]
        with open("list.txt", "wb") as f:
            f.write(b"\n".join(os.fsencode(n) for n in by_line[:5]) + b"\n\n" +
                    b"\n".join(os.fsencode(n) for n in by_line[5:]) + b"\n")
        with open("list0", "wb") as f:
            f.write(b"".join(os.fsencode(n) + b"\0" for n in by_nul))
        full = positional + by_line + by_nul

        os.mkdir("ref")
        r = run(["-o", "ref", "--manifest", "ref.jsonl", "--files-from", "list.txt",
                 "--files0-from", "list0"] + positional)
        check(r.returncode == 1, f"one process with a bad input exits 1 (got {r.returncode})")
        recs = records("ref.jsonl")
        check(sorted(x["input"] for x in recs) == sorted(full),
              "the reference manifest has every input once")
        by_input = {x["input"]: x for x in recs}
        check(by_input["in/bad.png"]["status"] == "failed" and "in/bad.png" in by_input["in/bad.png"]["error"],
              "a bad input is recorded failed, with its cause")
        dup = by_input["in/sub/g01.png"]
        check(dup["status"] == "failed" and "already the output of in/g01.png" in dup["error"],
              f"the later of two inputs with one output fails: {dup}")
        check(by_input["in/g01.png"]["status"] == "ok", "the earlier one is done")
        okrec = by_input["in/g04.png"]
        a = np.asarray(Image.open("in/g04.png"))
        check(okrec["width"] == a.shape[1] and okrec["height"] == a.shape[0] and okrec["bits"] == 8
              and okrec["backend"] == "cpu" and okrec["ms"] >= 0 and okrec["output"] == "ref/g04.png"
              and okrec["error"] is None, f"an ok record: {okrec}")
        check(by_input["in/g00.png"]["bits"] == 16, "16-bit input recorded as 16 bits")
        check(os.fsencode(by_input[odd]["input"]) == b"in/caf\xe9 \xff.png"
              and by_input[odd]["status"] == "ok", "a non-UTF-8 name round-trips through os.fsencode")
        check(len(os.listdir("ref")) == len(full) - 2, "the reference holds every good output")

        # Three shards into one directory: byte-identical, each input once, each shard its
        # positions.
        os.mkdir("out")
        seen = []
        for i in range(3):
            r = run(["-o", "out", "--shard", f"{i}/3", "--manifest", f"m{i}.jsonl", "--files-from",
                     "list.txt", "--files0-from", "list0"] + positional)
            shard = [n for j, n in enumerate(full) if j % 3 == i]
            recs = records(f"m{i}.jsonl")
            check(sorted(x["input"] for x in recs) == sorted(shard),
                  f"shard {i}/3 handled exactly its positions")
            want_rc = 1 if any(x["status"] == "failed" for x in recs) else 0
            check(r.returncode == want_rc, f"shard {i}/3 exit {r.returncode}, want {want_rc}")
            seen += [x["input"] for x in recs]
        check(sorted(seen) == sorted(full), "the shards cover the list exactly once")
        check(sorted(os.listdir("out")) == sorted(os.listdir("ref")), "the shards wrote the same names")
        check(all(same(f"out/{n}", f"ref/{n}") for n in os.listdir("ref")),
              "the shards' outputs equal one process's")

        # --skip-existing: what exists is skipped (and counted), the rest is done; a leftover
        # temporary file is never taken for an output.
        os.unlink("out/g05.png")
        os.unlink("out/g07.png")
        with open("out/.g07.png.gsmooth-Ab12Cd", "wb") as f:
            f.write(b"partial")
        good = [n for n in full if n not in ("in/bad.png", "in/sub/g01.png")]
        with open("good.txt", "w") as f:
            f.write("\n".join(os.fsdecode(os.fsencode(n)) for n in good if n != odd) + "\n")
        r = run(["-o", "out", "--skip-existing", "--manifest", "skip.jsonl", "--files-from", "good.txt"])
        recs = records("skip.jsonl")
        status = {x["input"]: x["status"] for x in recs}
        check(r.returncode == 0, f"a run where everything is done or skipped exits 0 ({r.returncode})")
        check(status["in/g05.png"] == "ok" and status["in/g07.png"] == "ok"
              and sum(s == "skipped" for s in status.values()) == len(good) - 3,
              f"skipped exactly the existing outputs: {status}")
        check(same("out/g07.png", "ref/g07.png") and same("out/g05.png", "ref/g05.png"),
              "the redone outputs are exact")
        r2 = subprocess.run([GSMOOTH, "-o", "out", "--skip-existing", "--files-from", "good.txt"],
                            capture_output=True, env=dict(os.environ, GSMOOTH_BACKEND="cpu"))
        check(b"0 done, 0 failed, %d skipped" % (len(good) - 1) in r2.stderr,
              f"the summary counts skipped files: {r2.stderr!r}")

        # --skip-existing skips only a finished output, a regular file: a directory, or a
        # symbolic link to nothing, under an output name is a failure with one clear line,
        # in batch and in single-file mode alike.
        os.makedirs("blocked/g04.png")
        os.symlink("nowhere/missing.png", "blocked/g02.png")
        r = run(["-o", "blocked", "--skip-existing", "--manifest", "blocked.jsonl", "in/g04.png", "in/g02.png"])
        status = {x["input"]: (x["status"], x["error"] or "") for x in records("blocked.jsonl")}
        check(r.returncode == 1 and status["in/g04.png"][0] == "failed"
              and "is a directory" in status["in/g04.png"][1]
              and status["in/g02.png"][0] == "failed" and "symbolic link to nothing" in status["in/g02.png"][1],
              f"--skip-existing never skips a directory or a dangling link: {r.returncode} {status}")
        for target, why in (("blocked/g04.png", "is a directory"), ("blocked/g02.png", "symbolic link to nothing")):
            r = run(["--skip-existing", "in/g08.png", target])
            lines = r.stderr.decode().strip().splitlines()
            check(r.returncode == 1 and len(lines) == 1 and target in lines[0] and why in lines[0],
                  f"single mode, {target}: exit 1 and one line saying it {why}: {r.returncode} {lines}")
        check(os.path.isdir("blocked/g04.png") and os.readlink("blocked/g02.png") == "nowhere/missing.png",
              "the directory and the link are left as they were")

        # The manifest's bits are the input's, whatever --depth writes.
        os.mkdir("depth8")
        r = run(["-o", "depth8", "--depth", "8", "--manifest", "depth8.jsonl", "in/g00.png"])
        rec = records("depth8.jsonl")[0]
        with open("depth8/g00.png", "rb") as f:
            ihdr_depth = f.read(25)[24]
        check(r.returncode == 0 and rec["bits"] == 16 and ihdr_depth == 8,
              f"--depth 8 on a 16-bit input: written 8-bit ({ihdr_depth}), recorded as 16 ({rec})")

        # A run killed with SIGKILL while it writes leaves its temporary file, named
        # .<output>.gsmooth-XXXXXX: never an output name, and what the README's clean-up finds.
        Image.fromarray(rng.integers(0, 256, (1500, 1500), dtype=np.uint8)).save("in/slow.png")
        os.mkdir("killed")
        p = subprocess.Popen([GSMOOTH, "--quiet", "--backend", "cpu", "--threads", "1", "--iters", "4000",
                              "-o", "killed", "in/slow.png"], stderr=subprocess.DEVNULL)
        temp = []
        for _ in range(1000):
            temp = os.listdir("killed")
            if temp or p.poll() is not None:
                break
            subprocess.run(["sleep", "0.01"])
        p.send_signal(signal.SIGKILL)
        p.wait()
        temp = os.listdir("killed")
        check(len(temp) == 1 and re.fullmatch(r"\.slow\.png\.gsmooth-[A-Za-z0-9]{6}", temp[0]) is not None,
              f"a killed run leaves .slow.png.gsmooth-XXXXXX (random X's), got {temp}")
        subprocess.run(["find", "killed", "-name", ".*.gsmooth-??????", "-type", "f", "-delete"])
        check(os.listdir("killed") == [], "the README's find command removes it")

        # Lists from standard input; an empty list is an empty batch.
        os.mkdir("stdin_out")
        r = run(["-o", "stdin_out", "--files-from", "-"], stdin=b"in/g01.png\nin/g02.png\n")
        check(r.returncode == 0 and sorted(os.listdir("stdin_out")) == ["g01.png", "g02.png"],
              "--files-from - reads standard input")
        r = run(["-o", "stdin_out", "--files0-from", "-"], stdin=b"")
        check(r.returncode == 0, "an empty list is an empty batch, exit 0")
        r = run(["-o", "stdin_out", "--shard", "5/7", "in/g01.png"])
        check(r.returncode == 0, "an empty shard exits 0")

        # Single-file mode: --skip-existing and --manifest apply too.
        shutil.copy("ref/g04.png", "single.png")
        before = os.stat("single.png").st_mtime_ns
        r = run(["--skip-existing", "--manifest", "single.jsonl", "in/g08.png", "single.png"])
        check(r.returncode == 0 and os.stat("single.png").st_mtime_ns == before
              and same("single.png", "ref/g04.png"), "single mode skips an existing output")
        with open("-", "wb") as f:  # a file named "-" never stands for standard output
            f.write(b"not an output")
        r = run(["--skip-existing", "in/g08.png", "-"])
        check(r.returncode == 0 and r.stdout.startswith(b"\x89PNG"), "--skip-existing never skips standard output")
        os.unlink("-")
        r = run(["--manifest", "single.jsonl", "in/g08.png", "single2.png"])
        recs = records("single.jsonl")
        check([x["status"] for x in recs] == ["skipped", "ok"] and recs[1]["output"] == "single2.png",
              f"single mode appends its records: {recs}")

        # Names and directories a cluster user gives: a newline in a NUL-separated name stays
        # one error line; "out/" names out/x.png; an input listed twice, or one that would be
        # its own output, is refused; a name near NAME_MAX still gets a temporary name.
        with open("odd0", "wb") as f:
            f.write(b"in/no\nsuch.png\0in/g01.png\0in/g02.png\0in/g01.png\0")
        os.mkdir("slash")
        r = run(["-o", "slash/", "--manifest", "slash.jsonl", "--files0-from", "odd0"])
        recs = {(x["input"], x["status"]): x for x in records("slash.jsonl")}
        check(r.returncode == 1 and r.stderr.count(b"\n") == 3 and b"in/no\\nsuch.png: " in r.stderr,
              f"a newline in a name is shown escaped: two error lines and the summary: {r.stderr!r}")
        check(recs[("in/g01.png", "ok")]["output"] == "slash/g01.png", "-o DIR/ gives DIR/name")
        check("listed twice" in recs[("in/g01.png", "failed")]["error"], "an input listed twice is refused as such")
        shutil.copy("in/g04.png", "self.png")
        before_bytes = open("self.png", "rb").read()
        r = run(["-o", ".", "self.png"])
        check(r.returncode == 1 and b"is the input itself" in r.stderr and open("self.png", "rb").read() == before_bytes,
              f"an output that is its input is refused, the input kept: {r.stderr!r}")
        long_name = "n" * 246 + ".png"
        shutil.copy("in/g04.png", long_name)
        r = run([long_name, "out_" + long_name[4:]])
        check(r.returncode == 0 and os.path.exists("out_" + long_name[4:]), f"a 250-byte output name: {r.stderr!r}")
        os.unlink(long_name)

        # --manifest -: the lines on standard output; a full disk ends the manifest with one
        # error and exit 1, the images still written.
        os.mkdir("mstdout")
        r = run(["-o", "mstdout", "--manifest", "-", "in/g01.png", "in/g02.png"])
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        check(r.returncode == 0 and sorted(x["input"] for x in lines) == ["in/g01.png", "in/g02.png"],
              "--manifest - writes the records to standard output")
        os.mkdir("mfull")
        r = run(["-o", "mfull", "--manifest", "/dev/full", "in/g01.png", "in/g02.png", "in/g04.png"])
        check(r.returncode == 1 and r.stderr.count(b"/dev/full") == 1 and len(os.listdir("mfull")) == 3,
              f"a manifest that cannot be written: one error, exit 1, outputs kept: {r.stderr!r}")

        # Usage errors: exit 2, one line. Run-time errors in lists: exit 1, one line.
        for args, env in [(["--shard", "3/3", "-o", "out", "in/g01.png"], None),
                          (["--shard", "1/2", "in/g01.png", "x.png"], None),
                          (["--files-from", "list.txt", "in/g01.png", "x.png"], None),
                          (["-o", "out"], None),
                          (["-o", "out", "--files-from", "-", "--files0-from", "-"], None),
                          (["--manifest", "-", "in/g01.png", "-"], None),
                          (["--manifest", "", "-o", "out", "in/g01.png"], None),
                          (["--devices", "0,0", "-o", "out", "in/g01.png"], None),
                          (["--devices", "first", "-o", "out", "in/g01.png"], None),
                          (["-o", "out", "in/g01.png"], {"GSMOOTH_DEVICES": "gpu0"})]:
            r = run(args, env=env)
            check(r.returncode == 2 and r.stderr.count(b"\n") == 1,
                  f"usage error {args} {env}: exit {r.returncode}, {r.stderr!r}")
        with open("nul.txt", "wb") as f:
            f.write(b"in/g01.png\nin/g0\x002.png\n")
        with open("plainfile", "wb") as f:  # a manifest's directory that cannot be made
            f.write(b"x")
        for args, needle in [(["-o", "out", "--files-from", "missing.txt"], b"missing.txt"),
                             (["-o", "out", "--files-from", "nul.txt"], b"line 2"),
                             (["-o", "out", "--manifest", "plainfile/m.jsonl", "in/g01.png"],
                              b"plainfile: exists and is not a directory")]:
            r = run(args)
            check(r.returncode == 1 and r.stderr.count(b"\n") == 1 and needle in r.stderr,
                  f"run-time error {args}: exit {r.returncode}, {r.stderr!r}")
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)
    return summary("batch_scale_check")


def write_pgm16(path, a):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n65535\n" % (a.shape[1], a.shape[0]))
        f.write(a.astype(">u2").tobytes())


if __name__ == "__main__":
    sys.exit(main())
