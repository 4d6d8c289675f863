# common.sh: what the completion checks share, sourced by bash_check.sh and zsh_check.sh: their arguments, a scratch directory, failures, the options of app/options.c.
# usage (sourced): . common.sh GSMOOTH SOURCE_DIR BUILT_SCRIPT
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
# shellcheck disable=SC2034 # used by the scripts that source this one
gsmooth=$(absolute "$1") src=$(absolute "$2") built=$(absolute "$3")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The long options of the parser's table, read from the source, not from the generator:
# every getopt entry {"NAME", no_argument|required_argument|optional_argument.
table=$(grep -oE '\{"[a-z][a-z0-9-]*", *(no|required|optional)_argument' "$src/app/options.c" |
    sed -E 's/^\{"([^"]*)".*/--\1/' | LC_ALL=C sort -u)
found=$(printf '%s\n' "$table" | grep -c .)
[ "$found" -ge 20 ] || fail "found only $found options in app/options.c"

# A tree to complete file names in: images, a plugin, a directory, a name with a space.
mkdir -p "$dir/tree/sub" "$dir/empty"
touch "$dir/tree/img.png" "$dir/tree/two words.png" "$dir/tree/plug.so"

# finish NAME: the verdict, and the exit status that carries it.
finish() {
    [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
    echo "ok: $1"
    exit 0
}
