#!/usr/bin/env bash
# End to end: hot reload. A simulation runs on the wall clock while a timeline
# creates a pod every 100 ms for 4 s. A plugin prefers node-a; at about 1.2 s
# of the timeline (timed from the first pod's line)
# the test rewrites it to prefer node-b, and at about 2.6 s writes a syntax
# error. Pods created a second after the rewrite must go to node-b; the broken
# edit must leave the running code deciding (still node-b), with the error
# logged (file and line) and counted; no pod may be lost.
. "$(dirname "$0")/lib.bash"
D=$TMP/reload
mkdir -p "$D/plugins"

prefer() {   # writes the plugin preferring node $1, atomically (as editors do)
  cat > "$D/plugins/prefer.lua.tmp" <<LUA
local ls = require("luasched")
local P = ls.plugin("Prefer")
function P:init() self.want = ls.intern("$1") end
function P:score(_, _, node)
  return node.node.name == self.want and 100 or 0
end
return P
LUA
  mv "$D/plugins/prefer.lua.tmp" "$D/plugins/prefer.lua"
}
prefer node-a

cat > "$D/profile.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - {name: Prefer, weight: 50}
YAML

{
  echo 'apiVersion: v1'
  echo 'kind: List'
  echo 'items:'
  for n in node-a node-b; do
    echo "- {apiVersion: v1, kind: Node, metadata: {name: $n}, status: {allocatable: {cpu: \"64\", memory: 64Gi, pods: \"110\"}}}"
  done
  echo '---'
  echo 'apiVersion: luasched.io/v1alpha1'
  echo 'kind: Timeline'
  echo 'steps:'
  for i in $(seq 1 40); do
    printf -- '- at: %dms\n  create: {apiVersion: v1, kind: Pod, metadata: {name: p%02d, namespace: default}, spec: {containers: [{name: c, image: app}]}}\n' $((i * 100)) "$i"
  done
} > "$D/cluster.yaml"

${WRAP:-} "$BIN" simulate "$D/cluster.yaml" --config "$D/profile.yaml" --plugin-path "$D/plugins" --realtime \
  >"$D/out" 2>"$D/err" &
pid=$!
# The timeline's clock starts when the process is ready (later under a
# sanitizer or on a loaded machine): time the edits from p01's line (0.1 s).
for _ in $(seq 1 200); do grep -q '^default/p01:' "$D/out" 2>/dev/null && break; sleep 0.05; done
sleep 1.1
prefer node-b
sleep 1.4
printf 'local ls = require("luasched")\nlocal P = ls.plugin("Prefer")\nfunction P:score(\nreturn P\n' \
  > "$D/plugins/prefer.lua.tmp" && mv "$D/plugins/prefer.lua.tmp" "$D/plugins/prefer.lua"
wait $pid
expect_eq "exit code" "$?" "0"

# p01..p10 (created by 1.0 s, before the rewrite) went to node-a.
early=$(grep -E '^default/p(0[1-9]|10):' "$D/out" | grep -c 'bound to node-a')
expect_eq "pods before the rewrite follow the old code" "$early" "10"
# p23..p40 (created at 2.3 s or later: more than a second after the rewrite,
# and partly after the broken edit) went to node-b.
late=$(grep -E '^default/p(2[3-9]|3[0-9]|40):' "$D/out" | grep -c 'bound to node-b')
expect_eq "pods a second after the rewrite follow the new code" "$late" "18"
expect_contains "all pods bound" "$(cat "$D/out")" "summary: 2 nodes, 40 pods: 40 bound, 0 unschedulable"
expect_contains "reloads counted" "$(cat "$D/out")" "reloads: 1 succeeded, 1 failed"
expect_contains "the good edit logged" "$(cat "$D/err")" "] \"Reloaded profiles and plugins\" config=\"$D/profile.yaml\""
expect_contains "the bad edit logged with file and line" "$(cat "$D/err")" \
  "] \"Reload failed, the running profiles stay\" err=\"$D/profile.yaml:8: profile default-scheduler:"
expect_contains "the bad edit's position" "$(cat "$D/err")" "prefer.lua:4:"

[ "$failures" -eq 0 ]
