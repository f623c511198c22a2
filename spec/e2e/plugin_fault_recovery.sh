#!/usr/bin/env bash
# End to end: a faulty plugin, then a hot reload of its fixed version. For each
# fault (raises, returns a wrong type, runs forever, allocates without bound,
# calls os.execute), a long-running simulation schedules three pods: the one
# the fault hits gets an Error naming the plugin and backs off while the others
# bind; the plugin file is then rewritten with a fixed version, the reload is
# counted, and the failed pod binds on its next try. No pod is lost.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures

faulty_body() {
  case $1 in
    raises) echo 'error("boom")' ;;
    wrong-type) echo 'do return "yes" end' ;;
    loops-forever) echo 'local x = 0 while true do x = x + 1 end' ;;
    allocates-forever) echo 'for i = 1, 1e9 do kept[#kept + 1] = string.rep("x", 1024) .. i end' ;;
    calls-os-execute) echo 'os.execute("touch /tmp/luasched-sandbox-escaped")' ;;
  esac
}

write_plugin() {   # write_plugin DIR BODY: atomically, as editors do
  cat > "$1/flaky.lua.tmp" <<LUA
local ls = require("luasched")
local P = ls.plugin("Flaky")
local kept = {}
function P:init() self.key, self.yes = ls.intern("fault"), ls.intern("yes") end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.yes then
    $2
  end
  return kept[1]
end
return P
LUA
  mv "$1/flaky.lua.tmp" "$1/flaky.lua"
}

all_bound() { [ "$(grep -c '^default/[abc]: bound to node-' "$1")" = 3 ]; }

for fault in raises wrong-type loops-forever allocates-forever calls-os-execute; do
  D=$TMP/$fault
  mkdir -p "$D/plugins"
  write_plugin "$D/plugins" "$(faulty_body $fault)"
  cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Flaky}]
luasched:
  pluginPath: ["$D/plugins"]
  pluginTimeoutMilliseconds: 600
  memoryLimitBytes: 67108864
YAML
  "$BIN" simulate "$F/two-nodes.yaml" --config "$D/config.yaml" --realtime --hold > "$D/out" 2> "$D/err" &
  pid=$!
  # the faulty attempt first (its pod pending with the Error), then the fix;
  # the pod binds on its next try after the reload
  wait_until 60 grep -q '^default/[abc]: pending: ' "$D/out" || echo "FAIL: $fault: no faulty attempt within 60 s"
  write_plugin "$D/plugins" "-- fixed"
  wait_until 60 all_bound "$D/out" || echo "FAIL: $fault: not every pod bound within 60 s of the fix"
  kill -TERM "$pid"; wait_exit "$pid" 60; rc=$?
  expect_eq "$fault: exit 3 (an attempt ended in a plugin error before the fix)" "$rc" "3"
  expect_eq "$fault: every pod bound after the fix" "$(grep -c '^default/[abc]: bound to node-' "$D/out")" "3"
  expect_contains "$fault: the fix was reloaded" "$(cat "$D/out")" "reloads: 1 succeeded, 0 failed"
  expect_contains "$fault: the faulty attempt was an Error, counted" "$(cat "$D/out")" "plugin faults: 1 attempts ended in Error"
done
expect_eq "os.execute never ran" "$([ -e /tmp/luasched-sandbox-escaped ] && echo escaped || echo contained)" "contained"

[ "$failures" -eq 0 ]
