#!/usr/bin/env bash
# The what-if API's cost (docs/operations/what-if.md): `luasched simulate
# --serve` serving NODES nodes with BOUND pods already on them and PENDING
# pending pods, `luasched run` scheduling them over HTTPS with its secure port
# on.
# - Throughput: pods/s from `luasched run`'s readiness (its caches synced) to
#   its last binding,
#   ROUNDS times without and with QPS single-pod questions per second sent
#   to /whatif meanwhile (alternating), and the medians.
# - Latency: once everything is bound, QUESTIONS single-pod questions (random
#   pods of spec/e2e/whatif_cluster.lua, "explain": false) sent one after the
#   other over one connection: p50 and p99 of the time the worker took
#   ("elapsedMs" of each answer) and of the whole HTTPS round trip (curl's
#   time_total: supervisor, channel, worker and back), and of the pause the
#   scheduling loop paid to hand the questions over: a fork, or a write to the
#   warm evaluator ("loopPauseMs", absent with WHATIF_EVALUATOR=loop; also
#   printed for the questions answered while scheduling).
#
# usage: bench/whatif.sh [NODES] [BOUND] [PENDING] [ROUNDS] [QPS] [QUESTIONS]
#        (default 5000 10000 3000 3 50 500)
# LUASCHED_BIN selects the binary (default build-rel/luasched, then build/luasched);
# WHATIF_EVALUATOR=loop runs `luasched run --whatif-evaluator loop` (questions
# on the scheduling thread) to compare with the default fork.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=${1:-5000}
BOUND=${2:-10000}
PENDING=${3:-3000}
ROUNDS=${4:-3}
QPS=${5:-50}
STREAMS=${STREAMS:-5}   # QPS is sent over this many connections (QPS a multiple of it)
QUESTIONS=${6:-500}
BIN=${LUASCHED_BIN:-}
[ -n "$BIN" ] || { [ -x "$ROOT/build-rel/luasched" ] && BIN=$ROOT/build-rel/luasched || BIN=$ROOT/build/luasched; }
TMP=$(mktemp -d)
SERVE_PID= RUN_PID= ASK_PID=
trap 'kill $SERVE_PID $RUN_PID $ASK_PID 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT

luajit "$ROOT/spec/e2e/whatif_cluster.lua" 11 "$NODES" "$BOUND" "$QUESTIONS" "$PENDING" \
  > "$TMP/cluster.json" 2> "$TMP/pods.jsonl"

# curl_config N [discard]: a curl config of N questions (the pods of pods.jsonl,
# round robin) to /whatif; with "discard", the answers go to /dev/null.
curl_config() {
  local out=$'\ninsecure\nwrite-out = "\\n%{time_total}\\n"'
  [ "${2:-}" != discard ] || out=$'\ninsecure\nwrite-out = "%{stderr}%{http_code}\\n"'
  jq -r --arg url "https://127.0.0.1:$PORT/whatif" --arg auth "Authorization: Bearer $TOKEN" --arg out "$out" \
    '"next\nurl = \($url | tojson)\ndata = \({pod: ., explain: false} | tojson | tojson)\nheader = \($auth | tojson)\($out)"' \
    "$TMP/pods.jsonl" > "$TMP/one.conf"
  : > "$TMP/ask.conf"
  local per lines; per=$(wc -l < "$TMP/pods.jsonl"); lines=$(( $(wc -l < "$TMP/one.conf") / per ))
  for _ in $(seq 1 $(( ($1 + per - 1) / per ))); do cat "$TMP/one.conf" >> "$TMP/ask.conf"; done
  head -n $(( $1 * lines )) "$TMP/ask.conf" | tail -n +2 > "$TMP/ask.tmp" && mv "$TMP/ask.tmp" "$TMP/ask.conf"
}

TOKEN=bench-$RANDOM$RANDOM
start() { # [FLAGS...]: served cluster and run on PORT
  rm -f "$TMP/kc" "$TMP/run.err"
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" --token "$TOKEN" "$TMP/cluster.json" > "$TMP/serve.out" \
    2> "$TMP/serve.err" &
  SERVE_PID=$!
  until [ -s "$TMP/kc" ]; do sleep 0.05; done
  START=$(date +%s.%N)
  "$BIN" run --kubeconfig "$TMP/kc" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" -v 2 \
    ${WHATIF_EVALUATOR:+--whatif-evaluator "$WHATIF_EVALUATOR"} \
    --kube-api-qps 100000 --kube-api-burst 100000 "$@" > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
}

wait_bound() {
  until [ "$(grep -c 'Successfully bound' "$TMP/run.err" 2>/dev/null || true)" -ge "$PENDING" ] 2>/dev/null; do sleep 0.02; done
  END=$(date +%s.%N)
}

stop() {
  # shellcheck disable=SC2086
  [ -z "$ASK_PID" ] || { kill $ASK_PID 2>/dev/null; wait $ASK_PID 2>/dev/null || true; ASK_PID=; }
  kill -TERM "$RUN_PID"; wait "$RUN_PID" || true; RUN_PID=
  kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || true; SERVE_PID=
}

