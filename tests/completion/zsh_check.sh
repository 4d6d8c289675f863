#!/bin/bash
# zsh_check.sh: gsmooth's zsh completion: valid zsh, the file the build installs, and what zsh completes with it.
#
# usage: zsh_check.sh GSMOOTH SOURCE_DIR BUILT_SCRIPT
# Exits 77 (skipped) without zsh. Completion runs in a real interactive zsh on a
# pseudo-terminal (zsh/zpty): compinit loads the script from $fpath, a TAB completes, and
# a wrapper around compadd records the matches. The option names it expects come from
# app/options.c's getopt entries, not from the generator.
set -u
command -v zsh >/dev/null 2>&1 || { echo "SKIP: zsh is not installed (scripts/setup.sh installs it)"; exit 77; }
# shellcheck source=tests/completion/common.sh
. "$(dirname "$0")/common.sh"

mkdir -p "$dir/fpath"
"$gsmooth" --completion zsh >"$dir/fpath/_gsmooth" 2>"$dir/err" || fail "gsmooth --completion zsh exited $?: $(cat "$dir/err")"
[ -s "$dir/err" ] && fail "gsmooth --completion zsh wrote to stderr: $(cat "$dir/err")"
zsh -n "$dir/fpath/_gsmooth" || fail "the script is not valid zsh"
cmp -s "$dir/fpath/_gsmooth" "$built" || fail "$built is not what gsmooth --completion zsh writes now"
head -n 1 "$dir/fpath/_gsmooth" | grep -qx '#compdef gsmooth' || fail "the script does not start with #compdef gsmooth"

# The shell under test: no rc files, the script found through $fpath, every match that
# reaches compadd appended to $dir/matches, and a line <end> when a completion is done.
cat >"$dir/init.zsh" <<EOF
PROMPT='' RPROMPT=''
fpath=('$dir/fpath' \$fpath)
autoload -Uz compinit && compinit -u -d '$dir/zcompdump'
compadd() {
    # A caller that collects matches itself (-O, -A, -D) adds none yet: pass it through.
    if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "\$@"; return; fi
    local -a __matches
    builtin compadd -O __matches "\$@"
    (( \$#__matches )) && print -rl -- \$__matches >>'$dir/matches'
    builtin compadd "\$@"
}
_gs_done() { print -r -- '<end>' >>'$dir/matches' }
comppostfuncs=(_gs_done)
zstyle ':completion:*' menu no
bindkey '^I' complete-word
EOF
cat >"$dir/drive.zsh" <<EOF
zmodload zsh/zpty || exit 3
rm -f '$dir/matches'
zpty gs zsh -f -i
zpty -w gs "source '$dir/init.zsh'"
zpty -w -n gs "\$1"\$'\t'
for i in {1..100}; do
    [[ -f '$dir/matches' ]] && grep -q '^<end>\$' '$dir/matches' && break
    sleep 0.1
done
zpty -d gs
[[ -f '$dir/matches' ]] && grep -q '^<end>\$' '$dir/matches' || { print -u2 "no completion ended"; exit 4; }
grep -v '^<end>\$' '$dir/matches'
exit 0
EOF

cd "$dir/tree" || exit 1
# candidates LINE: the sorted, distinct matches zsh offers at the end of LINE.
candidates() { zsh -f "$dir/drive.zsh" "$1" | LC_ALL=C sort -u | paste -sd' ' -; }
expect() {
    got=$(candidates "$2")
    [ "$got" = "$1" ] || fail "$2<TAB>: got '$got', want '$1'"
}

offered=$(candidates "gsmooth --")
for o in $table; do
    case " $offered " in *" $o "*) ;; *) fail "gsmooth --<TAB> does not offer $o" ;; esac
done
expect "--axis" "gsmooth --ax"
expect "x xy y" "gsmooth --axis "
expect "x xy y" "gsmooth --axis="
expect "16 8 float keep" "gsmooth --depth "
expect "2d rows" "gsmooth --integral="
expect "bash zsh" "gsmooth --completion "
expect "auto cpu cuda plug.so sub" "gsmooth --backend "
# An optional value only after =: after a space comes an input.
expect "img.png plug.so sub two\\ words.png" "gsmooth --integral "
expect "sub" "gsmooth -o "
expect "sub" "gsmooth --relative-to="
expect "img.png plug.so sub two\\ words.png" "gsmooth --files-from "
expect "" "gsmooth --iters "

finish "zsh completion"
