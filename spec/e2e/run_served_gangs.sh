#!/usr/bin/env bash
# End to end over HTTP: the gang policies in `luasched run` against `luasched simulate
# --serve`, which serves the PodGroups (custom resources) with list and watch. Two gangs
# of three 1-cpu pods want one 4-cpu node: one gang binds whole, the other not at all
# (no partial admission, no deadlock), with GangScheduling (Workload API PodGroups,
# spec.schedulingGroup) and with Coscheduling (scheduler-plugins PodGroups, the
# scheduling.x-k8s.io/pod-group label).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
CLUSTER=$ROOT/spec/e2e/fixtures/gangs-served.yaml

# bound_by_gang: "a b" style counts of bound pods per gang (first letter of the name).
bound_by_gang() {
  api /api/v1/namespaces/default/pods |
    jq -r '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "") | .metadata.name[0:1]]
           | group_by(.) | map("\(.[0])=\(length)") | join(" ")'
}

# with_kubeconfig PROFILE: the example profile with clientConnection.kubeconfig set to the
# served cluster's (with --config, run takes its kubeconfig from there, as upstream).
with_kubeconfig() {
  { printf 'clientConnection: {kubeconfig: %s}\n' "$KUBECONFIG_FILE"; cat "$1"; } > "$TMP/$(basename "$1")"
  echo "$TMP/$(basename "$1")"
}

check_one_gang() {   # $1: label for the messages
  wait_bound 3 60 || echo "FAIL: $1: no gang bound within 60 s"
  sleep 2   # a partial admission or a second gang would show by now
  local got; got=$(bound_by_gang)
  case "$got" in
    "a=3"|"b=3") echo "ok: $1: one gang bound whole ($got)" ;;
    *) echo "FAIL: $1: bound pods per gang: $got (expected a=3 or b=3)"; failures=$((failures + 1)) ;;
  esac
}

serve_start "$CLUSTER"
expect_eq "the served API lists the Workload API PodGroups" \
  "$(api /apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups | jq -r '[.items[].metadata.name] | join(" ")')" "a b"
run_start --config "$(with_kubeconfig "$ROOT/profiles/examples/gang-scheduling.yaml")"
check_one_gang "GangScheduling"
run_stop
expect_eq "GangScheduling: luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "GangScheduling: the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"

# The same pods in scheduler-plugins' groups: the label names PodGroups ca and cb.
sed -e 's/spec: {schedulingGroup: {podGroupName: \(.\)}, /spec: {/' \
    -e 's/metadata: {name: \(.\)\([0-9]\), namespace: default,/metadata: {name: \1\2, namespace: default, labels: {scheduling.x-k8s.io\/pod-group: c\1},/' \
    "$CLUSTER" > "$TMP/coscheduling.yaml"
expect_eq "relabelled pods" "$(grep -c 'pod-group: c' "$TMP/coscheduling.yaml")" "6"
serve_start "$TMP/coscheduling.yaml"
run_start --config "$(with_kubeconfig "$ROOT/profiles/examples/coscheduling.yaml")"
check_one_gang "Coscheduling"
run_stop
expect_eq "Coscheduling: luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "Coscheduling: the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"

[ "$failures" -eq 0 ]
