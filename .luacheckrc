-- luacheck configuration: `luacheck --std luajit plugins lua spec/lua`
std = "luajit"
globals = {}
-- hooks are methods: a plugin need not use `self`
self = false
max_line_length = 120
exclude_files = { "build/**" }

files["spec/lua"] = { std = "+busted" }
