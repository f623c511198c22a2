#!/usr/bin/env bash
# End to end: `luasched record` against the served API while `luasched run`
# schedules it and kubectl makes changes (pods created, a label added, a node
# joining, a running pod deleted); then the recording replayed by `luasched
# simulate`: the initial objects, a Timeline of the changes at their times (no
# step for the scheduler's own bindings or status writes), the bindings kept
# apart, secrets of the pod spec scrubbed, and the replay's agreement with the
# live scheduler. Then a served cluster with what the recorder must hold beyond
# pods and nodes (zonal WaitForFirstConsumer claims the served PV controller
# provisions, a claim bound to a local volume, DRA claims, a PodGroup): the
# replay of its recording agrees with the live scheduler on every binding; a
# kind the scheduler reads but the recorder cannot record (metrics.k8s.io,
# read by TargetLoadPacking) is named in the trace and by simulate and compare.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
require_tool kubectl kubernetes-client
F=spec/e2e/fixtures/record
REC_PID=

serve_start "$F/cluster.yaml"
K=(kubectl --kubeconfig "$KUBECONFIG_FILE")

record_start() { # record_start OUT [FLAGS...]
  local out=$1; shift
  timeout 300 "$BIN" record --kubeconfig "$KUBECONFIG_FILE" -o "$out" "$@" 2> "$TMP/record.err" &
  REC_PID=$!
  wait_until 60 grep -q '^recording:' "$TMP/record.err"
}
record_stop() {
  kill -TERM "$REC_PID"; wait_exit "$REC_PID" 60; REC_RC=$?; REC_PID=
}

record_start "$TMP/trace.yaml"
expect_eq "initial state listed" "$(head -1 "$TMP/record.err")" \
  "recording: 8 objects listed; changes from now on are timeline steps"
run_start
for p in a b; do
  "${K[@]}" run "$p" --image=app --restart=Never \
    --overrides="{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}" >/dev/null
done
wait_bound 4 60 || echo "FAIL: a and b were not bound"
"${K[@]}" label pod a tier=web >/dev/null
"${K[@]}" create -f "$F/node-n3.yaml" >/dev/null
"${K[@]}" delete pod running >/dev/null
sleep 0.3
run_stop
record_stop
expect_eq "record: exit 0" "$REC_RC" "0"
expect_contains "record: counts" "$(cat "$TMP/record.err")" "recorded 8 objects, 5 timeline steps, 2 bindings over "

