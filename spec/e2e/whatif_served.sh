#!/usr/bin/env bash
# End to end: the what-if API of `luasched run` against `simulate --serve`
# (docs/operations/what-if.md).
# - /whatif is behind the secure port's delegated authentication and
#   authorization (POST on the non-resource path /whatif): anonymous and a
#   user without a role get 403, a GET 405, system:masters an answer.
# - The answer is the decision: for WHATIF_PODS random pods (default 30), asked
#   about one by one and then created, the node each is bound to is the node
#   the what-if named, or one of the nodes it listed as tied; a pod the what-if
#   called unschedulable stays pending (it is deleted again).
# - A gang that does not fit as a whole is "no", with the member that fails
#   and why; nothing was created.
# - A plugin that raises or runs out of time on a question gives that question
#   an error naming the plugin, and so does a question past its deadline
#   ("timeoutSeconds": the forked evaluator answering it ends); the scheduler
#   goes on (a pod created next is bound, the worker was not replaced).
# - The last evaluator stays warm (one process is left): while nothing changed
#   it answers the next question itself (no fork); a pod bound retires it and
#   a fresh one answers.
# - A template's predicted count is the number that bind when that many are
#   created; the same question with two nodes added answers more.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
F=$ROOT/spec/e2e/fixtures/whatif
require_tool luajit luajit
N=${WHATIF_PODS:-30}
NODES=${WHATIF_NODES:-40}
BOUND=${WHATIF_BOUND:-400}

luajit "$ROOT/spec/e2e/whatif_cluster.lua" "${WHATIF_SEED:-5}" "$NODES" "$BOUND" "$N" \
  > "$TMP/cluster.json" 2> "$TMP/pods.jsonl"
serve_start "$TMP/cluster.json" --serve-user alice-token=alice
synced() { grep -q "Caches are synced" "$TMP/run.err"; }

for _ in 1 2 3 4 5; do
  PORT=$(shuf -i 20000-60000 -n 1)
  "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --config "$F/tripwire.yaml" --plugin-path "$F/plugins" \
    --plugin-timeout 300 --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" \
    > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
  wait_until 60 healthz_or_gone
  kill -0 "$RUN_PID" 2>/dev/null && break
done
wait_until 60 synced || { echo "FAIL: run did not sync"; cat "$TMP/run.err"; exit 1; }

ask() { whatif_ask "$@"; }
answer() { whatif_answer; }
create() { pod_create; }
delete() { api_send DELETE "/api/v1/namespaces/default/pods/$1"; }
decided() { pod_decided "$1"; }
pod_count() { api /api/v1/pods | jq '.items | length'; }
small_pod() { # NAME CPU [LABELS-JSON]
  printf '{"metadata":{"name":"%s","labels":%s},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"%s","memory":"256Mi"}}}]}}' \
    "$1" "${3:-"{}"}" "$2"
}

# ---- authentication and authorization
q='{"pod":'$(small_pod probe 100m)'}'
expect_eq "anonymous may not post /whatif" "$(ask "" <<<"$q" | tail -1)" "403"
expect_contains "the refusal names the path and verb" "$(ask alice-token <<<"$q" | head -1)" \
  'cannot post path \"/whatif\"'
expect_eq "GET /whatif is 405" "$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
  "https://127.0.0.1:$PORT/whatif")" "405"
expect_eq "system:masters gets an answer" "$(ask <<<"$q" | tail -1)" "200"
expect_eq "a bad question is 400 with the field" "$(ask <<<'{"pod":{},"count":3}' | head -1 | jq -r .error)" \
  'count: only for "template"'

