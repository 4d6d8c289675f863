"""opencv_anchor.py: the OpenCV anchor of bench/e2e_bench.sh: read a PNG, three 3x1 box blurs along rows (the 3-point mean x3), write a PNG, as an OpenCV user would.

Usage: /usr/bin/python3 bench/opencv_anchor.py INPUT.png OUTPUT.png [K]
cv2.imwrite uses OpenCV's default PNG settings; each blur rounds to 8 bits, so the
pixels are close to, not equal to, gsmooth's exact result.
"""
import sys

import cv2


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    iters = int(argv[3]) if len(argv) > 3 else 3
    img = cv2.imread(argv[1], cv2.IMREAD_UNCHANGED)
    if img is None:
        sys.stderr.write("opencv_anchor: cannot read %s\n" % argv[1])
        return 1
    for _ in range(iters):
        img = cv2.blur(img, (3, 1))  # ksize is (width, height): 3 wide, 1 tall = along rows
    return 0 if cv2.imwrite(argv[2], img) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
