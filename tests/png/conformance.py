#!/usr/bin/env python3
"""conformance.py: ctest png_conformance: PNGs sized across the fast reader's boundaries.
PNGs written by libpng, OpenCV, PIL, vips and zlib streams made here, sized across each of
the fast PNG reader's buffer and batch boundaries, then every one decoded by the fast reader
and by libpng (test_png_conformance), which must agree on each.

usage: conformance.py TEST_PNG_CONFORMANCE LIBPNG_WRITE [WORK_DIR]

The boundaries are read from the reader itself (test_png_conformance --limits prints
io/png_isal_limits.h and ISA-L's buffer size): compressed input read 128 KiB at a time,
filtered rows inflated 256 KiB a batch, a second thread from four batches, rows
unfiltered 16 at a time (io/png_unfilter.h's wavefront), and the ~64 KiB of decoded bytes ISA-L can hold after taking
every compressed byte. Images are sized so that the filtered data, the last batch or the
zlib stream fall a byte or a row short of each, on it, and past it.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pngcases as pc  # noqa: E402

# A row stride that divides the batch: batches then end exactly on a row.
EVEN_STRIDE = 1024
# Widths searched when a byte total must be met exactly (stride times rows).
STRIDE_SEARCH = (256, 4096)
# IDAT sizes libpng is asked for: its floor (6 bytes), libpng's and OpenCV's 8 KiB, PIL's
# 64 KiB, and one IDAT for the whole stream (0).
LIBPNG_IDATS = (6, 8192, 65536, 0)
PIL_SETTINGS = ((0, False), (1, False), (6, False), (9, False), (None, True))  # level, optimize
VIPS_COMPRESSIONS = (0, 1, 6, 9)
# Bytes past the stream's end at which the last IDAT is cut, one file each: the Adler-32
# (4 bytes) and the final block's last bytes, each split from what comes before.
TAIL_CUTS = range(1, 13)
# Camera and screen sizes, written with each program's default settings.
REALISTIC = (("rgb8", 1920, 1080), ("gray8", 4000, 3000), ("gray16", 2048, 1536))
# Types other than 8-bit gray: the row-count boundaries, at widths of their own.
OTHER_TYPES = ("gray16", "ga8", "ga16", "rgb8", "rgb16", "rgba8", "rgba16", "pal8")
# Hand-made stream layouts, taken in turn: (row filters, zlib level, strategy, window bits,
# flushes at batch boundaries, final block, IDAT sizes).
ZLIB_LAYOUTS = (
    ("paeth_runs", 6, zlib.Z_DEFAULT_STRATEGY, 15, zlib.Z_SYNC_FLUSH, "finish", (8192,)),
    ("mixed", 9, zlib.Z_FILTERED, 15, zlib.Z_FULL_FLUSH, "empty_fixed", (65536,)),
    ("paeth", 1, zlib.Z_RLE, 12, None, "empty_stored", ()),
    ("sub", 6, zlib.Z_HUFFMAN_ONLY, 15, zlib.Z_SYNC_FLUSH, "finish", (1000, 1, 77777)),
    ("up", 4, zlib.Z_FIXED, 9, zlib.Z_FULL_FLUSH, "finish", (131071, 131072, 131073)),
    ("average", 0, zlib.Z_DEFAULT_STRATEGY, 15, None, "finish", (65535,)),
)


def read_limits(compare):
    out = subprocess.run([compare, "--limits"], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def divisor_near(n, lo, hi):
    """A divisor of n in [lo, hi], the one nearest EVEN_STRIDE, or None."""
    found = [s for s in range(lo, hi + 1) if n % s == 0]
    return min(found, key=lambda s: abs(s - EVEN_STRIDE)) if found else None


def batch_rows(L, stride):
    """Rows in a full batch (io/png_isal_limits.h, gs_png_isal_batch_rows): BATCH_BYTES of
    rows, or at least WAVE_ROWS of them while they fit WAVE_BATCH_BYTES."""
    wave = min(L["WAVE_ROWS"], L["WAVE_BATCH_BYTES"] // stride)
    return max(1, L["BATCH_BYTES"] // stride, wave)


class Plan:
    """The list of PNGs to write: (name, writer, type, width, height, content, options)."""

    def __init__(self, limits):
        self.L = limits
        self.cases = []

    def add(self, tag, writer, kind, width, height, content, **opt):
        name = "%s_%s_%s_%dx%d_%s_%03d.png" % (writer, tag, kind, width, height, content, len(self.cases))
        self.cases.append((name, writer, kind, width, height, content, opt))

    def batch_rows(self, kind, width):
        return batch_rows(self.L, width * pc.bytes_per_pixel(kind) + 1)


def byte_shapes(L):
    """8-bit gray shapes (tag, width, height) whose filtered bytes (width + 1 a row) cross
    each boundary at -1, 0 and +1 byte and row."""
    BB, T, P = L["BATCH_BYTES"], L["THREAD_MIN_BATCHES"], L["WAVE_ROWS"]
    held, window = L["ISAL_HELD_BYTES"], L["ISAL_WINDOW_BYTES"]
    assert BB % EVEN_STRIDE == 0
    shapes = []

    def rows(stride):
        return batch_rows(L, stride)

    # Batches: a stride dividing the batch and a byte either side; a row short of a batch,
    # a batch, a row over.
    for s in (EVEN_STRIDE - 1, EVEN_STRIDE, EVEN_STRIDE + 1):
        for d in (-1, 0, 1):
            shapes.append(("batch", s - 1, rows(s) + d))
    # The whole image a byte short of a batch (OpenCV's 512x512 first batch), and a byte
    # over: those batches end a row or part of one before the stream does.
    for d in (-1, 1):
        s = divisor_near(BB + d, *STRIDE_SEARCH)
        shapes.append(("batch%+d" % d, s - 1, (BB + d) // s))
        shapes.append(("batch%+d_row" % d, s - 1, (BB + d) // s + 1))
    # The inflating thread: a batch short of THREAD_MIN_BATCHES, on it and past it, a row
    # either side of each.
    for k in (T - 1, T):
        for d in (-1, 0, 1):
            shapes.append(("threads", EVEN_STRIDE - 1, k * rows(EVEN_STRIDE) + d))
    # Rows wider than a batch (a batch of their own): a byte short, on it, a byte over;
    # THREAD_MIN_BATCHES rows (threaded) and one fewer.
    for s in (BB - 1, BB, BB + 1):
        shapes.append(("wide", s - 1, T))
    shapes.append(("wide", BB - 1, T - 1))
    shapes.append(("wide", BB, 1))
    # Wide rows: where BATCH_BYTES holds fewer than WAVE_ROWS rows and batches take
    # WAVE_ROWS of them, and where those no longer fit WAVE_BATCH_BYTES; a row short of a
    # batch, a batch, a row over.
    WB = L["WAVE_BATCH_BYTES"]
    for s in (BB // P, BB // P + 1, WB // P, WB // P + 1):
        for d in (-1, 0, 1):
            shapes.append(("wavebatch", s - 1, rows(s) + d))
    # What ISA-L can hold back: the whole image, or the last batch after full ones, a byte
    # short of its buffer, on it and past it; the same around its window.
    for total, tag in ((held, "held"), (window, "window")):
        for d in (-1, 0, 1):
            s = divisor_near(total + d, *STRIDE_SEARCH) or total + d
            shapes.append((tag + "_whole%+d" % d, s - 1, (total + d) // s))
            shapes.append((tag + "_last%+d" % d, s - 1, rows(s) + (total + d) // s))
        for d in (-1, 0, 1):  # one row of that size after a batch of such rows
            s = total + d
            shapes.append((tag + "_row%+d" % d, s - 1, rows(s) + 1))
    # Wavefront groups: batches whose row count leaves P-1, 0 and 1 rows after the last
    # group of P, and last batches of P-1, P and P+1 rows.
    seen = set()
    for s in range(EVEN_STRIDE - 8, EVEN_STRIDE + 9):
        r = rows(s) % P
        if r in ((P - 1) % P, 0, 1) and r not in seen:
            seen.add(r)
            for d in (-1, 0, 1):
                shapes.append(("paeth", s - 1, 2 * rows(s) + P + d))
    return shapes


def row_shapes(plan, kind):
    """Shapes for a type of more bytes a pixel: the row-count boundaries at its own widths."""
    L, bpp = plan.L, pc.bytes_per_pixel(kind)
    BB, T = L["BATCH_BYTES"], L["THREAD_MIN_BATCHES"]
    w0 = (EVEN_STRIDE - 1) // bpp
    br = plan.batch_rows(kind, w0)
    shapes = [("batch", w0, br + d) for d in (-1, 0, 1)]
    shapes += [("threads", w0, k * br + d) for k in (T - 1, T) for d in (-1, 0, 1)]
    wide = (BB - 1) // bpp  # the widest row that fits a batch
    shapes += [("wide", wide + d, T) for d in (0, 1)]
    held = L["ISAL_HELD_BYTES"]
    for d in (-1, 0, 1):
        w = max(1, (held + d - 1) // bpp)
        shapes.append(("held_row%+d" % d, w, plan.batch_rows(kind, w) + 1))
    return shapes


def stored_shapes(L):
    """Stored-block streams whose length is a byte short of the input buffer, on it and a
    byte over (in one IDAT): (tag, width, height, blocks)."""
    IB = L["INPUT_BYTES"]
    out = []
    for total in (IB - 1, IB, IB + 1, 2 * IB + 1):
        for blocks in range(-(-total // pc.STORED_BLOCK_MAX), 40):
            data = total - 6 - 5 * blocks
            s = divisor_near(data, *STRIDE_SEARCH)
            if s and -(-data // pc.STORED_BLOCK_MAX) <= blocks:
                out.append(("stream%d" % total, s - 1, data // s, blocks))
                break
    return out


def build_plan(limits, have_vips):
    plan = Plan(limits)
    P, BB = limits["WAVE_ROWS"], limits["BATCH_BYTES"]
    gray = byte_shapes(limits)
    writers = [w for w in pc.WRITERS_OF["gray8"] if w != "vips" or have_vips]
    counter = collections.Counter()

    def options(writer, kind, i, width, height):
        """Settings for the i-th file of this writer, taken in turn."""
        if writer == "libpng":
            return dict(idat=LIBPNG_IDATS[i % len(LIBPNG_IDATS)], level=(1, 6, 9, 0, 3)[i % 5],
                        filt=(4, 5, 0, 1, 2, 3)[i % 6])
        if writer == "opencv":
            return dict(level=i % 10, strategy=(i // 10 + i) % 5)
        if writer == "pil":
            level, optimize = PIL_SETTINGS[i % len(PIL_SETTINGS)]
            return dict(level=level, optimize=optimize)
        if writer == "vips":
            return dict(compression=VIPS_COMPRESSIONS[i % len(VIPS_COMPRESSIONS)])
        layout = ZLIB_LAYOUTS[i % len(ZLIB_LAYOUTS)]
        stride = width * pc.bytes_per_pixel(kind) + 1
        batch = plan.batch_rows(kind, width) * stride
        flushes = ()
        if layout[4] is not None:  # flush at each batch boundary and a byte either side
            flushes = tuple((k * batch + d, layout[4]) for k in range(1, 4) for d in (-1, 0, 1)
                            if 0 < k * batch + d < stride * height)
        return dict(filters=layout[0], level=layout[1], strategy=layout[2], wbits=layout[3],
                    flushes=flushes, final=layout[5], sizes=layout[6])

    # Every 8-bit gray shape through every writer, contents in turn.
    for i, (tag, w, h) in enumerate(gray):
        for j, writer in enumerate(writers):
            n = counter[writer]
            counter[writer] += 1
            plan.add(tag, writer, "gray8", w, h, pc.CONTENTS[(i + j) % len(pc.CONTENTS)],
                     **options(writer, "gray8", n, w, h))
    # The other types at their own row boundaries, writers and contents in turn.
    for kind in OTHER_TYPES:
        ws = [w for w in pc.WRITERS_OF[kind] if w != "vips" or have_vips]
        for i, (tag, w, h) in enumerate(row_shapes(plan, kind)):
            writer = ws[i % len(ws)]
            n = counter[writer]
            counter[writer] += 1
            plan.add(tag, writer, kind, w, h, pc.CONTENTS[i % len(pc.CONTENTS)],
                     trns=kind in ("gray8", "rgb8", "pal8") and i % 3 == 0,
                     **options(writer, kind, n, w, h))
    # OpenCV at every level and strategy, PIL at each setting, vips at each compression,
    # libpng at each IDAT size: over the 8-bit gray shapes and OpenCV's other types.
    cv_kinds = ("gray8", "rgb8", "gray16", "rgba8")
    for level in range(10):
        for strategy in pc.OPENCV_STRATEGIES:
            k = level * 5 + strategy
            tag, w, h = gray[k % len(gray)]
            kind = cv_kinds[k % len(cv_kinds)]
            if kind != "gray8":
                tag, w, h = row_shapes(plan, kind)[k % 6]
            plan.add(tag, "opencv", kind, w, h, pc.CONTENTS[k % 4], level=level, strategy=strategy)
    for k, (level, optimize) in enumerate(PIL_SETTINGS):
        for m, kind in enumerate(("gray8", "rgb8", "pal8")):
            tag, w, h = gray[(7 * k + 3 * m) % len(gray)] if kind == "gray8" else row_shapes(plan, kind)[k + m]
            plan.add(tag, "pil", kind, w, h, pc.CONTENTS[(k + m) % 4], level=level, optimize=optimize)
    if have_vips:
        for k, compression in enumerate(range(10)):
            tag, w, h = gray[(5 * k + 1) % len(gray)]
            plan.add(tag, "vips", "gray8", w, h, pc.CONTENTS[k % 4], compression=compression)
        tag, w, h = row_shapes(plan, "rgba8")[4]
        plan.add(tag, "vips", "pal8", w, h, "photo", compression=6)
    for k, idat in enumerate(LIBPNG_IDATS):
        for m, kind in enumerate(("gray8", "pal8", "rgba16")):
            tag, w, h = gray[(11 * k + 5 * m) % len(gray)] if kind == "gray8" else row_shapes(plan, kind)[3 + k]
            plan.add(tag, "libpng", kind, w, h, pc.CONTENTS[(k + m) % 4], idat=idat, level=6,
                     filt=(4, 5)[m % 2], trns=kind == "pal8")

    # What users write most: each program's defaults, at camera and screen sizes.
    for k, (kind, w, h) in enumerate(REALISTIC):
        for writer in ("opencv", "pil", "vips") if have_vips else ("opencv", "pil"):
            if writer in pc.WRITERS_OF[kind]:
                plan.add("defaults", writer, kind, w, h, ("photo", "gradient", "flat")[k], defaults=True)
    # Hand-made streams: stored blocks a byte around the input buffer, in one IDAT and in
    # IDATs of the buffer's size and a byte either side.
    IB = limits["INPUT_BYTES"]
    for k, (tag, w, h, blocks) in enumerate(stored_shapes(limits)):
        for sizes in ((), (IB - 1,), (IB,), (IB + 1,)):
            plan.add(tag, "zlib", "gray8", w, h, pc.CONTENTS[k % 4], filters="none", stored=blocks,
                     sizes=sizes)
    # The stream's end and its Adler-32 split from the bytes before them at each offset, on
    # OpenCV's 512x512 (a first batch a byte short of the image's last row) and a threaded one.
    for tag, w, h in (("batch-1_row", 512, 512), ("threads", EVEN_STRIDE - 1, 4 * BB // EVEN_STRIDE + 1)):
        for cut in TAIL_CUTS:
            for content in ("flat", "photo"):
                plan.add(tag, "zlib", "gray8", w, h, content, filters="sub", level=6, cuts=(-cut,))
    # Flush points at the batch boundaries and a byte either side, empty final blocks, empty
    # IDATs, one-byte IDATs, each window size.
    for k, final in enumerate(("empty_fixed", "empty_stored")):
        for mode in (zlib.Z_SYNC_FLUSH, zlib.Z_FULL_FLUSH):
            batch = BB // EVEN_STRIDE * EVEN_STRIDE
            plan.add("flush", "zlib", "gray8", EVEN_STRIDE - 1, 3 * BB // EVEN_STRIDE + 1,
                     pc.CONTENTS[k * 2 + (mode == zlib.Z_FULL_FLUSH)], filters="paeth_runs", level=6,
                     flushes=tuple((m * batch + d, mode) for m in (1, 2, 3) for d in (-1, 0, 1)),
                     final=final, sizes=(8192,), empty=3)
    for wbits in range(9, 16):
        plan.add("window", "zlib", "gray8", 512, 512 + wbits, pc.CONTENTS[wbits % 4], filters="mixed",
                 level=9, wbits=wbits)
    for content in pc.CONTENTS:  # one-byte IDATs over a whole (small) stream and past a batch
        plan.add("idat1", "zlib", "gray8", 512, 513, content, filters="paeth", level=6, sizes=(1,))
    return plan


def write_case(case, work, libpng_tool, wave_rows):
    name, writer, kind, width, height, content, opt = case
    path = os.path.join(work, name)
    a = pc.pixels(kind, width, height, content, seed=zlib.crc32(name.encode()))
    if opt.get("defaults"):
        {"opencv": pc.write_opencv, "pil": pc.write_pil, "vips": pc.write_vips}[writer](path, kind, a)
    elif writer == "libpng":
        pc.write_libpng(libpng_tool, path, kind, a, opt["idat"], opt["level"], opt["filt"],
                        opt.get("trns", False))
    elif writer == "opencv":
        pc.write_opencv(path, kind, a, opt["level"], opt["strategy"])
    elif writer == "pil":
        pc.write_pil(path, kind, a, opt["level"], opt["optimize"])
    elif writer == "vips":
        pc.write_vips(path, kind, a, opt["compression"])
    else:
        rows = pc.stored_rows(a, kind)
        filters = pc.row_filters(opt["filters"], height, wave_rows)
        data = pc.filter_rows(rows, pc.bytes_per_pixel(kind), filters)
        if "stored" in opt:
            stream = pc.stored_stream(data, opt["stored"])
        else:
            stream = pc.zlib_stream(data, opt.get("level", 6), opt.get("wbits", 15), 8,
                                    opt.get("strategy", zlib.Z_DEFAULT_STRATEGY),
                                    opt.get("flushes", ()), opt.get("final", "finish"))
        bodies = pc.split_idat(stream, opt.get("sizes", ()), opt.get("cuts", ()), opt.get("empty", 0))
        with open(path, "wb") as f:
            f.write(pc.png_file(kind, width, height, bodies, opt.get("trns", False)))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    compare, libpng_tool = sys.argv[1], sys.argv[2]
    started = time.time()
    limits = read_limits(compare)
    have_vips = pc.VIPS is not None
    if not have_vips:
        print("png_conformance: vips not found (libvips-tools): its cases are skipped")
    plan = build_plan(limits, have_vips)
    own_work = len(sys.argv) == 3
    work = tempfile.mkdtemp(prefix="gsmooth-pngconf-") if own_work else sys.argv[3]
    os.makedirs(work, exist_ok=True)
    for old in os.listdir(work):  # a kept directory holds this run's files alone
        if old.endswith(".png"):
            os.unlink(os.path.join(work, old))
    try:
        for case in plan.cases:
            write_case(case, work, libpng_tool, limits["WAVE_ROWS"])
        written = time.time()
        p = subprocess.run([compare, work], capture_output=True, text=True)
        lines = p.stdout.splitlines()
        options = {c[0]: c for c in plan.cases}
        failed = [line.split()[1].rstrip(":") for line in lines if line.startswith("FAIL ")]
        for line in lines:
            if line.startswith("FAIL "):
                print(line)
                case = options.get(line.split()[1].rstrip(":"))
                if case:
                    print("    written with %s" % (case[6],))
        per = collections.Counter(c[1] for c in plan.cases)
        bad = collections.Counter(name.split("_")[0] for name in failed)
        filtered = sum(c[4] * (c[3] * pc.bytes_per_pixel(c[2]) + 1) for c in plan.cases)
        print("png_conformance: " + ", ".join("%s %d files (%d failed)" % (w, per[w], bad[w]) for w in sorted(per)))
        print("png_conformance: %d files, %.0f MB of filtered rows; written in %.1f s, compared in %.1f s"
              % (len(plan.cases), filtered / 1e6, written - started, time.time() - written))
        summary = lines[-1] if lines else p.stderr.strip()
        print(summary)
        compared = summary.split()[1] if summary.startswith("png_conformance:") else ""
        return 0 if p.returncode == 0 and not failed and compared == str(len(plan.cases)) else 1
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
