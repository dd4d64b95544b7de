#!/usr/bin/env bash
# Runs a benchmark that measures real recordings (bench/pickle/pickle_bench,
# bench/scale/scale_bench) on the shared test recordings beside the
# repository: it sets HBMSIM_BENCH_DATA (bench/common/bench_data.h), which the
# benchmarks read, so no file outside scripts/ and tests/ names that folder.
#
#   scripts/bench-real-data.sh pickle [BENCHMARK_FLAGS...]
#   scripts/bench-real-data.sh scale --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#
# HBMSIM_SHARED overrides where the recordings are; BUILD_DIR where the
# benchmarks were built (scripts/build.sh --tests builds them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${1:?usage: bench-real-data.sh pickle|scale [BENCHMARK_FLAGS...]}
shift
case $bench in
  pickle | scale) ;;
  *) echo "bench-real-data.sh: $bench: not a benchmark of real recordings (pickle, scale)" >&2; exit 2 ;;
esac
program=${BUILD_DIR:-$root/build}/bench/$bench/${bench}_bench
if [[ ! -x $program ]]; then
  echo "bench-real-data.sh: $program is not built (bash scripts/build.sh --tests builds it)" >&2
  exit 2
fi
HBMSIM_BENCH_DATA=$(realpath -m "${HBMSIM_SHARED:-$root/../shared}") exec "$program" "$@"
