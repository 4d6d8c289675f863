"""sigma_error.py: how close K = round(3 sigma^2 / 2) passes of the 3-point mean come to a Gaussian.

usage: python3 bench/sigma_error.py   (needs numpy and scipy: Debian python3-scipy; and the
gsmooth module, found through python/ and GSMOOTH_LIBRARY or an install)

For each sigma it prints the kernel's largest difference from scipy.ndimage.gaussian_filter1d's
(both applied to a unit impulse far from the edges, in float64), that difference relative to
the Gaussian's peak, and the largest difference in 8-bit levels between gsmooth.smooth and
gaussian_filter1d (rounded) on a 256 x 4096 random image, away from the row ends."""
import numpy as np
from scipy.ndimage import gaussian_filter1d

import gsmooth


def passes(sigma):
    return int(1.5 * sigma * sigma + 0.5)


def main():
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, size=(256, 4096), dtype=np.uint8)
    print("sigma    K   kernel max |diff|   of peak   8-bit image max |diff| (levels)")
    for sigma in (1, 2, 3, 4, 8, 16):
        k = passes(sigma)
        n = 8 * int(sigma) + 2 * k + 64
        impulse = np.zeros(2 * n + 1)
        impulse[n] = 1.0
        ours = impulse.copy()
        for _ in range(k):
            ours[1:-1] = (ours[:-2] + ours[1:-1] + ours[2:]) / 3
        theirs = gaussian_filter1d(impulse, sigma, mode="constant", truncate=8.0)
        diff = np.abs(ours - theirs).max()
        got = gsmooth.smooth(image, iters=k).astype(np.int32)
        want = np.rint(gaussian_filter1d(image.astype(np.float64), sigma, axis=1, mode="nearest",
                                         truncate=8.0)).astype(np.int32)
        margin = k + 8 * int(sigma)
        levels = np.abs(got[:, margin:-margin] - want[:, margin:-margin]).max()
        print(f"{sigma:5}  {k:3}   {diff:17.2e}   {diff / theirs.max():7.2%}   {levels:3}")


if __name__ == "__main__":
    main()
