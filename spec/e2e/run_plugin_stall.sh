#!/usr/bin/env bash
# End to end (issue 11): a plugin cannot stall `luasched run`. Against the
# served cluster, a plugin whose Filter loops forever (a loop the JIT
# compiles) on one pod: the other pods are bound, the looping pod fails with
# the time budget, /livez fails while the loop makes no progress for longer
# than --liveness-stall-seconds and is ok again after; a hot reload of a file
# whose top-level code loops is cut off by the budget, counted as a failure,
# and the running plugins go on scheduling; SIGTERM during a looping call
# stops the process within 2 s.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
D=$TMP/cfg
mkdir -p "$D/plugins"
cat > "$D/plugins/hang.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Hang", { defaults = { pod = "" } })
function P:init(args) self.pod = ls.intern(args.pod) end
function P:filter(_, pod)
  if pod.name == self.pod then
    local x = 0
    while true do x = x + 1 end
  end
end
return P
LUA
luajit "$ROOT/bench/make_cluster.lua" 3 12 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
write_config() {   # write_config POD: Hang loops on that pod
  cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$D/plugins"], pluginTimeoutMilliseconds: 3000}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Hang}]
  pluginConfig:
  - name: Hang
    args: {pod: $1}
YAML
}
write_config pod-000012

run_on_free_port "$D/config.yaml" --liveness-stall-seconds 1
# the served admin token: /metrics needs an authorized caller (health paths do not)
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
STALLED="[+]ping ok
[-]scheduling-progress failed
livez check failed"
stalled() { [ "$(get '/livez?verbose')" = "$STALLED" ]; }
metric_has() { get /metrics | grep -qF "$1"; }

# pod-000012 is last in the queue: while its Filter loops (3 s budget), the
# loop makes no pass; after 1 s /livez fails (polled: each try loops 3 s)
wait_until 60 stalled
expect_eq "/livez fails while the loop is stalled and pods wait" "$(get '/livez?verbose')" "$STALLED"
wait_bound 11 60 || echo "FAIL: the other pods were not bound"
# the configuration now names no pod: reloaded, pod-000012 binds at its next try
write_config none
wait_bound 12 60 || echo "FAIL: pod-000012 was not bound after the reload"
expect_contains "the new configuration is reloaded" "$(get /metrics)" 'luasched_reloads_total{result="success"} 1'
expect_eq "/livez ok again" "$(get /livez)" "ok"
# counted against the plugin whose code ran, and still there after the reload
overruns=$(get /metrics | awk '$1 == "luasched_plugin_budget_overruns_total{plugin=\"Hang\",extension_point=\"Filter\",profile=\"default-scheduler\"}" {print $2}')
expect_eq "the looping pod's calls were cut off and counted against Hang" "$([ "${overruns:-0}" -ge 1 ] && echo yes)" "yes"
expect_eq "no overrun counted against another plugin" \
  "$(get /metrics | grep '^luasched_plugin_budget_overruns_total{' | grep -vc 'plugin="Hang"')" "0"

# a reload of a file whose top-level code loops: cut off, counted, old set stays
cat > "$D/plugins/hang.lua.tmp" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Hang", { defaults = { pod = "" } })
local x = 0
while true do x = x + 1 end
return P
LUA
mv "$D/plugins/hang.lua.tmp" "$D/plugins/hang.lua"
wait_until 60 metric_has 'luasched_reloads_total{result="failure"} 1'
expect_contains "the looping reload is counted as a failure" "$(get /metrics)" 'luasched_reloads_total{result="failure"} 1'
expect_contains "the failure names the plugin and the budget" "$(cat "$TMP/run.err")" \
  'plugin \"Hang\" ('"$D"'/plugins/hang.lua, top-level code): exceeded its time budget of 3000 ms'

# SIGTERM while a plugin call loops: stopped before its 3 s budget would end it. The plugin is
# rewritten to loop in Filter for every pod, then a new pod is created.
cat > "$D/plugins/hang.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Hang", { defaults = { pod = "" } })
function P:filter()
  local x = 0
  while true do x = x + 1 end
end
return P
LUA
wait_until 60 metric_has 'luasched_reloads_total{result="success"} 2'
expect_contains "the fixed file is reloaded" "$(get /metrics)" 'luasched_reloads_total{result="success"} 2'
curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
  -X POST "$SERVER_URL/api/v1/namespaces/default/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"late"},"spec":{"containers":[{"name":"c","image":"x"}]}}' \
  > /dev/null
wait_until 60 stalled   # the late pod's Filter loops
start=$(date +%s%N)
kill -TERM "$RUN_PID"
wait_exit "$RUN_PID" 60; RUN_RC=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
# about 0.3 s on a quiet machine; the loop would hold it 3 s, and forever without the cut-off
expect_eq "SIGTERM stops run within 2.5 s during a looping call" "$([ "$ms" -le 2500 ] && echo yes || echo "no: $ms ms")" "yes"
expect_eq "run exits 0 after SIGTERM" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
