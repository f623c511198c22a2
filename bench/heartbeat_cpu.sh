#!/usr/bin/env bash
# bench/heartbeat_cpu.sh: the CPU that `luasched run` uses while a large
# cluster only reports heartbeats (bench/README.md "Heartbeats against the
# served API"). A served cluster (`luasched simulate --serve`) holds NODES
# nodes and PODS pods that no node can take (required node affinity on
# metadata.name of a node that does not exist); `luasched run` schedules
# against it over HTTPS; once every pod has been tried, every node reports a
# heartbeat every 10 s (a strategic-merge PATCH of status.conditions with a
# new lastHeartbeatTime, sent with curl over one kept-alive connection per
# round) and the scheduler's CPU time is read from /proc over SECONDS. The
# scheduler runs with scheduler_perf's client rate (QPS and burst 5000).
#
#   bench/heartbeat_cpu.sh [LUASCHED] [NODES] [PODS] [SECONDS]
#
# Defaults: build-rel/luasched, 5000 nodes, 10000 pods, 60 s. Prints the
# scheduler's CPU use (percent of one core), the heartbeats sent and the
# scheduling attempts during the window. Needs curl and luajit.
set -eu
bin=$(realpath "${1:-build-rel/luasched}")
nodes=${2:-5000}
pods=${3:-10000}
window=${4:-60}
work=$(mktemp -d)
serve_pid='' run_pid=''
cleanup() {
    [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The cluster: nodes shaped as scheduler_perf's makeBaseNode, pods that wait.
luajit - "$nodes" "$pods" > "$work/cluster.yaml" <<'LUA'
local nodes, pods = tonumber(arg[1]), tonumber(arg[2])
for i = 1, nodes do
  io.write(string.format([[
apiVersion: v1
kind: Node
metadata: {name: node-%05d, labels: {kubernetes.io/hostname: node-%05d}}
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
  allocatable: {pods: "110", cpu: "4", memory: 32Gi}
  conditions: [{type: Ready, status: "True", lastHeartbeatTime: "2026-01-01T00:00:00Z"}]
---
]], i, i))
end
for i = 1, pods do
  io.write(string.format([[
apiVersion: v1
kind: Pod
metadata: {name: waiting-%05d, namespace: default}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [no-such-node]}]
  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]
%s]], i, i < pods and "---\n" or ""))
end
LUA

"$bin" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$work/kc" "$work/cluster.yaml" \
    > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 1 600); do grep -q '^serving' "$work/serve.err" 2>/dev/null && break; sleep 0.1; done
server=$(awk '/server:/ {print $2}' "$work/kc")
token=$(awk '/token:/ {print $2}' "$work/kc")
awk '/certificate-authority-data:/ {print $2}' "$work/kc" | base64 -d > "$work/ca.pem"

# The scheduler, with its metrics on a free port and scheduler_perf's client
# rate (QPS and burst 5000), so that the writes of the first attempts (an
# Event and a PodScheduled condition per pod) are done before the window.
cat > "$work/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$work/kc", qps: 5000, burst: 5000}
leaderElection: {leaderElect: false}
YAML
port=$(luajit -e 'math.randomseed(os.time()) print(20000 + math.random(20000))')
"$bin" run --config "$work/config.yaml" --bind-address 127.0.0.1 --secure-port "$port" \
    > "$work/run.out" 2> "$work/run.err" &
run_pid=$!
attempts() {
    curl -sk "https://127.0.0.1:$port/metrics" |
        awk '/^scheduler_schedule_attempts_total/ {s += $NF} END {printf "%d", s}'
}
for _ in $(seq 1 1200); do
    [ "$(attempts 2>/dev/null || echo 0)" -ge "$pods" ] && break
    sleep 0.5
done
sleep 10   # the writes of the last attempts, and their own status updates coming back

cpu_ticks() { awk '{print $14 + $15}' "/proc/$run_pid/stat"; }
hz=$(getconf CLK_TCK)

# One round: every node's heartbeat, in one curl process over one connection.
heartbeat_round() {
    local now cfg=$work/round.cfg
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    local body="{\\\"status\\\":{\\\"conditions\\\":[{\\\"type\\\":\\\"Ready\\\",\\\"status\\\":\\\"True\\\",\\\"lastHeartbeatTime\\\":\\\"$now\\\"}]}}"
    for i in $(seq -f %05g 1 "$nodes"); do
        [ "$i" = 00001 ] || printf 'next\n'
        printf 'url = "%s/api/v1/nodes/node-%s/status"\nrequest = PATCH\noutput = /dev/null\n' "$server" "$i"
        printf 'cacert = "%s"\nheader = "Authorization: Bearer %s"\n' "$work/ca.pem" "$token"
        printf 'header = "Content-Type: application/strategic-merge-patch+json"\n'
        printf 'write-out = "%%{http_code}\\n"\ndata = "%s"\n' "$body"
    done > "$cfg"
    curl -s -K "$cfg" | grep -c '^200$' || true
}

a0=$(attempts); t0=$(cpu_ticks); start=$(date +%s.%N)
sent=0
while :; do
    round_start=$(date +%s.%N)
    ok=$(heartbeat_round)
    sent=$((sent + ok))
    now=$(date +%s.%N)
    awk -v n="$now" -v s="$start" -v w="$window" 'BEGIN {exit !(n - s >= w)}' && break
    rest=$(awk -v n="$now" -v r="$round_start" 'BEGIN {d = 10 - (n - r); print (d > 0 ? d : 0)}')
    sleep "$rest"
done
t1=$(cpu_ticks); a1=$(attempts); end=$(date +%s.%N)
awk -v t0="$t0" -v t1="$t1" -v hz="$hz" -v s="$start" -v e="$end" -v sent="$sent" -v a="$((a1 - a0))" \
    -v n="$nodes" -v p="$pods" 'BEGIN {
    wall = e - s; cpu = (t1 - t0) / hz
    printf "cluster            %d nodes, %d waiting pods\n", n, p
    printf "window             %.1f s, %d heartbeats (%.0f/s), %d scheduling attempts\n", wall, sent, sent / wall, a
    printf "luasched run CPU   %.2f s = %.2f%% of one core\n", cpu, 100 * cpu / wall
}'
