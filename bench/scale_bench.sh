#!/usr/bin/env bash
# scale_bench.sh: batch at scale: list length, files per second, 2 GPUs against 1.
#
# The cost of a list against its length (time and memory a path, per-file overhead), files
# per second a node does (4096x4096 PNG at K=3), and 2 GPUs against 1 where the GPU is the
# bottleneck.
#
# Usage: bench/scale_bench.sh   (STEPS=list,throughput[,gpus]; GSMOOTH=path; WORK=dir)
#   list:       lists of 10^3..10^6 (LIST_MAX) paths with --shard 0/L, so one file is
#               processed and the rest is list handling alone: seconds and peak RSS against L,
#               per path; then 10^3 and 10^4 (FILES_MAX) real 1x1 files: milliseconds a file.
#   throughput: THROUGHPUT_FILES copies of a 4096x4096 photo-like PNG mosaic, K=3, PNG out,
#               default jobs (one per core): files/s and MP/s on this machine; with
#               THROUGHPUT_CPUS="16 all", also on its first 16 CPUs (taskset).
#   gpus:       one 16384x16384 PGM at K=GPU_IMAGE_K (100000) and a batch of GPU_BATCH_FILES
#               (4) GPU_BATCH_SIDE^2 (16384^2) PGMs at K=GPU_BATCH_K (100000), --devices 0
#               against --devices all (same bytes checked with cmp); then the fixed cost
#               (K=1) and --time's phases. GPU_BATCH_JOBS and GPU_WHAT ("image batch
#               fixed") vary it. PGM in and out and the largest K: the GPU, not a codec or
#               the disk, is the bottleneck.
# Wall times (date +%s.%N around the run) are medians of RUNS (3) runs; peak RSS from
# /usr/bin/time -f %M (KiB).
set -u
export LC_ALL=C
REPO=$(cd "$(dirname "$0")/.." && pwd)
G=${GSMOOTH:-$REPO/build/bin/gsmooth}
WORK=${WORK:-/tmp/gsmooth-scale}
STEPS=${STEPS:-list,throughput}
RUNS=${RUNS:-3}
LIST_MAX=${LIST_MAX:-1000000}
FILES_MAX=${FILES_MAX:-10000}
THROUGHPUT_FILES=${THROUGHPUT_FILES:-16}
GPU_IMAGE_K=${GPU_IMAGE_K:-100000}
GPU_BATCH_K=${GPU_BATCH_K:-100000}
GPU_BATCH_FILES=${GPU_BATCH_FILES:-4}
GPU_BATCH_SIDE=${GPU_BATCH_SIDE:-16384}
GPU_BATCH_JOBS=${GPU_BATCH_JOBS:-}          # --jobs for the batch line; empty: automatic
GPU_WHAT=${GPU_WHAT:-image batch fixed}
PY=${PY:-/usr/bin/python3}
want() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$WORK"
echo "scale_bench: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

# Median wall seconds and the peak RSS (MiB) of the last run of a command, over RUNS runs.
measure() {
    local times=() t0 t1 rss
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s.%N)
        /usr/bin/time -f "%M" -o "$WORK/time.txt" "$@" > /dev/null 2> "$WORK/stderr.txt" ||
            { echo "FAILED: $*"; cat "$WORK/stderr.txt"; return 1; }
        t1=$(date +%s.%N)
        read -r rss < "$WORK/time.txt"
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
    done
    MEDIAN=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (RUNS + 1) / 2 ))p")
    RSS_MIB=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
}

