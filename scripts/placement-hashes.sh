#!/usr/bin/env bash
# Fingerprints of what a build of hbmsim places, for speed work that must not
# move a single byte: the placements CSV, the --json report and stdout of
# `hbmsim replay` for every online policy on a generated churn and a training
# trace at a roomy and at tight limits, and every shared PyTorch snapshot under
# `--allocator torch --check-recorded`. Run it with the old and the new binary
# and diff the two outputs: any line that differs is a placement (or a report)
# that moved.
#
#   scripts/placement-hashes.sh OLD/hbmsim > old.txt
#   scripts/placement-hashes.sh NEW/hbmsim > new.txt
#   diff old.txt new.txt && echo identical
#
# POLICIES="torch tpu" limits the policies; SNAPSHOTS=0 skips the snapshots.
set -euo pipefail
hbmsim=$(realpath "${1:?usage: placement-hashes.sh HBMSIM_BINARY}")
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$(realpath -m "${HBMSIM_SHARED:-$here/../shared}")  # one spelling in every checkout
policies=${POLICIES:-"bfc tpu first_fit best_fit paged ideal torch cuda_async"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The traces are made by the binary under test; a generator change shows up
# as a differing trace hash on the first lines.
"$hbmsim" gen churn --seed 1 --events 1000000 -o "$work/churn.hbt" > /dev/null
"$hbmsim" gen training --seed 1 --layers 24 --steps 200 --micro-batches 4 -o "$work/training.hbt" > /dev/null
echo "trace churn $(sha256sum < "$work/churn.hbt" | cut -c1-16)"
echo "trace training $(sha256sum < "$work/training.hbt" | cut -c1-16)"

one() {  # label, then the replay's arguments
  local label=$1; shift
  local rc=0
  (cd "$work" && "$hbmsim" replay "$@" --placements p.csv --json r.json > out.txt 2> err.txt) || rc=$?
  # The JSON names the trace by path; the temp dir differs between runs.
  sed -i "s#$work/##g" "$work/r.json" "$work/out.txt" 2> /dev/null || true
  echo "$label rc=$rc csv=$(sha256sum < "$work/p.csv" | cut -c1-16)" \
    "json=$(sha256sum < "$work/r.json" | cut -c1-16) stdout=$(sha256sum < "$work/out.txt" | cut -c1-16)"
  rm -f "$work/p.csv" "$work/r.json"
}

for policy in $policies; do
  for limit in 64GiB 1GiB 700MiB 620MiB 605MiB; do
    one "$policy churn $limit" "$work/churn.hbt" --allocator "$policy" --bytes-limit "$limit" --no-advice
  done
  for limit in 64GiB 5GiB 4200MiB 4085MiB 4GiB; do
    one "$policy training $limit" "$work/training.hbt" --allocator "$policy" --bytes-limit "$limit" --no-advice
  done
done

if [[ ${SNAPSHOTS:-1} != 0 && -d $shared/torch_snapshots ]]; then
  for snapshot in "$shared"/torch_snapshots/*.pickle "$shared"/torch_snapshots/*.pkl; do
    one "torch $(basename "$snapshot")" "$snapshot" --allocator torch --check-recorded --no-advice
  done
fi
