#!/bin/sh
# setup.sh: installs what gsmooth needs, builds it into build/, smooths a sample.
#
# For Debian/Ubuntu, as root; the sample is a bundled one.
set -eu
cd "$(dirname "$0")/.."
# Build tools and libraries (libjpeg-dev is libjpeg-turbo on Debian and Ubuntu; libisal-dev
# is ISA-L, for the fast PNG reader and writer; libtiff-dev is libtiff 4.5 or later, for
# TIFF; libgif-dev is giflib, for GIF; libwebp-dev is libwebp, for WebP; libcfitsio-dev is
# cfitsio, for FITS; libstb-dev gives
# the stb headers, compiled in);
# python3-numpy and python3-pil serve the golden cross-check and the Python module,
# python3-tifffile the TIFF tests (an independent TIFF writer), python3-astropy the FITS
# tests (an independent FITS writer), libtiff-tools (tiffcp,
# tiffcrop) the external corpora's TIFF reference for codecs tifffile leaves to
# imagecodecs, python3-opencv the corpora's reference for PNG (libpng) and a second one for
# JPEG and BMP, and with libvips-tools writes PNGs as those programs do for the PNG
# conformance test; python3-pytest the Python module's tests, python3-dask, -distributed
# and -zarr those of gsmooth.dask; zsh and bash-completion the
# completion tests (zsh's is skipped without it; bash's also runs without bash-completion).
packages="cmake ninja-build gcc pkg-config libpng-dev libjpeg-dev libisal-dev libtiff-dev libtiff-tools libgif-dev libwebp-dev libcfitsio-dev zlib1g-dev libstb-dev check python3-numpy python3-pil python3-tifffile python3-astropy python3-pytest python3-dask python3-distributed python3-zarr python3-opencv libvips-tools groff-base lowdown zsh bash-completion"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    # Wait for another apt (a fresh cloud machine's own updates) instead of failing at once.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq $missing >/dev/null
fi
# The CUDA plugin is built when nvcc is found (on PATH, or where the toolkit installs it).
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
build/bin/gsmooth --iters 3 samples/landscape.png build/landscape-smoothed.png
echo "gsmooth built: build/bin/gsmooth; sample smoothed into build/landscape-smoothed.png"
# The Python module: the system python3 finds python/gsmooth through a .pth file in its
# site directory, and the module finds build/lib/libgsmooth.so beside the source tree.
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
mkdir -p "$site"
# One .pth for the system python3: a second clone's set-up takes it over, and says so.
previous=$(cat "$site/gsmooth-source.pth" 2>/dev/null || true)
if [ -n "$previous" ] && [ "$previous" != "$(pwd)/python" ]; then
    echo "note: python3's 'import gsmooth' now means this clone ($(pwd)), not $previous"
fi
echo "$(pwd)/python" > "$site/gsmooth-source.pth"
/usr/bin/python3 -c 'import gsmooth, numpy as np; a = gsmooth.smooth(np.arange(12, dtype=np.uint8).reshape(3, 4)); print("python3: import gsmooth", gsmooth.__version__, "works")'
