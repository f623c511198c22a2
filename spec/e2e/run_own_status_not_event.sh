#!/usr/bin/env bash
# End to end over HTTP (issue: "a pod's own status is not an event"): against an
# API server, the scheduler's own PodScheduled=False patch of an unschedulable
# pod comes back through the watch as an update. Upstream v1.37 ignores an
# update that changes only the status of an unscheduled pod; so must we. The
# pod (2 cpu) cannot fit the only node (1 cpu): exactly one attempt, one
# FailedScheduling, then nothing until an event that helps it (none here) or the
# 5-minute flush. (Before, the patch's update retried it after its 1 s backoff.)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"

cat > "$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: big, namespace: default}, spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]}}
YAML

serve_start "$TMP/cluster.yaml"
run_start -v 2
condition=""
unschedulable() {
  condition=$(api /api/v1/namespaces/default/pods/big | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .reason')
  [ "$condition" = "Unschedulable" ]
}
wait_until 60 unschedulable
expect_eq "the pod got PodScheduled=False" "$condition" "Unschedulable"
# The patch's update arrives right after; a retry would come 1-2 s later (backoff, flush tick).
sleep 4
# Every attempt records a FailedScheduling Event; repeats fold into a series.
attempts=$(api /apis/events.k8s.io/v1/namespaces/default/events |
  jq '[.items[] | select(.reason == "FailedScheduling" and .regarding.name == "big") | (.series.count // 1)] | add')
run_stop
serve_stop
expect_eq "one attempt: the status update was not an event" "$attempts" "1"

[ "$failures" -eq 0 ]
