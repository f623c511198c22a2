#!/usr/bin/env bash
# `simulate --shadow` and `simulate --realtime`. The shadow counts of
# fixtures/shadow (worked by hand in shadow_run_served.sh: 4 evaluations,
# p1 and p2 on another node, p4 schedulable for the shadow alone) in the text
# summary and the JSON; a shadow plugin that raises or runs over its time
# budget is counted as a failure and the live decisions stand; --realtime prints a pod's line when its
# attempt is decided, before the run ends.
. "$(dirname "$0")/lib.bash"
require_tool jq jq
F=spec/e2e/fixtures/shadow

out=$("$BIN" simulate "$F/cluster.yaml" --config "$F/least.yaml" --shadow "$F/most.yaml" 2>&1)
expect_eq "exit code" "$?" "0"
expect_eq "live placements" "$(printf '%s\n' "$out" | grep '^default/')" \
"default/p1: bound to big
default/p2: bound to big
default/p3: bound to big
default/p4: pending: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
expect_contains "shadow counts in the summary" "$out" \
  "shadow default-scheduler: 4 evaluated, 2 disagreed on the node, 1 on schedulability, 0 failed"
json=$("$BIN" simulate "$F/cluster.yaml" --config "$F/least.yaml" --shadow "$F/most.yaml" --output json 2>/dev/null)
expect_eq "shadow counts in the JSON" "$(printf '%s' "$json" | jq -c .summary.shadow)" \
  '[{"profile":"default-scheduler","evaluations":4,"nodeDisagreements":2,"schedulabilityDisagreements":1,"failures":0}]'
# The shadow policy run live gives the placements the shadow predicted for p1.
expect_eq "the shadow policy alone puts p1 on small" \
  "$("$BIN" simulate "$F/cluster.yaml" --config "$F/most.yaml" | grep '^default/p1')" "default/p1: bound to small"

out=$("$BIN" simulate spec/e2e/fixtures/two-nodes.yaml --shadow spec/e2e/fixtures/with-raises.yaml \
  --plugin-path spec/e2e/fixtures/plugins 2>&1)
expect_eq "a failing shadow does not fail the run" "$?" "0"
expect_contains "every live pod bound" "$out" "3 pods: 3 bound"
expect_contains "the shadow's failure counted (pod b raises)" "$out" "3 evaluated, 0 disagreed on the node, 0 on schedulability, 1 failed"
out=$("$BIN" simulate spec/e2e/fixtures/two-nodes.yaml --shadow spec/e2e/fixtures/with-loops-forever.yaml \
  --plugin-path spec/e2e/fixtures/plugins --plugin-timeout 200 2>&1)
expect_eq "a shadow over its time budget does not fail the run" "$?" "0"
expect_contains "every live pod bound" "$out" "3 pods: 3 bound"
expect_contains "the shadow's timeout counted (pod b loops)" "$out" "3 evaluated, 0 disagreed on the node, 0 on schedulability, 1 failed"
expect_eq "the live scheduler saw no plugin fault" "$(printf '%s\n' "$out" | grep -c '^plugin faults')" "0"
out=$("$BIN" simulate spec/e2e/fixtures/two-nodes.yaml --shadow spec/e2e/fixtures/bad-yaml.yaml 2>&1)
expect_eq "a bad shadow file is a usage error" "$?" "2"
expect_contains "named in the error" "$out" "luasched simulate: --shadow spec/e2e/fixtures/bad-yaml.yaml:"

# --realtime: "first" is decided at once, "second" arrives 2 s later.
"$BIN" simulate "$F/realtime.yaml" --realtime > "$TMP/rt.out" 2>&1 &
PID=$!
# polled every 0.1 s: "second" comes 2 s after "first", however slow the machine
wait_until 60 grep -q first "$TMP/rt.out"
# (the wall clock: "0s" may read 1ms and "2s" 2.003s on a loaded machine;
# the sub-second part is dropped)
whole_seconds() { sed -E 's/ at [0-9]+ms$/ at 0s/; s/ at ([0-9]+)\.[0-9]+s$/ at \1s/'; }
expect_eq "the first line is out while the run goes on" "$(whole_seconds < "$TMP/rt.out")" "default/first: bound to n1 at 0s"
wait_exit "$PID" 60
expect_eq "realtime exit code" "$?" "0"
expect_eq "each pod once, as decided" "$(grep '^default/' "$TMP/rt.out" | whole_seconds)" \
"default/first: bound to n1 at 0s
default/second: bound to n1 at 2s"
expect_contains "then the summary" "$(cat "$TMP/rt.out")" "summary: 1 nodes, 2 pods: 2 bound"
[ "$failures" -eq 0 ]
