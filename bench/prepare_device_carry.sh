#!/bin/sh
# prepare_device_carry.sh: copy the libraries and headers the GPU machine lacks into .device/.
#
# Check, subunit, stb, Debian's libjpeg-turbo, ISA-L, libtiff and its codecs,
# python3-tifffile: carried with each device call.
# Run here, from the repository root, before a device call; bench/run_gpu.sh puts
# .device/lib on LD_LIBRARY_PATH there. Binaries built here (Debian 12, glibc 2.36) run
# on the GPU machine (Ubuntu 24.04, glibc 2.39), so only these libraries need to travel.
# The tree itself is about 36 MB of the 64 MiB a call may carry, so a build (the stripped
# binaries run_gpu.sh uses and lib/, about 45 MB) and .device (57 MB, 48 of them Python)
# travel best compressed, e.g. `tar -cJf .devcarry/carry.tar.xz build-carry .device` (23 MB;
# about 18 MB with `--exclude='.device/python/dask*' --exclude='.device/python/distributed*'
# --exclude='.device/python/tornado*'` where the call runs no Dask step), the call
# unpacking it first (`tar xJf .devcarry/carry.tar.xz`).
set -eu
dest=.device
mkdir -p "$dest/lib" "$dest/include"
libdir=/usr/lib/x86_64-linux-gnu
# libjpeg.so.62 (Debian's libjpeg-turbo): Ubuntu's is libjpeg.so.8, another soname.
# libtiff.so.6 with the codec libraries Ubuntu's image may lack (Debian's build links them).
# libcfitsio.so.10 with the libcurl-gnutls it links (Ubuntu names its own package apart), and
# the libraries of Debian's libcurl-gnutls that Ubuntu's image lacks or names apart (libssh2
# was missing there: every CLI run failed to load).
for pattern in 'libsubunit.so*' 'libstb.so*' 'libcheck*.so*' 'libjpeg.so.62*' 'libisal.so*' \
    'libtiff.so.6*' 'libgif.so.7*' 'libdeflate.so.0*' 'libLerc.so.4*' 'libjbig.so.0*' 'libwebp.so.7*' 'libsharpyuv.so.0*' \
    'libcfitsio.so.10*' 'libcurl-gnutls.so.4*' \
    'libssh2.so.1*' 'librtmp.so.1*' 'libldap-2.5.so.0*' 'liblber-2.5.so.0*' 'libsasl2.so.2*' \
    'libnghttp2.so.14*' 'libpsl.so.5*' 'libbrotlidec.so.1*' 'libbrotlicommon.so.1*' 'libidn2.so.0*' \
    'libunistring.so.2*'; do
    for f in $libdir/$pattern; do
        [ -e "$f" ] && cp -a "$f" "$dest/lib/"
    done
done
# Headers for a rebuild there, should the carried binaries fail to run.
for h in check.h check_stdint.h stb/stb_image.h stb/stb_image_write.h; do
    if [ -e "/usr/include/$h" ]; then
        mkdir -p "$dest/include/$(dirname "$h")"
        cp -a "/usr/include/$h" "$dest/include/$h"
    fi
done
for a in libcheck.a libcheck_pic.a libsubunit.a; do
    [ -e "$libdir/$a" ] && cp -a "$libdir/$a" "$dest/lib/"
done
# python3-tifffile (pure Python) for the TIFF test there; bench/run_gpu.sh puts it on PYTHONPATH.
if [ -d /usr/lib/python3/dist-packages/tifffile ]; then
    mkdir -p "$dest/python"
    cp -a /usr/lib/python3/dist-packages/tifffile "$dest/python/"
fi
# pytest for the Python module's tests there (pure Python, from PyPI into .device/python).
if [ ! -d "$dest/python/pytest" ]; then
    mkdir -p "$dest/python"
    python3 -m pip install -q --target "$dest/python" pytest
fi
# dask, distributed and dask-image for gsmooth.dask's tests and bench/dask_bench.py there
# (wheels for its Python 3.12; the image holds numpy, CuPy, SciPy and the rest they need).
if [ ! -d "$dest/python/dask" ]; then
    python3 -m pip install -q --target "$dest/python" --no-deps --only-binary=:all: \
        --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
        dask distributed tornado tblib zict locket partd dask-image
fi
du -sh "$dest"
# pkg-config files relative to themselves, so a CMake configure there finds them
# (bench/run_gpu.sh sets PKG_CONFIG_PATH=.device/pkgconfig).
mkdir -p "$dest/pkgconfig"
cat > "$dest/pkgconfig/check.pc" <<'PC'
prefix=${pcfiledir}/..
Name: Check
Description: unit tests for C (carried)
Version: 0.15.2
Cflags: -I${prefix}/include -pthread
Libs: -L${prefix}/lib -lcheck_pic -pthread -lrt -lm -lsubunit
PC
cat > "$dest/pkgconfig/stb.pc" <<'PC'
prefix=${pcfiledir}/..
Name: stb
Description: single-file image libraries (carried)
Version: 0.0
Cflags: -I${prefix}/include/stb
Libs: -L${prefix}/lib -lstb
PC
