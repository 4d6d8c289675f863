#!/bin/sh
# test_tsan.sh: builds gsmooth and its CPU plugin with ThreadSanitizer in a build directory of its own and runs the mixed 600-file batch with several files in flight under it.
set -eu
cd "$(dirname "$0")/.."
BUILD=${GS_TSAN_BUILD:-build-tsan}
TSAN_FLAGS="-fsanitize=thread -g -O1"
if [ ! -f "$BUILD/build.ninja" ]; then
    mkdir -p "$BUILD"
    cmake -S . -B "$BUILD" -G Ninja -DGSMOOTH_CUDA=OFF -DGSMOOTH_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$TSAN_FLAGS" \
        -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_MODULE_LINKER_FLAGS=-fsanitize=thread \
        >"$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log" >&2; exit 1; }
fi
cmake --build "$BUILD" --target gsmooth gsmooth_cpu
# Any report ends the run with exit 66, which the batch test does not accept.
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }halt_on_error=1 exitcode=66"
sh tests/batch_load_test.sh "$BUILD/bin/gsmooth" 3
