#!/usr/bin/env bash
# End to end over HTTP: `luasched simulate --serve` serves a cluster of 60
# nodes and 300 pending pods over the Kubernetes API (TLS, bearer token);
# `luasched run --kubeconfig` schedules it with the default profile. Every pod
# must be bound exactly once (the server's record) and to the node that
# `luasched simulate` picks for the same file and seed.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

luajit "$ROOT/bench/make_cluster.lua" 60 300 3 > "$TMP/cluster.json"
"$BIN" simulate "$TMP/cluster.json" --seed 7 | grep ': bound to ' | sort > "$TMP/expected"
expect_eq "simulate binds all 300 pods" "$(wc -l < "$TMP/expected")" "300"

serve_start "$TMP/cluster.json"
run_start --seed 7
wait_bound 300 60 || echo "FAIL: not every pod was bound within 60 s"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
serve_stop
expect_eq "the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
grep ': bound to ' "$TMP/serve.out" | sort > "$TMP/actual"
expect_eq "same placements as luasched simulate" "$(cat "$TMP/actual")" "$(cat "$TMP/expected")"
expect_contains "run logged the start-up sequence" "$(cat "$TMP/run.err")" "Caches are synced"

[ "$failures" -eq 0 ]
