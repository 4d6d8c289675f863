#!/usr/bin/env python3
"""check_external.py: the external corpora through gsmooth and a reference decoder.

Every image of the external corpora (tests/external/*/) through gsmooth --iters 0 and
through the field's reference decoder, compared pixel for pixel. float/ is not a corpus of
other people's files: this project's float test files, checked by test_float_io.

usage: check_external.py GSMOOTH [--list] [--only SUBSTRING] [--report FILE]

The reference for each file (reference_gray):
  - PNG: libpng, through OpenCV's IMREAD_UNCHANGED (16-bit samples kept). gsmooth's fast PNG reader is compared with libpng on every corpus
    file too (GSMOOTH_PNG_DECODER=fast against =libpng).
  - JPEG: libjpeg-turbo's own gray output, through PIL's draft('L') (JCS_GRAYSCALE, as
    gsmooth asks for it); CMYK through PIL's RGB of the Adobe-inverted samples, then luma;
    OpenCV's IMREAD_GRAYSCALE (JCS_GRAYSCALE too) where PIL refuses the file's metadata.
  - TIFF: tifffile where it decodes the file, else tifffile over libtiff's tiffcp -c none
    (the codecs tifffile leaves to imagecodecs), else over tiffcrop -c none (tiled
    separate 16-bit planes, which tiffcp refuses), else PIL (libtiff; not for 16-bit
    RGB, which it reads as 8-bit). Not OpenCV: its planar 16-bit RGB comes out wrong
    (Pillow's tiff_strip_planar_16bit_RGB.tiff). Stored row order: TIFF Orientation is
    not applied (PIL applies it to the files it decodes through libtiff).
  - PGM/PPM/PBM: OpenCV (16-bit kept), else PIL.
  - BMP: PIL, else OpenCV (bitfield layouts PIL refuses). Run-length (RLE4/RLE8) files:
    OpenCV alone, as Pillow before 12.2 reads each delta escape's two bytes twice and
    Pillow up to 12.3 drops the last pixel of an odd RLE4 absolute run (both fixed
    upstream); OpenCV is no reference for a 32-bit BI_BITFIELDS file whose masks sit after
    a 40-byte header or in a 52-byte one unless they are BGRA's, as OpenCV 4.6 reads only
    masks from headers of 56 bytes or more and takes the others' pixels as BGRA.
  - GIF (first frame), TGA, PSD: PIL.
  - BMP and TGA palettes in PIL: an index past the palette's end is black, as in Pillow
    10.1 and later (Pillow 9 gave such indices the gray ramp its palettes started as).
Colour becomes gray with BT.601 in libjpeg's fixed point, alpha is dropped, palettes are
expanded, 1/2/4-bit gray scales to 0..255, as gsmooth does.

Each file ends in one of:
  same        both decode, same size, depth and pixels
  both-refuse the reference refuses it and so does gsmooth (one line, exit 1)
  expected-unsupported, expected-refused, expected-accepted
              the verdict expected.txt gives the file, with its reason (an unsupported
              feature is named in the README too)
  MISMATCH    pixels, size or depth differ
  REFUSED     gsmooth refuses what the reference decodes (a bug, unless documented)
  ACCEPTED    gsmooth decodes what the reference refuses (listed in expected.txt, or a bug)
  BAD-ERROR   gsmooth's error is not one line naming the file, or it exits neither 0 nor 1,
              or it leaves an output behind
  float-input a TIFF gsmooth reads as float32 (IEEE 32/64-bit or signed 16-bit gray): its
              samples are compared bit for bit at the reader by test_float_io (ctest
              float_io, tests/external/float/MANIFEST names these files), not through the
              command line's integer outputs
  PNG-READERS-DIFFER  the fast PNG reader and libpng disagree on a corpus PNG
  STALE-EXPECTATION   expected.txt names a verdict the file no longer has
The run fails on any verdict in capitals.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# expected.txt's words and the verdict each one stands for.
EXPECTED_AS = {"unsupported": "REFUSED", "refused": "REFUSED", "accepted": "ACCEPTED"}
IMAGE_EXT = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".tga", ".psd",
             ".pgm", ".ppm", ".pbm", ".pnm"}


def luma(rgb):
    """BT.601 in libjpeg's fixed point, 64-bit: Y = (19595 R + 38470 G + 7471 B + 32768) >> 16."""
    r, g, b = (rgb[..., i].astype(np.uint64) for i in range(3))
    return (19595 * r + 38470 * g + 7471 * b + 32768) >> 16


