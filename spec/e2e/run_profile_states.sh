#!/usr/bin/env bash
# End to end: one Lua state per profile (issue 11, limits per profile). Two
# profiles against the served cluster; the first's Filter plugin allocates
# without bound, under its own `luasched: {memoryLimitBytes: 32 MiB}`. Its
# pods get the memory-limit Error (their state rebuilt alone), the second
# profile's pods all bind meanwhile, and /metrics has one
# luasched_lua_memory_bytes series per profile, the hog's held under its limit.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
D=$TMP/cfg
mkdir -p "$D/plugins"
cat > "$D/plugins/hog.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Hog")
local kept = {}
function P:filter()
  for i = 1, 1e9 do kept[#kept + 1] = string.rep("x", 1024) .. i end
  return ls.SUCCESS
end
return P
LUA
# 3 nodes, 6 pods: pod-000001 and pod-000002 go to the hog's profile.
luajit "$ROOT/bench/make_cluster.lua" 3 6 |
  jq '.items |= map(if .kind == "Pod" and (.metadata.name == "pod-000001" or .metadata.name == "pod-000002")
                    then .spec.schedulerName = "hog-scheduler" else . end)' > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$D/plugins"]}
profiles:
- schedulerName: hog-scheduler
  plugins:
    filter:
      enabled: [{name: Hog}]
  luasched: {memoryLimitBytes: 33554432}
- schedulerName: default-scheduler
YAML

run_on_free_port "$D/config.yaml" --logging-format json
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 4 60 || echo "FAIL: the second profile's pods were not all bound"
sleep 1   # a window for the hog's pod to be (wrongly) bound: a check that nothing happens
expect_eq "the second profile's pods bound, the hog's not" \
  "$(api /api/v1/pods | jq -r '.items[] | "\(.metadata.name) \(.spec.schedulerName // "default-scheduler") \(if (.spec.nodeName // "") != "" then "bound" else "pending" end)"' | sort)" \
"pod-000001 hog-scheduler pending
pod-000002 hog-scheduler pending
pod-000003 default-scheduler bound
pod-000004 default-scheduler bound
pod-000005 default-scheduler bound
pod-000006 default-scheduler bound"
for p in pod-000001 pod-000002; do
  expect_eq "$p failed on its profile's own limit" \
    "$(api /api/v1/namespaces/default/pods/$p | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | "\(.reason): \(.message)"')" \
    'SchedulerError: running "Hog" filter plugin: plugin exceeded the Lua memory limit of 33554432 bytes in filter at '"$D/plugins/hog.lua"':4 (the Lua state was restarted)'
done
get /metrics > "$TMP/metrics"
mem() { awk -v k="luasched_lua_memory_bytes{profile=\"$1\"}" '$1 == k {print $2}' "$TMP/metrics"; }
hog=$(mem hog-scheduler) def=$(mem default-scheduler)
expect_eq "one memory series per profile, each state above zero" \
  "$(awk -v h="${hog:-0}" -v d="${def:-0}" 'BEGIN { print (h > 0 && d > 0) ? "yes" : "no: " h " " d }')" "yes"
expect_eq "the hog's state is held within twice its limit (the allowance of a call cut off)" \
  "$(awk -v h="${hog:-0}" 'BEGIN { print (h <= 2 * 33554432) ? "yes" : "no: " h }')" "yes"
restarts=$(awk '$1 == "luasched_lua_restarts_total{plugin=\"Hog\",extension_point=\"Filter\",profile=\"hog-scheduler\"}" {print $2}' "$TMP/metrics")
expect_eq "the hog's state was restarted, counted against Hog in its profile" "$(awk -v r="${restarts:-0}" 'BEGIN { print (r >= 1) ? "yes" : "no: " r }')" "yes"
expect_eq "no restart counted against the default profile" "$(grep -c '^luasched_lua_restarts_total{.*profile="default-scheduler"' "$TMP/metrics")" "0"
expect_eq "still healthy" "$(get /healthz)" "ok"

# A reload without the hog's profile builds new states: /metrics then has the
# remaining profile's series only.
cat > "$D/config.yaml.tmp" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$D/plugins"]}
profiles:
- schedulerName: default-scheduler
YAML
mv "$D/config.yaml.tmp" "$D/config.yaml"
reloaded() { get /metrics > "$TMP/metrics" && grep -q 'luasched_reloads_total{result="success"} 1' "$TMP/metrics"; }
wait_until 60 reloaded
expect_eq "after the reload, one memory series, the remaining profile's" \
  "$(awk '$1 ~ /^luasched_lua_memory_bytes[{]/ { sub(/[}].*/, "}", $1); print $1 }' "$TMP/metrics")" \
  'luasched_lua_memory_bytes{profile="default-scheduler"}'

run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
