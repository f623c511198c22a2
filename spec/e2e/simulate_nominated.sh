#!/usr/bin/env bash
# End to end: Filter with nominated pods (default profile: SchedulingGates keeps
# "reserved" gated). The gated pod "reserved" is nominated to node-1 (priority
# 100, 3 cpu). "low" (priority 1, 2 cpu) would score higher on node-1
# (LeastAllocated cpu: (4000-2000)*100/4000 = 50 vs node-2: (2000-2000)*100/2000 = 0),
# but the first Filter pass adds the nominated pod to node-1: 3 + 2 cpu > 4, so
# node-1 fails and low goes to node-2. Without the nomination it would go to node-1.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures

out=$("$BIN" simulate $F/nominated.yaml 2>&1)
expect_eq "low avoids the nominated room" "$(printf '%s\n' "$out" | grep '^default/low')" "default/low: bound to node-2"

sed '/nominatedNodeName/d' $F/nominated.yaml > "$TMP/plain.yaml"
out=$("$BIN" simulate "$TMP/plain.yaml" 2>&1)
expect_eq "without the nomination it takes node-1" "$(printf '%s\n' "$out" | grep '^default/low')" "default/low: bound to node-1"

[ "$failures" -eq 0 ]
