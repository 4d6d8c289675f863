#!/bin/bash
# e2e_gpu.sh: on the GPU machine: gsmooth end to end with the CUDA and CPU backends.
#
# PNG in, PNG out; a batch; and the work at which CUDA starts to pay (auto's threshold).
# usage: e2e_gpu.sh BUILD_DIR OUT_DIR   (run from the repository root; python3 with numpy)
set -u
BUILD=$1 OUT=$2
G=$BUILD/bin/gsmooth
W=/tmp/gs-e2e
mkdir -p "$W/batch-in" "$W/batch-cuda" "$W/batch-cpu"
PYTHON=${PYTHON:-python3}
$PYTHON - "$W" <<'PY'
import sys; sys.path.insert(0, "scripts")
import imagegen, pngwrite, shutil
w = sys.argv[1]
big = imagegen.photo_like(4096, 4096, seed=21, channels=1)
pngwrite.write(f"{w}/big.png", big, kind="gray")
for side in (256, 512, 1024, 2048):
    pngwrite.write(f"{w}/s{side}.png", big[:side, :side], kind="gray")
for i in range(16):
    shutil.copy(f"{w}/s2048.png", f"{w}/batch-in/img{i:02d}.png")
PY
ms() { # median total ms of 3 runs of: gsmooth ARGS (from --time)
    for r in 1 2 3; do "$G" --quiet --time "$@" 2>&1 | sed -n 's/.*total \([0-9.]*\) ms/\1/p'; done | sort -n | sed -n 2p
}
echo "== end to end, 4096x4096 8-bit PNG -> PNG (median of 3, ms; phases from --time)"
for k in 3 50; do
    for b in cuda cpu; do
        "$G" --quiet --time --backend $b --iters $k "$W/big.png" "$W/out-$b.png" 2>&1 | sed "s/^/K=$k $b: /"
    done
    cmp -s "$W/out-cuda.png" "$W/out-cpu.png" && echo "K=$k: cuda and cpu outputs identical" || echo "K=$k: OUTPUTS DIFFER"
done
echo "== batch: 16 x 2048x2048 PNG, K=3"
for b in cuda cpu; do
    s=$EPOCHREALTIME
    "$G" --quiet --backend $b -o "$W/batch-$b" "$W"/batch-in/*.png
    e=$EPOCHREALTIME
    awk -v s="$s" -v e="$e" -v b=$b 'BEGIN { printf "batch %s: %.3f s for 16 files, %.1f images/s\n", b, e - s, 16 / (e - s) }' 
done
diff -r "$W/batch-cuda" "$W/batch-cpu" > /dev/null && echo "batch outputs identical" || echo "BATCH OUTPUTS DIFFER"
echo "== auto threshold: total ms, cuda vs cpu with 2 threads (a 2-core machine) and all cores"
printf "%-10s %6s %10s %10s %10s\n" size K cuda cpu2 cpu_all
for side in 256 512 1024 2048 4096; do
    f="$W/s$side.png"; [ $side = 4096 ] && f="$W/big.png"
    for k in 1 3 20; do
        printf "%-10s %6s %10s %10s %10s\n" "${side}^2" $k "$(ms --backend cuda --iters $k "$f" "$W/t.png")" \
            "$(ms --backend cpu --threads 2 --iters $k "$f" "$W/t.png")" "$(ms --backend cpu --iters $k "$f" "$W/t.png")"
    done
done
