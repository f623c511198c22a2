# Helpers for tests that run `luasched run` against `luasched simulate --serve`
# (sourced after lib.bash). They read the API with curl and jq.
require_tool curl curl
require_tool jq jq

# serve_start CLUSTER [FLAGS...]: starts the served cluster, waits for its kubeconfig.
serve_start() {
  local cluster=$1; shift
  KUBECONFIG_FILE=$TMP/serve.kubeconfig
  rm -f "$KUBECONFIG_FILE"
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$KUBECONFIG_FILE" "$@" "$cluster" \
    > "$TMP/serve.out" 2> "$TMP/serve.err" &
  SERVE_PID=$!
  for _ in $(seq 1 100); do
    [ -s "$KUBECONFIG_FILE" ] && grep -q 'serving the cluster at' "$TMP/serve.err" && break
    sleep 0.1
  done
  SERVER_URL=$(sed -n 's/.*serving the cluster at \(https:[^ ]*\).*/\1/p' "$TMP/serve.err")
  TOKEN=$(awk '/token:/ {print $2; exit}' "$KUBECONFIG_FILE")
  awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG_FILE" | base64 -d > "$TMP/ca.crt"
}

# api PATH: GET on the served API; the test's own reads retry through injected faults.
api() {
  curl -sS --fail --retry 20 --retry-all-errors --retry-delay 0 --retry-max-time 30 \
    --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER_URL$1"
}

# run_start [FLAGS...]: luasched run against the served cluster.
run_start() {
  "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --secure-port 0 "$@" \
    > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
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

run_stop() {
  kill -TERM "$RUN_PID" 2>/dev/null
  wait "$RUN_PID"; RUN_RC=$?
}

serve_stop() {
  kill -TERM "$SERVE_PID" 2>/dev/null
  wait "$SERVE_PID"; SERVE_RC=$?
}
