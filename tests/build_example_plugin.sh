#!/bin/sh
# build_example_plugin.sh: builds examples/plugin against an install, as a third party would.
#
# gsmooth is installed into a scratch prefix, and examples/plugin built against that install
# only.
# usage: build_example_plugin.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" \
    cmake -S "$src/examples/plugin" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
test -f "$work/build/example_plugin.so"
echo "built $work/build/example_plugin.so against $work/prefix/include/gsmooth/gsmooth_plugin.h"
# The installed tree works on its own: the binary finds its plugins beside it.
"$work/prefix/bin/gsmooth" --list-backends | grep -q '^cpu .*available'
echo "installed gsmooth finds its CPU plugin"
