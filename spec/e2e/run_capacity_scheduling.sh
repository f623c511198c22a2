#!/usr/bin/env bash
# CapacityScheduling over HTTP: `luasched simulate --serve` serves the reclaim scenario
# (spec/scenarios/capacity_scheduling-reclaim-borrowed.yaml: two ElasticQuotas, quota1
# borrowing) and `luasched run` (the plugin's events name elasticquotas.v1alpha1.
# scheduling.x-k8s.io, so run watches them) must place the pods as `simulate` does:
# q2-a on n4, q2-b on n1 after preempting q1-a, q1-d pending with upstream's message.
# Skipped (77) while the served API does not serve custom resources.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
CLUSTER=$ROOT/spec/scenarios/capacity_scheduling-reclaim-borrowed.yaml

serve_start "$CLUSTER"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
  "$SERVER_URL/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas")
if [ "$code" = "404" ]; then
  serve_stop
  echo "SKIP: the served API does not serve custom resources (elasticquotas: HTTP 404)"
  exit 77
fi
expect_eq "both ElasticQuotas are served" \
  "$(api /apis/scheduling.x-k8s.io/v1alpha1/elasticquotas | jq '.items | length')" "2"
{
  echo "apiVersion: kubescheduler.config.k8s.io/v1"
  echo "kind: KubeSchedulerConfiguration"
  echo "clientConnection: {kubeconfig: \"$KUBECONFIG_FILE\", contentType: application/json}"
  echo "leaderElection: {leaderElect: false}"
  sed -n '/^profiles:/,$p' "$ROOT/spec/scenarios/profile-capacity-scheduling.yaml"
} > "$TMP/cfg.yaml"
"$BIN" run --secure-port 0 --config "$TMP/cfg.yaml" > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
node_of() { api "/api/v1/namespaces/$1/pods/$2" | jq -r '.spec.nodeName // ""'; }
for _ in $(seq 1 300); do   # up to 60 s
  [ "$(node_of quota2 q2-b)" = "n1" ] && break
  sleep 0.2
done
expect_eq "q2-a is on n4" "$(node_of quota2 q2-a)" "n4"
expect_eq "q2-b reclaimed quota2's min on n1" "$(node_of quota2 q2-b)" "n1"
expect_eq "q1-a (quota1, over its min) was preempted" \
  "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
     "$SERVER_URL/api/v1/namespaces/quota1/pods/q1-a")" "404"
msg=$(api /api/v1/namespaces/quota1/pods/q1-d | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
case "$msg" in
  *"Pod quota1/q1-d is rejected in PreFilter because"*) ;;
  *) echo "FAIL: q1-d's condition: $msg"; failures=$((failures + 1)) ;;
esac
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
