#!/bin/sh
# run_fuzz.sh: builds the libFuzzer harnesses with clang and fuzzes each.
#
# In their own build directory; each harness gets its share of SECONDS (default 60); prints
# executions and findings per harness, and copies every crash into fuzz/regressions/.
# usage: run_fuzz.sh [SECONDS [HARNESS...]]   HARNESS: pipeline, png, pngfast, pngdiff, pngwrite, deflate, jpeg, stb, pnm, tiff, gif, bmp, tga, webp, fits, npy (default all)
# Environment: GS_FUZZ_FORK=N runs N fuzzing processes per harness (libFuzzer -fork=N);
# GS_FUZZ_BUILD, GS_FUZZ_CC; GS_FUZZ_NO_BUILD=1 uses the harnesses already built;
# GS_FUZZ_SEEDS=DIR uses seeds made earlier (a machine without python3-pil);
# GS_FUZZ_RUNS=N also stops each harness after N executions (whichever comes first).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TO_RUN=${1:-60}
[ $# -gt 0 ] && shift
HARNESSES=${*:-pipeline png pngfast pngdiff pngwrite deflate jpeg stb pnm tiff gif bmp tga webp fits npy}
BUILD=${GS_FUZZ_BUILD:-$ROOT/build-fuzz}
CC_FUZZ=${GS_FUZZ_CC:-clang}
FORK=${GS_FUZZ_FORK:-0}

# Limits, OSS-Fuzz style: a run over 10 s is a hang; 1 GiB resident is an out-of-memory
# finding. No single allocation may pass 256 MiB: every run is held to --max-pixels 2^20
# (16 MiB of pixels at the worst), so a bigger one means a limit was not applied.
TIMEOUT_S=10
RSS_LIMIT_MB=1024
MALLOC_LIMIT_MB=256
# Largest input the mutator makes: the golden inputs fit whole; the big sample is cut.
MAX_LEN=131072

case $SECONDS_TO_RUN in
    ''|*[!0-9]*) echo "usage: $0 [SECONDS [HARNESS...]]" >&2; exit 2 ;;
esac
targets=""
for h in $HARNESSES; do
    case $h in
        pipeline) targets="$targets fuzz_pipeline" ;;
        png|pngfast|jpeg|stb|pnm|tiff|gif|bmp|tga|webp|fits|npy) targets="$targets fuzz_decode_$h" ;;
        pngdiff) targets="$targets fuzz_png_diff" ;;
        pngwrite) targets="$targets fuzz_png_writer_diff" ;;
        deflate) targets="$targets fuzz_deflate_roundtrip" ;;
        *) echo "run_fuzz.sh: unknown harness '$h' (pipeline, png, pngfast, pngdiff, pngwrite, deflate, jpeg, stb, pnm, tiff, gif, bmp, tga, webp, fits, npy)" >&2; exit 2 ;;
    esac
done
count=$(echo $HARNESSES | wc -w)
share=$((SECONDS_TO_RUN / count))
[ "$share" -ge 1 ] || share=1

if [ "${GS_FUZZ_NO_BUILD:-0}" != 1 ]; then
    command -v "$CC_FUZZ" >/dev/null 2>&1 || { echo "run_fuzz.sh: $CC_FUZZ not found (the harness needs clang's libFuzzer)" >&2; exit 2; }
    mkdir -p "$BUILD"
    if [ ! -f "$BUILD/build.ninja" ]; then
        cmake -S "$ROOT/fuzz" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER="$CC_FUZZ" \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD/configure.log" 2>&1 ||
            { cat "$BUILD/configure.log" >&2; exit 1; }
    fi
    # shellcheck disable=SC2086  # a list of targets on purpose
    cmake --build "$BUILD" --target $targets >"$BUILD/build.log" 2>&1 ||
        { tail -n 30 "$BUILD/build.log" >&2; exit 1; }
fi

SEEDS=${GS_FUZZ_SEEDS:-$BUILD/seeds}
if [ -z "${GS_FUZZ_SEEDS:-}" ]; then
    rm -rf "$SEEDS"
    sh "$ROOT/fuzz/make_seed_corpus.sh" "$SEEDS" >/dev/null
fi
total_found=0
failed=0
for h in $HARNESSES; do
    case $h in
        pipeline) bin=fuzz_pipeline ;;
        pngdiff) bin=fuzz_png_diff ;;
        pngwrite) bin=fuzz_png_writer_diff ;;
        deflate) bin=fuzz_deflate_roundtrip ;;
        *) bin=fuzz_decode_$h ;;
    esac
    mkdir -p "$BUILD/corpus-$h" "$BUILD/artifacts-$h"
    rm -f "$BUILD/artifacts-$h"/*
    LOG="$BUILD/fuzz-$h.log"
    # The first directory receives new inputs; the seeds and the saved regressions are read.
    STARTED=$(date +%s)
    set +e
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$BUILD/$bin" -max_total_time="$share" -timeout="$TIMEOUT_S" \
        -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" -max_len="$MAX_LEN" \
        -dict="$ROOT/fuzz/gsmooth.dict" -print_final_stats=1 \
        $( [ "$FORK" -gt 0 ] && echo "-fork=$FORK -ignore_crashes=1" ) \
        $( [ -n "${GS_FUZZ_RUNS:-}" ] && echo "-runs=$GS_FUZZ_RUNS" ) \
        -artifact_prefix="$BUILD/artifacts-$h/" \
        "$BUILD/corpus-$h" "$SEEDS" "$ROOT/fuzz/regressions" >"$LOG" 2>&1
    STATUS=$?
    set -e
    ELAPSED=$(($(date +%s) - STARTED))
    # -fork's log reports running totals ("#N ... exec/s"); a single process its final stats.
    EXECS=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -n 1)
    [ -n "$EXECS" ] || EXECS=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$LOG" | tail -n 1)
    COVER=$(sed -n 's/^#[0-9]*.*cov: \([0-9]*\).*/\1/p' "$LOG" | tail -n 1)
    FOUND=0
    for f in "$BUILD/artifacts-$h"/*; do
        [ -e "$f" ] || continue
        FOUND=$((FOUND + 1))
        cp "$f" "$ROOT/fuzz/regressions/$(basename "$f")"
        echo "run_fuzz.sh: $h: finding saved as fuzz/regressions/$(basename "$f")"
    done
    total_found=$((total_found + FOUND))
    echo "run_fuzz.sh: $h: ${EXECS:-0} executions in ${ELAPSED} s, coverage ${COVER:-?} edges, corpus $(ls "$BUILD/corpus-$h" | wc -l) files, findings: $FOUND (log: $LOG)"
    if [ "$FOUND" -gt 0 ] || [ "$STATUS" -ne 0 ]; then
        failed=1
        grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz_)|runtime error" "$LOG" | head -n 20 >&2 || true
    fi
done
echo "run_fuzz.sh: findings: $total_found"
exit $failed
