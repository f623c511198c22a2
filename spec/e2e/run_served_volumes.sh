#!/usr/bin/env bash
# End to end over HTTP with volumes: `luasched simulate --serve` serves a StatefulSet-like set
# of 6 pods whose WaitForFirstConsumer claims (a zonal CSI class allowing zones b and c) are not
# bound yet; `luasched run --kubeconfig` schedules them with the default profile. VolumeBinding's
# PreBind writes each claim's selected node through the API, the served PV controller
# provisions a volume there and binds the claim, PreBind sees it through its informers and the
# pod is bound. Checked on the server: every pod bound once, every claim bound once to a
# volume provisioned for the node its pod runs on, in that node's zone (b or c). Then the same
# with the provisioner failing (--fault provision=fail): nothing is bound, the claims go back
# to the scheduler and the pods stay pending.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
CLUSTER=$ROOT/spec/e2e/fixtures/statefulset-volumes.yaml

serve_start "$CLUSTER"
run_start --seed 3
wait_bound 6 60 || echo "FAIL: not every pod was bound within 60 s"
api /api/v1/namespaces/data/pods > "$TMP/pods.json"
api /api/v1/namespaces/data/persistentvolumeclaims > "$TMP/claims.json"
api /api/v1/persistentvolumes > "$TMP/volumes.json"
api /api/v1/nodes > "$TMP/nodes.json"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0 (no pod or claim bound twice)" "$SERVE_RC" "0"

expect_eq "6 pods bound once each" "$(grep -c '^data/db-[0-5]: bound to ' "$TMP/serve.out")" "6"
expect_eq "6 claims bound once each" "$(grep -c '^claim data/pgdata-db-[0-5]: bound to volume pvc-' "$TMP/serve.out")" "6"
expect_eq "no claim bound twice" "$(grep -c 'times$' "$TMP/serve.out")" "0"
# pod -> node, claim -> selected node and volume, volume -> zone of its node affinity
jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName)"' "$TMP/pods.json" | sort > "$TMP/pod-nodes"
jq -r '.items[] | "\(.metadata.name | sub("^pgdata-"; "")) \(.metadata.annotations["volume.kubernetes.io/selected-node"])"' \
  "$TMP/claims.json" | sort > "$TMP/claim-nodes"
expect_eq "each claim was provisioned for its pod's node" "$(cat "$TMP/claim-nodes")" "$(cat "$TMP/pod-nodes")"
expect_eq "every claim is Bound with bind-completed" \
  "$(jq '[.items[] | select(.status.phase == "Bound" and .metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes")] | length' "$TMP/claims.json")" "6"
jq -r '.items[] | "\(.spec.claimRef.name | sub("^pgdata-"; "")) \(.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0])"' \
  "$TMP/volumes.json" | sort > "$TMP/volume-zones"
jq -r '.items[] | "\(.metadata.name) \(.metadata.labels["topology.kubernetes.io/zone"])"' "$TMP/nodes.json" > "$TMP/node-zones"
awk 'NR == FNR { zone[$1] = $2; next } { print $1, zone[$2] }' "$TMP/node-zones" "$TMP/pod-nodes" | sort > "$TMP/pod-zones"
expect_eq "each volume's node affinity is its pod's zone" "$(cat "$TMP/volume-zones")" "$(cat "$TMP/pod-zones")"
expect_eq "no pod in zone a (the class allows b and c)" "$(grep -c ' a$' "$TMP/pod-zones")" "0"
expect_eq "the volumes claim their claims" "$(jq '[.items[] | select(.status.phase == "Bound" and .spec.claimRef.uid != null)] | length' "$TMP/volumes.json")" "6"

# A provisioner that fails: the claims lose their selected node again, nothing is bound.
serve_start "$CLUSTER" --fault provision=fail
run_start --seed 3 -v 2
for _ in $(seq 1 300); do   # until db-0's PreBind failure is reported (at most 60 s)
  api /apis/events.k8s.io/v1/namespaces/data/events > "$TMP/events.json"
  grep -q 'provisioning failed for PVC \\"pgdata-db-0' "$TMP/events.json" && break
  sleep 0.2
done
bound=$(api /api/v1/pods | jq '[.items[] | select(.spec.nodeName != null)] | length')
claims_bound=$(api /api/v1/namespaces/data/persistentvolumeclaims | jq '[.items[] | select(.status.phase == "Bound")] | length')
run_stop
serve_stop
expect_eq "failing provisioner: no pod bound" "$bound" "0"
expect_eq "failing provisioner: no claim bound" "$claims_bound" "0"
expect_eq "failing provisioner: the server exits 0" "$SERVE_RC" "0"
expect_contains "failing provisioner: PreBind failures logged" "$(cat "$TMP/run.err")" 'provisioning failed for PVC'
expect_contains "failing provisioner: FailedScheduling events" "$(jq -r '.items[].note' "$TMP/events.json")" \
  'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "pgdata-db-0"'

[ "$failures" -eq 0 ]
