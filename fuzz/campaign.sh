#!/bin/sh
# campaign.sh: a long fuzz campaign on a many-core machine with harnesses built elsewhere.
#
# Every harness runs with libFuzzer -fork; findings and logs go into OUT.
# usage: campaign.sh CARRY OUT  (CARRY holds fuzz_pipeline, fuzz_decode_*, fuzz_png_*, seeds/ and corpus-*/ as
# fuzz/run_fuzz.sh leaves them in build-fuzz/; OUT receives the logs and any finding).
# Environment: GS_FUZZ_FORK (default: online CPUs), GS_CAMPAIGN_SECONDS="pipeline:200 stb:90 ...".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CARRY=$(cd "$1" && pwd) OUT=$2
mkdir -p "$OUT"
export GS_FUZZ_BUILD="$CARRY" GS_FUZZ_NO_BUILD=1 GS_FUZZ_SEEDS="$CARRY/seeds"
export GS_FUZZ_FORK=${GS_FUZZ_FORK:-$(nproc)}
status=0
for spec in ${GS_CAMPAIGN_SECONDS:-pipeline:200 stb:90 png:60 pngwrite:120 jpeg:60 pnm:30}; do
    h=${spec%%:*} s=${spec#*:}
    sh "$ROOT/fuzz/run_fuzz.sh" "$s" "$h" | tee -a "$OUT/campaign.log" || status=1
done
# Few files come back from a lent machine: the logs and the findings as two archives.
(cd "$CARRY" && tar czf "$OUT/logs.tgz" fuzz-*.log && tar czf "$OUT/artifacts.tgz" artifacts-*)
grep "executions" "$OUT/campaign.log" | sed 's/ (log: .*//'
exit $status
