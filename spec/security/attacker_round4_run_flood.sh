#!/usr/bin/env bash
# The attacker's round 4 of issue 24 (point 6), against `luasched run`: C
# memory a plugin grows in the supervisor. A PreBind plugin, for the pod
# labelled probe=yes, asks for 3000 patches of one PersistentVolume, each
# of nearly 1 MiB (the supervisor's limit for one patch): the worker sends
# them all, and the supervisor queued every one for the API server (GBs in
# the process that holds the credentials). The promise: the supervisor stays
# far below 2 GiB (it keeps at most 64 MiB of plugins' patches waiting and
# logs the rest as failed writes), every pod is bound once, the worker is not
# restarted, run and the server stop cleanly.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/../e2e/serve_lib.bash"
RUN_PID=; SERVE_PID=
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/flooder.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Flooder")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local patch = '{"metadata":{"annotations":{"k":"' .. string.rep("x", 1000 * 1000) .. '"}}}'
  local refused = 0
  for _ = 1, 3000 do
    if ls.patch_object("PersistentVolume", nil, "pv1", patch) then refused = refused + 1 end
  end
  print("patches asked for, refused by the worker: " .. refused)
  return nil
end
return P
LUA
{
  for n in node-1 node-2; do
    printf -- '---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s}}\n' "$n" "$n"
    printf 'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
  done
  printf -- '---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n'
  printf 'spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}\n'
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: default, labels: {probe: "yes"}}\n'
  printf 'spec: {containers: [{name: c, image: app}]}\n'
  for i in 1 2 3; do
    printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain-%d, namespace: default}\n' "$i"
    printf 'spec: {containers: [{name: c, image: app}]}\n'
  done
} > "$TMP/cluster.yaml"
serve_start "$TMP/cluster.yaml"
cat > "$TMP/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$TMP/plugins"], pluginTimeoutMilliseconds: 60000}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Flooder}]
YAML
"$BIN" run --config "$TMP/config.yaml" --secure-port 0 > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
# the supervisor's peak RSS (kB), sampled while the plugin floods
peak=0
for _ in $(seq 1 1200); do
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$RUN_PID/status" 2>/dev/null || echo 0)
  [ "${hwm:-0}" -gt "$peak" ] && peak=$hwm
  grep -q 'patches asked for' "$TMP/run.err" && break
  kill -0 "$RUN_PID" 2>/dev/null || break
  sleep 0.1
done
expect_contains "the plugin's call ended" "$(cat "$TMP/run.err")" 'patches asked for, refused by the worker: 0'
wait_bound 4 120 || echo "FAIL: the pods were not all bound"
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$RUN_PID/status" 2>/dev/null || echo 0)
[ "${hwm:-0}" -gt "$peak" ] && peak=$hwm
echo "supervisor peak RSS: $((peak / 1024)) MiB"
# 64 MiB of patches waiting, the writer's copies of those in flight, the informers
if [ "$peak" -ge $((512 * 1024)) ]; then
  echo "FAIL: the supervisor reached $((peak / 1024)) MiB (bound 512 MiB)"; failures=$((failures + 1))
fi
expect_contains "the patches past the bound are logged as failed writes" "$(cat "$TMP/run.err")" \
  'more than 64 MiB of plugins'"'"' patches wait for the API server'
expect_eq "the worker was never restarted" "$(grep -c 'The worker process ended' "$TMP/run.err")" "0"
kill -TERM "$RUN_PID"; timeout 120 tail --pid="$RUN_PID" -f /dev/null; wait "$RUN_PID"; RUN_RC=$?; RUN_PID=
expect_eq "run stops cleanly" "$RUN_RC" "0"
serve_stop; SERVE_PID=
expect_eq "no pod bound twice (server exit status)" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
