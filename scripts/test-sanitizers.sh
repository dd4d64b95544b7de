#!/usr/bin/env bash
# The second CI step (docs/fuzzing.md): one clang build with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer instrumentation, in which
#   1. the whole default test suite runs (ctest -LE slow), every sanitizer
#      report fatal, and
#   2. every fuzz target in tests/fuzz runs for FUZZ_SECONDS (default 30)
#      from its corpus; new inputs go to a scratch folder, never the repository.
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
fuzz_seconds=${FUZZ_SECONDS:-30}
fuzz_seed=${FUZZ_SEED:-1}
jobs=$(nproc)
start=$SECONDS

"$root/scripts/install-deps.sh" --sanitizers
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHBMSIM_SANITIZE=ON -DHBMSIM_FUZZ=ON -DHBMSIM_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs"
echo "test-sanitizers: built in $((SECONDS - start)) s" >&2

# abort_on_error: a report kills the process with SIGABRT, so ctest and
# libFuzzer both see a crash; detect_leaks: a leak fails the test too.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
(cd "$build" && ctest --output-on-failure -j "$jobs" -LE slow --timeout 600)
echo "test-sanitizers: tests passed at $((SECONDS - start)) s" >&2

if ((fuzz_seconds > 0)); then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  artifacts=$build/fuzz-artifacts
  mkdir -p "$artifacts"
  for target in "$build"/tests/fuzz/fuzz_*; do
    name=$(basename "$target")
    [[ -f $target && -x $target && $name != *_test ]] || continue  # the gtests ran under ctest
    corpus=$root/tests/fuzz/corpus/${name#fuzz_}
    mkdir -p "$scratch/$name"
    echo "test-sanitizers: $name for ${fuzz_seconds} s, -seed=$fuzz_seed" >&2
    # -timeout: one input taking 10 s is a hang; -rss_limit_mb: memory must stay bounded.
    if ! "$target" -max_total_time="$fuzz_seconds" -seed="$fuzz_seed" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$name-" "$scratch/$name" "$corpus" >"$scratch/$name.log" 2>&1; then
      tail -n 60 "$scratch/$name.log" >&2
      echo "test-sanitizers: $name failed; its input is in $artifacts/" >&2
      exit 1
    fi
    grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units' "$scratch/$name.log" >&2 || true
  done
fi
echo "test-sanitizers: passed in $((SECONDS - start)) s" >&2
