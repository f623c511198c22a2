#!/usr/bin/env bash
# End to end: `luasched compare` on spec/e2e/fixtures/compare/trace.yaml under
# LeastAllocated (A) and MostAllocated (B), only NodeResourcesFit scoring.
# Worked by hand (score = free (A) or used (B) share of cpu, the same for
# memory since every pod and node has 1Gi per cpu):
#   A: p1 -> n2 (n1 75, n2 90), p2 -> n2 (75 vs 80), p3 at 60s -> n1 (75 vs 70),
#      p4 at 120s -> n2 (25 vs 60); late fits nowhere until n3 (16 cpu) joins
#      at 180s, then n3. End: n1 1/4, n2 4/10, n3 12/16 = 25%, 40%, 75%:
#      mean 46.7%, stddev sqrt(((.25-.4667)^2+(.4-.4667)^2+(.75-.4667)^2)/3) = 20.9%,
#      imbalance .2095/.4667 = 0.449.
#   B: p1, p2 -> n1 (25 vs 10, 50 vs 10), p3 -> n1 (75), p4 -> n2 (n1 full),
#      late -> n3. End: 75%, 20%, 75%: mean 56.7%, stddev 25.9%, 0.458.
#   Latency: four pods bound when they arrive, late after 180 s: sorted
#   0,0,0,0,180 -> p50 (rank 3) 0 s, p90 and p99 (rank 5) 180 s.
#   Pending: blocked (3500m, nodeSelector nobody has: fits n2 by resources) and
#   huge (20 cpu: fits nowhere). Free cpu under 3500m: A n1 3000 of
#   3000+6000+4000 = 23.1%; B n1 1000 of 1000+8000+4000 = 7.7%.
#   Zones: A a=2 (p3, late) b=3; B a=4 b=1: stddev/mean 0.5/2.5 = 0.2, 1.5/2.5 = 0.6.
#   Placed differently: p1 and p2 (A n2, B n1).
#   Over time, mean cpu per node: A 10% (0-57s), 22.5% (60s), 32.5% (120s),
#   46.7% (180s); B 25%, 37.5%, 47.5%, 56.7%.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures/compare
ARGS=("$F/trace.yaml" --config "$F/least-allocated.yaml" --config "$F/most-allocated.yaml")

out=$("$BIN" compare "${ARGS[@]}" --seeds 2 2>&1)
expect_eq "text: exit 0" "$?" "0"
expect_eq "text report" "$out" "trace $F/trace.yaml: 3 nodes at the end, 180s of timeline, 2 seeds per policy
A = $F/least-allocated.yaml
B = $F/most-allocated.yaml

                                                          A              B
pods bound                                                5              5
pods pending                                              2              2
pods preempted                                            0              0
creation to binding p50                                0.0s           0.0s
creation to binding p90                              180.0s         180.0s
creation to binding p99                              180.0s         180.0s
cpu allocated per node, mean                          46.7%          56.7%
cpu allocated per node, stddev                        20.9%          25.9%
cpu imbalance (stddev/mean)                           0.449          0.458
memory allocated per node, mean                       46.7%          56.7%
memory allocated per node, stddev                     20.9%          25.9%
memory imbalance (stddev/mean)                        0.449          0.458
pending pods whose cpu+memory fit a node                  1              1
pending pods whose cpu+memory fit no node                 1              1
free cpu too small for any pending pod                23.1%           7.7%
pods per zone imbalance (stddev/mean)                 0.200          0.600

pods per zone, A (seed 0): a=2 b=3
pods per zone, B (seed 0): a=4 b=1

placed differently (seed 0): 2 pods
  default/p1: A n2, B n1
  default/p2: A n2, B n1
seeds alone (seed 0 against seed 1): A moves 0 pods, B moves 0"

json=$("$BIN" compare "${ARGS[@]}" --output json)
expect_eq "json: placed differently" "$(jq -c .placedDifferently <<<"$json")" \
  '[{"pod":"default/p1","a":"n2","b":"n1"},{"pod":"default/p2","a":"n2","b":"n1"}]'
