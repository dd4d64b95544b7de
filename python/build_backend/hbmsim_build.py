"""The PEP 517 build backend of the Python package hbmsim, with no
dependencies of its own, so a plain `pip install .` works where pip can reach
no package index (build isolation would otherwise fetch setuptools).

It drives the project's CMake: configures a Release build of the CLI and the
pybind11 module hbmsim._native for the interpreter running pip (no tests, no
benchmarks), builds it, and packs a wheel of python/hbmsim/*.py, the module,
and the `hbmsim` binary as the wheel's script (pip puts it in the
environment's bin/). The wheel is written with the standard library alone
(zipfile, hashlib): its format is a zip with three metadata files.

Environment:
  HBMSIM_BUILD_DIR   an existing or new CMake build tree to use (default:
                     build/pip-<interpreter>, so each interpreter has its own
                     module and a second install only relinks)
  HBMSIM_BUILD_JOBS  parallel compile jobs (default: every core)
"""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "hbmsim"


def _version():
    with open(os.path.join(ROOT, "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


def _build_dir():
    default = os.path.join(ROOT, "build", f"pip-{sys.implementation.cache_tag}")
    return os.environ.get("HBMSIM_BUILD_DIR", default)


def _run(command):
    print("hbmsim build:", " ".join(command), file=sys.stderr, flush=True)
    subprocess.check_call(command, stdout=sys.stderr)


def _cmake_build():
    """Configures (once) and builds the module and the CLI; returns their paths."""
    build = _build_dir()
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
              "-DHBMSIM_BUILD_TESTS=OFF", "-DHBMSIM_BUILD_BENCH=OFF", "-DHBMSIM_PYTHON=ON",
              f"-DPython3_EXECUTABLE={sys.executable}"])
    jobs = os.environ.get("HBMSIM_BUILD_JOBS", str(os.cpu_count() or 1))
    _run(["cmake", "--build", build, "--target", "hbmsim_python", "hbmsim", "-j", jobs])
    package = os.path.join(build, "python", NAME)
    modules = [f for f in os.listdir(package) if f.startswith("_native") and f.endswith(".so")]
    if len(modules) != 1:
        sys.exit(f"hbmsim build: expected one _native*.so in {package}, found {modules}: is pybind11-dev "
                 f"installed and does CMake find the headers of {sys.executable}?")
    return os.path.join(package, modules[0]), os.path.join(build, "sim", "cli", NAME)


def _tag():
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}{sys.abiflags}-{platform}"


def _metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Replays device-memory allocation recordings through models of GPU/TPU allocators\n"
            "Requires-Python: >=3.9\nProvides-Extra: frames\nRequires-Dist: numpy; extra == \"frames\"\n"
            "Requires-Dist: pandas; extra == \"frames\"\nProvides-Extra: dask\n"
            "Requires-Dist: distributed; extra == \"dask\"\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


class _Wheel:
    """A wheel being written: every file's hash goes into RECORD."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, name, data, mode=0o644):
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{name},sha256={digest},{len(data)}")

    def close(self, record_name):
        self.records.append(f"{record_name},,")
        self.zip.writestr(zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0)),
                          "\n".join(self.records) + "\n")
        self.zip.close()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _wheel_file():
    return (f"Wheel-Version: 1.0\nGenerator: hbmsim_build {_version()}\n"
            f"Root-Is-Purelib: false\nTag: {_tag()}\n")


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The wheel's metadata without building: pip asks for it first, and
    without this hook it would build everything to learn the name."""
    dist_info = f"{NAME}-{_version()}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, dist_info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module, cli = _cmake_build()
    dist_info = f"{NAME}-{_version()}.dist-info"
    filename = f"{NAME}-{_version()}-{_tag()}.whl"
    partial = os.path.join(wheel_directory, f".{filename}.partial")
    wheel = _Wheel(partial)
    sources = os.path.join(ROOT, "python", NAME)
    for name in sorted(os.listdir(sources)):
        if name.endswith(".py"):
            wheel.add(f"{NAME}/{name}", _read(os.path.join(sources, name)))
    wheel.add(f"{NAME}/{os.path.basename(module)}", _read(module), 0o755)
    wheel.add(f"{NAME}-{_version()}.data/scripts/{NAME}", _read(cli), 0o755)
    wheel.add(f"{dist_info}/METADATA", _metadata().encode())
    wheel.add(f"{dist_info}/WHEEL", _wheel_file().encode())
    wheel.close(f"{dist_info}/RECORD")
    os.replace(partial, os.path.join(wheel_directory, filename))  # complete, or not there at all
    return filename


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the repository as NAME-VERSION.tar.gz (needs git)."""
    base = f"{NAME}-{_version()}"
    filename = f"{base}.tar.gz"
    partial = os.path.join(sdist_directory, f".{filename}.partial")
    with open(partial, "wb") as out:
        subprocess.check_call(["git", "-C", ROOT, "archive", "--format=tar.gz", f"--prefix={base}/", "HEAD"],
                              stdout=out)
    os.replace(partial, os.path.join(sdist_directory, filename))
    return filename
