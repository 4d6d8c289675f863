#!/usr/bin/env python3
"""fallback_check.py: libpng rereads a file the fast PNG reader refuses, with a note.

When the fast PNG reader refuses a regular file, libpng reads it again and gsmooth says so
in one note; on a pipe, and with GSMOOTH_PNG_DECODER=fast, the first verdict stands.

usage: fallback_check.py GSMOOTH INFLATE_FAULT.so

The fault library (tests/preload/inflate_fault.c) makes the n-th isal_inflate call fail, so
the fast reader refuses a valid file at its first batch or at a later one (rows already
delivered, on the caller's thread or the inflating thread).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

# Rows of 1001 bytes: 261 to a 256 KiB batch, so 1200 rows are five batches, and the
# second thread inflates (four batches or more).
WIDTH, HEIGHT = 1000, 1200


def run(gsmooth, args, env_extra, stdin=None):
    env = dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH="")
    env.update(env_extra)
    return subprocess.run([gsmooth, "--backend", "cpu"] + args, env=env, stdin=stdin,
                          capture_output=True, timeout=120)


def main():
    gsmooth, fault = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL: " + what)

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "photo.png")
        rng = np.random.default_rng(7)
        smooth = np.cumsum(rng.integers(-3, 4, (HEIGHT, WIDTH)), axis=1)
        Image.fromarray((smooth % 256).astype(np.uint8)).save(src, compress_level=6)
        ref = os.path.join(tmp, "ref.png")
        p = run(gsmooth, [src, ref], {"GSMOOTH_PNG_DECODER": "libpng"})
        check(p.returncode == 0, "libpng alone decodes the file")
        with open(ref, "rb") as f:
            ref_bytes = f.read()
        for call in (1, 2, 4, 7):
            out = os.path.join(tmp, "out%d.png" % call)
            fault_env = {"LD_PRELOAD": fault, "GS_TEST_INFLATE_FAIL_CALL": str(call)}
            p = run(gsmooth, [src, out], fault_env)
            err = p.stderr.decode().strip().splitlines()
            check(p.returncode == 0, "call %d fails: exit %d (%s)" % (call, p.returncode, err))
            check(len(err) == 1 and src in err[0] and "the fast PNG reader refused it" in err[0]
                  and "libpng decoded it" in err[0],
                  "call %d fails: one note naming the file and both readers, got %s" % (call, err))
            with open(out, "rb") as f:
                check(f.read() == ref_bytes, "call %d fails: the output is libpng's" % call)
            quiet = run(gsmooth, ["--quiet", src, out], fault_env)
            check(quiet.returncode == 0 and quiet.stderr == b"", "call %d, --quiet: no note" % call)
            # The fast reader's own verdict, for the tests that compare the two readers.
            kept = os.path.join(tmp, "kept%d.png" % call)
            p = run(gsmooth, [src, kept], dict(fault_env, GSMOOTH_PNG_DECODER="fast"))
            err = p.stderr.decode().strip().splitlines()
            check(p.returncode == 1 and len(err) == 1 and "invalid PNG" in err[0]
                  and not os.path.exists(kept),
                  "call %d, GSMOOTH_PNG_DECODER=fast: exit 1, one error line, no output; got %d %s"
                  % (call, p.returncode, err))
            # A pipe cannot rewind: the first verdict stands.
            cat = subprocess.Popen(["cat", src], stdout=subprocess.PIPE)
            p = run(gsmooth, ["-", kept], fault_env, stdin=cat.stdout)
            cat.stdout.close()
            cat.wait()
            err = p.stderr.decode().strip().splitlines()
            check(p.returncode == 1 and len(err) == 1 and "invalid PNG" in err[0]
                  and not os.path.exists(kept),
                  "call %d, a pipe: exit 1, one error line, no output; got %d %s"
                  % (call, p.returncode, err))
        # Without a fault nothing is said.
        p = run(gsmooth, [src, os.path.join(tmp, "plain.png")], {})
        check(p.returncode == 0 and p.stderr == b"", "no fault: no note")
    print("fallback_check: %s" % ("%d failures" % len(failures) if failures else "all cases pass"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
