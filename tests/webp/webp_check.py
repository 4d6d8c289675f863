#!/usr/bin/python3
"""webp_check.py: WebP through gsmooth against files PIL, OpenCV and vips wrote.

Lossy and lossless, with and without alpha, at sizes from 1x1 across libwebp's 16-pixel
macroblocks to a 4000x3000 photo-like picture; each decoded sample compared with the gray
of OpenCV's and PIL's own decoding (libwebp both; alpha dropped, the colour values under it
kept as the file codes them), through a file and a pipe. Then the refusals, each one line
and exit 1 with no output: an animation, a truncated file, a RIFF size larger than the
image could need; and --max-pixels from the header.

usage: webp_check.py GSMOOTH
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
try:
    import cv2
    from PIL import Image, features
except ImportError as e:
    print(f"skipped: {e.name} is not installed (python3-opencv, python3-pil)")
    sys.exit(SKIP)
if not features.check("webp"):
    print("skipped: this PIL was built without WebP")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import imagegen  # noqa: E402
from image_files import Checks, differs, read_pgm  # noqa: E402
from reference import luma  # noqa: E402

GSMOOTH = sys.argv[1]
check = Checks()


def gray_of_rgb(rgb):
    rgb = rgb.astype(np.int64)
    return luma(rgb[..., 0], rgb[..., 1], rgb[..., 2])


def opencv_gray(path):
    """libwebp's colour as OpenCV decodes it (BGR or BGRA, the raw colour under alpha)."""
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    return gray_of_rgb(a[..., 2::-1])


def pil_gray(path):
    with Image.open(path) as im:
        return gray_of_rgb(np.asarray(im.convert("RGBA" if im.mode == "RGBA" else "RGB"))[..., :3])


def gsmooth(args, stdin=None):
    return subprocess.run([GSMOOTH, *args], input=stdin, capture_output=True)


def decoded(path, work, via_pipe=False):
    out = os.path.join(work, "out.pgm")
    if os.path.exists(out):
        os.remove(out)
    if via_pipe:
        with open(path, "rb") as f:
            data = f.read()
        r = gsmooth(["--quiet", "--iters", "0", "-", out], stdin=data)
    else:
        r = gsmooth(["--quiet", "--iters", "0", path, out])
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace").strip()
    return read_pgm(out)[0], ""