def to_gray(a):
    """An array of samples (H, W[, C]) as gsmooth's gray: alpha dropped, colour to luma."""
    if a.ndim == 2:
        return a
    c = a.shape[2]
    if c == 1 or c == 2:
        return a[..., 0]
    return luma(a[..., :3]).astype(a.dtype)


def read_pgm(path):
    """gsmooth's P5 output: 8-bit, or 16-bit big-endian."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    pos += 1
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    dtype = np.dtype(">u2") if maxval > 255 else np.uint8
    return np.frombuffer(data, dtype, w * h, pos).reshape(h, w).astype(
        np.uint16 if maxval > 255 else np.uint8)


def pil_gray(path):
    from PIL import Image
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        im = Image.open(path)
        ext = os.path.splitext(path)[1].lower()
        if im.format == "JPEG":
            if im.mode == "CMYK":  # Adobe-inverted CMYK to RGB, then luma (as golden/reference.py)
                return to_gray(np.asarray(im.convert("RGB")))
            im.draft("L", im.size)
            im = im.convert("L") if im.mode != "L" else im
            return np.asarray(im)
        im.load()
        mode = im.mode
        if mode in ("I;16", "I;16B", "I;16L"):
            return np.asarray(im).astype(np.uint16)
        if mode == "I":
            a = np.asarray(im)
            if a.min() < 0 or a.max() > 65535:
                raise ValueError("32-bit integer samples")
            return a.astype(np.uint16)
        if mode == "1":
            return np.asarray(im.convert("L"))
        if mode in ("L", "LA"):
            return np.asarray(im.convert("L"))
        if mode == "P" or mode == "PA":
            index = np.asarray(im)
            entries = len(im.palette.palette) // len(im.palette.mode) if im.palette else 256
            gray = to_gray(np.asarray(im.convert("RGBA")))
            if im.format in ("BMP", "TGA"):
                gray[index >= entries] = 0
            return gray
        if mode == "CMYK":
            return to_gray(np.asarray(im.convert("RGB")))
        if mode in ("RGB", "RGBA", "RGBX", "RGBa"):
            return to_gray(np.asarray(im.convert("RGBA") if mode == "RGBa" else im))
        raise ValueError("PIL mode %s" % mode)
    del ext


def cv2_gray(path):
    import cv2
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED | cv2.IMREAD_ANYDEPTH)
    if a is None:
        raise ValueError("OpenCV refuses it")
    if a.dtype not in (np.uint8, np.uint16):
        raise ValueError("OpenCV gives %s samples" % a.dtype)
    if a.ndim == 3:
        c = a.shape[2]
        if c >= 3:
            a = a[..., [2, 1, 0] + list(range(3, c))]  # BGR(A) to RGB(A)
    return to_gray(a)


def cv2_jpeg_gray(path):
    """libjpeg-turbo's gray output through OpenCV (IMREAD_GRAYSCALE asks for JCS_GRAYSCALE)."""
    import cv2
    a = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if a is None:
        raise ValueError("OpenCV refuses it")
    return a


BMP_RLE = (1, 2)             # biCompression: RLE8, RLE4
BMP_BITFIELDS = 3
BMP_BGRA_MASKS = (0xFF0000, 0xFF00, 0xFF)
BMP_MASKS_IN_HEADER = 56     # OpenCV 4.6 reads 32-bit masks from headers this long or longer


def bmp_compression(path):
    with open(path, "rb") as f:
        head = f.read(34)
    if len(head) < 34 or int.from_bytes(head[14:18], "little") < 20:
        return 0
    return int.from_bytes(head[30:34], "little")


