#!/usr/bin/env bash
# The test command of the README: install what is missing, build, run the
# default test suite (everything not labelled `slow`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" -LE slow --timeout 300
