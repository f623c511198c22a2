#!/usr/bin/env bash
# luasched new plugin NAME: the three files, named as the loader looks for them
# (snake_case worked by hand from loader.lua's rule), never an overwrite, and
# names that are not plugin names refused with exit status 2.
source "$(dirname "$0")/lib.bash"
cd "$TMP"

out=$(timeout 20 "$BIN" new plugin PreferGold 2>&1); rc=$?
expect_eq "new plugin: exit 0" "$rc" "0"
expect_eq "new plugin: the files it wrote" "$out" "wrote prefer_gold.lua
wrote spec/prefer_gold_spec.lua
wrote prefer_gold_profile.yaml
next: luasched test, then luasched simulate CLUSTER.yaml --config prefer_gold_profile.yaml"
expect_contains "the plugin registers its name" "$(cat prefer_gold.lua)" 'ls.plugin("PreferGold"'
expect_contains "the profile enables it" "$(cat prefer_gold_profile.yaml)" "- name: PreferGold"
out=$(timeout 20 "$BIN" check prefer_gold_profile.yaml 2>&1); rc=$?
expect_eq "check finds the plugin beside the profile" "$rc $(echo "$out" | head -1)" "0 ok: prefer_gold_profile.yaml: 1 profile, 21 plugins"
expect_contains "check says which file PreferGold resolves to" "$out" \
  "profile default-scheduler: plugin PreferGold: ./prefer_gold.lua (plugin path)"

echo "-- edited" >> prefer_gold.lua
out=$(timeout 20 "$BIN" new plugin PreferGold 2>&1); rc=$?
expect_eq "an existing file: exit 2" "$rc" "2"
expect_eq "an existing file is named, nothing written" "$out" \
  "luasched new plugin: prefer_gold.lua exists already: nothing written (move it away or pick another name)"
expect_eq "the edited plugin is kept" "$(tail -1 prefer_gold.lua)" "-- edited"

# loader.lua: "(%l)(%u)" -> "%1_%2", then "(%u)(%u%l)" -> "%1_%2", lower-cased
timeout 20 "$BIN" new plugin HTTPServerAffinity > /dev/null 2>&1
expect_eq "HTTPServerAffinity -> http_server_affinity.lua" "$(ls http_server_affinity.lua 2>&1)" "http_server_affinity.lua"
timeout 20 "$BIN" new plugin Gpu2Node > /dev/null 2>&1
expect_eq "Gpu2Node -> gpu2node.lua (a digit is no lower-case letter)" "$(ls gpu2node.lua 2>&1)" "gpu2node.lua"

for bad in preferGold Prefer-Gold "Prefer Gold" ""; do
  out=$(timeout 20 "$BIN" new plugin "$bad" 2>&1); rc=$?
  expect_eq "\"$bad\" refused with exit 2" "$rc" "2"
done
expect_contains "why a name is refused" "$(timeout 20 "$BIN" new plugin preferGold 2>&1)" \
  '"preferGold" is not a plugin name: expected a capital letter, then letters and digits (at most 63), as PreferGold'
out=$(timeout 20 "$BIN" new profile X 2>&1); rc=$?
expect_eq "an unknown kind: exit 2" "$rc" "2"
expect_contains "an unknown kind is named" "$out" 'luasched new: unknown kind "profile": only "plugin" can be made'
exit $((failures > 0))
