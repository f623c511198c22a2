-- luasched.state_guard: the CycleState a plugin that is not built-in sees.
--
-- Built-in plugins keep what they computed for a pod in the cycle's state
-- (NodeResourcesFit its pod's requests, VolumeBinding its claims) and trust
-- it in their later hooks. A plugin given the same table rewrote
-- state.NodeResourcesFit.cpu to 0 in PreFilter and a 64-CPU pod was bound to
-- a 4-CPU node (attacker round 4). Upstream's plugins cannot do that: each
-- keeps its state in a type of its own package.
--
-- So the plugins that are not built-in get a side of the state: a plain
-- table kept in the state under a key only this module holds (SIDE). They
-- read, write and iterate their own and each other's entries there, as
-- upstream's CycleState.Read/Write, and never see or change a built-in's;
-- the built-ins never see theirs. The side is made once per state (no
-- allocation per node). The handle's functions take a side back to its
-- state (unwrap); a clone of the state carries a clone of its side, and a
-- clone a plugin asks for is handed to it as the clone's side.
--
-- Only the states the runtime makes for a cycle (new_state) and their
-- clones are split: a table a test hands a hook (luasched.testing, a hook
-- called directly) is the plugin's as it is.
local M = {}

local runtime_states = setmetatable({}, { __mode = "k" })   -- state -> true: made by the runtime

--- A cycle's new CycleState (dispatch.lua's PreFilter).
function M.new_state()
  local st = {}
  runtime_states[st] = true
  return st
end

--- Marks `c`, a clone of state `st`, as the runtime's when `st` is.
function M.clone_of(st, c)
  if runtime_states[st] then runtime_states[c] = true end
  return c
end

--- The key of the side in the state: a table no plugin can reach.
local SIDE = setmetatable({}, { __tostring = function() return "the plugins' side of the CycleState" end })
M.SIDE = SIDE

local state_of = setmetatable({}, { __mode = "k" })   -- side -> its state

-- The side's metatable: none a plugin can see or set. The side is shared by
-- the plugins that are not built-in: a metatable one of them set on it ran
-- that plugin's code (a __newindex looping) in another plugin's call, cut
-- off and blamed on that other plugin (attacker round 5). Reads, writes and
-- pairs are a plain table's.
local SIDE_MT = { __metatable = false }

--- The side of state `st` (made when absent): what a plugin that is not
--- built-in gets as its `state`. A side passed again is itself.
function M.for_plugin(st)
  if not runtime_states[st] then return st end
  local side = rawget(st, SIDE)
  if side == nil then
    side = setmetatable({}, SIDE_MT)
    rawset(st, SIDE, side)
    state_of[side] = st
  end
  return side
end

--- Takes `side` as the side of state `st` (a clone's).
function M.adopt(st, side)
  setmetatable(side, SIDE_MT)
  rawset(st, SIDE, side)
  state_of[side] = st
  return st
end

--- The state behind a side (anything else as it is).
function M.unwrap(st) return state_of[st] or st end

--- `st2` as the plugin that passed `st` sees it: its side when `st` was a
--- side, else `st2` itself.
function M.as_seen_by(st, st2)
  if state_of[st] then return M.for_plugin(st2) end
  return st2
end

return M
