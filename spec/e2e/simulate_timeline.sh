#!/usr/bin/env bash
# End to end: a timeline on the virtual clock, and which events move which
# unschedulable pods. big-job is rejected by NodeResourcesFit (registered for
# every event): the node added at 60s moves it at once. gated-job is rejected by
# ReadyLabel, whose events table names only node label changes: the node's
# arrival does not move it, so it waits for the flush of pods left unschedulable
# for more than 5 minutes. That flush runs every 30 s and needs strictly more
# than 5 min, so the first one that takes it is at 330 s = 5m30s.
. "$(dirname "$0")/lib.bash"
ARGS="--config examples/timeline-profile.yaml --plugin-path examples/plugins"

out=$("$BIN" simulate examples/timeline.yaml $ARGS 2>&1)
expect_eq "exit code" "$?" "0"
expect_eq "node arrival vs flush" "$(printf '%s\n' "$out" | grep '^batch/')" \
'batch/big-job: bound to node-big at 1m0s
batch/gated-job: bound to node-big at 5m30s'
expect_contains "timeline end" "$out" "queues: 0 active, 0 backoff, 0 unschedulable, 0 gated; timeline ended at 5m30s"

json=$("$BIN" simulate examples/timeline.yaml $ARGS --output json 2>/dev/null)
# DynamicResources' "no new claims to deallocate" and DefaultPreemption (in the
# default profile, in that order) follow: ReadyLabel's rejection is
# Unschedulable, but node-small runs no lower-priority pod.
expect_eq "attempt history of gated-job" \
  "$(printf '%s' "$json" | jq -c '.pods[] | select(.name == "gated-job") | [.attempts[] | {time, result, message, node}]')" \
  '[{"time":0,"result":"unschedulable","message":"0/1 nodes are available: 1 node(s) didn'"'"'t have label ready=true. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.","node":null},{"time":330,"result":"bound","message":null,"node":"node-big"}]'
# Each attempt keeps its own Filter: node-big arrived between the two.
expect_eq "first attempt's filter" \
  "$(printf '%s' "$json" | jq -c '.pods[] | select(.name == "gated-job") | .attempts[0].filter | keys')" '["node-small"]'
expect_eq "the deciding attempt's filter on top" \
  "$(printf '%s' "$json" | jq -c '.pods[] | select(.name == "gated-job") | [.filter["node-big"].ReadyLabel, .feasibleNodes]')" \
  '["passed",1]'
expect_contains "summary keeps virtual time" "$json" '"virtualSeconds":330'

# A label patch at 90s is the event ReadyLabel registered: gated-job moves then.
out=$("$BIN" simulate spec/e2e/fixtures/timeline-patch.yaml $ARGS 2>&1)
expect_contains "label change moves the pod" "$out" "batch/gated-job: bound to node-"
expect_contains "at the patch time" "$(printf '%s\n' "$out" | grep gated-job)" " at 1m30s"
expect_contains "deleted pod" "$out" "batch/big-job: deleted"

[ "$failures" -eq 0 ]
