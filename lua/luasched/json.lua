-- luasched.json: JSON text to Lua tables and back, for plugins that read whole
-- API objects (ls_object.json) and write patches. Objects become tables with
-- string keys, arrays sequences marked with M.array_mt (so an empty array
-- stays an array when encoded again), null becomes M.null. Numbers are Lua
-- numbers (doubles): integers up to 2^53 are exact. M.decode(text, true) gives
-- plain tables instead (null is nil, arrays unmarked), as ls.object_data hands
-- objects to plugins that only read them.
local M = {}

local function refuse(what)
  return function() error(what .. " is read-only", 2) end
end
M.array_mt = setmetatable({ __name = "json array" }, { __newindex = refuse("json.array_mt"), __metatable = false })
M.null = setmetatable({}, { __name = "json null", __tostring = function() return "null" end,
                            __newindex = refuse("json.null"), __metatable = false })

local byte, sub, find, char = string.byte, string.sub, string.find, string.char
local concat = table.concat

local decode_value
local plain = false   -- the current M.decode call's mode

local function fail(text, pos, what)
  error(string.format("JSON at byte %d: %s (near %q)", pos, what, sub(text, pos, pos + 10)), 0)
end

local function skip(text, pos)
  local _, e = find(text, "^[ \t\r\n]*", pos)
  return e + 1
end

local escapes = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }

local function utf8_char(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then return char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64, 0x80 + math.floor(cp / 64) % 64,
    0x80 + cp % 64)
end

