#!/usr/bin/env bash
# End to end: the served API keeps one Event and serves it in both groups, as
# a real API server does. `luasched run` writes events.k8s.io/v1 Events;
# `kubectl describe pod` (core/v1 events by involvedObject) and `kubectl get
# events` show the Scheduled and FailedScheduling ones, with upstream's field
# mapping (note -> message, regarding -> involvedObject, reportingController
# -> reportingComponent). The Preempted event relates to the preemptor.
# Skipped (exit 77) without kubectl (.ci/deps.sh installs it).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
command -v kubectl >/dev/null || { echo "skip: kubectl is not installed"; exit 77; }

cat > "$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: low, namespace: default}, spec: {nodeName: n1, priority: 0, containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: huge, namespace: default}, spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "8"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: vip, namespace: default}, spec: {priority: 1000, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}}
YAML
serve_start "$TMP/cluster.yaml"
run_start
wait_bound 1 60 || { echo "FAIL: vip was not bound"; failures=$((failures + 1)); }
K=(kubectl --kubeconfig "$KUBECONFIG_FILE")
for _ in $(seq 1 600); do   # the Scheduled event follows the binding (up to 60 s)
  "${K[@]}" get events --no-headers 2>/dev/null | grep -q Scheduled && break
  sleep 0.1
done

describe=$("${K[@]}" describe pod vip)
expect_contains "describe pod: the Scheduled event" "$describe" "Normal   Scheduled         "
expect_contains "describe pod: its message" "$describe" "default-scheduler  Successfully assigned default/vip to n1"
expect_contains "describe pod: the FailedScheduling event before preemption" "$describe" \
  "Warning  FailedScheduling  "
describe=$("${K[@]}" describe pod huge)
expect_contains "describe pod: FailedScheduling with upstream's message" "$describe" \
  "0/1 nodes are available: 1 Insufficient cpu."

# the event's note and the pod's PodScheduled condition carry the same whole message: the
# nodes' part, then every PostFilter plugin's (DynamicResources: the pod has no claims;
# DefaultPreemption: 8 cpu exceed n1's allocatable, so n1 is no candidate)
want="0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
expect_eq "FailedScheduling note: the whole message" \
  "$(api /apis/events.k8s.io/v1/namespaces/default/events |
     jq -r '[.items[] | select(.reason == "FailedScheduling" and .regarding.name == "huge") | .note][0]')" "$want"
expect_eq "PodScheduled condition: the same message" \
  "$(api /api/v1/namespaces/default/pods/huge | jq -r '.status.conditions[] | select(.type == "PodScheduled") | .message')" \
  "$want"

events=$("${K[@]}" get events --no-headers)
expect_contains "get events: Scheduled" "$events" "Normal    Scheduled          pod/vip    Successfully assigned default/vip to n1"
expect_contains "get events: Preempted" "$events" "pod/low"
expect_contains "get events: FailedScheduling" "$events" "Warning   FailedScheduling   pod/huge"

# one stored event, two views: the core/v1 twin of an events.k8s.io/v1 Event
name=$(api /apis/events.k8s.io/v1/namespaces/default/events | jq -r '.items[] | select(.reason == "Scheduled") | .metadata.name')
core=$(api "/api/v1/namespaces/default/events/$name")
expect_eq "core/v1 twin: mapped fields" \
  "$(printf '%s' "$core" | jq -c '[.involvedObject.kind, .involvedObject.name, .message, .reportingComponent, .source, .firstTimestamp]')" \
  '["Pod","vip","Successfully assigned default/vip to n1","default-scheduler",{},null]'
preempted=$(api /apis/events.k8s.io/v1/namespaces/default/events | jq -c '.items[] | select(.reason == "Preempted") | [.regarding.name, .related.kind, .related.name, .action]')
expect_eq "Preempted: regarding the victim, related to the preemptor" "$preempted" '["low","Pod","vip","Preempting"]'

# an Event created through core/v1 is served by events.k8s.io/v1 too
printf '%s' '{"apiVersion":"v1","kind":"Event","metadata":{"name":"by-hand","namespace":"default"},"involvedObject":{"kind":"Pod","name":"huge","namespace":"default"},"reason":"Hand","message":"written by hand","type":"Normal","source":{"component":"me"},"count":3}' \
  | "${K[@]}" create -f - >/dev/null
expect_eq "events.k8s.io/v1 view of a core Event" \
  "$(api /apis/events.k8s.io/v1/namespaces/default/events/by-hand | jq -c '[.regarding.name, .note, .deprecatedSource.component, .deprecatedCount]')" \
  '["huge","written by hand","me",3]'
"${K[@]}" delete event by-hand >/dev/null
expect_eq "deleted in both views" "$(api /apis/events.k8s.io/v1/namespaces/default/events | jq '[.items[] | select(.metadata.name == "by-hand")] | length')" "0"

run_stop
expect_eq "run exits 0" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
