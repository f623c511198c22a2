#!/usr/bin/env bash
# End to end: a graceful stop of `luasched run` sends what it has queued. A
# SIGTERM as soon as the last pod is bound still leaves one Scheduled event
# per pod (the served API counts them); with every request slowed down and a
# short --stop-timeout, the stop is cut short on time, says so in the log
# with how many writes it dropped, and still exits 0.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
record() { api /luasched/v1/record | jq -c .events; }

luajit "$ROOT/bench/make_cluster.lua" 10 200 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
run_start --kube-api-qps 1000 --kube-api-burst 1000
all_bound() { [ "$(record | jq .bindings)" -ge 200 ]; }
wait_until 60 all_bound
run_stop
expect_eq "stop at the last binding: exit 0" "$RUN_RC" "0"
expect_eq "every pod's Scheduled event was sent before the exit" "$(record | jq .scheduled)" "200"
serve_stop

# every request takes 400 ms: sending the 200 bindings and their events on 8+2
# workers would take about 10 s; the stop must give up after 300 ms
serve_start "$TMP/cluster.json" --fault latency=400
run_start --kube-api-qps 1000 --kube-api-burst 1000 --stop-timeout 300ms
one_bound() { [ "$(record | jq .bindings)" -ge 1 ]; }
wait_until 60 one_bound
t0=$(date +%s.%N)
run_stop
took=$(echo "$(date +%s.%N) - $t0" | bc)
expect_eq "cut short: exit 0" "$RUN_RC" "0"
expect_contains "cut short: logged with the count" "$(cat "$TMP/run.err")" \
  '"Stopped before every write was sent: the rest is dropped" dropped="'
expect_eq "cut short on time (300 ms, + up to 3 s for cancelling and exiting on a loaded machine): took ${took}s" \
  "$(echo "$took < 3.3" | bc)" "1"
serve_stop
[ "$failures" -eq 0 ]
