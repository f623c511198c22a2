-- luacheck configuration: `luacheck --std luajit plugins lua spec/lua spec/security spec/fuzz/plugin_gen.lua`
std = "luajit"
-- no globals may be set anywhere
globals = {}
-- hooks are methods: a plugin need not use `self`
self = false
max_line_length = 120
exclude_files = { "build/**" }

-- busted's globals for the specs (listed here, not as std = "+busted": a
-- command-line --std replaces the std of every file, globals are added to it)
local busted = {
  read_globals = {
    "describe", "it", "pending", "setup", "teardown", "before_each", "after_each",
    "lazy_setup", "lazy_teardown", "strict_setup", "strict_teardown", "insulate", "expose",
    "finally", "spy", "stub", "mock",
    assert = { other_fields = true },
  },
}
files["spec/lua"] = busted
files["spec/security"] = busted
