#!/usr/bin/env bash
# Do events keep up with bindings? `luasched simulate --serve` serves NODES
# nodes and PODS pending pods; `luasched run` schedules them with the default
# client settings (qps 50, burst 100, as kube-scheduler; events through their
# own client as kube-scheduler's). The served API counts, when it accepts each
# binding, how many Scheduled events exist (GET /luasched/v1/record:
# events.scheduledAtLastBinding), so the first figure is exact at the moment
# the last pod was bound. Then SIGTERM goes to `luasched run` as soon as the
# last binding is seen: the second figure is how many Scheduled events exist
# once it has exited (its graceful stop sends what is queued, up to
# --stop-timeout), with its exit status and how long the stop took.
#
# usage: bench/events_lag.sh [NODES] [PODS] [QPS]   (default 500 5000 50)
# LUASCHED_BIN selects the binary (default build-rel/luasched, then build/luasched).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=${1:-500}
PODS=${2:-5000}
QPS=${3:-50}
BURST=$((QPS * 2))
BIN=${LUASCHED_BIN:-}
[ -n "$BIN" ] || { [ -x "$ROOT/build-rel/luasched" ] && BIN=$ROOT/build-rel/luasched || BIN=$ROOT/build/luasched; }
TMP=$(mktemp -d)
SERVE_PID= RUN_PID=
trap '[ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null || true; [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true; rm -rf "$TMP"' EXIT

luajit "$ROOT/bench/make_cluster.lua" "$NODES" "$PODS" > "$TMP/cluster.json"
"$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" "$TMP/cluster.json" > "$TMP/serve.out" 2> "$TMP/serve.err" &
SERVE_PID=$!
until [ -s "$TMP/kc" ] && grep -q 'serving the cluster at' "$TMP/serve.err"; do sleep 0.05; done
URL=$(sed -n 's/.*serving the cluster at \(https:[^ ]*\).*/\1/p' "$TMP/serve.err")
TOKEN=$(awk '/token:/ {print $2; exit}' "$TMP/kc")
awk '/certificate-authority-data:/ {print $2; exit}' "$TMP/kc" | base64 -d > "$TMP/ca.crt"
record() { curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" "$URL/luasched/v1/record" | jq -c .events; }

start=$(date +%s.%N)
"$BIN" run --kubeconfig "$TMP/kc" --leader-elect=false --secure-port 0 \
  --kube-api-qps "$QPS" --kube-api-burst "$BURST" > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
while :; do
  ev=$(record)
  [ "$(printf '%s' "$ev" | jq .bindings)" -ge "$PODS" ] && break
  sleep 0.02
done
stop_at=$(date +%s.%N)
kill -TERM "$RUN_PID"
rc=0; wait "$RUN_PID" || rc=$?; RUN_PID=
stopped=$(date +%s.%N)
after=$(record)
at_bind=$(printf '%s' "$ev" | jq .scheduledAtLastBinding)
final=$(printf '%s' "$after" | jq .scheduled)
echo "nodes $NODES, pods $PODS, qps $QPS: last binding after $(echo "$stop_at - $start" | bc)s"
echo "Scheduled events when the last pod was bound: $at_bind of $PODS ($(echo "scale=1; 100 * $at_bind / $PODS" | bc)%)"
echo "after SIGTERM at the last binding: $final of $PODS, exit status $rc, stop took $(echo "$stopped - $stop_at" | bc)s"
grep -E 'Stopped before every write|Requested to terminate|Leaderelection' "$TMP/run.err" || true
kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || true; SERVE_PID=