def picture(h, w, seed, alpha):
    rng = np.random.default_rng(seed)
    rgb = imagegen.photo_like(h, w, seed=seed, channels=3) if h * w > 64 else \
        rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    if not alpha:
        return rgb.astype(np.uint8)
    a = rng.integers(0, 256, (h, w, 1), dtype=np.uint8)
    a[: h // 2] = 0  # fully transparent rows: the encoder may change the colour under them
    return np.concatenate([rgb.astype(np.uint8), a], axis=2)


def writers(pixels, base):
    """(name, path) of the files each program writes from `pixels`."""
    alpha = pixels.shape[2] == 4
    made = []
    im = Image.fromarray(pixels, "RGBA" if alpha else "RGB")
    for name, kw in (("pil_q75", {"quality": 75}), ("pil_q20_m0", {"quality": 20, "method": 0}),
                     ("pil_q95_m6", {"quality": 95, "method": 6}), ("pil_lossless", {"lossless": True}),
                     ("pil_lossless_exact", {"lossless": True, "exact": True})):
        path = f"{base}_{name}.webp"
        im.save(path, "WEBP", **kw)
        made.append((name, path))
    bgr = pixels[..., [2, 1, 0, 3]] if alpha else pixels[..., ::-1]
    for name, q in (("opencv_q80", 80), ("opencv_lossless", 101)):
        path = f"{base}_{name}.webp"
        if cv2.imwrite(path, np.ascontiguousarray(bgr), [cv2.IMWRITE_WEBP_QUALITY, q]):
            made.append((name, path))
    if shutil.which("vips"):
        src = f"{base}_src.png"
        im.save(src)
        for name, extra in (("vips_q75", []), ("vips_lossless", ["--lossless"])):
            path = f"{base}_{name}.webp"
            if subprocess.run(["vips", "webpsave", src, path, *extra], capture_output=True).returncode == 0:
                made.append((name, path))
    return made


def main():
    work = tempfile.mkdtemp(prefix="gsmooth-webp-")
    try:
        sizes = [(1, 1), (3, 2), (15, 17), (16, 16), (17, 33), (64, 63), (480, 640), (777, 1000)]
        files = 0
        for h, w in sizes:
            for alpha in (False, True):
                base = os.path.join(work, f"{w}x{h}{'_alpha' if alpha else ''}")
                for name, path in writers(picture(h, w, h * 7 + w, alpha), base):
                    case = f"{os.path.basename(path)}"
                    want = opencv_gray(path)
                    got, err = decoded(path, work)
                    check(case, got is not None, err)
                    if got is None:
                        continue
                    check(case + " vs OpenCV", differs(got, want) == "", differs(got, want))
                    if not alpha:  # PIL blends an alpha picture over its canvas: only stills without
                        check(case + " vs PIL", differs(got, pil_gray(path)) == "", differs(got, pil_gray(path)))
                    if h * w <= 64 * 63:
                        piped, err = decoded(path, work, via_pipe=True)
                        check(case + " through a pipe", piped is not None and differs(piped, got) == "", err)
                    files += 1
        # A realistic photo size, once, lossy as cameras' WebP exports are.
        big = os.path.join(work, "photo_4000x3000.webp")
        Image.fromarray(picture(3000, 4000, 5, False)).save(big, "WEBP", quality=85)
        got, err = decoded(big, work)
        check("4000x3000", got is not None and differs(got, opencv_gray(big)) == "", err or differs(got, opencv_gray(big)))
        files += 1

        # The notes: colour always, alpha when the file has it.
        alpha_file = os.path.join(work, "17x15_alpha_pil_q75.webp")
        Image.fromarray(picture(15, 17, 3, True), "RGBA").save(alpha_file, "WEBP", quality=75)
        r = gsmooth(["--iters", "0", alpha_file, os.path.join(work, "n.png")])
        notes = r.stderr.decode()
        check("notes", r.returncode == 0 and "colour converted to gray" in notes and "alpha" in notes, notes)

        # Refusals: one line, exit 1, no output.
        still = os.path.join(work, "63x64_pil_q75.webp")
        with open(still, "rb") as f:
            data = f.read()
        with open(os.path.join(work, "63x64_pil_lossless.webp"), "rb") as f:
            lossless = f.read()
        frames = [Image.fromarray(picture(32, 32, s, False)) for s in (1, 2)]
        anim = os.path.join(work, "anim.webp")
        frames[0].save(anim, "WEBP", save_all=True, append_images=frames[1:], duration=100)
        bad = {"animated": (anim, "animated WebP"),
               "truncated": (data[: len(data) // 2], "truncated WebP"),
               "riff size past the image": (data[:4] + (0x7FFFFFF0).to_bytes(4, "little") + data[8:],
                                            "more than a 63x64 image needs"),
               "no chunk": (b"RIFF\x04\x00\x00\x00WEBP", "invalid WebP"),
               "lossless bitstream": (lossless[:30] + b"\xff" * (len(lossless) - 30),
                                      "invalid WebP: bitstream error")}
        for case, (content, needle) in bad.items():
            path = content if isinstance(content, str) else os.path.join(work, "bad.webp")
            if not isinstance(content, str):
                with open(path, "wb") as f:
                    f.write(content)
            out = os.path.join(work, "refused.png")
            r = gsmooth([path, out])
            err = r.stderr.decode(errors="replace")
            check(f"refused: {case}", r.returncode == 1 and needle in err and err.count("\n") == 1 and
                  not os.path.exists(out), f"exit {r.returncode}, {err!r}")
        r = gsmooth(["--max-pixels", "4000", still, os.path.join(work, "big.png")])
        err = r.stderr.decode()
        check("--max-pixels", r.returncode == 1 and "4032" in err and err.count("\n") == 1, err)
    finally:
        shutil.rmtree(work)
    sys.exit(check.report("webp_check", f", over {files} files"))


if __name__ == "__main__":
    main()
