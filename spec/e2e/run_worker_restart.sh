#!/usr/bin/env bash
# End to end (issue 24): `luasched run` runs the scheduler and the plugins in a
# confined worker process, which its supervisor restarts when a plugin hangs it
# or it crashes. Against the served cluster (its API refuses and counts a
# second binding of a pod):
# - the worker shows the seccomp filter (Seccomp: 2, NoNewPrivs: 1), and its
#   environment and open files hold no token although run's environment does;
# - a plugin whose Filter hangs inside a C call (a pattern match that
#   backtracks for ever) on one pod: the supervisor ends the worker after the
#   budget and the grace, logs the plugin and the pod, starts another worker,
#   and the other pods are bound; after 3 such kills the pod is marked (a
#   PodScheduled condition and a FailedScheduling event naming the plugin and
#   the kill) and withheld;
# - a worker that dies of a signal while the plugin spins on another pod is
#   replaced, the log naming the plugin and that pod; in the new worker the
#   JIT-compiled spin is cut off at its budget without ending the worker;
# - no pod is bound twice, a pod created afterwards is bound.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
RUN_PID=; SERVE_PID=
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/wreck.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Wreck", { defaults = { hang = "", spin = "" } })
function P:init(args) self.hang, self.spin = ls.intern(args.hang), ls.intern(args.spin) end
function P:filter(_, pod)
  if pod.name == self.hang then
    local s = string.rep("a", 40)
    return s:find(string.rep("a?", 40) .. s .. "b") and nil
  end
  if pod.name == self.spin then
    local x = 0
    while true do x = x + 1 end
  end
end
return P
LUA
luajit "$ROOT/bench/make_cluster.lua" 3 12 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
cat > "$TMP/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$TMP/plugins"], pluginTimeoutMilliseconds: 3000}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Wreck}]
  pluginConfig:
  - name: Wreck
    args: {hang: pod-000012, spin: spinner}
YAML
# a token in run's own environment: the worker must not inherit it
BEARER_TOKEN=$TOKEN "$BIN" run --config "$TMP/config.yaml" --secure-port 0 \
  --worker-hang-grace 1s --worker-kill-backoff 60s > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
worker_pid() { pgrep -P "$RUN_PID" -f '^luasched run --worker ' | head -1; }
for _ in $(seq 1 50); do [ -n "$(worker_pid)" ] && break; sleep 0.1; done
W=$(worker_pid)
# it confines itself after exec (a sanitized worker takes a moment): asked
# again, up to 10 s
seccomp_line() { grep -E '^Seccomp:' "/proc/$W/status" 2>/dev/null | tr -s '\t' ' '; }
for _ in $(seq 1 100); do [ "$(seccomp_line)" = "Seccomp: 2" ] && break; sleep 0.1; done
expect_eq "the worker runs under a seccomp filter" "$(grep -E '^(Seccomp|NoNewPrivs):' "/proc/$W/status" | tr -s '\t' ' ')" \
  "NoNewPrivs: 1
Seccomp: 2"
expect_eq "the supervisor's environment has the token" "$(tr '\0' '\n' < "/proc/$RUN_PID/environ" | grep -c "$TOKEN")" "1"
expect_eq "the worker's environment has no token" "$(tr '\0' '\n' < "/proc/$W/environ" | grep -c "$TOKEN")" "0"
expect_eq "the worker's environment has no kubeconfig" "$(tr '\0' '\n' < "/proc/$W/environ" | grep -ci kube)" "0"
# What stays open (a worker still starting reads its Lua modules and plugins
# for a moment: asked again, up to 10 s, until only what it keeps is left).
kept_fds() {
  ls -l "/proc/$W/fd" 2>/dev/null | awk 'NR > 1 {print $NF}' | grep -v -e '^/dev/null$' -e "^$TMP/run.out$" \
    -e "^$TMP/run.err$" -e '^anon_inode:inotify$' | sed -e 's/socket:.*/socket/' -e 's/pipe:.*/pipe/'
}
# the channel, and the what-if evaluator's stop pipe (its two ends: the
# collector thread leaves its wait when the worker ends, whatif_worker.c)
KEPT="socket
pipe
pipe"
for _ in $(seq 1 100); do [ "$(kept_fds)" = "$KEPT" ] && break; sleep 0.1; done
expect_eq "the worker has no file open but its logs, its channel and the what-if stop pipe (and the file watch)" \
  "$(kept_fds)" "$KEPT"
