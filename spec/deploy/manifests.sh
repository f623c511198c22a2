#!/usr/bin/env bash
# The kustomize manifests (deploy/kustomize): both overlays rendered with
# `kubectl kustomize` and checked object by object (spec/deploy/check_manifests.py);
# the configuration in the ConfigMap passes `luasched check` and its plugin file
# is the example plugin; the kinds the served API knows are applied to it and
# read back; and `luasched run` with that configuration, against a served
# cluster that records every request (--audit-log), makes only requests the
# rendered RBAC (plus upstream's system:kube-scheduler and system:volume-scheduler
# roles) allows: the rules are checked against what the client really calls.
# Skipped (77) without kubectl or python3-yaml.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/../e2e/serve_lib.bash"
. "$(dirname "$0")/deploy_lib.bash"
need_tools kubectl python3 jq
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is not installed (.ci/deps.sh installs it)"; exit 77; }
ROOT=${LUASCHED_SOURCE_DIR:-.}
K=$ROOT/deploy/kustomize
CHECK=$ROOT/spec/deploy/check_manifests.py

render() { kubectl kustomize "$K/$1" > "$TMP/$2" 2> "$TMP/$2.err" || { cat "$TMP/$2.err"; echo "FAIL: kubectl kustomize $1"; exit 1; }; }
render overlays/second-scheduler second.yaml
render overlays/replace-kube-scheduler replace.yaml
render overlays/replace-kube-scheduler/static-pod static-pod.yaml
python3 "$CHECK" structure "$TMP/second.yaml" "$TMP/replace.yaml" "$TMP/static-pod.yaml" || failures=$((failures + 1))

# The ConfigMaps' files, as the pod sees them.
python3 - "$TMP/second.yaml" "$TMP/cm" <<'PY'
import os, sys, yaml
out = sys.argv[2]
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap":
        os.makedirs(os.path.join(out, d["metadata"]["name"]), exist_ok=True)
        for k, v in d["data"].items():
            open(os.path.join(out, d["metadata"]["name"], k), "w").write(v)
PY
expect_eq "the plugins ConfigMap holds the example plugin" \
  "$(cmp "$TMP/cm/luasched-plugins/prefer_labeled.lua" "$ROOT/examples/plugins/prefer_labeled.lua" && echo same)" "same"
expect_contains "luasched check accepts the ConfigMap's configuration" \
  "$("$BIN" check "$TMP/cm/luasched-config/config.yaml" --plugin-path "$TMP/cm/luasched-plugins" 2>&1)" "ok: "
expect_contains "luasched check accepts the static pod's configuration" \
  "$("$BIN" check "$K/overlays/replace-kube-scheduler/static-pod/config.yaml" 2>&1)" "ok: "

# Served cluster with an audit log; the rendered objects of kinds it serves applied to it.
serve_start "$ROOT/spec/deploy/fixtures/rbac-cluster.yaml" --audit-log "$TMP/audit.log"
kinds=$(kubectl --kubeconfig "$KUBECONFIG_FILE" api-resources --no-headers -o wide | awk '{print $(NF-1)}' | sort -u)
python3 - "$TMP/second.yaml" "$TMP/served.yaml" $kinds <<'PY'
import sys, yaml
known = set(sys.argv[3:])
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] in known]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
print("applying:", " ".join(sorted({d["kind"] for d in docs})))
PY
kubectl --kubeconfig "$KUBECONFIG_FILE" apply -f "$TMP/served.yaml" > "$TMP/apply.out" 2>&1
expect_eq "kubectl apply of the served kinds" "$?" "0"
expect_eq "the Deployment reads back with two replicas" \
  "$(kubectl --kubeconfig "$KUBECONFIG_FILE" -n luasched get deployment luasched -o jsonpath='{.spec.replicas}')" "2"
expect_eq "the PDB reads back" \
  "$(kubectl --kubeconfig "$KUBECONFIG_FILE" -n luasched get pdb luasched -o jsonpath='{.spec.minAvailable}')" "1"
expect_eq "the metrics Service reads back" \
  "$(kubectl --kubeconfig "$KUBECONFIG_FILE" -n luasched get service luasched-metrics -o jsonpath='{.spec.ports[0].port}')" "10259"
: > "$TMP/audit.log"   # only luasched's own requests count from here

sed "s#^clientConnection:#clientConnection:\n  kubeconfig: $KUBECONFIG_FILE#; s#/etc/luasched/plugins#$TMP/cm/luasched-plugins#" \
  "$TMP/cm/luasched-config/config.yaml" > "$TMP/config.yaml"
"$BIN" run --config "$TMP/config.yaml" --secure-port 0 --leader-elect-retry-period 1s > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
deadline=$((SECONDS + 60))
until api /api/v1/namespaces/default/pods/urgent | jq -e '.spec.nodeName // empty' > /dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || { echo "FAIL: urgent was not bound"; failures=$((failures + 1)); break; }
  sleep 0.2
done
# the requests checked below (the event, the Lease) follow the binding
made_all() { grep -q "create events.k8s.io events - default" "$TMP/audit.log" && grep -q "coordination.k8s.io leases" "$TMP/audit.log"; }
wait_until 60 made_all
run_stop
serve_stop
expect_contains "a victim was preempted" "$(cat "$TMP/serve.out")" "deleted"
for req in "create - pods binding default urgent" "delete - pods - default" "patch - pods status default" \
           "create events.k8s.io events - default" "create coordination.k8s.io leases - luasched" \
           "watch - nodes - -"; do
  expect_contains "the run made: $req" "$(cat "$TMP/audit.log")" "$req"
done
python3 "$CHECK" rbac "$TMP/second.yaml" "$ROOT/spec/deploy/fixtures/upstream-scheduler-roles.yaml" \
  "$TMP/audit.log" luasched luasched || failures=$((failures + 1))
[ "$failures" -eq 0 ]
