#!/usr/bin/python3
"""make_fits.py: writes the FITS test files of this folder with astropy, and what each decodes to.

Every gen_*.fits is written here by astropy (an independent writer); astropy_*.fits and
cfitsio_*.fits are copied from those projects' test data (README). For every file that
gsmooth must read, <name>.npy holds the samples gsmooth must deliver, computed by numpy
from astropy's reading of the raw stored values; expected.txt lists each file with its
verdict (ok or fail), the sample depth, and a phrase its note or its error must contain.
Deterministic: the same bytes on every run (no date or checksum cards).

usage: make_fits.py [DIR]   (default: this script's folder)
"""
import os
import sys
import warnings

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 1890
WIDTH, HEIGHT = 37, 23  # not a divisor of any read size in the tests: partial reads happen

rng = np.random.default_rng(SEED)
cases = []  # (name, verdict, bits, phrase)


def write(out, name, hdus):
    fits.HDUList(hdus).writeto(os.path.join(out, name), overwrite=True, output_verify="exception")


def expect(out, name, samples, phrase=""):
    """Save what gsmooth must deliver: uint8, uint16 or float32, row 0 = data[0]."""
    bits = {np.dtype(np.uint8): 8, np.dtype(np.uint16): 16, np.dtype(np.float32): 32}[samples.dtype]
    np.save(os.path.join(out, name[:-len(".fits")] + ".npy"), np.ascontiguousarray(samples))
    cases.append((name, "ok", bits, phrase))


def refuse(name, phrase):
    cases.append((name, "fail", 0, phrase))


def raw_image(path, hdu):
    """The stored integers or floats, unscaled, and the header (astropy's own reading)."""
    with fits.open(path, do_not_scale_image_data=True) as h:
        return np.array(h[hdu].data), h[hdu].header.copy()


def scaled_float32(path, hdu):
    """cfitsio's TFLOAT reading: stored * BSCALE + BZERO in double, then rounded to float32;
    stored == BLANK (integer data) is NaN."""
    raw, header = raw_image(path, hdu)
    value = raw.astype(np.float64) * header.get("BSCALE", 1.0) + header.get("BZERO", 0.0)
    out = value.astype(np.float32)
    if "BLANK" in header and raw.dtype.kind in "iu":
        out[raw == header["BLANK"]] = np.nan
    return out


