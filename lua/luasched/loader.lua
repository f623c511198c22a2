-- luasched.loader: finds plugins by name on the plugin path and loads each in a
-- sandbox: source text only (no bytecode), no io/os/debug/ffi, and require
-- limited to the luasched plugin API and modules on the plugin path.
local ffi = require("ffi")
local C = require("luasched.clib")

local M = {}
local suggestion = ffi.new("char[128]")

local plugin_dirs = {}
-- What the runtime is running, for the watchdog (profiles.lua's note: the
-- loader cannot require it, profiles.lua requires the loader).
local noting = function() end

--- The function that notes what the runtime runs (profiles.lua sets it).
function M.set_note(fn) noting = fn end
local builtin_dirs = {}   -- directory -> true: where the built-in plugins are
local loaded = {}        -- registered name -> plugin table

--- The plugin path (the given directories, then the built-in ones) and the
--- built-in directories among them.
function M.set_path(dirs, builtins)
  plugin_dirs = dirs
  builtin_dirs = {}
  for _, d in ipairs(builtins or {}) do builtin_dirs[d] = true end
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

-- Each directory of the path, then its policies/ folder (the policy library,
-- plugins/policies/, is on the built-in path with the upstream plugins).
local SUBDIRS = { "", "/policies" }

-- The first file `base`.lua on the path (only in the built-in directories
-- when `builtin_only`), and whether it is a built-in one.
local function find_file(base, builtin_only)
  for _, dir in ipairs(plugin_dirs) do
    if not builtin_only or builtin_dirs[dir] then
      for _, sub in ipairs(SUBDIRS) do
        local path = dir .. sub .. "/" .. base .. ".lua"
        if readable(path) then return path, builtin_dirs[dir] == true end
      end
    end
  end
  return nil
end

local sandbox = require("luasched.sandbox")

-- The frozen luasched module one plugin gets (once per plugin: its require
-- cache keeps it). Its ls.object_table / ls.object_data have caches of their
-- own: the decoded objects are plain tables a plugin could write into.
local function luasched_for_plugin()
  local ls = require("luasched")
  local mine = sandbox.copy(ls)
  mine.object_table, mine.object_data = ls._object_readers()
  return sandbox.freeze(mine, "luasched", true)
end

local function display_path(path)
  -- Error messages carry file:line; keep them short and relative when we can.
  local cwd = os.getenv("PWD")
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end

local load_source

-- Runtime modules plugins may require: frozen (read-only) views of the
-- runtime's own module, so that a value they make (luasched.json's null and
-- array marker) is the same one the runtime's decoder puts in objects.
local SHARED_LIBS = { ["luasched.json"] = true, ["luasched.cel"] = true, ["luasched.signers"] = true }
local shared_views = {}
local function shared_lib(name)
  if not shared_views[name] then
    local lib = require(name)
    for _, k in ipairs({ "null", "array_mt" }) do
      if type(lib[k]) == "table" then sandbox.protect(lib[k], name .. "." .. k) end
    end
    shared_views[name] = sandbox.freeze(lib, name, true)
  end
  return shared_views[name]
end

-- require inside one plugin (`owner`): the frozen luasched module, or a
-- module on the plugin path loaded in its own environment, once per plugin
-- (a module is never shared writable between two plugins).
local function make_require(cache, builtin_only, owner)
  local req
  req = function(name)
    if type(name) ~= "string" then
      error("require: module name must be a string", 2)
    end
    if cache[name] ~= nil then return cache[name] end
    if name == "luasched" then
      cache[name] = luasched_for_plugin()
      return cache[name]
    end
    if SHARED_LIBS[name] then
      cache[name] = shared_lib(name)
      return cache[name]
    end
    if name:find("^luasched") then
      error("require: module '" .. name .. "' is not available to plugins", 2)
    end
    -- a built-in plugin's modules are built-in ones: a file of the same name
    -- on the given plugin path does not replace what built-ins require
    local path = find_file((name:gsub("%.", "/")), builtin_only)
    if not path then
      error("require: module '" .. name .. "' not found on the plugin path", 2)
    end
    local chunk, err = load_source(path, "@" .. display_path(path), req, owner)
    if not chunk then error(err, 0) end
    local value = chunk()
    cache[name] = value == nil and true or value
    return cache[name]
  end
  return req
end

-- chunk name ("@file") of plugin code -> the plugin whose code it is (a
-- module: the plugin that requires it; false when two plugins do), for error
-- positions and for whose code ran. C is told too, for the frames it reads
-- at a cut-off (runtime_blame.c).
local plugin_sources = {}

