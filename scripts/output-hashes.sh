#!/usr/bin/env bash
# Fingerprints of what every command prints for every recording in ../shared,
# for a change that must not move a byte of output (issue 45: a recording's
# facts made one value). For each file and command: the exit code and the
# sha256 of stdout, stderr and the --json (or, for convert, the written trace).
# Each file is given by path, relative to the shared folder, so the output
# names it the same in every checkout; and again piped into `-`, since what
# comes through a pipe must be what the file gives (the pipe rows of a state-
# only snapshot or a profile are the ones issue 45 fixed).
#
#   scripts/output-hashes.sh OLD/hbmsim old.txt           # record
#   scripts/output-hashes.sh NEW/hbmsim new.txt old.txt   # record, then compare
#
# The comparison prints each line that differs and the counts, and exits 1
# when any does. Every command that reads one recording runs on every file,
# both ways, with its defaults: a few minutes on a Release build, the
# limit searches (`size`, `advise`, `compare`) on the largest snapshots
# taking a few seconds each. COMMANDS="replay inspect" limits the commands;
# FILES="profiler/*" the files (globs under the shared folder).
set -euo pipefail
hbmsim=$(realpath "${1:?usage: output-hashes.sh HBMSIM_BINARY OUT.txt [OLD.txt]}")
out=$(realpath -m "${2:?usage: output-hashes.sh HBMSIM_BINARY OUT.txt [OLD.txt]}")
old=${3:+$(realpath "$3")}
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$(realpath -m "${HBMSIM_SHARED:-$here/../shared}")
commands=${COMMANDS:-"replay inspect diagnose convert size advise compare"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

hash() { if [[ -f $1 ]]; then sha256sum < "$1" | cut -c1-16; else echo none; fi; }

# One command on one input: `way` is `path` (the file named) or `pipe`
# (cat FILE | hbmsim CMD -). The output file is --json, or convert's trace.
one() {
  local file=$1 way=$2 command=$3
  local input=$file stdin=/dev/null rc=0
  if [[ $way == pipe ]]; then input=-; stdin=$file; fi
  local args=("$command" "$input")
  case $command in
    convert) args+=("$work/converted.trace") ;;
    *) args+=(--json "$work/out.json") ;;
  esac
  (cd "$shared" && "$hbmsim" "${args[@]}" < "$stdin" > "$work/stdout" 2> "$work/stderr") || rc=$?
  # Only the scratch folder's name differs between runs.
  sed -i "s#$work/##g" "$work/stdout" "$work/stderr" 2> /dev/null || true
  local written=$work/out.json
  [[ $command == convert ]] && written=$work/converted.trace
  echo "$file $way $command rc=$rc out=$(hash "$work/stdout") err=$(hash "$work/stderr") file=$(hash "$written")"
  rm -f "$work/out.json" "$work/converted.trace"
}

files() {
  if [[ -n ${FILES:-} ]]; then
    (cd "$shared" && for g in $FILES; do [[ -f $g ]] && echo "$g"; done)
  else
    (cd "$shared" && find . -type f ! -name '*.md' ! -path './hooks/*' | sed 's#^\./##' | LC_ALL=C sort)
  fi
}

: > "$out"
start=$SECONDS
while IFS= read -r file; do
  t0=$SECONDS
  for command in $commands; do
    one "$file" path "$command" >> "$out"
    one "$file" pipe "$command" >> "$out"
  done
  echo "$file: $((SECONDS - t0)) s" >&2
done < <(files)
echo "$(wc -l < "$out") outputs in $((SECONDS - start)) s: $out" >&2

[[ -z $old ]] && exit 0
differ=$(diff <(LC_ALL=C sort "$old") <(LC_ALL=C sort "$out") | grep -c '^>' || true)
diff <(LC_ALL=C sort "$old") <(LC_ALL=C sort "$out") | grep '^[<>]' || true
echo "$(wc -l < "$out") outputs, $differ differ from $old"
[[ $differ == 0 ]]
