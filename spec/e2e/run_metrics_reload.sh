#!/usr/bin/env bash
# End to end: what `luasched run` serves and how it reloads. Against the served
# cluster, with a configuration naming a Lua plugin: /healthz, /livez and
# /readyz answer ok once synced; /metrics passes `promtool check metrics` and
# counts the attempts; /configz is the completed configuration; logs are JSON
# with --logging-format json. Rewriting the plugin reloads it
# (luasched_reloads_total{result="success"}), and a syntax error keeps the old
# code, is logged with its file and line and counted as a failure.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
D=$TMP/cfg
mkdir -p "$D/plugins"
cat > "$D/plugins/prefer.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Prefer")
function P:score() return 0 end
return P
LUA
luajit "$ROOT/bench/make_cluster.lua" 5 20 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
# With --config, the deprecated --kubeconfig flag is ignored (as upstream):
# the file names the kubeconfig.
cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$D/plugins"]}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Prefer, weight: 3}]
YAML

run_on_free_port "$D/config.yaml" --logging-format json
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 20 60 || echo "FAIL: not every pod was bound"
expect_eq "/healthz" "$(get /healthz)" "ok"
expect_eq "/livez" "$(get /livez)" "ok"
expect_eq "/readyz" "$(get /readyz)" "ok"
get /metrics > "$TMP/metrics"
require_tool promtool prometheus
promtool check metrics < "$TMP/metrics" > "$TMP/promtool" 2>&1
expect_eq "promtool check metrics passes" "$?:$(cat "$TMP/promtool")" "0:"
expect_contains "attempts counted" "$(cat "$TMP/metrics")" \
  'scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 20'
expect_contains "extension points timed" "$(cat "$TMP/metrics")" \
  'scheduler_framework_extension_point_duration_seconds_count{extension_point="Score",status="Success",profile="default-scheduler"} 20'
# Plugin calls are timed in one cycle in ten (cycles 1 and 11 of 20), on one node in 16
# (of these 5 nodes, the first).
expect_contains "plugin calls timed in sampled cycles" "$(cat "$TMP/metrics")" \
  'scheduler_plugin_execution_duration_seconds_count{plugin="NodeResourcesFit",extension_point="Filter",status="Success"} 2'
expect_contains "incoming pods counted" "$(cat "$TMP/metrics")" \
  'scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"} 20'
# The Lua state's memory (issue 11, limits by default): a gauge in bytes per
# profile (each has its own state), held by the runtime and the loaded
# plugins, so above zero and under the default limit of 1 GiB
# (luasched.memoryLimitBytes, unset in this configuration).
lua_bytes=$(awk '$1 == "luasched_lua_memory_bytes{profile=\"default-scheduler\"}" {print $2}' "$TMP/metrics")
expect_eq "the Lua state's memory is on /metrics, within the default limit" \
  "$(awk -v b="${lua_bytes:-0}" 'BEGIN { print (b > 0 && b < 1073741824) ? "yes" : "no: " b }')" "yes"
expect_eq "/configz is the completed configuration" \
  "$(get /configz | jq -r '.componentconfig.profiles[0].plugins.multiPoint.enabled[] | select(.name == "Prefer") | .weight')" "3"
expect_eq "logs are JSON lines" "$(jq -r 'select(.msg == "Caches are synced") | .msg' "$TMP/run.err")" "Caches are synced"

cat > "$D/plugins/prefer.lua.tmp" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Prefer")
function P:score() return 1 end
return P
LUA
mv "$D/plugins/prefer.lua.tmp" "$D/plugins/prefer.lua"
metric_has() { get /metrics | grep -qF "$1"; }
wait_until 60 metric_has 'luasched_reloads_total{result="success"} 1'
get /metrics > "$TMP/metrics"
expect_contains "the rewrite is reloaded" "$(cat "$TMP/metrics")" 'luasched_reloads_total{result="success"} 1'
lua_bytes=$(awk '$1 == "luasched_lua_memory_bytes{profile=\"default-scheduler\"}" {print $2}' "$TMP/metrics")
expect_eq "the reloaded profile's new state is on /metrics" \
  "$(awk -v b="${lua_bytes:-0}" 'BEGIN { print (b > 0 && b < 1073741824) ? "yes" : "no: " b }')" "yes"
printf 'local P = {\nfunction P:score(\nreturn P\n' > "$D/plugins/prefer.lua.tmp"
mv "$D/plugins/prefer.lua.tmp" "$D/plugins/prefer.lua"
wait_until 60 metric_has 'luasched_reloads_total{result="failure"} 1'
expect_contains "the broken edit is counted" "$(get /metrics)" 'luasched_reloads_total{result="failure"} 1'
expect_contains "the broken edit is logged with its file and line" \
  "$(jq -r 'select(.msg == "Reload failed, the running profiles stay") | .err' "$TMP/run.err")" "prefer.lua:2:"
expect_eq "still healthy" "$(get /healthz)" "ok"

run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
