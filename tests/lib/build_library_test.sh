#!/bin/sh
# build_library_test.sh: installs gsmooth into a scratch prefix, builds test_library.c against it with `pkg-config gsmooth` (shared, then --static), and runs both on the goldens.
# usage: build_library_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# Both libraries define gsmooth_* and nothing else globally (sanitizer runtimes' __ names aside).
for lib in "$work/prefix/lib/libgsmooth.a" "$work/prefix/lib/libgsmooth.so"; do
    stray=$(nm -g --defined-only $( [ "${lib%.so}" != "$lib" ] && echo -D ) "$lib" |
        awk 'NF == 3 && $3 !~ /^(gsmooth_|__)/ { print $3 }' | head -5)
    [ -z "$stray" ] || { echo "FAIL: $lib defines other global symbols: $stray"; exit 1; }
done
cc="${CC:-cc} ${GS_TEST_CFLAGS:-}"
# shared: libgsmooth.so, found at run time through the rpath the caller chose
$cc -o "$work/test_library_shared" "$src/tests/lib/test_library.c" \
    $(pkg-config --cflags --libs gsmooth check) -Wl,-rpath,"$work/prefix/lib"
# static: libgsmooth.a and what it needs (Requires.private, Libs.private)
$cc -o "$work/test_library_static" "$src/tests/lib/test_library.c" \
    $(pkg-config --cflags gsmooth check) "$work/prefix/lib/libgsmooth.a" \
    $(pkg-config --static --libs-only-other --libs-only-l gsmooth | sed 's/-lgsmooth//') \
    $(pkg-config --libs check)
! ldd "$work/test_library_static" | grep -q libgsmooth
echo "built against $work/prefix/include/gsmooth/gsmooth.h: shared and static"
"$work/test_library_shared" "$src/tests/golden"
# A program linking libgsmooth.a has no libgsmooth.so to look beside: it finds the
# plugins the usual ways (here GSMOOTH_PLUGIN_PATH).
GSMOOTH_PLUGIN_PATH="$work/prefix/lib/gsmooth/plugins" "$work/test_library_static" "$src/tests/golden"
