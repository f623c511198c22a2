#!/usr/bin/env bash
# End to end: POST /whatif on `simulate --serve` itself (docs/operations/what-if.md
# "On simulate --serve"), answered with the scheduler of the --config given to
# the served cluster, over the served store's state.
# - Authentication as the served API's: no token, an unknown token and a
#   --serve-user token (known to TokenReview, not the admin) get 401; a GET 405;
#   the admin token of the kubeconfig an answer; a bad question 400 with the field.
# - The answer is the decision: the first pod is asked about before any
#   scheduler runs; then `luasched run` with the same configuration and seed is
#   started against the served cluster and the pod created: it is bound where
#   the answer said, the tie among its tied nodes broken the same way
#   (by hand, WHATIF_RUN_SEED=8, 9 or 1 starts run with another seed: this
#   check fails, run picks another of the 3 tied nodes). WHATIF_PODS more pods
#   (default 8) are asked about and created one by one: each is bound on the
#   answer's node or one of its tied nodes (the evaluator starts from the
#   seed's random state, the running scheduler has drawn from it since).
# - A gang that does not fit as a whole is "no", naming the member that fails
#   and why; nothing is created; `luasched whatif` says the same against it.
# - A template's count is the number that bind when that many and one more are
#   created; with two 16-cpu nodes added ("changes") ten more fit.
# - A plugin of the configuration that raises gives the question an error
#   naming it (the plugin runs in the evaluator's supervised worker); so do
#   one out of its time budget (--plugin-timeout) and a question past its
#   deadline ("timeoutSeconds"), in run's words.
# - No evaluator process is left, and the served cluster's record is clean; a
#   stop while a long question is being answered ends its evaluator at once
#   (503 to the question).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
F=$ROOT/spec/e2e/fixtures/whatif
require_tool luajit luajit
N=${WHATIF_PODS:-8}
SEED=7

luajit "$ROOT/spec/e2e/whatif_cluster.lua" 11 30 240 "$((N + 1))" > "$TMP/cluster.json" 2> "$TMP/pods.jsonl"
serve_start "$TMP/cluster.json" --seed "$SEED" --config "$F/tripwire.yaml" --plugin-path "$F/plugins" \
  --plugin-timeout 300 --serve-user alice-token=alice
on_exit 'kill -TERM "$SERVE_PID" 2>/dev/null'

# ask [TOKEN]: the question on stdin to the served cluster's /whatif; the body, then the code.
ask() {
  curl -sS --max-time 60 --cacert "$TMP/ca.crt" ${1+-H "Authorization: Bearer $1"} -X POST --data-binary @- \
    -w '\n%{http_code}' "$SERVER_URL/whatif"
}
answer() { ask "$TOKEN" | sed '$d'; }
small_pod() { # NAME CPU [LABELS-JSON]
  printf '{"metadata":{"name":"%s","labels":%s},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"%s","memory":"256Mi"}}}]}}' \
    "$1" "${3:-"{}"}" "$2"
}
pod_count() { api /api/v1/pods | jq '.items | length'; }

# ---- authentication
q='{"pod":'$(small_pod probe 100m)'}'
expect_eq "no token: 401" "$(ask <<<"$q" | tail -1)" "401"
expect_eq "an unknown token: 401" "$(ask wrong-token <<<"$q" | tail -1)" "401"
expect_eq "a --serve-user token (not the admin): 401" "$(ask alice-token <<<"$q" | tail -1)" "401"
expect_eq "GET /whatif is 405" "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" \
  -H "Authorization: Bearer $TOKEN" "$SERVER_URL/whatif")" "405"
expect_eq "the kubeconfig's token gets an answer" "$(ask "$TOKEN" <<<"$q" | tail -1)" "200"
expect_eq "a bad question is 400 with the field" "$(answer <<<'{"pod":{},"count":3}' | jq -r .error)" \
  'count: only for "template"'

# ---- the answer is the decision
same=0 tied=0 wrong=0 unsched=0 i=0
# compare NAME ANSWER: the node the scheduler bound NAME to against the answer's
compare() {
  local want ties got
  want=$(jq -r '.placements[0].node // "-"' <<<"$2")
  ties=" $(jq -r '.placements[0].tiedNodes // [] | join(" ")' <<<"$2") "
  got=$(pod_decided "$1")
  if [ "$got" = "$want" ]; then
    same=$((same + 1))
  elif [ "$want" != "-" ] && [[ "$ties" == *" $got "* ]]; then
    tied=$((tied + 1))
  else
    wrong=$((wrong + 1))
    echo "  $1: what-if said $want (tied:$ties), the scheduler: $got"
  fi
  [ "$got" = "-" ] && { unsched=$((unsched + 1)); api_send DELETE "/api/v1/namespaces/default/pods/$1"; }
  i=$((i + 1))
}
first=$(head -1 "$TMP/pods.jsonl")
a_first=$(jq -c '{pod: ., explain: false, hints: false, preemption: false}' <<<"$first" | answer)
expect_eq "the first pod's answer" "$(jq -r '.placements[0].result' <<<"$a_first")" "scheduled"
run_start --config "$F/tripwire.yaml" --plugin-path "$F/plugins" --plugin-timeout 300 --seed "${WHATIF_RUN_SEED:-$SEED}"
synced() { grep -q "Caches are synced" "$TMP/run.err"; }
wait_until 60 synced || { echo "FAIL: run did not sync"; cat "$TMP/run.err"; exit 1; }
pod_create <<<"$first"
compare "$(jq -r .metadata.name <<<"$first")" "$a_first"
echo "  the first pod: $(jq -r '.placements[0].node' <<<"$a_first") of $(jq '.placements[0].tiedNodes | length' <<<"$a_first") tied"
expect_eq "the first pod, asked before any scheduler ran, is bound on the node the answer said (same seed: the tie broken the same way)" "$same" "1"
while IFS= read -r pod; do
  a=$(jq -c '{pod: ., explain: false, hints: false, preemption: false}' <<<"$pod" | answer)
  pod_create <<<"$pod"
  compare "$(jq -r .metadata.name <<<"$pod")" "$a"
