-- luasched.loader: finds plugins by name on the plugin path and loads each in a
-- sandbox: source text only (no bytecode), no io/os/debug/ffi, and require
-- limited to the luasched plugin API and modules on the plugin path.
local M = {}

local plugin_dirs = {}
local loaded = {}        -- registered name -> plugin table
local modules = {}       -- module name -> value, for require inside plugins

-- Modules a plugin may require from the runtime.
local allowed_runtime = { luasched = true, ["luasched.testing"] = false, ["luasched.json"] = true,
                          ["luasched.cel"] = true }

function M.set_path(dirs)
  plugin_dirs = dirs
end

function M.path()
  return plugin_dirs
end

--- "NodeResourcesFit" -> "node_resources_fit"
function M.file_name(name)
  local s = name:gsub("(%l)(%u)", "%1_%2"):gsub("(%u)(%u%l)", "%1_%2")
  return s:lower()
end

local function readable(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

local function find_file(base)
  for _, dir in ipairs(plugin_dirs) do
    local path = dir .. "/" .. base .. ".lua"
    if readable(path) then return path end
  end
  return nil
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local sandbox_require

local function make_env()
  local string_lib = copy(string)
  string_lib.dump = nil
  local env = {
    assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
    pcall = pcall, xpcall = xpcall, select = select, tonumber = tonumber,
    tostring = tostring, type = type, unpack = unpack, rawequal = rawequal,
    rawget = rawget, rawset = rawset, setmetatable = setmetatable,
    getmetatable = getmetatable, print = print,
    string = string_lib, table = copy(table), math = copy(math), bit = copy(bit),
    os = { time = os.time, clock = os.clock, date = os.date },
    require = sandbox_require,
  }
  env._G = env
  return env
end

local function load_source(path, chunkname)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local text = f:read("*a")
  f:close()
  return load(text, chunkname, "t", make_env())
end

local function display_path(path)
  -- Error messages carry file:line; keep them short and relative when we can.
  local cwd = os.getenv("PWD")
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end

sandbox_require = function(name)
  if type(name) ~= "string" then
    error("require: module name must be a string", 2)
  end
  if allowed_runtime[name] then return require(name) end
  if modules[name] ~= nil then return modules[name] end
  if name:find("^luasched") then
    error("require: module '" .. name .. "' is not available to plugins", 2)
  end
  local path = find_file((name:gsub("%.", "/")))
  if not path then
    error("require: module '" .. name .. "' not found on the plugin path", 2)
  end
  local chunk, err = load_source(path, "@" .. display_path(path))
  if not chunk then error(err, 0) end
  local value = chunk()
  modules[name] = value == nil and true or value
  return modules[name]
end

local function check_plugin(name, path, P)
  if type(P) ~= "table" then
    return nil, string.format("%s: plugin %q must return a table (from ls.plugin), got %s",
      path, name, type(P))
  end
  if P.name ~= name then
    return nil, string.format("%s: file declares plugin %q, expected %q", path, tostring(P.name), name)
  end
  return P
end

--- Loads (once) the plugin registered as `name`. Returns the plugin table, or
--- nil and a message naming the file and line.
function M.load(name)
  if loaded[name] then return loaded[name] end
  local base = M.file_name(name)
  local path = find_file(base)
  if not path then
    return nil, string.format("plugin %q not found: no %s.lua on the plugin path (%s)",
      name, base, table.concat(plugin_dirs, ":"))
  end
  local shown = display_path(path)
  local chunk, err = load_source(path, "@" .. shown)
  if not chunk then return nil, err end
  local ok, P = pcall(chunk)
  if not ok then return nil, tostring(P) end
  local checked, cerr = check_plugin(name, shown, P)
  if not checked then return nil, cerr end
  P.file = shown
  P.path = path
  loaded[name] = P
  return P
end

--- The files of every loaded plugin (what hot reload watches).
function M.files()
  local out = {}
  for _, P in pairs(loaded) do out[#out + 1] = P.path end
  table.sort(out)
  return out
end

--- Forgets loaded plugins (hot reload builds a fresh set).
function M.reset()
  loaded = {}
  modules = {}
end

return M
