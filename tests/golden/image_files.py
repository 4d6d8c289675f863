#!/usr/bin/python3
"""image_files.py: reads what gsmooth writes into arrays, for the golden and check scripts.

PNG through PIL or OpenCV, PGM parsed here, NPY through numpy; the check scripts' tally
(Checks) and their comparison of sample arrays (differs).
"""
import numpy as np

try:  # Debian's python3-pil where the set-up script ran; OpenCV on the GPU machine
    from PIL import Image
except ImportError:
    Image = None


def read_pgm(path):
    """A binary PGM (P5) as (int64 array, maxval); gsmooth writes no comments."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P5":
        raise ValueError(f"{path}: not a binary PGM")
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    dtype = ">u2" if maxval > 255 else "u1"
    return np.frombuffer(data[pos + 1:], dtype=dtype).reshape(h, w).astype(np.int64), maxval


def read_output(path):
    """(array, maxval): NPY keeps its dtype (maxval None); images become int64 samples."""
    if path.endswith(".npy"):
        return np.load(path), None
    if path.endswith(".pgm"):
        return read_pgm(path)
    if Image is None:
        import cv2
        a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        return a.astype(np.int64), 65535 if a.dtype == np.uint16 else 255
    im = Image.open(path)
    bits = 16 if im.mode.startswith("I") else 8
    return np.asarray(im).astype(np.int64), (1 << bits) - 1


class Checks:
    """A check script's tally: call it with (case, ok, detail) for each check; report()
    prints the failures and the counts and gives the exit status."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def __call__(self, case, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"{case}: {detail}")

    def report(self, name, more=""):
        for line in self.failures[:40]:
            print("FAIL", line)
        print(f"{name}: {self.passed} passed, {len(self.failures)} failed{more}")
        return 1 if self.failures else 0


def differs(got, want):
    """'' when the two sample arrays are equal, else how they differ (shape, or the count and
    the first differing sample; got None: no output)."""
    if got is None:
        return "no output"
    if got.shape != want.shape:
        return f"shape {got.shape}, want {want.shape}"
    bad = np.argwhere(got != want)
    if len(bad) == 0:
        return ""
    y, x = bad[0]
    return f"{len(bad)} samples differ, first at row {y} column {x}: got {got[y, x]}, want {want[y, x]}"