# ---- the answer is the decision
same=0 tied=0 wrong=0 unsched=0 i=0
while IFS= read -r pod; do
  i=$((i + 1))
  name=$(jq -r .metadata.name <<<"$pod")
  a=$(jq -c '{pod: ., explain: false, hints: false, preemption: false}' <<<"$pod" | answer)
  want=$(jq -r '.placements[0].node // "-"' <<<"$a")
  ties=" $(jq -r '.placements[0].tiedNodes // [] | join(" ")' <<<"$a") "
  create <<<"$pod"
  got=$(decided "$name")
  if [ "$got" = "$want" ]; then
    same=$((same + 1))
  elif [ "$want" != "-" ] && [[ "$ties" == *" $got "* ]]; then
    tied=$((tied + 1))
  else
    wrong=$((wrong + 1))
    echo "  $name: what-if said $want (tied:$ties), the scheduler: $got"
  fi
  [ "$got" = "-" ] && { unsched=$((unsched + 1)); delete "$name"; }
done < "$TMP/pods.jsonl"
echo "  $i pods: $same the same node, $tied among the tied nodes, $unsched unschedulable, $wrong different"
expect_eq "every what-if node is the scheduler's (or tied with it)" "$wrong" "0"
expect_eq "every pod was compared" "$((same + tied))" "$((i - wrong))"

# ---- a gang that does not fit
before=$(pod_count)
gang='{"allOrNothing":true,"pods":['$(small_pod gang-1 500m)','$(small_pod gang-2 500m)','$(small_pod gang-3 200)']}'
a=$(answer <<<"$gang")
expect_eq "the gang does not fit" "$(jq .fits <<<"$a")" "false"
expect_eq "the member that fails" "$(jq -r '.failed.pod' <<<"$a")" "default/gang-3"
expect_contains "and why" "$(jq -r '.failed.message' <<<"$a")" "Insufficient cpu"
expect_eq "the members before it had a node" "$(jq -c '[.placements[].result]' <<<"$a")" \
  '["scheduled","scheduled","unschedulable"]'
a=$(answer <<<'{"allOrNothing":true,"pods":['$(small_pod gang-1 500m)','$(small_pod gang-2 500m)']}')
expect_eq "a gang that fits" "$(jq .fits <<<"$a")" "true"
"$BIN" whatif --server "https://127.0.0.1:$PORT" --kubeconfig "$KUBECONFIG_FILE" --insecure-skip-tls-verify - \
  <<<"$gang" > "$TMP/cli.out" 2>&1
expect_eq "luasched whatif: a gang that does not fit exits 1" "$?" "1"
expect_contains "and names the member that fails" "$(cat "$TMP/cli.out")" "first failing: default/gang-3: 0/"
expect_eq "nothing was created" "$(pod_count)" "$before"

# ---- preemption: a pod of high priority that fits nowhere as things are
a=$(answer <<<'{"pod":{"metadata":{"name":"vip"},"spec":{"priority":100000,"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"15"}}}]}}}')
expect_eq "the high-priority pod finds no node" "$(jq -r '.placements[0].result' <<<"$a")" "unschedulable"
expect_contains "preemption would nominate a 16-cpu node" "$(jq -r '.placements[0].preemption.nominatedNode' <<<"$a")" "node-"
expect_eq "and name its victims" "$(jq '.placements[0].preemption.victims | length > 0' <<<"$a")" "true"
expect_eq "nothing was evicted" "$(pod_count)" "$before"

# ---- a plugin that fails or times out
a=$(answer <<<'{"pod":'$(small_pod t-raise 100m '{"tripwire":"raise"}')'}')
expect_contains "a raising plugin: the error names it" "$(jq -r .error <<<"$a")" '"Tripwire"'
expect_contains "with its file and line" "$(jq -r .error <<<"$a")" "tripwire.lua:22: tripped by the pod's label"
expect_eq "the pod's result is an error" "$(jq -r '.placements[0].result' <<<"$a")" "error"
a=$(answer <<<'{"pod":'$(small_pod t-loop 100m '{"tripwire":"loop"}')'}')
expect_contains "a plugin out of time: the error names it" "$(jq -r .error <<<"$a")" '"Tripwire"'
a=$(answer <<<'{"pod":'$(small_pod t-fine 100m)'}')
expect_eq "the next question is answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"
# a question past its deadline: 100 replicas of 80 ms each, with a second to answer (the
# deadline lands in Tripwire but for the other plugins' share of each replica, under 1%)
slow=$(small_pod t-slow 10m '{"tripwire":"slow"}')
a=$(answer <<<'{"template":'"$slow"',"count":100,"timeoutSeconds":1}')
expect_contains "a question past its deadline: the error says so" "$(jq -r .error <<<"$a")" \
  "the question ran past its deadline of 1000 ms, in plugin Tripwire (default-scheduler/Tripwire/PreFilter/default/t-slow-"
