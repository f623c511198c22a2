#!/usr/bin/env bash
# End to end: `luasched check CONFIG` reports every problem of a configuration
# at once (fields with file, line and path first, then each profile's
# plugins), or "ok"; --write-config-to writes the completed configuration.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures/check
# a stable built-in plugin directory in the messages that list the plugin path
export LUASCHED_PLUGIN_PATH=plugins:plugins/policies   # the built-in path

check() { "$BIN" check "$@" >"$TMP/out" 2>"$TMP/err"; echo $?; }

# ---- a clean configuration
expect_eq "clean: exit 0" "$(check $F/clean.yaml)" "0"
# "ok", then the file each enabled plugin resolves to, profile by profile
expect_eq "clean: output" "$(cat "$TMP/out")" "ok: $F/clean.yaml: 2 profiles, 5 plugins
  profile default-scheduler: plugin PrioritySort: plugins/priority_sort.lua (built-in)
  profile default-scheduler: plugin NodeName: plugins/node_name.lua (built-in)
  profile default-scheduler: plugin Picky: $F/plugins/picky.lua (plugin path)
  profile default-scheduler: plugin DefaultBinder: plugins/default_binder.lua (built-in)
  profile plain: plugin PrioritySort: plugins/priority_sort.lua (built-in)
  profile plain: plugin NodeUnschedulable: plugins/node_unschedulable.lua (built-in)
  profile plain: plugin DefaultBinder: plugins/default_binder.lua (built-in)"
expect_eq "clean: nothing on stderr" "$(cat "$TMP/err")" ""

# ---- the example configurations load unchanged and check clean
for f in multiple-profiles disabled-plugins plugin-args gang-scheduling coscheduling; do
  expect_eq "example $f: exit 0" "$(check profiles/examples/$f.yaml)" "0"
  expect_contains "example $f: ok" "$(cat "$TMP/out")" "ok: profiles/examples/$f.yaml: "
done

