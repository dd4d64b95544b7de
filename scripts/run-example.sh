#!/usr/bin/env bash
# The first command of the README: install what is missing, build, install the
# Python module (scripts/install-python.sh), then replay
# configs/examples/fragmentation.trace through TensorFlow's BFC configuration.
# The replay is meant to fail (hbmsim exit code 1, verdict `fragmentation`);
# this script exits 0 when that is what happened.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/install-python.sh"  # import hbmsim for /usr/bin/python3
hbmsim=${BUILD_DIR:-$root/build}/sim/cli/hbmsim
cd "$root"
args=(replay configs/examples/fragmentation.trace --allocator configs/bfc_tensorflow.yaml --bytes-limit 256MiB)
echo "\$ hbmsim ${args[*]}"
set +e
"$hbmsim" "${args[@]}"
code=$?
set -e
case $code in
  1) echo "run-example: exit code 1 is the expected outcome: one allocation failed, verdict fragmentation" >&2
     exit 0 ;;
  0) echo "run-example: the example was expected to fail but everything fit" >&2
     exit 1 ;;
  *) echo "run-example: hbmsim failed with exit code $code" >&2
     exit "$code" ;;
esac
