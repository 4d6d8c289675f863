#!/bin/sh
# run_cpu.sh: the one command for the CPU table: kernels, then end to end.
#
# Kernels beside memcpy, the plain loop, OpenCV and numpy; then end to end, peak memory and
# batch (bench/e2e_bench.sh).
# usage: bench/run_cpu.sh [BUILD_DIR]   (anchors: bench/install_anchors.sh installs vips, OpenCV, ImageMagick)
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target gsmooth gsmooth_cpu gsmooth_cpu_bench >/dev/null || exit 1
echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(date -u +%Y-%m-%d)"
echo "== kernels (8192x8192 u8, in memory)"
"$build/bin/gsmooth_cpu_bench" 8192 "$(nproc)"
/usr/bin/python3 bench/kernel_anchors.py 8192
echo "== end to end, memory, batch"
GSMOOTH="$build/bin/gsmooth" bash bench/e2e_bench.sh
