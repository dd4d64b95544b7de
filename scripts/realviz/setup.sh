#!/bin/bash
# Prepares the directory run_all.sh checks exports in (see README.md).
# usage: setup.sh TORCH_DIR WORKDIR
#   TORCH_DIR: the `torch` directory of a PyTorch checkout or of an installed
#   wheel (it holds utils/viz/MemoryViz.js, utils/viz/process_alloc_data.js
#   and cuda/_memory_viz.py). Nothing of PyTorch is kept in this repository.
# The viewer imports d3 from a CDN; those import lines are pointed at the
# npm package instead, which is the only change made to PyTorch's files.
set -eu
SRC=$1; WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
cp "$SRC/utils/viz/process_alloc_data.js" "$SRC/cuda/_memory_viz.py" "$WORK/"
sed -E 's#^import (.*) from "https://cdn\.jsdelivr\.net/npm/d3[-a-z]*@[0-9]+/\+esm";#import \1 from "d3";#' \
  "$SRC/utils/viz/MemoryViz.js" > "$WORK/MemoryViz.js"
if grep -q 'cdn.jsdelivr.net/npm' "$WORK/MemoryViz.js"; then
  echo "setup.sh: MemoryViz.js still imports from a CDN; adjust the sed above" >&2; exit 2
fi
cp "$HERE/harness.mjs" "$HERE/pyviz.py" "$WORK/"
echo '{"type": "module", "private": true}' > "$WORK/package.json"
# jsdom and d3 come from npm, outside this repository; skip when WORKDIR's
# parents already have them.
(cd "$WORK" && node -e 'import("jsdom").then(()=>import("d3"))' 2>/dev/null) || (cd "$WORK" && npm install jsdom d3@7)
