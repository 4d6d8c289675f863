#!/bin/sh
# test_tsan.sh: builds gsmooth and its CPU plugin with ThreadSanitizer in a build directory of its own and runs under it the mixed 600-file batch with several files in flight, and a large PNG through the threaded fast reader and deflate.
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
# A PNG large enough for the fast reader's second (inflating) thread and the encoder's
# deflate workers: 2048x2048 photo content; the output must equal a plain build's.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "
import sys; sys.path.insert(0, 'scripts'); import imagegen, pngwrite, numpy as np
pngwrite.write('$work/big.png', np.tile(imagegen.photo_like(512, 512, seed=8, channels=1), (4, 4)), level=6)"
"$BUILD/bin/gsmooth" --quiet --threads 2 "$work/big.png" "$work/tsan.png" || { echo "FAIL: TSan run exit $?"; exit 1; }
GSMOOTH_PNG_DECODER=libpng "$BUILD/bin/gsmooth" --quiet --threads 2 "$work/big.png" "$work/libpng.png" ||
    { echo "FAIL: TSan libpng run"; exit 1; }
cmp -s "$work/tsan.png" "$work/libpng.png" || { echo "FAIL: the fast reader's output differs from libpng's"; exit 1; }
echo "tsan: 2048x2048 PNG through the threaded fast reader and parallel deflate: 0 reports"
