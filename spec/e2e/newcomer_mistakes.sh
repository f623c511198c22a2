#!/usr/bin/env bash
# End to end: the command-line mistakes of a plugin author new to luasched,
# from the folder `luasched new plugin` made (docs/plugins/tutorial.md): a
# misspelt command, flag, plugin name, configuration field, extension point,
# kind or apiVersion, a snake_case plugin name, a pod without its namespace.
# Each gets its file, line or field, what was expected and the closest right
# name, with exit status 2, never "ok". Expected messages written by hand.
. "$(dirname "$0")/lib.bash"
src=$PWD
CLUSTER=$src/examples/demo-cluster.yaml
cd "$TMP" || exit 1
"$BIN" new plugin PreferGold >/dev/null
P=prefer_gold_profile.yaml

run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; echo $?; }
# profile FILE SED-EXPRESSION: the tutorial's profile with one edit
profile() { sed "$2" $P >"$1"; }

# ---- commands and flags
expect_eq "misspelt command: exit 2" "$(run simulat "$CLUSTER")" "2"
expect_eq "misspelt command: the one meant" "$(head -1 "$TMP/err")" \
  'luasched: unknown command "simulat"; did you mean "simulate"?'
expect_eq "misspelt flag: exit 2" "$(run simulate "$CLUSTER" --confg $P)" "2"
expect_eq "misspelt flag: getopt's line first" "$(head -1 "$TMP/err")" "simulate: unrecognized option '--confg'"
expect_eq "misspelt flag: the one meant, last" "$(tail -1 "$TMP/err")" \
  "luasched simulate: unknown flag --confg; did you mean --config?"
expect_eq "check's misspelt flag" "$(run check $P --plugin-paths . ; tail -1 "$TMP/err")" \
  "2
luasched check: unknown flag --plugin-paths; did you mean --plugin-path?"
expect_eq "a flag far from any: no guess" "$(run simulate "$CLUSTER" --colour; tail -1 "$TMP/err" | grep -c 'did you mean')" \
  "2
0"

# ---- the plugin's name
expect_eq "snake_case name: exit 2" "$(run new plugin prefer_gold)" "2"
expect_eq "snake_case name: the CamelCase one" "$(cat "$TMP/err")" \
  'luasched new plugin: "prefer_gold" is not a plugin name: expected a capital letter, then letters and digits (at most 63), as PreferGold'
expect_eq "kebab-case name: the CamelCase one" "$(run new plugin my-plugin; cat "$TMP/err")" \
  '2
luasched new plugin: "my-plugin" is not a plugin name: expected a capital letter, then letters and digits (at most 63), as MyPlugin'

# ---- the configuration (line numbers: the file `luasched new plugin` writes)
profile typo-plugin.yaml 's/- name: PreferGold/- name: PreferGld/'
expect_eq "misspelt plugin: exit 2" "$(run check typo-plugin.yaml)" "2"
expect_eq "misspelt plugin: file, line, the search path and the one meant" "$(cat "$TMP/out")" \
  "typo-plugin.yaml:11: profile default-scheduler: plugin \"PreferGld\" not found: no prefer_gld.lua on the plugin path (.:$src/plugins:$src/plugins/policies); did you mean \"PreferGold\"?
1 problem"
profile typo-weight.yaml 's/weight: 3/wieght: 3/'
expect_eq "misspelt field" "$(run check typo-weight.yaml; cat "$TMP/out")" \
  '2
typo-weight.yaml:12: profiles[0].plugins.multiPoint.enabled[0].wieght: unknown field (did you mean "weight"?)
1 problem'
profile typo-path.yaml 's/pluginPath:/pluginpath:/'
expect_eq "misspelt luasched field: the field, then the plugin it hid" "$(run check typo-path.yaml; head -1 "$TMP/out")" \
  '2
typo-path.yaml:17: luasched.pluginpath: unknown field (did you mean "pluginPath"?)'
profile typo-point.yaml 's/multiPoint:/multipoint:/'
expect_eq "misspelt extension point" "$(run check typo-point.yaml; head -1 "$TMP/out")" \
  '2
typo-point.yaml:9: profiles[0].plugins.multipoint: unknown extension point (expected preEnqueue, queueSort, preFilter, filter, postFilter, preScore, score, reserve, permit, preBind, bind, postBind or multiPoint); did you mean "multiPoint"?'
profile typo-kind.yaml 's/kind: KubeSchedulerConfiguration/kind: KubeSchedulerConfig/'
expect_eq "wrong kind: what it got" "$(run check typo-kind.yaml; head -1 "$TMP/out")" \
  '2
typo-kind.yaml:5: kind: expected "KubeSchedulerConfiguration", got KubeSchedulerConfig'
profile beta.yaml 's#config.k8s.io/v1$#config.k8s.io/v1beta3#'
expect_eq "a removed beta apiVersion: when it went" "$(run check beta.yaml; head -1 "$TMP/out")" \
  '2
beta.yaml:4: apiVersion: expected "kubescheduler.config.k8s.io/v1", got kubescheduler.config.k8s.io/v1beta3 (the beta versions were removed: v1beta2 in v1.28, v1beta3 in v1.29)'
profile typo-arg.yaml 's/value: gold}/valeu: gold}/'
expect_eq "misspelt arg" "$(run check typo-arg.yaml; cat "$TMP/out")" \
  '2
typo-arg.yaml: profile default-scheduler: args of plugin "PreferGold": typo-arg.yaml:15: profiles[0].pluginConfig[0].args.valeu: unknown field (did you mean "value"?)
1 problem'
expect_eq "simulate refuses the same configuration before any pod" \
  "$(run simulate "$CLUSTER" --config typo-weight.yaml; cat "$TMP/out"; tail -1 "$TMP/err")" \
  '2
luasched simulate: typo-weight.yaml:12: profiles[0].plugins.multiPoint.enabled[0].wieght: unknown field (did you mean "weight"?)'

# ---- the plugin file
sed -i 's/function P:score(/function P:scor(/' prefer_gold.lua
expect_eq "misspelt hook: check says where and which" "$(run check $P; cat "$TMP/out")" \
  '2
prefer_gold_profile.yaml:11: profile default-scheduler: ./prefer_gold.lua:16: plugin "PreferGold": P:scor is no hook; did you mean P:score?
1 problem'
sed -i 's/function P:scor(/function P:score(/' prefer_gold.lua

mv prefer_gold.lua prefer-gold.lua
expect_eq "the plugin's file named with a dash: the file found and the name to give it" "$(run check $P; cat "$TMP/out")" \
  "2
prefer_gold_profile.yaml:11: profile default-scheduler: plugin \"PreferGold\" not found: no prefer_gold.lua on the plugin path (.:$src/plugins:$src/plugins/policies); ./prefer-gold.lua is there: the loader reads prefer_gold.lua (rename it)
1 problem"
mv prefer-gold.lua prefer_gold.lua
expect_eq "renamed back: ok" "$(run check $P; head -1 "$TMP/out")" "0
ok: prefer_gold_profile.yaml: 1 profile, 21 plugins"

# ---- explain: a pod named without its namespace
expect_eq "pod without its namespace: exit 2" "$(run explain "$CLUSTER" web-0)" "2"
expect_eq "pod without its namespace: the one meant" "$(tail -1 "$TMP/err")" \
  "luasched explain: pod default/web-0 was not scheduled by this run (not in the cluster, already running, or for another scheduler); did you mean shop/web-0?"

[ "$failures" -eq 0 ]
