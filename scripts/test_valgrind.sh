#!/bin/sh
# test_valgrind.sh: valgrind memcheck over what untrusted input reaches.
#
# Every saved fuzz finding and every damaged file through the whole pipeline and through
# each decoder alone, then a batch of real images followed by crafted files, then every file
# of the external corpora; any valgrind error (an uninitialised byte used or written, an
# invalid access, a definite leak) fails it.
set -eu
cd "$(dirname "$0")/.."
BUILD=${GS_VALGRIND_BUILD:-build}
command -v valgrind >/dev/null 2>&1 || { echo "test_valgrind.sh: valgrind not found" >&2; exit 2; }
[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target gsmooth gsmooth_cpu test_fuzz_regressions test_fuzz_regressions_png \
    test_fuzz_regressions_pngfast test_fuzz_regressions_pngdiff test_fuzz_regressions_jpeg \
    test_fuzz_regressions_stb test_fuzz_regressions_pnm test_fuzz_regressions_tiff \
    test_fuzz_regressions_gif test_fuzz_regressions_bmp test_fuzz_regressions_tga test_fuzz_regressions_webp \
    test_fuzz_regressions_fits test_fuzz_regressions_npy >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 tests/damaged/make_damaged.py "$work/damaged" >/dev/null

# 99 is valgrind's verdict; the programs themselves never exit with it.
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
# The replays run in one process each (valgrind starts once) and two at a time.
status=0
pids=""
for harness in "" _png _pngfast _pngdiff _jpeg _stb _pnm _tiff _gif _bmp _tga _webp _fits _npy; do
    GS_REPLAY_IN_PROCESS=1 $VG "$BUILD/bin/test_fuzz_regressions$harness" fuzz/regressions \
        "$work/damaged" > "$work/replay$harness.log" 2>&1 &
    pids="$pids $!"
    if [ "$(echo $pids | wc -w)" -ge 2 ]; then
        for p in $pids; do wait "$p" || status=1; done
        pids=""
    fi
done
for p in $pids; do wait "$p" || status=1; done
for harness in "" _png _pngfast _pngdiff _jpeg _stb _pnm _tiff _gif _bmp _tga _webp _fits _npy; do
    echo "valgrind, harness ${harness:-_pipeline}: $(tail -n 1 "$work/replay$harness.log")"
done
[ $status -eq 0 ] || { grep -h -B2 -A12 "==[0-9]*==" "$work"/replay*.log | head -60; echo "FAIL: valgrind errors in the replays"; exit 1; }

# A batch: real images first (their pixels sit in freed heap), then every crafted JPEG and
# damaged file: the good outputs must equal plain runs, the bad files fail cleanly.
mkdir -p "$work/in" "$work/out" "$work/ref"
cp tests/golden/inputs/photo420.jpg tests/golden/inputs/photo.png samples/landscape.png "$work/in/"
for f in fuzz/regressions/*.jpg "$work"/damaged/*.jpg "$work"/damaged/*.gif "$work"/damaged/*.bmp; do
    [ -e "$f" ] && cp "$f" "$work/in/z_$(basename "$f")"
done
set +e
$VG "$BUILD/bin/gsmooth" --quiet --jobs 2 -o "$work/out" "$work"/in/* > "$work/batch.log" 2>&1
code=$?
set -e
if [ $code -eq 99 ] || grep -q "==[0-9]*==" "$work/batch.log"; then
    grep -A12 "==[0-9]*==" "$work/batch.log" | head -60
    echo "FAIL: valgrind errors in the batch"
    exit 1
fi
[ $code -le 1 ] || { tail -5 "$work/batch.log"; echo "FAIL: batch exit $code"; exit 1; }
for f in photo420.jpg photo.png landscape.png; do
    out=$(echo "$f" | sed 's/\.jpg$/.png/')
    "$BUILD/bin/gsmooth" --quiet "$work/in/$f" "$work/ref/$out"
    cmp -s "$work/out/$out" "$work/ref/$out" || { echo "FAIL: $f differs from a plain run"; exit 1; }
done
echo "valgrind: batch of $(ls "$work/in" | wc -l) files (3 real, the rest crafted or damaged): exit $code, 0 valgrind errors, real outputs exact"
# Every file of the external corpora (tests/external), in one batch.
/usr/bin/python3 tests/external/corpus_batch.py "$BUILD/bin/gsmooth" valgrind || exit 1
echo "1 passed, 0 failed"
