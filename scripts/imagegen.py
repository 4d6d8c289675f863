"""imagegen.py: deterministic, photo-like synthetic images.

Smooth shading, edges, texture and noise, shared by the sample, golden and benchmark
generators.
"""
import numpy as np


def photo_like(h, w, seed=1, channels=3, bits=8):
    """A synthetic 'photograph': sky gradient, hills, a sun, textured ground, sensor noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    yn, xn = y / max(h - 1, 1), x / max(w - 1, 1)
    sky = np.stack([0.35 + 0.3 * yn, 0.55 + 0.25 * yn, 0.95 - 0.2 * yn], -1)
    horizon = 0.55 + 0.08 * np.sin(xn * 9.0 + seed) + 0.04 * np.sin(xn * 23.0)
    ground = yn > horizon
    texture = 0.5 + 0.25 * np.sin(x * 0.37 + np.sin(y * 0.11) * 3) * np.cos(y * 0.29)
    grass = np.stack([0.25 * texture + 0.1, 0.45 * texture + 0.2, 0.15 * texture + 0.05], -1)
    img = np.where(ground[..., None], grass, sky)
    cy, cx, r = 0.25 * h, 0.72 * w, 0.09 * min(h, w)
    sun = np.clip(1.0 - np.hypot(y - cy, x - cx) / r, 0, 1)[..., None]
    img = img * (1 - sun) + np.array([1.0, 0.92, 0.6]) * sun
    for _ in range(12):  # blurry blobs: trees and clouds
        by, bx, br = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0.02, 0.08) * min(h, w)
        blob = np.exp(-((y - by) ** 2 + (x - bx) ** 2) / (2 * br * br))[..., None]
        img = img * (1 - 0.6 * blob) + 0.6 * blob * rng.uniform(0, 1, 3)
    img = img + rng.normal(0, 0.015, img.shape)
    maxval = (1 << bits) - 1
    out = np.clip(np.rint(img * maxval), 0, maxval).astype(np.uint16 if bits == 16 else np.uint8)
    if channels == 1:
        r, g, b = (out[..., i].astype(np.int64) for i in range(3))
        out = ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(out.dtype)
    return out
