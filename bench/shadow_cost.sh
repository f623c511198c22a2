#!/usr/bin/env bash
# The cost of a shadow policy on `luasched run`'s scheduling loop: the
# http_throughput.sh measurement (`luasched simulate --serve` serving NODES
# nodes and PODS pending pods, `luasched run` scheduling them over HTTPS)
# made ROUNDS times without and with `--shadow` (the default profile again,
# as a second full Filter and Score per pod), alternating, and the medians
# of pods/s from the start of `luasched run` to the last binding.
#
# usage: bench/shadow_cost.sh [NODES] [PODS] [ROUNDS]   (default 1000 5000 3)
# LUASCHED_BIN selects the binary (default build-rel/luasched, then build/luasched).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=${1:-1000}
PODS=${2:-5000}
ROUNDS=${3:-3}
BIN=${LUASCHED_BIN:-}
[ -n "$BIN" ] || { [ -x "$ROOT/build-rel/luasched" ] && BIN=$ROOT/build-rel/luasched || BIN=$ROOT/build/luasched; }
TMP=$(mktemp -d)
SERVE_PID= RUN_PID=
trap 'kill $SERVE_PID $RUN_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT

luajit "$ROOT/bench/make_cluster.lua" "$NODES" "$PODS" > "$TMP/cluster.json"
cat > "$TMP/shadow.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
YAML

# measure [FLAGS...]: pods/s of one run against a fresh served cluster.
measure() {
  rm -f "$TMP/kc" "$TMP/run.err"   # the last run's log must not count for this one
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" "$TMP/cluster.json" > "$TMP/serve.out" 2> "$TMP/serve.err" &
  SERVE_PID=$!
  until [ -s "$TMP/kc" ]; do sleep 0.05; done
  local start end
  start=$(date +%s.%N)
  "$BIN" run --kubeconfig "$TMP/kc" --leader-elect=false --secure-port 0 -v 2 \
    --kube-api-qps 100000 --kube-api-burst 100000 "$@" > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
  until [ "$(cat "$TMP/run.err" 2>/dev/null | grep -c 'Successfully bound')" -ge "$PODS" ]; do sleep 0.02; done
  end=$(date +%s.%N)
  kill -TERM "$RUN_PID"; wait "$RUN_PID" || true; RUN_PID=
  kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || true; SERVE_PID=
  echo "$PODS / ($end - $start)" | bc -l
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

: > "$TMP/without"; : > "$TMP/with"
for i in $(seq 1 "$ROUNDS"); do
  a=$(measure); b=$(measure --shadow "$TMP/shadow.yaml")
  printf 'round %d: without %.0f pods/s, with --shadow %.0f pods/s\n' "$i" "$a" "$b"
  echo "$a" >> "$TMP/without"; echo "$b" >> "$TMP/with"
done
w=$(median < "$TMP/without"); s=$(median < "$TMP/with")
printf 'nodes %s, pods %s, %s rounds: median %.0f pods/s without, %.0f pods/s with --shadow (%.0f%% of the throughput)\n' \
  "$NODES" "$PODS" "$ROUNDS" "$w" "$s" "$(echo "100 * $s / $w" | bc -l)"
