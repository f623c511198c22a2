#!/usr/bin/env bash
# End to end (issue 11, red team): the binding hooks cannot stall `luasched
# run` either. A plugin hot-reloaded into a running scheduler catches the
# time budget's error with pcall and loops on in PreBind (pod late-1), and
# runs a backtracking Lua pattern (in C: no hook fires) in PostBind (pod
# late-2). Before the fix the watchdog never interrupted PreBind, Bind or
# PostBind, and either plugin held every later pod back for good. Now each
# call is cut off at its budget: late-1 fails with the budget's error,
# late-2 and late-3 are bound, and SIGTERM stops the process within
# seconds (not held by the plugin).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
D=$TMP/cfg
mkdir -p "$D/plugins"
printf 'local ls = require("luasched")\nlocal P = ls.plugin("Guard")\nfunction P:pre_bind() end\nreturn P\n' \
  > "$D/plugins/guard.lua"
luajit "$ROOT/bench/make_cluster.lua" 2 4 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$D/plugins"], pluginTimeoutMilliseconds: 400}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Guard}]
YAML
run_on_free_port "$D/config.yaml"
get() { curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 4 60 || echo "FAIL: the first pods were not bound"

cat > "$D/plugins/guard.lua.tmp" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Guard")
function P:pre_bind(_, pod)
  if ls.str(pod.name) ~= "late-1" then return nil end
  while true do pcall(function() while true do end end) end
end
function P:post_bind(_, pod)
  if ls.str(pod.name) ~= "late-2" then return end
  local s = string.rep("a", 40)
  s:find(string.rep("a*", 40) .. "b")
end
return P
LUA
mv "$D/plugins/guard.lua.tmp" "$D/plugins/guard.lua"
reloaded() { get /metrics | grep -q 'luasched_reloads_total{result="success"} 1'; }
wait_until 60 reloaded
expect_contains "the hostile plugin is reloaded" "$(get /metrics)" 'luasched_reloads_total{result="success"} 1'
for p in late-1 late-2 late-3; do
  curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
    -X POST "$SERVER_URL/api/v1/namespaces/default/pods" \
    -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"'$p'"},"spec":{"containers":[{"name":"c","image":"x"}]}}' \
    > /dev/null
done
wait_bound 6 60 || echo "FAIL: late-2 and late-3 were not bound"
node_of() { api "/api/v1/namespaces/default/pods/$1" | jq -r '.spec.nodeName // ""'; }
expect_eq "late-1 is not bound (its PreBind was cut off)" "$(node_of late-1)" ""
expect_eq "late-2 is bound (PostBind cut off after the binding)" "$([ -n "$(node_of late-2)" ] && echo yes)" "yes"
expect_eq "late-3 is bound" "$([ -n "$(node_of late-3)" ] && echo yes)" "yes"
cond=$(api /api/v1/namespaces/default/pods/late-1 | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
expect_contains "late-1's condition names PreBind, the plugin and the budget" "$cond" \
  'running PreBind plugin "Guard": plugin exceeded its time budget of 400 ms'
expect_eq "the scheduler is alive" "$(kill -0 "$RUN_PID" 2>/dev/null && echo yes)" "yes"
start=$(date +%s%N)
kill -TERM "$RUN_PID"
wait_exit "$RUN_PID" 60; RUN_RC=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
# about 0.3 s on a quiet machine (the watchdog's hook, then its 250 ms grace);
# 10 s leaves room for a loaded one, and a plugin holding the stop never ends
expect_eq "SIGTERM stops run within 10 s" "$([ "$ms" -le 10000 ] && echo yes || echo "no: $ms ms")" "yes"
expect_eq "run exits 0 after SIGTERM" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