expect_eq "json: cpu over time at 0, 57, 60, 120, 180 s (per mille)" \
  "$(jq -c '[.policies[].runs[0].overTime | map(.cpuMean * 1000 | round) | (.[0], .[19], .[20], .[40], .[60])]' <<<"$json")" \
  '[100,100,225,325,467,250,250,375,475,567]'
expect_eq "json: latency and histogram" \
  "$(jq -c '[.policies[].runs[0] | .latencySeconds.p50, .latencySeconds.p90, .cpuHistogram]' <<<"$json")" \
  '[0,180,[0,0,1,0,1,0,0,1,0,0],0,180,[0,0,1,0,0,0,0,2,0,0]]'
expect_eq "json: stranded cpu" "$(jq -c '[.policies[].mean.strandedCpu * 1000 | round]' <<<"$json")" '[231,77]'

# Errors name what was expected.
expect_eq "no config: exit 2" "$("$BIN" compare "$F/trace.yaml" >/dev/null 2>&1; echo $?)" "2"
expect_contains "no config: message" "$("$BIN" compare "$F/trace.yaml" 2>&1)" \
  "luasched compare: expected one trace file and --config flags (one per policy), got 1 file and 0 --config"
expect_eq "bad --seeds" "$("$BIN" compare "${ARGS[@]}" --seeds 0 2>&1)" \
  'luasched compare: --seeds: expected a number from 1 to 1000, got "0"'
expect_contains "bad config file names it" "$("$BIN" compare "$F/trace.yaml" --config "$F/least-allocated.yaml" --config /nonexistent.yaml 2>&1)" \
  "/nonexistent.yaml"

# HTML: one self-contained page, rendered by a real browser.
"$BIN" compare "${ARGS[@]}" --output html -o "$TMP/report.html"
expect_eq "html: exit 0" "$?" "0"
html=$(cat "$TMP/report.html")
expect_eq "html: nothing fetched from elsewhere" "$(grep -Eo '(src|href)="[^"]*"' "$TMP/report.html" | wc -l)" "0"
expect_eq "html: no script" "$(grep -c '<script' "$TMP/report.html")" "0"
expect_eq "html: five charts" "$(grep -o 'class="chart"' "$TMP/report.html" | wc -l)" "5"
expect_contains "html: summary row" "$html" "<tr><td>cpu allocated per node, mean</td><td>46.7%</td><td>56.7%</td></tr>"
expect_contains "html: diff row" "$html" "<tr><td>default/p1</td><td>n2</td><td>n1</td></tr>"

require_tool chromium chromium
require_tool python3 python3
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1700 \
  --screenshot="$TMP/report.png" "file://$TMP/report.html" >/dev/null 2>&1
expect_eq "screenshot taken" "$(test -s "$TMP/report.png" && echo yes)" "yes"
# The rendered page: both policies' colours (#1f77b4, #ff7f0e) cover many
# pixels (lines and bars were drawn), and the DOM the browser built holds the
# tables' rows and the charts' shapes.
counts=$(python3 "$(dirname "$0")/png_colors.py" "$TMP/report.png" 1f77b4 ff7f0e)
expect_eq "both series drawn (over 2000 pixels each)" \
  "$(awk '{print ($1 > 2000) " " ($2 > 2000)}' <<<"$counts")" "1 1"
dom=$(chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$TMP/report.html" 2>/dev/null)
expect_eq "rendered: summary rows" "$(grep -o '<tr><td>' <<<"$dom" | wc -l)" "18"
expect_eq "rendered: polylines with points" "$(grep -Eo '<polyline[^>]*points="[0-9]' <<<"$dom" | wc -l)" "8"
expect_eq "rendered: bars" "$(grep -o 'class="bar"' <<<"$dom" | wc -l)" "30"

[ "$failures" -eq 0 ]
