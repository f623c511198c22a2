-- luasched.json: decodes the compact JSON that C keeps for API objects
-- (ls_object.json) into plain Lua tables, for plugins that read fields the C
-- model does not flatten (the volume plugins' PersistentVolumes, claims,
-- classes, CSINodes, ...). Objects become tables keyed by field name, arrays
-- Lua arrays, null nil. Only well-formed JSON reaches it (cJSON printed it),
-- so errors are plain Lua errors naming the offset.
local M = {}

local byte, sub, find, char = string.byte, string.sub, string.find, string.char
local tonumber, concat = tonumber, table.concat

local decode_value

local function skip_space(s, i)
  local _, e = find(s, "^[ \t\r\n]*", i)
  return e + 1
end

local escapes = { [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f", [110] = "\n",
  [114] = "\r", [116] = "\t" }

-- UTF-8 of a code point (surrogate pairs joined by the caller).
local function utf8(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then return char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function decode_string(s, i)
  local parts, n, start = nil, 0, i + 1
  while true do
    local e = find(s, '["\\]', start)
    if not e then error("json: unterminated string at " .. i, 0) end
    if byte(s, e) == 34 then
      if not parts then return sub(s, i + 1, e - 1), e + 1 end
      n = n + 1; parts[n] = sub(s, start, e - 1)
      return concat(parts), e + 1
    end
    parts = parts or {}
    n = n + 1; parts[n] = sub(s, start, e - 1)
    local c = byte(s, e + 1)
    if c == 117 then
      local cp = tonumber(sub(s, e + 2, e + 5), 16)
      local next_at = e + 6
      if cp >= 0xD800 and cp < 0xDC00 and sub(s, next_at, next_at + 1) == "\\u" then
        local low = tonumber(sub(s, next_at + 2, next_at + 5), 16)
        cp = 0x10000 + (cp - 0xD800) * 1024 + (low - 0xDC00)
        next_at = next_at + 6
      end
      n = n + 1; parts[n] = utf8(cp)
      start = next_at
    else
      n = n + 1; parts[n] = escapes[c] or error("json: bad escape at " .. e, 0)
      start = e + 2
    end
  end
end

local function decode_array(s, i)
  local arr, n = {}, 0
  i = skip_space(s, i + 1)
  if byte(s, i) == 93 then return arr, i + 1 end
  while true do
    local v
    v, i = decode_value(s, i)
    n = n + 1; arr[n] = v
    i = skip_space(s, i)
    local c = byte(s, i)
    if c == 93 then return arr, i + 1 end
    if c ~= 44 then error("json: expected , or ] at " .. i, 0) end
    i = skip_space(s, i + 1)
  end
end

local function decode_object(s, i)
  local obj = {}
  i = skip_space(s, i + 1)
  if byte(s, i) == 125 then return obj, i + 1 end
  while true do
    if byte(s, i) ~= 34 then error("json: expected a key at " .. i, 0) end
    local k, v
    k, i = decode_string(s, i)
    i = skip_space(s, i)
    if byte(s, i) ~= 58 then error("json: expected : at " .. i, 0) end
    v, i = decode_value(s, skip_space(s, i + 1))
    obj[k] = v
    i = skip_space(s, i)
    local c = byte(s, i)
    if c == 125 then return obj, i + 1 end
    if c ~= 44 then error("json: expected , or } at " .. i, 0) end
    i = skip_space(s, i + 1)
  end
end

decode_value = function(s, i)
  i = skip_space(s, i)
  local c = byte(s, i)
  if c == 123 then return decode_object(s, i) end
  if c == 91 then return decode_array(s, i) end
  if c == 34 then return decode_string(s, i) end
  if sub(s, i, i + 3) == "true" then return true, i + 4 end
  if sub(s, i, i + 4) == "false" then return false, i + 5 end
  if sub(s, i, i + 3) == "null" then return nil, i + 4 end
  local _, e = find(s, "^-?[%d%.eE+-]+", i)
  if not e then error("json: unexpected character at " .. i, 0) end
  return tonumber(sub(s, i, e)), e + 1
end

--- The value of a JSON text.
function M.decode(text)
  local v = decode_value(text, 1)
  return v
end

-- JSON string literal of a Lua string (for the merge patches plugins send).
function M.quote(str)
  return '"' .. str:gsub('[%c"\\]', function(ch)
    local b = byte(ch)
    if ch == '"' then return '\\"' end
    if ch == "\\" then return "\\\\" end
    return string.format("\\u%04x", b)
  end) .. '"'
end

return M
