#!/usr/bin/env bash
# Installs the Python module (`import hbmsim`, `python3 -m hbmsim`) for
# Debian's /usr/bin/python3 with Debian's pip, from the build in build/ (or
# $BUILD_DIR): the in-tree backend (python/build_backend) only links
# hbmsim._native there, the libraries are the ones scripts/build.sh compiled.
# Run by scripts/run-example.sh.
#
# --break-system-packages: Debian 12 marks its python3 as externally managed
# (PEP 668); the package goes to /usr/local/lib/python3.*/dist-packages, which
# Debian keeps for exactly this, and never touches a Debian package's files.
# --no-deps: numpy, pandas and distributed come from Debian (install-deps.sh --tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [[ $(id -u) -ne 0 ]]; then
  user=(--user)  # without root: ~/.local, which python3 also searches
else
  user=(--root-user-action=ignore)
fi
HBMSIM_BUILD_DIR=${BUILD_DIR:-$root/build} /usr/bin/python3 -m pip install --quiet --no-deps \
  --break-system-packages "${user[@]}" .
echo "install-python: $(cd / && /usr/bin/python3 -c 'import hbmsim, os; print("import hbmsim", hbmsim.__version__, "->", os.path.dirname(hbmsim.__file__))')" >&2
