#!/usr/bin/env bash
# Configures and builds hbmsim into build/ (or $BUILD_DIR), Release (-O2).
#   build.sh            the CLI and the Python module: what the README's first command runs
#   build.sh --tests    also every test program and benchmark (the test command, CI)
# BUILD_TYPE overrides the build type; other arguments go to cmake. Both
# forms share one build tree, so the test command after the first command
# compiles only the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
tests=OFF
args=()
for arg in "$@"; do
  if [[ $arg == --tests ]]; then tests=ON; else args+=("$arg"); fi
done
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} \
  -DHBMSIM_BUILD_TESTS=$tests -DHBMSIM_BUILD_BENCH=$tests "${args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
