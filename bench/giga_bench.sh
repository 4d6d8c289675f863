#!/bin/sh
# giga_bench.sh: one large PNG end to end beside its inflate alone, with the bound the pipeline approaches.
#
# Usage: sh bench/giga_bench.sh FILE.png [RUNS]   (FILE from bench/make_bench_images.py --giga)
# Environment: BUILD (default build), K (default 3), COMPRESSION (default: default; fast
# codes literals and byte runs, about twice as fast to deflate, a tenth larger).
# The decoder inflates on one thread while unfiltering, smoothing and deflating run beside
# it, so the wall time approaches max(inflate alone, all CPU time / cores). Each run's
# wall time, CPU time and peak RSS come from /usr/bin/time; the inflate alone is ISA-L on
# the file's IDAT stream into memory, no unfiltering (gsmooth_decode_bench --inflate).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 FILE.png [RUNS]" >&2; exit 2; }
FILE=$1; RUNS=${2:-3}; BUILD=${BUILD:-build}; K=${K:-3}; COMPRESSION=${COMPRESSION:-default}
CORES=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
INFLATE=$("$BUILD/bin/gsmooth_decode_bench" --inflate "$FILE" "$RUNS" | sed -n 's/.*: \([0-9.]*\) s .*/\1/p')
: >"$out/runs"
i=0
while [ $i -lt "$RUNS" ]; do
    # Each run writes a new file, as the first does: replacing the last run's output would
    # add the freeing of its blocks (0.15 s for a 374 MB PNG on ext4) to the rename.
    rm -f "$out/o.png"
    /usr/bin/time -f '%e %U %S %M' -o "$out/t" "$BUILD/bin/gsmooth" --quiet --iters "$K" \
        --compression "$COMPRESSION" "$FILE" "$out/o.png"
    printf '%s %s\n' "$(cat "$out/t")" "$(wc -c <"$out/o.png")" >>"$out/runs"
    i=$((i + 1))
done
# The median run by wall time, with its own CPU time and peak RSS.
sort -n "$out/runs" | awk -v n="$RUNS" -v inf="$INFLATE" -v cores="$CORES" -v f="$FILE" -v k="$K" -v c="$COMPRESSION" '
    NR == int((n + 1) / 2) {
        wall = $1; cpu = $2 + $3; rss = $4 / 1024
        bound = cpu / cores > inf ? cpu / cores : inf
        printf "%s K=%s --compression %s on %d cores, median of %d: wall %.2f s, CPU %.2f s, peak RSS %.1f MiB, output %.1f MB\n", f, k, c, cores, n, wall, cpu, rss, $5 / 1e6
        printf "inflate alone %.2f s; bound max(inflate, CPU / %d) = %.2f s\n", inf, cores, bound
        printf "wall / inflate alone: %.2fx (target <= 1.5x on 2 cores, <= 1.3x on 16); wall / bound: %.2fx; peak RSS <= 32 MiB: %s\n", wall / inf, wall / bound, rss <= 32 ? "yes" : "NO"
    }'
