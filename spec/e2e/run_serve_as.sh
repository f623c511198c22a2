#!/usr/bin/env bash
# `luasched run` against an older API server: `simulate --serve --serve-as
# v1.28` serves what kube-apiserver v1.28 serves (no resource.k8s.io/v1: its
# discovery leaves the group out, its paths answer 404, /version says v1.28).
# run reads the discovery, turns DynamicResources and its watches off with
# exactly one warning, and schedules every pod as `simulate` does. A
# configuration enabling DynamicResources explicitly is refused at start,
# naming the plugin and the API. Live explain reads the same discovery. A cache that cannot sync (every list answered
# 500) is reported as an error naming the resource and the HTTP status within
# a minute, not waited on silently.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
RUN_PID='' SERVE_PID=''

luajit "$ROOT/bench/make_cluster.lua" 20 100 3 > "$TMP/cluster.json"
timeout 60 "$BIN" simulate "$TMP/cluster.json" --seed 7 | grep ': bound to ' | sort > "$TMP/expected"
expect_eq "simulate binds all 100 pods" "$(wc -l < "$TMP/expected")" "100"

# ---- the served API pretends to be v1.28
serve_start "$TMP/cluster.json" --serve-as v1.28
expect_eq "/version reports v1.28" "$(api /version | jq -r '.gitVersion + " " + .minor')" "v1.28.0-luasched 28"
expect_eq "/apis leaves resource.k8s.io out" \
  "$(api /apis | jq '[.groups[].name] | index("resource.k8s.io")')" "null"
expect_eq "/apis still serves storage.k8s.io/v1" \
  "$(api /apis | jq -r '.groups[] | select(.name == "storage.k8s.io") | .preferredVersion.groupVersion')" \
  "storage.k8s.io/v1"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
  "$SERVER_URL/apis/resource.k8s.io/v1/resourceclaims")
expect_eq "resource.k8s.io/v1 answers 404" "$code" "404"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" \
  "$SERVER_URL/openapi/v3/apis/resource.k8s.io/v1")
expect_eq "its OpenAPI document answers 404 too" "$code" "404"
expect_eq "/openapi/v3 leaves it out" "$(api /openapi/v3 | jq '.paths | has("apis/resource.k8s.io/v1")')" "false"

for _ in 1 2 3 4 5; do   # a free port for /configz
  port=$(shuf -i 20000-60000 -n 1)
  run_start --seed 7 --bind-address 127.0.0.1 --secure-port "$port"
  sleep 0.5
  kill -0 "$RUN_PID" 2>/dev/null && break
done
wait_bound 100 60 || echo "FAIL: not every pod was bound within 60 s"
configz=$(curl -sk -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$port/configz")
expect_eq "/configz shows the plugins that run: no DynamicResources" \
  "$(jq -c '[.componentconfig.profiles[0].plugins.multiPoint.enabled[].name] | (index("DynamicResources"), index("VolumeBinding") > 0)' <<<"$configz")" \
  "null
true"
run_stop
expect_eq "luasched run exits 0 on SIGTERM" "$RUN_RC" "0"
warnings=$(grep -c '^W' "$TMP/run.err")
expect_eq "exactly one warning" "$warnings" "1"
expect_contains "the warning names what was turned off and why" "$(grep '^W' "$TMP/run.err")" \
  'turnedOff="plugin DynamicResources and its watches (resource.k8s.io/v1 not served)"'
expect_contains "the warning names the server's version" "$(grep '^W' "$TMP/run.err")" \
  'serverVersion="v1.28.0-luasched"'
if grep -q 'Failed to list or watch' "$TMP/run.err"; then
  echo "FAIL: run listed or watched something the server does not serve"; grep 'Failed to list' "$TMP/run.err" | head -3
  failures=$((failures + 1))
fi

# ---- a plugin enabled explicitly that needs the missing API: refused at start
cat > "$TMP/dra.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {kubeconfig: $KUBECONFIG_FILE}
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: DynamicResources
EOF
timeout 30 "$BIN" run --config "$TMP/dra.yaml" --secure-port 0 > /dev/null 2> "$TMP/dra.err"
expect_eq "an explicit DynamicResources exits 2" "$?" "2"
expect_contains "the error names the plugin and the API" "$(cat "$TMP/dra.err")" \
  "luasched run: $TMP/dra.yaml: profile default-scheduler: plugin DynamicResources is enabled but needs resource.k8s.io/v1, which the API server does not serve"
# ---- live explain reads the same discovery
out=$(timeout 60 "$BIN" explain --kubeconfig "$KUBECONFIG_FILE" default/pod-000001 2>&1)
expect_contains "live explain turns DynamicResources off too" "$out" \
  'turnedOff="plugin DynamicResources and its watches (resource.k8s.io/v1 not served)"'
expect_contains "live explain explains the pod" "$out" "Pod default/pod-000001: 1 attempt"
serve_stop
expect_eq "the server exits 0 (no pod bound twice)" "$SERVE_RC" "0"
grep ': bound to ' "$TMP/serve.out" | sort > "$TMP/actual"
expect_eq "same placements as luasched simulate" "$(cat "$TMP/actual")" "$(cat "$TMP/expected")"

# ---- the current release serves resource.k8s.io/v1: nothing turned off
serve_start "$TMP/cluster.json"
run_start --seed 7
wait_bound 100 60 || echo "FAIL: not every pod was bound within 60 s"
run_stop
expect_eq "no warning against the current release" "$(grep -c '^W' "$TMP/run.err")" "0"
serve_stop

# ---- a cache that cannot sync is reported within a minute
serve_start "$TMP/cluster.json" --fault error=1
run_start
deadline=$((SECONDS + 55))
while [ "$SECONDS" -lt "$deadline" ] && ! grep -q 'Cache has not synced' "$TMP/run.err"; do sleep 0.5; done
run_stop
serve_stop
expect_contains "an informer that cannot list is reported, naming the resource and the status" \
  "$(grep 'Cache has not synced' "$TMP/run.err" | grep 'resource="Pod"')" 'HTTP 500'
RUN_PID='' SERVE_PID=''

[ "$failures" -eq 0 ]
