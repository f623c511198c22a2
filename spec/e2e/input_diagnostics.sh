#!/usr/bin/env bash
# Inputs that tell you what is wrong (issue 25, point 5), written the way a
# newcomer writes them: a cluster file with misspelt fields warns with the
# file, line, object and the field meant; --strict makes them errors; every
# error of a file is reported at once; a configuration naming a misspelt
# plugin or scoring strategy gets the line, and the plugin meant or the
# valid values.
. "$(dirname "$0")/lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}
sim() { timeout 60 "$BIN" simulate "$@" > "$TMP/out" 2> "$TMP/err"; echo $?; }

cat > "$TMP/typo.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeSelecter: {disk: ssd}
  containres:
  - name: c
    image: nginx
  containers:
  - name: c
    image: nginx
    resources:
      request: {cpu: 100m}
---
apiVersion: v1
kind: Pod
metadata: {name: empty}
spec: {}
YAML
T=$TMP/typo.yaml
expect_eq "warnings: the run goes on" "$(sim "$T")" "0"
expect_eq "warnings: each with file, line, object and the field meant" "$(grep '^warning:' "$TMP/err")" \
"warning: $T:4: Node n1: status.allocatable has no pods: no pod fits on it (NodeResourcesFit: \"Too many pods\")
warning: $T:10: Pod default/web: spec: unknown field \"nodeSelecter\" (did you mean \"nodeSelector\"?): it is ignored
warning: $T:11: Pod default/web: spec: unknown field \"containres\" (did you mean \"containers\"?): it is ignored
warning: $T:18: Pod default/web: spec.containers[0].resources: unknown field \"request\" (did you mean \"requests\"?): it is ignored
warning: $T:23: Pod default/empty: spec.containers: no containers (the API server requires one): the scheduler places the pod as requesting nothing but its overhead"
expect_eq "--strict: the warnings are errors" "$(sim "$T" --strict)" "2"
expect_eq "--strict: all five, then the count" "$(grep -c '(--strict)$' "$TMP/err"):$(tail -1 "$TMP/err")" \
  "5:luasched simulate: 5 errors in $T"

cat > "$TMP/errs.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "four", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: lots}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: c, image: x}], priority: high}
YAML
E=$TMP/errs.yaml
expect_eq "errors: exit 2" "$(sim "$E")" "2"
expect_eq "errors: every one at once, in file order" "$(sed 's/: expected a number.*//' "$TMP/err")" \
"luasched simulate: $E:4: node n1: status.allocatable.cpu: invalid quantity \"four\"
luasched simulate: $E:9: pod default/a: spec.containers[0].resources.requests.cpu: invalid quantity \"lots\"
luasched simulate: $E:14: pod default/b: spec.priority: expected an integer
luasched simulate: 3 errors in $E"

cat > "$TMP/prefer.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: PreferLabelled
YAML
expect_eq "misspelt plugin: exit 2" "$(sim "$ROOT/examples/demo-cluster.yaml" --config "$TMP/prefer.yaml" --plugin-path "$ROOT/examples/plugins")" "2"
expect_contains "misspelt plugin: the line and the plugin meant" "$(cat "$TMP/err")" \
  "$TMP/prefer.yaml:8: profile default-scheduler: plugin \"PreferLabelled\" not found: no prefer_labelled.lua on the plugin path"
expect_contains "misspelt plugin: did you mean" "$(cat "$TMP/err")" '; did you mean "PreferLabeled"?'

cat > "$TMP/strategy.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAlocated
YAML
expect_eq "misspelt strategy: exit 2" "$(sim "$ROOT/examples/demo-cluster.yaml" --config "$TMP/strategy.yaml")" "2"
expect_eq "misspelt strategy: the line and the valid values" "$(grep -v '^notice' "$TMP/err")" \
  "luasched simulate: $TMP/strategy.yaml:9: profiles[0].pluginConfig[0].args: initializing plugin \"NodeResourcesFit\": scoringStrategy.type: Unsupported value: \"MostAlocated\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
[ "$failures" -eq 0 ]
