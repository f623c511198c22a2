-- luasched.state_guard: the CycleState a plugin that is not built-in sees.
--
-- Built-in plugins keep what they computed for a pod in the cycle's state
-- (NodeResourcesFit its pod's requests, VolumeBinding its claims) and trust
-- it in their later hooks. A plugin given the same table rewrote
-- state.NodeResourcesFit.cpu to 0 in PreFilter and a 64-CPU pod was bound to
-- a 4-CPU node (attacker round 4). Upstream's plugins cannot do that: each
-- keeps its state in a type of its own package.
--
-- So a plugin that is not built-in gets a proxy of the state whose entries
-- live apart from the built-ins' (in the same table, under keys no built-in
-- uses: KEY_PREFIX .. key): it reads and writes its own and the other such
-- plugins' entries, as upstream's CycleState.Read/Write by a string key, and
-- never sees or changes a built-in's. A key is a string (upstream's
-- StateKey). The proxy is made once per state and plugin (no allocation per
-- node); the handle's functions take it back to the state itself (unwrap),
-- and a clone the plugin asks for is wrapped again for it.
--
-- What the plugin cannot do on the proxy: iterate it (pairs gives nothing:
-- Lua 5.1 has no __pairs), or read its metatable.
local M = {}

--- The prefix of the keys under which plugins that are not built-in keep
--- their entries in the state itself (no built-in key starts with a NUL).
M.KEY_PREFIX = "\0plugin:"
local PREFIX = M.KEY_PREFIX

local raw_of = setmetatable({}, { __mode = "k" })    -- proxy -> the state
local holder = setmetatable({}, { __mode = "k" })    -- proxy -> the plugin's name
local proxies = setmetatable({}, { __mode = "k" })   -- state -> { plugin name -> proxy }

local function key_of(k, name)
  if type(k) ~= "string" then
    error(string.format("CycleState: a key is a string (plugin %q used a %s)", name, type(k)), 3)
  end
  return PREFIX .. k
end

local function new_proxy(st, name)
  local p = setmetatable({}, {
    __index = function(_, k) return st[key_of(k, name)] end,
    __newindex = function(_, k, v) st[key_of(k, name)] = v end,
    __metatable = false,
  })
  raw_of[p], holder[p] = st, name
  return p
end

--- The state `st` as plugin `name` (not built-in) sees it.
function M.for_plugin(st, name)
  if type(st) ~= "table" then return st end
  st = raw_of[st] or st
  local per = proxies[st]
  if per == nil then
    per = {}
    proxies[st] = per
  end
  local p = per[name]
  if p == nil then
    p = new_proxy(st, name)
    per[name] = p
  end
  return p
end

--- The state itself behind a proxy (anything else as it is).
function M.unwrap(st) return raw_of[st] or st end

--- `st2` as the holder of proxy `st` sees it when `st` is a proxy (a
--- clone the plugin asked for), else `st2` as it is.
function M.as_seen_by(st, st2)
  local name = holder[st]
  if name == nil then return st2 end
  return M.for_plugin(st2, name)
end

--- The plugin-side key of a state's key (nil for a built-in's key).
function M.plugin_key(k)
  if type(k) == "string" and k:sub(1, #PREFIX) == PREFIX then return k:sub(#PREFIX + 1) end
  return nil
end

return M
