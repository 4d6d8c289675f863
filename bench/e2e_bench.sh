#!/usr/bin/env bash
# e2e_bench.sh: end-to-end benchmark: gsmooth beside vips, OpenCV and ImageMagick.
#
# The same PNGs in the same run, printed as ratios (installs nothing;
# bench/install_anchors.sh does).
#
# Usage: bench/e2e_bench.sh            (about 5 minutes on 2 cores; QUICK=1 for ~1.5 minutes)
# Environment:
#   GSMOOTH=path/to/gsmooth    use this binary instead of building one
#   GSMOOTH_BENCH_DIR=dir      inputs (kept between runs), outputs, build (/tmp/gsmooth-e2e)
#   RUNS=N                     timed runs per tool on the mosaic (7; ImageMagick gets 3)
#   QUICK=1                    fewer runs, levels 0 1 2 6 only, 16 batch images
# Inputs (bench/make_bench_images.py): 8-bit gray PNG mosaics of photo-like tiles; gray so
# that every tool does the same work on the same samples. Times are wall-clock medians of
# runs interleaved tool by tool, so a busy machine slows every tool alike; every ratio
# compares figures measured in this run. Ratios: time = anchor / gsmooth (above 1:
# gsmooth is faster); size and memory = gsmooth / anchor (below 1: gsmooth is smaller).
set -u
export LC_ALL=C

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${GSMOOTH_BENCH_DIR:-/tmp/gsmooth-e2e}
PY=/usr/bin/python3
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
    RUNS=${RUNS:-3}; IM_RUNS=1; SWEEP_RUNS=1; MEM_RUNS=1; BATCH_RUNS=1; BATCH=16; AXIS_RUNS=1
    LEVELS="0 1 2 6"
else
    RUNS=${RUNS:-7}; IM_RUNS=3; SWEEP_RUNS=3; MEM_RUNS=3; BATCH_RUNS=3; BATCH=64; AXIS_RUNS=3
    LEVELS="0 1 2 3 4 5 6 7 8 9"
fi
SMALL_RUNS=15   # the 640x480 sample takes milliseconds: more runs for a stable median
T="$WORK/times"; OUT="$WORK/out"; IMG="$WORK/img"
rm -rf "$T" "$OUT"
mkdir -p "$T" "$OUT" "$IMG"
SKIPPED=()

say() { printf '%s\n' "$*" >&2; }
skip() { SKIPPED+=("$1"); say "e2e_bench: SKIP $1"; }

# ---- what is here ----
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    say "e2e_bench: $PY with numpy is needed to build the inputs (apt-get install python3-numpy); stopping"
    exit 1
fi
HAVE_VIPS=0; HAVE_CV=0; HAVE_IM=0; HAVE_TIME=0
if command -v vips >/dev/null 2>&1; then HAVE_VIPS=1
else skip "vips anchor: vips not installed (bench/install_anchors.sh installs libvips-tools)"; fi
if "$PY" -c 'import cv2' 2>/dev/null; then HAVE_CV=1
else skip "OpenCV anchor: cv2 not importable by $PY (bench/install_anchors.sh installs python3-opencv)"; fi
# /usr/local/bin/convert may be a stand-in that is not ImageMagick: ask each candidate.
IM=""
for c in magick /usr/bin/convert convert; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -version 2>/dev/null | grep -q 'ImageMagick'; then
        IM=$(command -v "$c"); break
    fi
done
if [ -n "$IM" ]; then HAVE_IM=1
else skip "ImageMagick anchor: no ImageMagick convert/magick found (bench/install_anchors.sh installs imagemagick)"; fi
if [ -x /usr/bin/time ] && /usr/bin/time -v true 2>&1 | grep -q 'Maximum resident'; then HAVE_TIME=1
else skip "peak memory rows: GNU /usr/bin/time missing (bench/install_anchors.sh installs time)"; fi

# ---- gsmooth ----
if [ -z "${GSMOOTH:-}" ]; then
    GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
    say "e2e_bench: building gsmooth (Release, CPU) in $WORK/build"
    if ! { cmake -S "$REPO" -B "$WORK/build" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
               -DGSMOOTH_CUDA=OFF -DGSMOOTH_TESTS=OFF >"$WORK/build.log" 2>&1 &&
           cmake --build "$WORK/build" >>"$WORK/build.log" 2>&1; }; then
        say "e2e_bench: build failed; see $WORK/build.log"; exit 1
    fi
    GSMOOTH="$WORK/build/bin/gsmooth"
