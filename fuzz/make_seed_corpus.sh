#!/bin/sh
# make_seed_corpus.sh: writes the fuzzer's seed corpus into DIR.
#
# The samples, the golden inputs, small valid files of every input format and variant (made
# with /usr/bin/python3, PIL and, for TIFF, tifffile), the float TIFF and .npy files of
# tests/external/float, and PNG descriptions for
# fuzz_png_writer_diff.
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 SEED_DIR" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SEEDS=$1
PYTHON=${GS_PYTHON:-/usr/bin/python3}
mkdir -p "$SEEDS"
cp "$ROOT"/samples/*.png "$ROOT"/tests/golden/inputs/*.png "$SEEDS"/
# BMP and TGA of other writers, each variant their readers take apart: bmpsuite's good and
# questionable files (every header, palette, RLE and bit-field layout) and Pillow's TGAs
# (every type, origin and colour-map depth), under names that keep their directories apart.
EXT="$ROOT/tests/external/pillow"
for f in "$EXT"/bmp/g/*.bmp "$EXT"/bmp/q/*.bmp "$EXT"/bmp/b/*.bmp; do
    [ -e "$f" ] && cp "$f" "$SEEDS/bmpsuite_$(basename "$(dirname "$f")")_$(basename "$f")"
done
for f in "$EXT"/*.tga "$EXT"/tga/common/*.tga "$EXT"/hopper_rle8*.bmp; do
    [ -e "$f" ] && cp "$f" "$SEEDS/pillow_$(basename "$f")"
done
# Float TIFF (float32 in strips and tiles, both byte orders, deflate and LZW with the
# floating-point predictor; float64; int16) and .npy (every dtype and format version read,
# and the refused ones) of tests/external/float: seeds for the tiff and npy harnesses.
for f in "$ROOT"/tests/external/float/*.tif "$ROOT"/tests/external/float/*.npy; do
    case $(basename "$f") in expect_*) continue ;; esac
    cp "$f" "$SEEDS/float_$(basename "$f")"
done

# The valid base files of the damaged corpus (one of every format), plus variants the
# decoders treat differently: progressive JPEG, RLE TGA, 32-bit BMP, RGBA TGA, PNG and
# 16-bit PGM, plain and bitmap Netpbm, RGBA and 1-bit PNG, animated GIF and GIF first
# frames, a PSD with alpha.
"$PYTHON" - "$ROOT" "$SEEDS" <<'EOF'
import io
import os
import random
import sys
import tempfile

import numpy as np
from PIL import Image

root, seeds = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "tests", "damaged"))
import make_damaged  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    import contextlib
    with contextlib.redirect_stdout(io.StringIO()):
        sys.argv = ["make_damaged.py", tmp]
        make_damaged.main()
    for name in os.listdir(tmp):
        if name.startswith("valid_"):
            with open(os.path.join(tmp, name), "rb") as src, open(os.path.join(seeds, name), "wb") as dst:
                dst.write(src.read())

rng = random.Random(make_damaged.SEED)
gray = make_damaged.noise(rng, 16, 24)
rgb = make_damaged.noise(rng, 12, 20, 3)
rgba = make_damaged.noise(rng, 10, 14, 4)


def save(name, array, fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format=fmt, **kw)
    with open(os.path.join(seeds, name), "wb") as f:
        f.write(buf.getvalue())


save("seed_progressive.jpg", rgb, "JPEG", quality=75, progressive=True)
save("seed_subsampled.jpg", rgb, "JPEG", quality=50, subsampling=2)
save("seed_rle.tga", gray, "TGA", compression="tga_rle")
save("seed_rgba.tga", rgba, "TGA")
save("seed_rgba.bmp", rgba, "BMP")
save("seed_1bit.bmp", gray > 127, "BMP")
save("seed_rle_topdown_la.tga", np.dstack([gray, 255 - gray]), "TGA", compression="tga_rle",
     orientation=1)
palette = Image.fromarray(rgb).quantize(colors=16)
palette.save(os.path.join(seeds, "seed_palette.bmp"))
palette.save(os.path.join(seeds, "seed_palette_rle.tga"), compression="tga_rle")
save("seed_rgba.png", rgba, "PNG")
save("seed_rgb.gif", rgb, "GIF")
save("seed_lossy.webp", rgb, "WEBP", quality=60)
save("seed_lossless.webp", rgb, "WEBP", lossless=True)
save("seed_alpha.webp", rgba, "WEBP", quality=60)
save("seed_alpha_lossless.webp", rgba, "WEBP", lossless=True)
Image.fromarray(gray > 127).save(os.path.join(seeds, "seed_1bit.png"))
with open(os.path.join(seeds, "seed_16bit.pgm"), "wb") as f:  # PIL cannot write 16-bit PNM
    f.write(b"P5\n%d %d\n65535\n" % (gray.shape[1], gray.shape[0]) +
            (gray.astype(">u2") * 257).tobytes())
# Netpbm beside the binary PGM/PPM of the damaged corpus: plain P1-P3 (comments between
# samples, a maxval that needs scaling, 16-bit text) and binary P4 (rows padded to a byte).
def netpbm(name, data):
    with open(os.path.join(seeds, name), "wb") as f:
        f.write(data)


def text(a):
    return b"\n".join(b" ".join(b"%d" % v for v in row) for row in a.reshape(a.shape[0], -1)) + b"\n"


bits = (gray > 127).astype(np.uint8)
netpbm("seed_plain.pbm", b"P1\n# plain\n%d %d\n" % (bits.shape[1], bits.shape[0]) +
       b"\n".join(b"".join(b"%d" % v for v in row) for row in bits) + b"\n")
netpbm("seed_plain.pgm", b"P2 %d %d 1000 # scaled\n" % (gray.shape[1], gray.shape[0]) +
       text(gray.astype(np.int64) * 1000 // 255).replace(b"\n", b" # row\n"))
netpbm("seed_plain16.pgm", b"P2\n%d %d\n65535\n" % (gray.shape[1], gray.shape[0]) +
       text(gray.astype(np.int64) * 257))
netpbm("seed_plain.ppm", b"P3\n%d %d\n255\n" % (rgb.shape[1], rgb.shape[0]) + text(rgb))
Image.fromarray(gray > 127).save(os.path.join(seeds, "seed_binary.pbm"))
frames = [Image.fromarray(gray), Image.fromarray(255 - gray)]
frames[0].save(os.path.join(seeds, "seed_animated.gif"), save_all=True, append_images=frames[1:])

# GIF first frames giflib's reader takes different paths for: interlaced (PIL interlaces from
# 16 rows), a transparent index, a local colour table, and, reshaped from PIL's bytes, a
# frame smaller than the screen and a file with no colour table at all.
pal = Image.fromarray(make_damaged.noise(rng, 18, 21, 3)).quantize(colors=16)
save("seed_interlaced.gif", np.asarray(pal.convert("RGB")), "GIF")
buf = io.BytesIO()
pal.save(buf, format="GIF", transparency=1)
with open(os.path.join(seeds, "seed_transparent.gif"), "wb") as f:
    f.write(buf.getvalue())
buf = io.BytesIO()
pal.save(buf, format="GIF", include_color_table=True, interlace=False)
with open(os.path.join(seeds, "seed_local_table.gif"), "wb") as f:
    f.write(buf.getvalue())
buf = io.BytesIO()
pal.save(buf, format="GIF", interlace=False)
plain = bytearray(buf.getvalue())
table = 3 << ((plain[10] & 7) + 1)
at = 13 + table  # the first block after the global table: PIL writes the image there
assert plain[at] == 0x2C
small = bytearray(plain)
small[6:10] = (40).to_bytes(2, "little") + (30).to_bytes(2, "little")  # the screen
small[at + 1:at + 5] = (5).to_bytes(2, "little") + (7).to_bytes(2, "little")  # the frame's place
with open(os.path.join(seeds, "seed_small_frame.gif"), "wb") as f:
    f.write(bytes(small))
bare = plain[:10] + bytes([plain[10] & 0x7F]) + plain[11:13] + plain[13 + table:]
with open(os.path.join(seeds, "seed_no_table.gif"), "wb") as f:
    f.write(bytes(bare))
with open(os.path.join(seeds, "seed_rgba.psd"), "wb") as f:
    f.write(make_damaged.psd(rgba, make_damaged.PSD_MODE_RGB))

# TIFF layouts the reader takes apart differently (tifffile, and tests/tiff's packer for
# 2/4-bit samples): 1/2/4-bit gray, palettes, CMYK, YCbCr through the RGBA interface,
# separate planes, tiles; libtiff's old-style JPEG test images; PIL's CCITT G4.
try:
    import tifffile
except ImportError:
    tifffile = None
if tifffile is not None:
    import warnings
    sys.path.insert(0, os.path.join(root, "tests", "tiff"))
    import tiff_check  # noqa: E402  (its helpers; main() runs only as a script)
    bw = gray > 127
    four = (gray >> 4).astype(np.uint8)
    cmap = np.random.default_rng(1).integers(0, 65536, (3, 256), dtype=np.uint16)
    tiffs = {
        "seed_gray1.tif": lambda p: tifffile.imwrite(p, bw, rowsperstrip=5),
        "seed_gray1_tiles.tif": lambda p: tifffile.imwrite(p, bw, photometric="minisblack", tile=(16, 16)),
        "seed_gray2_fillorder2.tif": lambda p: tiff_check.write_packed(p, four >> 2, 2, reversed_bits=True, rowsperstrip=7),
        "seed_gray4_tiles.tif": lambda p: tiff_check.write_packed(p, four, 4, tile=(16, 16)),
        "seed_palette4.tif": lambda p: tiff_check.write_packed(p, four, 4, photometric=3, colormap=cmap[:, :16]),
        "seed_palette8.tif": lambda p: tifffile.imwrite(p, gray, photometric="palette", colormap=cmap),
        "seed_ycbcr.tif": lambda p: tifffile.imwrite(p, rgb, photometric="ycbcr", subsampling=(1, 1), rowsperstrip=4),
        "seed_ycbcr_tiles.tif": lambda p: tifffile.imwrite(p, np.pad(rgb, ((0, 4), (0, 0), (0, 0))), photometric="ycbcr",
                                                         subsampling=(1, 1), tile=(16, 16)),
        "seed_rgb16_planes.tif": lambda p: tifffile.imwrite(p, np.moveaxis(rgb.astype(np.uint16) * 257, 2, 0),
                                                          photometric="rgb", planarconfig="separate", rowsperstrip=5),
        "seed_gray16_miniswhite.tif": lambda p: tifffile.imwrite(p, gray.astype(np.uint16) * 257, photometric="miniswhite"),
        "seed_cmyk.tif": lambda p: tifffile.imwrite(p, rgba, photometric="separated", rowsperstrip=3),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, write in tiffs.items():
            write(os.path.join(seeds, name))
    Image.fromarray(bw).save(os.path.join(seeds, "seed_g4.tif"), compression="group4")
    corpus = os.path.join(root, "tests", "external", "libtiff")
    for name in sorted(os.listdir(corpus)) if os.path.isdir(corpus) else []:
        if name.startswith("ojpeg_") or name.startswith("palette-1c-"):
            with open(os.path.join(corpus, name), "rb") as src, open(os.path.join(seeds, "seed_" + name), "wb") as dst:
                dst.write(src.read())

# FITS of every BITPIX and layout the reader takes apart (tests/external/fits: astropy's
# writer, and cfitsio's and astropy's own test files), small enough for -max_len.
fits_dir = os.path.join(root, "tests", "external", "fits")
for name in sorted(os.listdir(fits_dir)) if os.path.isdir(fits_dir) else []:
    if name.endswith(".fits") and os.path.getsize(os.path.join(fits_dir, name)) <= 65536:
        with open(os.path.join(fits_dir, name), "rb") as src, open(os.path.join(seeds, "seed_" + name), "wb") as dst:
            dst.write(src.read())

# Descriptions for fuzz_png_writer_diff, in the layout its header comment gives: the sizes,
# types and settings of PNGs common writers make (fields taken modulo their ranges there).
def png_description(color, width, height, content, filters, level, flags=0, seed=1, strategy=0,
                    window=6, mem_level=7, entries=255, end=0, empty_every=0, idat_sizes=(),
                    flushes=()):
    out = bytes([color, flags]) + width.to_bytes(3, "big") + height.to_bytes(3, "big")
    out += bytes([content]) + seed.to_bytes(4, "big")
    out += bytes([filters, level, strategy, window, mem_level, entries - 1, end, empty_every])
    out += b"".join(n.to_bytes(3, "big") for n in (tuple(idat_sizes) + (0, 0, 0, 0))[:4])
    return out + b"".join(at.to_bytes(3, "big") + bytes([mode]) for at, mode in flushes)


GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = range(5)        # its colour picks
FLAT, GRADIENT, PHOTO, RANDOM, REPEATING, SPARSE = range(6)
NONE, SUB, UP, AVERAGE, PAETH, EACH_ROW, PAETH_RUNS = range(7)
SIXTEEN_BIT, TRNS = 1, 2
THIRD = (1 << 24) // 3
for name, desc in {
    "gray_64": png_description(GRAY, 64, 64, PHOTO, SUB, 6),
    "rgb_640x480_idat8k": png_description(RGB, 640, 480, PHOTO, EACH_ROW, 6, idat_sizes=(8192,)),
    "palette_256_idat64k": png_description(PALETTE, 256, 256, RANDOM, NONE, 9, flags=TRNS,
                                           entries=200, idat_sizes=(65536,)),
    "gray16_1000x3_stored": png_description(GRAY, 1000, 3, RANDOM, AVERAGE, 0, flags=SIXTEEN_BIT),
    "graya_128x1024_rle": png_description(GRAY_ALPHA, 128, 1024, REPEATING, PAETH_RUNS, 6, strategy=3,
                                          window=0, idat_sizes=(1, 100, 0)),
    "rgba16_300x200_flushes": png_description(RGBA, 300, 200, PHOTO, UP, 4, flags=SIXTEEN_BIT,
                                              strategy=1, flushes=((THIRD, 0), (2 * THIRD, 1))),
    "gray_2000x500_ends": png_description(GRAY, 2000, 500, SPARSE, PAETH, 9, strategy=2,
                                          end=0x23, empty_every=2, idat_sizes=(8192,)),
    "rgb_1024_level1": png_description(RGB, 1024, 1024, GRADIENT, PAETH, 1),
}.items():
    with open(os.path.join(seeds, "seed_pngwrite_%s.bin" % name), "wb") as f:
        f.write(desc)
EOF
echo "make_seed_corpus.sh: $(ls "$SEEDS" | wc -l) seed files in $SEEDS"
