#!/usr/bin/env bash
# End-to-end throughput over HTTP: `luasched simulate --serve` serves NODES
# nodes and PODS pending pods over the Kubernetes API (HTTPS, bearer token) and
# `luasched run` schedules them with the default profile: list+watch, one
# binding and one Scheduled event per pod. Prints the time from the start of
# `luasched run` until the last binding was accepted, the pods/s that makes,
# the scheduler's peak RSS and the CPU time it used (user+system of the
# supervisor and of the worker, in seconds and microseconds per pod: far less
# sensitive than pods/s to other work on the machine).
#
# usage: bench/http_throughput.sh [NODES] [PODS]   (default 1000 5000)
# LUASCHED_BIN selects the binary (default build-rel/luasched, then build/luasched).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=${1:-1000}
PODS=${2:-5000}
BIN=${LUASCHED_BIN:-}
[ -n "$BIN" ] || { [ -x "$ROOT/build-rel/luasched" ] && BIN=$ROOT/build-rel/luasched || BIN=$ROOT/build/luasched; }
TMP=$(mktemp -d)
trap 'kill $SERVE_PID $RUN_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
SERVE_PID= RUN_PID=

luajit "$ROOT/bench/make_cluster.lua" "$NODES" "$PODS" > "$TMP/cluster.json"
"$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" "$TMP/cluster.json" > "$TMP/serve.out" 2> "$TMP/serve.err" &
SERVE_PID=$!
# every wait has a deadline: a server or scheduler that does not start ends the run
deadline=$((SECONDS + ${HTTP_BENCH_TIMEOUT:-600}))
wait_or_die() { [ "$SECONDS" -lt "$deadline" ] || { echo "http_throughput: $1; its log:" >&2; tail -5 "$2" >&2; exit 1; }; }
until [ -s "$TMP/kc" ]; do wait_or_die "simulate --serve did not start" "$TMP/serve.err"; sleep 0.05; done
# The client-side rate limit (qps 50 by default, as kube-scheduler) would be
# the whole measurement: lift it, as scheduler_perf does.
start=$(date +%s.%N)
"$BIN" run --kubeconfig "$TMP/kc" --leader-elect=false --secure-port 0 -v 2 \
  --kube-api-qps 100000 --kube-api-burst 100000 > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
until [ "$(grep -c 'Successfully bound' "$TMP/run.err" 2>/dev/null)" -ge "$PODS" ] 2>/dev/null; do
  wait_or_die "not every pod was bound" "$TMP/run.err"; sleep 0.02
done
end=$(date +%s.%N)
rss=$(awk '/VmHWM/ {print $2}' "/proc/$RUN_PID/status")
# CPU clock ticks (user+system) of a process: fields 14 and 15 of its stat,
# counted after the command name, which may hold spaces
ticks() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0; }
sup_ticks=$(ticks "$RUN_PID") wrk_ticks=0
# run is two processes (docs/plugins/worker.md): the worker's peak and CPU count too
for w in $(pgrep -P "$RUN_PID" 2>/dev/null || true); do
  rss=$((rss + $(awk '/VmHWM/ {print $2}' "/proc/$w/status" 2>/dev/null || echo 0)))
  wrk_ticks=$((wrk_ticks + $(ticks "$w")))
done
hz=$(getconf CLK_TCK)
kill -TERM "$RUN_PID"; wait "$RUN_PID" || true; RUN_PID=
kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || true; SERVE_PID=
seconds=$(printf "%.3f" "$(echo "$end - $start" | bc)")
echo "nodes $NODES, pods $PODS: ${seconds}s from start to last binding, $(echo "$PODS / $seconds" | bc) pods/s, peak RSS $((rss / 1024)) MiB"
cpu=$(echo "scale=2; ($sup_ticks + $wrk_ticks) / $hz" | bc)
echo "CPU ${cpu}s (supervisor $(echo "scale=2; $sup_ticks / $hz" | bc)s, worker $(echo "scale=2; $wrk_ticks / $hz" | bc)s), $(echo "($sup_ticks + $wrk_ticks) * 1000000 / $hz / $PODS" | bc) us of CPU per pod"
tail -1 "$TMP/serve.out"
