"""setup.py: the CMake step of `pip install .`: builds libgsmooth.so and the backend plugins, and puts them in the package (gsmooth/_lib, plugins in _lib/gsmooth/plugins)."""
import glob
import os
import shlex
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

SOURCE = os.path.dirname(os.path.abspath(__file__))


def header_version():
    """The version gsmooth.h declares (GSMOOTH_VERSION_MAJOR/MINOR/PATCH), the one source."""
    parts = {}
    with open(os.path.join(SOURCE, "include", "gsmooth", "gsmooth.h")) as header:
        for line in header:
            words = line.split()
            if len(words) == 3 and words[0] == "#define" and words[1].startswith("GSMOOTH_VERSION_"):
                parts[words[1][len("GSMOOTH_VERSION_"):]] = words[2]
    return "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp), "cmake")
        # lib/ whatever the platform's GNUInstallDirs says (lib64 on Fedora): copied from there
        configure = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DGSMOOTH_TESTS=OFF",
                     "-DCMAKE_INSTALL_LIBDIR=lib"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        # e.g. GSMOOTH_CMAKE_ARGS=-DGSMOOTH_CUDA=OFF for a build without the CUDA plugin
        configure += shlex.split(os.environ.get("GSMOOTH_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "--target", "gsmooth_shared"])
        plugins = os.path.join(build, "lib", "gsmooth", "plugins")
        if os.path.exists(os.path.join(build, "plugins", "cuda")):
            subprocess.check_call(["cmake", "--build", build, "--target", "gsmooth_cuda"])
        dest = os.path.join(self.build_lib, "gsmooth", "_lib")
        os.makedirs(os.path.join(dest, "gsmooth", "plugins"), exist_ok=True)
        real = os.path.realpath(os.path.join(build, "lib", "libgsmooth.so"))
        shutil.copy(real, os.path.join(dest, "libgsmooth.so"))
        for so in glob.glob(os.path.join(plugins, "*.so")):
            shutil.copy(so, os.path.join(dest, "gsmooth", "plugins"))


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: tagged for this platform, not pure Python."""

    def has_ext_modules(self):
        return True


# setuptools' own build tree apart from CMake's build/
setup(version=header_version(), distclass=BinaryDistribution, cmdclass={"build_py": BuildWithCMake},
      options={"build": {"build_base": "build-pip"}})
