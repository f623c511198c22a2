#!/usr/bin/env bash
# End to end: two `luasched run` replicas with Lease leader election against
# the served cluster. Only the leader schedules; when the leader stops, the
# other takes over within leaseDuration + retryPeriod and schedules the pods
# created since; no pod is ever bound twice (the server's record).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

luajit "$ROOT/bench/make_cluster.lua" 10 40 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"

LE=(--leader-elect=true --leader-elect-lease-duration=3s --leader-elect-renew-deadline=2s
    --leader-elect-retry-period=500ms --leader-elect-resource-namespace=kube-system -v 3)

replica() {   # replica NAME: starts one, its logs in $TMP/NAME.err
  "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --secure-port 0 "${LE[@]}" > "$TMP/$1.out" 2> "$TMP/$1.err" &
  eval "PID_$1=\$!"
}

wait_log() {   # wait_log FILE TEXT SECONDS
  local deadline=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    grep -q "$2" "$1" && return 0
    sleep 0.1
  done
  return 1
}

replica first
wait_log "$TMP/first.err" "Successfully acquired lease" 60 || echo "FAIL: the first replica never led"
replica second
wait_bound 40 60 || echo "FAIL: the leader did not bind the first 40 pods"
leader_logged_all() { [ "$(grep -c '"Scheduled pod, binding"' "$TMP/first.err")" = 40 ]; }
wait_until 60 leader_logged_all
expect_eq "the leader scheduled every pod" "$(grep -c '"Scheduled pod, binding"' "$TMP/first.err")" "40"
expect_eq "the standby scheduled none" "$(grep -c '"Scheduled pod, binding"' "$TMP/second.err")" "0"
expect_eq "the standby does not lead" "$(grep -c 'Successfully acquired lease' "$TMP/second.err")" "0"
holder=$(api /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler | jq -r .spec.holderIdentity)
expect_contains "the Lease names the leader" "$(cat "$TMP/first.err")" "$holder"

kill -TERM "$PID_first"; wait_exit "$PID_first" 60; rc=$?
stopped=$(date +%s.%N)
expect_eq "the old leader stops cleanly" "$rc" "0"
expect_eq "the old leader's queued events were sent before it handed over" \
  "$(api /apis/events.k8s.io/v1/events | jq '[.items[] | select(.reason == "Scheduled")] | length')" "40"
expect_contains "a stop is logged at info as upstream's" "$(cat "$TMP/first.err")" '] "Requested to terminate, exiting"'
expect_eq "a stop is not a lost election" "$(grep -c 'Leaderelection lost' "$TMP/first.err")" "0"
wait_log "$TMP/second.err" "Successfully acquired lease" 60 || echo "FAIL: the standby never took over"
took=$(echo "$(date +%s.%N) - $stopped" | bc)
# A leader that stops releases the Lease (as kube-scheduler's ReleaseOnCancel),
# so the standby takes it at its next try; without the release it would wait
# for the lease to run out. Either way the bound is leaseDuration + retryPeriod
# (3.5 s) on a quiet machine; a loaded machine or a sanitizer build may be a
# few seconds late: 10 s (the test's polling included).
expect_eq "hand-over within leaseDuration + retryPeriod (3.5 s; 10 s on a loaded machine): took ${took}s" \
  "$(echo "$took <= 10" | bc)" "1"
{
  echo '{"apiVersion":"v1","kind":"List","items":['
  for i in $(seq 1 20); do
    [ "$i" -gt 1 ] && echo ','
    echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"late-$i\",\"namespace\":\"default\"},"
    echo " \"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}"
  done
  echo ']}'
} > "$TMP/late.json"
for i in $(seq 0 19); do
  jq ".items[$i]" "$TMP/late.json" | curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d @- "$SERVER_URL/api/v1/namespaces/default/pods" > /dev/null
done
wait_bound 60 60 || echo "FAIL: the new leader did not bind the late pods"
standby_logged_all() { [ "$(grep -c '"Scheduled pod, binding"' "$TMP/second.err")" = 20 ]; }
wait_until 60 standby_logged_all
expect_eq "the new leader scheduled the 20 late pods" "$(grep -c '"Scheduled pod, binding"' "$TMP/second.err")" "20"

kill -TERM "$PID_second"; wait_exit "$PID_second" 60
serve_stop
expect_eq "no pod bound twice (server exit status)" "$SERVE_RC" "0"
expect_contains "60 bindings, none refused" "$(grep "^summary:" "$TMP/serve.out")" "bindings: 60 accepted, 0 refused"

[ "$failures" -eq 0 ]
