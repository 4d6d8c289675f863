#!/usr/bin/python3
"""check_float_writes.py: gsmooth's float TIFF and .npy output read by tifffile and numpy, and .npy input through the CLI.

The writer's files (test_float_io --write DIR) are read back bit for bit against the raw
samples given to it: .npy by numpy.load, TIFF by tifffile (its tags, and its own decoding
where no predictor is used; the floating-point predictor's strips are inflated with zlib
and undone by floatpred.py, because tifffile needs imagecodecs for predictor 3). Then
8 and 16-bit .npy files of numpy go through gsmooth itself, from a file and from a pipe.

usage: check_float_writes.py TEST_FLOAT_IO GSMOOTH
"""
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))
EXTERNAL = os.path.join(HERE, "..", "external", "float")
sys.path.insert(0, EXTERNAL)
import floatpred  # noqa: E402

failures = 0


def check(label, ok, detail=""):
    global failures
    print("%s: %s%s" % ("ok" if ok else "FAIL", label, "" if ok or not detail else " (%s)" % detail))
    failures += 0 if ok else 1


def same_bits(got, want):
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    return got.shape == want.shape and got.dtype.itemsize == want.dtype.itemsize and \
        got.tobytes() == want.tobytes()


def tiff_samples(path, dtype):
    """The first page's samples, native, with its compression and predictor."""
    with tifffile.TiffFile(path) as tif:
        page = tif.pages[0]
        tags = (int(page.compression), int(page.predictor), int(page.sampleformat), page.bitspersample)
        if page.predictor != 3:
            return page.asarray(), tags
        rows = []
        with open(path, "rb") as f:
            for offset, count in zip(page.dataoffsets, page.databytecounts):
                f.seek(offset)
                raw = zlib.decompress(f.read(count))
                height = len(raw) // (page.imagewidth * np.dtype(dtype).itemsize)
                rows.append(floatpred.fp_unpredict(raw, height, page.imagewidth, dtype))
        return np.concatenate(rows)[: page.imagelength], tags


def check_writes(test_float_io, tmp):
    out = os.path.join(tmp, "written")
    os.mkdir(out)
    r = subprocess.run([test_float_io, "--write", out], capture_output=True)
    check("test_float_io --write", r.returncode == 0, r.stderr.decode())
    for name in sorted(os.listdir(out)):
        if name.endswith(".raw"):
            continue
        dtype = np.float64 if name.startswith("f64") else np.float32
        raw = np.fromfile(os.path.join(out, name + ".raw"), dtype=dtype)
        path = os.path.join(out, name)
        if name.endswith(".npy"):
            got = np.load(path)
            check(name + ": numpy reads it bit for bit", got.dtype == np.dtype(dtype).newbyteorder("<")
                  and same_bits(got.reshape(-1), raw), "%s %s" % (got.dtype, got.shape))
            continue
        got, (compression, predictor, sampleformat, bits) = tiff_samples(path, dtype)
        stored = "_store" in name
        check(name + ": tags", sampleformat == 3 and bits == 8 * np.dtype(dtype).itemsize
              and (compression, predictor) == ((1, 1) if stored else (8, 3)),
              "compression %d predictor %d sampleformat %d bits %d" % (compression, predictor, sampleformat, bits))
        check(name + ": samples bit for bit", same_bits(got.astype(dtype).reshape(-1), raw))


def run(gsmooth, args, stdin=None):
    return subprocess.run([gsmooth, "--quiet"] + args, input=stdin, capture_output=True,
                          env=dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH=""))


def check_cli(gsmooth, tmp):
    """8/16-bit .npy through the whole command line: --iters 0 keeps the samples."""
    for name, dtype in (("u1_v1.npy", np.uint8), ("u1_v3.npy", np.uint8), ("u2_be.npy", np.uint16),
                        ("u1_lt.npy", np.uint8)):
        src = os.path.join(EXTERNAL, name)
        want = np.load(src).astype(dtype)
        for via in ("file", "pipe"):
            out = os.path.join(tmp, "%s_%s.npy" % (name, via))
            if via == "file":
                r = run(gsmooth, ["--iters", "0", src, out])
            else:
                with open(src, "rb") as f:
                    r = run(gsmooth, ["--iters", "0", "-", out], stdin=f.read())
            ok = r.returncode == 0 and os.path.exists(out)
            got = np.load(out) if ok else None
            check("gsmooth --iters 0 %s (%s)" % (name, via), ok and same_bits(got, want),
                  r.stderr.decode() or (got.dtype if got is not None else ""))
        png = os.path.join(tmp, name + ".png")
        r = run(gsmooth, [src, png])
        check("gsmooth %s out.png" % name, r.returncode == 0 and os.path.getsize(png) > 0, r.stderr.decode())
    # A refused .npy: exit 1, one line naming the file and the dtype.
    src = os.path.join(EXTERNAL, "refuse_i4.npy")
    r = run(gsmooth, [src, os.path.join(tmp, "refused.png")])
    err = r.stderr.decode()
    check("gsmooth refuses int32 .npy", r.returncode == 1 and len(err.strip().splitlines()) == 1 and
          src in err and "int32 .npy" in err, err)
    # A float32 file into an integer-only format, or with --depth 8: the file decides, so
    # exit 1 (not a usage error), one line naming the file, and an existing output untouched.
    src = os.path.join(EXTERNAL, "f4_v1.npy")
    for ext, args, what in (("png", ["--iters", "1"], "out.png"), ("tif", ["--depth", "8"], "--depth 8")):
        kept = os.path.join(tmp, "kept." + ext)
        with open(kept, "wb") as f:
            f.write(b"earlier output")
        r = run(gsmooth, args + [src, kept])
        err = r.stderr.decode()
        with open(kept, "rb") as f:
            untouched = f.read() == b"earlier output"
        check("gsmooth refuses float32 .npy (%s) with exit 1" % what,
              r.returncode == 1 and len(err.strip().splitlines()) == 1 and src in err and untouched,
              "exit %d: %s" % (r.returncode, err))
    # The pixel limit holds before the body: a pipe that sends only the header is refused.
    with open(os.path.join(EXTERNAL, "u1_v1.npy"), "rb") as f:
        data = f.read()
    r = run(gsmooth, ["--max-pixels", "100", "-", os.path.join(tmp, "limit.png")], stdin=data[:128])
    check("gsmooth --max-pixels on a .npy pipe", r.returncode == 1 and b"pixel limit" in r.stderr, r.stderr.decode())


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    with tempfile.TemporaryDirectory() as tmp:
        check_writes(sys.argv[1], tmp)
        check_cli(sys.argv[2], tmp)
    print("check_float_writes.py: %d failures" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
