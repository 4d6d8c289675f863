#!/bin/bash
# bash_check.sh: gsmooth's bash completion: valid bash, the file the build installs, and completing what the parser takes.
#
# usage: bash_check.sh GSMOOTH SOURCE_DIR BUILT_SCRIPT
# The option names it expects come from app/options.c's getopt entries and from --help,
# not from the generator, so a script that drops an option fails here. Each case runs
# with compgen alone, then again with bash-completion's helpers where they are installed.
set -u
# shellcheck source=tests/completion/common.sh
. "$(dirname "$0")/common.sh"

"$gsmooth" --completion bash >"$dir/gsmooth.bash" 2>"$dir/err" || fail "gsmooth --completion bash exited $?: $(cat "$dir/err")"
[ -s "$dir/err" ] && fail "gsmooth --completion bash wrote to stderr: $(cat "$dir/err")"
bash -n "$dir/gsmooth.bash" || fail "the script is not valid bash"
cmp -s "$dir/gsmooth.bash" "$built" || fail "$built is not what gsmooth --completion bash writes now"

helpers=none # bash-completion's bash_completion, sourced before the script, or none
# candidates WORD...: the sorted candidates _gsmooth gives for the last WORD, the words as
# bash splits the line (at = too: --axis=x is "--axis" "=" "x").
candidates() {
    bash --norc --noprofile -c '
        [ "$1" = none ] || source "$1" || exit 3
        source "$2" || exit 3
        shift 2
        COMP_WORDS=(gsmooth "$@")
        COMP_CWORD=$#
        COMP_LINE="gsmooth $*"
        COMP_POINT=${#COMP_LINE}
        _gsmooth
        printf "%s\n" "${COMPREPLY[@]}"' _ "$helpers" "$dir/gsmooth.bash" "$@" | LC_ALL=C sort | paste -sd' ' -
}
# expect WANT WORD...: the candidates for WORD... are WANT (space-separated, sorted).
expect() {
    want=$1
    shift
    got=$(candidates "$@")
    [ "$got" = "$want" ] || fail "[$helpers] gsmooth $*<TAB>: got '$got', want '$want'"
}

help=$("$gsmooth" --help)
from_help=$(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u)
shorts=$(printf '%s\n' "$help" | grep -oE -- '(^|[ ,|/])-[a-zA-Z]([ ,/]|$)' | grep -oE -- '-[a-zA-Z]' | LC_ALL=C sort -u)
for o in --help --axis --integral --completion; do
    printf '%s\n' "$table" | grep -qx -- "$o" || fail "$o is not among the options found in app/options.c"
done
[ "$shorts" = "$(printf '%s\n' -V -h -o -v | LC_ALL=C sort)" ] || fail "short options in --help: $shorts"

run_cases() {
    cd "$dir/tree" || exit 1
    # Option names: every long option of the table and of --help, and each short one.
    offered=$(candidates -)
    for o in $table $from_help $shorts; do
        case " $offered " in *" $o "*) ;; *) fail "[$helpers] gsmooth -<TAB> does not offer $o" ;; esac
    done
    expect "--axis" --ax
    expect "--completion --compression" --comp
    expect "--files-from --files0-from" --files
    # Values after a space (required values only) and after = (split by bash, or one word).
    expect "x xy y" --axis ""
    expect "x xy" --axis x
    expect "x xy y" --axis =
    expect "x xy" --axis = x
    expect "--axis=x --axis=xy" --axis=x
    expect "16 8 float keep" --depth ""
    expect "bash zsh" --completion ""
    expect "bash" --completion = b
    expect "fast" --compression f
    expect "2d rows" --integral =
    expect "2d" --integral = 2
    expect "--integral=2d --integral=rows" --integral=
    # An optional value is given with = only: after a space comes an input.
    expect "img.png plug.so sub two words.png" --integral ""
    expect "img.png plug.so sub two words.png" --progress ""
    expect "" --progress =
    # Numbers and I/N: nothing to offer (no file names either).
    expect "" --iters ""
    expect "" --sigma = ""
    expect "" --shard ""
    # Directories for directory options; files for list options and inputs.
    expect "sub" -o ""
    expect "sub" --output-dir = ""
    expect "sub" --relative-to ""
    expect "sub" --plugin-dir ""
    expect "img.png plug.so sub two words.png" --files-from ""
    expect "img.png plug.so sub two words.png" --manifest = ""
    expect "img.png plug.so sub two words.png" --iters 3 ""
    expect "two words.png" tw
    # A backend: a name, or a plugin (*.so) found through directories.
    expect "auto cpu cuda plug.so sub" --backend ""
    expect "cpu cuda" --backend c
    # After --, option names are file names.
    expect "" -- --ax
    expect "img.png" -- -o img
    # The values offered are ones the parser takes: each, after =, is no usage error. In
    # an empty directory, so only named values are offered.
    cd "$dir/empty" || exit 1
    for o in $table; do
        for v in $(candidates "$o" =); do
            "$gsmooth" "$o=$v" --help >/dev/null 2>"$dir/err" ||
                fail "[$helpers] completion offers $o $v, which gsmooth refuses: $(cat "$dir/err")"
        done
    done
    # --help's named values (--axis x|y|xy, --integral[=rows|2d]) are offered too; a
    # range (0..9) or a pattern (0,1,...) is not a name.
    printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z0-9-]*(\[=| )[a-z0-9]+(\|[a-z0-9.,]+)+' |
        while read -r spec; do
            o=${spec%%[[ ]*}
            values=$(candidates "$o" =)
            for v in $(printf '%s\n' "${spec#*[[ ]}" | sed 's/^=//' | tr '|' '\n' | grep -v '\.'); do
                case " $values " in *" $v "*) ;; *) echo "FAIL: [$helpers] --help gives $o $v; completion offers '$values'" ;; esac
            done
        done >"$dir/help-values"
    if [ -s "$dir/help-values" ]; then
        cat "$dir/help-values"
        failures=$((failures + 1))
    fi
}

run_cases
bash_completion=/usr/share/bash-completion/bash_completion
if [ -r "$bash_completion" ]; then
    helpers=$bash_completion
    run_cases
    echo "ran every case with compgen alone and with $bash_completion"
else
    echo "note: $bash_completion not found: the cases ran with compgen alone"
fi
finish "bash completion"
