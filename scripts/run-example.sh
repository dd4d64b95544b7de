#!/usr/bin/env bash
# The first command of the README: install what is missing, build the CLI and
# the Python module (Release; no tests), install `hbmsim` on PATH under
# $PREFIX (default /usr/local) with its bash completion, install `import
# hbmsim` for /usr/bin/python3, then replay configs/examples/fragmentation.trace
# through TensorFlow's BFC configuration with the installed binary.
# The replay is meant to fail (hbmsim exit code 1, verdict `fragmentation`);
# this script exits 0 when that is what happened.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${PREFIX:-/usr/local}
start=$SECONDS
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
sudo_cmd=""
[[ -w $prefix || $(id -u) -eq 0 ]] || sudo_cmd="sudo"
$sudo_cmd cmake --install "${BUILD_DIR:-$root/build}" --prefix "$prefix" >/dev/null
"$root/scripts/install-python.sh"  # import hbmsim for /usr/bin/python3
echo "run-example: built and installed $prefix/bin/hbmsim in $((SECONDS - start)) s" >&2
hbmsim=$prefix/bin/hbmsim
cd "$root"
args=(replay configs/examples/fragmentation.trace --allocator configs/bfc_tensorflow.yaml --bytes-limit 256MiB)
echo "\$ hbmsim ${args[*]}"
set +e
"$hbmsim" "${args[@]}"
code=$?
set -e
case $code in
  1) echo "run-example: exit code 1 is the expected outcome: one allocation failed, verdict fragmentation" >&2
     [[ $(command -v hbmsim) == "$hbmsim" ]] || echo "run-example: note: $prefix/bin is not on your PATH" >&2
     exit 0 ;;
  0) echo "run-example: the example was expected to fail but everything fit" >&2
     exit 1 ;;
  *) echo "run-example: hbmsim failed with exit code $code" >&2
     exit "$code" ;;
esac
