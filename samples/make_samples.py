#!/usr/bin/python3
"""make_samples.py: writes the bundled sample images (synthetic, made here, so they ship under the project's own licence)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import imagegen  # noqa: E402
import pngwrite  # noqa: E402


def main():
    pngwrite.write(os.path.join(HERE, "landscape.png"), imagegen.photo_like(480, 640, seed=11), kind="rgb")
    pngwrite.write(os.path.join(HERE, "landscape16.png"),
                   imagegen.photo_like(240, 320, seed=12, channels=1, bits=16), kind="gray", bits=16)
    print("wrote landscape.png, landscape16.png")


if __name__ == "__main__":
    main()
