#!/bin/sh
# regenerate_goldens.sh: rebuilds tests/golden/expected/ from cases.txt with the CPU backend (run only on purpose).
# usage: regenerate_goldens.sh GSMOOTH GOLDEN_DIR
set -eu
gsmooth=$1
dir=$2
mkdir -p "$dir/expected"
grep -v '^#' "$dir/cases.txt" | grep -v '^$' | while read -r expected input args; do
    # shellcheck disable=SC2086  # args is a list of options on purpose
    "$gsmooth" --backend cpu --quiet $args "$dir/inputs/$input" "$dir/expected/$expected"
    echo "regenerated $expected"
done
