#!/usr/bin/env bash
# The attacker's last round of issue 24 (point 6), hot reload: a simulation on
# the wall clock creates a pod every 100 ms for 6 s while its plugin file is
# replaced, in turn, by a directory, by the good plugin again, by a symlink to
# a file that is no Lua, and by a plugin that loops in its top-level code.
# Each bad reload must fail naming the plugin's file and why, the running
# profiles must keep deciding (every pod bound to node-a, as the good plugin
# wants), and the run must end with status 0 (never a hang: a time limit).
# A reload loads on the scheduling loop: while the looping plugin is cut off
# at the load budget (10 s) no pod is scheduled, then the waiting pods are.
. "$(dirname "$0")/../e2e/lib.bash"
D=$TMP/reload
mkdir -p "$D/plugins"
F=$D/plugins/prefer.lua

good() {   # the plugin preferring node-a, written atomically (as editors do)
  rm -rf "$F"
  cat > "$F.tmp" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Prefer")
function P:init() self.want = ls.intern("node-a") end
function P:score(_, _, node)
  return node.node.name == self.want and 100 or 0
end
return P
LUA
  mv "$F.tmp" "$F"
}
good

cat > "$D/profile.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  luasched: {pluginTimeoutMilliseconds: 300}
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
  for i in $(seq 1 60); do
    printf -- '- at: %dms\n  create: {apiVersion: v1, kind: Pod, metadata: {name: p%02d, namespace: default}, spec: {containers: [{name: c, image: app}]}}\n' $((i * 100)) "$i"
  done
} > "$D/cluster.yaml"

timeout -s KILL 120 "$BIN" simulate "$D/cluster.yaml" --config "$D/profile.yaml" --plugin-path "$D/plugins" \
  --realtime > "$D/out" 2> "$D/err" &
pid=$!
for _ in $(seq 1 200); do grep -q '^default/p01:' "$D/out" 2>/dev/null && break; sleep 0.05; done
sleep 1
rm -f "$F"; mkdir "$F"                       # a directory where the plugin was
sleep 1
good                                         # back to the good plugin: a successful reload
sleep 1
printf 'this is no Lua\n' > "$D/notes.txt"
rm -f "$F"; ln -s "$D/notes.txt" "$F"        # a symlink to a file that is no Lua
sleep 1
rm -f "$F"
printf 'local ls = require("luasched")\nlocal P = ls.plugin("Prefer")\nlocal x = 0\nwhile true do x = x + 1 end\nreturn P\n' \
  > "$F.tmp" && mv "$F.tmp" "$F"               # a plugin looping at load
wait $pid
expect_eq "exit code" "$?" "0"
expect_contains "all pods bound" "$(cat "$D/out")" "summary: 2 nodes, 60 pods: 60 bound, 0 unschedulable"
expect_eq "every pod bound where the running (good) plugin wants" "$(grep -cE "^default/p[0-9]+: bound to node-a" "$D/out")" "60"
# an edit of two steps (a removal, then the new file) may be seen as one change or two
failed=$(sed -n 's/^reloads: 1 succeeded, \([0-9]*\) failed$/\1/p' "$D/out")
expect_eq "reloads counted: the good one, and the three bad ones (each once or twice)" \
  "$([ -n "$failed" ] && [ "$failed" -ge 3 ] && [ "$failed" -le 6 ] && echo yes)" "yes"
expect_contains "the directory named with why" "$(cat "$D/err")" "plugins/prefer.lua: cannot be read: Is a directory"
expect_eq "the symlink's text a syntax error at the plugin's file" \
  "$(grep -qE "Reload failed.*plugins/prefer.lua:[0-9]+: '=' expected" "$D/err" && echo yes)" "yes"
expect_contains "the loop at load cut off, naming the plugin" "$(cat "$D/err")" \
  "($F, top-level code): exceeded its time budget of 10000 ms"
expect_contains "and the plugin" "$(cat "$D/err")" 'profile default-scheduler: loading plugin Prefer: plugin'
expect_eq "no reload error names the runtime's own files" "$(grep 'Reload failed' "$D/err" | grep -c 'lua/luasched/')" "0"
[ "$failures" -eq 0 ]
