#!/usr/bin/env bash
# End to end: --feature-gates, as kube-scheduler v1.37's (component-base's
# featuregate messages), on every command that takes a configuration. One
# case per gate: its v1.37 default is accepted; its other value either
# restores the earlier behaviour (shown by a simulation or the written
# configuration) or is refused (locked gates with upstream's message, gates
# whose earlier or later behaviour luasched lacks with luasched's).
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures
CFG=profiles/examples/bin-packing.yaml
require_tool jq jq

gates() { timeout 60 "$BIN" check "$CFG" --feature-gates="$1" >"$TMP/out" 2>"$TMP/err"; echo $?; }
invalid() { echo "luasched check: invalid argument \"$1\" for \"--feature-gates\" flag: $2"; }

# ---- syntax and upstream's messages
expect_eq "several gates in one flag, spaces trimmed" "$(gates 'OpportunisticBatching=false, SchedulerPopFromBackoffQ = false')" "0"
expect_eq "unknown gate: exit 2" "$(gates Foo=true)" "2"
expect_eq "unknown gate: upstream's message" "$(cat "$TMP/err")" "$(invalid Foo=true 'unrecognized feature gate: Foo')"
gates OpportunisticBatchin=false >/dev/null
expect_eq "unknown gate: did you mean" "$(cat "$TMP/err")" \
  "$(invalid OpportunisticBatchin=false 'unrecognized feature gate: OpportunisticBatchin (did you mean OpportunisticBatching?)')"
gates opportunisticbatching=false >/dev/null
expect_eq "names are case-sensitive, as upstream's" "$(cat "$TMP/err")" \
  "$(invalid opportunisticbatching=false 'unrecognized feature gate: opportunisticbatching (did you mean OpportunisticBatching?)')"
gates OpportunisticBatching=maybe >/dev/null
expect_eq "not a bool" "$(cat "$TMP/err")" "$(invalid OpportunisticBatching=maybe \
  'invalid value of OpportunisticBatching=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax')"
gates OpportunisticBatching >/dev/null
expect_eq "no value" "$(cat "$TMP/err")" "$(invalid OpportunisticBatching 'missing bool value for OpportunisticBatching')"
gates SchedulerQueueingHints=true >/dev/null
expect_contains "a GA gate set explicitly: upstream's warning" "$(cat "$TMP/err")" \
  '"Setting GA feature gate SchedulerQueueingHints=true. It will be removed in a future release."'
timeout 60 "$BIN" check "$CFG" --feature-gates GenericWorkload=false --feature-gates OpportunisticBatching=false >/dev/null 2>&1
expect_eq "the flag repeated, and with a separate value" "$?" "0"
for cmd in "simulate $F/two-nodes.yaml" "explain $F/two-nodes.yaml default/a" "run --write-config-to $TMP/w.yaml" \
           "bench bench/scheduling_basic.yaml" "compare $F/compare/trace.yaml --config $CFG --config $CFG"; do
  timeout 60 "$BIN" $cmd --feature-gates=Foo=true >/dev/null 2>"$TMP/err"
  expect_eq "${cmd%% *} takes --feature-gates" "$?:$(cat "$TMP/err")" \
    "2:luasched ${cmd%% *}: invalid argument \"Foo=true\" for \"--feature-gates\" flag: unrecognized feature gate: Foo"
done

# ---- locked gates (GA, locked to their default): upstream's refusal
for g in DRAAdminAccess DRAExtendedResource DRAPrioritizedList DRAResourceClaimDeviceStatus DynamicResourceAllocation \
         InPlacePodVerticalScaling NodeDeclaredFeatures PodSchedulingReadiness SchedulerQueueingHints VolumeAttributesClass; do
  expect_eq "$g=true (locked, its default) accepted" "$(gates $g=true)" "0"
  gates $g=false >/dev/null
  expect_eq "$g=false: locked" "$(cat "$TMP/err")" \
    "$(invalid $g=false "cannot set feature gate $g to false, feature is locked to true")"
done

