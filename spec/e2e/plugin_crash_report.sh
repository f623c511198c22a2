#!/usr/bin/env bash
# End to end (issue 11): a signal raised while plugin code runs is never a
# silent death. `luasched simulate` runs a plugin whose Filter loops on the pod
# `a` (time budget 30 s); SIGSEGV is sent to the process meanwhile. It must
# print the plugin, the extension point, the pod and the Lua traceback (with
# the plugin's file and line), then die of the signal (status 139).
. "$(dirname "$0")/lib.bash"
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/spin.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Spin")
local A = ls.intern("a")
function P:filter(_, pod)
  if pod.name == A then
    while true do end
  end
end
return P
LUA
cat > "$TMP/config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
luasched: {pluginTimeoutMilliseconds: 30000, instructionBudget: 100000000000}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Spin}]
YAML
cat > "$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec: {containers: [{name: c, image: app}]}
YAML
"$BIN" simulate "$TMP/cluster.yaml" --config "$TMP/config.yaml" --plugin-path "$TMP/plugins" \
  > "$TMP/out" 2> "$TMP/err" &
PID=$!
# In the loop once the process and its worker (the plugin code runs in a
# child process, docs/plugins/worker.md) have run 0.5 s of CPU (starting takes
# a tenth of that): a condition, where a fixed sleep was too short on a loaded machine.
cpu_ticks() {
  local p t=0
  for p in "$PID" $(pgrep -P "$PID"); do
    t=$(( t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0) ))
  done
  echo "$t"
}
looping() { [ "$(cpu_ticks)" -ge $(( $(getconf CLK_TCK) / 2 )) ]; }
wait_until 120 looping || echo "FAIL: the plugin did not start looping within 120 s"
kill -SEGV "$PID"
wait_exit "$PID" 60; RC=$?
expect_eq "dies of the signal" "$RC" "139"
expect_eq "names the plugin, the extension point and the pod" "$(grep '^luasched: fatal' "$TMP/err")" \
  "luasched: fatal signal 11 (Segmentation fault) in plugin code: plugin Spin, extension point Filter, pod default/a"
expect_contains "prints the Lua traceback" "$(cat "$TMP/err")" "stack traceback:"
expect_contains "the traceback has the plugin's line" "$(cat "$TMP/err")" "$TMP/plugins/spin.lua:6:"
[ "$failures" -eq 0 ]
