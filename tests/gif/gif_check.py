#!/usr/bin/python3
"""gif_check.py: GIF through gsmooth against files PIL wrote and reshaped ones.

Files PIL wrote (interlaced and not, gray, transparency, local colour tables, several
frames) and the same files reshaped block by block (a frame smaller than the screen or
reaching past it, no colour table at all, the local table beside a wrong global one, a frame
PIL wrote as a later frame now first); decoded samples compared with numpy and with PIL's
own first frame, through a file and a pipe; the notes; --max-pixels on the grown screen;
truncation.

usage: gif_check.py GSMOOTH
"""
import io
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
try:
    from PIL import Image
except ImportError:
    print("skipped: python3-pil is not installed")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "external"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
from check_external import pil_gray  # noqa: E402  the corpus check's PIL reading (first frame)
from image_files import Checks, differs, read_pgm  # noqa: E402
from reference import luma  # noqa: E402

check = Checks()


# ---- GIF blocks: enough of the format to take PIL's files apart and put them together ----

def sub_blocks(data, pos):
    """The end of the data sub-blocks starting at pos (one past their zero terminator)."""
    while data[pos]:
        pos += 1 + data[pos]
    return pos + 1


def parse(data):
    """{'screen': (w, h), 'flags', 'bg', 'aspect', 'gct': bytes or None, 'records': [...]}:
    each record ('ext', raw bytes) or ('img', dict(x, y, w, h, flags, lct, lzw))."""
    w, h, flags, bg, aspect = struct.unpack("<HHBBB", data[6:13])
    pos = 13
    gct = None
    if flags & 0x80:
        n = 3 << ((flags & 7) + 1)
        gct, pos = data[pos:pos + n], pos + n
    records = []
    while data[pos] != 0x3B:
        if data[pos] == 0x21:
            end = sub_blocks(data, pos + 2)
            records.append(("ext", data[pos:end]))
            pos = end
        elif data[pos] == 0x2C:
            x, y, fw, fh, fflags = struct.unpack("<HHHHB", data[pos + 1:pos + 10])
            pos += 10
            lct = None
            if fflags & 0x80:
                n = 3 << ((fflags & 7) + 1)
                lct, pos = data[pos:pos + n], pos + n
            end = sub_blocks(data, pos + 1)
            records.append(("img", dict(x=x, y=y, w=fw, h=fh, flags=fflags, lct=lct, lzw=data[pos:end])))
            pos = end
        else:
            raise ValueError(f"byte {data[pos]:#x} at {pos}")
    return dict(screen=(w, h), flags=flags, bg=bg, aspect=aspect, gct=gct, records=records)