done < <(tail -n +2 "$TMP/pods.jsonl")
echo "  $i pods: $same the same node, $tied among the tied nodes, $unsched unschedulable, $wrong different"
expect_eq "every what-if node is the scheduler's (or tied with it)" "$wrong" "0"
expect_eq "every pod was compared" "$i" "$((N + 1))"

# ---- a gang that does not fit
before=$(pod_count)
gang='{"allOrNothing":true,"pods":['$(small_pod gang-1 500m)','$(small_pod gang-2 500m)','$(small_pod gang-3 200)']}'
a=$(answer <<<"$gang")
expect_eq "the gang does not fit" "$(jq .fits <<<"$a")" "false"
expect_eq "the member that fails" "$(jq -r '.failed.pod' <<<"$a")" "default/gang-3"
expect_contains "and why" "$(jq -r '.failed.message' <<<"$a")" "Insufficient cpu"
expect_eq "the members before it had a node" "$(jq -c '[.placements[].result]' <<<"$a")" \
  '["scheduled","scheduled","unschedulable"]'
"$BIN" whatif --server "$SERVER_URL" --kubeconfig "$KUBECONFIG_FILE" --certificate-authority "$TMP/ca.crt" - \
  <<<"$gang" > "$TMP/cli.out" 2>&1
expect_eq "luasched whatif against the served cluster: a gang that does not fit exits 1" "$?" "1"
expect_contains "and names the member that fails" "$(cat "$TMP/cli.out")" "first failing: default/gang-3: 0/"
expect_eq "nothing was created" "$(pod_count)" "$before"

# ---- a plugin that raises, in the evaluator's worker
a=$(answer <<<'{"pod":'$(small_pod t-raise 100m '{"tripwire":"raise"}')'}')
expect_contains "a raising plugin: the error names it" "$(jq -r .error <<<"$a")" '"Tripwire"'
expect_contains "with its file and line" "$(jq -r .error <<<"$a")" "tripwire.lua:22: tripped by the pod's label"
a=$(answer <<<'{"pod":'$(small_pod t-loop 100m '{"tripwire":"loop"}')'}')
expect_contains "a plugin out of time (--plugin-timeout 300): the error names it" "$(jq -r .error <<<"$a")" \
  'running PreFilter plugin "Tripwire": plugin exceeded its time budget of 300 ms'
# a question past its deadline: 100 replicas of 40 ms each, with a second to answer
slow=$(small_pod t-slow 10m '{"tripwire":"slow"}')
a=$(answer <<<'{"template":'"$slow"',"count":100,"timeoutSeconds":1}')
expect_contains "a question past its deadline: the error says so, as run's" "$(jq -r .error <<<"$a")" \
  "the question ran past its deadline of 1000 ms, in plugin Tripwire (default-scheduler/Tripwire/PreFilter/default/t-slow-"
expect_eq "and names the plugin" "$(jq -r .plugin <<<"$a")" "Tripwire"
a=$(answer <<<'{"pod":'$(small_pod t-fine 100m)'}')
expect_eq "the next question is answered" "$(jq -r '.placements[0].result' <<<"$a")" "scheduled"

# ---- a template: how many fit (that many bind, one more does not), and with two nodes more
tmpl='{"metadata":{"name":"big"},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"3","memory":"2Gi"}}}]}}'
k=$(answer <<<'{"template":'"$tmpl"',"count":500,"explain":false,"hints":false,"preemption":false}' | jq .placed)
more=$(answer <<<'{"template":'"$tmpl"',"count":500,"explain":false,"changes":{"addNodes":[{"template":{"metadata":{"name":"extra"},"status":{"allocatable":{"cpu":"16","memory":"64Gi","pods":"110"}}},"count":2}]}}' | jq .placed)
echo "  the template: $k replicas fit, $more with two 16-cpu nodes more"
expect_eq "two 16-cpu nodes more fit 10 more" "$more" "$((k + 10))"
for r in $(seq 1 $((k + 1))); do jq -c --arg n "big-$r" '.metadata.name = $n' <<<"$tmpl" | pod_create; done
for r in $(seq 1 $((k + 1))); do pod_decided "big-$r"; done > "$TMP/big.out"
expect_eq "as many replicas bind as the answer said" "$(grep -vc '^[-?]$' "$TMP/big.out")" "$k"
expect_eq "the one more is unschedulable" "$(grep -c '^-$' "$TMP/big.out")" "1"

# ---- nothing left behind
expect_eq "no evaluator process is left" "$(pgrep -P "$SERVE_PID" | wc -l)" "0"
run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"
# a stop while an evaluator runs a long question (1000 replicas of 40 ms) does not wait for it
ask "$TOKEN" <<<'{"template":'"$slow"',"count":1000,"timeoutSeconds":25}' > "$TMP/slow.out" &
ASKER=$!
evaluating() { [ "$(pgrep -P "$SERVE_PID" | wc -l)" -gt 0 ]; }
wait_until 10 evaluating || echo "  (no evaluator seen)"
began=$SECONDS
serve_stop
expect_eq "the served cluster's record is clean (no pod bound twice)" "$SERVE_RC" "0"
expect_eq "the stop did not wait for the question (25 s)" "$(( SECONDS - began < 15 ))" "1"
wait_exit "$ASKER" 30 > /dev/null
expect_eq "the question being answered got 503" "$(tail -1 "$TMP/slow.out")" "503"
[ "$failures" -eq 0 ]