if want list; then
    echo "== list handling against list length (--shard 0/L: one file processed)"
    mkdir -p "$WORK/list/out" && printf 'P5\n1 1\n255\n\x80' > "$WORK/list/one.pgm"
    printf '%-9s %10s %12s %10s %14s\n' "paths" "wall s" "us a path" "RSS MiB" "RSS B a path"
    L=1000
    while [ "$L" -le "$LIST_MAX" ]; do
        # path 0 exists; the others name files in a deep directory that nobody opens
        { echo "$WORK/list/one.pgm"; seq 1 $((L - 1)) | sed "s|^|$WORK/list/never/opened/dir/file_|; s|$|.png|"; } > "$WORK/list/l$L.txt"
        measure "$G" --quiet --backend cpu -o "$WORK/list/out" --shard "0/$L" --files-from "$WORK/list/l$L.txt" || exit 1
        bytes=$(stat -c %s "$WORK/list/l$L.txt")
        awk -v l="$L" -v t="$MEDIAN" -v r="$RSS_MIB" -v b="$bytes" 'BEGIN {
            printf "%-9d %10.3f %12.3f %10.1f %14.1f   (list file %.1f B a path)\n", l, t, t / l * 1e6, r, r * 1048576 / l, b / l }'
        L=$((L * 10))
    done
    echo "== per-file overhead: N real 1x1 PGMs (open, decode, smooth, write, rename, fsync)"
    printf '%-9s %10s %12s %10s\n' "files" "wall s" "ms a file" "RSS MiB"
    N=1000
    while [ "$N" -le "$FILES_MAX" ]; do
        d="$WORK/files$N"
        if [ ! -f "$d/list.txt" ]; then
            mkdir -p "$d/in" && $PY - "$d/in" "$N" <<'EOF'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/f{i:07d}.pgm", "wb") as f:
        f.write(b"P5\n1 1\n255\n" + bytes([i % 256]))
EOF
            ls "$d/in" | sed "s|^|$d/in/|" > "$d/list.txt"
        fi
        rm -rf "$d/out" && mkdir -p "$d/out"
        RUNS_SAVED=$RUNS; RUNS=1
        measure "$G" --quiet --backend cpu -o "$d/out" --files-from "$d/list.txt" || exit 1
        RUNS=$RUNS_SAVED
        awk -v n="$N" -v t="$MEDIAN" -v r="$RSS_MIB" 'BEGIN { printf "%-9d %10.3f %12.3f %10.1f\n", n, t, t / n * 1e3, r }'
        measure "$G" --quiet --backend cpu -o "$d/out" --skip-existing --files-from "$d/list.txt" || exit 1
        awk -v n="$N" -v t="$MEDIAN" 'BEGIN { printf "%-9s %10.3f %12.4f            (rerun, every file skipped)\n", "", t, t / n * 1e3 }'
        N=$((N * 10))
    done
fi

