#!/usr/bin/env python3
"""reader_boundaries.py: JPEG and PSD bytes placed across each input buffer's edge.

JPEG (libjpeg-turbo's source manager) and PSD (stb_image behind its callbacks), -1, 0 and +1
byte across each edge, through a file and through a pipe, against PIL's pixels.

usage: reader_boundaries.py GSMOOTH

The buffers: JPEG_INPUT_BUFFER and the read buffer of a file or a stream (64 KiB each:
read_jpeg.c, source.c's SOURCE_BUFFER_SIZE), and 1 MiB, sixteen of them. Padding that decoders
skip (JPEG COM segments, a PSD image resource) moves the image data so that an edge falls
just before, on and just after: the file's end (the JPEG end marker split over two
buffers), the start of the JPEG scan header, and the PSD pixel data's first byte.
"""
import io
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

EDGES = (64 << 10, 128 << 10, 1 << 20)
OFFSETS = (-1, 0, 1)
COM_MAX = 65533  # a COM segment's length field counts itself: 65535 - 2 bytes of text


def luma(rgb):
    r, g, b = (rgb[..., i].astype(np.uint64) for i in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint8)


def photo(h, w, seed):
    rng = np.random.default_rng(seed)
    base = np.add.outer(np.arange(h) * 0.7, np.arange(w) * 1.3)
    return np.clip((base % 256)[..., None] + rng.normal(0, 12, (h, w, 3)).cumsum(axis=1) % 40, 0, 255).astype(np.uint8)


def com_segments(n):
    """JPEG COM segments that take exactly n bytes (n = 0 or n >= 4)."""
    out = b""
    while n > 0:
        body = min(COM_MAX, n - 4)
        if n - (body + 4) in (1, 2, 3):  # leave at least 4 for the last segment
            body -= 4
        out += b"\xff\xfe" + struct.pack(">H", body + 2) + b"c" * body
        n -= body + 4
    return out


def jpeg_padded(base, where, target):
    """`base` (a JPEG) with COM padding right after SOI ('end': the file is `target` bytes)
    or right before SOS ('sos': the SOS marker starts at byte `target`)."""
    sos = base.index(b"\xff\xda")
    if where == "end":
        pad = target - len(base)
        return base[:2] + com_segments(pad) + base[2:]
    pad = target - sos
    return base[:sos] + com_segments(pad) + base[sos:]


def psd_padded(rgb, data_at):
    """A PSD (version 1, RGB 8-bit, raw planes; stb_image reads no gray PSD) whose pixel
    data starts at byte `data_at`: an image resource of the right size comes first, and an
    odd byte sits in the colour mode data (readers skip it for RGB)."""
    h, w, _ = rgb.shape
    header = b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, h, w, 8, 3)  # 3 channels, 8-bit, RGB
    mode_data = b"\0" * (data_at % 2)
    fixed = len(header) + 4 + len(mode_data) + 4 + 4 + 2  # section lengths, compression
    block_fixed = 4 + 2 + 2 + 4  # '8BIM', id, empty name (padded to 2), size
    body = data_at - fixed - block_fixed
    assert body >= 0 and body % 2 == 0, "a resource holds an even number of bytes"
    resource = b"8BIM" + struct.pack(">H", 1000) + b"\0\0" + struct.pack(">I", body) + b"\0" * body
    return (header + struct.pack(">I", len(mode_data)) + mode_data + struct.pack(">I", len(resource)) +
            resource + struct.pack(">I", 0) + struct.pack(">H", 0) + np.moveaxis(rgb, 2, 0).tobytes())


def read_pgm(data):
    parts = data.split(maxsplit=4)
    w, h, maxval = int(parts[1]), int(parts[2]), int(parts[3])
    assert maxval == 255
    return np.frombuffer(parts[4], np.uint8, w * h).reshape(h, w)


def decode(gsmooth, path, via_pipe):
    cmd = [gsmooth, "--quiet", "--backend", "cpu", "--iters", "0", "-" if via_pipe else path, "-"]
    env = dict(os.environ, GSMOOTH_BACKEND="", GSMOOTH_PLUGIN_PATH="")
    out = os.path.join(os.path.dirname(path), "out.pgm")
    cmd[-1] = out
    if via_pipe:
        cat = subprocess.Popen(["cat", path], stdout=subprocess.PIPE)
        p = subprocess.run(cmd, stdin=cat.stdout, capture_output=True, env=env, timeout=60)
        cat.stdout.close()
        cat.wait()
    else:
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=60)
    if p.returncode != 0:
        return None, p.stderr.decode().strip()
    with open(out, "rb") as f:
        a = read_pgm(f.read())
    os.unlink(out)
    return a, ""


def main():
    gsmooth = sys.argv[1]
    failures, cases = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in")
        buf = io.BytesIO()
        Image.fromarray(photo(61, 83, 3)).save(buf, "JPEG", quality=90)
        jpeg = buf.getvalue()
        im = Image.open(io.BytesIO(jpeg))
        im.draft("L", im.size)
        want_jpeg = np.asarray(im.convert("L"))
        rgb = photo(37, 53, 4)
        for edge in EDGES:
            for d in OFFSETS:
                files = [("JPEG ending at %d%+d" % (edge, d), jpeg_padded(jpeg, "end", edge + d), want_jpeg),
                         ("JPEG scan header at %d%+d" % (edge, d), jpeg_padded(jpeg, "sos", edge + d), want_jpeg)]
                psd = psd_padded(rgb, edge + d)
                want = luma(np.asarray(Image.open(io.BytesIO(psd)).convert("RGB")))
                files.append(("PSD pixels at %d%+d" % (edge, d), psd, want))
                assert len(files[0][1]) == edge + d and files[1][1].index(b"\xff\xda") == edge + d
                for name, data, want in files:
                    with open(path, "wb") as f:
                        f.write(data)
                    for via_pipe in (False, True):
                        cases += 1
                        got, err = decode(gsmooth, path, via_pipe)
                        how = "pipe" if via_pipe else "file"
                        if got is None:
                            failures.append("%s (%s): refused: %s" % (name, how, err))
                        elif got.shape != want.shape or not np.array_equal(got, want):
                            failures.append("%s (%s): pixels differ from PIL's" % (name, how))
    for f in failures:
        print("FAIL: " + f)
    print("reader_boundaries: %d cases (JPEG and PSD, edges %s, -1/0/+1, file and pipe), %d failures"
          % (cases, ", ".join("%d KiB" % (e >> 10) for e in EDGES), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