# measure QPS: pods/s of one run (QPS 0: no questions).
measure() {
  PORT=$(shuf -i 20000-60000 -n 1)
  # each stream reads the whole config at its start: two minutes of its
  # questions, not thousands more (parsing 30,000 entries five times took the
  # cores from the scheduler at the very start of the measured window)
  [ "$1" -eq 0 ] || curl_config $(( $1 / STREAMS * 120 )) discard
  start
  until curl -skf -o /dev/null "https://127.0.0.1:$PORT/readyz"; do sleep 0.05; done
  START=$(date +%s.%N)   # synced: scheduling starts
  if [ "$1" -gt 0 ]; then
    # STREAMS connections, each one question at a time at QPS/STREAMS a second (a
    # slow answer holds back only its stream; curl's --rate does not hold with --parallel)
    : > "$TMP/asked_answers"; : > "$TMP/asked"
    for _ in $(seq 1 "$STREAMS"); do
      curl -s --rate "$(( $1 / STREAMS ))/s" -K "$TMP/ask.conf" >> "$TMP/asked_answers" 2>> "$TMP/asked" &
      ASK_PID="$ASK_PID $!"
    done
  fi
  wait_bound
  local asked=0
  [ "$1" -eq 0 ] || { asked=$(grep -c '^200$' "$TMP/asked" || true)
    { grep -o '"loopPauseMs":[0-9.e-]*' "$TMP/asked_answers" || true; } | cut -d: -f2 >> "$TMP/pause_ms"; }
  stop
  echo "$(echo "$PENDING / ($END - $START)" | bc -l) $asked"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
pct() { # P: the P-th percentile of the numbers on stdin (nearest rank)
  sort -g | awk -v p="$1" '{a[NR] = $1} END {i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; print a[i]}'
}

# ---- latency
[ "${SKIP_LATENCY:-}" ] || {
PORT=$(shuf -i 20000-60000 -n 1)
start
wait_bound
until curl -skf -o /dev/null "https://127.0.0.1:$PORT/readyz"; do sleep 0.2; done
curl_config "$QUESTIONS"
curl -sk -o /dev/null -H "Authorization: Bearer $TOKEN" --data '{"pod":{}}' "https://127.0.0.1:$PORT/whatif"   # warm-up
curl -s -K "$TMP/ask.conf" > "$TMP/answers"
grep -o '"elapsedMs":[0-9.e-]*' "$TMP/answers" | cut -d: -f2 > "$TMP/worker_ms"
{ grep -o '"loopPauseMs":[0-9.e-]*' "$TMP/answers" || true; } | cut -d: -f2 > "$TMP/idle_pause_ms"
grep -E '^[0-9.]+$' "$TMP/answers" | awk '{print $1 * 1000}' > "$TMP/http_ms"
answered=$(wc -l < "$TMP/worker_ms")
scheduled=$(grep -o '"result":"scheduled"' "$TMP/answers" | wc -l)
stop
printf 'latency, %s nodes, %s pods on them, %s questions (%s answered, %s scheduled):\n' "$NODES" \
  "$((BOUND + PENDING))" "$QUESTIONS" "$answered" "$scheduled"
printf '  in the worker:  p50 %.2f ms, p99 %.2f ms\n' "$(pct 50 < "$TMP/worker_ms")" "$(pct 99 < "$TMP/worker_ms")"
printf '  HTTPS round trip: p50 %.2f ms, p99 %.2f ms\n' "$(pct 50 < "$TMP/http_ms")" "$(pct 99 < "$TMP/http_ms")"
[ ! -s "$TMP/idle_pause_ms" ] ||   # none with --whatif-evaluator loop
  printf '  the loop'"'"'s pause to hand the questions over (a fork, or a write to the warm evaluator): p50 %.2f ms, p99 %.2f ms\n' \
    "$(pct 50 < "$TMP/idle_pause_ms")" "$(pct 99 < "$TMP/idle_pause_ms")"
}

# ---- throughput without and with questions
: > "$TMP/without"; : > "$TMP/with"; : > "$TMP/pause_ms"
for i in $(seq 1 "$ROUNDS"); do
  read -r a _ <<<"$(measure 0)"
  read -r b asked <<<"$(measure "$QPS")"
  printf 'round %d: without %.0f pods/s, with %s questions/s %.0f pods/s (%s questions answered meanwhile)\n' \
    "$i" "$a" "$QPS" "$b" "$asked"
  echo "$a" >> "$TMP/without"; echo "$b" >> "$TMP/with"
done
w=$(median < "$TMP/without"); s=$(median < "$TMP/with")
printf 'throughput, %s nodes, %s pending pods, %s rounds: median %.0f pods/s without, %.0f with %s questions/s (%.1f%% of it)\n' \
  "$NODES" "$PENDING" "$ROUNDS" "$w" "$s" "$QPS" "$(echo "100 * $s / $w" | bc -l)"
[ ! -s "$TMP/pause_ms" ] || printf 'while scheduling: %s answers, the loop'"'"'s pause p50 %.2f ms, p99 %.2f ms, max %.2f ms\n' \
  "$(wc -l < "$TMP/pause_ms")" "$(pct 50 < "$TMP/pause_ms")" "$(pct 99 < "$TMP/pause_ms")" "$(pct 100 < "$TMP/pause_ms")"