fi
[ -x "$GSMOOTH" ] || { say "e2e_bench: $GSMOOTH is not executable"; exit 1; }

# ---- inputs ----
say "e2e_bench: inputs in $IMG (generated once, then reused)"
"$PY" "$REPO/bench/make_bench_images.py" "$IMG" --big --batch "$BATCH" || exit 1
MOSAIC="$IMG/mosaic4096.png"; BIG="$IMG/mosaic8192.png"
BATCH_FILES=()
for ((i = 0; i < BATCH; i++)); do BATCH_FILES+=("$IMG/batch/$(printf 'img_%02d.png' "$i")"); done
# The sample is RGB; its gray version (K=0 is the identity) lets vips do the same work.
LAND="$IMG/landscape_gray.png"
GSMOOTH_PNG_LEVEL=9 "$GSMOOTH" --quiet --iters 0 "$REPO/samples/landscape.png" "$LAND" || exit 1
MAT="$IMG/mean3x3.mat"   # [1 1 1] applied 3 times = [1 3 6 7 6 3 1] / 27, along rows
printf '7 1 27 0\n1 3 6 7 6 3 1\n' >"$MAT"
# --axis xy at K=3 inside the image: that kernel both ways, as a 7x7 matrix (its outer
# product, scale 27 x 27) for vips conv, and as the separable mask for vips convsep.
MAT2D="$IMG/mean3x3_2d.mat"
"$PY" -c 'import sys; t = [1, 3, 6, 7, 6, 3, 1]
print("7 7 729 0"); [print(" ".join(str(a * b) for b in t)) for a in t]' >"$MAT2D"

# ---- measuring ----
# run_timed NAME CMD...: one wall-clock run in ms appended to $T/NAME; a failure is reported.
run_timed() {
    local name=$1; shift
    local t0 t1
    t0=$(date +%s%N)
    if ! "$@" >/dev/null 2>"$WORK/last.err"; then
        say "e2e_bench: FAILED: $name: $(head -c 300 "$WORK/last.err")"; return 1
    fi
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >>"$T/$name"
}
median() { # of the numbers in a file; "nan" when none
    [ -s "$1" ] || { echo nan; return; }
    sort -n "$1" | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
fsize() { stat -c %s "$1" 2>/dev/null || echo nan; }
# peak_kb NAME PROGRAM ARGS...: one run under /usr/bin/time -v; max RSS (KiB) appended to
# $T/NAME.rss, and the wall time (ms) to $T/NAME
peak_kb() {
    local name=$1; shift
    if /usr/bin/time -v "$@" >/dev/null 2>"$WORK/last.err"; then
        awk '/Maximum resident set size/ {print $NF}' "$WORK/last.err" >>"$T/$name.rss"
        awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0
            for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%d\n", s * 1000}' "$WORK/last.err" >>"$T/$name"
    else
        say "e2e_bench: FAILED: $name: $(grep -v ':' "$WORK/last.err" | head -c 300)"
    fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "nan" || b == "nan" || b == 0) print "n/a"; else printf "%.2f", a / b}'; }
secs() { awk -v m="$1" 'BEGIN {if (m == "nan") print "n/a"; else printf "%.3f s", m / 1000}'; }
mb() { awk -v b="$1" 'BEGIN {if (b == "nan") print "n/a"; else printf "%.2f MB", b / 1e6}'; }
mib() { awk -v k="$1" 'BEGIN {if (k == "nan") print "n/a"; else printf "%.1f MiB", k / 1024}'; }