if want throughput; then
    echo "== throughput: 4096x4096 photo-like PNG mosaics, K=3, PNG out, default jobs"
    $PY "$REPO/bench/make_bench_images.py" "$WORK/img" --batch 0 > /dev/null || exit 1
    mkdir -p "$WORK/tp/in"
    for i in $(seq -w 1 "$THROUGHPUT_FILES"); do
        [ -f "$WORK/tp/in/m$i.png" ] || cp "$WORK/img/mosaic4096.png" "$WORK/tp/in/m$i.png"
    done
    ls "$WORK/tp/in"/*.png | head -n "$THROUGHPUT_FILES" > "$WORK/tp/list.txt"
    for cpus in ${THROUGHPUT_CPUS:-all}; do
        # THROUGHPUT_CPUS="16 all": also on the first 16 CPUs only (taskset), as a smaller node
        pin=""; n=$(nproc)
        if [ "$cpus" != all ] && [ "$cpus" -lt "$n" ]; then pin="taskset -c 0-$((cpus - 1))"; n=$cpus; fi
        rm -rf "$WORK/tp/out" && mkdir -p "$WORK/tp/out"
        measure $pin "$G" --quiet --backend cpu --iters 3 -o "$WORK/tp/out" --files-from "$WORK/tp/list.txt" || exit 1
        awk -v n="$THROUGHPUT_FILES" -v t="$MEDIAN" -v c="$n" 'BEGIN {
            printf "throughput %d cores: %d files in %.2f s = %.2f files/s, %.1f MP/s, %.0f files/hour\n", c, n, t, n / t, n * 16.777216 / t, n / t * 3600 }'
    done
fi

if want gpus; then
    echo "== 2 GPUs against 1 (CUDA; PGM in and out, large K: the GPU is the bottleneck)"
    mkdir -p "$WORK/gpu/in"
    $PY - "$WORK/gpu" "$GPU_BATCH_FILES" "$GPU_BATCH_SIDE" <<'EOF' || exit 1
import os, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
def pgm(path, a):
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (a.shape[1], a.shape[0]))
            f.write(a.tobytes())
pgm(f"{d}/big.pgm", rng.integers(0, 256, (16384, 16384), dtype=np.uint8))
side = int(sys.argv[3])
for i in range(int(sys.argv[2])):
    pgm(f"{d}/in/s{side}_{i:02d}.pgm", rng.integers(0, 256, (side, side), dtype=np.uint8))
EOF
    ls "$WORK/gpu/in"/s"$GPU_BATCH_SIDE"_*.pgm | head -n "$GPU_BATCH_FILES" > "$WORK/gpu/list.txt"
    for what in $GPU_WHAT; do
        [ "$what" = fixed ] && continue
        for devs in 0 all; do
            if [ $what = image ]; then
                measure "$G" --quiet --backend cuda --devices $devs --iters "$GPU_IMAGE_K" "$WORK/gpu/big.pgm" "$WORK/gpu/big_$devs.pgm" || exit 1
            else
                rm -rf "$WORK/gpu/out_$devs" && mkdir -p "$WORK/gpu/out_$devs"
                measure "$G" --quiet --backend cuda --devices $devs --iters "$GPU_BATCH_K" ${GPU_BATCH_JOBS:+--jobs $GPU_BATCH_JOBS} -o "$WORK/gpu/out_$devs" --files-from "$WORK/gpu/list.txt" || exit 1
            fi
            eval "T_${what}_$devs=$MEDIAN"
        done
        if [ $what = image ]; then
            cmp -s "$WORK/gpu/big_0.pgm" "$WORK/gpu/big_all.pgm" && same=identical || same=DIFFERENT
            label="one 16384x16384 PGM, K=$GPU_IMAGE_K (strips spread)"
        else
            same=identical
            for f in "$WORK/gpu/out_0"/*.pgm; do cmp -s "$f" "$WORK/gpu/out_all/$(basename "$f")" || same=DIFFERENT; done
            label="$(wc -l < "$WORK/gpu/list.txt") ${GPU_BATCH_SIDE}x$GPU_BATCH_SIDE PGMs, K=$GPU_BATCH_K, jobs ${GPU_BATCH_JOBS:-auto} (files spread)"
        fi
        eval "one=\$T_${what}_0 all=\$T_${what}_all"
        awk -v l="$label" -v a="$one" -v b="$all" -v s="$same" 'BEGIN {
            printf "gpus %s: 1 GPU %.2f s, all GPUs %.2f s, %.2fx (target >= 1.8x); bytes %s\n", l, a, b, a / b, s }'
    done
    # What does not shrink with more devices: start-up, reading and writing (K=1).
    case " $GPU_WHAT " in *" fixed "*) fixed_devs="0 all" ;; *) fixed_devs="" ;; esac
    for devs in $fixed_devs; do
        measure "$G" --quiet --backend cuda --devices $devs --iters 1 "$WORK/gpu/big.pgm" "$WORK/gpu/k1_$devs.pgm" || exit 1
        echo "gpus fixed cost (one 16384x16384 PGM at K=1) --devices $devs: $MEDIAN s"
        "$G" --quiet --backend cuda --devices $devs --time --iters "$GPU_IMAGE_K" "$WORK/gpu/big.pgm" "$WORK/gpu/big_t.pgm" 2>&1 | tail -1
    done
fi
