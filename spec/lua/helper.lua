-- busted --helper for the Lua specs: makes the repository's runtime modules
-- (lua/) and spec helpers (spec/lua/) findable when LUASCHED_SOURCE_DIR is set.
-- The library (LUASCHED_LIB) and the generated cdefs (on LUA_PATH) come from
-- the build, as ctest sets them.
local src = os.getenv("LUASCHED_SOURCE_DIR")
if src and src ~= "" then
  package.path = src .. "/lua/?.lua;" .. src .. "/spec/lua/?.lua;" .. package.path
end
