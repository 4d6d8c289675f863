#!/bin/sh
# make_manpage.sh: writes the man page docs/gsmooth.1 from docs/cli.md with lowdown, or checks that the committed page is current.
# Usage: sh scripts/make_manpage.sh [OUTPUT]        write the page (default docs/gsmooth.1)
#        sh scripts/make_manpage.sh --check GSMOOTH  what ctest docs_manpage runs: the page
#            renders without warnings and without markdown left as text, equals what this
#            script makes from cli.md now, and cli.md names every long option that
#            `GSMOOTH --help` prints and every output extension GSMOOTH takes.
# The version and date in the page's footer come from the newest release heading of
# CHANGELOG.md ("## [0.3.0] - 2026-12-02"), so the page changes only when cli.md or a
# release does.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cli=$root/docs/cli.md
page=$root/docs/gsmooth.1

need_lowdown() {
    command -v lowdown >/dev/null 2>&1 && return 0
    echo "make_manpage.sh: lowdown not found (Debian package lowdown; scripts/setup.sh installs it)" >&2
    exit 1
}

generate() { # generate OUTPUT
    need_lowdown
    release=$(sed -n 's/^## \[\([0-9][0-9.]*\)\] - \([0-9-]*\).*/\1 \2/p' "$root/CHANGELOG.md" | head -n 1)
    [ -n "$release" ] || { echo "make_manpage.sh: no release heading in CHANGELOG.md" >&2; exit 1; }
    # No smart quotes or dashes (options keep their two hyphens), no superscripts (2^32).
    # Emphasis next to punctuation ([*OPTIONS*], *DIR*/*stem*) is rendered, so cli.md
    # escapes the underscores of names in bold (**GSMOOTH\_PNG\_LEVEL**).
    lowdown -s -Tman --out-no-smarty --parse-no-super \
        -M "title=gsmooth" -M "section=1" -M "date=${release#* }" -M "source=gsmooth ${release% *}" \
        -o "$1" "$cli"
}

if [ "${1:-}" != "--check" ]; then
    generate "${1:-$page}"
    exit 0
fi

gsmooth=${2:?usage: make_manpage.sh --check PATH-TO-GSMOOTH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# 1. The page renders with no warnings.
if command -v groff >/dev/null 2>&1; then
    groff -t -man -Tutf8 -ww -z "$page" >"$tmp/render.log" 2>&1 || echo "groff exited $?" >>"$tmp/render.log"
    renderer=groff
elif command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man --warnings -l "$page" 2>"$tmp/render.log" >/dev/null || echo "man exited $?" >>"$tmp/render.log"
    renderer="man -l"
else
    echo "FAIL: neither groff nor man is installed (Debian groff-base; scripts/setup.sh installs it)"
    exit 1
fi
if [ -s "$tmp/render.log" ]; then
    echo "FAIL: docs/gsmooth.1 does not render cleanly with $renderer:"
    cat "$tmp/render.log"
    status=1
else
    echo "ok: docs/gsmooth.1 renders with $renderer, no warnings"
fi

# 2. No markdown emphasis is left as text in the page (lowdown leaves **x** and *x* as they
#    are where it does not take them for emphasis), and none is made inside a word (an
#    unescaped GSMOOTH_PNG_LEVEL in bold becomes GSMOOTH\f(BIPNG\fBLEVEL).
if grep -nE '\*\*|\*[A-Za-z][^*]*\*|\\f\(BI|[A-Za-z0-9]\\fI[^\\]*\\f[RP][A-Za-z0-9]' "$page" >"$tmp/stars.txt"; then
    echo "FAIL: docs/gsmooth.1 shows markdown emphasis as text or inside a word (escape _ as \\_ in cli.md):"
    head -n 10 "$tmp/stars.txt"
    status=1
else
    echo "ok: docs/gsmooth.1 holds no unrendered emphasis"
fi

# 3. The page is what this script makes from cli.md now.
generate "$tmp/gsmooth.1"
if cmp -s "$tmp/gsmooth.1" "$page"; then
    echo "ok: docs/gsmooth.1 is current with docs/cli.md"
else
    echo "FAIL: docs/gsmooth.1 is not what docs/cli.md gives now; run sh scripts/make_manpage.sh and commit docs/gsmooth.1"
    diff "$page" "$tmp/gsmooth.1" | head -n 20 || true
    status=1
fi

in_cli() { # in_cli KIND ITEM: whether cli.md names ITEM, as it writes that kind
    case $1 in
    option) grep -qE -- "$2([^a-z0-9-]|\$)" "$cli" ;;
    extension) grep -qF -- "**$2**" "$tmp/output.md" ;; # in bold, in the Output paragraph
    *) echo "make_manpage.sh: no kind $1" >&2; exit 1 ;;
    esac
}

check_named() { # check_named KIND WHERE ITEM...: every ITEM is in cli.md
    kind=$1 where=$2
    shift 2
    [ $# -gt 0 ] || { echo "FAIL: no ${kind}s found in $where"; exit 1; }
    missing=""
    for item in "$@"; do
        in_cli "$kind" "$item" || missing="$missing $item"
    done
    if [ -n "$missing" ]; then
        echo "FAIL: docs/cli.md does not describe these ${kind}s of $where:$missing"
        status=1
    else
        echo "ok: docs/cli.md names all $# ${kind}s of $where"
    fi
}

# 4. Every long option of --help is in cli.md (GS_DOCS_EXTRA_OPTION adds one, to see this fail).
"$gsmooth" --help >"$tmp/help.txt"
# shellcheck disable=SC2046 # one word an option
check_named option "gsmooth --help" $( { grep -oE -- '--[a-z][a-z0-9-]*' "$tmp/help.txt"
    [ -z "${GS_DOCS_EXTRA_OPTION:-}" ] || echo "$GS_DOCS_EXTRA_OPTION"; } | sort -u)

# 5. Every output extension gsmooth takes is in cli.md's Output paragraph: the list a wrong
#    extension's usage error gives.
sed -n '/^\*\*Output\*\*/,/^$/p' "$cli" >"$tmp/output.md"
"$gsmooth" "$root/samples/landscape.png" "$tmp/out.unknown-extension" 2>"$tmp/ext.txt" && true
# shellcheck disable=SC2046 # one word an extension
check_named extension "gsmooth's usage error" $(sed -n 's/.*(supported: \(.*\)).*/\1/p' "$tmp/ext.txt")
exit $status
