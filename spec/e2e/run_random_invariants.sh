#!/usr/bin/env bash
# Randomized runs of the real-cluster path: for each seed, a random cluster
# (spec/e2e/random_cluster.lua: zones, taints, unschedulable nodes, priorities,
# selectors, tolerations, anti-affinity, spreading, gates, running pods) is
# served with an injected fault while `luasched run` schedules it and the test
# deletes and creates pods. Once settled, from the API: every pod is bound to
# an existing node, or pending with a PodScheduled=False reason, or gated; no
# node holds more CPU or memory requests than it has; the server refused no
# double binding; activeQ is empty. A failing seed is printed for replay.
#   LUASCHED_RANDOM_HTTP_SEEDS=N (default 3) runs seeds 1..N;
#   LUASCHED_RANDOM_HTTP_SEED=S runs seed S alone (a replay).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
SEEDS=${LUASCHED_RANDOM_HTTP_SEEDS:-3}
FAULTS=(watch-drop=15 gone=0.2 error=0.1 throttle=0.1:1 latency=10)

# api_write METHOD PATH [BODY]: retries what the injected faults refuse (429, 5xx).
api_write() {
  local code
  for _ in $(seq 1 50); do
    code=$(printf '%s' "${3:-}" | curl -sS -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" \
      -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X "$1" \
      ${3:+--data-binary @-} "$SERVER_URL$2")
    case $code in 429|5*|000) sleep 0.1 ;; *) return 0 ;; esac
  done
}

post_pod() {   # post_pod NAME CPU_MILLIS
  api_write POST /api/v1/namespaces/default/pods "$(printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","labels":{"app":"late"}},"spec":{"containers":[{"name":"c","image":"late:1","resources":{"requests":{"cpu":"%sm","memory":"256Mi"}}}]}}' "$1" "$2")"
}

delete_pod() {
  api_write DELETE "/api/v1/namespaces/default/pods/$1"
}

# Pods that are neither bound, nor pending with a recorded reason, nor gated.
unsettled() {
  api /api/v1/pods | jq '[.items[] | select((.spec.nodeName // "") == ""
      and ((.spec.schedulingGates // []) | length) == 0
      and ([(.status.conditions // [])[] | select(.type == "PodScheduled" and .status == "False"
            and (.reason == "Unschedulable" or .reason == "SchedulerError"))] | length) == 0)] | length'
}

# Nodes whose bound pods request more than they have (CPU in millicores, memory in Mi).
overcommitted() {
  api /api/v1/pods > "$TMP/pods.json"
  api /api/v1/nodes > "$TMP/nodes.json"
  jq -n --slurpfile p "$TMP/pods.json" --slurpfile n "$TMP/nodes.json" '
    def cpu: if endswith("m") then .[:-1] | tonumber else tonumber * 1000 end;
    def mem: if endswith("Gi") then .[:-2] | tonumber * 1024 elif endswith("Mi") then .[:-2] | tonumber
             else tonumber / 1048576 end;
    ($n[0].items | map({key: .metadata.name, value: .status.allocatable}) | from_entries) as $alloc
    | [$p[0].items[] | select((.spec.nodeName // "") != "")
       | {node: .spec.nodeName, cpu: ([.spec.containers[].resources.requests.cpu // "0" | cpu] | add),
          mem: ([.spec.containers[].resources.requests.memory // "0" | mem] | add)}]
    | group_by(.node)
    | map(select(($alloc[.[0].node] == null)
                 or (map(.cpu) | add) > ($alloc[.[0].node].cpu | cpu)
                 or (map(.mem) | add) > ($alloc[.[0].node].memory | mem)) | .[0].node)'
}

SEED_LIST=$(seq 1 "$SEEDS")
[ -n "${LUASCHED_RANDOM_HTTP_SEED:-}" ] && SEED_LIST=$LUASCHED_RANDOM_HTTP_SEED
for seed in $SEED_LIST; do
  fault=${FAULTS[$(( (seed - 1) % ${#FAULTS[@]} ))]}
  before=$failures
  luajit "$ROOT/spec/e2e/random_cluster.lua" "$seed" > "$TMP/cluster.json"
  serve_start "$TMP/cluster.json" --fault "$fault" --seed "$seed"
  PORT=$((20000 + (RANDOM % 30000)))
  run_start --seed "$seed" --secure-port "$PORT" --bind-address 127.0.0.1
  sleep 0.5
  for i in $(seq 1 8); do post_pod "late-$seed-$i" $((i * 150)); done
  # Churn: five existing pods go (every 13th by name), one of the new ones too.
  for victim in $(api /api/v1/pods | jq -r '.items[].metadata.name' | sort | awk 'NR % 13 == 0' | head -5) late-$seed-3; do
    delete_pod "$victim"
  done
  deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ] && [ "$(unsettled 2>/dev/null)" != "0" ]; do sleep 0.3; done
  n=$(unsettled)
  expect_eq "seed $seed ($fault): every pod bound, pending with a reason, or gated" "$n" "0"
  [ "$n" = 0 ] || api /api/v1/pods | jq -c '.items[] | select((.spec.nodeName // "") == "" and ((.spec.schedulingGates // []) | length) == 0)
      | {name: .metadata.name, status: .status, nominated: .status.nominatedNodeName}' | head -5
  expect_eq "seed $seed ($fault): no node over its allocatable, none missing" "$(overcommitted | jq -c .)" "[]"
  active=$(curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT/metrics" | sed -n 's/^scheduler_pending_pods{queue="active"} //p')
  expect_eq "seed $seed ($fault): activeQ drained" "$active" "0"
  run_stop
  serve_stop
  expect_eq "seed $seed ($fault): run stops cleanly" "$RUN_RC" "0"
  expect_eq "seed $seed ($fault): no pod bound twice or to a missing node (server)" "$SERVE_RC" "0"
  [ "$failures" -eq "$before" ] || echo "replay: LUASCHED_RANDOM_HTTP_SEED=$seed (--fault $fault)"
done
echo "$(echo $SEED_LIST | wc -w) seeds"
[ "$failures" -eq 0 ]