T=$TMP/trace.yaml
steps=$(sed -n '/^kind: Timeline/,/^---/p' "$T" | grep '^- ')
expect_eq "steps in order: the two creations, the label, the node, the deletion" \
  "$(sed -E 's/^- \{"at": "[0-9]+ms", "([a-z]+)": \{.*"kind":"([A-Za-z]+)".*$/\1 \2/' <<<"$steps" | sed -E 's/^(create|update) .*"name":"([^"]+)".*/\1 \2/')" \
"create Pod
create Pod
update Pod
create Node
delete Pod"
ats=$(grep -o '"at": "[0-9]*ms"' <<<"$steps" | grep -o '[0-9]*')
expect_eq "step times never go back" "$(sort -n <<<"$ats")" "$ats"
expect_eq "no step carries a node for a pod the live scheduler bound" "$(grep -c '"nodeName"' <<<"$steps")" "0"
# (sorted: the two bindings complete in either order on a busy machine)
expect_eq "the bindings, apart" "$(sed -n '/^kind: Bindings/,$p' "$T" | grep '^- ' | sed -E 's/, "at": "[0-9]+ms"//' | sort)" \
'- {"pod": "default/a", "node": "n2"}
- {"pod": "default/b", "node": "n2"}'
expect_eq "env values, annotations and managed fields scrubbed" \
  "$(grep -c 'hunter2\|managedFields\|kubectl.kubernetes.io' "$T")" "0"
expect_contains "the running pod is initial state, with its node" "$(grep '"name":"running"' "$T")" '"nodeName":"n1"'

# Replay: pods arrive at their recorded times, the bindings are the reference.
out=$("$BIN" simulate "$T" 2>&1)
expect_eq "replay: exit 0" "$?" "0"
at_a=$(sed -n '1p' <<<"$ats")
# Go duration form, as simulate prints times: 359ms, 1.568s
want_a=$(awk -v ms="$at_a" 'BEGIN { if (ms < 1000) printf "%dms", ms; else printf "%gs", ms / 1000 }')
expect_contains "replay: a arrives and is bound at its recorded time" "$out" "default/a: bound to n2 at $want_a"
expect_contains "replay: agreement" "$out" \
  "agreement: the live scheduler put 100.0% of pods on the same node (2 of 2 recorded bindings)"
expect_contains "replay: the deletion played" "$out" "default/running: deleted"
json=$("$BIN" simulate "$T" --output json 2>/dev/null)
expect_eq "replay: agreement in JSON" "$(jq -c .summary.agreement <<<"$json")" '{"sameNode":2,"recorded":2}'

# A policy that disagrees: MostAllocated packs a and b onto n1 (2 of 4 cpu used by running and db).
out=$("$BIN" simulate "$T" --config spec/e2e/fixtures/compare/most-allocated.yaml 2>&1)
expect_contains "replay under another policy: agreement 0" "$out" \
  "agreement: the live scheduler put 0.0% of pods on the same node (0 of 2 recorded bindings)"

# compare reports each policy's agreement with the recording.
expect_contains "compare: agreement per policy" \
  "$("$BIN" compare "$T" --config default --config spec/e2e/fixtures/compare/most-allocated.yaml 2>&1)" \
  "same node as the live scheduler                      100.0%           0.0%"

# --keep-all keeps what scrubbing drops.
record_start "$TMP/all.yaml" --keep-all --duration 1s
wait "$REC_PID"; REC_PID=
expect_eq "--keep-all keeps env values (db)" "$(grep -c hunter2 "$TMP/all.yaml")" "1"

# Errors.
expect_eq "no -o: exit 2" "$("$BIN" record --kubeconfig "$KUBECONFIG_FILE" >/dev/null 2>&1; echo $?)" "2"
expect_contains "no -o: message" "$("$BIN" record --kubeconfig "$KUBECONFIG_FILE" 2>&1)" \
  "luasched record: -o FILE is required (where the trace goes)"
expect_eq "bad --duration" "$("$BIN" record -o "$TMP/x.yaml" --duration soon 2>&1)" \
  'luasched record: --duration: expected a duration such as 90s, 10m or 2h, got "soon"'
expect_contains "unreadable kubeconfig" "$("$BIN" record -o "$TMP/x.yaml" --kubeconfig /nonexistent 2>&1)" \
  "/nonexistent"

serve_stop

# ---- volumes, DRA claims and a PodGroup: the replay agrees on every binding
GANG=$TMP/gang.yaml
{ printf 'clientConnection: {kubeconfig: %s}\n' "$TMP/serve.kubeconfig"; cat profiles/examples/gang-scheduling.yaml; } > "$GANG"
serve_start "$F/mixed.yaml"
K=(kubectl --kubeconfig "$KUBECONFIG_FILE")
record_start "$TMP/mixed-trace.yaml" --config "$GANG"
run_start --config "$GANG" --seed 7
# The live scheduler must be watching before the first pod is created (pods it
# would find in its first list arrive in the API server's list order, by name).
for _ in $(seq 1 600); do
  grep -q 'Caches are synced' "$TMP/run.err" && { ! grep -q 'Attempting to acquire' "$TMP/run.err" ||
    grep -q 'Successfully acquired lease' "$TMP/run.err"; } && break
  sleep 0.1
done
# One pod at a time, so that the live scheduler and the replay see the same order of arrival.
n=$(grep -c '^---' "$F/mixed-pods.yaml")
for i in $(seq 1 "$n"); do
  awk -v n="$i" 'BEGIN { RS = "---\n" } NR == n + 1' "$F/mixed-pods.yaml" | "${K[@]}" create -f - >/dev/null
done
wait_bound 9 60 || echo "FAIL: not every pod was bound within 60 s"
sleep 0.3
run_stop
record_stop
expect_eq "record (mixed): exit 0" "$REC_RC" "0"
expect_contains "record: says what the server does not serve" "$(cat "$TMP/record.err")" \
  "not served by the API server (nothing to record): podgroups.v1alpha3.scheduling.k8s.io, workloads.v1alpha1.scheduling.k8s.io"
serve_stop
T=$TMP/mixed-trace.yaml
for kind in PersistentVolumeClaim PersistentVolume StorageClass CSINode CSIDriver DeviceClass ResourceSlice \
            ResourceClaim PodGroup; do
  expect_contains "the recording holds $kind objects" "$(grep -o "\"kind\":\"$kind\"" "$T" | head -1)" "\"kind\":\"$kind\""
done
expect_eq "the provisioned volumes are timeline steps" \
  "$(sed -n '/^kind: Timeline/,/^---/p' "$T" | grep '"create"' | grep -c '"kind":"PersistentVolume"')" "2"
expect_eq "the claims' allocations are timeline steps" \
  "$(sed -n '/^kind: Timeline/,/^---/p' "$T" | grep '"update"' | grep -c '"kind":"ResourceClaim"')" "2"
# v1.37 DRA fields survive the served API, the watch and the recording: the shared device
# (allowMultipleAllocations, capacity) and gpu-a's share of it (8Gi of gpu-0's 16Gi, a shareID);
# gpu-b asks no capacity, so it would consume all 16Gi of gpu-0 and gets gpu-1.
expect_contains "the recording holds the shared device" "$(grep -o '"allowMultipleAllocations":true' "$T" | head -1)" \
  '"allowMultipleAllocations":true'
expect_contains "the recording holds gpu-a's share" \
  "$(sed -n '/^kind: Timeline/,/^---/p' "$T" | grep '"update"' | grep '"name":"gpu-a"' | grep -o '"consumedCapacity":{"memory":"8Gi"},"device":"gpu-0"' | head -1)" \
  '"consumedCapacity":{"memory":"8Gi"},"device":"gpu-0"'
expect_contains "gpu-b gets the other GPU" \
  "$(sed -n '/^kind: Timeline/,/^---/p' "$T" | grep '"update"' | grep '"name":"gpu-b"' | grep -o '"device":"gpu-[01]"' | head -1)" \
  '"device":"gpu-1"'

out=$(timeout 120 "$BIN" simulate "$T" --config profiles/examples/gang-scheduling.yaml --seed 7 2>&1)
expect_eq "replay (mixed): exit 0" "$?" "0"
expect_contains "replay (mixed): agreement on every binding" "$out" \
  "agreement: the live scheduler put 100.0% of pods on the same node (9 of 9 recorded bindings)"
expect_eq "replay (mixed): no step skipped" "$(grep -c 'step skipped' <<<"$out")" "0"
expect_eq "replay (mixed): nothing named as not recorded" "$(grep -c 'not recorded' <<<"$out")" "0"

# ---- the custom resources --config's plugins register for: Coscheduling's scheduler-plugins PodGroups
serve_start spec/e2e/fixtures/gangs-served.yaml
record_start "$TMP/cosched.yaml" --config profiles/examples/coscheduling.yaml --duration 1s
wait "$REC_PID"; REC_PID=
record_start "$TMP/default.yaml" --duration 1s
wait "$REC_PID"; REC_PID=
serve_stop
sp='"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup"'
expect_eq "Coscheduling's PodGroups are recorded with its configuration" "$(grep -c "$sp" "$TMP/cosched.yaml")" "2"
expect_eq "and not without it" "$(grep -c "$sp" "$TMP/default.yaml")" "0"
expect_eq "the Workload API's PodGroups are recorded in both" \
  "$(grep -c '"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup"' "$TMP/default.yaml")" "2"

# ---- what the recorder cannot record is named in the trace, by simulate and by compare
TLP=$TMP/tlp.yaml
{ printf 'clientConnection: {kubeconfig: %s}\n' "$TMP/serve.kubeconfig"; cat spec/scenarios/profile-target-load-packing.yaml; } > "$TLP"
serve_start "$F/mixed.yaml"
record_start "$TMP/tlp-trace.yaml" --config "$TLP" --duration 1s
wait "$REC_PID"; REC_PID=
serve_stop
T=$TMP/tlp-trace.yaml
why="metrics.k8s.io serves no watch and its values change with every scrape: a replay reads no metrics"
expect_eq "the trace names NodeMetrics as not recorded" "$(sed -n '/^notRecorded:/,$p' "$T")" \
"notRecorded:
- {\"kind\":\"NodeMetrics\",\"reason\":\"$why\"}"
expect_contains "record says so" "$(cat "$TMP/record.err")" "  NodeMetrics: $why"
expect_contains "simulate reports it" "$(timeout 60 "$BIN" simulate "$T" 2>&1)" \
  "not recorded (the live scheduler read them, this replay did not): NodeMetrics: $why"
expect_contains "compare reports it" \
  "$(timeout 120 "$BIN" compare "$T" --config default --config spec/e2e/fixtures/compare/most-allocated.yaml 2>&1)" \
  "not recorded (the live scheduler read them, the replays did not): NodeMetrics: $why"
expect_eq "compare's JSON names it" \
  "$(timeout 120 "$BIN" compare "$T" --config default --config default --output json 2>/dev/null | jq -r .notRecorded)" \
  "NodeMetrics: $why"
[ "$failures" -eq 0 ]
