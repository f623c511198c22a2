#!/usr/bin/env bash
# End to end: `luasched bench` on a staged workload (ops, spec/e2e/fixtures/bench-staged.yaml).
# Expected counts worked from the fixture: 20 waiting pods + 4 gated = 24 measured (the
# collector takes namespace "waiting"); 5 others; 2 + 4 + 2 updates; 5 deletions. Events:
# the first NodeUpdate (unschedulable -> schedulable) moves the 20 pods NodeUnschedulable
# rejected (its hint queues them), the second visits none (they already left); the last two
# updates change nothing any plugin registered ("by none"); each gated pod's update is an
# UnscheduledPodUpdate that requeues it; 29 bindings (AssignedPodAdd), 5 AssignedPodDelete.
# Attempts: 20 + 20 (after the move) + 5 + 4 = 49. No timing is asserted. Bad ops exit 2.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures/bench-staged.yaml

out=$("$BIN" bench $F)
expect_eq "text: exit 0" "$?" "0"
expect_contains "text: nodes" "$out" "nodes              2 (percentageOfNodesToScore: adaptive)"
expect_contains "text: other pods" "$out" "other pods         5 scheduled, 0 unschedulable (not measured); 8 updated, 5 deleted"
expect_contains "text: measured" "$out" "measured pods      24: 24 scheduled, 0 unschedulable"
expect_contains "text: attempts" "$out" ", 49 attempts; CPU "
expect_contains "text: events" "$out" \
  "cluster events     46: 44 registered by a plugin (24 pods visited, 24 requeued: 0.55 per event), 2 by none (0 visited)"
expect_contains "text: NodeUpdate" "$out" \
  "NodeUpdate           4: 2 registered (20 pods visited, 20 requeued: 5.00 per event), 2 by none"
expect_contains "text: gated pods' updates" "$out" \
  "UnscheduledPodUpdate 4: 4 registered (4 pods visited, 4 requeued: 1.00 per event), 0 by none"
expect_contains "text: bindings" "$out" \
  "AssignedPodAdd       29: 29 registered (0 pods visited, 0 requeued: 0.00 per event), 0 by none"
expect_contains "text: deletions" "$out" \
  "AssignedPodDelete    5: 5 registered (0 pods visited, 0 requeued: 0.00 per event), 0 by none"
expect_eq "text: not stalled" "$(grep -c '^stalled' <<<"$out")" "0"

json=$("$BIN" bench $F --output json)
expect_eq "json: exit 0" "$?" "0"
for field in '"measuredPods":24' '"scheduled":24' '"initScheduled":5' '"updated":8' '"deleted":5' \
             '"NodeUpdate":{"events":4,"registered":2,"podsVisited":20,"requeues":20}' \
             '"UnscheduledPodUpdate":{"events":4,"registered":4,"podsVisited":4,"requeues":4}'; do
  expect_contains "json: $field" "$json" "$field"
done

# a barrier nothing can satisfy ends the run, reported
cat >"$TMP/stall.yaml" <<'YAML'
kind: Workload
name: stall
ops:
- {opcode: startCollectingMetrics}
- opcode: createNodes
  count: 1
  template: {kind: Node, metadata: {name: n}, spec: {unschedulable: true}, status: {capacity: {pods: "9", cpu: "1"}}}
- {opcode: createPods, count: 3, skipWaitToCompletion: true, template: {kind: Pod, metadata: {generateName: p-}, spec: {containers: [{name: c, image: i}]}}}
- {opcode: barrier}
- {opcode: stopCollectingMetrics}
YAML
stall=$("$BIN" bench "$TMP/stall.yaml")
expect_eq "stall: exit 0" "$?" "0"
expect_contains "stall: reported" "$stall" \
  "stalled            no pod is active or backing off and no op is pending: waiting on $TMP/stall.yaml:9: ops[3]: its pods cannot all be scheduled"
expect_contains "stall: pods left unschedulable" "$stall" "measured pods      3: 0 scheduled, 3 unschedulable"

# template values that render to digits are numbers (hostPort 80 for both pods: one per node);
# createNodes makes a CSINode per node from csiNode
cat >"$TMP/ports.yaml" <<'YAML'
kind: Workload
name: ports
ops:
- {opcode: startCollectingMetrics}
- opcode: createNodes
  count: 2
  template: {kind: Node, metadata: {generateName: n-}, status: {capacity: {pods: "9", cpu: "1"}}}
  csiNode: {apiVersion: storage.k8s.io/v1, kind: CSINode, spec: {drivers: [{name: d, allocatable: {count: 1}}]}}
- {opcode: createPods, count: 3, skipWaitToCompletion: true, template: {kind: Pod, metadata: {generateName: p-}, spec: {containers: [{name: c, image: i, ports: [{hostPort: "8{{ mod .Index 1 }}", containerPort: 80}]}]}}}
- {opcode: barrier}
- {opcode: stopCollectingMetrics}
YAML
ports=$("$BIN" bench "$TMP/ports.yaml")
expect_contains "ports: two fit, the third finds port 80 taken on both nodes" "$ports" \
  "measured pods      3: 2 scheduled, 1 unschedulable"
expect_contains "ports: the two CSINodes and the namespace were added" "$ports" "ObjectAdd            3: "

# bad ops
bad() {  # NAME YAML-OPS EXPECTED-MESSAGE
  printf 'kind: Workload\nname: x\nops:\n%s\n' "$2" >"$TMP/bad.yaml"
  "$BIN" bench "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
  expect_eq "$1: exit 2" "$?" "2"
  expect_eq "$1: message" "$(cat "$TMP/err")" "luasched bench: $TMP/bad.yaml:$3"
}
bad "unknown opcode" "- {opcode: churn}" \
  "4: ops[0].opcode: expected createNodes, createPods, barrier, updateAny, deletePods, startCollectingMetrics or stopCollectingMetrics"
bad "unknown field" "- {opcode: barrier, count: 3}" '4: ops[0]: unknown field "count"'
bad "bad stage" "- {opcode: barrier, stageRequirement: Bound}" "4: ops[0].stageRequirement: expected Attempted or Scheduled"
bad "no collector" "- {opcode: barrier}" "3: ops: expected one startCollectingMetrics and one stopCollectingMetrics"
bad "bad template form" "- {opcode: startCollectingMetrics}
- {opcode: createNodes, count: 1, template: {kind: Node, metadata: {name: 'n-{{ .Name }}'}}}
- {opcode: stopCollectingMetrics}" \
  '5: ops[1]: "n-{{ .Name }}": expected {{ .Index }}, {{ .Count }}, {{ div .Index N }} or {{ mod .Index N }}'
bad "ops and nodes" "- {opcode: barrier}
nodes: {count: 1, template: {kind: Node}}" "5: nodes: a staged workload (ops) creates everything through its ops"

[ "$failures" -eq 0 ]
