-- luasched.sandbox: what a plugin can reach, and nothing it can change that
-- another plugin or the runtime uses.
--
-- * freeze(t, what) gives a read-only proxy: writes raise, rawset refuses it,
--   its metatable is hidden (getmetatable returns false, setmetatable raises),
--   and with `strict` reading a missing key raises instead of giving nil.
-- * lock_strings() hides the string metatable (getmetatable("") is false), so
--   a plugin cannot replace string.format & co. for everybody.
-- * No address reaches a plugin: its tostring (and print, and string.format's
--   %s) shows a table, function or coroutine as "table: #12" (a number per
--   object, not its address), and string.format refuses %p.
-- * new_env() is one plugin's global table (print goes to stderr, prefixed
--   with the plugin's file): per-plugin copies of string,
--   table, math and bit; no io, os.execute, debug, ffi, jit, load, dofile,
--   coroutine, collectgarbage, newproxy, getfenv/setfenv, string.dump.
--
-- Loaded by the runtime before any plugin, so the functions captured here are
-- the genuine ones.
local error, rawset, setmetatable, pairs, type, tostring, next =
  error, rawset, setmetatable, pairs, type, tostring, next

local M = {}

local frozen = setmetatable({}, { __mode = "k" })   -- proxy -> its description

--- Whether `t` is a read-only proxy made by freeze (or a status).
function M.is_frozen(t)
  return frozen[t] ~= nil
end

--- Registers a table the runtime made read-only by its own metatable.
function M.mark_frozen(t, what)
  frozen[t] = what
end

-- "ls.lable does not exist; did you mean ls.label?": the closest of the
-- table's own keys (luasched.suggest, required when an error is raised).
local function missing(what, inner)
  return { __index = function(_, k)
    local suggest = require("luasched.suggest")
    local hint = suggest.did_you_mean(k, suggest.keys(inner))
    error(string.format("%s.%s does not exist%s", what, tostring(k),
      hint and string.format("; did you mean %s.%s?", what, hint) or ""), 2)
  end }
end

--- A read-only view of `t` (nested plain tables are frozen too; the values
--- are copied once, so changing `t` later does not show through). Keys that
--- start with "_" are the runtime's own and are left out.
function M.freeze(t, what, strict)
  local inner = {}
  for k, v in pairs(t) do
    if type(k) == "string" and k:sub(1, 1) == "_" then v = nil end
    if type(v) == "table" and not frozen[v] then v = M.freeze(v, what .. "." .. tostring(k)) end
    if v ~= nil then inner[k] = v end
  end
  if strict then setmetatable(inner, missing(what, inner)) end
  local proxy = setmetatable({}, {
    __index = inner,
    __newindex = function(_, k)
      error(string.format("%s is read-only (assigning %s)", what, tostring(k)), 2)
    end,
    __metatable = false,
  })
  frozen[proxy] = what
  return proxy
end

--- Marks a table the runtime hands out by identity (a sentinel, a metatable)
--- as read-only: freeze keeps it as it is, rawset refuses it. The table itself
--- must refuse assignment (a __newindex that raises).
function M.protect(t, what)
  frozen[t] = what
  return t
end

--- rawset for plugins: refuses read-only proxies.
function M.rawset(t, k, v)
  if frozen[t] then error(string.format("%s is read-only (rawset of %s)", frozen[t], tostring(k)), 2) end
  return rawset(t, k, v)
end

-- ---- no addresses ------------------------------------------------------------

local genuine_format, gsub, find = string.format, string.gsub, string.find
local object_numbers = setmetatable({}, { __mode = "k" })
local object_count = 0

local function number_of(v)
  local n = object_numbers[v]
  if n == nil then
    object_count = object_count + 1
    n = object_count
    object_numbers[v] = n
  end
  return n
end

local BY_REFERENCE = { table = true, ["function"] = true, thread = true, userdata = true }

--- tostring for plugins: what the genuine one gives, with no address in it.
local function safe_tostring(v)
  local s = tostring(v)
  local t = type(v)
  if BY_REFERENCE[t] then
    if find(s, "0x%x+") then return t .. ": #" .. number_of(v) end
    return s
  end
  if t == "cdata" then return (gsub(s, ":? ?0x%x+", "")) end
  return s
end
M.tostring = safe_tostring

--- string.format for plugins: no %p, and %s shows tables and functions as
--- safe_tostring does.
local function safe_format(fmt, ...)
  if type(fmt) == "string" and find(fmt, "p", 1, true) and find((gsub(fmt, "%%%%", "")), "%%[-+ #0-9.]*p") then
    error("string.format: %p is not available to plugins (it prints an address)", 2)
  end
  local n = select("#", ...)
  for i = 1, n do
    if BY_REFERENCE[type((select(i, ...)))] then
      local args = { ... }
      for k = 1, n do
        if BY_REFERENCE[type(args[k])] then args[k] = safe_tostring(args[k]) end
      end
      return genuine_format(fmt, unpack(args, 1, n))
    end
  end
  return genuine_format(fmt, ...)
end
M.format = safe_format

local locked = false
--- Hides the string metatable from every plugin (once per state).
function M.lock_strings()
  if locked then return end
  local mt = debug.getmetatable("")
  mt.__metatable = false
  -- Methods of strings are looked up in the runtime's own string table:
  -- ("").dump(f) gave the bytecode of any function (the runtime's too)
  -- although plugins have no string.dump. Nothing in luasched uses it.
  mt.__index.dump = nil
  -- ("%p"):format(t) reached the genuine format: methods of strings are
  -- plugins' too (the runtime's modules captured string.format before this)
  mt.__index.format = safe_format
  locked = true
end

--- A shallow copy of a table (plugins have it as ls.copy_table).
local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end
M.copy = copy

-- Captured now, before any plugin ran.
local base = {
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
  pcall = pcall, xpcall = xpcall, select = select, tonumber = tonumber,
  tostring = safe_tostring, type = type, unpack = unpack, rawequal = rawequal,
  rawget = rawget, rawset = M.rawset, setmetatable = setmetatable,
  getmetatable = getmetatable,
}
local stderr, select_, tostring_, concat = io.stderr, select, safe_tostring, table.concat

-- A plugin's print: to stderr, prefixed with its file. On stdout it could
-- write lines that look like the scheduler's own report ("default/p: bound
-- to node-9") into `simulate`'s output. Every line it prints carries the
-- prefix: a text of several lines forged the scheduler's own log lines
-- ("Plugin call cut off" plugin="NodeResourcesFit": attacker round 3).
local function print_for(source)
  local prefix = (source or "plugin"):gsub("^@", "") .. ": "
  local next_line = "\n" .. prefix
  return function(...)
    local parts = {}
    for i = 1, select_("#", ...) do parts[i] = tostring_((select_(i, ...))) end
    local text = concat(parts, "\t")
    if find(text, "[\r\n]") then text = gsub(gsub(text, "\r\n?", "\n"), "\n", next_line) end
    stderr:write(prefix, text, "\n")
  end
end
local libs = { string = string, table = table, math = math, bit = require("bit") }
local os_time, os_clock, os_date = os.time, os.clock, os.date

--- A fresh global table for one plugin (or one module it requires).
--- `source` (the chunk name) prefixes what the plugin prints.
function M.new_env(require_fn, source)
  local env = copy(base)
  env.print = print_for(source)
  for name, lib in pairs(libs) do env[name] = copy(lib) end
  env.string.dump = nil
  env.string.format = safe_format
  env.os = { time = os_time, clock = os_clock, date = os_date }
  env.require = require_fn
  env._G = env
  return env
end

return M
