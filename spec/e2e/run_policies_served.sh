#!/usr/bin/env bash
# End to end over HTTP with the policy plugins (plugins/policies/): `luasched simulate --serve`
# serves a scenario's cluster (NodeResourceTopology custom resources, NodeMetrics, nodes with load
# annotations)
# and `luasched run` schedules it with the scenario's profile. The placements and the pending pod's
# message must be the ones the scenario states for `simulate` (worked by hand there).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
SCEN=$ROOT/spec/scenarios

node_of() { api "/api/v1/namespaces/default/pods/$1" | jq -r '.spec.nodeName // "none"'; }

# The scenario's profile with the served cluster's connection.
config_for() {
  { cat "$1"; printf 'clientConnection: {kubeconfig: "%s"}\nleaderElection: {leaderElect: false}\n' \
      "$KUBECONFIG_FILE"; } > "$TMP/config.yaml"
  echo "$TMP/config.yaml"
}

# NodeResourceTopologyMatch: the topology objects are watched through the served API.
serve_start "$SCEN/node_resource_topology_match-single-numa-node.yaml"
run_start --config "$(config_for "$SCEN/profile-node-resource-topology-match.yaml")"
wait_bound 4 60 || echo "FAIL: 4 pods were not bound within 60 s"
expect_eq "small on worker-a" "$(node_of small)" "worker-a"
expect_eq "big on worker-b (no NUMA zone of worker-a holds 6 cpu)" "$(node_of big)" "worker-b"
expect_eq "two on worker-a" "$(node_of two)" "worker-a"
expect_eq "huge stays pending" "$(node_of huge)" "none"
for _ in $(seq 1 300); do   # up to 60 s
  msg=$(api /api/v1/namespaces/default/pods/huge |
        jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
  [ -n "$msg" ] && break
  sleep 0.2
done
expect_eq "huge's message is upstream's" "$msg" \
  "0/2 nodes are available: 1 cannot align container, 1 cannot align pod."
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

# TargetLoadPacking on node annotations (the served nodes carry them).
serve_start "$SCEN/target_load_packing-annotations.yaml"
run_start --config "$(config_for "$SCEN/profile-target-load-packing.yaml")"
wait_bound 4 60 || echo "FAIL: 4 pods were not bound within 60 s"
got=""
for p in p1 p2 p3 p4; do got="$got $p=$(node_of $p)"; done
expect_eq "TargetLoadPacking packs as in simulate" "$got" " p1=node-a p2=node-b p3=node-b p4=node-a"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

# TargetLoadPacking on the metrics API: run polls NodeMetrics from the served metrics.k8s.io.
serve_start "$SCEN/target_load_packing-node-metrics.yaml"
run_start --config "$(config_for "$SCEN/profile-target-load-packing.yaml")"
wait_bound 4 60 || echo "FAIL: 4 pods were not bound within 60 s"
got=""
for p in web-1 web-2 web-3 web-4; do got="$got $p=$(node_of $p)"; done
expect_eq "TargetLoadPacking on NodeMetrics packs as in simulate" "$got" \
  " web-1=node-c web-2=node-a web-3=node-c web-4=node-b"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

# LoadVariationRiskBalancing on node annotations (average and standard deviation).
serve_start "$SCEN/load_variation_risk_balancing-annotations.yaml"
run_start --config "$(config_for "$SCEN/profile-load-variation-risk-balancing.yaml")"
wait_bound 2 60 || echo "FAIL: 2 pods were not bound within 60 s"
expect_eq "LoadVariationRiskBalancing prefers the steadier node" "$(node_of web-1) $(node_of web-2)" "node-b node-b"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

[ "$failures" -eq 0 ]
