#!/usr/bin/env bash
# End to end: Permit's Wait. A gang plugin holds pods at Permit until three of
# a group arrived, then allows them all (they bind); a group that never
# completes is rejected when the plugin's 90 s timeout passes on the
# simulation's clock, with upstream's message and Go's duration format.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures

out=$("$BIN" simulate $F/gangs.yaml --config $F/with-gang.yaml --plugin-path $F/plugins 2>&1)
expect_eq "exit code" "$?" "0"
expect_eq "gang outcome" "$(printf '%s\n' "$out" | grep '^default/')" \
'default/full-0: bound to node-1
default/short-0: pending: rejected due to timeout after waiting 1m30s at plugin Gang
default/full-1: bound to node-1
default/solo: bound to node-1
default/short-1: pending: rejected due to timeout after waiting 1m30s at plugin Gang
default/full-2: bound to node-1'
expect_contains "summary" "$out" "summary: 1 nodes, 6 pods: 4 bound, 2 unschedulable"

[ "$failures" -eq 0 ]
