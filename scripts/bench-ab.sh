#!/usr/bin/env bash
# Compares replay_bench binaries by interleaving their runs: A B A B ...
#
#   scripts/bench-ab.sh [-n ROUNDS] [-f FILTER] BINARY...
#   scripts/bench-ab.sh -n 7 /tmp/replay_bench_before build-scale/bench/replay/replay_bench
#
# Why: on a shared 2-core VM one run can be 10% off the next, and a slow
# stretch of the host hits back-to-back runs of one binary together.
# Interleaving spreads it over both; the best and the median of each binary's
# rounds are printed (Mevents per CPU second of the replaying thread).
# --benchmark_min_time=0.01 (seconds) means one iteration of a full-size
# replay; Debian's Google Benchmark 1.7 reads `1x` as 1 second, not 1 run.
set -euo pipefail

rounds=5
filter='^Replay/bfc/hbt$'
while getopts "n:f:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    f) filter="$OPTARG" ;;
    *) echo "usage: $0 [-n ROUNDS] [-f FILTER] BINARY..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -eq 0 ]]; then
  echo "usage: $0 [-n ROUNDS] [-f FILTER] BINARY..." >&2
  exit 2
fi
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: -n: not a positive number: $rounds" >&2
  exit 2
fi

declare -A rates
for ((i = 0; i < rounds; i++)); do
  for bin in "$@"; do
    rate=$("$bin" --benchmark_filter="$filter" --benchmark_min_time=0.01 2>&1 |
      grep -oE 'Mevents_per_cpu_s=[0-9.]+' | head -1 | cut -d= -f2 || true)
    if [[ -z "$rate" ]]; then
      echo "$0: $bin printed no Mevents_per_cpu_s for '$filter'" >&2
      exit 2
    fi
    rates[$bin]="${rates[$bin]:-} $rate"
  done
done

for bin in "$@"; do
  sorted=$(tr ' ' '\n' <<<"${rates[$bin]}" | grep . | sort -n)
  best=$(tail -1 <<<"$sorted")
  median=$(sed -n "$(((rounds + 1) / 2))p" <<<"$sorted")
  echo "$bin: best $best median $median  (rounds:${rates[$bin]})"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
