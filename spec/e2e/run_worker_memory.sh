#!/usr/bin/env bash
# End to end (issue 24): a plugin that grows memory until the worker process
# reaches its own memory limit (RLIMIT_AS) ends the worker, not the command.
# - `luasched run --worker-memory-limit 768Mi` against the served cluster: a
#   Filter that keeps 1 MiB strings for one pod (its profile's Lua limit set
#   above the worker's) ends the worker; the supervisor logs why (out of
#   memory, the limit) naming the plugin and the pod, starts another worker,
#   the pod is retried, and after 3 such ends it is marked (a PodScheduled
#   condition naming the plugin and the kill); the other pods are bound, none
#   twice; run's /metrics counts the ends by plugin and reason
#   (luasched_worker_restarts_total).
# - `luasched simulate` with LUASCHED_WORKER_MEMORY_LIMIT=768Mi: the run is
#   repeated with the pod failed as an Error naming the plugin, the limit and
#   the call; the other pods are bound.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
if [ -n "${LUASCHED_SANITIZED:-}" ]; then
  # ASan maps terabytes of shadow memory: a sanitized worker runs without an
  # address-space limit (worker/confine.c), so there is no limit to reach.
  echo "skipped: no worker memory limit under the address sanitizer"
  exit 77
fi
RUN_PID=; SERVE_PID=
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/grow.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Grow", { defaults = { grow = "" } })
local kept = {}
function P:init(args) self.grow = ls.intern(args.grow) end
function P:filter(_, pod)
  if pod.name ~= self.grow then return nil end
  for i = 1, 1e9 do kept[#kept + 1] = string.rep("x", 1048576) .. i end
end
return P
LUA
luajit "$ROOT/bench/make_cluster.lua" 3 8 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
config() {
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
$1
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Grow}]
  pluginConfig:
  - name: Grow
    args: {grow: pod-000008}
  luasched: {memoryLimitBytes: 17179869184}
YAML
}
config "clientConnection: {kubeconfig: \"$KUBECONFIG_FILE\"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: [\"$TMP/plugins\"]}" > "$TMP/config.yaml"
run_on_free_port "$TMP/config.yaml" --worker-memory-limit 768Mi --worker-kill-backoff 60s
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 7 90 || echo "FAIL: the other pods were not bound while a plugin exhausted the worker's memory"
marked=
for _ in $(seq 1 600); do
  marked=$(api /api/v1/namespaces/default/pods/pod-000008 |
    jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .reason + ": " + .message')
  case $marked in *"ended 3 times"*) break ;; esac
  sleep 0.1
done
expect_contains "after 3 ends the pod is marked as an Error naming the plugin" "$marked" \
  'SchedulerError: running Filter plugin "Grow": the worker process ended 3 times while this plugin ran for this pod'
expect_contains "the mark says the worker ran out of memory, and its limit" "$marked" \
  "out of memory: the worker reached its memory limit of 805306368 bytes"
expect_contains "the supervisor logged why, naming the call" "$(cat "$TMP/run.err")" \
  'out of memory: the worker reached its memory limit of 805306368 bytes'
expect_contains "the log names the profile, plugin, extension point and pod" \
  "$(grep 'The worker process ended; starting another' "$TMP/run.err" | head -1)" \
  'in plugin call default-scheduler/Grow/Filter/default/pod-000008 in filter at '"$TMP/plugins/grow.lua"':5'
expect_contains "and the plugin and pod as fields" \
  "$(grep 'The worker process ended; starting another' "$TMP/run.err" | head -1)" 'plugin="Grow" pod="default/pod-000008"'
expect_eq "three workers were ended for it" "$(grep -c 'The worker process ended; starting another' "$TMP/run.err")" "3"
expect_eq "the supervisor's /metrics counts the ends by plugin and reason" \
  "$(get /metrics | grep '^luasched_worker_restarts_total')" \
  'luasched_worker_restarts_total{plugin="Grow",reason="out_of_memory"} 3'
expect_eq "the pod was not bound" "$(api /api/v1/namespaces/default/pods/pod-000008 | jq -r '.spec.nodeName // ""')" ""
kill -TERM "$RUN_PID"; wait "$RUN_PID"; RUN_RC=$?; RUN_PID=
expect_eq "run stops cleanly" "$RUN_RC" "0"
serve_stop; SERVE_PID=
expect_eq "no pod bound twice (server exit status)" "$SERVE_RC" "0"
expect_contains "no refused binding" "$(grep '^summary:' "$TMP/serve.out")" "0 refused"

# simulate: its forked worker under the same kind of limit
config "" > "$TMP/sim.yaml"
LUASCHED_WORKER_MEMORY_LIMIT=768Mi timeout 120 "$BIN" simulate "$TMP/cluster.json" --config "$TMP/sim.yaml" \
  --plugin-path "$TMP/plugins" > "$TMP/sim.out" 2> "$TMP/sim.err"
expect_eq "simulate completes (exit 3: an attempt ended in a plugin error)" "$?" "3"
expect_contains "the pod's Error names the plugin, the limit and the call" "$(grep '^default/pod-000008:' "$TMP/sim.out")" \
  'default/pod-000008: pending: running "Grow" filter plugin: the simulate worker process died of signal 6 (Aborted), out of memory: the worker reached its memory limit of 805306368 bytes'
expect_contains "and the call" "$(grep '^default/pod-000008:' "$TMP/sim.out")" \
  'in plugin call default-scheduler/Grow/Filter/default/pod-000008'
expect_eq "the other pods are bound" "$(grep -c ': bound to ' "$TMP/sim.out")" "7"
[ "$failures" -eq 0 ]
