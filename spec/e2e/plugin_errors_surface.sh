#!/usr/bin/env bash
# Failures you cannot miss (issue 25, points 4 and 6).
# simulate: attempts that ended in a plugin error are counted apart from the
# unschedulable ones (summary line and JSON) and make the run exit 3, unless
# --allow-plugin-errors. run: a plugin raising on every pod is logged at error
# level at the default verbosity, in upstream's form ("Error scheduling pod;
# retrying" err=... pod=...) with the plugin, its file and line, at most one
# line per plugin per 10 s. With --config lacking clientConnection.kubeconfig,
# --kubeconfig is used (with a warning); /configz follows a hot reload.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
F=${LUASCHED_SOURCE_DIR:-.}/spec/e2e/fixtures

# ---- simulate
timeout 60 "$BIN" simulate "$F/two-nodes.yaml" --config "$F/with-raises.yaml" --plugin-path "$F/plugins" \
  > "$TMP/sim.out" 2> "$TMP/sim.err"
expect_eq "simulate: a plugin error exits 3" "$?" "3"
expect_contains "simulate: the summary counts the attempt apart" "$(cat "$TMP/sim.out")" \
  "summary: 2 nodes, 3 pods: 2 bound, 1 unschedulable, 0 already running, 0 gated, 0 not ours; 1 attempt ended in a plugin error"
expect_contains "simulate: says why it exits 3" "$(cat "$TMP/sim.err")" \
  "luasched simulate: 1 attempt ended in a plugin error (exit status 3; --allow-plugin-errors exits 0)"
timeout 60 "$BIN" simulate "$F/two-nodes.yaml" --config "$F/with-raises.yaml" --plugin-path "$F/plugins" \
  --output json --allow-plugin-errors > "$TMP/sim.json" 2> "$TMP/sim.err"
expect_eq "simulate --allow-plugin-errors exits 0" "$?" "0"
expect_eq "simulate: JSON summary.pluginErrorAttempts" "$(jq '.summary.pluginErrorAttempts' "$TMP/sim.json")" "1"
expect_eq "simulate: the unschedulable count is the pods'" "$(jq '.summary.unschedulable' "$TMP/sim.json")" "1"
timeout 60 "$BIN" simulate "$F/two-nodes.yaml" > /dev/null 2>&1
expect_eq "simulate without plugin errors exits 0" "$?" "0"

# ---- explain: the error with its file, line and the plugin's frames
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/deep.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Deep")
local function weigh(ni)
  local t = nil
  return t.capacity + ni.num_pods
end
function P:filter(_, _, ni)
  if weigh(ni) > 3 then return ls.unschedulable("heavy") end
end
return P
LUA
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n      enabled: [{name: Deep}]\n' > "$TMP/deep.yaml"
timeout 60 "$BIN" explain "$F/two-nodes.yaml" default/a --config "$TMP/deep.yaml" --plugin-path "$TMP/plugins" \
  > "$TMP/explain.out" 2>&1
expect_contains "explain: the error with its file and line" "$(cat "$TMP/explain.out")" \
  "Result: not scheduled: running \"Deep\" filter plugin: $TMP/plugins/deep.lua:5: attempt to index local 't' (a nil value)"
expect_contains "explain: the traceback, innermost first" "$(cat "$TMP/explain.out")" \
"  Traceback (the plugin's frames, innermost first):
    $TMP/plugins/deep.lua:5: in function 'weigh'
    $TMP/plugins/deep.lua:8: in function 'filter'"
timeout 60 "$BIN" explain "$F/two-nodes.yaml" default/a --config "$TMP/deep.yaml" --plugin-path "$TMP/plugins" \
  --output json > "$TMP/explain.json" 2>/dev/null
expect_eq "explain --output json: the traceback" "$(jq -c '.attempts[0].traceback | map(sub(".*/"; ""))' "$TMP/explain.json")" \
  '["deep.lua:5: in function '"'"'weigh'"'"'","deep.lua:8: in function '"'"'filter'"'"'"]'

# ---- run: every pod raises
{
  for n in 1 2; do
    printf 'apiVersion: v1\nkind: Node\nmetadata: {name: node-%d}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n---\n' "$n"
  done
  for p in 1 2 3 4 5 6; do
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, labels: {fault: "yes"}}\nspec: {containers: [{name: c, image: app}]}\n---\n' "$p"
  done
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: ok, namespace: default}\nspec: {containers: [{name: c, image: app}]}\n'
} > "$TMP/cluster.yaml"
serve_start "$TMP/cluster.yaml"
RUN_PID=""
write_config() {   # $1: percentageOfNodesToScore
  cat > "$TMP/config.yaml.tmp" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
percentageOfNodesToScore: $1
luasched: {pluginPath: ["$F/plugins"]}
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Raises}]
YAML
  mv "$TMP/config.yaml.tmp" "$TMP/config.yaml"
}
write_config 40
for _ in 1 2 3 4 5; do
  PORT=$(shuf -i 20000-60000 -n 1)
  "$BIN" run --config "$TMP/config.yaml" --kubeconfig "$KUBECONFIG_FILE" --bind-address 127.0.0.1 \
    --secure-port "$PORT" > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
  sleep 0.5
  kill -0 "$RUN_PID" 2>/dev/null && break
done
get() { curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 1 30 || echo "FAIL: the pod without the fault label was not bound"
sleep 1
expect_contains "run: --kubeconfig is used, with a warning" "$(cat "$TMP/run.err")" \
  '"Using --kubeconfig: the configuration has no clientConnection.kubeconfig (kube-scheduler ignores --kubeconfig when --config is given)"'
line=$(grep '"Error scheduling pod; retrying"' "$TMP/run.err" | head -1)
expect_eq "run: the error is logged at error level" "${line:0:1}" "E"
expect_contains "run: upstream's form, with the plugin's file and line" "$line" \
  '] "Error scheduling pod; retrying" err="running \"Raises\" filter plugin: '
expect_contains "run: the file and line" "$line" 'raises.lua:9: boom" pod="default/p'
expect_contains "run: the plugin" "$line" 'plugin="Raises"'
expect_eq "run: 6 pods failed, one line within the window" "$(grep -c '"Error scheduling pod; retrying"' "$TMP/run.err")" "1"
expect_eq "run: no info line for errors at the default verbosity" \
  "$(grep -c 'Unable to schedule pod' "$TMP/run.err")" "0"

# ---- /configz after a hot reload
expect_eq "/configz before the reload" "$(get /configz | jq '.componentconfig.percentageOfNodesToScore')" "40"
write_config 55
for _ in $(seq 1 50); do
  grep -q '"Reloaded profiles and plugins"' "$TMP/run.err" && break
  sleep 0.2
done
sleep 0.5
expect_eq "/configz after the reload" "$(get /configz | jq '.componentconfig.percentageOfNodesToScore')" "55"
kill -TERM "$RUN_PID"; wait "$RUN_PID"
serve_stop
[ "$failures" -eq 0 ]
