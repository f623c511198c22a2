#!/usr/bin/env bash
# End to end: `luasched test` runs a plugin author's busted specs with the kit
# on the path and no LUA_PATH/LUASCHED_LIB, from the build tree and from a copy
# installed with `cmake --install` (whose `luasched version` reports the
# installed plugin directory); a failing spec fails the command; a missing
# busted library names the package that provides it.
. "$(dirname "$0")/lib.bash"
BUILD=$(dirname "$BIN")

# An author's project: the example plugin and the README's spec for it.
mkdir -p "$TMP/author/spec"
cp -r examples/plugins "$TMP/author/plugins"
sed 's#^T.set_plugin_path .*#T.set_plugin_path { "plugins" }#' spec/lua/tutorial_spec.lua > "$TMP/author/spec/prefer_labeled_spec.lua"
cat > "$TMP/author/failing_spec.lua" <<'LUA'
local T = require("luasched.testing")
T.set_plugin_path { "plugins" }
describe("PreferLabeled", function()
  it("is wrong on purpose", function()
    local cluster = T.cluster { nodes = { { name = "plain" } } }
    assert.are.same({ plain = 100 }, T.cycle(T.plugin("PreferLabeled"), cluster, T.pod { name = "p" }).scores)
  end)
end)
LUA

clean_env() { env -i PATH=/usr/bin:/bin HOME="$TMP" "$@"; }

check_kit() { # LABEL BINARY
  local out rc
  out=$(cd "$TMP/author" && clean_env "$2" test 2>&1); rc=$?
  expect_eq "$1: passing specs exit 0" "$rc" "0"
  expect_contains "$1: both tests ran" "$out" "2 successes / 0 failures / 0 errors"
  out=$(cd "$TMP/author" && clean_env "$2" test failing_spec.lua 2>&1); rc=$?
  expect_eq "$1: a failing spec exits 1" "$rc" "1"
  expect_contains "$1: the failure is reported" "$out" "0 successes / 1 failure"
  out=$(cd "$TMP/author" && clean_env LUA_PATH="$TMP/nowhere/?.lua" "$2" test 2>&1); rc=$?
  expect_eq "$1: without busted exits 1" "$rc" "1"
  expect_contains "$1: without busted names the fix" "$out" \
    "the busted library is not installed (module 'busted.runner' not found); install busted for Lua 5.1/LuaJIT: \`apt-get install lua-busted\`"
}

check_kit "build tree" "$BIN"

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
ver=$(clean_env "$TMP/prefix/bin/luasched" version)
expect_contains "installed: version line" "$ver" "luasched 0.1.0"
expect_contains "installed: LuaJIT version" "$ver" "luajit: LuaJIT 2.1"
expect_contains "installed: finds its own plugins" "$ver" "plugins: $TMP/prefix/share/luasched/plugins"
expect_contains "installed: and its policy plugins" "$ver" \
  ":$TMP/prefix/share/luasched/plugins/policies"
expect_eq "installed: the policy plugins' files" \
  "$(cd "$TMP/prefix/share/luasched/plugins/policies" && ls coscheduling.lua gang_common.lua gang_scheduling.lua | tr '\n' ' ')" \
  "coscheduling.lua gang_common.lua gang_scheduling.lua "
# The source tree is hidden from the installed copy's view by moving away from it.
out=$(cd "$TMP" && clean_env "$TMP/prefix/bin/luasched" simulate "$TMP/prefix/share/luasched/examples/demo-cluster.yaml" 2>/dev/null)
expect_contains "installed: the demo schedules" "$out" "summary: 6 nodes, 9 pods: 5 bound, 1 unschedulable"
check_kit "installed" "$TMP/prefix/bin/luasched"
[ "$failures" -eq 0 ]
