#!/usr/bin/env bash
# End to end: what-if questions on a changed cluster ("changes",
# docs/operations/what-if.md) against what happens when the change is made
# for real on `simulate --serve`, for each kind other than addNodes
# (whatif_served.sh covers that one): cordonNodes, removePods, drainNodes,
# removeNodes. For each, on four nodes with pods on them:
# - the question with the change gives another answer than without it (the
#   change matters to the pod: the check cannot pass by accident);
# - the change is then made through the API (a node's spec.unschedulable
#   patched; pods deleted; a drain: cordoned and every pod but DaemonSet
#   pods deleted; a node deleted with its pods), and once the scheduler sees
#   it the same question without "changes" gives the answer the question
#   with them gave;
# - the pod created next is bound to that node (or to one of the nodes the
#   answer listed as tied with it).
# Then with --whatif-evaluator loop: a question is answered on the scheduling
# thread (no fork paid, no evaluator process).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"

# zone-a: a1 (web-1, a DaemonSet pod), a2; zone-b: b1, b2 (8 cpu)
node() { # NAME ZONE CPU
  printf -- '---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s, topology.kubernetes.io/zone: %s}}\nstatus: {allocatable: {cpu: "%s", memory: 32Gi, pods: "110"}}\n' \
    "$1" "$1" "$2" "$3"
}
bound() { # NAME NODE CPU [METADATA-EXTRA]
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default%s}\nspec: {nodeName: %s, containers: [{name: c, image: pause, resources: {requests: {cpu: "%s", memory: 1Gi}}}]}\nstatus: {phase: Running}\n' \
    "$1" "${4:-}" "$2" "$3"
}
{
  node a1 zone-a 4; node a2 zone-a 4; node b1 zone-b 4; node b2 zone-b 8
  bound web-1 a1 1 ', labels: {app: web}'
  bound ds-a1 a1 100m ', ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: ds-uid, controller: true}]'
  bound fill-a2 a2 2; bound fill-b1 b1 3; bound fill-b2 b2 1
} > "$TMP/cluster.yaml"
# --whatif-max-wait takes a positive Go duration, as run's other durations
out=$("$BIN" run --whatif-max-wait 0 2>&1 || echo "exit $?")
expect_eq "--whatif-max-wait 0 is refused" "$out" 'luasched run: invalid argument "0" for "--whatif-max-wait" flag: expected a positive Go duration such as 15s
exit 2'
serve_start "$TMP/cluster.yaml"
synced() { grep -q "Caches are synced" "$TMP/run.err"; }
start_run() { # [FLAGS...]: luasched run against the served cluster, its secure port on PORT
  for _ in 1 2 3 4 5; do
    PORT=$(shuf -i 20000-60000 -n 1)
    "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" \
      "$@" > "$TMP/run.out" 2> "$TMP/run.err" &
    RUN_PID=$!
    wait_until 60 healthz_or_gone
    kill -0 "$RUN_PID" 2>/dev/null && break
  done
  wait_until 60 synced || { echo "FAIL: run did not sync"; cat "$TMP/run.err"; exit 1; }
}
start_run

