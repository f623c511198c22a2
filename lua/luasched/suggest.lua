-- luasched.suggest: "did you mean ...?" for the Lua half of the runtime, by
-- C's rule (core/src/base/suggest.c: ls_did_you_mean), so a misspelt hook,
-- ls.* function, view field or test-kit field is matched as the
-- configuration's names are. Runtime-internal, as luasched.clib.
local ffi = require("ffi")

local M = {}

--- The closest of `names` (a list of strings) to `word`, or nil.
function M.did_you_mean(word, names)
  if type(word) ~= "string" or #names == 0 then return nil end
  local C = require("luasched.clib")   -- here, not above: the sandbox loads this before clib exists
  local arr = ffi.new("const char *[?]", #names + 1, names)
  local hit = C.ls_did_you_mean(word, arr, #names)
  return hit ~= nil and ffi.string(hit) or nil
end

--- The one of `names` that `word` misspells as an identifier (case and
--- underscores ignored, one edit at most: P:filtr, P:preFilter), or nil.
function M.misspelling_of(word, names)
  if type(word) ~= "string" or #names == 0 then return nil end
  local C = require("luasched.clib")
  local arr = ffi.new("const char *[?]", #names + 1, names)
  local hit = C.ls_misspelling_of(word, arr, #names)
  return hit ~= nil and ffi.string(hit) or nil
end

--- The string keys of table `t` (not starting with "_"), sorted.
function M.keys(t)
  local out = {}
  for k in next, t do
    if type(k) == "string" and k:sub(1, 1) ~= "_" then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

return M