expect_eq "the worker's command line names no kubeconfig" "$(tr '\0' ' ' < "/proc/$W/cmdline" | grep -c kube)" "0"

wait_bound 11 60 || echo "FAIL: the other pods were not bound while a plugin hung the worker"
marked=
for _ in $(seq 1 300); do
  marked=$(api /api/v1/namespaces/default/pods/pod-000012 |
    jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .reason + ": " + .message')
  case $marked in *"ended 3 times"*) break ;; esac
  sleep 0.1
done
expect_contains "after 3 kills the pod is marked as an Error naming the plugin" "$marked" \
  'SchedulerError: running Filter plugin "Wreck": the worker process ended 3 times while this plugin ran for this pod'
expect_contains "the mark says how the worker ended" "$marked" \
  "killed by the supervisor: a plugin call ran past its budget of 3000 ms and the 1000 ms grace"
expect_contains "the mark says the pod is backed off" "$marked" "the pod is retried in 60 s"
expect_contains "a FailedScheduling event says it too" \
  "$(api /apis/events.k8s.io/v1/namespaces/default/events | jq -r '.items[] | select(.regarding.name == "pod-000012") | .reason + " " + .note')" \
  'FailedScheduling running Filter plugin "Wreck": the worker process ended 3 times'
expect_contains "the supervisor logged the kill naming the call" "$(cat "$TMP/run.err")" \
  'killed by the supervisor: a plugin call ran past its budget of 3000 ms and the 1000 ms grace: default-scheduler/Wreck/Filter/default/pod-000012 in filter at '"$TMP/plugins/wreck.lua"':4'
expect_contains "the log names the profile, plugin, extension point and pod" "$(cat "$TMP/run.err")" \
  'default-scheduler/Wreck/Filter/default/pod-000012'
expect_eq "three workers were ended for it" "$(grep -c 'The worker process ended; starting another' "$TMP/run.err")" "3"

# a worker that dies of a signal while the plugin spins on "spinner"
curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
  -X POST "$SERVER_URL/api/v1/namespaces/default/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"spinner"},"spec":{"containers":[{"name":"c","image":"x"}]}}' \
  > /dev/null
sleep 1.5
W=$(worker_pid)
kill -SEGV "$W"
for _ in $(seq 1 50); do [ -n "$(worker_pid)" ] && [ "$(worker_pid)" != "$W" ] && break; sleep 0.1; done
W2=$(worker_pid)
expect_eq "a new worker replaces the crashed one" "$([ -n "$W2" ] && [ "$W2" != "$W" ] && echo yes)" "yes"
expect_contains "the log names the signal, the plugin and the pod" "$(cat "$TMP/run.err")" \
  'died of signal 11 (Segmentation fault), fatal signal SIGSEGV in plugin call default-scheduler/Wreck/Filter/default/spinner in filter at '"$TMP/plugins/wreck.lua"':4'
# in the new worker the spin is cut off at its 3 s budget, the worker stays
spun=
for _ in $(seq 1 100); do
  spun=$(api /api/v1/namespaces/default/pods/spinner | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message')
  case $spun in *"time budget"*) break ;; esac
  sleep 0.1
done
expect_contains "the spin is cut off inside the worker" "$spun" \
  'running "Wreck" filter plugin: plugin exceeded its time budget of 3000 ms'
expect_eq "and that worker still runs" "$(worker_pid)" "$W2"

curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
  -X POST "$SERVER_URL/api/v1/namespaces/default/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"late"},"spec":{"containers":[{"name":"c","image":"x"}]}}' \
  > /dev/null
wait_bound 12 30 || echo "FAIL: a pod created after the restarts was not bound"
kill -TERM "$RUN_PID"; wait "$RUN_PID"; RUN_RC=$?; RUN_PID=
expect_eq "run stops cleanly" "$RUN_RC" "0"
serve_stop; SERVE_PID=
expect_eq "no pod bound twice (server exit status)" "$SERVE_RC" "0"
expect_contains "no refused binding" "$(grep '^summary:' "$TMP/serve.out")" "0 refused"
[ "$failures" -eq 0 ]
