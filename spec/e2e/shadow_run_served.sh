#!/usr/bin/env bash
# Shadow policies in `luasched run`, against the served cluster: the live
# policy (LeastAllocated, NodeAffinity) binds the four pods of
# fixtures/shadow/cluster.yaml while the shadow (MostAllocated, no
# NodeAffinity) is evaluated on every attempt without binding. Worked by hand
# (NodeResourcesFit: least = (cap - req) * 100 / cap, most = req * 100 / cap,
# per resource, then the weighted mean, integer division):
#   p1 (1 cpu, 1Gi): live big (87+93)/2=90 > small (50+75)/2=62; shadow small (50+25)/2=37 > big (12+6)/2=9
#   p2 (same; big holds p1): live big (75+87)/2=81 > small 62; shadow small 37 > big (25+12)/2=18
#   p3 (3 cpu): only big fits, both pick it
#   p4 (nodeSelector disk=ssd, no node has it): live unschedulable; the shadow
#      has no NodeAffinity and picks big (75+25)/2=50 > small (50+25)/2=37
# so 4 evaluations, 2 node disagreements (p1, p2), 1 schedulability (p4), and
# the bindings are the live policy's alone. An edit of the shadow file reloads it.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
F=$ROOT/spec/e2e/fixtures/shadow

serve_start "$F/cluster.yaml"
{ cat "$F/least.yaml"; printf 'clientConnection: {kubeconfig: "%s"}\nleaderElection: {leaderElect: false}\n' \
    "$KUBECONFIG_FILE"; } > "$TMP/live.yaml"
cp "$F/most.yaml" "$TMP/shadow.yaml"
run_on_free_port "$TMP/live.yaml" --shadow "$TMP/shadow.yaml" -v 2
# the served admin token: /metrics needs an authorized caller
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 3 60 || echo "FAIL: p1, p2 and p3 were not bound"
evaluated_4() {
  get /metrics > "$TMP/metrics" && grep -q '^luasched_shadow_evaluations_total{profile="default-scheduler"} 4$' "$TMP/metrics"
}
wait_until 60 evaluated_4
M=$(grep '^luasched_shadow_' "$TMP/metrics" | sort)
expect_eq "shadow counts on /metrics" "$M" \
'luasched_shadow_disagreements_total{profile="default-scheduler",kind="node"} 2
luasched_shadow_disagreements_total{profile="default-scheduler",kind="schedulability"} 1
luasched_shadow_evaluations_total{profile="default-scheduler"} 4
luasched_shadow_failures_total{profile="default-scheduler"} 0'
expect_eq "the live policy's bindings" \
  "$(api /api/v1/pods | jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-")"' | sort)" \
  "p1 big
p2 big
p3 big
p4 -"
LOG=$(cat "$TMP/run.err")
expect_contains "p1's disagreement logged with both nodes" "$LOG" \
  '"Shadow chose another node" pod="default/p1" profile="default-scheduler" node="big" shadowNode="small"'
expect_contains "p4's disagreement logged" "$LOG" \
  '"Shadow disagrees on schedulability" pod="default/p4" profile="default-scheduler" node="<none>" shadowNode="big"'
# Hot reload: the shadow's file changes, the shadow is rebuilt from it.
sleep 1.1   # the edit must carry another modification time (whole seconds) than the file's first version
sed 's/MostAllocated/LeastAllocated/' "$F/most.yaml" > "$TMP/shadow.yaml"
wait_until 60 grep -q "Reloaded profiles and plugins.*shadow.yaml" "$TMP/run.err"
expect_contains "the shadow is reloaded on an edit" "$(cat "$TMP/run.err")" "\"Reloaded profiles and plugins\" config=\"$TMP/shadow.yaml\""
run_stop
expect_eq "luasched run exits 0" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
