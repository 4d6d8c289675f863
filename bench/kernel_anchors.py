#!/usr/bin/python3
"""kernel_anchors.py: in-memory library anchors for the CPU kernel table.

OpenCV blur x K, sepFilter2D (the xy anchor) and cv2.integral, numpy cumsum, on the same
8192x8192 photo-like u8 image (skips what is not installed).
"""
import sys
import time

import numpy as np


def median_time(fn, runs=5):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    y, x = np.mgrid[0:side, 0:side]
    img = (110 + 60 * np.sin(x * 0.013 + y * 0.007) + 30 * np.cos(y * 0.021)).clip(0, 255).astype(np.uint8)
    gpx = side * side / 1e9
    rows = []
    t = median_time(lambda: np.cumsum(img, axis=1, dtype=np.uint32))
    rows.append(("numpy cumsum rows (u8->u32)", t))
    try:
        import cv2
        cv2.setNumThreads(2)

        def blur3():
            f = img.astype(np.float32)
            for _ in range(3):
                f = cv2.blur(f, (3, 1), borderType=cv2.BORDER_REPLICATE)
            return np.rint(f).astype(np.uint8)
        rows.append(("OpenCV blur(3,1) x3, float32", median_time(blur3)))
        rows.append(("OpenCV integral (2d, u8->s32)", median_time(lambda: cv2.integral(img, sdepth=cv2.CV_32S))))
        # --axis xy at K=3 is, inside the image, the separable 7-tap [1 3 6 7 6 3 1] / 27 both ways
        taps = np.array([1, 3, 6, 7, 6, 3, 1], dtype=np.float32) / 27

        def sep7():
            f = cv2.sepFilter2D(img.astype(np.float32), -1, taps, taps, borderType=cv2.BORDER_REPLICATE)
            return np.rint(f).astype(np.uint8)
        rows.append(("OpenCV sepFilter2D 7x7, float32", median_time(sep7)))
    except ImportError:
        print("anchor: OpenCV not installed (python3-opencv): skipped")
    for name, t in rows:
        print(f"anchor: {name:<32} {t * 1e3:10.2f} ms {gpx / t:10.2f} Gpx/s")


if __name__ == "__main__":
    main()
