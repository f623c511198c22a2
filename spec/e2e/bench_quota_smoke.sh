#!/usr/bin/env bash
# End to end: `luasched bench` on the small quota workload (spec/e2e/fixtures/bench-quota.yaml,
# CapacityScheduling through bench/quota_profile.yaml): ElasticQuotas given as workload
# objects reach the plugin; 10 of the 80 measured pods fit, the other 70 each reclaim by
# preempting one borrower's pod (counts worked out in the fixture's header). Bad `objects`
# entries name the file, the line and the field. No timing is asserted.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures/bench-quota.yaml

json=$("$BIN" bench $F --config bench/quota_profile.yaml --output json)
expect_eq "exit 0" "$?" "0"
for field in '"initPods":150' '"initScheduled":150' '"measuredPods":80' '"scheduled":80' '"unschedulable":0' \
             '"preempted":70'; do
  expect_contains "json: $field" "$json" "$field"
done

printf 'kind: Workload\nname: x\nnodes: {count: 1, template: {apiVersion: v1, kind: Node, metadata: {name: a}}}\nobjects: [{apiVersion: v1, kind: Foo, metadata: {name: f}}]\nmeasurePods: {count: 1, template: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}}\n' >"$TMP/bad.yaml"
"$BIN" bench "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
expect_eq "unknown kind: exit 2" "$?" "2"
expect_eq "unknown kind: message" "$(cat "$TMP/err")" \
  "luasched bench: $TMP/bad.yaml:4: objects[0]: kind Foo: not a kind the scheduler reads (Pod, Node, Namespace, Service, ...)"
printf 'kind: Workload\nname: x\nnodes: {count: 1, template: {apiVersion: v1, kind: Node, metadata: {name: a}}}\nobjects: {a: 1}\nmeasurePods: {count: 1, template: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}}\n' >"$TMP/bad2.yaml"
"$BIN" bench "$TMP/bad2.yaml" >/dev/null 2>"$TMP/err"
expect_eq "objects not a list: message" "$(cat "$TMP/err")" \
  "luasched bench: $TMP/bad2.yaml:4: objects: expected a list of Kubernetes objects"
[ "$failures" -eq 0 ]
