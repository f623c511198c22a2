#!/usr/bin/env bash
# End to end: `luasched run` registers its metrics at start, as kube-scheduler
# does: before any pod exists, /metrics already has every metric the README
# lists (a metric without labels with its zero series, the preemption
# victims histogram with zero counts, each profile's attempt series at zero,
# the queues and the cache at zero), and passes promtool. /metrics/slis
# serves component-base's health-check SLIs: one gauge (1 passed, 0 failed)
# and one counter per check and endpoint, counted each time an endpoint runs.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"

for n in 1 2 3; do   # 3 nodes, no pod
  printf -- '---\napiVersion: v1\nkind: Node\nmetadata: {name: n%s}\nstatus:\n  capacity: {cpu: "4", memory: 8Gi, pods: "110"}\n  conditions: [{type: Ready, status: "True"}]\n' "$n"
done > "$TMP/cluster.yaml"
serve_start "$TMP/cluster.yaml"
for _ in 1 2 3 4 5; do   # a free port: the server needs one (0 turns it off)
  PORT=$(shuf -i 20000-60000 -n 1)
  "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --bind-address 127.0.0.1 \
    --secure-port "$PORT" > "$TMP/run.out" 2> "$TMP/run.err" &
  RUN_PID=$!
  for _ in $(seq 1 50); do grep -q '"Serving securely"' "$TMP/run.err" && break; sleep 0.1; done
  kill -0 "$RUN_PID" 2>/dev/null && break
done
get() { curl -sk --max-time 10 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
for _ in $(seq 1 100); do [ "$(get /readyz)" = ok ] && break; sleep 0.1; done
expect_eq "ready with no pod" "$(get /readyz)" "ok"

get /metrics > "$TMP/metrics"
require_tool promtool prometheus
promtool check metrics < "$TMP/metrics" > "$TMP/promtool" 2>&1
expect_eq "promtool check metrics passes" "$?:$(cat "$TMP/promtool")" "0:"
# every metric the README lists has a sample from the first scrape
for m in scheduler_schedule_attempts_total scheduler_scheduling_attempt_duration_seconds_count \
         scheduler_pending_pods scheduler_preemption_attempts_total scheduler_preemption_victims_bucket \
         scheduler_pod_scheduling_attempts_bucket scheduler_scheduler_cache_size luasched_reloads_total \
         luasched_error_attempts_total \
         luasched_lua_memory_bytes; do
  expect_eq "$m present before any pod" "$(grep -c "^$m[{ ]" "$TMP/metrics" | awk '{print ($1 > 0) ? "yes" : "no"}')" "yes"
done
# the per-plugin fault counters are declared from the start; labeled by the
# plugin, they have no sample until a plugin is cut off (Prometheus' way)
for m in luasched_plugin_budget_overruns_total luasched_lua_restarts_total; do
  expect_eq "$m declared before any pod" \
    "$(grep -c "^# HELP $m .*plugin.*its extension point and profile" "$TMP/metrics"):$(grep -c "^# TYPE $m counter$" "$TMP/metrics")" "1:1"
  expect_eq "$m has no sample before a cut-off" "$(grep -c "^$m[{ ]" "$TMP/metrics")" "0"
done
# scheduler_preemption_victims: buckets 1, 2, 4, ..., 64 (ExponentialBuckets(1, 2, 7)) and +Inf, all zero
expect_eq "scheduler_preemption_victims with zero counts" \
  "$(grep '^scheduler_preemption_victims' "$TMP/metrics")" \
  'scheduler_preemption_victims_bucket{le="1"} 0
scheduler_preemption_victims_bucket{le="2"} 0
scheduler_preemption_victims_bucket{le="4"} 0
scheduler_preemption_victims_bucket{le="8"} 0
scheduler_preemption_victims_bucket{le="16"} 0
scheduler_preemption_victims_bucket{le="32"} 0
scheduler_preemption_victims_bucket{le="64"} 0
scheduler_preemption_victims_bucket{le="+Inf"} 0
scheduler_preemption_victims_sum 0
scheduler_preemption_victims_count 0'
expect_eq "each result of the profile's attempts at zero" \
  "$(grep '^scheduler_schedule_attempts_total' "$TMP/metrics")" \
  'scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 0
scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"} 0
scheduler_schedule_attempts_total{result="error",profile="default-scheduler"} 0'
expect_eq "the queues at zero" "$(grep '^scheduler_pending_pods' "$TMP/metrics")" \
  'scheduler_pending_pods{queue="active"} 0
scheduler_pending_pods{queue="backoff"} 0
scheduler_pending_pods{queue="unschedulable"} 0
scheduler_pending_pods{queue="gated"} 0'
# the gauges are published every 250 ms by the scheduling loop (upstream's cache: every second)
for _ in $(seq 1 30); do get /metrics | grep -q '^scheduler_scheduler_cache_size{type="nodes"} 3$' && break; sleep 0.1; done
expect_eq "the cache: 3 nodes" "$(get /metrics | grep '^scheduler_scheduler_cache_size{type="nodes"}')" \
  'scheduler_scheduler_cache_size{type="nodes"} 3'

# ---- /metrics/slis: the readyz run above was counted; now one healthz and one livez
expect_eq "/healthz" "$(get /healthz)" "ok"
expect_eq "/livez" "$(get /livez)" "ok"
get /metrics/slis > "$TMP/slis"
promtool check metrics < "$TMP/slis" > "$TMP/promtool" 2>&1
expect_eq "/metrics/slis: promtool passes" "$?:$(cat "$TMP/promtool")" "0:"
expect_eq "/metrics/slis: each check of healthz and livez passed once" \
  "$(grep -E '^kubernetes_healthcheck(s_total)?\{name="[^"]*",type="(healthz|livez)"' "$TMP/slis" | LC_ALL=C sort)" \
  'kubernetes_healthchecks_total{name="leaderElection",type="healthz",status="success"} 1
kubernetes_healthchecks_total{name="leaderElection",type="livez",status="success"} 1
kubernetes_healthchecks_total{name="ping",type="healthz",status="success"} 1
kubernetes_healthchecks_total{name="ping",type="livez",status="success"} 1
kubernetes_healthchecks_total{name="scheduling-progress",type="healthz",status="success"} 1
kubernetes_healthchecks_total{name="scheduling-progress",type="livez",status="success"} 1
kubernetes_healthcheck{name="leaderElection",type="healthz"} 1
kubernetes_healthcheck{name="leaderElection",type="livez"} 1
kubernetes_healthcheck{name="ping",type="healthz"} 1
kubernetes_healthcheck{name="ping",type="livez"} 1
kubernetes_healthcheck{name="scheduling-progress",type="healthz"} 1
kubernetes_healthcheck{name="scheduling-progress",type="livez"} 1'
expect_eq "/metrics/slis: readyz's checks, last result passed" \
  "$(grep -E '^kubernetes_healthcheck\{name="[^"]*",type="readyz"' "$TMP/slis" | LC_ALL=C sort)" \
  'kubernetes_healthcheck{name="leaderElection",type="readyz"} 1
kubernetes_healthcheck{name="ping",type="readyz"} 1
kubernetes_healthcheck{name="sched-handler-sync",type="readyz"} 1'
expect_eq "/metrics/slis: HELP as component-base's" "$(grep '^# HELP' "$TMP/slis")" \
  '# HELP kubernetes_healthcheck [STABLE] This metric records the result of a single healthcheck.
# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all healthcheck.'

run_stop
serve_stop
[ "$failures" -eq 0 ]
