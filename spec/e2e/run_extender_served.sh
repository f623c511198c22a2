#!/usr/bin/env bash
# A profile with one HTTP extender (filter and prioritize, weight 5) in
# `luasched run` against the served API (`luasched simulate --serve`): the
# extender is asked once per pod per verb, no pod lands on a node it rejects,
# and every placement is the one `luasched simulate` makes with the same
# configuration, file and seed. Then the same with the extender as the
# binder: it POSTs each binding to the API server itself, luasched does not.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
EXT=${LUASCHED_TEST_EXTENDER:?LUASCHED_TEST_EXTENDER must point to the test extender}
EXT_PID=
BINDER_PID=

"$EXT" "$TMP/ext.port" "$TMP/ext.log" &
EXT_PID=$!
wait_until 60 test -s "$TMP/ext.port"
URL=http://127.0.0.1:$(cat "$TMP/ext.port")

# 6 nodes (two the extender rejects), 12 pending pods of 1 cpu: 4 fit per node
{
  echo "apiVersion: v1"; echo "kind: List"; echo "items:"
  for n in n1 n2 n3 n4 bad5 gone6; do
    echo "- {apiVersion: v1, kind: Node, metadata: {name: $n}, status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}"
  done
  for i in $(seq -w 1 12); do   # names in file order: the served API orders equal pods by name
    echo "- {apiVersion: v1, kind: Pod, metadata: {name: p$i, namespace: default, uid: uid-p$i}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"1\", memory: 1Gi}}}]}}"
  done
} > "$TMP/cluster.yaml"

write_config() { # write_config KUBECONFIG [URL [EXTRA]]
  cat > "$TMP/cfg.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$1"}
leaderElection: {leaderElect: false}
extenders:
- {urlPrefix: "${2:-$URL}", filterVerb: filter, prioritizeVerb: prioritize, weight: 5${3:-}}
EOF
}

write_config ""
"$BIN" simulate "$TMP/cluster.yaml" --config "$TMP/cfg.yaml" --seed 3 | grep ': bound to ' | sort > "$TMP/expected"
expect_eq "simulate binds all 12 pods" "$(wc -l < "$TMP/expected")" "12"
expect_eq "simulate: none on a node the extender rejects" "$(grep -c -E 'bad5|gone6' "$TMP/expected")" "0"
: > "$TMP/ext.log"

serve_start "$TMP/cluster.yaml"
write_config "$KUBECONFIG_FILE"
run_start --config "$TMP/cfg.yaml" --seed 3
wait_bound 12 60 || echo "FAIL: not every pod was bound within 60 s"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
grep ': bound to ' "$TMP/serve.out" | sort > "$TMP/actual"
expect_eq "run: the placements of luasched simulate" "$(cat "$TMP/actual")" "$(cat "$TMP/expected")"
expect_eq "run: filter called once per pod" "$(grep -c '^filter ' "$TMP/ext.log")" "12"
expect_eq "run: prioritize called once per pod (at least 2 feasible nodes each time)" \
  "$(grep -c '^prioritize ' "$TMP/ext.log")" "12"
expect_eq "run: the extender got all 6 nodes for the first pod" "$(grep -m1 '^filter ' "$TMP/ext.log")" \
  "filter default/p01 nodes=6"

# ---- the extender binds (bindVerb), through the API server
serve_start "$TMP/cluster.yaml"
TEST_EXTENDER_KUBECONFIG=$KUBECONFIG_FILE "$EXT" "$TMP/binder.port" "$TMP/binder.log" &
BINDER_PID=$!
wait_until 60 test -s "$TMP/binder.port"
write_config "$KUBECONFIG_FILE" "http://127.0.0.1:$(cat "$TMP/binder.port")" ", bindVerb: bind-api"
run_start --config "$TMP/cfg.yaml" --seed 3
wait_bound 12 60 || echo "FAIL: not every pod was bound within 60 s"
run_stop
expect_eq "binder: luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "binder: the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
grep ': bound to ' "$TMP/serve.out" | sort > "$TMP/actual"
expect_eq "binder: the placements of luasched simulate" "$(cat "$TMP/actual")" "$(cat "$TMP/expected")"
expect_eq "binder: the extender bound all 12" "$(grep -c '^bind ' "$TMP/binder.log")" "12"
expect_eq "binder: the extender's bindings are those the server recorded" \
  "$(sed -n 's#^bind default/\([^ ]*\) \(.*\)#default/\1: bound to \2#p' "$TMP/binder.log" | sort)" "$(cat "$TMP/actual")"
expect_eq "binder: no binding failed" "$(grep -c -i 'fail' "$TMP/run.err")" "0"

[ "$failures" -eq 0 ]
