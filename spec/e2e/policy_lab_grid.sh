#!/usr/bin/env bash
# End to end: the policy lab's grid on a generated openb-format trace
# (bench/make_openb.sh; the real trace is never read by a test).
# - `luasched bench policy-lab`: skipped with its message when neither a trace
#   nor $OPENB_DIR is given; on the generated trace, one timed experiment per
#   policy and the grid, in text and JSON.
# - The grid's HTML report (six policies x 2 seeds, --jobs 2) has the six
#   curves on one chart, the axis titles and the seed-noise line, and headless
#   Chromium renders it: the screenshot exists, is not blank, and shows each
#   policy's legend colour (compare_gpu.c's GCOLOR, in policy order).
. "$(dirname "$0")/lib.bash"
require_tool jq jq
require_tool chromium chromium
require_tool python3 python3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMP" || exit 1
bash "$ROOT/bench/make_openb.sh" "$TMP/openb" 40 240 3

out=$(env -u OPENB_DIR "$BIN" bench policy-lab 2>&1; echo "exit $?")
expect_contains "bench: skipped without a trace" "$out" "luasched bench policy-lab: skipped: OPENB_DIR is not set"
expect_contains "bench: skipped is not a failure" "$out" "exit 0"

P=$ROOT/profiles/policy-lab
set -- --config "Random=$P/gpu-random.yaml" --config "DotProd=$P/gpu-dot-product.yaml" \
  --config "GpuClustering=$P/gpu-gpu-clustering.yaml" --config "GpuPacking=$P/gpu-gpu-packing.yaml" \
  --config "BestFit=$P/gpu-best-fit.yaml" --config "FGD=$P/gpu-fgd.yaml"

json=$(OPENB_DIR="$TMP/openb" "$BIN" bench policy-lab --seeds 2 --jobs 2 --output json)
expect_eq "bench: the six default policies timed, in order" "$(jq -c '[.experiments[].policy]' <<<"$json")" \
  '["Random","DotProd","GpuClustering","GpuPacking","BestFit","FGD"]'
expect_eq "bench: every experiment ran (wall and CPU measured)" \
  "$(jq '[.experiments[] | select(.wallSeconds > 0 and .cpuSeconds > 0 and .exitCode == null)] | length' <<<"$json")" "6"
expect_eq "bench: the grid's runs" "$(jq -c '[.grid.runs, .grid.jobs, .grid.targetSeconds]' <<<"$json")" "[12,2,600]"
expect_eq "bench: the trace" "$(jq -r .trace <<<"$json")" "openb:$TMP/openb"
text=$("$BIN" bench policy-lab "openb:$TMP/openb" "$@" --seeds 2 --skip-grid --experiment-target 600)
expect_contains "bench: text names the target" "$text" "one experiment per policy (seed 42, target 600 s wall)"
expect_eq "bench: text, one line per policy, met" "$(grep -c ' s CPU   met$' <<<"$text")" "6"

"$BIN" compare "openb:$TMP/openb" "$@" --first-seed 42 --seeds 2 --jobs 2 --output html -o grid.html
html=$(cat grid.html)
expect_eq "html: six curves on one chart" "$(grep -o 'class="gpu-curve"' grid.html | wc -l)" "6"
expect_eq "html: one allocation chart" "$(grep -o 'id="gpu-allocation"' grid.html | wc -l)" "1"
expect_contains "html: x axis title" "$html" "arrived workload (% of the cluster's GPUs)"
expect_contains "html: y axis title" "$html" "GPU allocation (%)"
expect_contains "html: the seed-noise line" "$html" "Seeds alone (first seed against the second): <b>A</b> moves"
expect_eq "html: the seed noise of each of the six policies" \
  "$(grep -o '<p id="seed-noise">.*</p>' grid.html | grep -o '<b>[A-F]</b> moves [0-9]* pod' | cut -c4 | tr -d '\n')" "ABCDEF"
expect_eq "html: the six legend names" "$(grep -o '<text class="legend"[^>]*>[A-Za-z]*</text>' grid.html | sed 's/.*>\(.*\)<.*/\1/' | tr '\n' ' ')" \
  "Random DotProd GpuClustering GpuPacking BestFit FGD "

timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1600 \
  --screenshot="$TMP/grid.png" "file://$TMP/grid.html" >/dev/null 2>&1
expect_eq "screenshot produced" "$(test -s "$TMP/grid.png" && echo yes)" "yes"
# The PNG decoded (8-bit RGB or RGBA, the five row filters): how many pixels
# differ from the top-left one, and which legend colours appear exactly.
pixels=$(python3 - "$TMP/grid.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), "expected 8-bit RGB(A)"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
colours = set()
bg, other = rows[0][:3], 0
for r in rows:
    for x in range(0, stride, bpp):
        px = r[x:x + 3]
        colours.add(px)
        if px != bg:
            other += 1
legend = ["1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd", "8c564b"]
print("nonblank" if other > w * h // 100 else "blank", sum(bytes.fromhex(c) in colours for c in legend))
PY
)
expect_eq "screenshot: not blank, the six legend colours shown" "$pixels" "nonblank 6"
exit $((failures > 0))
