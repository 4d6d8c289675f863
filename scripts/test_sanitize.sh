#!/bin/sh
# test_sanitize.sh: the whole ctest suite under AddressSanitizer and UBSan.
#
# Built in a build directory of its own; the CLI suites exec the sanitized gsmooth, so it is
# checked too.
set -eu
cd "$(dirname "$0")/.."
BUILD=${GS_SANITIZE_BUILD:-build-sanitize}

if [ ! -f "$BUILD/build.ninja" ]; then
    mkdir -p "$BUILD"
    cmake -S . -B "$BUILD" -G Ninja -DGSMOOTH_SANITIZE=ON -DGSMOOTH_CUDA=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD/configure.log" 2>&1 ||
        { cat "$BUILD/configure.log" >&2; exit 1; }
fi
cmake --build "$BUILD"

# Stop at the first report, with a stack; leaks count. Check must not fork: ASan and
# fork-per-test do not mix (Check forks every test, and ASan does not survive it). Children started by the tests inherit all three.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"
export CK_FORK=no
# one test a CPU (GS_TEST_JOBS overrides), as scripts/test.sh
ctest --test-dir "$BUILD" --output-on-failure --parallel "${GS_TEST_JOBS:-$(nproc)}" "$@"