# ---- gates whose other value luasched does not implement: refused, saying why
refused() {   # GATE VALUE REASON
  local def=true; [ "$2" = true ] && def=false
  expect_eq "$1=$def (its default) accepted" "$(gates "$1=$def")" "0"
  gates "$1=$2" >/dev/null
  expect_eq "$1=$2 refused" "$(cat "$TMP/err")" "$(invalid "$1=$2" "$1=$2 is not supported by luasched: $3")"
}
WORKLOAD="workload scheduling (PodGroup cycles, placements, workload preemption) is not implemented; gangs are scheduled by the GangScheduling and Coscheduling policy plugins"
DRA="luasched's DynamicResources allocator has only the v1.37 behaviour"
NONE="luasched does not implement it"
refused AllAlpha true "it would turn on every alpha gate, and luasched implements none of them"
refused AllBeta true "it would turn on every beta gate, GenericWorkload and others luasched does not implement among them"
refused SchedulerAsyncPreemption false "luasched has only asynchronous preemption (victims deleted after the cycle, the preemptor waiting), not the synchronous one"
refused SchedulerAsyncAPICalls true "the API call dispatcher (merged calls) is not implemented; luasched's writer pool sends each call"
refused InPlacePodLevelResourcesVerticalScaling false "luasched always accounts resized pod-level resources as v1.37 does"
for g in DRADeviceTaints DRADeviceTaintRules; do
  refused $g false "$DRA"
done
for g in GenericWorkload TopologyAwareWorkloadScheduling CompositePodGroup PodGroupPreemptionPolicy DRAWorkloadResourceClaims; do
  refused $g true "$WORKLOAD"
done
for g in SchedulerPreQueueingHints InPlacePodVerticalScalingSchedulerPreemption TaintTolerationComparisonOperators \
         InterPodAffinityHostnameFastPath DRAListTypeAttributes DRANodeAllocatableResources DRADerivedAttributes \
         DRADeviceCompatibilityGroups DRAOptionalNodeOperations; do
  refused $g true "$NONE"
done

# ---- gates whose earlier behaviour luasched implements
sim_json() { timeout 60 "$BIN" simulate "$@" --output json 2>/dev/null; }

# The DRA beta gates off (upstream's allocator without them): spec/scenarios' DRA scenarios.
outcomes() { sim_json "spec/scenarios/dynamic_resources-$1.yaml" --feature-gates="$2=false" |
  jq -r '.pods[] | "\(.name) \(.node // .attempts[0].message)"'; }
# DRAConsumableCapacity=false: a request with capacity is an Error; gpu-0 is an ordinary device,
# which p2 (no capacity asked) takes whole.
expect_eq "DRAConsumableCapacity=false" "$(outcomes consumable-capacity DRAConsumableCapacity | sed 's/ (plugins.*//' | sed -n '1,2p')" \
  'p1 running PreFilter plugin "DynamicResources": claim default/c1, request gpu: has capacity requests, but the DRAConsumableCapacity feature is disabled
p2 node-a'
# DRAPartitionableDevices=false: the partitions consume counters, so none is ever allocated.
expect_eq "DRAPartitionableDevices=false" "$(outcomes partitionable-counters DRAPartitionableDevices | cut -d' ' -f2- | sort -u)" \
  "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
# DRADeviceBindingConditions=false: devices with binding conditions are never selected.
expect_eq "DRADeviceBindingConditions=false" "$(outcomes binding-conditions DRADeviceBindingConditions | cut -d' ' -f2- | sort -u)" \
  "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."

# OpportunisticBatching=false: no hint ever (bench/batching_profile.yaml is the
# default profile without PodTopologySpread's system defaults, so identical
# pods are signable): the 2nd..6th of 6 identical pods on 4 nodes take the
# previous cycle's hint when on, none when off.
luajit bench/make_cluster.lua 4 6 > "$TMP/identical.json"
hints() { sim_json "$TMP/identical.json" --config bench/batching_profile.yaml "$@" | jq -c '[.pods[] | (.attempts[-1].batchHintOnly // false)]'; }
expect_eq "OpportunisticBatching=true: hints" "$(hints --feature-gates=OpportunisticBatching=true)" "[false,true,true,true,true,true]"
expect_eq "OpportunisticBatching=false: no hint" "$(hints --feature-gates=OpportunisticBatching=false)" "[false,false,false,false,false,false]"

