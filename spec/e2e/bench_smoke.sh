#!/usr/bin/env bash
# End to end: `luasched bench` on a tiny workload (spec/e2e/fixtures/bench-smoke.yaml:
# 50 nodes, 20 init pods, 100 measured pods, churn every 2 ms) prints the
# report's lines and one JSON line with the right counts; bad input exits 2;
# luasched_lua_vs_c runs with tiny sizes and prints both lines. No timing is
# asserted.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures/bench-smoke.yaml
LUA_VS_C=${LUASCHED_LUA_VS_C:-$(dirname "$BIN")/luasched_lua_vs_c}

# text report
out=$("$BIN" bench $F)
expect_eq "text: exit 0" "$?" "0"
expect_contains "text: workload" "$out" "workload           BenchSmoke/50Nodes_100Pods"
expect_contains "text: nodes" "$out" "nodes              50 (percentageOfNodesToScore: adaptive)"
expect_contains "text: init pods" "$out" "init pods          20 scheduled, 0 unschedulable, in "
expect_contains "text: measured pods" "$out" "measured pods      100: 100 scheduled, 0 unschedulable"
expect_contains "text: churn" "$out" "churn              "
expect_contains "text: average" "$out" "average            "
expect_contains "text: samples" "$out" "per-second samples p50 "
expect_contains "text: wall time" "$out" "wall time          "
expect_contains "text: peak RSS" "$out" "peak RSS           "
expect_eq "text: no threshold, no ratio" "$(grep -c 'upstream threshold' <<<"$out")" "0"

# JSON: one line, with every field
json=$("$BIN" bench $F --output json --nodes-percentage 100 --seed 3)
expect_eq "json: exit 0" "$?" "0"
expect_eq "json: one line" "$(wc -l <<<"$json")" "1"
for field in '"workload":"BenchSmoke/50Nodes_100Pods"' '"nodes":50' '"percentageOfNodesToScore":100' \
             '"initPods":20' '"initScheduled":20' '"measuredPods":100' '"scheduled":100' '"unschedulable":0' \
             '"churn":{"intervalMs":2,"ticks":' '"average":' '"perc50":' '"perc90":' '"perc95":' '"perc99":' \
             '"samples":' '"seconds":' '"peakRSSBytes":'; do
  expect_contains "json: $field" "$json" "$field"
done

# cluster events: every binding is one; heartbeats stop before any pod
expect_contains "text: cluster events" "$out" "cluster events     "
hb=$("$BIN" bench spec/e2e/fixtures/bench-heartbeats.yaml)
expect_eq "heartbeats: exit 0" "$?" "0"
expect_contains "heartbeats: init pods wait" "$hb" "init pods          0 scheduled, 30 unschedulable"
expect_contains "heartbeats: churn line" "$hb" " node heartbeats"
beats=$(sed -n 's/^churn .*: \([0-9]*\) node heartbeats$/\1/p' <<<"$hb")
events=$(sed -n 's/^cluster events *\([0-9]*\): \([0-9]*\) registered.*, \([0-9]*\) by none (0 visited)$/\1 \2 \3/p' <<<"$hb")
read -r total registered none <<<"$events"
expect_eq "heartbeats: the events are the 50 bindings and the heartbeats" "$total" "$((50 + beats))"
expect_eq "heartbeats: the bindings are registered events" "$registered" "50"
expect_eq "heartbeats: the heartbeats are registered by none" "$none" "$beats"
hbjson=$("$BIN" bench spec/e2e/fixtures/bench-heartbeats.yaml --output json)
for field in '"events":' '"registeredEvents":' '"podsVisited":' '"requeues":' '"heartbeats":' '"luaBytes":'; do
  expect_contains "json: $field" "$hbjson" "$field"
done

# bad input
"$BIN" bench $F --nodes-percentage 0 >/dev/null 2>"$TMP/err"
expect_eq "bad --nodes-percentage: exit 2" "$?" "2"
expect_eq "bad --nodes-percentage: message" "$(cat "$TMP/err")" \
  'luasched bench: --nodes-percentage: expected adaptive or 1..100, got "0"'
printf 'kind: Workload\nname: x\nnodes: {count: 1, template: {kind: Pod}}\nmeasurePods: []\n' >"$TMP/bad.yaml"
"$BIN" bench "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
expect_eq "bad workload: exit 2" "$?" "2"
expect_eq "bad workload: message" "$(cat "$TMP/err")" \
  "luasched bench: $TMP/bad.yaml:3: nodes.template: expected kind Node, got Pod"
printf 'kind: Workload\nname: x\nnodes: {count: 1, template: {kind: Node}}\nchurn:\n  mode: heartbeat\n  templates: [{kind: Node}]\nmeasurePods: [{count: 1, template: {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}}]\n' >"$TMP/hb.yaml"
"$BIN" bench "$TMP/hb.yaml" >/dev/null 2>"$TMP/err"
expect_eq "heartbeat with templates: exit 2" "$?" "2"
expect_eq "heartbeat with templates: message" "$(cat "$TMP/err")" \
  "luasched bench: $TMP/hb.yaml:6: churn.templates: heartbeat mode updates the existing nodes: no templates"
"$BIN" bench --help >"$TMP/help"
expect_eq "--help: exit 0" "$?" "0"
expect_contains "--help: usage" "$(cat "$TMP/help")" "usage: luasched bench WORKLOAD.yaml [flags]"

# the Lua-versus-C pair, tiny
pair=$("$LUA_VS_C" 50 10 2)
expect_eq "lua_vs_c: exit 0" "$?" "0"
expect_contains "lua_vs_c: the C line" "$pair" "C   "
expect_contains "lua_vs_c: the Lua line" "$pair" "Lua "
expect_contains "lua_vs_c: the ratio" "$pair" "ratio Lua/C: "
expect_contains "lua_vs_c: agreement" "$pair" "results agree: yes"

# the boundary's cost, tiny: the messages that crossed and ns per message
boundary=$("$BIN" bench boundary 400)
expect_eq "bench boundary: exit 0" "$?" "0"
expect_contains "bench boundary: watch events" "$boundary" "watch event (776-byte pod)              400 messages"
expect_contains "bench boundary: the binary form alone" "$boundary" "  its binary form alone (701 B)         400 messages"
expect_contains "bench boundary: the JSON text it replaced" "$boundary" "  as JSON text (print+parse)            400 messages"
expect_contains "bench boundary: binding round trips" "$boundary" "binding round trip (2 messages)         200 messages"
expect_eq "bench boundary: ns per message, wall and cpu, on every line" \
  "$(grep -cE ' [0-9]+ ns/message wall +[0-9]+ ns/message cpu$' <<<"$boundary")" "4"
"$BIN" bench boundary 2 >/dev/null 2>"$TMP/err"
expect_eq "bench boundary 2: exit 2" "$?" "2"
expect_contains "bench boundary 2: message" "$(cat "$TMP/err")" \
  'luasched bench boundary: MESSAGES: expected a number from 4 to 100000000, got "2"'

[ "$failures" -eq 0 ]
