#!/usr/bin/python3
"""pnm_check.py: Netpbm (PBM, PGM, PPM) through gsmooth.

Plain (P1-P3) and binary (P4-P6), written by OpenCV, by PIL and by hand (maxvals that need
scaling, 16-bit plain, comments where Netpbm takes them, CRLF), at sizes that cross the
reader's buffers (the 64 KiB stream buffer and plain-text chunk, the 1 MiB stdio buffer);
decoded samples compared with numpy, through a file and a pipe.

usage: pnm_check.py GSMOOTH
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
from image_files import Checks, differs, read_pgm  # noqa: E402
from reference import luma  # noqa: E402

# The reader's buffer sizes (io/source.c SOURCE_BUFFER_SIZE, a file's and a stream's
# alike, and STREAM_REPLAY_MAX; io/read_pnm.c PNM_TEXT_CHUNK), and a file of 16 buffers.
STREAM_BUFFER = 64 << 10
TEXT_CHUNK = 64 << 10
FILE_BUFFER = 1 << 20

check = Checks()


# ---- the rule, in numpy: scaled to the full range of 8 or 16 bits, rounded halves up ----

def scaled(samples, maxval):
    out_max = 65535 if maxval > 255 else 255
    v = np.minimum(samples.astype(np.int64), maxval)
    return (v * out_max + maxval // 2) // maxval


def gray_of(rgb, maxval):
    s = scaled(rgb, maxval)
    return luma(s[..., 0], s[..., 1], s[..., 2])


# ---- writers by hand (the formats' text, exactly as Netpbm defines it) ----

def header(magic, w, h, maxval=None, sep=b"\n"):
    fields = [magic, b"%d %d" % (w, h)] + ([b"%d" % maxval] if maxval is not None else [])
    return sep.join(fields) + sep


def plain(a, line=70):
    """Decimal samples separated by spaces, lines of about `line` characters."""
    words = [b"%d" % v for v in a.reshape(-1)]
    out, n = bytearray(), 0
    for word in words:
        if n + len(word) + 1 > line:
            out += b"\n"
            n = 0
        elif n:
            out += b" "
            n += 1
        out += word
        n += len(word)
    return bytes(out + b"\n")


def binary(a, maxval):
    return a.astype(">u2" if maxval > 255 else "u1").tobytes()


def pbm_bits(black):
    """P4 rows: bits from the most significant, each row padded to a byte (padding 1s)."""
    h, w = black.shape
    padded = np.ones((h, (w + 7) // 8 * 8), dtype=np.uint8)
    padded[:, :w] = black
    return np.packbits(padded, axis=1).tobytes()


def cases(rng):
    """(name, bytes, truth int64 array, bits)."""
    out = []
    g8 = imagegen.photo_like(97, 131, seed=11, channels=1)
    g16 = imagegen.photo_like(61, 73, seed=12, channels=1, bits=16)
    rgb8 = imagegen.photo_like(53, 67, seed=13, channels=3)
    black = rng.integers(0, 2, (37, 45), dtype=np.uint8)

    # By hand: every type, maxvals that need scaling, comments where Netpbm takes them.
    for maxval in (1, 15, 100, 255):
        a = (g8.astype(np.int64) * maxval // 255)
        out.append((f"p2_maxval_{maxval}", header(b"P2", 131, 97, maxval) + plain(a), scaled(a, maxval), 8))
        out.append((f"p5_maxval_{maxval}", header(b"P5", 131, 97, maxval) + binary(a, maxval), scaled(a, maxval), 8))
    for maxval in (256, 1000, 4095, 65535):
        a = (g16.astype(np.int64) * maxval // 65535)
        out.append((f"p2_maxval_{maxval}", header(b"P2", 73, 61, maxval) + plain(a), scaled(a, maxval), 16))
        out.append((f"p5_maxval_{maxval}", header(b"P5", 73, 61, maxval) + binary(a, maxval), scaled(a, maxval), 16))
    for maxval in (255, 31, 65535, 1023):
        a = rgb8.astype(np.int64) * maxval // 255
        bits = 16 if maxval > 255 else 8
        out.append((f"p3_maxval_{maxval}", header(b"P3", 67, 53, maxval) + plain(a), gray_of(a, maxval), bits))
        out.append((f"p6_maxval_{maxval}", header(b"P6", 67, 53, maxval) + binary(a, maxval), gray_of(a, maxval), bits))
    white_black = np.where(black == 1, 0, 255).astype(np.int64)
    digits = b"\n".join(b"".join(b"%d" % v for v in row) for row in black) + b"\n"  # no spaces
    out.append(("p1_no_spaces", header(b"P1", 45, 37) + digits, white_black, 8))
    out.append(("p1_spaced", header(b"P1", 45, 37) + plain(black), white_black, 8))
    out.append(("p4", header(b"P4", 45, 37) + pbm_bits(black), white_black, 8))
    out.append(("p4_width_8", header(b"P4", 8, 37) + pbm_bits(black[:, :8]), white_black[:, :8], 8))
    a = g8[:5, :6].astype(np.int64)
    commented = (b"P2\r\n# made by hand\r\n6 # width\r\n5\r\n#maxval next\r\n255#no space before this\r\n" +
                 plain(a).replace(b"\n", b" # a comment between samples\r\n"))
    out.append(("p2_comments_crlf", commented, a, 8))
    out.append(("p5_comment_after_maxval", b"P5 6 5 255#c\n" + binary(a, 255), a, 8))
    out.append(("p2_tabs_no_final_newline", header(b"P2", 6, 5, 255, sep=b"\t") + plain(a).replace(b" ", b"\t")[:-1],
                a, 8))
    over = np.array([[0, 7, 8, 99999999999]], dtype=np.int64)
    out.append(("p2_samples_over_maxval_clamp", b"P2 4 1 7\n0 7 8 99999999999\n", scaled(over, 7), 8))

    # OpenCV's writer, plain and binary (IMWRITE_PXM_BINARY), 8 and 16-bit.
    try:
        import cv2
    except ImportError:
        cv2 = None
    if cv2 is not None:
        for binary_flag in (0, 1):
            kind = "binary" if binary_flag else "plain"
            for name, img, truth, bits in (
                    ("pgm8", g8, g8.astype(np.int64), 8),
                    ("pgm16", g16, g16.astype(np.int64), 16),
                    ("ppm8", rgb8[..., ::-1], gray_of(rgb8, 255), 8),
                    ("pbm", np.where(black == 1, 0, 200).astype(np.uint8), white_black, 8)):
                ext = name[:3]
                ok, enc = cv2.imencode("." + ext, img, [cv2.IMWRITE_PXM_BINARY, binary_flag])
                assert ok
                out.append((f"opencv_{kind}_{name}", enc.tobytes(), truth, bits))

    # PIL's writer: P4 from mode 1, P5 8 and 16-bit, P6.
    try:
        from PIL import Image
        import io
    except ImportError:
        Image = None
    if Image is not None:
        def pil(im):
            buf = io.BytesIO()
            im.save(buf, format="PPM")
            return buf.getvalue()
        out.append(("pil_p4", pil(Image.fromarray(black == 0)), white_black, 8))
        out.append(("pil_p5", pil(Image.fromarray(g8)), g8.astype(np.int64), 8))
        out.append(("pil_p5_16", pil(Image.fromarray(g16.astype(np.int32), "I")), g16.astype(np.int64), 16))
        out.append(("pil_p6", pil(Image.fromarray(rgb8)), gray_of(rgb8, 255), 8))
    return out


def boundary_cases(rng):
    """Rows and files whose sizes sit on and around the reader's buffer sizes."""
    out = []
    for width in (STREAM_BUFFER - 1, STREAM_BUFFER, STREAM_BUFFER + 1):
        a = rng.integers(0, 256, (3, width), dtype=np.uint8)
        out.append((f"p5_rows_of_{width}", header(b"P5", width, 3, 255) + binary(a, 255), a.astype(np.int64), 8))
    # A 16-bit P6 row of 3 x 2 x 10923 = 65538 bytes; a P4 row of 8193 bytes (65537 pixels).
    a = rng.integers(0, 65536, (2, 10923, 3), dtype=np.int64)
    out.append(("p6_16_rows_of_65538_bytes", header(b"P6", 10923, 2, 65535) + binary(a, 65535),
                gray_of(a, 65535), 16))
    black = rng.integers(0, 2, (3, STREAM_BUFFER + 1), dtype=np.uint8)
    out.append(("p4_rows_of_65537_pixels", header(b"P4", STREAM_BUFFER + 1, 3) + pbm_bits(black),
                np.where(black == 1, 0, 255).astype(np.int64), 8))
    # Whole files of 1 MiB - 1, 1 MiB and 1 MiB + 1 bytes (16 read buffers): a comment pads
    # the header so the raster ends one byte before, on, or one byte after the boundary.
    w, h = 1024, 1023
    a = rng.integers(0, 256, (h, w), dtype=np.uint8)
    for total in (FILE_BUFFER - 1, FILE_BUFFER, FILE_BUFFER + 1):
        plain_head = header(b"P5", w, h, 255)
        pad = total - w * h - len(plain_head) - len(b"#\n")
        data = b"P5\n#" + b"x" * pad + b"\n" + plain_head[3:] + binary(a, 255)
        assert len(data) == total
        out.append((f"p5_file_of_{total}_bytes", data, a.astype(np.int64), 8))
    # Plain text much longer than one chunk: numbers, a comment and a CRLF split across
    # the chunk boundaries (the samples' widths vary, so every split position comes up).
    a = rng.integers(0, 65536, (301, 277), dtype=np.int64) >> rng.integers(0, 16, (301, 277))
    text = header(b"P2", 277, 301, 65535) + plain(a, line=997).replace(b"\n", b" #\r\n")
    assert len(text) > 4 * TEXT_CHUNK
    out.append(("p2_16_text_of_%d_bytes" % len(text), text, a, 16))
    ones = rng.integers(0, 2, (257, 1021), dtype=np.uint8)
    digits = b"".join(b"%d" % v for v in ones.reshape(-1))  # one line, no separators
    out.append(("p1_one_line_of_%d_digits" % len(digits), header(b"P1", 1021, 257) + digits,
                np.where(ones == 1, 0, 255).astype(np.int64), 8))
    return out


