#!/usr/bin/env bash
# End to end: `explain` and `simulate --output json` tell every attempt in full
# (spec/e2e/fixtures/attempts.yaml): a pod that preempted, then bound through
# its nominated node; a pod that waited at Permit (with 3 feasible nodes it was
# scored: explain must not say a single node was chosen without scoring); one
# that timed out at Permit; a gated pod (in the JSON too).
# Hand-worked scores for pair-0 at 0s (0-request pod: non-zero defaults 100m
# cpu and 200Mi memory; low-0 was preempted, n1 is empty):
#   LeastAllocated n1: cpu (2000-100)*100/2000 = 95, memory (8192-200)*100/8192 = 97 -> 96
#   n2, n3: cpu 2000+100 > 2000 -> 0, memory (8192-400)*100/8192 = 95 -> 47
#   TaintToleration: no taints: 0, reversed 100, weight 3 -> 300.
#   DynamicResources (a Score plugin since v1.35, in Score order before ImageLocality): no
#   claims -> 0 on every node.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures
ARGS="--config $F/with-gang-pair.yaml --plugin-path $F/plugins"

out=$("$BIN" explain $F/attempts.yaml hp $ARGS 2>&1)
expect_eq "preempting pod" "$out" 'Pod default/hp: 2 attempts
Attempt 1 at 0s:
  Filter (in the order the nodes were examined):
    n1                       rejected by NodeResourcesFit: Insufficient cpu
    n2                       rejected by NodeResourcesFit: Insufficient cpu
    n3                       rejected by NodeResourcesFit: Insufficient cpu
  Score: not run (no node passed the filters)
  Result: not scheduled: 0/3 nodes are available: 3 Insufficient cpu.
  Preempted default/low-0
  Nominated to n1
Attempt 2 at 0s:
  Filter (the nominated node alone, as upstream tries it first):
    n1                       passed
  Score: not run (a single feasible node is chosen without scoring, as upstream does)
  Result: n1, its nominated node, which passed every filter'

out=$("$BIN" explain $F/attempts.yaml pair-0 $ARGS 2>&1)
expect_eq "pod that waited at Permit" "$out" 'Pod default/pair-0: 1 attempt
Attempt 1 at 0s:
  Filter (in the order the nodes were examined):
    n1                       passed
    n2                       passed
    n3                       passed
  Score (plugin raw -> normalized x weight):
    n1                       TaintToleration 0 -> 300; NodeResourcesFit 96 -> 96; DynamicResources 0 -> 0; ImageLocality 0 -> 0; total 396
    n2                       TaintToleration 0 -> 300; NodeResourcesFit 47 -> 47; DynamicResources 0 -> 0; ImageLocality 0 -> 0; total 347
    n3                       TaintToleration 0 -> 300; NodeResourcesFit 47 -> 47; DynamicResources 0 -> 0; ImageLocality 0 -> 0; total 347
  Permit: waited 20s, then allowed
  Result: n1, the highest total (396)'

out=$("$BIN" explain $F/attempts.yaml lone $ARGS 2>&1)
expect_contains "Permit timeout" "$out" 'Permit: waited 30s, then timed out at Gang
  Result: not scheduled: rejected due to timeout after waiting 30s at plugin Gang'
# activeQ is empty when the wait times out: backoffQ's head is taken at once
# (PopFromBackoffQ, on in v1.37), not after the 1 s backoff
expect_contains "the retry after the timeout" "$out" 'Attempt 2 at 30s:'

out=$("$BIN" explain $F/attempts.yaml held $ARGS 2>&1)
expect_eq "gated pod" "$out" 'Pod default/held: gated, never attempted: waiting for scheduling gates: [example.com/hold]'

json=$("$BIN" simulate $F/attempts.yaml $ARGS --output json 2>/dev/null)
pod() { printf '%s' "$json" | jq -c ".pods[] | select(.name == \"$1\") | $2"; }
expect_eq "gated pod in the JSON" "$(pod held '[.node, .gated, .attempts]')" \
  '[null,"waiting for scheduling gates: [example.com/hold]",[]]'
expect_eq "the deciding attempt on top (hp)" "$(pod hp '[.node, .nominatedNodeOnly, .evaluatedNodes, (.filter | keys), .filter.n1.NodeResourcesFit]')" \
  '["n1",true,1,["n1"],"passed"]'
expect_eq "hp's first attempt kept" "$(pod hp '.attempts[0] | [.result, .nominatedNode, .victims, .feasibleNodes, .filter.n2.NodeResourcesFit]')" \
  '["unschedulable","n1",["default/low-0"],0,"Insufficient cpu"]'
expect_eq "Permit wait in the JSON" "$(pod pair-0 '[.permit, .attempts[0].time, .feasibleNodes, .totalScore]')" \
  '[{"result":"allowed","waited":true,"waitSeconds":20,"wait":"20s"},0,3,{"n1":396,"n2":347,"n3":347}]'
expect_eq "Permit timeout in the JSON" "$(pod lone '.attempts[0].permit')" \
  '{"result":"timeout","waited":true,"waitSeconds":30,"wait":"30s","plugin":"Gang"}'
expect_eq "no Permit entry for a pod allowed at once" "$(pod pair-1 '.permit')" 'null'

"$BIN" explain $F/missing.yaml hp >/dev/null 2>"$TMP/err"
expect_contains "explain's errors are its own" "$(cat "$TMP/err")" "luasched explain: $F/missing.yaml: cannot read file"

[ "$failures" -eq 0 ]
