#!/bin/sh
# test_tsan.sh: gsmooth's threaded paths under ThreadSanitizer.
#
# gsmooth and its CPU plugin, built in a build directory of its own, run the mixed 600-file
# batch with several files in flight, a large PNG through the threaded fast reader and
# deflate, and strips and files spread over pretend devices.
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
# Level 1's deflate (literals and byte runs, tables built on each worker) on the same threads.
"$BUILD/bin/gsmooth" --quiet --threads 2 --compression fast "$work/big.png" "$work/fast.png" ||
    { echo "FAIL: TSan --compression fast run exit $?"; exit 1; }
"$BUILD/bin/gsmooth" --quiet --iters 0 "$work/fast.png" "$work/fast.pgm" &&
    "$BUILD/bin/gsmooth" --quiet --iters 0 "$work/tsan.png" "$work/tsan.pgm" &&
    cmp -s "$work/fast.pgm" "$work/tsan.pgm" || { echo "FAIL: --compression fast changed the pixels"; exit 1; }
echo "tsan: 2048x2048 PNG through the threaded fast reader and parallel deflate (levels 2 and 1): 0 reports"
# An output past 32 MiB: its bytes are synced on a thread of their own as they are written
# (io/background_sync.c) while the writer goes on.
{ printf 'P5\n6000 6000\n255\n'; head -c 36000000 /dev/urandom; } >"$work/big.pgm"
"$BUILD/bin/gsmooth" --quiet --iters 1 "$work/big.pgm" "$work/big_out.pgm" || { echo "FAIL: TSan large output exit $?"; exit 1; }
[ "$(stat -c %s "$work/big_out.pgm")" -eq "$(stat -c %s "$work/big.pgm")" ] || { echo "FAIL: TSan large output size"; exit 1; }
rm -f "$work/big.pgm" "$work/big_out.pgm"
echo "tsan: a 36 MB output synced as it is written: 0 reports"
# Lanes: one image's strips over three pretend devices (one compute thread each, their
# instances created at once), and a batch spread over them.
fake="$BUILD/fake_devices.so"   # the test backend (tests/ is not configured here), under TSan too
cc -O1 -g -shared -fPIC $TSAN_FLAGS -Iinclude -Ikernels tests/plugins/fake_devices.c kernels/reference.c \
    -o "$fake" -lm
"$BUILD/bin/gsmooth" --quiet --backend "$fake" --devices all --iters 3 "$work/big.png" "$work/lanes.png" ||
    { echo "FAIL: TSan lanes run exit $?"; exit 1; }
"$BUILD/bin/gsmooth" --quiet --backend "$fake" --iters 3 "$work/big.png" "$work/one_lane.png" ||
    { echo "FAIL: TSan one-lane run"; exit 1; }
cmp -s "$work/lanes.png" "$work/one_lane.png" || { echo "FAIL: three lanes differ from one"; exit 1; }
mkdir "$work/out"
"$BUILD/bin/gsmooth" --quiet --backend "$fake" --devices all --jobs 3 --iters 3 -o "$work/out" \
    "$work/big.png" "$work/tsan.png" "$work/libpng.png" || { echo "FAIL: TSan device batch"; exit 1; }
echo "tsan: strips over 3 lanes and a batch over 3 pretend devices: 0 reports"
