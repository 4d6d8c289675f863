#!/bin/sh
# run_fuzz.sh: builds the libFuzzer harness with clang in its own build directory, fuzzes for SECONDS (default 60), prints executions and findings, and copies every crash into fuzz/regressions/.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TO_RUN=${1:-60}
BUILD=${GS_FUZZ_BUILD:-$ROOT/build-fuzz}
CC_FUZZ=${GS_FUZZ_CC:-clang}

# Limits, OSS-Fuzz style: a run over 10 s is a hang; 1 GiB resident is an out-of-memory
# finding. No single allocation may pass 256 MiB: every run is held to --max-pixels 2^20
# (16 MiB of pixels at the worst), so a bigger one means a limit was not applied.
TIMEOUT_S=10
RSS_LIMIT_MB=1024
MALLOC_LIMIT_MB=256
# Largest input the mutator makes: the golden inputs fit whole; the big sample is cut.
MAX_LEN=131072

case $SECONDS_TO_RUN in
    ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
command -v "$CC_FUZZ" >/dev/null 2>&1 || { echo "run_fuzz.sh: $CC_FUZZ not found (the harness needs clang's libFuzzer)" >&2; exit 2; }

mkdir -p "$BUILD"
if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT/fuzz" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER="$CC_FUZZ" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD/configure.log" 2>&1 ||
        { cat "$BUILD/configure.log" >&2; exit 1; }
fi
cmake --build "$BUILD" --target fuzz_pipeline >"$BUILD/build.log" 2>&1 ||
    { tail -n 30 "$BUILD/build.log" >&2; exit 1; }

rm -rf "$BUILD/seeds"
sh "$ROOT/fuzz/make_seed_corpus.sh" "$BUILD/seeds" >/dev/null
mkdir -p "$BUILD/corpus" "$BUILD/artifacts"
rm -f "$BUILD"/artifacts/*
LOG="$BUILD/fuzz.log"

# The first directory receives new inputs; the seeds and the saved regressions are read.
STARTED=$(date +%s)
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$BUILD/fuzz_pipeline" -max_total_time="$SECONDS_TO_RUN" -timeout="$TIMEOUT_S" \
    -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" -max_len="$MAX_LEN" \
    -dict="$ROOT/fuzz/gsmooth.dict" -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/" \
    "$BUILD/corpus" "$BUILD/seeds" "$ROOT/fuzz/regressions" >"$LOG" 2>&1
STATUS=$?
set -e
ELAPSED=$(($(date +%s) - STARTED))

EXECS=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -n 1)
[ -n "$EXECS" ] || EXECS=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$LOG" | tail -n 1)
FOUND=0
for f in "$BUILD"/artifacts/*; do
    [ -e "$f" ] || continue
    FOUND=$((FOUND + 1))
    cp "$f" "$ROOT/fuzz/regressions/$(basename "$f")"
    echo "run_fuzz.sh: finding saved as fuzz/regressions/$(basename "$f")"
done
echo "run_fuzz.sh: ${EXECS:-0} executions in ${ELAPSED} s (asked ${SECONDS_TO_RUN} s), corpus $(ls "$BUILD/corpus" | wc -l) files, findings: $FOUND (log: $LOG)"
if [ "$FOUND" -gt 0 ] || [ "$STATUS" -ne 0 ]; then
    grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz_pipeline:)|runtime error" "$LOG" | head -n 20 >&2 || true
    exit 1
fi
