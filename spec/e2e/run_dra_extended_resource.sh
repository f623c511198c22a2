#!/usr/bin/env bash
# End to end over HTTP, extended resources backed by DRA (DRAExtendedResource, GA and locked in
# v1.37): `luasched simulate --serve` serves spec/scenarios/dynamic_resources-extended-resource.yaml
# (a DeviceClass whose extendedResourceName is example.com/gpu, one GPU on node-b, two pods asking
# example.com/gpu: 1); `luasched run` schedules them. As upstream's PreBind (dynamicresources.go
# bindClaim), the supervisor must have created the special ResourceClaim through the API: name from
# generateName "first-extended-resources-", annotation resource.kubernetes.io/extended-resource-claim
# "true", the pod its controller owner, one request container-0-request-1 for one device of the
# class; then written its allocation (node-b's gpu-0) and reservation for the pod through the status
# subresource, and the pod's status.extendedResourceClaimStatus (the request mapping and the claim's
# name). The second pod stays pending with upstream's message. (What else a worker may not create or
# patch is refused by the supervisor: spec/core/worker/test_relay_checks.c.)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
CLUSTER=$ROOT/spec/scenarios/dynamic_resources-extended-resource.yaml

serve_start "$CLUSTER"
run_start
wait_bound 1 60 || { echo "FAIL: first was not bound within 60 s"; cat "$TMP/run.err"; }
pod=$(api /api/v1/namespaces/default/pods/first)
expect_eq "first is on node-b" "$(jq -r .spec.nodeName <<< "$pod")" "node-b"
claims=$(api /apis/resource.k8s.io/v1/namespaces/default/resourceclaims)
expect_eq "one claim, created for first" "$(jq '.items | length' <<< "$claims")" "1"
claim=$(jq -c '.items[0]' <<< "$claims")
name=$(jq -r .metadata.name <<< "$claim")
expect_eq "its name: generateName first-extended-resources- and 5 characters" \
  "$(grep -cE '^first-extended-resources-[a-z0-9]{5}$' <<< "$name")" "1"
expect_eq "its annotation and owner" \
  "$(jq -c '[.metadata.annotations["resource.kubernetes.io/extended-resource-claim"], (.metadata.ownerReferences | map([.apiVersion, .kind, .name, .uid == "'"$(jq -r .metadata.uid <<< "$pod")"'", .controller]))]' <<< "$claim")" \
  '["true",[["v1","Pod","first",true,true]]]'
expect_eq "its request: one device of the class, for container 0's example.com/gpu" \
  "$(jq -cS '.spec.devices.requests' <<< "$claim")" \
  '[{"exactly":{"allocationMode":"ExactCount","count":1,"deviceClassName":"gpu.example.com"},"name":"container-0-request-1"}]'
expect_eq "its allocation: node-b's gpu-0, reserved for first" \
  "$(jq -c '[.status.allocation.devices.results, [.status.reservedFor[] | .name]]' <<< "$claim")" \
  '[[{"device":"gpu-0","driver":"gpu.example.com","pool":"node-b","request":"container-0-request-1"}],["first"]]'
expect_eq "first's status.extendedResourceClaimStatus names the claim and maps the request" \
  "$(jq -c '.status.extendedResourceClaimStatus' <<< "$pod")" \
  "{\"requestMappings\":[{\"containerName\":\"main\",\"requestName\":\"container-0-request-1\",\"resourceName\":\"example.com/gpu\"}],\"resourceClaimName\":\"$name\"}"
for _ in $(seq 1 300); do   # up to 60 s
  msg=$(api /api/v1/namespaces/default/pods/second |
        jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
  [ -n "$msg" ] && break
  sleep 0.2
done
expect_eq "second waits with upstream's message" "$msg" \
  "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
expect_eq "no plugin error: PreBind's writes all went through" \
  "$(grep -c 'create claim for extended resources\|ExtendedResourceClaimStatus' "$TMP/run.err")" "0"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"

[ "$failures" -eq 0 ]
