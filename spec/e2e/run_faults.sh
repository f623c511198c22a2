#!/usr/bin/env bash
# End to end over HTTP under injected faults: for each fault the served
# cluster can inject (watch streams dropped, 410 Expired, 500s, 429s with
# Retry-After, latency), `luasched run` must still bind every one of 200 pods
# exactly once: the server's record refuses and counts double bindings and
# exits non-zero if there was one.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

luajit "$ROOT/bench/make_cluster.lua" 30 200 3 > "$TMP/cluster.json"

for fault in watch-drop=25 gone=0.3 error=0.15 throttle=0.15:1 latency=15; do
  serve_start "$TMP/cluster.json" --fault "$fault" --seed 3
  run_start --seed 3
  wait_bound 200 90 || echo "FAIL: $fault: not every pod was bound"
  run_stop
  serve_stop
  expect_eq "$fault: luasched run stops cleanly" "$RUN_RC" "0"
  expect_eq "$fault: no pod bound twice (server exit status)" "$SERVE_RC" "0"
  expect_eq "$fault: every pod bound once" "$(grep -c ': bound to ' "$TMP/serve.out")" "200"
  expect_contains "$fault: no refused binding" "$(grep '^summary:' "$TMP/serve.out")" "0 refused"
  case $fault in
    watch-drop*) what="watches dropped" ;; gone*) what="watches answered 410" ;;
    error*) what="errors (500)" ;; throttle*) what="throttled (429)" ;; *) what= ;;
  esac
  if [ -n "$what" ]; then
    n=$(grep '^faults injected:' "$TMP/serve.out" | grep -o "[0-9][0-9]* $what" | cut -d' ' -f1)
    expect_eq "$fault: the fault really happened ($what > 0)" "$([ "${n:-0}" -gt 0 ] && echo yes)" "yes"
  fi
done

[ "$failures" -eq 0 ]
