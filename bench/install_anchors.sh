#!/bin/sh
# install_anchors.sh: installs the tools bench/e2e_bench.sh compares gsmooth against.
#
# For benchmarks only; never run in CI.
# Debian 12 packages: libvips-tools (vips), python3-opencv (cv2 for /usr/bin/python3),
# imagemagick (the real convert, in /usr/bin), time (/usr/bin/time -v for peak memory),
# hyperfine (medians), python3-numpy (the input generator).
set -eu
if [ "${CI:-}" = "true" ]; then
    echo "install_anchors.sh: refusing to run under CI (benchmark anchors only)" >&2
    exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
    libvips-tools python3-opencv python3-numpy imagemagick time hyperfine