local function decode_string(text, pos)
  local parts, i = {}, pos + 1
  while true do
    local s, e = find(text, '^[^"\\]+', i)
    if s then parts[#parts + 1] = sub(text, s, e); i = e + 1 end
    local c = byte(text, i)
    if c == 34 then return concat(parts), i + 1 end
    if c ~= 92 then fail(text, i, "unterminated string") end
    local esc = sub(text, i + 1, i + 1)
    if esc == "u" then
      local hex = sub(text, i + 2, i + 5)
      local cp = tonumber(hex, 16)
      if not cp or #hex ~= 4 then fail(text, i, "bad \\u escape") end
      i = i + 6
      if cp >= 0xD800 and cp < 0xDC00 and sub(text, i, i + 1) == "\\u" then
        local lo = tonumber(sub(text, i + 2, i + 5), 16)
        if lo and lo >= 0xDC00 and lo < 0xE000 then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          i = i + 6
        end
      end
      parts[#parts + 1] = utf8_char(cp)
    else
      local r = escapes[esc]
      if not r then fail(text, i, "bad escape") end
      parts[#parts + 1] = r
      i = i + 2
    end
  end
end

-- After an element or a member: true and the position past the closing byte,
-- or false and the start of the next item (past the ',').
local function next_item(text, i, close, expected)
  i = skip(text, i)
  local c = byte(text, i)
  if c == close then return true, i + 1 end
  if c ~= 44 then fail(text, i, expected) end
  return false, skip(text, i + 1)
end

local function decode_array(text, pos)
  local arr, i, n = plain and {} or setmetatable({}, M.array_mt), skip(text, pos + 1), 0
  if byte(text, i) == 93 then return arr, i + 1 end
  local done = false
  while not done do
    local v
    v, i = decode_value(text, i)
    n = n + 1
    arr[n] = v
    done, i = next_item(text, i, 93, "expected ',' or ']'")
  end
  return arr, i
end

local function decode_object(text, pos)
  local obj, i = {}, skip(text, pos + 1)
  if byte(text, i) == 125 then return obj, i + 1 end
  while true do
    if byte(text, i) ~= 34 then fail(text, i, "expected a string key") end
    local k
    k, i = decode_string(text, i)
    i = skip(text, i)
    if byte(text, i) ~= 58 then fail(text, i, "expected ':'") end
    obj[k], i = decode_value(text, skip(text, i + 1))
    local done
    done, i = next_item(text, i, 125, "expected ',' or '}'")
    if done then return obj, i end
  end
end

decode_value = function(text, pos)
  local c = byte(text, pos)
  if c == 123 then return decode_object(text, pos) end
  if c == 91 then return decode_array(text, pos) end
  if c == 34 then return decode_string(text, pos) end
  if sub(text, pos, pos + 3) == "true" then return true, pos + 4 end
  if sub(text, pos, pos + 4) == "false" then return false, pos + 5 end
  if sub(text, pos, pos + 3) == "null" then
    if plain then return nil, pos + 4 end
    return M.null, pos + 4
  end
  local s, e = find(text, "^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  local n = s and tonumber(sub(text, s, e))
  if not n then fail(text, pos, "unexpected character") end
  return n, e + 1
end

--- Decodes JSON text; raises "JSON at byte N: ..." on bad input. With
--- as_plain, null is nil and arrays are plain tables.
function M.decode(text, as_plain)
  plain = as_plain and true or false
  local v, i = decode_value(text, skip(text, 1))
  i = skip(text, i)
  if i <= #text then fail(text, i, "trailing characters") end
  return v
end

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(ch)
    local b = byte(ch)
    if ch == '"' then return '\\"' end
    if ch == "\\" then return "\\\\" end
    if ch == "\n" then return "\\n" end
    return string.format("\\u%04x", b)
  end) .. '"'
end

local encode_value

-- Encoding has two modes. Plain (who == nil): a table with [1] is an array.
-- Strict (who names the caller, e.g. "T.json", the plugin kit's encoder): a
-- table is an array only when its keys are exactly 1..n, and errors name the
-- value's path from the root "$".
local function is_array(t, who)
  if getmetatable(t) == M.array_mt then return true end
  if next(t) == nil or t[1] == nil then return false end
  if who == nil then return true end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  for i = 1, n do
    if t[i] == nil then return false end
  end
  return true
end

local function encode_number(v, out, who, path)
  if v ~= v or v == math.huge or v == -math.huge then
    if who then error(string.format("%s: %s is not a finite number", who, path), 0) end
    error("JSON: cannot encode a non-finite number", 0)
  end
  local exact = v == math.floor(v) and math.abs(v) < 2 ^ 53
  out[#out + 1] = exact and string.format("%d", v) or string.format("%.17g", v)
end

local function encode_object(v, out, who, path)
  local keys = {}
  for k in pairs(v) do
    if type(k) ~= "string" then
      if who then error(string.format("%s: %s has a %s key; objects need string keys", who, path, type(k)), 0) end
      error("JSON: object keys must be strings", 0)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = encode_string(k)
    out[#out + 1] = ":"
    encode_value(v[k], out, who, who and path .. "." .. k)
  end
  out[#out + 1] = "}"
end

encode_value = function(v, out, who, path)
  local t = type(v)
  if v == M.null or v == nil then out[#out + 1] = "null"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then encode_number(v, out, who, path)
  elseif t == "string" then out[#out + 1] = encode_string(v)
  elseif t == "table" and is_array(v, who) then
    out[#out + 1] = "["
    for i = 1, #v do
      if i > 1 then out[#out + 1] = "," end
      encode_value(v[i], out, who, who and path .. "[" .. i .. "]")
    end
    out[#out + 1] = "]"
  elseif t == "table" then encode_object(v, out, who, path)
  elseif who then
    error(string.format("%s: cannot encode a %s at %s", who, t, path), 0)
  else
    error("JSON: cannot encode a " .. t, 0)
  end
end

--- Encodes a value (object keys sorted, so the text is deterministic). With
--- `who`, strictly: see encode_value above.
function M.encode(v, who)
  local out = {}
  encode_value(v, out, who, who and "$")
  return concat(out)
end

--- A Lua string as a JSON string literal (for patches built as text).
function M.quote(str)
  return encode_string(str)
end

--- An array, also when empty.
function M.array(t)
  return setmetatable(t or {}, M.array_mt)
end

return M
