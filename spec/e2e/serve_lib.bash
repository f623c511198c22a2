# Helpers for tests that run `luasched run` against `luasched simulate --serve`
# (sourced after lib.bash). They read the API with curl and jq.
require_tool curl curl
require_tool jq jq

# serve_start CLUSTER [FLAGS...]: starts the served cluster, waits (up to 60 s)
# for its kubeconfig and its "serving" line.
serve_start() {
  local cluster=$1; shift
  KUBECONFIG_FILE=$TMP/serve.kubeconfig
  rm -f "$KUBECONFIG_FILE"
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$KUBECONFIG_FILE" "$@" "$cluster" \
    > "$TMP/serve.out" 2> "$TMP/serve.err" &
  SERVE_PID=$!
  if ! wait_until 60 serving; then
    echo "FAIL: simulate --serve did not start within 60 s"; cat "$TMP/serve.err"
    exit 1
  fi
  SERVER_URL=$(sed -n 's/.*serving the cluster at \(https:[^ ]*\).*/\1/p' "$TMP/serve.err")
  TOKEN=$(awk '/token:/ {print $2; exit}' "$KUBECONFIG_FILE")
  awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG_FILE" | base64 -d > "$TMP/ca.crt"
}

serving() {
  [ -s "$KUBECONFIG_FILE" ] && grep -q 'serving the cluster at' "$TMP/serve.err"
}

# api PATH: GET on the served API; the test's own reads retry through injected faults.
api() {
  curl -sS --fail --retry 20 --retry-all-errors --retry-delay 0 --retry-max-time 30 --max-time 30 \
    --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER_URL$1"
}

# run_start [FLAGS...]: luasched run against the served cluster.
run_start() {
  "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --secure-port 0 "$@" \
    > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
}

# run_on_free_port CONFIG [FLAGS...]: starts `luasched run --config CONFIG`
# serving on a random port (0 turns serving off, as upstream's --secure-port
# 0), a new port when that one was taken; sets RUN_PID and PORT once /healthz
# answers.
run_on_free_port() {
  local config=$1; shift
  for _ in 1 2 3 4 5; do
    PORT=$(shuf -i 20000-60000 -n 1)
    "$BIN" run --config "$config" --bind-address 127.0.0.1 --secure-port "$PORT" "$@" \
      > "$TMP/run.out" 2> "$TMP/run.err" &
    RUN_PID=$!
    wait_until 60 healthz_or_gone
    kill -0 "$RUN_PID" 2>/dev/null && return 0
  done
  echo "FAIL: luasched run did not start on any of 5 ports"; cat "$TMP/run.err"
  exit 1
}

healthz_or_gone() {
  curl -sk --max-time 5 -o /dev/null "https://127.0.0.1:$PORT/healthz" || ! kill -0 "$RUN_PID" 2>/dev/null
}

# wait_bound N SECONDS: until N pods have spec.nodeName set.
wait_bound() {
  local n=$1 deadline=$((SECONDS + $2)) bound=0
  while [ "$SECONDS" -lt "$deadline" ]; do
    bound=$(api /api/v1/pods | jq '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")] | length')
    [ "$bound" = "$n" ] && return 0
    sleep 0.2
  done
  echo "only $bound of $n pods bound"
  return 1
}

# run_stop, serve_stop: TERM, then the exit status (124 when it did not end
# within 60 s: it is killed).
run_stop() {
  kill -TERM "$RUN_PID" 2>/dev/null
  wait_exit "$RUN_PID" 60; RUN_RC=$?
}

serve_stop() {
  kill -TERM "$SERVE_PID" 2>/dev/null
  wait_exit "$SERVE_PID" 60; SERVE_RC=$?
}

# ---- what-if tests (whatif_served.sh, whatif_changes.sh)
# whatif_ask [TOKEN]: POST the question on stdin to run's /whatif on PORT;
# prints the body, then the code on a line.
whatif_ask() {
  curl -sk --max-time 60 -H "Authorization: Bearer ${1-$TOKEN}" -X POST --data-binary @- \
    -w '\n%{http_code}' "https://127.0.0.1:$PORT/whatif"
}
whatif_answer() { whatif_ask | sed '$d'; }
# pod_create: the pod on stdin (JSON, no apiVersion/kind), in namespace default.
pod_create() {
  jq -c '{apiVersion: "v1", kind: "Pod"} + .' | curl -sS --fail --max-time 30 --cacert "$TMP/ca.crt" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST --data-binary @- \
    "$SERVER_URL/api/v1/namespaces/default/pods" > /dev/null
}
# api_send METHOD PATH [BODY]: a write to the served API (a merge patch for PATCH).
api_send() {
  curl -sS --fail --max-time 30 --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -X "$1" \
    -H 'Content-Type: application/merge-patch+json' ${3:+--data-binary "$3"} "$SERVER_URL$2" > /dev/null
}
# pod_decided NAME: the node the pod was bound to, "-" once the scheduler
# found it unschedulable; "?" when neither happened within 30 s.
pod_decided() {
  local deadline=$((SECONDS + 30)) pod node
  while [ "$SECONDS" -lt "$deadline" ]; do
    pod=$(api "/api/v1/namespaces/default/pods/$1")
    node=$(jq -r '.spec.nodeName // ""' <<<"$pod")
    [ -n "$node" ] && { echo "$node"; return; }
    jq -e '(.status | objects | .conditions) // [] | any(.type == "PodScheduled" and .status == "False")' <<<"$pod" \
      > /dev/null && { echo "-"; return; }
    sleep 0.1
  done
  echo "?"
}
