-- luasched.args: checks a plugin's pluginConfig args against the types of its
-- declared defaults before the plugin sees them (every load: check, simulate,
-- run, reload). A key the defaults do not declare is an error unless the
-- plugin lists it in `optional` (ls.plugin(name, { optional = { key = "table"
-- } })); a value whose type differs from the default's is an error. Lists are
-- checked element by element against the default's first element. `apiVersion`
-- and `kind` (upstream's typed args) are accepted at the top.
--
-- Errors read "FILE:LINE: profiles[0].pluginConfig[1].args.field: what",
-- with the line of the field when the config loader recorded it.
local M = {}

local function lua_type_name(v)
  local t = type(v)
  if t == "table" then return (v[1] ~= nil or next(v) == nil) and "list" or "object" end
  return t
end

local function shown(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then return lua_type_name(v) end
  return tostring(v)
end

-- "file:line: path" for a field, from the locations the config loader gave.
local function locate(where, field)
  if not where then return "args." .. field end
  local line = where.lines and where.lines[field] or where.line
  local path = where.path .. "." .. field
  if line and line > 0 then return string.format("%s:%d: %s", where.source, line, path) end
  return where.source .. ": " .. path
end

local check_value

-- What an unknown field `k` could have been: " (did you mean "x"?)", or the
-- fields the plugin declares (its defaults and optional keys), or that it
-- declares none.
local function known_fields(k, defaults, optional)
  local suggest, names, seen = require("luasched.suggest"), {}, {}
  for _, t in ipairs({ type(defaults) == "table" and defaults or {}, type(optional) == "table" and optional or {} }) do
    for _, name in ipairs(suggest.keys(t)) do
      if not seen[name] then seen[name] = true; names[#names + 1] = name end
    end
  end
  table.sort(names)
  local hint = suggest.did_you_mean(k, names)
  if hint then return string.format(' (did you mean "%s"?)', hint) end
  if #names == 0 then return " (the plugin declares no args: ls.plugin(NAME, { defaults = {...} }))" end
  return " (expected " .. table.concat(names, ", ") .. ")"
end

local function check_object(given, defaults, optional, prefix, where, problems)
  for k, v in pairs(given) do
    local field = prefix == "" and tostring(k) or prefix .. "." .. tostring(k)
    -- (`x and t[k] or nil` made a default of false an unknown field)
    local dv, opt
    if type(defaults) == "table" then dv = defaults[k] end
    if type(optional) == "table" then opt = optional[k] end
    if dv ~= nil then
      check_value(v, dv, type(opt) == "table" and opt or nil, field, where, problems)
    elseif opt ~= nil then
      local want = type(opt) == "table" and "object" or opt
      local got = type(v) == "table" and lua_type_name(v) or type(v)
      if want ~= "any" and got ~= want and not (want == "table" and type(v) == "table")
          and not (want == "object" and type(v) == "table") then
        problems[#problems + 1] = string.format("%s: Invalid type: expected %s, got %s %s",
          locate(where, field), want, got, shown(v))
      elseif type(opt) == "table" and type(v) == "table" then
        check_object(v, {}, opt, field, where, problems)
      end
    elseif not (prefix == "" and (k == "apiVersion" or k == "kind")) then
      problems[#problems + 1] = string.format("%s: unknown field%s", locate(where, field),
        known_fields(k, defaults, optional))
    end
  end
end

check_value = function(v, dv, optional, field, where, problems)
  local want, got = type(dv), type(v)
  if want ~= got then
    problems[#problems + 1] = string.format("%s: Invalid type: expected %s, got %s %s",
      locate(where, field), want == "table" and lua_type_name(dv) or want, got, shown(v))
    return
  end
  if want ~= "table" then return end
  local dlist = dv[1] ~= nil
  if dlist or (next(dv) == nil and v[1] ~= nil) then
    if next(v) ~= nil and v[1] == nil then
      problems[#problems + 1] = string.format("%s: Invalid type: expected list, got object", locate(where, field))
      return
    end
    if dlist then
      for i, e in ipairs(v) do
        check_value(e, dv[1], nil, string.format("%s[%d]", field, i - 1), where, problems)
      end
    end
  elseif next(dv) ~= nil then
    check_object(v, dv, optional, field, where, problems)
  end
end

--- Checks `args` (a table or nil) of plugin P. Returns true, or nil and the
--- problems joined by "; ". `where` = { source=, line=, path=, lines = { field -> line } }.
function M.check(P, args, where)
  if args == nil then return true end
  local problems = {}
  check_object(args, P.defaults or {}, P.optional, "", where, problems)
  if #problems == 0 then return true end
  -- in the order of the config file's lines (pairs has none)
  table.sort(problems, function(a, b)
    local la, lb = tonumber(a:match("^[^:]*:(%d+):")) or 0, tonumber(b:match("^[^:]*:(%d+):")) or 0
    if la ~= lb then return la < lb end
    return a < b
  end)
  return nil, string.format("args of plugin %q: %s", P.name, table.concat(problems, "; "))
end

return M
