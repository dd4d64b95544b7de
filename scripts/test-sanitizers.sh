#!/usr/bin/env bash
# The second CI step (docs/fuzzing.md): one clang build with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer instrumentation, in which
#   1. the whole default test suite but the browser check runs
#      (ctest -LE 'slow|browser'), every sanitizer report fatal, and
#   2. every fuzz target in tests/fuzz runs for FUZZ_SECONDS (default 20)
#      from its corpus, as many at once as there are cores; new inputs go to
#      a scratch folder, never the repository.
# -O1, as AddressSanitizer's documentation recommends: fast enough to run the
# suite, and much cheaper to compile than -O2 once every access is
# instrumented. Debug info is line tables only (-g1): enough for every frame
# of a sanitizer report to name its file and line, at a fraction of -g's
# compile and link time.
# A crash leaves its input in <build>/fuzz-artifacts/; add it to the target's
# corpus under a name that says what it was, once fixed.
#
#   SANITIZE_BUILD_DIR  where to build (default build-sanitize/)
#   FUZZ_SECONDS        seconds per fuzz target (0 skips fuzzing)
#   FUZZ_SEED           libFuzzer's -seed (default 1): CI explores the same
#                       inputs every run, so a failure in CI reproduces here
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-sanitize}
fuzz_seconds=${FUZZ_SECONDS:-20}  # why 20: docs/fuzzing.md, "Running it"
fuzz_seed=${FUZZ_SEED:-1}
jobs=$(nproc)
start=$SECONDS

"$root/scripts/install-deps.sh" --sanitizers
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DHBMSIM_SANITIZE=ON -DHBMSIM_FUZZ=ON -DHBMSIM_BUILD_TESTS=ON -DHBMSIM_BUILD_BENCH=OFF \
  "-DHBMSIM_SKIP_TEST_LABELS=slow;browser" >/dev/null  # the labels ctest -LE leaves out below
cmake --build "$build" -j "$jobs"
echo "test-sanitizers: built in $((SECONDS - start)) s" >&2

# abort_on_error: a report kills the process with SIGABRT, so ctest and
# libFuzzer both see a crash; detect_leaks: a leak fails the test too.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
"$root/scripts/ctest-costs.sh" seed "$build"  # the longest tests first (the script says why)
(cd "$build" && ctest --output-on-failure -j "$jobs" -LE 'slow|browser' --timeout 600)
echo "test-sanitizers: tests passed at $((SECONDS - start)) s" >&2

# run_fuzz_target TARGET: one libFuzzer run; its log goes to $scratch/NAME.log
# and its exit code to $scratch/NAME.status.
run_fuzz_target() {
  local target=$1 name code=0
  name=$(basename "$target")
  local corpus=$root/tests/fuzz/corpus/${name#fuzz_}
  mkdir -p "$scratch/$name"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: memory must stay bounded.
  "$target" -max_total_time="$fuzz_seconds" -seed="$fuzz_seed" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$name-" "$scratch/$name" "$corpus" >"$scratch/$name.log" 2>&1 || code=$?
  echo "$code" >"$scratch/$name.status"
}

if ((fuzz_seconds > 0)); then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  artifacts=$build/fuzz-artifacts
  mkdir -p "$artifacts"
  targets=()
  for target in "$build"/tests/fuzz/fuzz_*; do
    name=$(basename "$target")
    [[ -f $target && -x $target && $name != *_test ]] && targets+=("$target")  # the gtests ran under ctest
  done
  echo "test-sanitizers: ${#targets[@]} fuzz targets, ${fuzz_seconds} s each, $jobs at a time, -seed=$fuzz_seed" >&2
  export -f run_fuzz_target
  export root scratch artifacts fuzz_seconds fuzz_seed
  printf '%s\0' "${targets[@]}" | xargs -0 -n 1 -P "$jobs" bash -c 'run_fuzz_target "$1"' _ || true
  failed=0
  for target in "${targets[@]}"; do  # in name order, whatever order they ended in
    name=$(basename "$target")
    if [[ $(cat "$scratch/$name.status" 2>/dev/null) != 0 ]]; then
      tail -n 60 "$scratch/$name.log" >&2
      echo "test-sanitizers: $name failed; its input is in $artifacts/" >&2
      failed=1
    else
      grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units' "$scratch/$name.log" | sed "s/^/$name: /" >&2 || true
    fi
  done
  ((failed == 0)) || exit 1
fi
echo "test-sanitizers: passed in $((SECONDS - start)) s" >&2