# SchedulerPopFromBackoffQ=false: big fails at 0 s (cpu 2 on a 1-cpu node),
# backoff 1 s; a node joins at 100 ms and moves it to backoffQ (still backing
# off). On: activeQ is empty, so Pop takes it at once (100 ms). Off: it waits
# for its backoff to end, exactly 0 + 1 s (no 1 s window), flushed at the 1 s tick.
cat >"$TMP/backoff.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "1", memory: 2Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
---
apiVersion: luasched.io/v1alpha1
kind: Timeline
steps:
- at: 100ms
  create:
    apiVersion: v1
    kind: Node
    metadata: {name: large}
    status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
EOF
times() { sim_json "$TMP/backoff.yaml" "$@" | jq -c '[.pods[0].attempts[] | [.time, .result]]'; }
expect_eq "SchedulerPopFromBackoffQ=true: popped from backoffQ" "$(times)" '[[0,"unschedulable"],[0.1,"bound"]]'
expect_eq "SchedulerPopFromBackoffQ=false: after its backoff" \
  "$(times --feature-gates=SchedulerPopFromBackoffQ=false)" '[[0,"unschedulable"],[1,"bound"]]'

# NominatedNodeNameForExpectation=false: the pods a Permit made wait get no
# nominatedNodeName for their binding (v1.34); simulate_permit.sh shows the
# v1.37 values (full-0 and full-1 bound@node-1, short-* unschedulable@node-1).
expected() { sim_json $F/gangs.yaml --config $F/with-gang.yaml --plugin-path $F/plugins "$@" |
  jq -r '.pods[] | .name + " " + ([.attempts[] | .result + "@" + (.expectedNode // "-")] | join(","))' | LC_ALL=C sort; }
expect_eq "NominatedNodeNameForExpectation=true: expected nodes" "$(expected | head -1)" "full-0 bound@node-1"
expect_eq "NominatedNodeNameForExpectation=false: none" \
  "$(expected --feature-gates=NominatedNodeNameForExpectation=false)" \
'full-0 bound@-
full-1 bound@-
full-2 bound@-
short-0 unschedulable@-,unschedulable@-
short-1 unschedulable@-,unschedulable@-
solo bound@-'

# StorageCapacityScoring=false: VolumeBinding has no shape (not written,
# refused when given) and does not score: spec/scenarios/volume_binding-
# capacity-tracking.yaml's small claim scores n-b 90 and n-c 80 when on.
SC=spec/scenarios/volume_binding-capacity-tracking.yaml
vb() { sim_json $SC "$@" | jq -c '.pods[] | select(.name == "small") | .attempts[-1] | [.node, .score["n-b"].VolumeBinding, .score["n-c"].VolumeBinding]'; }
expect_eq "StorageCapacityScoring=true: scored" "$(vb)" '["n-b",90,80]'
expect_eq "StorageCapacityScoring=false: not scored" "$(vb --feature-gates=StorageCapacityScoring=false)" '["n-b",null,null]'
timeout 60 "$BIN" run --feature-gates=StorageCapacityScoring=false --write-config-to "$TMP/nosc.yaml" >/dev/null 2>&1
expect_eq "StorageCapacityScoring=false: no shape written" \
  "$(grep -B3 '^    name: VolumeBinding$' "$TMP/nosc.yaml")" \
  "      apiVersion: kubescheduler.config.k8s.io/v1
      bindTimeoutSeconds: 600
      kind: VolumeBindingArgs
    name: VolumeBinding"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: [{utilization: 0, score: 10}]}\n' >"$TMP/shape.yaml"
timeout 60 "$BIN" check "$TMP/shape.yaml" --feature-gates=StorageCapacityScoring=false >"$TMP/out" 2>&1
expect_eq "StorageCapacityScoring=false: a shape is refused as upstream" "$(head -1 "$TMP/out")" \
  "$TMP/shape.yaml: profile default-scheduler: $TMP/shape.yaml:6: profiles[0].pluginConfig[0].args: initializing plugin \"VolumeBinding\": shape: Invalid value: [{\"utilization\":0,\"score\":10}]: unexpected field \`shape\`, remove it or turn on the feature gate StorageCapacityScoring"
