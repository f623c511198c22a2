#!/usr/bin/env bash
# End to end: what `luasched run --write-config-to` writes loads back with
# `luasched check`, and writing it again gives the same text (the same
# completed configuration), for every configuration the project ships:
# profiles/, examples/, and the KubeSchedulerConfiguration blocks of README.md
# and docs/. Then the v1.37 points of the writer: no placementFeasible (v1.38's),
# InterPodAffinity's ignorePreferredTermsOfExistingPods accepted and written,
# and the typed args of a plugin enabled where no extension point runs it.
. "$(dirname "$0")/lib.bash"
export LUASCHED_PLUGIN_PATH=plugins:plugins/policies
PLUGINS=examples/plugins   # the plugins the examples and the README's profiles use

write() { timeout 60 "$BIN" run --config "$1" --plugin-path "$PLUGINS" --write-config-to "$2" >/dev/null 2>"$TMP/err"; }

# round_trip NAME FILE: written once, checked, written again from the written file.
round_trip() {
  local name=$1 file=$2
  if ! write "$file" "$TMP/once.yaml"; then
    expect_eq "$name: written" "$(cat "$TMP/err")" ""
    return
  fi
  timeout 60 "$BIN" check "$TMP/once.yaml" --plugin-path "$PLUGINS" >"$TMP/check" 2>&1
  expect_eq "$name: the written file checks clean" "$?" "0"
  if ! write "$TMP/once.yaml" "$TMP/twice.yaml"; then
    expect_eq "$name: the written file is written again" "$(cat "$TMP/err")" ""
    return
  fi
  expect_eq "$name: same completed configuration" "$(diff "$TMP/once.yaml" "$TMP/twice.yaml")" ""
}

