#!/usr/bin/env bash
# End to end (issue 24): `simulate` and `check` run plugin code in a supervised
# worker process, so a plugin can neither hang nor crash them.
# - A Filter that hangs inside a C call (a pattern match that backtracks for
#   ever) on pod "hang": the supervisor ends the worker after the budget
#   (1 s) and its grace (2 s), runs the simulation again with that pod failed
#   as an Error of the plugin, and the run completes with its report: the
#   other pods bound, "hang" pending with the plugin named.
# - A JIT-compiled spin on pod "spin" is cut off inside the worker at its
#   budget, as before (the worker is not ended for it).
# - With a 30 s budget, the worker killed by SIGSEGV while the plugin hangs
#   on "hang", then the next one while it spins on "spin": the simulation
#   completes, and spin's Error names the signal, the plugin and the pod.
# - The worker runs its plugin code under the seccomp filter (no exec, no
#   socket, no open for writing) with its address space limited.
# - `check` of a plugin whose file hangs at load ends with status 2 naming it.
. "$(dirname "$0")/lib.bash"
PID=
mkdir -p "$TMP/plugins" "$TMP/slow"
cat > "$TMP/plugins/wreck.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Wreck")
local HANG, SPIN = ls.intern("hang"), ls.intern("spin")
function P:filter(_, pod)
  if pod.name == HANG then
    local s = string.rep("a", 40)
    return s:find(string.rep("a?", 40) .. s .. "b") and nil
  end
  if pod.name == SPIN then
    local x = 0
    while true do x = x + 1 end
  end
end
return P
LUA
config() {   # config BUDGET_MS PLUGIN
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
luasched: {pluginTimeoutMilliseconds: $1}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: $2}]
YAML
}
config 1000 Wreck > "$TMP/config.yaml"
config 30000 Wreck > "$TMP/config-long.yaml"
{
  printf 'apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
  for p in a hang spin b; do
    printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec: {containers: [{name: c, image: app}]}\n' "$p"
  done
} > "$TMP/cluster.yaml"

timeout 60 "$BIN" simulate "$TMP/cluster.yaml" --config "$TMP/config.yaml" --plugin-path "$TMP/plugins" \
  > "$TMP/out" 2> "$TMP/err"
expect_eq "simulate completes (exit 3: attempts ended in plugin errors)" "$?" "3"
expect_eq "the report: the hanging pod is an Error of the plugin, the spin is cut off, the others bound" \
  "$(grep '^default/' "$TMP/out")" \
  'default/a: bound to node-1
default/hang: pending: running "Wreck" filter plugin: the simulate worker process was ended by its supervisor: a plugin call ran past its budget of 1000 ms and the 2000 ms grace: default-scheduler/Wreck/Filter/default/hang in filter at '"$TMP/plugins/wreck.lua"':4
default/spin: pending: running "Wreck" filter plugin: plugin exceeded its time budget of 1000 ms in filter at '"$TMP/plugins/wreck.lua"':4 (the Lua state was restarted)
default/b: bound to node-1'
expect_contains "stderr says the run was repeated without the pod" "$(cat "$TMP/err")" \
  "running again with pod default/hang failed as an Error of plugin Wreck"

"$BIN" simulate "$TMP/cluster.yaml" --config "$TMP/config-long.yaml" --plugin-path "$TMP/plugins" \
  > "$TMP/out2" 2> "$TMP/err2" &
PID=$!
sleep 1.5
W=$(pgrep -P "$PID" | head -1)
# the worker runs its plugin code confined as run's worker is (8Gi: the default limit)
expect_eq "the simulate worker runs under a seccomp filter" \
  "$(grep -E '^(Seccomp|NoNewPrivs):' "/proc/$W/status" | tr -s '\t' ' ')" "NoNewPrivs: 1
Seccomp: 2"
if [ -z "${LUASCHED_SANITIZED:-}" ]; then   # a sanitized worker has no address-space limit (worker/confine.c)
  expect_eq "with its address space limited" "$(awk '/^Max address space/ {print $4, $5}' "/proc/$W/limits")" \
    "8589934592 8589934592"
fi
expect_eq "its supervisor is not confined" "$(awk '/^Seccomp:/ {print $2}' "/proc/$PID/status")" "0"
kill -SEGV "$W"
# the first signal lands in hang's call: the next worker fails it at once
for _ in $(seq 1 100); do grep -q 'running again with pod default/hang' "$TMP/err2" && break; sleep 0.1; done
# and spins on "spin" (30 s budget) when the second signal comes
sleep 1
W=$(pgrep -P "$PID" | head -1)
[ -n "$W" ] && kill -SEGV "$W"
wait "$PID"; RC=$?; PID=
expect_eq "simulate completes after its workers crashed (exit 3: plugin errors)" "$RC" "3"
expect_contains "spin's Error names the signal, the plugin and the pod" "$(grep '^default/spin' "$TMP/out2")" \
  'default/spin: pending: running "Wreck" filter plugin: the simulate worker process died of signal 11 (Segmentation fault) in plugin call default-scheduler/Wreck/Filter/default/spin in filter at '"$TMP/plugins/wreck.lua"':4'
expect_eq "the other pods are bound" "$(grep -c ': bound to node-1' "$TMP/out2")" "2"

cat > "$TMP/slow/slow_load.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("SlowLoad")
local s = string.rep("a", 40)
local _ = s:find(string.rep("a?", 40) .. s .. "b")
return P
LUA
config 1000 SlowLoad > "$TMP/slow.yaml"
timeout 60 "$BIN" check "$TMP/slow.yaml" --plugin-path "$TMP/slow" > "$TMP/out3" 2> "$TMP/err3"
expect_eq "check of a plugin that hangs at load fails as bad input" "$?" "2"
expect_eq "and names it, with what it was doing" "$(cat "$TMP/err3")" \
  'luasched check: the worker process was ended by its supervisor: a plugin call ran past its budget of 1000 ms and the 2000 ms grace: plugin "SlowLoad" ('"$TMP"'/slow/slow_load.lua, top-level code)'
[ "$failures" -eq 0 ]