# ---- many problems at once: the file's fields (in upstream's words), then
# profile by profile: a missing plugin, one at a point it does not implement,
# a double registration, a bad events table, args its init refuses, a Lua
# syntax error, an error raised while the plugin file runs.
expect_eq "problems: exit 2" "$(check $F/problems.yaml)" "2"
expect_eq "problems: every one, in order" "$(cat "$TMP/out")" \
"$F/problems.yaml:7: colour: unknown field
$F/problems.yaml:5: leaderElection.leaseDuration: Invalid value: 5s: must be greater than \`RenewDeadline\`
$F/problems.yaml:3: parallelism: Invalid value: 0: should be an integer value greater than zero
$F/problems.yaml:28: profiles[1].plugins.queueSort: Invalid value: {\"enabled\":[{\"name\":\"PrioritySort\"}],\"disabled\":[{\"name\":\"*\"}]}: must be the same for all profiles
$F/problems.yaml:13: profile main: plugin \"NoSuchPlugin\" not found: no no_such_plugin.lua on the plugin path ($F/plugins:plugins:plugins/policies)
$F/problems.yaml: profile main: plugin \"ImageLocality\" does not extend Filter plugin
$F/problems.yaml: profile main: plugin Picky already registered as Score
$F/problems.yaml: profile main: plugin \"BadEvents\" ($F/plugins/bad_events.lua): events[2].resource: unknown resource \"Pods\" (expected AssignedPod, UnscheduledPod, TargetPod, Pod, Node, PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity, NodeMetrics, PodMetrics, \"*\", or a custom resource written plural.version.group); did you mean Pod?
$F/problems.yaml: profile main: $F/problems.yaml:25: profiles[0].pluginConfig[0].args: initializing plugin \"Picky\": threshold must be at most 100, got 500
$F/problems.yaml:35: profile second: $F/plugins/syntax_error.lua:5: unexpected symbol near 'end'
$F/problems.yaml:36: profile second: $F/plugins/fails_at_load.lua:4: FailsAtLoad needs a GPU
11 problems"

# ---- a file that cannot be read as a configuration: that one problem
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n' >"$TMP/broken.yaml"
expect_eq "unparsable: exit 2" "$(check "$TMP/broken.yaml")" "2"
expect_eq "unparsable: one problem" "$(sed -n '$p' "$TMP/out")" "1 problem"
expect_contains "unparsable: where" "$(head -1 "$TMP/out")" "$TMP/broken.yaml:4:"
printf 'apiVersion: v1\nkind: Pod\n' >"$TMP/pod.yaml"
expect_eq "not a configuration: exit 2" "$(check "$TMP/pod.yaml")" "2"
expect_eq "not a configuration: output" "$(cat "$TMP/out")" \
"$TMP/pod.yaml:1: apiVersion: expected \"kubescheduler.config.k8s.io/v1\", got v1
1 problem"

# ---- --plugin-path replaces the configuration's pluginPath
expect_eq "plugin path flag: exit 2" "$(check $F/clean.yaml --plugin-path "$TMP")" "2"
expect_eq "plugin path flag: output" "$(cat "$TMP/out")" \
"$F/clean.yaml:12: profile default-scheduler: plugin \"Picky\" not found: no picky.lua on the plugin path ($TMP:plugins:plugins/policies)
1 problem"

# ---- usage
expect_eq "check --help: exit 0" "$(check --help)" "0"
expect_eq "check --help: first line" "$(head -1 "$TMP/out")" "usage: luasched check CONFIG [flags]"
expect_eq "check without a file: exit 2" "$(check)" "2"
expect_eq "check without a file: message" "$(head -1 "$TMP/err")" "luasched check: expected 1 argument, got 0"
expect_contains "luasched --help lists check" "$("$BIN" --help)" "  check CONFIG "
expect_contains "simulate --help: --write-config-to" "$("$BIN" simulate --help)" "  --write-config-to FILE"
expect_contains "explain --help: --write-config-to" "$("$BIN" explain --help)" "  --write-config-to FILE"

# ---- --write-config-to: every default filled in, the plugins' args
# completed with their declared defaults (Picky's from its Lua table)
"$BIN" simulate --config $F/small.yaml --write-config-to "$TMP/small-out.yaml" >"$TMP/out" 2>"$TMP/err"
expect_eq "write-config: exit 0" "$?" "0"
expect_eq "write-config: nothing printed" "$(cat "$TMP/out" "$TMP/err")" ""
# As kube-scheduler writes it: keys sorted, every extension point ({} when
# empty), every plugin entry with its weight (0 included), pluginConfig sorted
# by name with only the plugins that take upstream's typed args (with
# apiVersion and kind, empty lists left out) or have args in the file
# (Picky's as given).
# (a point added to the extension-point table is checked written, then left
# out of the exact text: upstream_points_only)
expect_eq "write-config: exact YAML" "$(upstream_points_only < "$TMP/small-out.yaml")" \
'apiVersion: kubescheduler.config.k8s.io/v1
clientConnection:
  acceptContentTypes: ""
  burst: 100
  contentType: application/vnd.kubernetes.protobuf
  kubeconfig: ""
  qps: 50
enableContentionProfiling: true
enableProfiling: true
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
  leaseDuration: 15s
  renewDeadline: 10s
  resourceLock: leases
  resourceName: kube-scheduler
  resourceNamespace: kube-system
  retryPeriod: 2s
luasched:
  instructionBudget: 200000000
  memoryLimitBytes: 1073741824
  pluginPath:
  - plugins
  pluginTimeoutMilliseconds: 10000
parallelism: 4
percentageOfNodesToScore: 0
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 10
profiles:
- pluginConfig:
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        type: LeastAllocated
    name: NodeResourcesFit
  - args:
      threshold: 70
    name: Picky
  plugins:
    bind: {}
    filter: {}
    multiPoint:
      disabled:
      - name: '"'"'*'"'"'
        weight: 0
      enabled:
      - name: PrioritySort
        weight: 0
      - name: NodeResourcesFit
        weight: 2
      - name: Picky
        weight: 0
      - name: DefaultBinder
        weight: 0
    permit: {}
    placementGenerate: {}
    placementScore: {}
    podGroupPostFilter: {}
    postBind: {}
    postFilter: {}
    preBind: {}
    preEnqueue: {}
    preFilter: {}
    preScore: {}
    queueSort: {}
    reserve: {}
    score: {}
  schedulerName: small'

# The workload points are read and written empty; a plugin in one is refused.
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    placementScore:\n      enabled:\n      - name: NodeResourcesFit\n' > "$TMP/placement.yaml"
"$BIN" simulate --config "$TMP/placement.yaml" --write-config-to - >/dev/null 2>"$TMP/err"
expect_eq "workload point with a plugin: refused" "$(cat "$TMP/err")" \
  "luasched simulate: $TMP/placement.yaml:5: profiles[0].plugins.placementScore: workload scheduling extension points (GenericWorkload, TopologyAwareWorkloadScheduling) are not implemented"

# Args for every plugin enabled at some point: a Score disabled keeps
# BalancedAllocation's args (it stays in multiPoint); a plugin disabled in
# multiPoint has none; plugins without typed args (ImageLocality) have none.
cat > "$TMP/score-off.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
    multiPoint:
      disabled:
      - name: InterPodAffinity
YAML
"$BIN" simulate --config "$TMP/score-off.yaml" --write-config-to "$TMP/score-off-out.yaml"
names=$(grep -E '^    name: ' "$TMP/score-off-out.yaml" | tr -d ' ' | tr '\n' ' ')
expect_eq "write-config: pluginConfig names" "$names" \
  "name:DefaultPreemption name:DynamicResources name:NodeAffinity name:NodeResourcesBalancedAllocation name:NodeResourcesFit name:PodTopologySpread name:VolumeBinding "
expect_contains "write-config: the disabled Score stays listed" "$(cat "$TMP/score-off-out.yaml")" \
'    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
        weight: 0'

# what was written loads and writes back the same (next to the plugins, for the relative pluginPath)
cp "$TMP/small-out.yaml" $F/.small-out.yaml
"$BIN" simulate --config $F/.small-out.yaml --write-config-to "$TMP/again.yaml"
expect_eq "write-config: a fixed point" "$(cat "$TMP/again.yaml")" "$(cat "$TMP/small-out.yaml")"
rm -f $F/.small-out.yaml

# JSON for a .json name, standard output for "-", explain takes the flag too
"$BIN" explain --config $F/small.yaml --write-config-to "$TMP/small.json"
expect_eq "write-config JSON: first line" "$(head -1 "$TMP/small.json")" "{"
expect_contains "write-config JSON: args" "$(cat "$TMP/small.json")" '"threshold":	70'
expect_eq "write-config to stdout: same YAML" "$("$BIN" simulate --config $F/small.yaml --write-config-to -)" \
  "$(cat "$TMP/small-out.yaml")"

# a configuration with problems is not written: every problem on stderr, exit 2
"$BIN" simulate --config $F/problems.yaml --write-config-to "$TMP/no.yaml" >"$TMP/out" 2>"$TMP/err"
expect_eq "write-config of a bad file: exit 2" "$?" "2"
expect_eq "write-config of a bad file: first problem" "$(head -1 "$TMP/err")" \
  "luasched simulate: $F/problems.yaml:7: colour: unknown field"
# (DynamicResources at line 18 is no problem since every upstream plugin is shipped)
expect_eq "write-config of a bad file: four field problems" "$(wc -l <"$TMP/err")" "4"
expect_eq "write-config of a bad file: no file" "$(ls "$TMP/no.yaml" 2>/dev/null)" ""

# the luasched section's pluginPath reaches simulate
"$BIN" simulate spec/e2e/fixtures/two-nodes.yaml --config $F/clean.yaml >"$TMP/out" 2>"$TMP/err"
expect_eq "simulate with the config's pluginPath: exit 0" "$?" "0"
expect_contains "simulate with the config's pluginPath: summary" "$(cat "$TMP/out")" "3 bound"

[ "$failures" -eq 0 ]
