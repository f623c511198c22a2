-- luasched.points: the extension-point table, read once from C through the
-- FFI (the rows of core/include/luasched/extension_points.h), so the names
-- of the points and hooks are written in one place for C and for Lua.
-- Runtime-internal, as luasched.clib.
local ffi = require("ffi")
local C = require("luasched.clib")

local M = {
  hooks = {},         -- every hook a plugin may define, in the table's order
  point_hooks = {},   -- the hooks of the points a profile configures, in run order
  ep_of_hook = {},    -- hook -> its row's LS_EP_* (sampled plugin durations)
  rejecting = {},     -- hooks of the points whose plugins can reject a pod
}

for ep = 0, C.LS_EP_HOOK_COUNT - 1 do
  local row = C.ls_ext_point_info_of(ep)
  local hook = ffi.string(row.hook)
  M.hooks[#M.hooks + 1] = hook
  M.ep_of_hook[hook] = ep
  if ep < C.LS_EP_COUNT then
    M.point_hooks[#M.point_hooks + 1] = hook
    if row.rejects ~= 0 then M.rejecting[#M.rejecting + 1] = hook end
  end
end

return M
