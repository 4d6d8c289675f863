#!/bin/sh
# test.sh: builds (if needed) and runs the whole test suite with ctest.
#
# GPU suites report skipped without a CUDA device.
set -eu
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
fi
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
# one test a CPU (GS_TEST_JOBS overrides): the suites share no files, so they may run at
# once (docs/testing.md gives the times)
ctest --test-dir build --output-on-failure --parallel "${GS_TEST_JOBS:-$(nproc)}" "$@"
