#!/usr/bin/python3
"""fits_check.py: gsmooth's FITS output read by astropy, and FITS through the command line.

usage: fits_check.py FITS_WRITE_TOOL GSMOOTH

- Every writer kind (unsigned 8, 16, 32, 64; float32; float64), written by
  fits_write_tool to a file and to standard output, is read back by astropy bit for bit:
  the dtype astropy gives (uint8 ... float64: the unsigned BZERO convention understood),
  every sample's bits (NaN payloads, infinities, subnormals, signed zeros, the extremes).
- WCS cards kept from an input: every WCS card of tests/external/fits/gen_wcs.fits is in
  the output with the same value, astropy.wcs gives the same transformation, and nothing
  else of the input's header (OBJECT) comes along.
- The command line on 8 and 16-bit FITS: --iters 0 gives the input's samples in the
  input's row order (FITS out, and PNG out against PIL), from a file and from a pipe; the
  refusals exit 1 with one line.
"""
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from astropy.io import fits
from astropy import log
from astropy.wcs import WCS

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "external", "fits")
WIDTH, HEIGHT = 29, 17  # rows written three at a time: the last write is partial

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def samples(dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        a = rng.integers(0, np.iinfo(dtype).max, (HEIGHT, WIDTH), dtype=dtype, endpoint=True)
        a[0, :4] = [0, 1, np.iinfo(dtype).max, np.iinfo(dtype).max // 2 + 1]
        return a
    a = rng.normal(0, 1e4, (HEIGHT, WIDTH)).astype(dtype)
    fi = np.finfo(dtype)
    a[0, :10] = [np.nan, np.inf, -np.inf, -0.0, 0.0, fi.max, -fi.max, fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal]
    bits = a.view(np.uint32 if dtype.itemsize == 4 else np.uint64)
    bits[1, 0] = 0x7FC0BEEF if dtype.itemsize == 4 else 0x7FF800000000BEEF  # a NaN with a payload
    return a


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def writer_kinds(tool, tmp):
    rng = np.random.default_rng(7)
    for kind, bits, dtype in [("uint", 8, np.uint8), ("uint", 16, np.uint16), ("uint", 32, np.uint32),
                              ("uint", 64, np.uint64), ("float", 32, np.float32), ("float", 64, np.float64)]:
        data = samples(dtype, rng)
        raw = os.path.join(tmp, "in.raw")
        data.tofile(raw)  # native order, row 0 first
        out = os.path.join(tmp, "%s%d.fits" % (kind, bits))
        r = subprocess.run([tool, kind, str(bits), str(WIDTH), str(HEIGHT), raw, out], capture_output=True, text=True)
        check(r.returncode == 0, "%s %d: exit %d: %s" % (kind, bits, r.returncode, r.stderr.strip()))
        if r.returncode:
            continue
        check(os.path.getsize(out) % 2880 == 0, "%s %d: file of %d bytes, not whole blocks" % (kind, bits, os.path.getsize(out)))
        with fits.open(out, checksum=False) as h:
            h.verify("exception")  # astropy's own checks of the header
            got = h[0].data
            check(got.dtype.newbyteorder("=") == np.dtype(dtype), "%s %d: astropy reads %s" % (kind, bits, got.dtype))
            check(same_bits(got.astype(got.dtype.newbyteorder("=")), data), "%s %d: samples differ" % (kind, bits))
            check(any("gsmooth" in str(v) for v in h[0].header.get("HISTORY", [])), "%s %d: no HISTORY card" % (kind, bits))
        r = subprocess.run([tool, kind, str(bits), str(WIDTH), str(HEIGHT), raw, "-"], capture_output=True)
        with open(out, "rb") as f:
            check(r.returncode == 0 and r.stdout == f.read(), "%s %d: standard output differs from the file" % (kind, bits))
        print("ok: writer %s %d read back by astropy bit for bit (file and stdout)" % (kind, bits))


WCS_KEYS_SKIPPED = {"SIMPLE", "BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "BSCALE", "BZERO", "OBJECT", "EXTEND"}


def wcs_kept(tool, tmp):
    src = os.path.join(CORPUS, "gen_wcs.fits")
    with fits.open(src) as h:
        header_in, data = h[0].header, np.array(h[0].data)
    raw = os.path.join(tmp, "wcs.raw")
    data.astype(np.uint16).tofile(raw)
    out = os.path.join(tmp, "wcs_out.fits")
    r = subprocess.run([tool, "uint", "16", str(data.shape[1]), str(data.shape[0]), raw, out, src],
                       capture_output=True, text=True)
    check(r.returncode == 0, "wcs: exit %d: %s" % (r.returncode, r.stderr.strip()))
    if r.returncode:
        return
    header_out = fits.getheader(out)
    keys = [k for k in header_in if k not in WCS_KEYS_SKIPPED]
    for k in keys:
        check(k in header_out and header_out[k] == header_in[k], "wcs: %s is %r, not %r" % (k, header_out.get(k), header_in[k]))
    check("OBJECT" not in header_out, "wcs: OBJECT (no WCS card) was kept")
    w_in, w_out = WCS(header_in), WCS(header_out)
    pix = np.array([[0.0, 0.0], [36.0, 22.0], [18.5, 11.0]])
    check(np.array_equal(w_in.all_pix2world(pix, 0), w_out.all_pix2world(pix, 0)), "wcs: the transformation differs")
    check(w_in.to_header(relax=True) == w_out.to_header(relax=True), "wcs: astropy.wcs headers differ")
    w_in_a, w_out_a = WCS(header_in, key="A"), WCS(header_out, key="A")
    check(w_in_a.to_header(key="A") == w_out_a.to_header(key="A"), "wcs: the alternate WCS 'A' differs")
    check(np.array_equal(fits.getdata(out), data), "wcs: samples differ")
    print("ok: %d WCS cards kept (CRPIX, CRVAL, CTYPE, CD, SIP, alternate 'A'), OBJECT dropped" % len(keys))


def run(gsmooth, *args, stdin=None):
    return subprocess.run([gsmooth, *args], capture_output=True, stdin=stdin,
                          env=dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH=""))


def command_line(gsmooth, tmp):
    from PIL import Image
    for name in ("gen_u8.fits", "gen_u16.fits", "gen_extension.fits", "astropy_fixed-1890.fits"):
        src = os.path.join(CORPUS, name)
        want = np.load(os.path.join(CORPUS, name[:-5] + ".npy"))
        out = os.path.join(tmp, "cli_" + name)
        r = run(gsmooth, "--quiet", "--iters", "0", src, out)
        check(r.returncode == 0, "cli %s: exit %d: %s" % (name, r.returncode, r.stderr.decode().strip()))
        if r.returncode == 0:
            got = fits.getdata(out)
            check(same_bits(got.astype(got.dtype.newbyteorder("=")), want), "cli %s: FITS out differs (row order?)" % name)
        png = os.path.join(tmp, "cli_" + name + ".png")
        r = run(gsmooth, "--quiet", "--iters", "0", src, png)
        check(r.returncode == 0 and np.array_equal(np.asarray(Image.open(png)).astype(want.dtype), want),
              "cli %s: PNG out differs from data[0] first" % name)
        with open(src, "rb") as f:
            r = run(gsmooth, "--quiet", "--iters", "0", "-", out + ".pipe.fits", stdin=f)
        check(r.returncode == 0 and open(out + ".pipe.fits", "rb").read() == open(out, "rb").read(),
              "cli %s: from a pipe differs from the file" % name)
        # Smoothing (3 passes) gives the same as the PNG of the same samples.
        ref = os.path.join(tmp, "ref.png")
        Image.fromarray(want).save(ref)
        r1, r2 = run(gsmooth, "--quiet", src, out + ".s.png"), run(gsmooth, "--quiet", ref, out + ".r.png")
        check(r1.returncode == 0 and r2.returncode == 0 and
              np.array_equal(np.asarray(Image.open(out + ".s.png")), np.asarray(Image.open(out + ".r.png"))),
              "cli %s: smoothed FITS differs from the smoothed PNG of its samples" % name)
    print("ok: the command line keeps 8/16-bit FITS samples and row order (file, pipe, FITS and PNG out)")
    for name in ("gen_cube.fits", "gen_1d.fits", "gen_table_only.fits"):
        out = os.path.join(tmp, "refused.fits")
        r = run(gsmooth, os.path.join(CORPUS, name), out)
        err = r.stderr.decode().strip()
        check(r.returncode == 1 and len(err.splitlines()) == 1 and "FITS: " in err and not os.path.exists(out),
              "cli %s: exit %d, stderr %r" % (name, r.returncode, err))
    print("ok: cubes, 1-D images and tables refused with exit 1 and one line")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: fits_check.py FITS_WRITE_TOOL GSMOOTH")
    warnings.simplefilter("ignore")
    log.setLevel("ERROR")  # astropy.wcs's remarks on the SIP header are not findings
    with tempfile.TemporaryDirectory() as tmp:
        writer_kinds(sys.argv[1], tmp)
        wcs_kept(sys.argv[1], tmp)
        command_line(sys.argv[2], tmp)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("fits_check.py: all passed")


if __name__ == "__main__":
    main()
