#!/usr/bin/env bash
# The what-if API's cost (docs/operations/what-if.md): `luasched simulate
# --serve` serving NODES nodes with BOUND pods already on them and PENDING
# pending pods, `luasched run` scheduling them over HTTPS with its secure port
# on.
# - Throughput: pods/s from `luasched run`'s readiness (its caches synced) to
#   its last binding,
#   ROUNDS times without and with QPS single-pod questions per second sent
#   to /whatif meanwhile (alternating), and the medians. The questions come
#   from one light client process (bench/whatif_client.c, built as
#   luasched_whatif_client beside luasched: libcurl, one thread,
#   CONNECTIONS keep-alive connections opened before the measured window,
#   questions on a fixed schedule, at most one in flight per connection). Each round also prints the CPU
#   time (from /proc/PID/stat, readiness to last binding) of the scheduler
#   (run's supervisor, its worker and the worker's evaluators), of the API
#   server (simulate --serve) and of the client, and the scheduler's CPU per
#   question: (its CPU with questions - without) / questions answered, split
#   into the supervisor's and the worker's own threads' (the forked evaluators
#   are the worker's reaped children); and, over the rounds, the evaluator's
#   time per answer ("elapsedMs") while scheduling.
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
# LUASCHED_BIN selects the binary (default build-rel/luasched, then build/luasched),
# WHATIF_CLIENT the question client (default luasched_whatif_client beside it);
# ALTERNATE=SECONDS measures the throughput in one run instead, questions
# switched on and off every SECONDS (below; GUARD, default 0.5, the seconds
# left out after each switch).
# RUN_FLAGS are more flags of `luasched run` (e.g. "--whatif-max-wait 1s").
# WHATIF_EVALUATOR=loop runs `luasched run --whatif-evaluator loop` (questions
# on the scheduling thread) to compare with the default fork; RUN_VERBOSITY
# (default 2) is run's -v (4 logs each evaluator forked and reaped, with its
# questions, the loop's pause and its CPU time).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=${1:-5000}
BOUND=${2:-10000}
PENDING=${3:-3000}
ROUNDS=${4:-3}
QPS=${5:-50}
CONNECTIONS=${CONNECTIONS:-128}   # the client's keep-alive connections: the questions that may wait at once
QUESTIONS=${6:-500}
BIN=${LUASCHED_BIN:-}
[ -n "$BIN" ] || { [ -x "$ROOT/build-rel/luasched" ] && BIN=$ROOT/build-rel/luasched || BIN=$ROOT/build/luasched; }
CLIENT=${WHATIF_CLIENT:-$(dirname "$BIN")/luasched_whatif_client}
[ -x "$CLIENT" ] || { echo "bench/whatif.sh: no question client at $CLIENT (build the luasched_whatif_client target, or set WHATIF_CLIENT)" >&2; exit 2; }
TMP=$(mktemp -d)
SERVE_PID= RUN_PID= ASK_PID=
trap 'kill $SERVE_PID $RUN_PID $ASK_PID 2>/dev/null || true; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT

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
  # shellcheck disable=SC2086  # RUN_FLAGS: words
  "$BIN" run --kubeconfig "$TMP/kc" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" -v "${RUN_VERBOSITY:-2}" \
    ${WHATIF_EVALUATOR:+--whatif-evaluator "$WHATIF_EVALUATOR"} \
    --kube-api-qps 100000 --kube-api-burst 100000 ${RUN_FLAGS:-} "$@" > "$TMP/run.out" 2> "$TMP/run.err" &
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

# cpu_ticks PID...: CPU time (clock ticks) of the processes, with their reaped children's.
cpu_ticks() {
  local total=0 p f
  for p in "$@"; do
    f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    read -r -a f <<<"${f##*) }"   # fields from the state on: utime is the 12th
    total=$(( total + f[11] + f[12] + f[13] + f[14] ))
  done
  echo "$total"
}

