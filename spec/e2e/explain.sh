#!/usr/bin/env bash
# End to end: `luasched explain`. Expected numbers worked out by hand:
# web asks 1 cpu / 1Gi. node-c has an untolerated NoSchedule taint.
# LeastAllocated: node-a cpu (4000-1000)*100/4000 = 75, memory (8-1)*100/8 = 87 -> (75+87)/2 = 81
#                 node-b cpu 7000*100/8000 = 87, memory 15*100/16 = 93 -> 90
# TaintToleration: no PreferNoSchedule taint anywhere: raw 0, reverse-normalized 100, x3 = 300.
# Totals: node-a 381, node-b 390 -> node-b.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures
ARGS="--config $F/issue2-profile.yaml"

out=$("$BIN" explain $F/explain-cluster.yaml shop/web $ARGS 2>&1)
expect_eq "exit code" "$?" "0"
expect_eq "report" "$out" 'Pod shop/web: 1 attempt
Attempt 1 at 0s:
  Filter (in the order the nodes were examined):
    node-a                   passed
    node-b                   passed
    node-c                   rejected by TaintToleration: node(s) had untolerated taint(s)
  Score (plugin raw -> normalized x weight):
    node-a                   TaintToleration 0 -> 300; NodeResourcesFit 81 -> 81; total 381
    node-b                   TaintToleration 0 -> 300; NodeResourcesFit 90 -> 90; total 390
  Result: node-b, the highest total (390)'

json=$("$BIN" explain $F/explain-cluster.yaml shop/web $ARGS --output json 2>&1)
expect_contains "json record" "$json" '"totalScore":{"node-a":381,"node-b":390}'

"$BIN" explain $F/explain-cluster.yaml shop/nope $ARGS >/dev/null 2>"$TMP/err"
expect_eq "unknown pod: exit 2" "$?" "2"
expect_contains "unknown pod: message" "$(cat "$TMP/err")" "luasched explain: pod shop/nope was not scheduled by this run"
"$BIN" explain $F/explain-cluster.yaml >/dev/null 2>"$TMP/err"
expect_eq "missing POD: exit 2" "$?" "2"
expect_contains "missing POD: message" "$(cat "$TMP/err")" "luasched explain: expected 2 arguments, got 1"

[ "$failures" -eq 0 ]
