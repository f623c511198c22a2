-- A small JSON decoder for the specs (the runtime has no JSON in Lua): objects
-- become tables, arrays lists, null a unique sentinel.
local M = { null = setmetatable({}, { __tostring = function() return "null" end }) }

local decode_value

local function skip(s, i)
  return s:find("[^ \t\r\n]", i) or #s + 1
end

local escapes = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function decode_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == "" then error("unterminated string at " .. i) end
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      if e == "u" then
        local code = tonumber(s:sub(j + 2, j + 5), 16)
        out[#out + 1] = code < 128 and string.char(code) or "?"
        j = j + 6
      else
        out[#out + 1] = escapes[e] or e
        j = j + 2
      end
    else
      out[#out + 1] = c
      j = j + 1
    end
  end
end

local function decode_object(s, i)
  local t = {}
  i = skip(s, i + 1)
  if s:sub(i, i) == "}" then return t, i + 1 end
  while true do
    local k
    k, i = decode_string(s, skip(s, i))
    i = skip(s, i)
    assert(s:sub(i, i) == ":", "expected ':' at " .. i)
    t[k], i = decode_value(s, skip(s, i + 1))
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == "}" then return t, i + 1 end
    assert(c == ",", "expected ',' or '}' at " .. i)
    i = i + 1
  end
end

local function decode_array(s, i)
  local t = {}
  i = skip(s, i + 1)
  if s:sub(i, i) == "]" then return t, i + 1 end
  while true do
    t[#t + 1], i = decode_value(s, skip(s, i))
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == "]" then return t, i + 1 end
    assert(c == ",", "expected ',' or ']' at " .. i)
    i = i + 1
  end
end

decode_value = function(s, i)
  local c = s:sub(i, i)
  if c == "{" then return decode_object(s, i) end
  if c == "[" then return decode_array(s, i) end
  if c == '"' then return decode_string(s, i) end
  if s:sub(i, i + 3) == "true" then return true, i + 4 end
  if s:sub(i, i + 4) == "false" then return false, i + 5 end
  if s:sub(i, i + 3) == "null" then return M.null, i + 4 end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  assert(num and #num > 0, "unexpected character at " .. i)
  return tonumber(num), i + #num
end

function M.decode(s)
  local v = decode_value(s, skip(s, 1))
  return v
end

return M
