"""`pip install --no-build-isolation .`: installs the Python package hbmsim
(python/hbmsim) with its compiled module hbmsim._native.

The module is built by the project's own CMake (python/CMakeLists.txt), in
the same build directory as the CLI (build/, or $HBMSIM_BUILD_DIR), so an
install after `bash scripts/build.sh` only links the module: the compiled
libraries are the ones already built. Debian's pip, setuptools and wheel are
enough (no other registry is needed); on Debian 12 a system-wide install
needs pip's --break-system-packages (PEP 668), see README.md.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def cmake_build_dir():
    return os.environ.get("HBMSIM_BUILD_DIR", os.path.join(ROOT, "build"))


class BuildWithCMake(build_py):
    """build_py copies the .py files; then CMake builds hbmsim._native for
    the interpreter running pip, and the .so is copied beside them."""

    def run(self):
        super().run()
        build_dir = cmake_build_dir()
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *generator,
                                   "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("HBMSIM_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "hbmsim_python", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "hbmsim", "_native*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one _native*.so in {build_dir}/python/hbmsim, found {built}: "
                     "was the build configured with HBMSIM_PYTHON=ON (pybind11-dev, python3-dev)?")
        target = os.path.join(self.build_lib, "hbmsim")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(built[0], target)


class BinaryDistribution(Distribution):
    """The package holds a compiled module: a platform wheel, not a pure one."""

    def has_ext_modules(self):
        return True


setup(
    name="hbmsim",
    version="0.1.0",
    description="Replays device-memory allocation recordings through models of GPU/TPU allocators",
    long_description=open(os.path.join(ROOT, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    package_dir={"": "python"},
    packages=["hbmsim"],
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    # setuptools' own scratch space, inside the CMake build tree (ignored by git).
    options={"build": {"build_base": os.path.join("build", "setuptools")}, "egg_info": {"egg_base": "build"}},
    # numpy/pandas (placements) and distributed (hbmsim.dask) are optional
    # imports, taken from Debian's packages when present.
    extras_require={"frames": ["numpy", "pandas"], "dask": ["distributed"]},
)
