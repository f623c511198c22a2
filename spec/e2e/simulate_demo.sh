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
# by creationTimestamp. Scores: TaintToleration x3, NodeResourcesFit x1
# (LeastAllocated on non-zero requests), NodeResourcesBalancedAllocation x1
# (actual requests; S = (1 - |f_cpu - f_mem| / 2) * 100 truncated, with the pod
# and without it; since v1.36 score = 50 + (50 + S_with - S_without) / 2),
# ImageLocality x1 (no node lists images: sum 0, clamped to 23 MiB -> 0 on every
# node). NodeAffinity, NodePorts, InterPodAffinity and NodeDeclaredFeatures have
# nothing to do for these pods (Skip).
# Without a pending pod: a1 runs 1000m/2Gi of 4000m/8Gi (0.25, 0.25), a2 4000m/8Gi of
# 8000m/16Gi (0.5, 0.5), b2 and c1 nothing: S_without = 100 on all four at first.
# checkout (1 cpu, 1Gi): feasible a1, c1, a2, b2 (b1 tainted, c2 cordoned).
#   TaintToleration (x3): c1 has one untolerated PreferNoSchedule taint ->
#   reverse-normalized 0, the others 100 -> 300.
#   LeastAllocated: a1 cpu (4000-2000)*100/4000=50, mem (8-3)*100/8=62 -> 56
#                   a2 cpu 3000*100/8000=37, mem 7*100/16=43 -> 40
#                   b2 cpu 1000*100/2000=50, mem 3*100/4=75 -> 62
#                   c1 cpu 15000*100/16000=93, mem 31*100/32=96 -> 94
#   Balanced S_with: a1 2000/4000=0.5, 3/8=0.375: std 0.0625 -> 93
#             a2 5000/8000=0.625, 9/16=0.5625: std 0.03125 -> 96
#             b2 1000/2000=0.5, 1/4=0.25: std 0.125 -> 87
#             c1 1000/16000=0.0625, 1/32=0.03125: std 0.015625 -> 98
#   final: a1 50+(50+93-100)/2=71, a2 50+46/2=73, b2 50+37/2=68, c1 50+48/2=74
#   totals a1 300+56+71=427, a2 300+40+73=413, b2 300+62+68=430, c1 94+74=168 -> node-b2.
# web-0 (2 cpu, 2Gi): b2 (1000m free) fails Insufficient cpu.
#   LeastAllocated: a1 cpu (4000-3000)*100/4000=25, mem (8-4)*100/8=50 -> 37
#                   a2 cpu 2000*100/8000=25, mem 6*100/16=37 -> 31
#                   c1 cpu 14000*100/16000=87, mem 30*100/32=93 -> 90
#   Balanced: a1 3000/4000=0.75, 4/8=0.5: std 0.125 -> 87 -> 50+(50+87-100)/2=68
#             a2 6000/8000=0.75, 10/16=0.625: std 0.0625 -> 93 -> 50+43/2=71
#             c1 2000/16000=0.125, 2/32=0.0625: std 0.03125 -> 96 -> 50+46/2=73
#   totals a1 300+37+68=405, a2 300+31+71=402, c1 90+73=163 -> node-a1.
# web-1: a1 (1000m free) and b2 fail Insufficient cpu; a2 402 as above, c1 163 -> node-a2.
# trainer (4 cpu, 16Gi, 2 GPUs, tolerates dedicated=gpu): only b1 has GPUs -> node-b1.
# agent (no requests: 100m / 200Mi for NodeResourcesFit; BalancedAllocation
#   skips a pod that requests nothing): a1 cpu (4000-3100)*100/4000=22, mem
#   (8192-4296)*100/8192=47 -> 34 (334); a2 cpu (8000-6100)*100/8000=23, mem
#   (16384-10440)*100/16384=36 -> 29 (329); b2 cpu (2000-1100)*100/2000=45, mem
#   (4096-1224)*100/4096=70 -> 57 (357); c1 99 (+0) -> node-b2.
# batch-huge (12 cpu, 48Gi): cpu short on a1, a2, b2; memory short on a1, a2,
#   b2, c1; b1 tainted; c2 unschedulable. Preemption: 48Gi exceeds every
#   node's allocatable memory, so NodeResourcesFit's verdicts are Unresolvable
#   too and no node is a candidate.
expected='shop/web-0: bound to node-a1
shop/web-1: bound to node-a2
ml/trainer: bound to node-b1
shop/checkout: bound to node-b2
ops/agent: bound to node-b2
ml/batch-huge: pending: 0/6 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 3 Insufficient cpu, 4 Insufficient memory. no new claims to deallocate, preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.
ops/other-scheduler: left alone: no profile for schedulerName "my-custom-scheduler"
summary: 6 nodes, 9 pods: 5 bound, 1 unschedulable, 2 already running, 0 gated, 1 not ours
queues: 0 active, 0 backoff, 1 unschedulable, 0 gated'
# batch-huge stays among the unschedulable pods: no event can help it in a static cluster.
expect_eq "placements and summary" "$(printf '%s\n' "$out" | grep -v '^throughput:')" "$expected"
expect_contains "throughput line" "$out" "throughput: 6 attempts in"
expect_eq "notice for skipped kinds" "$(cat "$TMP/err")" "notice: skipped 1 Deployment object (not used by the scheduler)"

# The JSON explain record of the unschedulable pod names each node's verdicts.
json=$("$BIN" simulate examples/demo-cluster.yaml --output json 2>/dev/null)
expect_contains "json: taint verdict" "$json" '"node-b1":{"NodeUnschedulable":"passed","NodeName":"passed","TaintToleration":"node(s) had untolerated taint(s)"}'
expect_contains "json: fit verdict with two reasons" "$json" '"node-a2":{"NodeUnschedulable":"passed","NodeName":"passed","TaintToleration":"passed","NodeResourcesFit":"Insufficient cpu, Insufficient memory"}'
# checkout's scores: raw TaintToleration count 1 on c1, final 0; NodeResourcesFit 62
# and BalancedAllocation 68 on b2; DynamicResources 0 (no claims; a Score plugin since
# v1.35, before BalancedAllocation in Score order); ImageLocality 0 (skipped plugins are not
# listed).
expect_contains "json: raw and final scores" "$json" '"node-c1":{"TaintToleration":1,"NodeResourcesFit":94,"DynamicResources":0,"NodeResourcesBalancedAllocation":74,"ImageLocality":0}'
expect_contains "json: final scores weighted" "$json" '"node-b2":{"TaintToleration":300,"NodeResourcesFit":62,"DynamicResources":0,"NodeResourcesBalancedAllocation":68,"ImageLocality":0}'
expect_contains "json: summary" "$json" '"summary":{"nodes":6,"pods":9,"bound":5,"unschedulable":1,"running":2,"gated":0,"notOurs":1'

[ "$failures" -eq 0 ]
