#!/bin/sh
# cuda_cli_test.sh: the CLI with the CUDA plugin present.
#
# --backend cuda and auto, on a machine with or without a device.
# usage: cuda_cli_test.sh GSMOOTH GOLDEN_DIR
set -u
gsmooth=$1 golden=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
in="$golden/inputs/gradient.png"
# auto prefers CUDA from cores x 2^28 pixel-passes (backends/plugin_loader.h); photo.png has
# 300 x 96 = 28800 pixels, so this many passes is just above that.
big_iters=$(( $(nproc) * 268435456 / 28800 + 1 ))
[ $big_iters -le 100000 ] || { echo "too many cores for this test's input"; exit 1; }

"$gsmooth" --quiet --backend cpu --iters $big_iters "$in" "$dir/cpu.png" || fail "cpu run"
if "$gsmooth" --list-backends | grep -q '^cuda .* available '; then
    "$gsmooth" --quiet --backend cuda --iters $big_iters "$in" "$dir/cuda.png" || fail "cuda run"
    cmp -s "$dir/cpu.png" "$dir/cuda.png" || fail "cuda output differs from cpu"
    "$gsmooth" --backend auto --iters $big_iters "$in" "$dir/auto.png" 2>"$dir/err" || fail "auto run"
    [ ! -s "$dir/err" ] || fail "auto printed with a device present: $(cat "$dir/err")"
    echo "1 passed, 0 failed (device present: cuda and auto match the CPU)"
    exit 0
fi
# No device: an explicit request fails with the probe's reason, exit 1, one line, no output.
"$gsmooth" --backend cuda "$in" "$dir/out.png" 2>"$dir/err"
code=$?
[ $code -eq 1 ] || fail "--backend cuda exit $code, want 1"
[ "$(wc -l <"$dir/err")" -eq 1 ] || fail "want one stderr line: $(cat "$dir/err")"
grep -q "cuda cannot run here: no " "$dir/err" || fail "no probe reason: $(cat "$dir/err")"
[ ! -e "$dir/out.png" ] || fail "output left behind"
# auto falls back to the CPU with one note, and gives the CPU's bytes.
"$gsmooth" --backend auto --iters $big_iters "$in" "$dir/auto.png" 2>"$dir/err" || fail "auto exit $?"
[ "$(grep -c 'CUDA backend unavailable' "$dir/err")" -eq 1 ] || fail "want one fallback note: $(cat "$dir/err")"
cmp -s "$dir/cpu.png" "$dir/auto.png" || fail "auto output differs from cpu"
# A small job falls back silently: the device would not pay for itself.
"$gsmooth" --backend auto "$in" "$dir/small.png" 2>"$dir/err" || fail "small auto run"
[ ! -s "$dir/err" ] || fail "small job printed: $(cat "$dir/err")"
echo "3 passed, 0 failed (no device: explicit cuda refused, auto falls back)"