# sched_ticks: CPU ticks of the scheduler: run's supervisor, its worker, and
# the worker's evaluators (reaped ones in the worker's children's time).
sched_ticks() {
  local worker; worker=$(pgrep -P "$RUN_PID" || true)
  # shellcheck disable=SC2046,SC2086
  cpu_ticks "$RUN_PID" $worker $(for w in $worker; do pgrep -P "$w"; done || true)
}

# worker_faults: the worker's own minor page faults (copy-on-write ones among them).
worker_faults() {
  local worker f; worker=$(pgrep -P "$RUN_PID" | head -1) || { echo 0; return; }
  f=$(cat "/proc/$worker/stat" 2>/dev/null) || { echo 0; return; }
  read -r -a f <<<"${f##*) }"
  echo "${f[7]}"
}

# split_ticks: "supervisor worker" CPU ticks (the worker's own, without its reaped evaluators').
split_ticks() {
  local worker f w=0; worker=$(pgrep -P "$RUN_PID" | head -1) || true
  if [ -n "$worker" ] && f=$(cat "/proc/$worker/stat" 2>/dev/null); then
    read -r -a f <<<"${f##*) }"; w=$(( f[11] + f[12] ))
  fi
  echo "$(cpu_ticks "$RUN_PID") $w"
}

# eval_ticks: CPU ticks of the evaluators the worker has reaped (its children's time).
eval_ticks() {
  local worker f; worker=$(pgrep -P "$RUN_PID" | head -1) || { echo 0; return; }
  f=$(cat "/proc/$worker/stat" 2>/dev/null) || { echo 0; return; }
  read -r -a f <<<"${f##*) }"
  echo $(( f[13] + f[14] ))
}