gs() { "$GSMOOTH" --quiet "$@"; }
vips_conv() { vips conv "$1" "$2" "$MAT"; }
opencv() { "$PY" "$REPO/bench/opencv_anchor.py" "$1" "$2" 3; }
magick_mean3() { "$IM" "$1" -define 'convolve:scale=!' -morphology Convolve:3 '3x1: 1,1,1' "$2"; }
gs_batch() { rm -rf "$OUT/gsb"; mkdir -p "$OUT/gsb"; gs -o "$OUT/gsb" "${BATCH_FILES[@]}"; }
vips_loop() {
    rm -rf "$OUT/vb"; mkdir -p "$OUT/vb"
    local f
    for f in "${BATCH_FILES[@]}"; do vips conv "$f" "$OUT/vb/${f##*/}" "$MAT" || return 1; done
}
vips_loop_par() { # the same loop, one vips per core at a time
    rm -rf "$OUT/vp"; mkdir -p "$OUT/vp"
    printf '%s\n' "${BATCH_FILES[@]}" |
        xargs -P "$(nproc)" -I{} sh -c 'vips conv "$1" "$2/$(basename "$1")" "$3"' _ {} "$OUT/vp" "$MAT"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
say "e2e_bench: mosaic 4096x4096, $RUNS rounds (gsmooth, vips, OpenCV; ImageMagick $IM_RUNS)"
for ((r = 1; r <= RUNS; r++)); do
    run_timed gs gs "$MOSAIC" "$OUT/gs.png"
    [ $HAVE_VIPS = 1 ] && run_timed vips vips_conv "$MOSAIC" "$OUT/vips.png"
    [ $HAVE_CV = 1 ] && run_timed cv opencv "$MOSAIC" "$OUT/cv.png"
    [ $HAVE_IM = 1 ] && [ "$r" -le $IM_RUNS ] && run_timed im magick_mean3 "$MOSAIC" "$OUT/im.png"
done
EXACT=$("$PY" "$REPO/bench/check_exact.py" "$MOSAIC" "$OUT/gs.png" 3 2>&1)
PHASES=$("$GSMOOTH" --time "$MOSAIC" "$OUT/gs_time.png" 2>&1 | sed -n 's/.*time: [^:]*: //p')

say "e2e_bench: compression levels on the mosaic and the 640x480 sample ($SWEEP_RUNS / $SMALL_RUNS runs)"
for ((r = 1; r <= SWEEP_RUNS; r++)); do
    for l in $LEVELS; do
        GSMOOTH_PNG_LEVEL=$l run_timed "m$l" gs "$MOSAIC" "$OUT/m$l.png"
    done
    GSMOOTH_PNG_THREADS=1 run_timed m1t gs "$MOSAIC" "$OUT/m1t.png" # the default level, one thread
done
for ((r = 1; r <= SMALL_RUNS; r++)); do
    for l in $LEVELS; do
        GSMOOTH_PNG_LEVEL=$l run_timed "s$l" gs "$LAND" "$OUT/s$l.png"
    done
    [ $HAVE_VIPS = 1 ] && run_timed svips vips_conv "$LAND" "$OUT/svips.png"
done
SWEEP_EXACT=""
for l in $LEVELS; do
    e=$("$PY" "$REPO/bench/check_exact.py" "$MOSAIC" "$OUT/m$l.png" 3 2>&1)
    [ "$e" = exact ] || SWEEP_EXACT="$SWEEP_EXACT level $l: $e;"
done

if [ $HAVE_TIME = 1 ]; then
    say "e2e_bench: peak memory on 8192x8192 ($MEM_RUNS runs each)"
    for ((r = 1; r <= MEM_RUNS; r++)); do
        # /usr/bin/time runs programs, not shell functions: spell the commands out.
        peak_kb big "$GSMOOTH" --quiet "$BIG" "$OUT/big_gs.png"
        [ $HAVE_VIPS = 1 ] && peak_kb bigvips vips conv "$BIG" "$OUT/big_vips.png" "$MAT"
    done
fi

say "e2e_bench: --axis x, y, xy on 8192x8192 ($AXIS_RUNS rounds), vips conv 7x7 / convsep and OpenCV sepFilter2D for xy"
for ((r = 1; r <= AXIS_RUNS; r++)); do
    for a in x y xy; do run_timed "ax_$a" gs --axis "$a" "$BIG" "$OUT/ax_$a.png"; done
    if [ $HAVE_VIPS = 1 ]; then
        run_timed ax_vconv vips conv "$BIG" "$OUT/ax_vconv.png" "$MAT2D"
        run_timed ax_vsep vips convsep "$BIG" "$OUT/ax_vsep.png" "$MAT"
    fi
    [ $HAVE_CV = 1 ] && run_timed ax_cv "$PY" "$REPO/bench/opencv_anchor.py" "$BIG" "$OUT/ax_cv.png" sep7
done
AXIS_EXACT=""
for a in y xy; do
    e=$("$PY" "$REPO/bench/check_exact.py" "$BIG" "$OUT/ax_$a.png" 3 "$a" 2>&1)
    AXIS_EXACT="$AXIS_EXACT $a: $e;"
done

say "e2e_bench: TIFF in and out on 8192x8192 ($AXIS_RUNS rounds), vips conv 7x1 (integer precision: 8-bit out) with deflate level 1 + predictor, and uncompressed"
BIG_TIF="$IMG/mosaic8192.tif"   # deflate + horizontal predictor, as gsmooth writes it
[ -s "$BIG_TIF" ] || gs --iters 0 "$BIG" "$BIG_TIF" || exit 1
for ((r = 1; r <= AXIS_RUNS; r++)); do
    if [ $HAVE_TIME = 1 ]; then
        peak_kb tif "$GSMOOTH" --quiet "$BIG_TIF" "$OUT/tif_gs.tif"
        [ $HAVE_VIPS = 1 ] && peak_kb tifvraw vips conv --precision integer "$BIG_TIF" "$OUT/tif_vraw.tif" "$MAT"
        [ $HAVE_VIPS = 1 ] && peak_kb tifvips vips conv --precision integer "$BIG_TIF" "$OUT/tif_vips.tif[compression=deflate,predictor=horizontal,level=1]" "$MAT"
    else
        run_timed tif gs "$BIG_TIF" "$OUT/tif_gs.tif"
        [ $HAVE_VIPS = 1 ] && run_timed tifvraw vips conv --precision integer "$BIG_TIF" "$OUT/tif_vraw.tif" "$MAT"
        [ $HAVE_VIPS = 1 ] && run_timed tifvips vips conv --precision integer "$BIG_TIF" "$OUT/tif_vips.tif[compression=deflate,predictor=horizontal,level=1]" "$MAT"
    fi
done
# The TIFF result must hold the PNG result's pixels (the x-axis run above), read by tifffile.
TIF_SAME=$("$PY" -c 'import sys, numpy as np, tifffile, cv2
a = tifffile.imread(sys.argv[1]); b = cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
print("same pixels" if a.shape == b.shape and (a == b).all() else "DIFFER")' "$OUT/tif_gs.tif" "$OUT/ax_x.png" 2>/dev/null || echo "n/a (tifffile or OpenCV missing)")

say "e2e_bench: batch of $BATCH 2048x2048 files ($BATCH_RUNS rounds)"
for ((r = 1; r <= BATCH_RUNS; r++)); do
    run_timed batch gs_batch
    if [ $HAVE_VIPS = 1 ]; then
        run_timed vloop vips_loop
        run_timed vpar vips_loop_par
    fi
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the table ----
G=$(median "$T/gs"); V=$(median "$T/vips"); C=$(median "$T/cv"); M=$(median "$T/im")
GS_SIZE=$(fsize "$OUT/gs.png"); V_SIZE=$(fsize "$OUT/vips.png")
C_SIZE=$(fsize "$OUT/cv.png"); M_SIZE=$(fsize "$OUT/im.png")
met() { # met VALUE OP LIMIT -> yes/NO/n/a
    awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
        if (v == "n/a" || v == "nan" || l == "n/a") {print "n/a"; exit}
        ok = (op == ">=") ? v + 0 >= l + 0 : v + 0 <= l + 0; print ok ? "yes" : "NO" }'
}
row() { printf '| %-40s | %-12s | %-26s | %-12s | %-7s | %-12s | %-4s |\n' "$@"; }

echo
echo "gsmooth end to end, $(nproc) cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1))"
echo "load average before: $LOAD0, after: $LOAD1; medians of $RUNS runs (ImageMagick $IM_RUNS)"
echo "inputs: 8-bit gray PNG mosaics of photo_like() tiles; vips $(vips --version 2>/dev/null | cut -d- -f2 || echo -), OpenCV $("$PY" -c 'import cv2; print(cv2.__version__)' 2>/dev/null || echo -), $([ -n "$IM" ] && "$IM" -version | head -1 | cut -d' ' -f2-3 || echo 'no ImageMagick')"
echo
row "work" "gsmooth" "anchor" "anchor fig." "ratio" "target" "met"
row "----" "-------" "------" "-----------" "-----" "------" "---"
R=$(ratio "$V" "$G")
row "4096^2 mosaic K=3, wall time" "$(secs "$G")" "vips conv 7x1 float" "$(secs "$V")" "${R}x" ">= 2x faster" "$(met "$R" '>=' 2)"
R=$(ratio "$C" "$G")
row "  same" "$(secs "$G")" "OpenCV blur(3,1) x3" "$(secs "$C")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$M" "$G")
row "  same" "$(secs "$G")" "ImageMagick Convolve:3" "$(secs "$M")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$GS_SIZE" "$V_SIZE")
row "  output size" "$(mb "$GS_SIZE")" "vips pngsave default" "$(mb "$V_SIZE")" "$R" "<= 1" "$(met "$R" '<=' 1)"
row "  output size" "$(mb "$GS_SIZE")" "OpenCV imwrite default" "$(mb "$C_SIZE")" "$(ratio "$GS_SIZE" "$C_SIZE")" "-" "-"
row "  output size" "$(mb "$GS_SIZE")" "ImageMagick default" "$(mb "$M_SIZE")" "$(ratio "$GS_SIZE" "$M_SIZE")" "-" "-"
row "  pixels = design formula (float32)" "$EXACT" "-" "-" "-" "exact" "$([ "$EXACT" = exact ] && echo yes || echo NO)"
if [ $HAVE_TIME = 1 ]; then
    B=$(median "$T/big.rss"); BV=$(median "$T/bigvips.rss")
    R=$(ratio "$B" "$BV")
    row "8192^2 mosaic K=3, peak RSS" "$(mib "$B")" "vips conv 7x1" "$(mib "$BV")" "$R" "<= 32 MiB" "$(awk -v k="$B" 'BEGIN {print (k == "nan") ? "n/a" : (k <= 32768) ? "yes" : "NO"}')"
    R=$(ratio "$(median "$T/bigvips")" "$(median "$T/big")")
    row "  wall time (same runs)" "$(secs "$(median "$T/big")")" "vips conv 7x1" "$(secs "$(median "$T/bigvips")")" "${R}x" "-" "-"