def bmp_cv2_gray(path):
    """OpenCV, where it applies the file's bit-field masks."""
    with open(path, "rb") as f:
        head = f.read(66)
    header_size = int.from_bytes(head[14:18], "little")
    bits = int.from_bytes(head[28:30], "little")
    masks = tuple(int.from_bytes(head[54 + 4 * i:58 + 4 * i], "little") for i in range(3))
    if (bmp_compression(path) == BMP_BITFIELDS and bits == 32 and
            header_size < BMP_MASKS_IN_HEADER and masks != BMP_BGRA_MASKS):
        raise ValueError("OpenCV 4.6 ignores 32-bit masks outside a 56-byte or longer header")
    return cv2_gray(path)


def tifffile_gray(path):
    """tifffile's samples of the first page as gray: 1-bit samples (tifffile gives bools)
    scale to 0/255 and MinIsWhite counts down from the top; a palette's 16-bit colour map
    gives 8-bit RGB by its high byte (v >> 8, as libtiff's RGBA interface and PIL) for
    indices of up to 8 bits, 16-bit RGB for 16-bit indices, then luma; an alpha sample
    beside a palette index is dropped."""
    import tifffile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tifffile.TiffFile(path) as tf:
            page = tf.pages[0]
            photometric = int(page.photometric)
            bits = page.bitspersample
            if bits not in (1, 8, 16):  # tifffile unpacks 2, 4 and 12 bits only with imagecodecs
                raise ValueError("%d-bit samples" % bits)
            a = page.asarray()
            if a.dtype == bool:
                a = a.astype(np.uint8)
            if a.dtype not in (np.uint8, np.uint16):
                raise ValueError("%s samples" % a.dtype)
            if int(page.planarconfig) == 2 and a.ndim == 3:
                a = np.moveaxis(a, 0, -1)
            if photometric == 3:
                lut = np.moveaxis(page.colormap, 0, -1)
                lut = (lut >> 8).astype(np.uint8) if bits <= 8 else lut.astype(np.uint16)
                return to_gray(lut[a[..., 0] if a.ndim == 3 else a])
            inkset = page.tags.get(332)  # InkSet: 1 (CMYK) unless the file says otherwise
            if photometric == 5 and (inkset is None or int(inkset.value) == 1) and a.ndim == 3:
                # CMYK: each of C, M, Y leaves (max - ink)(max - K) / max, rounded (PIL's rule)
                top = int(np.iinfo(a.dtype).max)
                ink = a[..., :4].astype(np.uint64)
                light = ((top - ink[..., :3]) * (top - ink[..., 3:4]) + top // 2) // top
                return to_gray(light.astype(a.dtype))
            if photometric not in (0, 1, 2):
                raise ValueError("photometric %d" % photometric)
            if bits == 1:
                a = a * np.uint8(255)
            if photometric == 0:  # MinIsWhite
                a = np.iinfo(a.dtype).max - a
            return to_gray(a)


def first_of(path, readers):
    """The first reader's answer that decodes the file; else raise with every reason."""
    reasons = []
    for name, reader in readers:
        try:
            return reader(path), name
        except Exception as e:
            reasons.append("%s: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
    raise ValueError("; ".join(reasons))


def tifffile_decompressed_gray(path, tool):
    """tifffile on the file's first page decompressed by one of libtiff's tools
    (libtiff-tools): for the codecs tifffile needs imagecodecs for (LZW, JPEG, CCITT, ...),
    not in Debian 12. tiffcp first; tiffcrop reads tiles of separate 16-bit planes that
    tiffcp refuses ("image raster scan line size is too large")."""
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.tif")
        cmd = [tool, "-c", "none", path + ",0", plain] if tool == "tiffcp" else [tool, "-c", "none", path, plain]
        p = subprocess.run(cmd, capture_output=True)
        said = p.stderr.decode("utf-8", "replace").strip()
        if p.returncode != 0 or not os.path.exists(plain):
            raise ValueError("%s: %s" % (tool, said[:200]))
        # The tools copy on past a codec's error (a fax's bad code word: the rest of the
        # strip is filled in) and still exit 0; libtiff's errors, unlike its warnings,
        # mean the pixels are not the file's.
        errors = [line for line in said.splitlines() if line and "Warning" not in line]
        if errors:
            raise ValueError("%s: %s" % (tool, errors[0][:200]))
        return tifffile_gray(plain)


def tifffile_uncompressed_gray(path):
    return tifffile_decompressed_gray(path, "tiffcp")


def tifffile_tiffcrop_gray(path):
    return tifffile_decompressed_gray(path, "tiffcrop")


def pil_tiff_gray(path):
    """PIL on a TIFF, except 16-bit RGB and CMYK, which PIL reads as 8-bit (the high bytes)."""
    import tifffile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tifffile.TiffFile(path) as tf:
            page = tf.pages[0]
            if page.bitspersample == 16 and int(page.photometric) in (2, 5):
                raise ValueError("PIL reads 16-bit RGB and CMYK as 8-bit")
    return pil_gray(path)


def reference_gray(path):
    """(array, reference name), or raises with the references' reasons."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"\x89PNG"):
        return first_of(path, [("libpng (OpenCV)", cv2_gray)])
    if head[:4] in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"):
        return first_of(path, [("tifffile", tifffile_gray),
                               ("tifffile over tiffcp -c none", tifffile_uncompressed_gray),
                               ("tifffile over tiffcrop -c none", tifffile_tiffcrop_gray),
                               ("PIL (libtiff)", pil_tiff_gray)])
    if head[:1] == b"P" and head[1:2] in b"123456":
        return first_of(path, [("OpenCV", cv2_gray), ("PIL", pil_gray)])
    if head[:2] == b"BM":
        if bmp_compression(path) in BMP_RLE:
            return first_of(path, [("OpenCV", cv2_gray)])
        return first_of(path, [("PIL", pil_gray), ("OpenCV", bmp_cv2_gray)])
    if head[:3] == b"\xff\xd8\xff":
        return first_of(path, [("PIL", pil_gray), ("OpenCV (libjpeg-turbo gray)", cv2_jpeg_gray)])
    return first_of(path, [("PIL", pil_gray)])


def reads_as_float(path):
    """1 for a TIFF whose first page gsmooth reads as float32: one sample a pixel of IEEE
    32 or 64 bits, or signed 16 bits (io/read_tiff.c's check_float)."""
    if os.path.splitext(path)[1].lower() not in (".tif", ".tiff"):
        return False
    try:
        import tifffile
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with tifffile.TiffFile(path) as tf:
                page = tf.pages[0]
                kind = (int(page.sampleformat), page.bitspersample)
                return page.samplesperpixel == 1 and kind in ((3, 32), (3, 64), (2, 16))
    except Exception:  # not a TIFF tifffile parses: judged the usual way
        return False


def run_gsmooth(gsmooth, path, out_dir, decoder=None):
    """(status, array or error line). status: ok, refused, bad-error."""
    out = os.path.join(out_dir, "out.pgm")
    env = dict(os.environ)
    env.pop("GSMOOTH_BACKEND", None)
    if decoder:
        env["GSMOOTH_PNG_DECODER"] = decoder
    p = subprocess.run([gsmooth, "--quiet", "--backend", "cpu", "--iters", "0", path, out],
                       capture_output=True, env=env, timeout=120)
    err = p.stderr.decode("utf-8", "replace").strip()
    if p.returncode == 0:
        a = read_pgm(out)
        os.unlink(out)
        return "ok", a
    lines = err.splitlines()
    left = os.listdir(out_dir)
    if p.returncode != 1 or len(lines) != 1 or path not in lines[0] or left:
        return "bad-error", "exit %d, %d lines, %s left: %s" % (p.returncode, len(lines), left, err[:300])
    return "refused", lines[0]


def load_expected():
    """expected.txt: 'VERDICT PATH  # reason' lines; PATH relative to tests/external."""
    expected = {}
    with open(os.path.join(HERE, "expected.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            verdict, rel = line.split(None, 1)
            expected[rel.strip()] = verdict
    return expected


def corpus_files():
    for root, dirs, files in os.walk(HERE):
        if root == HERE and "float" in dirs:
            dirs.remove("float")  # the project's own float files (docstring)
        dirs.sort()
        for name in sorted(files):
            if os.path.splitext(name)[1].lower() in IMAGE_EXT:
                yield os.path.join(root, name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gsmooth")
    ap.add_argument("--only", default="")
    ap.add_argument("--report")
    ap.add_argument("--list", action="store_true", help="print every file's verdict")
    args = ap.parse_args()
    expected = load_expected()
    counts, bad, lines = {}, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for path in corpus_files():
            rel = os.path.relpath(path, HERE)
            if args.only not in rel:
                continue
            if reads_as_float(path):
                counts["float-input"] = counts.get("float-input", 0) + 1
                lines.append("%-18s %s" % ("float-input", rel))
                if args.list:
                    print(lines[-1], flush=True)
                continue
            try:
                ref, ref_name = reference_gray(path)
                ref_err = None
            except Exception as e:  # the reference refuses it
                ref, ref_name, ref_err = None, "reference", str(e).splitlines()[0] if str(e) else type(e).__name__
            status, got = run_gsmooth(args.gsmooth, path, tmp)
            detail = ""
            if status == "bad-error":
                verdict, detail = "BAD-ERROR", got
            elif status == "ok" and ref is not None:
                if got.shape != ref.shape or got.dtype != ref.dtype:
                    verdict = "MISMATCH"
                    detail = "gsmooth %s %s, %s %s %s" % (got.shape, got.dtype, ref_name, ref.shape, ref.dtype)
                elif not np.array_equal(got, ref):
                    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
                    verdict = "MISMATCH"
                    detail = "%d of %d pixels differ from %s, by up to %d" % (
                        int((diff > 0).sum()), diff.size, ref_name, int(diff.max()))
                else:
                    verdict = "same"
            elif status == "ok":
                verdict, detail = "ACCEPTED", "reference: %s" % ref_err
            elif ref is None:
                verdict, detail = "both-refuse", got
            else:
                verdict, detail = "REFUSED", "%s decodes it; %s" % (ref_name, got)
            # The fast PNG reader's own verdict against libpng's, on every PNG.
            if verdict in ("same", "both-refuse", "REFUSED", "MISMATCH") and path.lower().endswith(".png"):
                fs, fa = run_gsmooth(args.gsmooth, path, tmp, "fast")
                ls, la = run_gsmooth(args.gsmooth, path, tmp, "libpng")
                if fs != ls or (fs == "ok" and not np.array_equal(fa, la)):
                    verdict = "PNG-READERS-DIFFER"
                    detail = "fast: %s; libpng: %s" % (fs if fs != "refused" else fa, ls if ls != "refused" else la)
            want = expected.get(rel)
            if want:  # a documented verdict: it must still be the verdict
                verdict = ("expected-" + want if EXPECTED_AS.get(want) == verdict else
                           "STALE-EXPECTATION")
                if verdict == "STALE-EXPECTATION":
                    detail = "expected.txt says %s; now %s %s" % (want, EXPECTED_AS.get(want), detail)
            counts[verdict] = counts.get(verdict, 0) + 1
            line = "%-18s %s  %s" % (verdict, rel, detail)
            lines.append(line)
            if not verdict.islower():
                bad.append(line)
            if args.list:
                print(line, flush=True)
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")
    print("external corpora: %d files: %s" % (sum(counts.values()), ", ".join(
        "%s %d" % kv for kv in sorted(counts.items()))))
    for line in bad:
        print(line)
    stale = [rel for rel in expected if not os.path.exists(os.path.join(HERE, rel))]
    for rel in stale:
        print("expected.txt names a file that is not there: %s" % rel)
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
