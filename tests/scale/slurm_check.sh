#!/bin/bash
# slurm_check.sh: gsmooth as a Slurm array on a private one-node Slurm.
#
# A 4-task array (--shard, --files-from, --manifest), and a SIGKILLed batch resumed with
# --skip-existing; outputs equal a one-process run byte for byte.
# usage: slurm_check.sh GSMOOTH_BINARY   (root; installs Debian slurm-wlm and munge with apt-get if missing; exit 77 = skipped)
# Starts munged, slurmctld and slurmd of its own (private socket, loopback ports, state in a
# temporary directory) and stops them by PID on exit; the system's services are not touched.
set -u
[ $# -eq 1 ] || { echo "usage: $0 GSMOOTH_BINARY" >&2; exit 2; }
gs=$(readlink -f "$1")
[ -x "$gs" ] || { echo "FAIL: $1 is not an executable file"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$PATH:/usr/sbin:/sbin"
start_s=$(date +%s)
. "$(dirname "$0")/scale_common.sh"

# ---------------------------------------------------------------- packages
[ "$(id -u)" -eq 0 ] || skip "needs root (runs munged, slurmctld and slurmd)"
pkgs=()
for c in slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v $c >/dev/null 2>&1 || { pkgs+=(slurm-wlm); break; }
done
for c in munged mungekey munge unmunge; do
    command -v $c >/dev/null 2>&1 || { pkgs+=(munge); break; }
done
find_python >/dev/null || pkgs+=(python3 python3-numpy)
if [ ${#pkgs[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || skip "no apt-get to install ${pkgs[*]}"
    apt_install "${pkgs[@]}" || skip "apt-get could not install ${pkgs[*]}"
fi
for c in slurmctld slurmd sbatch squeue sinfo scontrol scancel munged mungekey; do
    command -v $c >/dev/null 2>&1 || skip "$c missing after installing ${pkgs[*]:-nothing}"
done
py=$(find_python) || skip "no python3 with numpy"
echo "note: $(slurmctld -V 2>&1), munge $(munged -V 2>&1 | awk '{print $2; exit}'), $($py -V 2>&1)"

# ---------------------------------------------------------------- private work dir and clean-up
w=$(mktemp -d /tmp/gs-slurm.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
chmod 755 "$w" # munged wants the socket's directories searchable by all
munged_pid="" ctld_pid="" slurmd_pid="" job_id="" bg_pid="" watch_pid=""
stop_pid() { # TERM, up to 5 s, then KILL; only our own children
    local pid=$1 i
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
cleanup() {
    [ -n "$watch_pid" ] && { kill -KILL "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null; }
    [ -n "$bg_pid" ] && { kill -KILL "$bg_pid" 2>/dev/null; wait "$bg_pid" 2>/dev/null; }
    [ -n "$job_id" ] && [ -n "$ctld_pid" ] && scancel "$job_id" >/dev/null 2>&1
    stop_pid "$slurmd_pid"
    stop_pid "$ctld_pid"
    stop_pid "$munged_pid"
    rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
show_logs() {
    local f
    for f in "$w"/log/*; do
        [ -s "$f" ] || continue
        echo "---- $(basename "$f") (last lines)"
        tail -n 15 "$f"
    done
}
die() { echo "FAIL: $*"; show_logs; echo "RESULT: FAIL ($(($(date +%s) - start_s)) s)"; exit 1; }
mkdir -p "$w"/munge "$w"/state "$w"/spool "$w"/run "$w"/log "$w"/in/a "$w"/in/b "$w"/ref "$w"/out "$w"/man \
    "$w"/pre/in "$w"/pre/ref "$w"/pre/out || die "mkdir"

# ---------------------------------------------------------------- munge
sock="$w/munge/munge.socket.2"
mungekey -c -k "$w/munge/munge.key" >/dev/null 2>&1 ||
    { dd if=/dev/urandom of="$w/munge/munge.key" bs=1024 count=1 2>/dev/null; }
chmod 600 "$w/munge/munge.key"
munged -F --force --socket="$sock" --key-file="$w/munge/munge.key" --pid-file="$w/munge/munged.pid" \
    --log-file="$w/log/munged.log" --seed-file="$w/munge/munged.seed" >"$w/log/munged.out" 2>&1 &
munged_pid=$!
for i in $(seq 100); do [ -S "$sock" ] && break; kill -0 $munged_pid 2>/dev/null || break; sleep 0.1; done
[ -S "$sock" ] || die "munged did not create $sock"
munge -n -S "$sock" | unmunge -S "$sock" >/dev/null 2>&1 || die "munge credential round trip on $sock"

# ---------------------------------------------------------------- slurm.conf (loopback ports, private dirs)
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
    local p i
    for i in $(seq 100); do
        p=$((20000 + RANDOM % 12000))
        [ "$p" != "${1:-}" ] && port_free "$p" && { echo "$p"; return 0; }
    done
    return 1
}
cport=$(pick_port) || die "no free port"
dport=$(pick_port "$cport") || die "no free port"
host=$(hostname -s)
cpus=$(nproc)
export SLURM_CONF="$w/slurm.conf"
for v in $(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SINFO|SACCT|SCONTROL)_' | grep -vx SLURM_CONF); do unset "$v"; done
: >"$w/plugstack.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=gstest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/run/slurmctld.pid
SlurmdPidFile=$w/run/slurmd.pid
SlurmctldLogFile=$w/log/slurmctld.log
SlurmdLogFile=$w/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$w/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
NodeName=gsnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=512 State=UNKNOWN
PartitionName=gsq Nodes=gsnode Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -f "$SLURM_CONF" >"$w/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -N gsnode -f "$SLURM_CONF" >"$w/log/slurmd.out" 2>&1 &
slurmd_pid=$!
# If this script is SIGKILLed (a ctest timeout), no EXIT trap runs: a detached watchdog then stops
# the three daemons (by PID, after checking their names) and removes the work dir.
(
    trap '' INT TERM HUP
    while kill -0 $$ 2>/dev/null; do sleep 1; done
    for p in "$slurmd_pid:slurmd" "$ctld_pid:slurmctld" "$munged_pid:munged"; do
        [ "$(cat /proc/${p%%:*}/comm 2>/dev/null)" = "${p#*:}" ] && kill -KILL "${p%%:*}"
    done
    rm -rf "$w"
) </dev/null >/dev/null 2>&1 &
watch_pid=$!
deadline=$(($(date +%s) + 40))
state=""
while [ "$(date +%s)" -lt $deadline ]; do
    kill -0 $ctld_pid 2>/dev/null || die "slurmctld exited"
    kill -0 $slurmd_pid 2>/dev/null || die "slurmd exited"
    state=$(sinfo -h -N -n gsnode -o %T 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || die "node gsnode not idle after 40 s (state '$state'; $(sinfo -h -R 2>&1))"
pass "slurm up: node idle after $(($(date +%s) - start_s)) s (ports $cport/$dport, $cpus CPUs)"

# ---------------------------------------------------------------- images
cat >"$w/gen.py" <<'EOF'
"""gen.py MODE ...: test inputs. small DIR_A DIR_B LIST META: ~40 small 8/16-bit PNG/PGM, 2 larger,
one garbage x.png; big DIR N SIZE LIST: N SIZExSIZE inputs for the kill test."""
import json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[-1])
import pngwrite

def image(w, h, bits, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = (np.sin(x * 0.07 + seed) + np.cos(y * 0.05)) * 0.25 + 0.5
    a = base + rng.normal(0, 0.15, (h, w))
    m = (1 << bits) - 1
    return np.clip(np.rint(a * m), 0, m).astype(np.uint16 if bits == 16 else np.uint8)

def save(path, a, bits, level=6):
    if path.endswith(".pgm"):
        h, w = a.shape
        data = a.astype(">u2").tobytes() if bits == 16 else a.tobytes()
        with open(path, "wb") as f:
            f.write(b"P5\n%d %d\n%d\n" % (w, h, (1 << bits) - 1) + data)
    else:
        pngwrite.write(path, a, kind="gray", bits=bits, level=level)

mode = sys.argv[1]
if mode == "small":
    da, db, lst, meta = sys.argv[2:6]
    sizes = [(3, 1), (1, 3), (2, 2), (4, 1), (5, 4), (7, 3), (8, 8), (13, 5), (16, 9), (31, 2), (2, 31),
             (33, 17), (40, 40), (64, 1), (1, 64), (63, 65), (100, 7), (99, 100), (128, 128), (150, 40),
             (200, 3), (201, 150), (250, 250), (255, 1), (256, 17), (300, 200), (299, 199), (17, 300),
             (120, 80), (80, 120), (45, 45), (9, 250), (300, 1), (1, 200), (77, 33), (64, 64), (3, 3),
             (123, 45), (211, 97), (10, 10), (1000, 700), (800, 1100)]
    kinds = [("png", 8), ("png", 16), ("pgm", 8), ("pgm", 16)]
    paths, info = [], {}
    for i, (w, h) in enumerate(sizes):
        ext, bits = kinds[i % 4]
        name = ("img %02d.%s" if i == 6 else "img%02d.%s") % (i, ext)  # one name with a space
        path = os.path.join(da if i % 2 else db, name)
        save(path, image(w, h, bits, i), bits)
        paths.append(path)
        info[path] = {"width": w, "height": h, "bits": bits}
    bad = os.path.join(da, "x.png")
    with open(bad, "wb") as f:
        f.write(np.random.default_rng(7).integers(0, 256, 3000, dtype=np.uint8).tobytes())
    paths.insert(17, bad)
    info[bad] = None
    with open(lst, "w") as f:
        for i, p in enumerate(paths):
            f.write(p + "\n")
            if i == 25:
                f.write("\n")  # an empty line: skipped, not an input
    with open(meta, "w") as f:
        json.dump({"inputs": paths, "info": info}, f)
elif mode == "big":
    d, n, size, lst = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    with open(lst, "w") as f:
        for i in range(n):
            ext = "png" if i % 2 else "pgm"
            path = os.path.join(d, "p%02d.%s" % (i, ext))
            save(path, image(size, size, 8, 100 + i), 8, level=1)
            f.write(path + "\n")
EOF
"$py" "$w/gen.py" small "$w/in/a" "$w/in/b" "$w/list.txt" "$w/meta.json" "$here/../../scripts" ||
    die "generating the test images"
n_inputs=$(grep -c . "$w/list.txt")

# ---------------------------------------------------------------- reference: one process
timeout 120 "$gs" --quiet -o "$w/ref" --files-from "$w/list.txt" 2>"$w/log/ref.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'x\.png' "$w/log/ref.err"; then
    pass "reference run: exit 1, x.png reported ($(grep -c . "$w/log/ref.err") stderr line(s))"
else
    fail "reference run: exit $rc, want 1 with x.png reported; stderr: $(head -c 600 "$w/log/ref.err")"
fi

# ---------------------------------------------------------------- job array: 4 shards
cat >"$w/task.sh" <<EOF
#!/bin/bash
echo "\$SLURM_ARRAY_TASK_COUNT" >"$w/man/count-\$SLURM_ARRAY_TASK_ID"
"$gs" --quiet --progress=0.05 -o "$w/out" --shard "\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT" \\
    --files-from "$w/list.txt" --manifest "$w/man/m-\$SLURM_ARRAY_TASK_ID.jsonl"
rc=\$?
echo \$rc >"$w/man/rc-\$SLURM_ARRAY_TASK_ID"
exit \$rc
EOF
chmod +x "$w/task.sh"
t_sub=$(date +%s)
job_id=$(sbatch --parsable --array=0-3 -J gsmooth-shards -N 1 -n 1 -c 1 -D "$w" -o "$w/log/task-%A_%a.out" \
    "$w/task.sh" 2>"$w/log/sbatch.err") || die "sbatch: $(cat "$w/log/sbatch.err")"
job_id=${job_id%%;*}
deadline=$(($(date +%s) + 120))
done_ok=0
while [ "$(date +%s)" -lt $deadline ]; do
    q=$(squeue -h -r -j "$job_id" -t PD,R,CG,CF,S,RQ,RS,SO -o '%i %T' 2>&1) || die "squeue: $q"
    [ -z "$q" ] && { done_ok=1; break; }
    sleep 0.5
done
[ $done_ok -eq 1 ] || die "array job $job_id not finished in 120 s: $q"
pass "array job $job_id (4 tasks) finished in $(($(date +%s) - t_sub)) s"
# Exit codes as Slurm recorded them (the job record lives MinJobAge seconds; no accounting needed).
scontrol -o show job "$job_id" 2>/dev/null | sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z]*\) .*ExitCode=\([0-9:]*\).*/\1 \2 \3/p' \
    >"$w/man/slurm-exit" || true
for i in 0 1 2 3; do [ -s "$w/log/task-${job_id}_$i.out" ] && sed "s/^/  task $i: /" "$w/log/task-${job_id}_$i.out"; done

cat >"$w/check_array.py" <<'EOF'
import filecmp, json, os, re, sys
w = sys.argv[1]
meta = json.load(open(os.path.join(w, "meta.json")))
inputs, info = meta["inputs"], meta["info"]
N = 4
bad = [p for p in inputs if info[p] is None]
fails = 0
def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    fails += not ok
KEYS = {"input", "output", "status", "error", "width", "height", "bits", "backend", "ms"}
records, per_task = [], {}
for t in range(N):
    path = os.path.join(w, "man", "m-%d.jsonl" % t)
    if not os.path.exists(path):
        check(False, "manifest of task %d exists" % t)
        continue
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    whole = text.endswith("\n") or text == ""
    parsed = []
    for ln in lines[:-1] if whole else lines:
        try:
            parsed.append(json.loads(ln))
        except ValueError:
            check(False, "task %d manifest line is JSON: %r" % (t, ln[:200]))
    check(whole, "task %d manifest ends with a whole line" % t)
    missing = [sorted(KEYS - set(r)) for r in parsed if KEYS - set(r)]
    check(not missing, "task %d manifest lines have all keys%s" % (t, " (missing %s)" % missing[0] if missing else ""))
    per_task[t] = parsed
    records += parsed
for t, recs in per_task.items():
    got = sorted(r.get("input") for r in recs)
    want = sorted(p for j, p in enumerate(inputs) if j % N == t)
    check(got == want, "task %d handled exactly positions j %% %d == %d (%d inputs)%s" % (
        t, N, t, len(want), "" if got == want else ": got %s want %s" % (got, want)))
seen = [r.get("input") for r in records]
dups = sorted({p for p in seen if seen.count(p) > 1})
check(not dups, "each input handled once across the tasks%s" % (": duplicates %s" % dups if dups else ""))
check(set(seen) == set(inputs) and len(seen) == len(inputs),
      "union of manifest inputs == the list (%d manifest lines, %d inputs)" % (len(seen), len(inputs)))
ref, out = os.path.join(w, "ref"), os.path.join(w, "out")
good = [p for p in inputs if info[p] is not None]
bad_status, bad_dims, bad_out, differ = [], [], [], []
for r in records:
    p = r.get("input")
    if p not in info:
        continue
    if info[p] is None:
        check(r.get("status") == "failed" and isinstance(r.get("error"), str) and r["error"].strip() != "",
              "bad input %s: status failed with an error (%s, %r)" % (os.path.basename(p), r.get("status"), r.get("error")))
        continue
    if r.get("status") != "ok" or r.get("error") is not None:
        bad_status.append((os.path.basename(p), r.get("status"), r.get("error")))
    e = info[p]
    if (r.get("width"), r.get("height"), r.get("bits")) != (e["width"], e["height"], e["bits"]):
        bad_dims.append((os.path.basename(p), r.get("width"), r.get("height"), r.get("bits"), e))
    o = r.get("output")
    if not isinstance(o, str) or os.path.basename(o) != os.path.basename(p) or \
            os.path.realpath(os.path.dirname(o) or ".") != os.path.realpath(out):
        bad_out.append((os.path.basename(p), o))
    if not (isinstance(r.get("backend"), str) and r["backend"]) or not isinstance(r.get("ms"), (int, float)) or r["ms"] < 0:
        bad_status.append((os.path.basename(p), "backend/ms", r.get("backend"), r.get("ms")))
check(not bad_status, "good inputs: status ok, error null, backend and ms set%s" % (": %s" % bad_status[:3] if bad_status else ""))
check(not bad_dims, "good inputs: width/height/bits as generated%s" % (": %s" % bad_dims[:3] if bad_dims else ""))
check(not bad_out, "good inputs: output is OUT/<input basename>%s" % (": %s" % bad_out[:3] if bad_out else ""))
for p in good:
    b = os.path.basename(p)
    if not (os.path.isfile(os.path.join(out, b)) and os.path.isfile(os.path.join(ref, b))
            and filecmp.cmp(os.path.join(out, b), os.path.join(ref, b), shallow=False)):
        differ.append(b)
check(not differ, "all %d array outputs byte-identical to the one-process run%s" % (len(good), ": %s" % differ[:5] if differ else ""))
want_names = sorted(os.path.basename(p) for p in good)
check(sorted(os.listdir(out)) == want_names, "array output dir holds exactly the %d good outputs (extra: %s)" % (
    len(good), sorted(set(os.listdir(out)) - set(want_names))))
check(sorted(os.listdir(ref)) == want_names, "reference dir holds exactly the %d good outputs (extra: %s)" % (
    len(good), sorted(set(os.listdir(ref)) - set(want_names))))
bad_tasks = {j % N for j, p in enumerate(inputs) if info[p] is None}
for t in range(N):
    rc_path = os.path.join(w, "man", "rc-%d" % t)
    rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "missing"
    want = "1" if t in bad_tasks else "0"
    check(rc == want, "task %d: gsmooth exit %s (want %s)" % (t, rc, want))
    cnt_path = os.path.join(w, "man", "count-%d" % t)
    cnt = open(cnt_path).read().strip() if os.path.exists(cnt_path) else "missing"
    check(cnt == str(N), "task %d: SLURM_ARRAY_TASK_COUNT=%s" % (t, cnt))
# The task logs (Slurm's -o files, no terminal): --progress's plain lines despite --quiet,
# the last one counting every file of the task's share.
job_id = sys.argv[2]
for t in range(N):
    log_path = os.path.join(w, "log", "task-%s_%d.out" % (job_id, t))
    log = open(log_path).read() if os.path.exists(log_path) else ""
    lines = re.findall(r"^gsmooth: progress: (\d+)/(\d+) files, (\d+) failed, ", log, re.M)
    share = len(inputs[t::N])
    fail_share = len([p for p in inputs[t::N] if info[p] is None])
    last = tuple(map(int, lines[-1])) if lines else None
    check(last == (share, share, fail_share),
          "task %d log: progress lines, the last %s (want %d/%d files, %d failed)" % (
              t, last, share, share, fail_share))
slurm = {}
for ln in open(os.path.join(w, "man", "slurm-exit")):
    tid, state, code = ln.split()
    slurm[int(tid)] = (state, code)
if slurm:
    got = {t: slurm.get(t) for t in range(N)}
    want = {t: ("FAILED", "1:0") if t in bad_tasks else ("COMPLETED", "0:0") for t in range(N)}
    check(got == want, "slurm job states/exit codes: %s" % got)
else:
    print("note: scontrol show job gave no task records; exit codes checked from the tasks' own files")
sys.exit(1 if fails else 0)
EOF
"$py" "$w/check_array.py" "$w" "$job_id" || failures=$((failures + 1))

# ---------------------------------------------------------------- preemption: SIGKILL, then --skip-existing
NB=30
"$py" "$w/gen.py" big "$w/pre/in" $NB 1000 "$w/pre/list.txt" "$here/../../scripts" || die "generating the kill-test images"
# Calibrate --iters so one file takes about 0.25 s on one thread (a whole run: about 7 s).
first=$(head -n 1 "$w/pre/list.txt")
ms=1000000
for i in 1 2; do # the faster of two runs: less sensitive to other load on the machine
    t1=$(date +%s%N)
    "$gs" --quiet --backend cpu --threads 1 --iters 1000 "$first" "$w/pre/cal.pgm" || die "calibration run"
    t=$((($(date +%s%N) - t1) / 1000000))
    [ $t -lt $ms ] && ms=$t
done
[ $ms -ge 1 ] || ms=1
iters=$((1000 * 250 / ms))
[ $iters -lt 100 ] && iters=100
[ $iters -gt 100000 ] && iters=100000
echo "note: --iters 1000 took $ms ms on 1000x1000; kill test uses --iters $iters"
opts=(--quiet --backend cpu --iters "$iters")
t1=$(date +%s%N)
timeout 120 "$gs" "${opts[@]}" --jobs 2 --threads 1 -o "$w/pre/ref" --files-from "$w/pre/list.txt" ||
    die "kill-test reference run failed"
echo "note: kill-test reference (2 jobs) took $((($(date +%s%N) - t1) / 1000000)) ms"
m1="$w/pre/m1.jsonl"
"$gs" "${opts[@]}" --jobs 1 --threads 1 -o "$w/pre/out" --files-from "$w/pre/list.txt" --manifest "$m1" &
bg_pid=$!
deadline=$(($(date +%s) + 60))
lines=0
while [ "$(date +%s)" -lt $deadline ] && kill -0 $bg_pid 2>/dev/null; do
    lines=$( (cat "$m1" 2>/dev/null || true) | wc -l)
    [ "$lines" -ge 3 ] && break
    sleep 0.02
done
kill -KILL $bg_pid 2>/dev/null
{ wait $bg_pid; rc=$?; } 2>/dev/null
bg_pid=""
lines=$( (cat "$m1" 2>/dev/null || true) | wc -l)
if [ $rc -eq 137 ] && [ "$lines" -ge 1 ] && [ "$lines" -lt $NB ]; then
    pass "batch SIGKILLed mid-run (exit $rc) after $lines of $NB manifest lines"
else
    die "kill test: exit $rc with $lines of $NB manifest lines (want SIGKILL between the first and the last)"
fi
ls -A "$w/pre/out" | sed 's/^/  after kill: /' | head -n 40 >"$w/log/after-kill.txt"

cat >"$w/check_pre.py" <<'EOF'
import filecmp, json, os, re, sys
stage, w = sys.argv[1], sys.argv[2]
pre = os.path.join(w, "pre")
inputs = [l.rstrip("\n") for l in open(os.path.join(pre, "list.txt")) if l.strip()]
names = {os.path.basename(p) for p in inputs}
out, ref = os.path.join(pre, "out"), os.path.join(pre, "ref")
TEMP = re.compile(r"^\.(.+)\.gsmooth-[A-Za-z0-9]{6}$")
fails = 0
def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    fails += not ok
def same(b):
    return filecmp.cmp(os.path.join(out, b), os.path.join(ref, b), shallow=False)
def read_manifest(path):
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    check(text == "" or text.endswith("\n"), "%s: only whole lines" % os.path.basename(path))
    recs = []
    for ln in text.split("\n")[:-1]:
        try:
            recs.append(json.loads(ln))
        except ValueError:
            check(False, "%s: line is JSON: %r" % (os.path.basename(path), ln[:200]))
    return recs
entries = os.listdir(out)
outputs = sorted(e for e in entries if e in names)
temps = sorted(e for e in entries if TEMP.match(e))
other = sorted(set(entries) - set(outputs) - set(temps))
check(not other, "%s: only output names and .NAME.gsmooth-XXXXXX temporaries in OUT%s" % (stage, (
    ": also %s (find -name '.*.gsmooth-??????' would not clean these up)" % other) if other else ""))
check(not [t for t in temps if t in names], "%s: no temporary file carries an output name" % stage)
check(not [t for t in temps if TEMP.match(t).group(1) not in names],
      "%s: every temporary names an output of this batch (%s)" % (stage, temps))
differ = [b for b in outputs if not same(b)]
check(not differ, "%s: all %d existing outputs byte-identical to the reference%s" % (stage, len(outputs), ": %s" % differ if differ else ""))
if stage == "killed":
    recs = read_manifest(os.path.join(pre, "m1.jsonl"))
    check(len(outputs) < len(inputs), "killed: outputs missing after the kill (%d of %d exist)" % (len(outputs), len(inputs)))
    ok_names = {os.path.basename(r.get("input", "")) for r in recs if r.get("status") == "ok"}
    check(ok_names <= set(outputs), "killed: every input the manifest says ok has its output (%d ok lines)" % len(ok_names))
    check(all(r.get("status") == "ok" for r in recs), "killed: manifest lines before the kill all ok")
    with open(os.path.join(pre, "existed.txt"), "w") as f:
        f.write("\n".join(outputs))
    print("note: after the kill %d outputs, %d manifest lines, temporaries: %s" % (len(outputs), len(recs), temps or "none"))
elif stage == "resumed":
    existed = set(open(os.path.join(pre, "existed.txt")).read().split("\n")) - {""}
    check(outputs == sorted(names), "resumed: all %d outputs exist (%d missing)" % (len(names), len(names) - len(outputs)))
    recs = read_manifest(os.path.join(pre, "m2.jsonl"))
    got = sorted(r.get("input") for r in recs)
    check(got == sorted(inputs), "resumed: manifest has exactly one line per input (%d lines)" % len(recs))
    wrong = [(os.path.basename(r.get("input", "")), r.get("status")) for r in recs
             if r.get("status") != ("skipped" if os.path.basename(r.get("input", "")) in existed else "ok")]
    check(not wrong, "resumed: skipped exactly the %d outputs that existed, ok for the other %d%s" % (
        len(existed), len(names) - len(existed), ": %s" % wrong[:5] if wrong else ""))
elif stage == "again":
    before = int(sys.argv[3])
    recs = read_manifest(os.path.join(pre, "m1.jsonl"))
    new = recs[before:]
    check(len(recs) == before + len(inputs), "again: manifest appended (%d lines before, %d after)" % (before, len(recs)))
    check(sorted(r.get("input") for r in new) == sorted(inputs) and all(r.get("status") == "skipped" for r in new),
          "again: every input skipped on a complete output dir")
elif stage == "cleaned":
    check(not temps, "cleaned: no temporaries left after find -delete")
    check(outputs == sorted(names), "cleaned: all %d outputs still there" % len(names))
sys.exit(1 if fails else 0)
EOF
"$py" "$w/check_pre.py" killed "$w" || failures=$((failures + 1))
# A stale temporary like one a SIGKILL leaves, for an output that is still missing.
missing=$(cd "$w/pre/in" && for f in *; do [ -e "$w/pre/out/$f" ] || { echo "$f"; break; }; done)
[ -n "$missing" ] && printf 'stale partial data' >"$w/pre/out/.$missing.gsmooth-Zq81xA"
t1=$(date +%s%N)
timeout 120 "$gs" "${opts[@]}" -o "$w/pre/out" --skip-existing --files-from "$w/pre/list.txt" --manifest "$w/pre/m2.jsonl" \
    2>"$w/log/resume.err"
rc=$?
[ $rc -eq 0 ] && pass "resume with --skip-existing: exit 0 ($((($(date +%s%N) - t1) / 1000000)) ms)" ||
    fail "resume with --skip-existing: exit $rc, want 0; stderr: $(head -c 600 "$w/log/resume.err")"
"$py" "$w/check_pre.py" resumed "$w" || failures=$((failures + 1))
before=$(wc -l <"$m1")
timeout 60 "$gs" "${opts[@]}" -o "$w/pre/out" --skip-existing --files-from "$w/pre/list.txt" --manifest "$m1" \
    2>"$w/log/again.err"
rc=$?
[ $rc -eq 0 ] && pass "second --skip-existing run: exit 0" || fail "second --skip-existing run: exit $rc; $(head -c 600 "$w/log/again.err")"
"$py" "$w/check_pre.py" again "$w" "$before" || failures=$((failures + 1))
find "$w/pre/out" -name '.*.gsmooth-??????' -type f -delete
"$py" "$w/check_pre.py" cleaned "$w" || failures=$((failures + 1))

# SIGTERM (what Slurm sends first at a time limit or preemption): no temporary file may stay.
mkdir -p "$w/pre/outT"
mt="$w/pre/mT.jsonl"
"$gs" "${opts[@]}" --jobs 1 --threads 1 -o "$w/pre/outT" --files-from "$w/pre/list.txt" --manifest "$mt" &
bg_pid=$!
deadline=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt $deadline ] && kill -0 $bg_pid 2>/dev/null; do
    [ "$( (cat "$mt" 2>/dev/null || true) | wc -l)" -ge 2 ] && break
    sleep 0.02
done
sleep 0.1 # into the next file, whose temporary file exists by now
kill -TERM $bg_pid 2>/dev/null
{ wait $bg_pid; rc=$?; } 2>/dev/null
bg_pid=""
lines=$( (cat "$mt" 2>/dev/null || true) | wc -l)
left=$(ls -A "$w/pre/outT" | grep '^\.' | tr '\n' ' ')
bad=""
for f in "$w/pre/outT"/*; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$w/pre/ref/$(basename "$f")" || bad="$bad $(basename "$f")"
done
if [ $rc -ne 0 ] && [ "$lines" -lt $NB ] && [ -z "$left" ] && [ -z "$bad" ] && [ "$(tail -c 1 "$mt" | od -An -c | tr -d ' ')" = '\n' ]; then
    pass "SIGTERM mid-run: exit $rc after $lines of $NB lines, no temporary file left, $(ls "$w/pre/outT" | wc -l) outputs all equal the reference"
else
    fail "SIGTERM mid-run: exit $rc, $lines of $NB manifest lines, dot files left: '${left}', outputs differing: '${bad}'"
fi

total=$(($(date +%s) - start_s))
if [ $failures -eq 0 ]; then
    echo "RESULT: PASS ($total s)"
    exit 0
fi
show_logs
echo "RESULT: FAIL: $failures check group(s) failed ($total s)"
exit 1