def generated(out):
    gray = rng.integers(0, 256, (HEIGHT, WIDTH), dtype=np.uint8)
    gray[0, 0], gray[-1, -1] = 0, 255
    write(out, "gen_u8.fits", [fits.PrimaryHDU(gray)])
    expect(out, "gen_u8.fits", gray)

    # astropy writes uint16 as BITPIX 16 with BZERO 32768 (the unsigned convention).
    u16 = rng.integers(0, 65536, (HEIGHT, WIDTH), dtype=np.uint16)
    u16[0, :4] = [0, 1, 32767, 32768]
    u16[-1, -1] = 65535
    write(out, "gen_u16.fits", [fits.PrimaryHDU(u16)])
    expect(out, "gen_u16.fits", u16)

    i16 = rng.integers(-32768, 32768, (HEIGHT, WIDTH), dtype=np.int16)
    write(out, "gen_i16.fits", [fits.PrimaryHDU(i16)])
    expect(out, "gen_i16.fits", i16.astype(np.float32), "BITPIX 16 samples with BSCALE 1 and BZERO 0")

    # int32 past float32's 24-bit mantissa: rounded to nearest, as float(double(v)) gives.
    i32 = rng.integers(-2**31, 2**31, (HEIGHT, WIDTH), dtype=np.int64).astype(np.int32)
    i32[0, :3] = [2**31 - 1, -2**31, 16777217]
    write(out, "gen_i32.fits", [fits.PrimaryHDU(i32)])
    expect(out, "gen_i32.fits", i32.astype(np.float64).astype(np.float32), "BITPIX 32 samples")

    # int32 with BLANK: the undefined pixels become NaN.
    blank = i32.copy()
    blank[3, 5:9] = -999
    hdu = fits.PrimaryHDU(blank)
    hdu.header["BLANK"] = -999
    write(out, "gen_i32_blank.fits", [hdu])
    expect(out, "gen_i32_blank.fits", scaled_float32(os.path.join(out, "gen_i32_blank.fits"), 0),
           "undefined pixels (BLANK) as NaN")

    i64 = rng.integers(-2**62, 2**62, (HEIGHT, WIDTH), dtype=np.int64)
    write(out, "gen_i64.fits", [fits.PrimaryHDU(i64)])
    expect(out, "gen_i64.fits", i64.astype(np.float64).astype(np.float32), "BITPIX 64 samples")

    # float32: every class of IEEE value, raw bits through (NaN payloads included).
    f32 = rng.normal(0, 1000, (HEIGHT, WIDTH)).astype(np.float32)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, -1e-45, 1.1754942e-38,
                         np.finfo(np.float32).max, -np.finfo(np.float32).max,
                         np.finfo(np.float32).tiny, -3.5, 0.0], dtype=np.float32)
    f32[0, :len(specials)] = specials
    f32.view(np.uint32)[1, 0] = 0x7FC01234  # a quiet NaN with a payload
    f32.view(np.uint32)[1, 1] = 0xFFC00001  # a negative one
    write(out, "gen_f32.fits", [fits.PrimaryHDU(f32)])
    expect(out, "gen_f32.fits", f32)

    # float64: rounded to nearest float32 (values between floats, past FLT_MAX, subnormal).
    f64 = rng.normal(0, 1e6, (HEIGHT, WIDTH))
    f64[0, :8] = [np.nan, np.inf, -np.inf, 1.0 + 2**-24, 1.0 + 3 * 2**-24, 1e39, -1e-50, 3e-40]
    write(out, "gen_f64.fits", [fits.PrimaryHDU(f64)])
    with np.errstate(over="ignore"):
        expect(out, "gen_f64.fits", f64.astype(np.float32), "float64 samples rounded to float32")

    # int16 with BSCALE and BZERO: cfitsio's scaling in double, then float32.
    hdu = fits.PrimaryHDU(i16)
    hdu.header["BSCALE"] = 0.25
    hdu.header["BZERO"] = -7.5
    write(out, "gen_i16_scaled.fits", [hdu])
    expect(out, "gen_i16_scaled.fits", scaled_float32(os.path.join(out, "gen_i16_scaled.fits"), 0),
           "BSCALE 0.25 and BZERO -7.5")

    # float32 with scaling (BSCALE 2): scaled, not raw.
    hdu = fits.PrimaryHDU(f32[2:, :])
    hdu.header["BSCALE"] = 2.0
    write(out, "gen_f32_scaled.fits", [hdu])
    expect(out, "gen_f32_scaled.fits", scaled_float32(os.path.join(out, "gen_f32_scaled.fits"), 0),
           "BITPIX -32 samples with BSCALE 2")

    # A primary HDU with no data; the image in the first extension, named.
    write(out, "gen_extension.fits", [fits.PrimaryHDU(), fits.ImageHDU(u16, name="SCI")])
    expect(out, "gen_extension.fits", u16, "image from extension 1 (EXTNAME 'SCI')")

    # A table, then an image: the first image extension is read.
    table = fits.BinTableHDU.from_columns([fits.Column(name="x", format="J", array=np.arange(5))])
    write(out, "gen_table_then_image.fits", [fits.PrimaryHDU(), table, fits.ImageHDU(gray)])
    expect(out, "gen_table_then_image.fits", gray, "image from extension 2")

    # A 3-D cube primary; no image anywhere else: refused.
    cube = rng.integers(0, 256, (3, 5, 4), dtype=np.uint8)  # NAXIS1=4, NAXIS2=5, NAXIS3=3
    write(out, "gen_cube.fits", [fits.PrimaryHDU(cube)])
    refuse("gen_cube.fits", "FITS: 3-D cube 4x5x3: only 2-D images")

    # A cube before a 2-D extension: the extension is read.
    write(out, "gen_cube_then_image.fits", [fits.PrimaryHDU(cube), fits.ImageHDU(gray)])
    expect(out, "gen_cube_then_image.fits", gray, "image from extension 1")

    # NAXIS 3 with NAXIS3 = 1 is a 2-D image.
    write(out, "gen_flat_cube.fits", [fits.PrimaryHDU(u16[np.newaxis])])
    expect(out, "gen_flat_cube.fits", u16)

    write(out, "gen_1d.fits", [fits.PrimaryHDU(gray[0])])
    refuse("gen_1d.fits", "FITS: 1-D image of 37 samples: only 2-D images")

    write(out, "gen_table_only.fits", [fits.PrimaryHDU(), table])
    refuse("gen_table_only.fits", "FITS: no 2-D image HDU")

    # World coordinates: a TAN projection with a CD matrix, SIP distortion, an alternate
    # WCS 'A', and the time and frame keywords; plus cards that are not WCS (OBJECT).
    w = WCS(naxis=2)
    w.wcs.ctype = ["RA---TAN-SIP", "DEC--TAN-SIP"]
    w.wcs.crpix = [18.5, 12.0]
    w.wcs.crval = [202.4842, 47.2306]
    w.wcs.cd = [[-2.7e-4, 1.1e-5], [1.2e-5, 2.7e-4]]
    w.wcs.radesys = "ICRS"
    w.wcs.equinox = 2000.0
    w.wcs.dateobs = "2026-11-30T21:04:05"
    w.wcs.mjdobs = 61009.877836
    header = w.to_header()
    for key in ("PC1_1", "PC1_2", "PC2_1", "PC2_2", "CDELT1", "CDELT2"):  # the CD form instead
        del header[key]
    for (i, j), value in np.ndenumerate(w.wcs.cd):
        header["CD%d_%d" % (i + 1, j + 1)] = value
    header["EQUINOX"] = 2000.0
    header["A_ORDER"] = 2
    header["B_ORDER"] = 2
    header["A_2_0"] = 1.5e-6
    header["B_0_2"] = -2.5e-6
    header["WCSNAMEA"] = "PIXEL"
    header["CTYPE1A"] = "X"
    header["CTYPE2A"] = "Y"
    header["CRPIX1A"] = 1.0
    header["CRPIX2A"] = 1.0
    header["CRVAL1A"] = 0.0
    header["CRVAL2A"] = 0.0
    header["CDELT1A"] = 1.0
    header["CDELT2A"] = 1.0
    header["OBJECT"] = "M51"
    header["LONPOLE"] = 180.0
    hdu = fits.PrimaryHDU(u16, header=header)
    write(out, "gen_wcs.fits", [hdu])
    expect(out, "gen_wcs.fits", u16)