fi
AX=$(median "$T/ax_x"); AY=$(median "$T/ax_y"); AXY=$(median "$T/ax_xy")
row "8192^2 mosaic K=3 --axis y, wall time" "$(secs "$AY")" "gsmooth --axis x" "$(secs "$AX")" "$(ratio "$AY" "$AX")" "about 1" "-"
row "  --axis xy" "$(secs "$AXY")" "gsmooth --axis x" "$(secs "$AX")" "$(ratio "$AXY" "$AX")" "-" "-"
R=$(ratio "$(median "$T/ax_vconv")" "$AXY")
row "  --axis xy" "$(secs "$AXY")" "vips conv 7x7 (same 2-D kernel)" "$(secs "$(median "$T/ax_vconv")")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$(median "$T/ax_vsep")" "$AXY")
row "  --axis xy" "$(secs "$AXY")" "vips convsep 7 (separable)" "$(secs "$(median "$T/ax_vsep")")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$(median "$T/ax_cv")" "$AXY")
row "  --axis xy" "$(secs "$AXY")" "OpenCV sepFilter2D 7x7" "$(secs "$(median "$T/ax_cv")")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
row "  pixels = design formula (float32)" "$(echo "$AXIS_EXACT" | sed 's/^ //')" "-" "-" "-" "exact" "$([ "$AXIS_EXACT" = " y: exact; xy: exact;" ] && echo yes || echo NO)"
TG=$(median "$T/tif"); TV=$(median "$T/tifvips")
R=$(ratio "$TV" "$TG")
row "8192^2 TIFF -> TIFF K=3, wall time" "$(secs "$TG")" "vips conv 7x1 int, deflate 1+pred" "$(secs "$TV")" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$(median "$T/tifvraw")" "$TG")
row "  same" "$(secs "$TG")" "vips conv 7x1 int, uncompressed" "$(secs "$(median "$T/tifvraw")")" "${R}x" "-" "-"
TS=$(fsize "$OUT/tif_gs.tif"); TVS=$(fsize "$OUT/tif_vips.tif")
row "  output size" "$(mb "$TS")" "vips, deflate+pred." "$(mb "$TVS")" "$(ratio "$TS" "$TVS")" "-" "-"
if [ $HAVE_TIME = 1 ]; then
    row "  peak RSS" "$(mib "$(median "$T/tif.rss")")" "vips" "$(mib "$(median "$T/tifvips.rss")")" "$(ratio "$(median "$T/tif.rss")" "$(median "$T/tifvips.rss")")" "-" "-"