pod() { # NAME CPU [SPEC-EXTRA-JSON]
  printf '{"metadata":{"name":"%s","labels":{"app":"probe"}},"spec":{%s"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"%s","memory":"1Gi"}}}]}}' \
    "$1" "${3:+$3,}" "$2"
}
# node_of POD-JSON [CHANGES-JSON]: the what-if's node ("-": none) and tied nodes, on one line.
node_of() {
  jq -c --argjson changes "${2:-null}" '{pod: ., explain: false, hints: false, preemption: false}
    + (if $changes then {changes: $changes} else {} end)' <<<"$1" | whatif_answer |
    jq -r '.placements[0] | "\(.node // "-") \((.tiedNodes // []) | join(" "))"'
}
# check KIND CHANGES-JSON POD-JSON REAL-CHANGE-COMMAND...
check() {
  local kind=$1 changes=$2 p=$3 name before after now got; shift 3
  name=$(jq -r .metadata.name <<<"$p")
  before=$(node_of "$p")
  after=$(node_of "$p" "$changes")
  echo "  $kind: without the change ${before%% *}, with it ${after%% *} (tied: ${after#* })"
  expect_ne "$kind: the change moves the pod" "${before%% *}" "${after%% *}"
  "$@"
  same() { now=$(node_of "$p"); [ "${now%% *}" = "${after%% *}" ]; }
  wait_until 30 same || true
  expect_eq "$kind: made for real, the question without changes answers as the one with them" "${now%% *}" \
    "${after%% *}"
  pod_create <<<"$p"
  got=$(pod_decided "$name")
  case " ${after#* } " in *" $got "*) got=${after%% *} ;; esac   # among the tied nodes
  expect_eq "$kind: the pod created goes where the what-if said" "$got" "${after%% *}"
}
expect_ne() {
  if [ "$2" = "$3" ]; then echo "FAIL: $1 (both $2)"; failures=$((failures + 1)); else echo "ok: $1"; fi
}
node_patch() { api_send PATCH "/api/v1/nodes/$1" "$2"; }
pods_on() { # NODE [daemons]: the pods bound to NODE (all, or all but DaemonSet pods)
  api /api/v1/pods | jq -r --arg n "$1" --arg keep "${2:-}" '.items[] | select(.spec.nodeName == $n)
    | select($keep == "" or ([.metadata.ownerReferences[]? | select(.controller and .kind == "DaemonSet")] | length == 0))
    | .metadata.name'
}
delete_pods() { local p; for p in "$@"; do api_send DELETE "/api/v1/namespaces/default/pods/$p"; done; }
delete_pods_on() { # NODE [daemons]: pods_on's pods deleted
  local list; mapfile -t list < <(pods_on "$@")
  [ "${#list[@]}" -eq 0 ] || delete_pods "${list[@]}"
}
cordon() { node_patch "$1" '{"spec":{"unschedulable":true}}'; }
drain() { cordon "$1"; delete_pods_on "$1" daemons; }   # as kubectl drain --ignore-daemonsets
remove_node() { delete_pods_on "$1"; api_send DELETE "/api/v1/nodes/$1"; }
# fits_on NODE: a 10m pod could go to NODE now (the scheduler saw it open again)
fits_on() {
  [ "$(node_of "$(pod fits-probe 10m '"nodeSelector":{"kubernetes.io/hostname":"'"$1"'"}')" | cut -d' ' -f1)" = "$1" ]
}

# cordon: the node a 1-cpu pod would get is cordoned; then opened again
p1=$(pod p1 1)
first=$(node_of "$p1" | cut -d' ' -f1)
check cordonNodes '{"cordonNodes":["'"$first"'"]}' "$p1" cordon "$first"
node_patch "$first" '{"spec":{"unschedulable":false}}'
wait_until 30 fits_on "$first" || echo "  ($first did not open again)"

# removePods: 7.5 cpu fit nowhere, until b2's pod leaves
check removePods '{"removePods":["default/fill-b2"]}' "$(pod p2 7500m)" delete_pods fill-b2

# drainNodes: no zone-b node has 1.5 cpu left and zone-a holds web-1, which the
# pod may not share a zone with; draining a1 evicts web-1 (ds-a1 stays)
anti='"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"web"}},"topologyKey":"topology.kubernetes.io/zone"}]}}'
check drainNodes '{"drainNodes":["a1"]}' "$(pod p3 1500m "$anti")" drain a1
expect_eq "the drain kept the DaemonSet pod" "$(pods_on a1)" "ds-a1"

# removeNodes: the node a small pod would get is removed with its pods
p4=$(pod p4 100m)
first=$(node_of "$p4" | cut -d' ' -f1)
check removeNodes '{"removeNodes":["'"$first"'"]}' "$p4" remove_node "$first"

run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"

# --whatif-evaluator loop: the same questions answered on the scheduling thread
start_run --whatif-evaluator loop --whatif-max-wait 500ms
a=$(jq -c '{pod: ., explain: false, changes: {removeNodes: ["b2"]}}' <<<"$(pod p5 100m)" | whatif_answer)
expect_eq "in the loop: answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"
expect_eq "in the loop: no fork paid" "$(jq -r '.loopPauseMs // "none"' <<<"$a")" "none"
expect_eq "the worker started no evaluator" "$(pgrep -P "$(pgrep -P "$RUN_PID" | head -1)" | wc -l)" "0"
run_stop
expect_eq "luasched run stops cleanly (loop)" "$RUN_RC" "0"
[ "$failures" -eq 0 ]
