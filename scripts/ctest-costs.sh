#!/usr/bin/env bash
# The longest tests first. ctest -j runs the tests it has timed before in
# order of their last time, longest first, so no long test starts last and
# leaves the other core idle; a fresh build tree (CI's, every time) has no
# times, and ctest would start them in declaration order. tests/ctest-costs.txt
# keeps the times of the tests that take a second or more; this script puts
# them where ctest looks for them, or records them anew.
#
#   scripts/ctest-costs.sh seed BUILD_DIR     before ctest, if BUILD_DIR has no times of its own
#   scripts/ctest-costs.sh record BUILD_DIR   after a full run: rewrites tests/ctest-costs.txt
#
# Only the order depends on these figures; a test missing from the file, or
# named there but gone, changes nothing else.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: ctest-costs.sh seed|record BUILD_DIR}
build=${2:?usage: ctest-costs.sh seed|record BUILD_DIR}
kept=$root/tests/ctest-costs.txt
data=$build/Testing/Temporary/CTestCostData.txt
case $mode in
  seed)
    [[ -s $data || ! -s $kept ]] && exit 0
    mkdir -p "$(dirname "$data")"
    tmp=$(mktemp "$data.XXXXXX")
    trap 'rm -f "$tmp"' EXIT  # no half-written file left if a step fails
    # ctest's format: NAME RUNS SECONDS per line, then a line "---" and the
    # tests that failed last time (none).
    { grep -v '^#' "$kept" | awk 'NF == 2 { print $1, 1, $2 }'; echo ---; } >"$tmp"
    mv "$tmp" "$data"
    ;;
  record)
    [[ -s $data ]] || { echo "ctest-costs.sh: $data: no times (run ctest in $build first)" >&2; exit 2; }
    tmp=$(mktemp "$kept.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    {
      echo "# Seconds per test, the tests of a second or more, as the build recorded last measured them"
      echo "# (the sanitizer suite's, where a long test starting last costs most): scripts/ctest-costs.sh"
      echo "# seeds ctest's schedule with them. Rewrite: scripts/ctest-costs.sh record BUILD_DIR after a full run."
      awk '$0 == "---" { exit } NF == 3 && $3 >= 1 { printf "%s %.1f\n", $1, $3 }' "$data" | sort -k2,2nr -k1,1
    } >"$tmp"
    mv "$tmp" "$kept"
    ;;
  *) echo "ctest-costs.sh: $mode: seed or record" >&2; exit 2 ;;
esac
