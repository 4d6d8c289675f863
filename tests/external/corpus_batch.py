#!/usr/bin/env python3
"""corpus_batch.py: every external corpus file through one gsmooth batch.

Under valgrind (no error may be reported), or twice under different heap contents
(MALLOC_PERTURB_), where every output and every verdict must be the same bytes.

usage: corpus_batch.py GSMOOTH heap|valgrind

The files are linked into one folder under names made unique from their paths, so the
batch decodes each one (its outputs would otherwise share names). The batch goes on past
the files it refuses; it must exit 0 or 1 and never crash.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_external import corpus_files  # noqa: E402

# glibc fills each allocation with the complement of this byte and freed memory with the
# byte itself: two runs with different bytes differ wherever heap contents leak out.
PERTURB = ("85", "170")
VALGRIND = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite"]
VALGRIND_VERDICT = 99


def link_corpus(folder):
    names = []
    for path in corpus_files():
        # a/b.psd -> a__b_psd.psd: its output (b.png, the formats gsmooth cannot write
        # become PNG) keeps the extension in its name, so hopper.psd and hopper.png part.
        rel = os.path.relpath(path, HERE)
        stem, ext = os.path.splitext(rel)
        name = (stem + ext.replace(".", "_")).replace(os.sep, "__") + ext
        os.symlink(path, os.path.join(folder, name))
        names.append(os.path.join(folder, name))
    return names


def batch(gsmooth, inputs, out, manifest, env_extra, prefix=()):
    os.mkdir(out)
    env = dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH="")
    env.update(env_extra)
    cmd = list(prefix) + [gsmooth, "--quiet", "--backend", "cpu", "--iters", "1", "--jobs", "2",
                          "--manifest", manifest, "-o", out] + inputs
    return subprocess.run(cmd, env=env, capture_output=True, timeout=3000)


def main():
    gsmooth, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "in")
        os.mkdir(folder)
        inputs = link_corpus(folder)
        if mode == "valgrind":
            p = batch(gsmooth, inputs, os.path.join(tmp, "out"), os.path.join(tmp, "m.jsonl"), {},
                      VALGRIND)
            err = p.stderr.decode("utf-8", "replace")
            reports = [line for line in err.splitlines() if line.startswith("==")]
            if p.returncode == VALGRIND_VERDICT or reports:
                print("\n".join(reports[:80]))
                print("FAIL: valgrind reports errors over the external corpora")
                return 1
            if p.returncode not in (0, 1):
                print(err[-2000:])
                print("FAIL: the batch exits %d" % p.returncode)
                return 1
            with open(os.path.join(tmp, "m.jsonl")) as f:
                recs = [json.loads(line) for line in f]
            ok = sum(r["status"] == "ok" for r in recs)
            print("valgrind over the external corpora: %d files in one batch, %d decoded, %d refused, "
                  "exit %d, 0 valgrind errors" % (len(recs), ok, len(recs) - ok, p.returncode))
            return 0 if len(recs) == len(inputs) else 1
        runs = []
        for i, byte in enumerate(PERTURB):
            out, manifest = os.path.join(tmp, "out%d" % i), os.path.join(tmp, "m%d.jsonl" % i)
            p = batch(gsmooth, inputs, out, manifest, {"MALLOC_PERTURB_": byte})
            if p.returncode not in (0, 1):
                print(p.stderr.decode("utf-8", "replace")[-2000:])
                print("FAIL: the batch with MALLOC_PERTURB_=%s exits %d" % (byte, p.returncode))
                return 1
            with open(manifest) as f:
                verdicts = {r["input"]: (r["status"], r["error"]) for r in map(json.loads, f)}
            runs.append((out, verdicts))
        (out_a, va), (out_b, vb) = runs
        bad = [name for name in va if va[name] != vb.get(name)]
        files = sorted(os.listdir(out_a))
        if files != sorted(os.listdir(out_b)):
            bad.append("the two batches wrote other file names")
        for name in files:
            with open(os.path.join(out_a, name), "rb") as fa, open(os.path.join(out_b, name), "rb") as fb:
                if fa.read() != fb.read():
                    bad.append("output %s differs" % name)
        for line in bad[:40]:
            print("FAIL: %s" % line)
        print("heap contents: %d corpus files decoded twice (MALLOC_PERTURB_=%s and %s): %d outputs, "
              "%d differences" % (len(va), PERTURB[0], PERTURB[1], len(files), len(bad)))
        return 1 if bad or len(va) != len(inputs) else 0


if __name__ == "__main__":
    sys.exit(main())