--- Whether a chunk name (debug.getinfo's source) is a plugin's or its module's.
function M.is_plugin_source(source)
  return plugin_sources[source] ~= nil
end

--- The plugin whose code a chunk name is (nil for the runtime's files and for
--- a module more than one plugin requires).
function M.plugin_of_source(source)
  return plugin_sources[source] or nil
end

local function record_source(chunkname, owner)
  local known = plugin_sources[chunkname]
  if known == nil then
    plugin_sources[chunkname] = owner
  elseif known ~= owner then
    plugin_sources[chunkname] = false
  end
  C.ls_lua_plugin_source(chunkname, owner)
end

load_source = function(path, chunkname, require_fn, owner)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local text, rerr = f:read("*a")
  f:close()
  -- a directory opens but does not read: its error named loader.lua (attacker round 3)
  if not text then return nil, chunkname:sub(2) .. ": cannot be read: " .. tostring(rerr) end
  if text:byte(1) == 27 then return nil, chunkname:sub(2) .. ": bytecode is not accepted, only Lua source" end
  record_source(chunkname, owner)
  return load(text, chunkname, "t", sandbox.new_env(require_fn or make_require({}, false, owner), chunkname))
end

-- The functions a plugin table may hold besides its hooks (docs/plugins/api.md),
-- and the tables the runtime reads from it.
local LOAD_FUNCTIONS = { "init", "validate", "clone_state", "complete_args" }
local PLUGIN_TABLES = { "events", "object_data" }

-- A function of P named like a hook but misspelt (P:filtr, P:preFilter)
-- would never run: "FILE:LINE: plugin "X": P:filtr is no hook; did you mean
-- P:filter?". A plugin defining no hook at all is refused too. Other
-- functions (helpers of the plugin's own) are left alone.
local function check_hooks(name, path, P)
  local points = require("luasched.points")
  local suggest = require("luasched.suggest")
  local known = {}
  for _, h in ipairs(points.hooks) do known[#known + 1] = h end
  for _, f in ipairs(LOAD_FUNCTIONS) do known[#known + 1] = f end
  local is_known, hooks = {}, 0
  for _, h in ipairs(known) do is_known[h] = true end
  for _, h in ipairs(points.hooks) do
    if type(rawget(P, h)) == "function" then hooks = hooks + 1 end
  end
  for _, k in ipairs(suggest.keys(P)) do
    local fn = rawget(P, k)
    -- P.event or P.objectData would be read by nobody: every event would retry the pod
    local table_hint = type(fn) == "table" and rawget(P, k) ~= nil and suggest.misspelling_of(k, PLUGIN_TABLES)
    if table_hint and rawget(P, table_hint) == nil then
      return nil, string.format("%s: plugin %q: P.%s is read by nobody; did you mean P.%s?", path, name, k, table_hint)
    end
    local hint = type(fn) == "function" and not is_known[k] and suggest.misspelling_of(k, known)
    if hint then
      local info = debug.getinfo(fn, "S")
      return nil, string.format("%s:%d: plugin %q: P:%s is no hook; did you mean P:%s?", path,
        info.linedefined, name, k, hint)
    end
  end
  if hooks == 0 then
    return nil, string.format("%s: plugin %q defines no hook (function P:filter(state, pod, node), "
      .. "P:score(state, pod, node), ...: docs/plugins/api.md#extension-points)", path, name)
  end
  return P
end

local function check_plugin(name, path, P)
  if type(P) ~= "table" then
    return nil, string.format("%s: plugin %q must return a table (from ls.plugin), got %s%s",
      path, name, type(P), P == nil and ": end the file with return P" or "")
  end
  if P.name == nil then
    return nil, string.format("%s: the table it returns has no name: make it with local P = ls.plugin(%q, ...)",
      path, name)
  end
  if P.name ~= name then
    return nil, string.format("%s: file declares plugin %q, expected %q", path, tostring(P.name), name)
  end
  return check_hooks(name, path, P)
end

-- Whether two files hold the same text (a built-in directory given again on
-- the plugin path under another spelling is no replacement).
local function same_text(a, b)
  local fa, fb = io.open(a, "r"), io.open(b, "r")
  local ta, tb = fa and fa:read("*a"), fb and fb:read("*a")
  if fa then fa:close() end
  if fb then fb:close() end
  return ta ~= nil and ta == tb
end

--- Loads (once) the plugin registered as `name`. Returns the plugin table, or
--- nil and a message naming the file and line.
-- What the loader knows of each plugin table, out of the plugin's reach.
local builtin_tables = setmetatable({}, { __mode = "k" })   -- plugin table or instance -> true
local shadowing = setmetatable({}, { __mode = "k" })        -- plugin table -> the built-in file it replaces
local file_of = setmetatable({}, { __mode = "k" })          -- plugin table -> its file, as errors show it
local load_growth = setmetatable({}, { __mode = "k" })   -- plugin table -> bytes its top-level code grew the state

function M.load(name)
  if loaded[name] then return loaded[name] end
  -- the name becomes a file name: "../outside/Sneaky" loaded
  -- plugins/../outside/sneaky.lua, a file off the plugin path (attacker round 3)
  if name:find("[/\\%z]") or name:find("..", 1, true) then
    return nil, string.format("plugin %q not found: a plugin name is no path (it may not hold \"/\" or \"..\")", name)
  end
  local base = M.file_name(name)
  local path, builtin = find_file(base)
  if not path then
    local dirs = table.concat(plugin_dirs, ":")
    local searched = {}
    for _, d in ipairs(plugin_dirs) do
      for _, sub in ipairs(SUBDIRS) do searched[#searched + 1] = d .. sub end
    end
    local hint = ""
    local misnamed = ffi.new("char[?]", 4200)
    if C.ls_plugin_file_misnamed(name, table.concat(searched, ":"), base .. ".lua", misnamed, 4200) then
      hint = string.format("; %s is there: the loader reads %s.lua (rename it)", ffi.string(misnamed), base)
    elseif C.ls_plugin_name_suggestion(name, table.concat(searched, ":"), suggestion, ffi.sizeof(suggestion)) then
      hint = string.format('; did you mean "%s"?', ffi.string(suggestion))
    end
    return nil, string.format("plugin %q not found: no %s.lua on the plugin path (%s)%s", name, base, dirs, hint)
  end
  local shown = display_path(path)
  local chunk, err = load_source(path, "@" .. shown, make_require({}, builtin, name), name)
  if not chunk then return nil, err end
  -- what a cut-off of the top-level code names when its error never
  -- reaches the pcall below (cut off inside C): the plugin and its file;
  -- the runtime's checks after it are "loading its file" again
  noting("plugin %q (%s, top-level code)", name, shown)
  local before = collectgarbage("count") * 1024
  local ok, P = pcall(chunk)
  local grown = collectgarbage("count") * 1024 - before
  noting("plugin %q (loading its file)", name)
  if not ok then
    -- cut off in C (a table or a string grown in its top-level code), the
    -- error has no position: "plugin exceeded its time budget", naming no
    -- plugin (attacker round 4)
    local msg = tostring(P)
    if not msg:find(shown, 1, true) then msg = string.format("plugin %q (%s, top-level code): %s", name, shown, msg) end
    return nil, msg
  end
  local checked, cerr = check_plugin(name, shown, P)
  if not checked then return nil, cerr end
  rawset(P, "file", shown)
  file_of[P] = shown
  local declared, derr = require("luasched.fields").declare(P)
  if not declared then return nil, derr end
  rawset(P, "path", path)
  rawset(P, "builtin", builtin)
  -- a file on the given path named as a built-in: which one it would replace
  -- (a profile must opt in, profiles.lua)
  local original = not builtin and find_file(base, true)
  if original and not same_text(original, path) then
    shadowing[P] = display_path(original)
    rawset(P, "shadows", shadowing[P])
  end
  if builtin then builtin_tables[P] = true end
  load_growth[P] = grown
  loaded[name] = P
  return P
end

--- Whether plugin table P (or an instance of it, M.adopt) was loaded from a
--- built-in directory. The runtime asks this, never P.builtin: a plugin
--- that set a metatable on its table swallowing assignments (or answering
--- P.builtin with true) passed as built-in, its hooks unguarded, and a file
--- named as a built-in replaced it with no error (attacker round 4).
function M.is_builtin(t) return builtin_tables[t] == true end

--- The file plugin table P was loaded from, as errors show it (nil for a
--- table the loader did not load). The runtime asks this, never P.file: a
--- plugin that set its `file` to "" or to a word of its error message
--- ("filter") had its errors reported without their file:line (attacker
--- round 5).
function M.file_of(P) return file_of[P] end

--- The bytes plugin table P's top-level code grew the state by when it loaded.
function M.load_growth(P) return load_growth[P] or 0 end

--- The built-in file plugin table P would replace (nil when none).
function M.shadows(P) return shadowing[P] end

--- Records `inst`, an instance of plugin table P, as built-in when P is.
function M.adopt(inst, P)
  if builtin_tables[P] then builtin_tables[inst] = true end
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
end

--- The plugin's own file name, as errors show it.
M.display_path = display_path

--- The file of built-in plugin `name`, or nil when there is no such built-in.
function M.builtin_file(name)
  local path = find_file(M.file_name(name), true)
  return path and display_path(path) or nil
end

return M
