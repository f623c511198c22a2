#!/usr/bin/env bash
# End to end over HTTP with DRA: `luasched simulate --serve` serves a cluster
# with a DeviceClass, ResourceSlices and ResourceClaims (resource.k8s.io/v1);
# `luasched run` watches them (the plugin's events name the resources) and
# schedules the pods with the default profile. DynamicResources' PreBind must
# have written each allocated claim's status (allocation with the device, the
# node selector, reservedFor the pod) through the claims' status subresource,
# and the pod competing for the taken device must stay pending with
# upstream's message.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
CLUSTER=$ROOT/spec/scenarios/dynamic_resources-competing-for-one-device.yaml

serve_start "$CLUSTER"
run_start
wait_bound 1 60 || echo "FAIL: trainer-1 was not bound within 60 s"
claim=$(api /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu-1)
expect_eq "gpu-1's allocation names node-b's device" \
  "$(jq -c '.status.allocation.devices.results' <<< "$claim")" \
  '[{"device":"gpu-0","driver":"gpu.example.com","pool":"node-b","request":"gpu"}]'
expect_eq "gpu-1's allocation is pinned to node-b" \
  "$(jq -c '.status.allocation.nodeSelector' <<< "$claim")" \
  '{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-b"]}]}]}'
uid=$(api /api/v1/namespaces/default/pods/trainer-1 | jq -r .metadata.uid)
expect_eq "gpu-1 is reserved for trainer-1 (the served pod's uid)" "$(jq -c '.status.reservedFor' <<< "$claim")" \
  "[{\"name\":\"trainer-1\",\"resource\":\"pods\",\"uid\":\"$uid\"}]"
expect_eq "trainer-1 is on node-b" \
  "$(api /api/v1/namespaces/default/pods/trainer-1 | jq -r .spec.nodeName)" "node-b"
# trainer-2 is retried when gpu-1 changes (the claim's update event) and fails again.
for _ in $(seq 1 300); do   # up to 60 s
  msg=$(api /api/v1/namespaces/default/pods/trainer-2 |
        jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
  [ -n "$msg" ] && break
  sleep 0.2
done
expect_eq "trainer-2 waits with upstream's message" "$msg" \
  "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
expect_eq "gpu-2 stays unallocated" \
  "$(api /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu-2 | jq -c '.status.allocation // null')" "null"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
expect_eq "no queueing hint failed" "$(grep -c 'queueing hint' "$TMP/run.err")" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

[ "$failures" -eq 0 ]
