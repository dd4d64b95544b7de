#!/bin/sh
# Renders the HTML report of configs/examples/fragmentation.trace with headless
# Chromium and checks the PNG is not blank (it has many distinct colours).
# Installs Debian's chromium when missing; skips (exit 77) when it cannot.
# Usage: browser_test.sh HBMSIM_BINARY SOURCE_DIR [OUT.png]
set -eu
bin=$1
src=$2
work=$(mktemp -d)
out=${3:-$work/report.png}
trap 'rm -rf "$work"' EXIT
if ! command -v chromium >/dev/null 2>&1; then
  echo "chromium missing: installing the Debian package" >&2
  if ! { apt-get install -y chromium >/dev/null 2>&1 || sudo -n apt-get install -y chromium >/dev/null 2>&1; }; then
    echo "SKIP: chromium is not installed and apt-get install chromium failed" >&2
    exit 77
  fi
fi
cd "$src"
"$bin" replay configs/examples/fragmentation.trace --allocator bfc --html "$work/report.html" >/dev/null || [ $? -eq 1 ]
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --no-first-run --user-data-dir="$work/profile" --screenshot="$out" --window-size=1280,1600 \
  "file://$work/report.html" >/dev/null 2>&1
# Count distinct colours by decoding the PNG with python3's zlib.
python3 - "$out" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h, ctype = 8, b"", 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ctype]
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = set()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 2):
            colours.add(bytes(line[x:x + 3]))
    prev = line
print(f"{w}x{h} PNG, {len(colours)} distinct colours")
sys.exit(0 if len(colours) >= 20 else 1)
PY
