"""opencv_anchor.py: the OpenCV anchor of bench/e2e_bench.sh.

Read a PNG, three 3x1 box blurs along rows (the 3-point mean x3), or for --axis xy the
equivalent separable 2-D filter, write a PNG, as an OpenCV user would.

Usage: /usr/bin/python3 bench/opencv_anchor.py INPUT.png OUTPUT.png [K | sep7]
sep7: cv2.sepFilter2D with [1 3 6 7 6 3 1] / 27 both ways (the 3-point mean x3 in each
direction, inside the image), on float32, rounded to 8 bits once.
cv2.imwrite uses OpenCV's default PNG settings; each blur rounds to 8 bits, so the
pixels are close to, not equal to, gsmooth's exact result.
"""
import sys

import cv2


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    img = cv2.imread(argv[1], cv2.IMREAD_UNCHANGED)
    if img is None:
        sys.stderr.write("opencv_anchor: cannot read %s\n" % argv[1])
        return 1
    if len(argv) > 3 and argv[3] == "sep7":
        import numpy as np
        taps = np.array([1, 3, 6, 7, 6, 3, 1], dtype=np.float32) / 27
        f = cv2.sepFilter2D(img.astype(np.float32), -1, taps, taps, borderType=cv2.BORDER_REPLICATE)
        return 0 if cv2.imwrite(argv[2], np.rint(f).astype(img.dtype)) else 1
    iters = int(argv[3]) if len(argv) > 3 else 3
    for _ in range(iters):
        img = cv2.blur(img, (3, 1))  # ksize is (width, height): 3 wide, 1 tall = along rows
    return 0 if cv2.imwrite(argv[2], img) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
