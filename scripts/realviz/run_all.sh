#!/bin/bash
# Real-viewer check of hbmsim --memory-viz exports (issue 17); see README.md.
# usage: run_all.sh HBMSIM WORKDIR OUTDIR
#   WORKDIR: the directory setup.sh prepared (viewer, harness, node_modules).
# Files: every snapshot in $SNAP with a trace (the original once, and each
# traced device replayed with torch, bfc, cuda_async and tpu; --bytes-limit
# $LIMIT when the snapshot records no OOM), and one generated trace per
# generator replayed with each policy. Two files are checked at a time
# ($JOBS). One JSON line per file in OUTDIR/results.jsonl, the table in
# OUTDIR/summary.txt, the exact commands in OUTDIR/commands.txt.
set -u
BIN=$(realpath "$1"); WORK=$(realpath "$2"); OUT=$(realpath -m "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
SNAP=${SNAP:-/work/shared/torch_snapshots}
LIMIT=${LIMIT:-80GiB}; JOBS=${JOBS:-2}
CLICKS=${CLICKS:-80}; HOVERS=${HOVERS:-40}
# torch-check-recorded: torch with --check-recorded (new segments take their
# recorded bases, so a recording that starts mid-run is reproduced).
POLICIES=${POLICIES:-torch torch-check-recorded bfc cuda_async tpu}
export BIN WORK OUT CLICKS HOVERS
mkdir -p "$OUT/res"

# One job: KIND LABEL FILE [REPLAY ARGS...]. An export job replays first
# (and writes --json beside the pickle for its figures), then views.
one() {
  local kind=$1 label=$2 file=$3; shift 3
  local res replay=null
  res="$OUT/res/$(echo "$label" | tr '/' '_').json"
  if [ "$kind" = export ]; then
    echo "hbmsim replay $* --memory-viz $file --json $file.json" >> "$OUT/commands.txt"
    "$BIN" replay "$@" --quiet --no-advice --memory-viz "$file" --json "$file.json" > /dev/null 2> "$file.err"
    replay="{\"exit\":$?,\"err\":$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()[:300]))' "$file.err")}"
  fi
  local viewer=null py=null
  if [ -s "$file" ]; then
    viewer=$(cd "$WORK" && timeout 1200 node harness.mjs "$file" --max-clicks "$CLICKS" --max-hovers "$HOVERS" 2>/dev/null || echo null)
    py=$(python3 "$WORK/pyviz.py" "$file" 2>/dev/null || echo null)
  fi
  echo "{\"kind\":\"$kind\",\"label\":\"$label\",\"file\":\"$file\",\"replay\":$replay,\"viewer\":${viewer:-null},\"py\":${py:-null}}" > "$res"
}
export -f one

jobs() {  # one line per job, fields separated by tabs: KIND LABEL FILE ARGS
  for f in "$SNAP"/*.pickle; do
    local name; name=$(basename "$f" .pickle)
    local devs; devs=$(python3 "$HERE/../../tests/sim/viz/memory_viz_compare.py" --devices "$f")
    [ -z "$devs" ] && continue
    printf 'original\t%s\t%s\n' "$name" "$f"
    for d in $devs; do
      # Without an OOM on this device, other policies need a limit.
      local limit=""
      python3 -c 'import pickle,sys; t=pickle.load(open(sys.argv[1],"rb"))["device_traces"][int(sys.argv[2])]
sys.exit(0 if any(e.get("action")=="oom" for e in t) else 1)' "$f" "$d" || limit="--bytes-limit $LIMIT"
      for a in $POLICIES; do
        local extra=""
        [ "$a" = torch-check-recorded ] && extra=--check-recorded
        printf 'export\t%s/%s/d%s\t%s\t%s --allocator %s --device %s %s %s\n' "$name" "$a" "$d" \
          "$OUT/$name.$a.d$d.pickle" "$f" "${a%-check-recorded}" "$d" "$limit" "$extra"
      done
    done
  done
  for g in "training --layers 2 --hidden 256 --steps 2" "inference --requests 8" "churn --events 3000"; do
    local gn=${g%% *}
    for a in ${POLICIES/torch-check-recorded/}; do  # a generated trace records no addresses
      printf 'export\tgen-%s/%s\t%s\t%s --allocator %s --bytes-limit 4GiB\n' "$gn" "$a" "$OUT/gen-$gn.$a.pickle" "$OUT/$gn.trace" "$a"
    done
  done
}

for g in "training --layers 2 --hidden 256 --steps 2" "inference --requests 8" "churn --events 3000"; do
  echo "hbmsim gen $g --seed 7 -o $OUT/${g%% *}.trace" >> "$OUT/commands.txt"
  # shellcheck disable=SC2086 # $g is the generator's words
  "$BIN" gen $g --seed 7 -o "$OUT/${g%% *}.trace"
done
jobs > "$OUT/jobs.tsv"
# ONLY=PATTERN runs only the matching jobs, SKIP=PATTERN leaves out the
# matching ones (grep -E on the job line); results of earlier runs in OUTDIR
# stay and are summarized with the new ones.
grep -E "${ONLY:-.}" "$OUT/jobs.tsv" | grep -vE "${SKIP:-^$}" | while IFS=$'\t' read -r kind label file args; do
  printf '%s\0' "one $kind $label $file $args"
done | xargs -0 -P "$JOBS" -I{} bash -c '{}'
cat "$OUT"/res/*.json > "$OUT/results.jsonl"
sort -u -o "$OUT/commands.txt" "$OUT/commands.txt"
python3 "$HERE/summarize.py" "$OUT/results.jsonl" > "$OUT/summary.txt"
