#!/bin/sh
# stdin_bench.sh: peak memory and time of reading standard input against a file.
#
# In one run, for an 8192x8192 PNG mosaic and its JPEG, BMP and PGM twins (and writing
# standard output against a file); prints each stdin figure beside its file anchor as a
# ratio.
# usage: sh bench/stdin_bench.sh [GSMOOTH]   (inputs made by bench/make_bench_images.py --big into build/bench-images)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
G=${1:-$ROOT/build/bin/gsmooth}
IMG=${BENCH_IMAGES:-$ROOT/build/bench-images}
RUNS=${RUNS:-3}
/usr/bin/python3 "$ROOT/bench/make_bench_images.py" "$IMG" --batch 0 --big >/dev/null
BIG=$IMG/mosaic8192.png
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# The same pixels in the other formats that stream (made once; gsmooth --iters 0 copies).
"$G" --quiet --iters 0 "$BIG" "$W/big.pgm"
"$G" --quiet --iters 0 "$BIG" "$W/big.bmp"
/usr/bin/python3 -c "from PIL import Image; Image.open('$BIG').save('$W/big.jpg', quality=90)"

# Median (by peak RSS) "KiB seconds" of RUNS runs reading a file: $1 input, $2 output.
measure_file() {
    for r in $(seq "$RUNS"); do
        /usr/bin/time -f "%M %e" -o "$W/t" "$G" --quiet "$1" "$2"
        cat "$W/t"
    done | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
# The same through a real pipe, not a redirected file: cat IN | gsmooth - OUT.
measure_pipe() {
    for r in $(seq "$RUNS"); do
        cat "$1" | /usr/bin/time -f "%M %e" -o "$W/t" "$G" --quiet - "$2"
        cat "$W/t"
    done | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
printf "%-24s %16s %16s %7s %s\n" input "file: MiB, s" "pipe: MiB, s" "RSS x" "output bytes"
for f in "$BIG" "$W/big.jpg" "$W/big.bmp" "$W/big.pgm"; do
    set -- $(measure_file "$f" "$W/from_file.png"); fk=$1 ft=$2
    set -- $(measure_pipe "$f" "$W/from_pipe.png"); pk=$1 pt=$2
    same=$(cmp -s "$W/from_file.png" "$W/from_pipe.png" && echo same || echo DIFFER)
    awk -v n="$(basename "$f") ($(($(wc -c < "$f") >> 20)) MiB)" -v fk="$fk" -v ft="$ft" -v pk="$pk" \
        -v pt="$pt" -v same="$same" \
        'BEGIN { printf "%-24s %9.1f, %4.2f %9.1f, %4.2f %7.2f %s\n", n, fk / 1024, ft, pk / 1024, pt, pk / fk, same }'
done
# Standard output: the PNG written to a pipe against the same to a file.
for r in $(seq "$RUNS"); do
    /usr/bin/time -f "%M %e" -o "$W/t" "$G" --quiet "$BIG" - > "$W/stdout.png"; cat "$W/t"
done | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p" > "$W/out"
"$G" --quiet "$BIG" "$W/file.png"
set -- $(cat "$W/out")
awk -v k="$1" -v t="$2" -v same="$(cmp -s "$W/stdout.png" "$W/file.png" && echo "identical to the file output" || echo DIFFER)" \
    'BEGIN { printf "stdout (mosaic8192.png -> -): %.1f MiB peak, %.2f s; bytes %s\n", k / 1024, t, same }'
echo "$(date -u +%F) $(uname -m), $(nproc) cores, $("$G" --version)"