def external(out):
    """Files of cfitsio's and astropy's own test data, kept in this folder (README)."""
    def read(name, hdu, samples, phrase=""):
        expect(out, name, samples(os.path.join(out, name), hdu), phrase)

    def stored(dtype):
        """Unsigned integers: the stored value plus BZERO, exact."""
        def samples(path, hdu):
            raw, header = raw_image(path, hdu)
            return (raw.astype(np.int64) + int(header.get("BZERO", 0))).astype(dtype)
        return samples

    # uint16 (BZERO 32768), 100x100.
    read("astropy_fixed-1890.fits", 0, stored(np.uint16))
    # int16 with BSCALE 0.0457... and BZERO 1500: scaled to float32.
    read("astropy_scale.fits", 0, scaled_float32, "BITPIX 16 samples with BSCALE")
    # BITPIX 64, 1x1, its one pixel equal to BLANK: NaN.
    read("astropy_blank.fits", 0, scaled_float32, "undefined pixels (BLANK) as NaN")
    # An empty primary HDU with BZERO, four 40x40 int16 extensions: the first is read.
    read("astropy_test0.fits", 1, scaled_float32, "image from extension 1")
    # HST raw data: uint16 in extension 1 (EXTNAME SCI).
    read("astropy_o4sp040b0_raw.fits", 1, stored(np.uint16), "image from extension 1 (EXTNAME 'SCI')")
    # A 3-D primary (11x10x7) and nothing else.
    refuse("astropy_arange.fits", "FITS: 3-D cube 11x10x7: only 2-D images")
    # cfitsio's testprog output: a 10x2 BITPIX 32 primary with BLANK -99, then tables and images.
    read("cfitsio_testprog.fits", 0, scaled_float32, "BITPIX 32 samples")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    warnings.simplefilter("ignore")
    generated(out)
    if os.path.exists(os.path.join(out, "astropy_fixed-1890.fits")):
        external(out)
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("# name\tverdict\tbits\tphrase of the note (ok) or the error (fail); written by make_fits.py\n")
        for name, verdict, bits, phrase in cases:
            f.write("%s\t%s\t%d\t%s\n" % (name, verdict, bits, phrase))
    print("make_fits.py: %d files in %s" % (len(cases), out))


if __name__ == "__main__":
    main()
