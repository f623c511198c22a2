#!/usr/bin/env bash
# Custom resources and metrics.k8s.io over the served API, then `luasched run` reading them.
# The cluster file (fixtures/custom-metrics) has a custom resource (Widget, example.com/v1),
# NodeMetrics for three nodes and a PodMetrics. Checked on the served API: discovery lists both
# groups; Widgets are listed and watched (an ADDED event for the one in the file, then one for a
# Widget created through the API); NodeMetrics and PodMetrics are served at metrics-server's paths
# (get and list, enough for `kubectl top nodes`) and refuse watch (405, as metrics-server). Then `luasched run` with two plugins:
# ArchAndLoad (whole-object view of pods and nodes, NodeMetrics and PodMetrics polled every 200ms;
# pods wait in PreFilter until every node has its metrics and default/web's PodMetrics is in) binds p to a2 (amd64 like the pod's annotation, 500m
# of 4 cpu used against a1's 3500m; x1 is arm64, idle), and
# WidgetGate keeps q pending until a Widget w-q is created through the API (a custom resource
# watch event moves it back to the active queue), then q is bound.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
F=$ROOT/spec/e2e/fixtures/custom-metrics

serve_start "$F/cluster.yaml"

groups=$(api /apis | jq -r '.groups[] | "\(.name) \(.preferredVersion.version)"')
expect_contains "discovery lists example.com/v1" "$groups" "example.com v1"
expect_contains "discovery lists metrics.k8s.io/v1beta1" "$groups" "metrics.k8s.io v1beta1"
expect_eq "widgets are namespaced, listed with every verb" \
  "$(api /apis/example.com/v1 | jq -c '.resources[] | select(.name == "widgets") | [.kind, .namespaced, (.verbs | index("watch") != null)]')" \
  '["Widget",true,true]'
expect_eq "NodeMetrics: get and list only" \
  "$(api /apis/metrics.k8s.io/v1beta1 | jq -c '.resources[] | select(.name == "nodes") | [.kind, .namespaced, .verbs]')" \
  '["NodeMetrics",false,["get","list"]]'
expect_eq "the widget of the file is listed" \
  "$(api /apis/example.com/v1/namespaces/default/widgets | jq -r '[.items[].metadata.name] | join(",")')" "w-first"
expect_eq "NodeMetrics of a1 at metrics-server's path" \
  "$(api /apis/metrics.k8s.io/v1beta1/nodes/a1 | jq -r '"\(.usage.cpu) \(.window) \(.timestamp)"')" "3500m 30s 2026-11-24T12:00:00Z"
expect_eq "three NodeMetrics listed" "$(api /apis/metrics.k8s.io/v1beta1/nodes | jq '.items | length')" "3"
expect_eq "PodMetrics listed by namespace" \
  "$(api /apis/metrics.k8s.io/v1beta1/namespaces/default/pods | jq -r '.items[0].containers[0].usage.cpu')" "10m"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
  "$SERVER_URL/apis/metrics.k8s.io/v1beta1/nodes?watch=true")
expect_eq "no watch on metrics.k8s.io (405)" "$code" "405"
require_tool kubectl kubernetes-client
expect_eq "kubectl top nodes reads the NodeMetrics (87% = 3500m of 4 cpu)" \
  "$(kubectl --kubeconfig "$KUBECONFIG_FILE" top nodes --no-headers 2>&1 | awk '{print $1, $2, $3}')" \
  "a1 3500m 87%
a2 500m 12%
x1 0m 0%"
api "/apis/example.com/v1/namespaces/default/widgets?watch=true&timeoutSeconds=1" > "$TMP/watch.json"
expect_eq "a widget watch sends the file's widget as ADDED" \
  "$(jq -r '"\(.type) \(.object.metadata.name)"' "$TMP/watch.json")" "ADDED w-first"

cat > "$TMP/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBECONFIG_FILE}
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter: {enabled: [{name: WidgetGate}, {name: ArchAndLoad}]}
    filter: {enabled: [{name: ArchAndLoad}]}
    score: {enabled: [{name: ArchAndLoad, weight: 50}]}
YAML
run_start --config "$TMP/config.yaml" --plugin-path "$F/plugins" --metrics-poll-interval 200ms
wait_bound 1 60 || echo "FAIL: p was not bound within 60 s"
expect_eq "p is bound to a2 (right architecture, least loaded)" \
  "$(api /api/v1/namespaces/default/pods/p | jq -r .spec.nodeName)" "a2"
expect_eq "q waits for its widget" "$(api /api/v1/namespaces/default/pods/q | jq -r '.spec.nodeName // "none"')" "none"
curl -sS --fail --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -X POST "$SERVER_URL/apis/example.com/v1/namespaces/default/widgets" \
  -d '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-q"},"spec":{"size":1}}' > /dev/null
wait_bound 2 60 || echo "FAIL: q was not bound within 60 s of its widget"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
expect_eq "both pods bound once" "$(grep -c '^default/[pq]: bound to ' "$TMP/serve.out")" "2"
[ "$failures" -eq 0 ]
