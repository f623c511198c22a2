#!/usr/bin/env bash
# End to end: a leader that loses its Lease stops scheduling and exits 1, as
# kube-scheduler does ("leaderelection lost"). The test takes the Lease over
# (another holder, renewed now) while luasched run leads; the run must notice
# within renewDeadline plus a retry and exit non-zero.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

luajit "$ROOT/bench/make_cluster.lua" 3 5 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
"$BIN" run --kubeconfig "$KUBECONFIG_FILE" --secure-port 0 --leader-elect=true \
  --leader-elect-lease-duration=3s --leader-elect-renew-deadline=2s --leader-elect-retry-period=500ms \
  > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
wait_bound 5 20 || echo "FAIL: the leader did not schedule"
LEASE=/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
api "$LEASE" | jq --arg now "$now" '.spec.holderIdentity = "someone-else" | .spec.renewTime = $now
    | .spec.leaseDurationSeconds = 60' > "$TMP/stolen.json"
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -X PUT --data-binary @"$TMP/stolen.json" "$SERVER_URL$LEASE")
expect_eq "the Lease is taken over" "$code" "200"
start=$SECONDS
wait "$RUN_PID"; rc=$?
expect_eq "luasched run exits 1 once the lease is lost" "$rc" "1"
expect_eq "it notices within renewDeadline + retryPeriod (+1 s)" "$([ $((SECONDS - start)) -le 4 ] && echo yes)" "yes"
expect_contains "and says so" "$(cat "$TMP/run.err")" '"Leaderelection lost"'
serve_stop
expect_eq "no pod bound twice" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
