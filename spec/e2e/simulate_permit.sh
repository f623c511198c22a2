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

# NominatedNodeNameForExpectation (upstream v1.35+): a pod a Permit made wait
# gets status.nominatedNodeName = its node for the binding (full-0, full-1
# waited, then bound; short-* waited, then were rejected: set, then cleared);
# a pod Permit let through at once (solo, full-2 completing the gang) gets none.
json=$("$BIN" simulate $F/gangs.yaml --config $F/with-gang.yaml --plugin-path $F/plugins --output json 2>/dev/null)
expected=$(printf '%s' "$json" | luajit -e '
package.path = "spec/lua/?.lua;" .. package.path
local d = require("json").decode(io.read("*a"))
for _, p in ipairs(d.pods) do
  local t = {}
  for _, a in ipairs(p.attempts) do t[#t + 1] = a.result .. "@" .. (a.expectedNode or "-") end
  print(p.name .. " " .. table.concat(t, ","))
end' | sort)
expect_eq "expected nodes" "$expected" \
'full-0 bound@node-1
full-1 bound@node-1
full-2 bound@-
short-0 unschedulable@node-1,unschedulable@node-1
short-1 unschedulable@node-1,unschedulable@node-1
solo bound@-'

[ "$failures" -eq 0 ]