# measure QPS: "pods/s answered scheduler server client evaluators faults" (CPU ticks, then the
# worker's minor faults) of one
# run (QPS 0: no questions), CPU from readiness to the last binding.
measure() {
  PORT=$(shuf -i 20000-60000 -n 1)
  start
  if [ "$1" -gt 0 ]; then
    # one client process: keep-alive connections opened while the scheduler
    # starts (before the window), then questions on a fixed schedule
    until curl -sk -o /dev/null "https://127.0.0.1:$PORT/livez"; do sleep 0.02; done
    "$CLIENT" "https://127.0.0.1:$PORT/whatif" "$TOKEN" "$TMP/pods.jsonl" "$1" \
      "$CONNECTIONS" > "$TMP/asked" 2> "$TMP/client.err" &
    ASK_PID=$!
    until grep -q connected "$TMP/client.err"; do sleep 0.02; done
    ! curl -skf -o /dev/null "https://127.0.0.1:$PORT/readyz" ||
      echo "warning: the scheduler was ready before the client had connected" >&2
  fi
  until curl -skf -o /dev/null "https://127.0.0.1:$PORT/readyz"; do sleep 0.05; done
  START=$(date +%s.%N)   # synced: scheduling starts
  local s0 a0 c0=0 e0 f0 sp0 wk0; s0=$(sched_ticks); a0=$(cpu_ticks "$SERVE_PID"); e0=$(eval_ticks); f0=$(worker_faults)
  read -r sp0 wk0 <<<"$(split_ticks)"
  if [ "$1" -gt 0 ]; then
    c0=$(cpu_ticks "$ASK_PID")
    kill -USR1 "$ASK_PID"
  fi
  wait_bound
  local s1 a1 c1=0 e1 f1 sp1 wk1 asked=0; s1=$(sched_ticks); a1=$(cpu_ticks "$SERVE_PID"); e1=$(eval_ticks); f1=$(worker_faults)
  read -r sp1 wk1 <<<"$(split_ticks)"
  [ -z "$ASK_PID" ] || c1=$(cpu_ticks "$ASK_PID")
  [ "$1" -eq 0 ] || { asked=$(grep -c '^200 ' "$TMP/asked" || true)
    awk '$1 == 200 && $2 != "-" {print $2}' "$TMP/asked" >> "$TMP/pause_ms"
    awk '$1 == 200 && $3 != "-" && $3 != "" {print $3}' "$TMP/asked" >> "$TMP/busy_ms"; }
  stop
  echo "$(echo "$PENDING / ($END - $START)" | bc -l) $asked $(( s1 - s0 )) $(( a1 - a0 )) $(( c1 - c0 )) $(( e1 - e0 )) $(( f1 - f0 )) $(( sp1 - sp0 )) $(( wk1 - wk0 ))"
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

# ---- throughput with questions on and off in one run (ALTERNATE=SECONDS)
# One run schedules PENDING pods while the client's questions are switched
# on and off every SECONDS (off first); the pods bound per second in the on
# periods against the off periods, each period counted from GUARD seconds
# after its switch (what the last period's questions left running settles)
# to its end, the first period (the caches warm) and those that end after
# 95% of the pods are bound (the queue drains) left out. Two separate runs differ by more than the cost asked
# about (their pods/s moved 5-10% between runs on this project's machine);
# periods of one run compare the same scheduler, cluster and queue.
if [ -n "${ALTERNATE:-}" ]; then
  GUARD=${GUARD:-0.5}
  PORT=$(shuf -i 20000-60000 -n 1)
  start
  until curl -sk -o /dev/null "https://127.0.0.1:$PORT/livez"; do sleep 0.02; done
  "$CLIENT" "https://127.0.0.1:$PORT/whatif" "$TOKEN" "$TMP/pods.jsonl" "$QPS" "$CONNECTIONS" > "$TMP/asked" \
    2> "$TMP/client.err" &
  ASK_PID=$!
  until grep -qs connected "$TMP/client.err"; do sleep 0.02; done
  until curl -skf -o /dev/null "https://127.0.0.1:$PORT/readyz"; do sleep 0.05; done
  kill -USR2 "$ASK_PID"; kill -USR1 "$ASK_PID"   # started, paused: the run begins without questions
  state=off
  echo "$(date +%H:%M:%S.%N) $state" > "$TMP/switches"
  while [ "$(grep -c 'Successfully bound' "$TMP/run.err" || true)" -lt "$PENDING" ]; do
    sleep "$ALTERNATE"
    kill -USR2 "$ASK_PID"
    if [ "$state" = off ]; then state=on; else state=off; fi
    echo "$(date +%H:%M:%S.%N) $state" >> "$TMP/switches"
  done
  answered=$(grep -c '^200 ' "$TMP/asked" || true)
  stop
  # klog's time of day (I1129 17:04:41.289921) and the switches' (17:04:41.289921123), in seconds
  grep 'Successfully bound' "$TMP/run.err" | awk '{split($2, t, ":"); print t[1] * 3600 + t[2] * 60 + t[3]}' \
    > "$TMP/bound_at"
  awk -v guard="$GUARD" '
    NR == FNR { split($1, t, ":"); at[NR] = t[1] * 3600 + t[2] * 60 + t[3]; st[NR] = $2; n = NR; next }
    { b[++nb] = $1 }
    END {
      last = b[int(nb * 0.95)]   # past it the queue drains
      for (i = 2; i < n && at[i + 1] <= last; i++) {   # not the first period, nor one the drain reached
        from = at[i] + guard; to = at[i + 1]; c = 0
        for (k = 1; k <= nb; k++) if (b[k] >= from && b[k] < to) c++
        pods[st[i]] += c; secs[st[i]] += to - from; periods[st[i]]++
        printf "  period %d (%s): %.0f pods/s\n", i - 1, st[i], c / (to - from)
      }
      if (!secs["on"] || !secs["off"]) { print "  too few periods: more PENDING, or a shorter ALTERNATE"; exit 1 }
      off = pods["off"] / secs["off"]; on = pods["on"] / secs["on"]
      printf "throughput in one run, questions switched every %s s: %.0f pods/s without (%d periods), %.0f with (%d periods): %.1f%% of it\n", ALT, off, periods["off"], on, periods["on"], 100 * on / off
    }' ALT="$ALTERNATE" "$TMP/switches" "$TMP/bound_at"
  echo "  $answered questions answered in the run"
  awk '$1 == 200 {print $4}' "$TMP/asked" > "$TMP/round_trip_ms"
  [ ! -s "$TMP/round_trip_ms" ] || printf '  their round trip (sent to answered, waiting for a fork while pods wait): p50 %.0f ms, p99 %.0f ms\n' \
    "$(pct 50 < "$TMP/round_trip_ms")" "$(pct 99 < "$TMP/round_trip_ms")"
  exit 0
fi

# ---- throughput without and with questions
[ "$ROUNDS" -gt 0 ] || exit 0
TICK=$(getconf CLK_TCK)
: > "$TMP/without"; : > "$TMP/with"; : > "$TMP/pause_ms"; : > "$TMP/busy_ms"; : > "$TMP/per_q"; : > "$TMP/eval_q"
for i in $(seq 1 "$ROUNDS"); do
  read -r a _ sa aa _ _ fa spa wka <<<"$(measure 0)"
  read -r b asked sb ab cb eb fb spb wkb <<<"$(measure "$QPS")"
  perq=$(echo "($sb - $sa) * 1000 / $TICK / ($asked + (${asked} == 0))" | bc -l)
  evalq=$(echo "$eb * 1000 / $TICK / ($asked + (${asked} == 0))" | bc -l)
  printf 'round %d: without %.0f pods/s, with %s questions/s %.0f pods/s (%.1f%%, %s questions answered meanwhile)\n' \
    "$i" "$a" "$QPS" "$b" "$(echo "100 * $b / $a" | bc -l)" "$asked"
  printf '  CPU s (scheduler, API server, client): without %.2f %.2f, with %.2f %.2f %.2f; per question: the scheduler %.2f ms, of it the forked evaluators %.2f ms\n' \
    "$(echo "$sa / $TICK" | bc -l)" "$(echo "$aa / $TICK" | bc -l)" "$(echo "$sb / $TICK" | bc -l)" \
    "$(echo "$ab / $TICK" | bc -l)" "$(echo "$cb / $TICK" | bc -l)" "$perq" "$evalq"
  printf '  of it per question (with minus without): the supervisor %.2f ms, the worker'"'"'s own threads %.2f ms\n' \
    "$(echo "($spb - $spa) * 1000 / $TICK / ($asked + (${asked} == 0))" | bc -l)" \
    "$(echo "($wkb - $wka) * 1000 / $TICK / ($asked + (${asked} == 0))" | bc -l)"
  printf '  the worker'"'"'s own minor page faults: without %s, with %s (%.0f more per question)\n' "$fa" "$fb" \
    "$(echo "($fb - $fa) / ($asked + (${asked} == 0))" | bc -l)"
  echo "$a" >> "$TMP/without"; echo "$b" >> "$TMP/with"; echo "$perq" >> "$TMP/per_q"; echo "$evalq" >> "$TMP/eval_q"
done
w=$(median < "$TMP/without"); s=$(median < "$TMP/with")
printf 'throughput, %s nodes, %s pending pods, %s rounds: median %.0f pods/s without, %.0f with %s questions/s (%.1f%% of it)\n' \
  "$NODES" "$PENDING" "$ROUNDS" "$w" "$s" "$QPS" "$(echo "100 * $s / $w" | bc -l)"
printf 'CPU per question answered while scheduling, medians: the scheduler (supervisor, worker, evaluators; with minus without) %.2f ms, the forked evaluators alone %.2f ms\n' \
  "$(median < "$TMP/per_q")" "$(median < "$TMP/eval_q")"
[ ! -s "$TMP/pause_ms" ] || printf 'while scheduling: %s answers, the loop'"'"'s pause p50 %.2f ms, p99 %.2f ms, max %.2f ms\n' \
  "$(wc -l < "$TMP/pause_ms")" "$(pct 50 < "$TMP/pause_ms")" "$(pct 99 < "$TMP/pause_ms")" "$(pct 100 < "$TMP/pause_ms")"
[ ! -s "$TMP/busy_ms" ] || printf 'while scheduling: the evaluator'"'"'s time per answer ("elapsedMs") p50 %.2f ms, p99 %.2f ms\n' \
  "$(pct 50 < "$TMP/busy_ms")" "$(pct 99 < "$TMP/busy_ms")"
