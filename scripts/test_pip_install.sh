#!/bin/sh
# test_pip_install.sh: `pip install .` into a fresh virtual environment, then a check.
#
# Then the installed module (not the source tree's) smooths an array exactly; offline:
# Debian's setuptools and numpy, no CUDA plugin (GSMOOTH_PIP_ONLINE=1 lets pip fetch its
# build tools instead).
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
if [ "${GSMOOTH_PIP_ONLINE:-0}" = 1 ]; then
    "$work/venv/bin/pip" install -q .
else
    GSMOOTH_CMAKE_ARGS="${GSMOOTH_CMAKE_ARGS:--DGSMOOTH_CUDA=OFF}" \
        "$work/venv/bin/pip" install -q --no-build-isolation --no-deps .
fi
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import sys
import numpy as np
import gsmooth
assert gsmooth.__file__.startswith(sys.argv[1]), f"imported {gsmooth.__file__}, not the installed module"
names = {b["name"]: b for b in gsmooth.backends()}
assert names["cpu"]["available"] and names["cpu"]["path"].startswith(sys.argv[1]), names["cpu"]
a = np.array([[0, 0, 9, 0, 0], [255, 0, 255, 0, 255]], np.uint8)
got = gsmooth.smooth(a, 1)
assert got.tolist() == [[0, 3, 3, 3, 0], [128, 170, 85, 170, 128]], got.tolist()
print("pip install .: gsmooth", gsmooth.__version__, "from", gsmooth.__file__, "smooths exactly")
PY
