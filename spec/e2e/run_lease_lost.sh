#!/usr/bin/env bash
# End to end: a leader that loses its Lease stops scheduling and exits 1, as
# kube-scheduler does ("leaderelection lost"). The test takes the Lease over
# (another holder, renewed now) while luasched run leads; the run must notice
# and exit non-zero long before the thief's 60 s lease would let it lead again.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

luajit "$ROOT/bench/make_cluster.lua" 3 5 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
"$BIN" run --kubeconfig "$KUBECONFIG_FILE" --secure-port 0 --leader-elect=true \
  --leader-elect-lease-duration=3s --leader-elect-renew-deadline=2s --leader-elect-retry-period=500ms \
  > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
wait_bound 5 60 || echo "FAIL: the leader did not schedule"
LEASE=/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler

# steal_lease: a read-modify-write of the Lease. The leader renews it every
# 500 ms, so a PUT may carry a stale resourceVersion: the server answers 409
# Conflict, and the thief reads it again, as any client of the Lease does.
steal_lease() {
  local now code
  now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
  api "$LEASE" | jq --arg now "$now" '.spec.holderIdentity = "someone-else" | .spec.renewTime = $now
      | .spec.leaseDurationSeconds = 60' > "$TMP/stolen.json"
  code=$(curl -sS -o "$TMP/put.out" -w '%{http_code}' --max-time 30 --cacert "$TMP/ca.crt" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X PUT \
    --data-binary @"$TMP/stolen.json" "$SERVER_URL$LEASE")
  case $code in
    200) return 0 ;;
    409) echo "the Lease was renewed between GET and PUT (409 Conflict): reading it again"; return 1 ;;
    *) echo "FAIL: PUT of the Lease answered $code: $(cat "$TMP/put.out")"; exit 1 ;;
  esac
}
wait_until 60 steal_lease
expect_eq "the Lease is taken over" "$?" "0"
start=$SECONDS
wait_exit "$RUN_PID" 60; rc=$?
expect_eq "luasched run exits 1 once the lease is lost" "$rc" "1"
# renewDeadline (2 s) + retryPeriod (0.5 s) on a quiet machine; a loaded one
# may be a few seconds late, never near the thief's 60 s lease.
took=$((SECONDS - start))
expect_eq "it notices within 15 s (renewDeadline 2 s + retryPeriod; took $took s)" "$([ "$took" -le 15 ] && echo yes)" "yes"
expect_contains "and says so" "$(cat "$TMP/run.err")" '"Leaderelection lost"'
serve_stop
expect_eq "no pod bound twice" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
