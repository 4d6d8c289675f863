#!/bin/bash
# parallel_check.sh: the README's GNU parallel recipes, byte-identical to one process.
#
# 3 shards with --shard/--files-from/--manifest, and files fed in groups with -X, end
# byte-identical to one gsmooth process, each input done once.
# usage: parallel_check.sh GSMOOTH_BINARY   (installs Debian parallel with apt-get if missing, as root; exit 77 = skipped)
set -u
[ $# -eq 1 ] || { echo "usage: $0 GSMOOTH_BINARY" >&2; exit 2; }
gs=$(readlink -f "$1")
[ -x "$gs" ] || { echo "FAIL: $1 is not an executable file"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
start_s=$(date +%s)
. "$(dirname "$0")/scale_common.sh"

is_gnu_parallel() { command -v parallel >/dev/null 2>&1 && parallel --version 2>/dev/null | grep -q 'GNU parallel'; }
pkgs=()
is_gnu_parallel || pkgs+=(parallel)
find_python >/dev/null || pkgs+=(python3 python3-numpy)
if [ ${#pkgs[@]} -gt 0 ]; then
    apt_install "${pkgs[@]}" || skip "could not install ${pkgs[*]} (needs root and apt-get)"
fi
is_gnu_parallel || skip "GNU parallel not available after installing ${pkgs[*]:-nothing}"
py=$(find_python) || skip "no python3 with numpy"
echo "note: $(parallel --will-cite --version 2>/dev/null | head -n 1), $($py -V 2>&1)"

w=$(mktemp -d /tmp/gs-parallel.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/in/a" "$w/in/b" "$w/ref" "$w/out" "$w/out2" "$w/out3" "$w/out4" "$w/log"

cat >"$w/gen.py" <<'EOF'
"""gen.py DIR_A DIR_B LIST SCRIPTS: 40 small and 2 larger 8/16-bit PNG/PGM inputs (one name with a space)."""
import os, sys
import numpy as np
sys.path.insert(0, sys.argv[4])
import pngwrite

def image(w, h, bits, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = (np.sin(x * 0.07 + seed) + np.cos(y * 0.05)) * 0.25 + 0.5 + rng.normal(0, 0.15, (h, w))
    m = (1 << bits) - 1
    return np.clip(np.rint(a * m), 0, m).astype(np.uint16 if bits == 16 else np.uint8)

da, db, lst = sys.argv[1:4]
sizes = [(3, 1), (1, 3), (2, 2), (5, 4), (7, 3), (8, 8), (13, 5), (16, 9), (31, 2), (2, 31), (33, 17),
         (40, 40), (64, 1), (1, 64), (63, 65), (100, 7), (99, 100), (128, 128), (150, 40), (200, 3),
         (201, 150), (250, 250), (255, 1), (256, 17), (300, 200), (299, 199), (17, 300), (120, 80),
         (80, 120), (45, 45), (9, 250), (300, 1), (1, 200), (77, 33), (64, 64), (3, 3), (123, 45),
         (211, 97), (10, 10), (4, 1), (1000, 700), (800, 1100)]
kinds = [("png", 8), ("pgm", 16), ("pgm", 8), ("png", 16)]
with open(lst, "w") as f:
    for i, (w, h) in enumerate(sizes):
        ext, bits = kinds[i % 4]
        name = ("img %02d.%s" if i == 5 else "img%02d.%s") % (i, ext)
        path = os.path.join(da if i % 2 else db, name)
        a = image(w, h, bits, i)
        if ext == "pgm":
            with open(path, "wb") as g:
                g.write(b"P5\n%d %d\n%d\n" % (w, h, (1 << bits) - 1) + (a.astype(">u2").tobytes() if bits == 16 else a.tobytes()))
        else:
            pngwrite.write(path, a, kind="gray", bits=bits)
        f.write(path + "\n")
EOF
"$py" "$w/gen.py" "$w/in/a" "$w/in/b" "$w/list.txt" "$here/../../scripts" || { echo "FAIL: generating the test images"; exit 1; }

cat >"$w/check.py" <<'EOF'
"""check.py W OUTDIR NSHARDS: OUTDIR's outputs equal W/ref byte for byte and it holds nothing else but
m-*.jsonl; with NSHARDS > 0 the manifests m-0..m-(NSHARDS-1) hold each input once, at j % N == shard."""
import filecmp, json, os, sys
w, out, nshards = sys.argv[1], sys.argv[2], int(sys.argv[3])
tag = os.path.basename(out)
inputs = [l.rstrip("\n") for l in open(os.path.join(w, "list.txt")) if l.strip()]
names = sorted(os.path.basename(p) for p in inputs)
ref = os.path.join(w, "ref")
fails = 0
def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + "%s: %s" % (tag, what))
    fails += not ok
mans = ["m-%d.jsonl" % i for i in range(nshards)]
entries = sorted(os.listdir(out))
extra = sorted(set(entries) - set(names) - set(mans))
check(not extra, "holds only outputs%s%s" % (" and manifests" if nshards else "", ": extra %s" % extra if extra else ""))
missing = sorted(set(names) - set(entries))
check(not missing, "all %d outputs exist%s" % (len(names), ": missing %s" % missing[:5] if missing else ""))
differ = [b for b in names if b not in missing and
          not filecmp.cmp(os.path.join(out, b), os.path.join(ref, b), shallow=False)]
check(not differ, "outputs byte-identical to the one-process run%s" % (": %s" % differ[:5] if differ else ""))
if nshards:
    seen = []
    for t in range(nshards):
        path = os.path.join(out, mans[t])
        text = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if text is None:
            check(False, "%s exists" % mans[t])
            continue
        check(text == "" or text.endswith("\n"), "%s: whole lines" % mans[t])
        recs = []
        for ln in text.split("\n")[:-1]:
            try:
                recs.append(json.loads(ln))
            except ValueError:
                check(False, "%s: JSON line %r" % (mans[t], ln[:200]))
        got = sorted(r.get("input") for r in recs)
        want = sorted(p for j, p in enumerate(inputs) if j % nshards == t)
        check(got == want, "shard %d/%d did exactly positions j %% %d == %d (%d inputs)" % (t, nshards, nshards, t, len(want)))
        check(all(r.get("status") == "ok" and r.get("error") is None for r in recs), "shard %d: every status ok" % t)
        seen += got
    dups = sorted({p for p in seen if seen.count(p) > 1})
    check(not dups and sorted(seen) == sorted(inputs), "each of the %d inputs done exactly once%s" % (
        len(inputs), ": duplicates %s" % dups if dups else ""))
sys.exit(1 if fails else 0)
EOF

run_check() { "$py" "$w/check.py" "$w" "$1" "$2" || failures=$((failures + 1)); }

# Reference: one process.
timeout 120 "$gs" --quiet -o "$w/ref" --files-from "$w/list.txt" 2>"$w/log/ref.err"
rc=$?
[ $rc -eq 0 ] && pass "reference run (one process, --files-from): exit 0" ||
    fail "reference run: exit $rc; $(head -c 600 "$w/log/ref.err")"

# Recipe 1: 3 shards, each with its own manifest.
t1=$(date +%s%N)
timeout 120 parallel --will-cite -j 3 "$gs" --quiet -o "$w/out" --shard {}/3 --files-from "$w/list.txt" \
    --manifest "$w/out/m-{}.jsonl" ::: 0 1 2 2>"$w/log/p1.err"
rc=$?
[ $rc -eq 0 ] && pass "parallel -j 3 --shard {}/3: exit 0 ($((($(date +%s%N) - t1) / 1000000)) ms)" ||
    fail "parallel -j 3 --shard {}/3: exit $rc; $(head -c 600 "$w/log/p1.err")"
run_check "$w/out" 3

# Recipe 2: files fed to gsmooth in groups (-X: as many as fit, spread over the 2 job slots).
groups=$(parallel --will-cite --dry-run -X -j 2 "$gs" --quiet -o "$w/out2" :::: "$w/list.txt" | wc -l)
t1=$(date +%s%N)
timeout 120 parallel --will-cite -X -j 2 "$gs" --quiet -o "$w/out2" :::: "$w/list.txt" 2>"$w/log/p2.err"
rc=$?
[ $rc -eq 0 ] && pass "parallel -X -j 2 :::: LIST: exit 0, $groups gsmooth processes ($((($(date +%s%N) - t1) / 1000000)) ms)" ||
    fail "parallel -X -j 2 :::: LIST: exit $rc; $(head -c 600 "$w/log/p2.err")"
[ "$groups" -ge 2 ] || fail "parallel -X -j 2 made $groups command(s), want 2 or more"
run_check "$w/out2" 0

# The other ways to hand over the list: NUL-separated, and '-' for standard input.
tr '\n' '\0' <"$w/list.txt" >"$w/list0"
timeout 120 "$gs" --quiet -o "$w/out3" --files0-from "$w/list0" 2>"$w/log/p3.err"
rc=$?
[ $rc -eq 0 ] && pass "--files0-from: exit 0" || fail "--files0-from: exit $rc; $(head -c 600 "$w/log/p3.err")"
run_check "$w/out3" 0
timeout 120 "$gs" --quiet -o "$w/out4" --files-from - <"$w/list.txt" 2>"$w/log/p4.err"
rc=$?
[ $rc -eq 0 ] && pass "--files-from - (stdin): exit 0" || fail "--files-from -: exit $rc; $(head -c 600 "$w/log/p4.err")"
run_check "$w/out4" 0

total=$(($(date +%s) - start_s))
if [ $failures -eq 0 ]; then
    echo "RESULT: PASS ($total s)"
    exit 0
fi
echo "RESULT: FAIL: $failures check group(s) failed ($total s)"
exit 1
