#!/usr/bin/env bash
# `hbmsim sweep --shard I/N` as the Slurm array of docs/sweeps.md, on a
# one-node Slurm on localhost: the array's merged results equal the unsharded
# run byte for byte, and a shard requeued after losing results resumes.
#   slurm_sweep_test.sh HBMSIM_BINARY SOURCE_DIR     (exit 77: no Slurm here)
set -euo pipefail
hbmsim=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
trap 'bash "$root/scripts/slurm-local.sh" stop "$work/slurm"; rm -rf "$work"' EXIT

bash "$root/scripts/slurm-local.sh" start "$work/slurm" > "$work/env" || exit $?
export SLURM_CONF=$work/slurm/slurm.conf

shared=$root/../shared/torch_snapshots
cat > "$work/sweep.yaml" << SPEC
recordings:
  - $root/configs/examples/*.trace
$( [[ -f $shared/small_trace_from_empty.pickle ]] && echo "  - $shared/small_trace_from_empty.pickle" )
allocators: [bfc, torch]
settings:
  garbage_collection: [false]
limits: [256MiB]
size: true
SPEC
sed -i '/^$/d' "$work/sweep.yaml"
# garbage_collection is a bfc option only: torch's tasks are error lines, and
# those must merge identically too.
"$hbmsim" sweep "$work/sweep.yaml" --out "$work/whole" > /dev/null
tasks=$(ls "$work/whole" | grep -c '^task-')

cat > "$work/job.sh" << JOB
#!/bin/bash
exec "$hbmsim" sweep "$work/sweep.yaml" --out "$work/array" --shard "\${SLURM_ARRAY_TASK_ID}/3"
JOB
chmod +x "$work/job.sh"
timeout 300 sbatch --array=0-2 --output="$work/job-%a.out" --wait "$work/job.sh" > /dev/null
cat "$work"/job-*.out
diff <(cd "$work/whole" && cat task-*) <(cd "$work/array" && cat task-*)
[[ $(ls "$work/array" | grep -c '^task-') == "$tasks" ]]

# A preempted shard: two of shard 1's results lost, shard 1 runs again.
rm "$work/array/task-000001.json" "$work/array/task-000004.json"
timeout 300 sbatch --array=1 --output="$work/requeue.out" --wait "$work/job.sh" > /dev/null
grep -q "already finished, 2 ran" "$work/requeue.out" || { cat "$work/requeue.out"; exit 1; }
diff <(cd "$work/whole" && cat task-*) <(cd "$work/array" && cat task-*)
"$hbmsim" sweep report "$work/whole" --csv "$work/whole.csv" > /dev/null
"$hbmsim" sweep report "$work/array" --csv "$work/array.csv" > /dev/null
cmp "$work/whole.csv" "$work/array.csv"
echo "slurm_sweep: $tasks tasks, a 3-task array and a requeued shard equal the unsharded run"