def run(gsmooth, args, stdin=None):
    return subprocess.run([gsmooth, *args], input=stdin, capture_output=True)


def check_case(gsmooth, tmp, name, data, truth, bits):
    src = os.path.join(tmp, name + ".pnm")
    with open(src, "wb") as f:
        f.write(data)
    for how, args, stdin in (("file", [src], None), ("pipe", ["-"], data)):
        out = os.path.join(tmp, "out.pgm")
        r = run(gsmooth, ["--quiet", "--iters", "0", *args, out], stdin=stdin)
        if r.returncode != 0:
            check(f"{name} ({how})", False, f"exit {r.returncode}: {r.stderr.decode().strip()}")
            continue
        got, maxval = read_pgm(out)
        check(f"{name} ({how})", maxval == (1 << bits) - 1 and not differs(got, truth),
              f"maxval {maxval}; {differs(got, truth)}")


def check_refusals(gsmooth, tmp):
    """Plain rasters that end early or hold something else: one line naming the cause."""
    cases = [("plain_short", b"P2\n3 2\n255\n1 2 3 4 5\n", "truncated PGM"),
             ("plain_letter", b"P3\n1 1\n255\n1 2 y\n", "invalid plain PPM"),
             ("plain_pbm_2", b"P1\n3 1\n0 1 2\n", "invalid plain PBM"),
             ("p4_short", b"P4\n9 2\n\xff\x80\xff", "truncated PBM"),
             ("p2_maxval_65536", b"P2\n1 1\n65536\n0\n", "maxval is over 65535"),
             ("pam", b"P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\x00", "P7")]
    for name, data, words in cases:
        for how, arg, stdin in (("file", os.path.join(tmp, name + ".pgm"), None), ("pipe", "-", data)):
            if stdin is None:
                with open(arg, "wb") as f:
                    f.write(data)
            out = os.path.join(tmp, "refused.png")
            r = run(gsmooth, ["--quiet", arg, out], stdin=stdin)
            err = r.stderr.decode()
            check(f"refuse {name} ({how})", r.returncode == 1 and len(err.strip().splitlines()) == 1
                  and words in err and not os.path.exists(out), f"exit {r.returncode}: {err!r}")
    # A plain header over --max-pixels is refused before the raster.
    r = run(gsmooth, ["--max-pixels", "99", "-", os.path.join(tmp, "big.png")], stdin=b"P2 10 10 255\n")
    check("plain header over --max-pixels", r.returncode == 1 and b"--max-pixels" in r.stderr, r.stderr.decode())


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gsmooth = sys.argv[1]
    rng = np.random.default_rng(17)
    with tempfile.TemporaryDirectory(prefix="gsmooth-pnm-") as tmp:
        for name, data, truth, bits in cases(rng) + boundary_cases(rng):
            check_case(gsmooth, tmp, name, data, truth, bits)
        check_refusals(gsmooth, tmp)
    return check.report("pnm_check")


if __name__ == "__main__":
    sys.exit(main())
