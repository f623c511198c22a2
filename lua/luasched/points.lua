-- luasched.points: the extension-point table, read once from C through the
-- FFI (the rows of core/include/luasched/extension_points.h), so the names
-- of the points and hooks, the status codes their plugins may return and how
-- their chains run are written in one place for C and for Lua.
-- Runtime-internal, as luasched.clib.
local bit = require("bit")
local ffi = require("ffi")
local C = require("luasched.clib")

local M = {
  hooks = {},         -- every hook a plugin may define, in the table's order
  point_hooks = {},   -- the hooks of the points a profile configures, in run order
  point_names = {},   -- their names as upstream spells them ("PreFilter", ...), in run order
  ep_of_hook = {},    -- hook -> its row's LS_EP_* (sampled plugin durations)
  rejecting = {},     -- hooks of the points whose plugins can reject a pod
  rows = {},          -- hook -> its row for dispatch.lua's runner (see below)
  -- the status codes (framework.h's LS_*), named as dispatch.lua uses them
  codes = {
    SUCCESS = C.LS_SUCCESS, ERROR = C.LS_ERROR, UNSCHEDULABLE = C.LS_UNSCHEDULABLE,
    UNRESOLVABLE = C.LS_UNRESOLVABLE, WAIT = C.LS_WAIT, SKIP = C.LS_SKIP, PENDING = C.LS_PENDING,
  },
}

local function has(flags, flag) return bit.band(flags, flag) ~= 0 end

-- A row as the runner reads it: its name and hook, the plugin list it runs
-- (its point's hook), the codes a plugin may return besides Success and Error
-- (allowed[code] = true) and its chain flags.
local function runner_row(ep, row, hook)
  local allowed = {}
  for _, code in pairs(M.codes) do
    if has(row.allowed, bit.lshift(1, code)) then allowed[code] = true end
  end
  return {
    ep = ep, name = ffi.string(row.name), hook = hook,
    list = ffi.string(C.ls_ext_point_info_of(row.point).hook),
    hook_optional = row.point ~= ep,   -- a hook run over another point's list
    allowed = allowed,
    stops = has(row.chain, C.LS_CHAIN_STOPS),
    first_success = has(row.chain, C.LS_CHAIN_FIRST_SUCCESS),
    reverse = has(row.chain, C.LS_CHAIN_REVERSE),
    result = has(row.chain, C.LS_CHAIN_RESULT),
    per_node = has(row.chain, C.LS_CHAIN_PER_NODE),
    logs_errors = has(row.chain, C.LS_CHAIN_LOGS_ERRORS),
    untimed = has(row.chain, C.LS_CHAIN_UNTIMED),
    queue_side = has(row.chain, C.LS_CHAIN_QUEUE_SIDE),
    error_located = has(row.chain, C.LS_CHAIN_ERROR_LOCATED),
  }
end

for ep = 0, C.LS_EP_HOOK_COUNT - 1 do
  local row = C.ls_ext_point_info_of(ep)
  local hook = ffi.string(row.hook)
  M.hooks[#M.hooks + 1] = hook
  M.ep_of_hook[hook] = ep
  M.rows[hook] = runner_row(ep, row, hook)
  if ep < C.LS_EP_COUNT then
    M.point_hooks[#M.point_hooks + 1] = hook
    M.point_names[#M.point_names + 1] = ffi.string(row.name)
    if row.rejects ~= 0 then M.rejecting[#M.rejecting + 1] = hook end
  end
end

return M