# ---- every shipped configuration
n=0
for f in profiles/examples/*.yaml examples/*.yaml; do
  grep -q '^kind: KubeSchedulerConfiguration' "$f" || continue
  round_trip "$f" "$f"
  n=$((n + 1))
done
expect_eq "shipped configurations found" "$([ "$n" -ge 8 ] && echo yes)" "yes"

# The first document of each ```yaml block of the docs that is a configuration.
docs=$(find README.md docs -name '*.md' 2>/dev/null | sort)
k=0
for md in $docs; do
  awk -v dir="$TMP" -v base="$(echo "$md" | tr '/' '_')" '
    /^```yaml/ { inb = 1; doc = 1; text = ""; next }
    inb && /^```/ { inb = 0; if (text ~ /\nkind: KubeSchedulerConfiguration/ || text ~ /^kind: KubeSchedulerConfiguration/) {
                      n++; f = dir "/doc_" base "_" n ".yaml"; printf "%s", text > f; close(f) } next }
    inb && /^---/ { doc = 0 }
    inb && doc { text = text $0 "\n" }
  ' "$md"
done
# The tutorial's profile names the plugin its reader makes with `luasched new plugin`.
mkdir -p "$TMP/tutorial" && (cd "$TMP/tutorial" && timeout 60 "$BIN" new plugin PreferGold >/dev/null)
for f in "$TMP"/doc_*.yaml; do
  [ -e "$f" ] || continue
  case $f in
    *tutorial*) PLUGINS="$TMP/tutorial" round_trip "$(basename "$f")" "$f" ;;
    *) round_trip "$(basename "$f")" "$f" ;;
  esac
  k=$((k + 1))
done
expect_eq "README configurations found" "$([ "$k" -ge 2 ] && echo yes)" "yes"

# ---- the built-in default: v1.37's extension points only
timeout 60 "$BIN" run --write-config-to "$TMP/default.yaml" >/dev/null 2>&1
expect_eq "default: no placementFeasible (v1.38's)" "$(grep -c placementFeasible "$TMP/default.yaml")" "0"
expect_eq "default: v1.37's workload points, empty" \
  "$(grep -E '^    (placementGenerate|placementScore|podGroupPostFilter):' "$TMP/default.yaml")" \
  "    placementGenerate: {}
    placementScore: {}
    podGroupPostFilter: {}"
expect_eq "default: InterPodAffinity's args as upstream's defaults" \
  "$(grep -B4 '^    name: InterPodAffinity$' "$TMP/default.yaml")" \
  "      apiVersion: kubescheduler.config.k8s.io/v1
      hardPodAffinityWeight: 1
      ignorePreferredTermsOfExistingPods: false
      kind: InterPodAffinityArgs
    name: InterPodAffinity"
timeout 60 "$BIN" check "$TMP/default.yaml" >"$TMP/out" 2>&1
expect_eq "default: the written file checks clean" "$?" "0"

# ---- placementFeasible is refused, as v1.37's strict decoder does
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    placementFeasible: {}\n' >"$TMP/pf.yaml"
timeout 60 "$BIN" check "$TMP/pf.yaml" >"$TMP/out" 2>&1
expect_eq "placementFeasible: refused" "$(head -1 "$TMP/out")" \
  "$TMP/pf.yaml:5: profiles[0].plugins.placementFeasible: unknown extension point (expected $(ls_point_keys_offered)); placementFeasible is an extension point from v1.38, v1.37 refuses it"

# ---- ignorePreferredTermsOfExistingPods: true is accepted, kept and written
cat >"$TMP/ipa.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: InterPodAffinity
    args:
      ignorePreferredTermsOfExistingPods: true
EOF
round_trip "ignorePreferredTermsOfExistingPods: true" "$TMP/ipa.yaml"
expect_eq "ignorePreferredTermsOfExistingPods: written true" \
  "$(grep -c '^      ignorePreferredTermsOfExistingPods: true$' "$TMP/once.yaml")" "1"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {ignorePreferredTermsOfExistingPods: "yes"}\n' >"$TMP/bad.yaml"
timeout 60 "$BIN" check "$TMP/bad.yaml" >"$TMP/out" 2>&1
expect_contains "ignorePreferredTermsOfExistingPods: a string is refused" "$(cat "$TMP/out")" \
  "profiles[0].pluginConfig[0].args.ignorePreferredTermsOfExistingPods: Invalid type: expected boolean, got string \"yes\""

# ---- typed args name their own type, as upstream's decodeNestedObjects wants
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {kind: NodeAffinityArgs, apiVersion: kubescheduler.config.k8s.io/v1}\n' >"$TMP/kind.yaml"
timeout 60 "$BIN" check "$TMP/kind.yaml" >"$TMP/out" 2>&1
expect_eq "args of another type: refused" "$(head -1 "$TMP/out")" \
  "$TMP/kind.yaml:6: profiles[0].pluginConfig[0].args: args for plugin InterPodAffinity were not of type InterPodAffinityArgs.kubescheduler.config.k8s.io, got NodeAffinityArgs.kubescheduler.config.k8s.io"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {kind: InterPodAffinityArgs, apiVersion: kubescheduler.config.k8s.io/v1, hardPodAffinityWeight: 3}\n' >"$TMP/kind.yaml"
round_trip "args with their own kind and apiVersion" "$TMP/kind.yaml"

# ---- a plugin enabled (multiPoint) but run at no point: its typed args are
# still written, completed (upstream's pluginsNeeded counts multiPoint)
cat >"$TMP/noscore.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preScore:
      disabled: [{name: '*'}]
    score:
      disabled: [{name: '*'}]
EOF
round_trip "scoring disabled" "$TMP/noscore.yaml"
expect_eq "scoring disabled: NodeResourcesBalancedAllocation's args completed" \
  "$(grep -B7 '^    name: NodeResourcesBalancedAllocation$' "$TMP/once.yaml")" \
  "      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesBalancedAllocationArgs
      resources:
      - name: cpu
        weight: 1
      - name: memory
        weight: 1
    name: NodeResourcesBalancedAllocation"

# ---- weights absent or 0 are completed to 1, as SetDefaults_NodeResources*Args do
cat >"$TMP/weights.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 0}, {name: memory}]}
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 0}, {name: memory, weight: 3}]}}
EOF
round_trip "weights" "$TMP/weights.yaml"
expect_eq "weights: BalancedAllocation's 0 and absent weights written 1" \
  "$(grep -B5 '^    name: NodeResourcesBalancedAllocation$' "$TMP/once.yaml")" \
  "      resources:
      - name: cpu
        weight: 1
      - name: memory
        weight: 1
    name: NodeResourcesBalancedAllocation"
expect_eq "weights: Fit's 0 weight written 1, 3 kept" \
  "$(grep -B7 '^    name: NodeResourcesFit$' "$TMP/once.yaml")" \
  "      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 3
        type: MostAllocated
    name: NodeResourcesFit"

[ "$failures" -eq 0 ]
