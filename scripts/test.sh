#!/usr/bin/env bash
# The test command of the README: install what is missing, build everything
# (tests and benchmarks too), run the default test suite (everything not
# labelled `slow`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
"$root/scripts/install-deps.sh" --tests
"$root/scripts/build.sh" --tests
echo "test: built in $((SECONDS - start)) s" >&2
cd "${BUILD_DIR:-$root/build}"
"$root/scripts/ctest-costs.sh" seed .  # the longest tests first (the script says why)
ctest --output-on-failure -j "$(nproc)" -LE slow --timeout 300
echo "test: passed in $((SECONDS - start)) s" >&2