expect_eq "StorageCapacityScoring=true: the same shape is fine" \
  "$(timeout 60 "$BIN" check "$TMP/shape.yaml" >/dev/null 2>&1; echo $?)" "0"

# DRASchedulerFilterTimeout=false: no filterTimeout default (not written) and
# one given is Forbidden, as ValidateDynamicResourcesArgs says.
timeout 60 "$BIN" run --feature-gates=DRASchedulerFilterTimeout=false --write-config-to "$TMP/noft.yaml" >/dev/null 2>&1
expect_eq "DRASchedulerFilterTimeout=false: no filterTimeout written" \
  "$(grep -B3 '^    name: DynamicResources$' "$TMP/noft.yaml")" \
  "      apiVersion: kubescheduler.config.k8s.io/v1
      bindingTimeout: 10m0s
      kind: DynamicResourcesArgs
    name: DynamicResources"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 5s}\n' >"$TMP/ft.yaml"
timeout 60 "$BIN" check "$TMP/ft.yaml" --feature-gates=DRASchedulerFilterTimeout=false >"$TMP/out" 2>&1
expect_eq "DRASchedulerFilterTimeout=false: a filterTimeout is Forbidden" "$(head -1 "$TMP/out")" \
  "$TMP/ft.yaml: profile default-scheduler: $TMP/ft.yaml:6: profiles[0].pluginConfig[0].args: initializing plugin \"DynamicResources\": filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"
expect_eq "DRASchedulerFilterTimeout=true: the same filterTimeout is fine" \
  "$(timeout 60 "$BIN" check "$TMP/ft.yaml" >/dev/null 2>&1; echo $?)" "0"

# VolumeLimitScaling=false: CSIDriver.spec.preventPodSchedulingIfMissing is not
# read (v1.36): in spec/scenarios/node_volume_limits-attachments-and-classes.yaml
# n3, whose CSINode lacks csi.example.com, is rejected for fresh when on and
# passes NodeVolumeLimits when off (no limit for the driver there).
NV=spec/scenarios/node_volume_limits-attachments-and-classes.yaml
n3() { sim_json $NV "$@" | jq -r '.pods[] | select(.name == "fresh") | .attempts[-1].filter.n3.NodeVolumeLimits'; }
expect_eq "VolumeLimitScaling=true: the missing driver rejects n3" "$(n3)" "csi.example.com CSI driver is not installed on the node"
expect_eq "VolumeLimitScaling=false: n3 passes" "$(n3 --feature-gates=VolumeLimitScaling=false)" "passed"

# PodLevelResources=false: pod.spec.resources is not read (v1.31). p asks
# cpu 3 at the pod level and 100m in its container; n1 has 2 cpus.
cat >"$TMP/plr.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  resources: {requests: {cpu: "3"}}
  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
EOF
expect_eq "PodLevelResources=true: the pod-level cpu 3 does not fit" "$(timeout 60 "$BIN" simulate "$TMP/plr.yaml" | head -1)" \
  "default/p: pending: 0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
expect_eq "PodLevelResources=false: the container's 100m fits" \
  "$(timeout 60 "$BIN" simulate "$TMP/plr.yaml" --feature-gates=PodLevelResources=false | head -1)" "default/p: bound to n1"

# MatchLabelKeysInPodTopologySpread=false: a spread constraint's matchLabelKeys
# is not read (fixtures/match-label-keys.yaml works the counts).
mlk() { sim_json $F/match-label-keys.yaml "$@" | jq -r '.pods[] | select(.name == "new") | .attempts[-1].filter.n2.PodTopologySpread'; }
expect_eq "MatchLabelKeysInPodTopologySpread=true: n2 passes" "$(mlk)" "passed"
expect_eq "MatchLabelKeysInPodTopologySpread=false: n2 fails" \
  "$(mlk --feature-gates=MatchLabelKeysInPodTopologySpread=false)" "node(s) didn't match pod topology spread constraints"

[ "$failures" -eq 0 ]
