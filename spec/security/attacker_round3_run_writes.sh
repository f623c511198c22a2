#!/usr/bin/env bash
# The attacker's last round of issue 24 (point 6), against `luasched run` and
# its worker: a plugin's API writes the supervisor or the API server must
# refuse. A PreBind plugin, for the pod labelled probe=yes, patches one
# PersistentVolume four times with 200 KiB annotations each (upstream's API
# server keeps annotations to 256 KiB: the second and later are refused with
# its 422) and patches the Namespace's labels (the worker writes
# PersistentVolumes and claims only), a pod's labels (of a pod, only
# status.extendedResourceClaimStatus) and creates a Secret (only DRA's claim
# for a pod's extended resources is created): each refused to the plugin. The served cluster must keep one
# annotation and the namespace's labels; every pod must be bound once; the
# worker must not be restarted; run and the server must stop cleanly.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/../e2e/serve_lib.bash"
RUN_PID=; SERVE_PID=
mkdir -p "$TMP/plugins"
cat > "$TMP/plugins/writer.lua" <<'LUA'
local ls = require("luasched")
local P = ls.plugin("Writer")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local big = string.rep("x", 200 * 1024)
  for i = 1, 4 do
    ls.patch_object("PersistentVolume", nil, "pv1", '{"metadata":{"annotations":{"k' .. i .. '":"' .. big .. '"}}}')
  end
  local err = ls.patch_object("Namespace", nil, "tenant-a", '{"metadata":{"labels":{"team":"evil"}}}')
  print("namespace patch: " .. tostring(err))
  -- a pod's labels, and an object other than DRA's claim for extended resources
  err = ls.patch_object("Pod", "default", "plain-1", '{"metadata":{"labels":{"team":"evil"}}}')
  print("pod patch: " .. tostring(err))
  local _, cerr = ls.create_object('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"}}')
  print("create: " .. tostring(cerr))
  return nil
end
return P
LUA
{
  for n in node-1 node-2; do
    printf -- '---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s}}\n' "$n" "$n"
    printf 'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
  done
  printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: tenant-a, labels: {team: a}}\n'
  printf -- '---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n'
  printf 'spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}\n'
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: default, labels: {probe: "yes"}}\n'
  printf 'spec: {containers: [{name: c, image: app}]}\n'
  for i in 1 2 3; do
    printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain-%d, namespace: default}\n' "$i"
    printf 'spec: {containers: [{name: c, image: app}]}\n'
  done
} > "$TMP/cluster.yaml"
serve_start "$TMP/cluster.yaml"
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
      enabled: [{name: Writer}]
YAML
"$BIN" run --config "$TMP/config.yaml" --secure-port 0 > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
wait_bound 4 120 || echo "FAIL: the pods were not all bound"
for _ in $(seq 1 100); do grep -q 'namespace patch:' "$TMP/run.err" && break; sleep 0.1; done
expect_contains "the worker refused the Namespace patch, to the plugin" "$(cat "$TMP/run.err")" \
  'namespace patch: updating Namespace tenant-a: only PersistentVolumes and claims are written'
expect_contains "the worker refused the pod's label patch, to the plugin" "$(cat "$TMP/run.err")" \
  'pod patch: updating Pod plain-1 against an API server: a pod'"'"'s status patch: only status.extendedResourceClaimStatus (requestMappings, resourceClaimName) is written'
expect_contains "the worker refused to create a Secret, to the plugin" "$(cat "$TMP/run.err")" \
  "create: creating objects from a plugin against an API server: only DynamicResources' claim for a pod's extended resources is created: expected apiVersion resource.k8s.io/v1, kind ResourceClaim"
expect_eq "the namespace's labels are unchanged" "$(api /api/v1/namespaces/tenant-a | jq -r '.metadata.labels.team')" "a"
annotations=
for _ in $(seq 1 100); do
  annotations=$(api /api/v1/persistentvolumes/pv1 | jq -r '.metadata.annotations // {} | keys | join(",")')
  [ -n "$annotations" ] && break
  sleep 0.1
done
sleep 1
# the writer's pool sends the four patches in parallel: whichever arrives first is kept
expect_eq "the API server kept the annotations within 256 KiB (one patch of the four)" \
  "$(api /api/v1/persistentvolumes/pv1 | jq -r '.metadata.annotations // {} | keys | join(",")' | grep -cE '^k[1-4]$')" "1"
expect_eq "three refusals logged" "$(grep -c "A plugin's API write failed" "$TMP/run.err")" "3"
expect_contains "the refusal is logged with the API server's message" "$(cat "$TMP/run.err")" \
  'metadata.annotations: Too long: must have at most 262144 bytes'
expect_eq "the worker was never restarted" "$(grep -c 'The worker process ended' "$TMP/run.err")" "0"
kill -TERM "$RUN_PID"; wait "$RUN_PID"; RUN_RC=$?; RUN_PID=
expect_eq "run stops cleanly" "$RUN_RC" "0"
serve_stop; SERVE_PID=
expect_eq "no pod bound twice (server exit status)" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