expect_eq "and names the plugin" "$(jq -r .plugin <<<"$a")" "Tripwire"
expect_eq "timeoutSeconds past 25 is a bad question" "$(answer <<<'{"pod":{},"timeoutSeconds":26}' | jq -r .error)" \
  "timeoutSeconds: expected a whole number from 1 to 25"
a=$(answer <<<'{"pod":'$(small_pod t-fine2 100m)'}')
expect_eq "the question after it is answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"
# beside the loop: answers come from forked evaluators; the last one stays warm
expect_eq "the answer says what the hand-over cost the loop" "$(jq '.loopPauseMs | type' <<<"$a")" '"number"'
worker=$(pgrep -P "$RUN_PID" | head -1)
evaluators() { pgrep -P "$worker" | wc -l; }
one_evaluator() { [ "$(evaluators)" = 1 ]; }
wait_until 10 one_evaluator || true
expect_eq "one evaluator is left (the warm one)" "$(evaluators)" "1"
warm=$(pgrep -P "$worker")
# at idle priority (SCHED_IDLE is policy 5), every thread of it; the worker is not
policies() { for t in /proc/"$1"/task/*; do awk '/^policy/ {print $3}' "$t/sched"; done | sort -u | xargs; }
expect_eq "the evaluator runs at idle priority, all its threads" "$(policies "$warm")" "5"
expect_eq "the worker at the normal one" "$(policies "$worker")" "0"
a=$(answer <<<'{"pod":'$(small_pod t-warm 100m)'}')
expect_eq "nothing changed: the next question is answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"
expect_eq "by the warm evaluator (no fork)" "$(pgrep -P "$worker")" "$warm"
small_pod after-fault 100m | create
expect_ne_dash() { [ "$1" != "-" ] && [ "$1" != "?" ] && echo bound || echo "$1"; }
expect_eq "the scheduler still binds" "$(expect_ne_dash "$(decided after-fault)")" "bound"
q='{"pod":'$(small_pod t-fresh 100m)'}'
a=$(answer <<<"$q")
expect_eq "a pod was bound since: the question is answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"
fresh() { [ "$(pgrep -P "$worker")" != "$warm" ] && one_evaluator; }
wait_until 10 fresh || true
expect_eq "by a fresh evaluator (the warm one was retired)" "$(fresh && echo fresh || pgrep -P "$worker" | xargs)" "fresh"
warm=$(pgrep -P "$worker")
b=$(answer <<<"$q")
expect_eq "the same question again: by that evaluator, warm" "$(pgrep -P "$worker")" "$warm"
expect_eq "the same answer, explain table and all" "$(jq -cS 'del(.elapsedMs, .loopPauseMs)' <<<"$b")" \
  "$(jq -cS 'del(.elapsedMs, .loopPauseMs)' <<<"$a")"
expect_eq "the worker was never replaced" "$(grep -c 'Starting a new worker\|worker died\|Ending the worker' "$TMP/run.err")" "0"

# ---- a template: how many fit, then with two nodes more
tmpl='{"metadata":{"name":"big"},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"3","memory":"2Gi"}}}]}}'
a=$(answer <<<'{"template":'"$tmpl"',"count":500}')
k=$(jq .placed <<<"$a")
echo "  the template: $k replicas fit"
expect_eq "the template stops at the first that does not fit" "$(jq '.placements | length' <<<"$a")" "$((k + 1))"
more=$(answer <<<'{"template":'"$tmpl"',"count":500,"changes":{"addNodes":[{"template":{"metadata":{"name":"extra","labels":{"topology.kubernetes.io/zone":"zone-d"}},"status":{"allocatable":{"cpu":"16","memory":"64Gi","pods":"110"}}},"count":2}]}}' | jq .placed)
expect_eq "two 16-cpu nodes more fit 10 more" "$more" "$((k + 10))"
# check_template NAME CPU MEMORY [keep]: the replicas the what-if says fit, then
# that many and two more created: as many bind, the two stay unschedulable;
# then (without keep) they are deleted and the what-if counts as many again.
check_template() {
  local t='{"metadata":{"name":"'$1'"},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"'$2'","memory":"'$3'"}}}]}}'
  local n r
  n=$(answer <<<'{"template":'"$t"',"count":2000,"explain":false,"hints":false,"preemption":false}' | jq .placed)
  for r in $(seq 1 $((n + 2))); do
    jq -c --arg n "$1-$r" '.metadata.name = $n' <<<"$t" | create
  done
  for r in $(seq 1 $((n + 2))); do decided "$1-$r"; done > "$TMP/$1.out"
  echo "$n $(grep -vc '^[-?]$' "$TMP/$1.out") $(grep -c '^-$' "$TMP/$1.out")"
  [ -z "${2:-}" ] || return 0
  # the replicas deleted again: the next template is asked about the same cluster
  local before; before=$(pod_count)
  for r in $(seq 1 $((n + 2))); do delete "$1-$r"; done
  gone() { [ "$(pod_count)" = "$((before - n - 2))" ] && [ "$(answer <<<'{"template":'"$t"',"count":2000,"explain":false,"hints":false,"preemption":false}' | jq .placed)" = "$n" ]; }
  wait_until 30 gone >&2 || echo "  ($1: the cluster did not come back within 30 s)" >&2
}
read -r want bound unsched <<<"$(check_template big 3 2Gi keep)"
expect_eq "the template: as many bind as the what-if said" "$bound" "$want"
expect_eq "the two more are unschedulable" "$unsched" "2"
# WHATIF_TEMPLATES > 1 (by hand): more templates, each on the cluster the first one left
shapes=(2 1Gi 1500m 3Gi 1 512Mi 700m 6Gi 2500m 1Gi 500m 2Gi 1200m 256Mi 900m 4Gi 300m 1Gi 4 8Gi)
same=1
for i in $(seq 2 "${WHATIF_TEMPLATES:-1}"); do
  j=$(( (i - 2) % 10 * 2 ))
  read -r want bound unsched <<<"$(check_template "t$i" "${shapes[$j]}" "${shapes[$((j + 1))]}")"
  echo "  template t$i (${shapes[$j]} cpu, ${shapes[$((j + 1))]}): what-if $want, bound $bound, unschedulable $unsched"
  [ "$want" = "$bound" ] && [ "$unsched" = 2 ] && same=$((same + 1))
done
expect_eq "every template's count is the count bound" "$same" "${WHATIF_TEMPLATES:-1}"

# a stop while an evaluator runs a long question does not wait for it
answer <<<'{"template":'"$slow"',"count":1000,"timeoutSeconds":25}' > /dev/null &
ASKER=$!
evaluating() { [ "$(evaluators)" -gt 0 ]; }
wait_until 10 evaluating || echo "  (no evaluator seen)"
began=$SECONDS
run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"
expect_eq "without waiting for the question (25 s)" "$(( SECONDS - began < 15 ))" "1"
wait_exit "$ASKER" 30 > /dev/null
[ "$failures" -eq 0 ]
