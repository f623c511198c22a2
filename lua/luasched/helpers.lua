-- luasched.helpers: small pure-Lua helpers that several plugins need, kept
-- once here and handed to plugins by the plugin API (luasched.lua exports
-- them as ls.copy_table, ls.round, ls.idiv, ls.qualified_name_error,
-- ls.is_qualified_name, ls.memo and ls.subtable) instead of a copy in each plugin.
local floor = math.floor

local M = {}

--- A shallow copy of a table (the sandbox's own, captured before any plugin ran).
M.copy_table = require("luasched.sandbox").copy

--- Go's math.Round: half away from zero (x - floor(x) is exact for doubles).
local function round(x)
  if x < 0 then return -round(-x) end
  local f = floor(x)
  if x - f >= 0.5 then return f + 1 end
  return f
end
M.round = round

--- Go's int64 division: truncates toward zero.
function M.idiv(a, b)
  local q = a / b
  if q >= 0 then return floor(q) end
  return -floor(-q)
end

local function dns_label_ok(s)
  return s:match("^[a-z0-9]$") ~= nil or s:match("^[a-z0-9][-a-z0-9]*[a-z0-9]$") ~= nil
end

--- Why `key` is not a qualified name, or nil when it is one (upstream's
--- IsQualifiedName, as metav1validation.ValidateLabelName uses it: an optional
--- DNS-1123 subdomain prefix and "/", then a name of at most 63 alphanumerics,
--- '-', '_' or '.'). Messages shortened from upstream's (no regex in them).
function M.qualified_name_error(key)
  local prefix, name = key:match("^(.*)/(.*)$")
  if prefix == nil then name = key end
  if prefix ~= nil then
    if prefix == "" then return "prefix part must be non-empty" end
    if #prefix > 253 then return "prefix part must be no more than 253 characters" end
    for part in (prefix .. "."):gmatch("([^.]*)%.") do
      if not dns_label_ok(part) then
        return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
          .. "characters, '-' or '.', and must start and end with an alphanumeric character"
      end
    end
  end
  if name == "" then return "name part must be non-empty" end
  if #name > 63 then return "name part must be no more than 63 characters" end
  if not (name:match("^[A-Za-z0-9]$") or name:match("^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$")) then
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
      .. "and end with an alphanumeric character"
  end
  return nil
end

--- Whether `key` is a qualified name (see qualified_name_error).
function M.is_qualified_name(key)
  return M.qualified_name_error(key) == nil
end

--- t[key], an empty table made and kept the first time (a cache per pod, per
--- namespace...).
function M.subtable(t, key)
  local v = t[key]
  if v == nil then
    v = {}
    t[key] = v
  end
  return v
end

--- t[key], made by make(arg) (make(key) when arg is nil) the first time and
--- kept in t: a status per distinct message, a value per group.
function M.memo(t, key, make, arg)
  local v = t[key]
  if v == nil then
    if arg == nil then arg = key end
    v = make(arg)
    t[key] = v
  end
  return v
end

return M
