#!/bin/sh
# batch_load_test.sh: a batch of 600+ files, good and damaged mixed, several in flight.
#
# Good outputs exact, every bad file reported, exit 1, nothing left behind.
# usage: batch_load_test.sh GSMOOTH [JOBS]   (TSan builds: the run also fails on any ThreadSanitizer report)
set -u
gsmooth=$1 jobs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
COPIES=20 # copies of each golden input: 10 inputs x 20 = 200 good files

/usr/bin/python3 "$here/damaged/make_damaged.py" "$dir/damaged" >/dev/null || fail "corpus"
mkdir -p "$dir/in" "$dir/out" "$dir/ref"
# Damaged files that must fail with no extra arguments and no resource limit.
awk -F'\t' 'NR > 1 && $2 == "fail" && $3 == "-" && $4 == "" { print $1 }' "$dir/damaged/MANIFEST" > "$dir/bad.txt"
while read -r name; do cp "$dir/damaged/$name" "$dir/in/bad_$name"; done < "$dir/bad.txt"
for f in "$here"/golden/inputs/*.png; do
    base=$(basename "$f")
    "$gsmooth" --quiet --jobs 1 --threads 1 "$f" "$dir/ref/$base" || fail "reference $base"
    i=0
    while [ $i -lt $COPIES ]; do cp "$f" "$dir/in/good_${i}_$base"; i=$((i + 1)); done
done
bad=$(wc -l < "$dir/bad.txt")
total=$(ls "$dir/in" | wc -l)
good=$((total - bad))

"$gsmooth" --quiet --jobs "$jobs" -o "$dir/out" "$dir"/in/* 2> "$dir/err"
code=$?
grep -q "ThreadSanitizer\|AddressSanitizer\|runtime error" "$dir/err" && fail "sanitizer report: $(grep -m3 -A3 Sanitizer "$dir/err")"
[ $code -eq 1 ] || fail "exit $code, want 1"
grep -q "gsmooth: $total files, $good done, $bad failed" "$dir/err" || fail "summary: $(tail -1 "$dir/err")"
while read -r name; do
    grep -qF "bad_$name" "$dir/err" || fail "bad_$name not reported"
    [ ! -e "$dir/out/bad_$name" ] || fail "output left for bad_$name"
done < "$dir/bad.txt"
for f in "$dir"/in/good_*; do
    base=$(basename "$f" | sed 's/^good_[0-9]*_//')
    cmp -s "$dir/out/$(basename "$f")" "$dir/ref/$base" || fail "$(basename "$f") differs from the single-file run"
done
[ -z "$(ls -A "$dir/out" | grep '^\.')" ] || fail "temporary files left: $(ls -A "$dir/out" | grep '^\.')"
echo "batch: $total files ($good good, $bad damaged), --jobs $jobs"
echo "1 passed, 0 failed"
