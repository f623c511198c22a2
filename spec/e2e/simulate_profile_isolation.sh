#!/usr/bin/env bash
# End to end: each profile's plugins run in a Lua state of their own (issue
# 11). One plugin file listed in two profiles keeps a counter at its top level
# and a profile-wide table it writes into: each profile's pods see their own
# count from 1 and none of the other profile's writes. With one shared state
# the counts would run 1..4 across the profiles.
. "$(dirname "$0")/lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
require_tool jq jq
D=$TMP/cfg
mkdir -p "$D/plugins"
cat > "$D/plugins/tally.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Tally")
local seen, names = 0, {}
function P:pre_filter(state, pod)
  seen = seen + 1
  names[#names + 1] = ls.str(pod.name)
  return ls.unschedulable("seen " .. seen .. ": " .. table.concat(names, ","))
end
return P
LUA
# 1 node, 4 pods: pod-000002 and pod-000004 go to the second profile.
luajit "$ROOT/bench/make_cluster.lua" 1 4 |
  jq '.items |= map(if .kind == "Pod" and (.metadata.name == "pod-000002" or .metadata.name == "pod-000004")
                    then .spec.schedulerName = "second" else . end)' > "$TMP/cluster.json"
cat > "$D/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
luasched: {pluginPath: ["$D/plugins"]}
profiles:
- schedulerName: default-scheduler
  plugins: {preFilter: {enabled: [{name: Tally}]}}
- schedulerName: second
  plugins: {preFilter: {enabled: [{name: Tally}]}}
YAML
"$BIN" simulate "$TMP/cluster.json" --config "$D/config.yaml" > "$TMP/out" 2> "$TMP/err"
expect_eq "exit 0" "$?" "0"
# (the message as upstream words a PreFilter rejection (Unschedulable, so every
# PreFilter ran), then DynamicResources' and DefaultPreemption's reasons)
tail=". no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
expect_eq "each profile's plugin counts its own pods only" "$(grep '^default/' "$TMP/out")" \
"default/pod-000001: pending: 0/1 nodes are available: seen 1: pod-000001$tail
default/pod-000002: pending: 0/1 nodes are available: seen 1: pod-000002$tail
default/pod-000003: pending: 0/1 nodes are available: seen 2: pod-000001,pod-000003$tail
default/pod-000004: pending: 0/1 nodes are available: seen 2: pod-000002,pod-000004$tail"
[ "$failures" -eq 0 ]