def table_bits(table):
    return (len(table) // 3).bit_length() - 2  # 2^(bits+1) entries


def build(g):
    w, h = g["screen"]
    flags = g["flags"] & 0x70
    if g["gct"] is not None:
        flags |= 0x80 | table_bits(g["gct"])
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", w, h, flags, g["bg"], g["aspect"]))
    out += g["gct"] or b""
    for kind, r in g["records"]:
        if kind == "ext":
            out += r
            continue
        fflags = r["flags"] & 0x40
        if r["lct"] is not None:
            fflags |= 0x80 | table_bits(r["lct"])
        out += b"," + struct.pack("<HHHHB", r["x"], r["y"], r["w"], r["h"], fflags)
        out += (r["lct"] or b"") + r["lzw"]
    return bytes(out + b";")


def first_image(g):
    return next(r for kind, r in g["records"] if kind == "img")


def transparent_index(g):
    """The transparent index of the first frame's graphic control extension, or None."""
    for kind, r in g["records"]:
        if kind == "img":
            return None
        if r[1] == 0xF9 and r[3] & 1:
            return r[6]
    return None


def gray_of(table, index):
    """gsmooth's rule: an index's gray is its entry's BT.601 luma; past the table (or with no
    table) the index itself."""
    rgb = np.frombuffer(table or b"", np.uint8).reshape(-1, 3).astype(np.int64)
    lut = np.arange(256, dtype=np.int64)
    lut[:len(rgb)] = luma(rgb[:, 0], rgb[:, 1], rgb[:, 2])
    return lut[index]


def expected_gray(g, indices):
    """The image gsmooth must give for g, whose first frame holds `indices` (h x w): the
    frame on the screen (grown to hold it), its table (local, else global), the rest of the
    screen the transparent index if any, else index 0."""
    img = first_image(g)
    table = img["lct"] if img["lct"] is not None else g["gct"]
    w = max(g["screen"][0], img["x"] + img["w"])
    h = max(g["screen"][1], img["y"] + img["h"])
    t = transparent_index(g)
    canvas = np.full((h, w), t if t is not None else 0, dtype=np.int64)
    canvas[img["y"]:img["y"] + img["h"], img["x"]:img["x"] + img["w"]] = indices
    return gray_of(table, canvas)


# ---- the files ----

def pil_gif(im, **kw):
    buf = io.BytesIO()
    im.save(buf, format="GIF", **kw)
    return buf.getvalue()


def cases():
    """(name, GIF bytes, frame-0 indices or None (then PIL's reading is the truth), notes)."""
    h, w = 333, 517  # odd, several interlace groups, not a multiple of 8
    rgb = imagegen.photo_like(h, w, seed=21, channels=3)
    pal_im = Image.fromarray(rgb).quantize(colors=200)  # palette image, indices kept
    idx = np.asarray(pal_im).astype(np.int64)
    gray = imagegen.photo_like(h, w, seed=22, channels=1)
    out = []

    plain = pil_gif(pal_im, optimize=False)
    assert first_image(parse(plain))["flags"] & 0x40, "PIL interlaces images 16 rows and taller"
    out.append(("palette_interlaced", plain, idx, ["colour converted"]))
    flat = pil_gif(pal_im, optimize=False, interlace=False)
    assert not first_image(parse(flat))["flags"] & 0x40
    out.append(("palette_not_interlaced", flat, idx, ["colour converted"]))
    out.append(("gray_L", pil_gif(Image.fromarray(gray), optimize=False), gray.astype(np.int64), []))

    # Transparency on a colour that is used: the pixels keep that colour, alpha is noted.
    t = int(idx[h // 2, w // 2])
    out.append(("transparency_used", pil_gif(pal_im, optimize=False, transparency=t), idx,
                ["colour converted", "alpha channel dropped"]))

    # PIL's local colour table (include_color_table) beside a global one made wrong: only
    # the local table gives the right gray. Then the same without any global table.
    g = parse(pil_gif(pal_im, optimize=False, include_color_table=True))
    assert first_image(g)["lct"] is not None
    g["gct"] = bytes(255 - b for b in g["gct"])
    out.append(("local_table_beside_wrong_global", build(g), idx, ["colour converted"]))
    g["gct"] = None
    out.append(("local_table_only", build(g), idx, ["colour converted"]))

    # No colour table at all: each index is its own gray level.
    g = parse(plain)
    g["gct"] = None
    out.append(("no_colour_table", build(g), idx, []))

    # The frame smaller than the screen, at an offset: the rest of the screen is index 0's
    # colour, or with transparency the transparent index's (then alpha is noted, since
    # the fill is transparent).
    small = Image.fromarray(rgb[:150, :201]).quantize(colors=64)
    small_idx = np.asarray(small).astype(np.int64)
    for name, kw, notes in (("small_frame", {}, ["colour converted"]),
                            ("small_frame_transparent", {"transparency": 3},
                             ["colour converted", "alpha channel dropped"])):
        g = parse(pil_gif(small, optimize=False, **kw))
        g["screen"] = (301, 260)
        first_image(g).update(x=37, y=21)
        out.append((name, build(g), small_idx, notes))
    # ... and reaching past the screen's right and bottom: the screen grows.
    g = parse(pil_gif(small, optimize=False))
    g["screen"] = (120, 100)
    first_image(g).update(x=30, y=40)
    out.append(("frame_past_the_screen", build(g), small_idx, ["colour converted"]))

    # Several frames: the first is read, the note counts them. PIL writes the later frames
    # cropped to what changed, with their own colour tables; one of them made the first
    # frame is a local table on a frame smaller than the screen, as another encoder writes.
    frames = [pal_im]
    for k, (y0, y1, x0, x1) in enumerate(((50, 200, 100, 300), (10, 40, 20, 500))):
        changed = np.asarray(frames[-1]).copy()
        changed[y0:y1, x0:x1] = (changed[y0:y1, x0:x1] + 17 * (k + 1)) % 200
        frames.append(Image.fromarray(changed, "P"))
        frames[-1].putpalette(pal_im.getpalette())
    anim = pil_gif(frames[0], save_all=True, append_images=frames[1:], duration=100)
    g = parse(anim)
    out.append(("three_frames", anim, None, ["colour converted", "3 pages: only the first is read"]))
    images = [i for i, (kind, _) in enumerate(g["records"]) if kind == "img"]
    later = g["records"][images[1]][1]
    assert later["lct"] is not None and (later["x"], later["y"], later["w"], later["h"]) == (100, 50, 200, 150)
    g["records"] = g["records"][images[0] + 1:]
    out.append(("later_frame_first", build(g), None, ["colour converted", "2 pages: only the first is read"]))
    return out


# ---- the checks ----

def run(gsmooth, args, stdin=None):
    return subprocess.run([gsmooth, *args], input=stdin, capture_output=True)


def check_case(gsmooth, tmp, name, data, indices, notes):
    src = os.path.join(tmp, name + ".gif")
    with open(src, "wb") as f:
        f.write(data)
    g = parse(data)
    want_pil = pil_gray(src).astype(np.int64)
    if indices is not None:
        want = expected_gray(g, indices)
        check(f"{name}: PIL agrees with the rule", not differs(want_pil, want), differs(want_pil, want))
    else:
        want = want_pil
    out = os.path.join(tmp, name + ".pgm")
    r = run(gsmooth, ["--iters", "0", src, out])
    if r.returncode != 0:
        check(name, False, f"exit {r.returncode}: {r.stderr.decode().strip()}")
        return
    got, maxval = read_pgm(out)
    check(f"{name} decoded", maxval == 255 and not differs(got, want), f"maxval {maxval}; {differs(got, want)}")
    err = r.stderr.decode()
    for note in notes:
        check(f"{name} note '{note}'", note in err, err)
    check(f"{name}: {len(notes)} notes", err.count("note:") == len(notes), err)
    # The same bytes through a pipe.
    r = run(gsmooth, ["--quiet", "--iters", "0", "-", os.path.join(tmp, "pipe.pgm")], stdin=data)
    same = r.returncode == 0 and not differs(read_pgm(os.path.join(tmp, "pipe.pgm"))[0], want)
    check(f"{name} through a pipe", same, r.stderr.decode().strip())


def check_limits_and_truncation(gsmooth, tmp):
    small = Image.fromarray(imagegen.photo_like(50, 60, seed=23, channels=3)).quantize(colors=32)
    g = parse(pil_gif(small, optimize=False))
    g["screen"] = (100, 100)
    first_image(g).update(x=90, y=80)  # 150 x 130 once grown
    src = os.path.join(tmp, "grown.gif")
    with open(src, "wb") as f:
        f.write(build(g))
    n = 150 * 130
    r = run(gsmooth, ["--max-pixels", str(n - 1), src, os.path.join(tmp, "l.png")])
    check("--max-pixels below the grown screen refuses", r.returncode == 1 and b"--max-pixels" in r.stderr
          and b"150x130" in r.stderr, r.stderr.decode())
    r = run(gsmooth, ["--quiet", "--max-pixels", str(n), src, os.path.join(tmp, "l.pgm")])
    check("--max-pixels at the grown screen reads", r.returncode == 0, r.stderr.decode())

    data = pil_gif(small, optimize=False)
    want = expected_gray(parse(data), np.asarray(small).astype(np.int64))
    # Without the trailer, and without the data's terminator too, the image is whole.
    for cut, name in ((1, "no trailer"), (2, "no terminator and no trailer")):
        for how, args, stdin in (("file", None, None), ("pipe", "-", data[:-cut])):
            path = os.path.join(tmp, "cut.gif")
            with open(path, "wb") as f:
                f.write(data[:-cut])
            out = os.path.join(tmp, "cut.pgm")
            r = run(gsmooth, ["--quiet", "--iters", "0", args or path, out], stdin=stdin)
            ok = r.returncode == 0 and not differs(read_pgm(out)[0], want)
            check(f"{name} ({how}) reads whole", ok, r.stderr.decode())
    # Cut inside the pixel data: one line, no output.
    for cut in (13, len(data) // 2, len(data) - 800):
        path = os.path.join(tmp, "short.gif")
        with open(path, "wb") as f:
            f.write(data[:cut])
        out = os.path.join(tmp, "short.png")
        r = run(gsmooth, [path, out])
        lines = r.stderr.decode().strip().splitlines()
        check(f"cut at {cut} of {len(data)} refused", r.returncode == 1 and len(lines) == 1
              and ("truncated GIF" in lines[0] or "invalid GIF" in lines[0]) and not os.path.exists(out),
              r.stderr.decode())


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    gsmooth = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="gsmooth-gif-") as tmp:
        for name, data, indices, notes in cases():
            check_case(gsmooth, tmp, name, data, indices, notes)
        check_limits_and_truncation(gsmooth, tmp)
    return check.report("gif_check")


if __name__ == "__main__":
    sys.exit(main())
