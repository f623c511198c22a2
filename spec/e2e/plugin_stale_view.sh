#!/usr/bin/env bash
# End to end (issues 11 and 24): a plugin that keeps NodeInfos beyond their
# call and reads them once the nodes are deleted. Before issue 11 this read
# memory the cache freed (SIGSEGV, status 139); issue 11 recovered from the
# signal. Now a NodeInfo handed to a plugin that is not built-in is a
# reference carrying its call's generation: the first read after the call
# raises an error naming the plugin, the view and file:line, whatever the
# freed memory holds; no signal, no state rebuilt. The plugin keeps its stale
# references, so each later pod meets the same error; the process exits 3.
. "$(dirname "$0")/lib.bash"
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/keeper.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Keeper")
local kept = {}
function P.filter(_, _, _, ni)
  for i = 1, #kept do
    local v = kept[i]
    for j = 0, #v.pods - 1 do local _ = tostring(v.pods[j]) end
    if #ls.str(v.node.name) < 0 then return ls.status(ls.UNSCHEDULABLE, "never") end
  end
  kept[#kept + 1] = ni
end
return P
LUA
cat > "$TMP/config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Keeper}]
YAML
{
  for i in $(seq 0 39); do
    printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n---\n' "$i"
  done
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: first, namespace: default}\nspec: {containers: [{name: c, image: app}]}\n---\n'
  printf 'apiVersion: luasched.io/v1alpha1\nkind: Timeline\nsteps:\n'
  for i in $(seq 0 39); do
    printf -- '- at: 10s\n  delete: {apiVersion: v1, kind: Node, metadata: {name: n%d}}\n' "$i"
  done
  for i in 0 1 2; do
    printf -- '- at: 20s\n  create:\n    apiVersion: v1\n    kind: Node\n    metadata: {name: m%d}\n    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n' "$i"
  done
  for i in 0 1 2; do
    printf -- '- at: 30s\n  create:\n    apiVersion: v1\n    kind: Pod\n    metadata: {name: late-%d, namespace: default}\n    spec: {containers: [{name: c, image: app}]}\n' "$i"
  done
} > "$TMP/cluster.yaml"
"$BIN" simulate "$TMP/cluster.yaml" --config "$TMP/config.yaml" --plugin-path "$TMP/plugins" \
  > "$TMP/out" 2> "$TMP/err"
RC=$?
expect_eq "the process survives (exit 3: an attempt ended in a plugin error)" "$RC" "3"
STALE="keeper.lua:7: node info was handed to a plugin by an earlier call and is gone: views live only during the call that made them (used by plugin \"Keeper\" in filter)"
expect_eq "the pods after the deletion get an Error naming the plugin, the view and file:line" \
  "$(grep '^default/late' "$TMP/out" | sed "s|$TMP/plugins/||")" \
  "default/late-0: pending: running \"Keeper\" filter plugin: $STALE
default/late-1: pending: running \"Keeper\" filter plugin: $STALE
default/late-2: pending: running \"Keeper\" filter plugin: $STALE"
expect_contains "the pod before the deletion is bound" "$(grep '^default/first:' "$TMP/out")" "default/first: bound to n"
expect_eq "no signal was met" "$(grep -c 'recovered from signal' "$TMP/err")" "0"
expect_contains "no state was rebuilt" "$(cat "$TMP/out")" "0 Lua state restarts"
[ "$failures" -eq 0 ]
