#!/usr/bin/env bash
# End to end: `luasched simulate examples/demo-cluster.yaml` with the built-in
# default profile. The placements below were worked out by hand from the
# reference formulas (see the comments); node order is zone round-robin:
# node-a1, node-b1, node-c1, node-a2, node-b2, node-c2.
. "$(dirname "$0")/lib.bash"

out=$("$BIN" simulate examples/demo-cluster.yaml 2>"$TMP/err")
rc=$?
expect_eq "exit code" "$rc" "0"

# Queue order: checkout (priority 1000 from PriorityClass critical) first, then
# by creationTimestamp.
# checkout (1 cpu, 1Gi): feasible a1, c1, a2, b2 (b1 tainted, c2 cordoned).
#   TaintToleration (x3): c1 has one untolerated PreferNoSchedule taint ->
#   reverse-normalized 0, the others 100 -> 300.
#   LeastAllocated: a1 cpu (4000-2000)*100/4000=50, mem (8-3)*100/8=62 -> 56
#                   a2 cpu 3000*100/8000=37, mem 7*100/16=43 -> 40
#                   b2 cpu 1000*100/2000=50, mem 3*100/4=75 -> 62
#                   c1 cpu 15000*100/16000=93, mem 31*100/32=96 -> 94
#   totals a1 356, a2 340, b2 362, c1 94 -> node-b2.
# web-0 (2 cpu, 2Gi): b2 now lacks cpu. a1 cpu 1000*100/4000=25, mem 4*100/8=50
#   -> 37 (+300 = 337); a2 cpu 2000*100/8000=25, mem 6*100/16=37 -> 31 (331);
#   c1 cpu 87, mem 93 -> 90 (+0) -> node-a1.
# web-1: a1 lacks cpu now; a2 331 beats c1 90 -> node-a2.
# trainer (4 cpu, 16Gi, 2 GPUs, tolerates dedicated=gpu): only b1 has GPUs -> node-b1.
# agent (no requests: 100m / 200Mi for scoring): b2 cpu 900*100/2000=45,
#   mem (4096-1224)*100/4096=70 -> 57 (357); a1 cpu 22, mem 47 -> 34 (334);
#   a2 cpu 23, mem 36 -> 29 (329) -> node-b2.
# batch-huge (12 cpu, 48Gi): cpu short on a1, a2, b2; memory short on a1, a2,
#   b2, c1; b1 tainted; c2 unschedulable.
expected='shop/web-0: bound to node-a1
shop/web-1: bound to node-a2
ml/trainer: bound to node-b1
shop/checkout: bound to node-b2
ops/agent: bound to node-b2
ml/batch-huge: pending: 0/6 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, 3 Insufficient cpu, 4 Insufficient memory.
ops/other-scheduler: left alone: no profile for schedulerName "my-custom-scheduler"
summary: 6 nodes, 9 pods: 5 bound, 1 unschedulable, 2 already running, 0 gated, 1 not ours
queues: 0 active, 0 backoff, 1 unschedulable, 0 gated'
# batch-huge stays among the unschedulable pods: no event can help it in a static cluster.
expect_eq "placements and summary" "$(printf '%s\n' "$out" | grep -v '^throughput:')" "$expected"
expect_contains "throughput line" "$out" "throughput: 6 attempts in"
expect_eq "notice for skipped kinds" "$(cat "$TMP/err")" "notice: skipped 1 Deployment object (not used by the scheduler)"

# The JSON explain record of the unschedulable pod names each node's verdicts.
json=$("$BIN" simulate examples/demo-cluster.yaml --output json 2>/dev/null)
expect_contains "json: taint verdict" "$json" '"node-b1":{"NodeUnschedulable":"passed","NodeName":"passed","TaintToleration":"node(s) had untolerated taint {dedicated: gpu}"}'
expect_contains "json: fit verdict with two reasons" "$json" '"node-a2":{"NodeUnschedulable":"passed","NodeName":"passed","TaintToleration":"passed","NodeResourcesFit":"Insufficient cpu, Insufficient memory"}'
# checkout's scores: raw TaintToleration count 1 on c1, final 0; NodeResourcesFit 62 on b2.
expect_contains "json: raw and final scores" "$json" '"node-c1":{"TaintToleration":1,"NodeResourcesFit":94}'
expect_contains "json: final scores weighted" "$json" '"node-b2":{"TaintToleration":300,"NodeResourcesFit":62}'
expect_contains "json: summary" "$json" '"summary":{"nodes":6,"pods":9,"bound":5,"unschedulable":1,"running":2,"gated":0,"notOurs":1'

[ "$failures" -eq 0 ]
