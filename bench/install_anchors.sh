#!/bin/sh
# install_anchors.sh: installs the tools bench/e2e_bench.sh compares gsmooth against.
#
# For benchmarks only; never run in CI.
# Debian 12 packages: libvips-tools (vips), python3-opencv (cv2 for /usr/bin/python3),
# imagemagick (the real convert, in /usr/bin), time (/usr/bin/time -v for peak memory),
# hyperfine (medians), python3-numpy (the input generator); python3-dask, -distributed and
# python3-scipy for bench/dask_bench.py, with dask-image from PyPI (not in Debian 12) in a
# virtual environment that sees the system's packages: /opt/gsmooth-bench-venv.
# With DASK=pypi it also makes /opt/gsmooth-bench-venv-pypi: current dask, distributed,
# dask-image, scipy, numpy and zarr from PyPI, for the same bench on the dask people
# install today.
set -eu
if [ "${CI:-}" = "true" ]; then
    echo "install_anchors.sh: refusing to run under CI (benchmark anchors only)" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
    libvips-tools python3-opencv python3-numpy imagemagick time hyperfine python3-dask \
    python3-distributed python3-scipy python3-venv
/usr/bin/python3 -m venv --system-site-packages /opt/gsmooth-bench-venv
# dask-image pinned (2023.3.0, which runs on Debian 12's dask 2022.12); its filters
# need only dask, numpy and scipy, all from the system.
/opt/gsmooth-bench-venv/bin/pip install --quiet --no-deps dask-image==2023.3.0
if [ "${DASK:-}" = "pypi" ]; then
    /usr/bin/python3 -m venv /opt/gsmooth-bench-venv-pypi
    /opt/gsmooth-bench-venv-pypi/bin/pip install --quiet "dask[array,distributed]" dask-image scipy numpy zarr
fi
