# scale_common.sh: shared by the scale tests (sourced, bash).
#
# PASS/FAIL/skip lines, the python3 that has numpy, and a quiet apt-get install that starts
# no services.
failures=0
skip() { echo "skipped: $*"; exit 77; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The first python3 with numpy (Debian's /usr/bin/python3 before any other on PATH).
find_python() {
    local p
    for p in /usr/bin/python3 python3; do
        command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null && { echo "$p"; return 0; }
    done
    return 1
}

# apt-get install quietly, as root; apt-get update only when the install fails without it.
# RUNLEVEL=1: package scripts must not start the system's services (munge, slurm).
apt_install() {
    local log rc
    [ "$(id -u)" -eq 0 ] || return 1
    command -v apt-get >/dev/null 2>&1 || return 1
    log=$(mktemp)
    export DEBIAN_FRONTEND=noninteractive
    if ! RUNLEVEL=1 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "$@" >"$log" 2>&1; then
        apt-get update -qq -o DPkg::Lock::Timeout=300 >>"$log" 2>&1
        RUNLEVEL=1 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "$@" >>"$log" 2>&1
    fi
    rc=$?
    [ $rc -eq 0 ] || tail -n 5 "$log" | sed 's/^/  apt: /'
    rm -f "$log"
    return $rc
}
