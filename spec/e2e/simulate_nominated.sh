#!/usr/bin/env bash
# End to end: Filter with nominated pods (issue-2 profile: no preemption, which
# would clear a nomination that cannot help). "reserved" (priority 100, 3 cpu)
# is nominated to node-1 and stays pending. "low" (priority 1, 2 cpu) would
# score higher on node-1 (LeastAllocated cpu: (4000-2000)*100/4000 = 50, memory
# (8Gi-200Mi)/8Gi -> 97, so (50+97)/2 = 73, vs node-2: cpu 0, memory 97 -> 48),
# but the first Filter pass adds the nominated pod to node-1: 3 + 2 cpu > 4, so
# node-1 fails and low goes to node-2. Without the nomination it goes to node-1.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures
ARGS="--config $F/issue2-profile.yaml"

out=$("$BIN" simulate $F/nominated.yaml $ARGS 2>&1)
expect_eq "low avoids the nominated room" "$(printf '%s\n' "$out" | grep '^default/low')" "default/low: bound to node-2"

sed '/nominatedNodeName/d' $F/nominated.yaml > "$TMP/plain.yaml"
out=$("$BIN" simulate "$TMP/plain.yaml" $ARGS 2>&1)
expect_eq "without the nomination it takes node-1" "$(printf '%s\n' "$out" | grep '^default/low')" "default/low: bound to node-1"

[ "$failures" -eq 0 ]