fi
row "  pixels = the PNG run's" "$TIF_SAME" "-" "-" "-" "same" "$([ "$TIF_SAME" = "same pixels" ] && echo yes || echo NO)"
GB=$(median "$T/batch"); VL=$(median "$T/vloop"); VP=$(median "$T/vpar")
ips() { awk -v n="$BATCH" -v m="$1" 'BEGIN {if (m == "nan" || m == 0) print "nan"; else printf "%.2f", n * 1000 / m}'; }
GI=$(ips "$GB"); VLI=$(ips "$VL"); VPI=$(ips "$VP")
R=$(ratio "$GI" "$VLI")
row "batch $BATCH x 2048^2, images/s" "$GI/s" "vips loop (one at a time)" "$VLI/s" "${R}x" "> 1x" "$(met "$R" '>=' 1)"
R=$(ratio "$GI" "$VPI")
row "  same" "$GI/s" "vips loop, $(nproc) at a time" "$VPI/s" "${R}x" "-" "-"
echo
echo "gsmooth --time on the mosaic: $PHASES"
echo
echo "PNG compression levels (GSMOOTH_PNG_LEVEL; 0 stored, 1-3 ISA-L, 4-9 zlib; presets: fast=1, default=2, small=6), $SWEEP_RUNS runs on the mosaic, $SMALL_RUNS on the sample"
printf '| %-5s | %-9s | %-11s | %-11s | %-9s | %-11s | %-11s |\n' level "mosaic t" "mosaic size" "size / vips" "sample t" "sample size" "size / vips"
printf '| %-5s | %-9s | %-11s | %-11s | %-9s | %-11s | %-11s |\n' ----- -------- ----------- ----------- -------- ----------- -----------
SV_SIZE=$(fsize "$OUT/svips.png")
for l in $LEVELS; do
    ms=$(fsize "$OUT/m$l.png"); ss=$(fsize "$OUT/s$l.png")
    printf '| %-5s | %-9s | %-11s | %-11s | %-9s | %-11s | %-11s |\n' "$l" "$(secs "$(median "$T/m$l")")" "$(mb "$ms")" "$(ratio "$ms" "$V_SIZE")" \
        "$(secs "$(median "$T/s$l")")" "$(awk -v b="$ss" 'BEGIN {printf "%.1f KB", b / 1e3}')" "$(ratio "$ss" "$SV_SIZE")"
done
printf '| %-5s | %-9s | %-11s | %-11s | %-9s | %-11s | %-11s |\n' "vips" "$(secs "$V")" "$(mb "$V_SIZE")" "1.00" "$(secs "$(median "$T/svips")")" "$(awk -v b="$SV_SIZE" 'BEGIN {printf "%.1f KB", b / 1e3}')" "1.00"
echo "the default level with one deflate thread (GSMOOTH_PNG_THREADS=1): $(secs "$(median "$T/m1t")"), $(mb "$(fsize "$OUT/m1t.png")") (same bytes as with more threads: $(cmp -s "$OUT/m2.png" "$OUT/m1t.png" && echo yes || echo NO))"
echo "every level decodes to the exact smoothing: $([ -z "$SWEEP_EXACT" ] && echo yes || echo "NO:$SWEEP_EXACT")"
for s in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do echo "skipped: $s"; done
