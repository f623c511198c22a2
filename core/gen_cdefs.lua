-- Generates, from the ffi:begin / ffi:end blocks of the public headers (the
-- function-like macros the headers define expanded in them):
--   OUT_DIR/luasched/cdefs.lua    the cdef text Lua loads, with its ABI version;
--   OUT_DIR/include/luasched/abi.h LS_ABI_VERSION for C, the same number;
--   OUT_DIR/luasched/exports.txt  the functions those blocks declare, one a line.
-- The ABI version is a hash of the cdef text, so it changes whenever a layout or a
-- signature Lua sees does: a stale lua/ against a new library (or the reverse)
-- is refused instead of misreading memory. Files are rewritten only when their
-- content changes, so an unchanged header does not rebuild the library.
-- usage: luajit gen_cdefs.lua OUT_DIR HEADER...
local bit = require("bit")

local out_dir = assert(arg[1], "usage: gen_cdefs.lua OUT_DIR HEADER...")

local files = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "gen_files.lua")
local read, write_if_changed = files.read, files.write_if_changed

-- 31-bit FNV-1a of the text (an int on both sides).
local function abi_hash(text)
  local h = 0x811c9dc5
  for i = 1, #text do
    h = bit.bxor(h, text:byte(i))
    h = bit.tobit(h * 0x01000193 % 0x100000000)
  end
  return bit.band(h, 0x7fffffff)
end

-- Names of the functions declared at the top level of the cdef text (not the
-- function-pointer fields of structs, not typedefs).
local function declared_functions(cdef)
  local code = cdef:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " ")
  local names, depth, stmt = {}, 0, {}
  for ch in code:gmatch(".") do
    if ch == "{" then depth = depth + 1
    elseif ch == "}" then depth = depth - 1
    elseif depth == 0 and ch == ";" then
      local s = table.concat(stmt):gsub("%s+", " ")
      stmt = {}
      if not s:match("^%s*typedef") and not s:match("^%s*struct") and not s:match("^%s*enum") then
        local name = s:match("([%a_][%w_]*)%s*%(")
        if name and not s:match("%(%s*%*") then names[#names + 1] = name end
      end
    elseif depth == 0 then stmt[#stmt + 1] = ch
    end
    if ch == "}" and depth == 0 then stmt = {} end
  end
  table.sort(names)
  return names
end

-- The function-like macros the headers define (#define NAME(params) body,
-- continued lines joined, comments dropped): an ffi block may use an X-macro
-- list (the extension points, written once for C and for Lua).
local function collect_macros(text, macros)
  text = ("\n" .. text):gsub("\\\n", " ")
  for name, params, body in text:gmatch("\n%s*#%s*define%s+([%a_][%w_]*)%(([^)]*)%)([^\n]*)") do
    local names = {}
    for p in params:gmatch("[^,%s]+") do names[#names + 1] = p end
    macros[name] = { params = names, body = body:gsub("/%*.-%*/", " "):gsub("%s+", " "):match("^%s*(.-)%s*$") }
  end
end

-- The arguments of a macro call (the text between its parentheses), split at
-- the commas outside nested parentheses and string literals.
local function split_args(text)
  local args, cur, depth, quoted = {}, {}, 0, false
  for ch in text:gmatch(".") do
    if ch == '"' then quoted = not quoted
    elseif not quoted and ch == "(" then depth = depth + 1
    elseif not quoted and ch == ")" then depth = depth - 1 end
    if ch == "," and depth == 0 and not quoted then
      args[#args + 1] = table.concat(cur)
      cur = {}
    else
      cur[#cur + 1] = ch
    end
  end
  args[#args + 1] = table.concat(cur)
  for i, a in ipairs(args) do args[i] = a:match("^%s*(.-)%s*$") end
  return args
end

-- A call's body with its parameters replaced (... by __VA_ARGS__) and ## pasted.
local function substitute(m, args, name)
  local map = {}
  for i, p in ipairs(m.params) do
    if p == "..." then
      map.__VA_ARGS__ = table.concat(args, ", ", i)
    else
      map[p] = assert(args[i], name .. ": too few arguments")
    end
  end
  return (m.body:gsub("[%a_][%w_]*", map):gsub("%s*##%s*", ""))
end

-- Expands every call of a collected macro in text, then the calls its
-- expansion makes (bounded: the lists are not recursive).
local function expand(text, macros, depth)
  assert(depth < 16, "gen_cdefs.lua: macro expansion nested too deep")
  local out, pos = {}, 1
  while true do
    local s, e, name = text:find("([%a_][%w_]*)%s*%(", pos)
    if not s then break end
    local m = macros[name]
    if m and (s == 1 or not text:sub(s - 1, s - 1):match("[%w_]")) then
      local level, close = 1, e
      while level > 0 do
        close = close + 1
        local ch = assert(text:sub(close, close) ~= "" and text:sub(close, close), name .. ": unbalanced call")
        if ch == "(" then level = level + 1 elseif ch == ")" then level = level - 1 end
      end
      out[#out + 1] = text:sub(pos, s - 1)
      out[#out + 1] = expand(substitute(m, split_args(text:sub(e + 1, close - 1)), name), macros, depth + 1)
      pos = close + 1
    else
      out[#out + 1] = text:sub(pos, e)
      pos = e + 1
    end
  end
  out[#out + 1] = text:sub(pos)
  return table.concat(out)
end

local macros = {}
for i = 2, #arg do collect_macros(read(arg[i]), macros) end

local parts = {}
for i = 2, #arg do
  local text = read(arg[i])
  local found = false
  for block in text:gmatch("/%* ffi:begin %*/(.-)/%* ffi:end %*/") do
    found = true
    block = expand((block:gsub("\n%s*#[^\n]*", "\n")), macros, 0)
    parts[#parts + 1] = "/* " .. arg[i]:match("[^/]+$") .. " */" .. block
  end
  if not found then error(arg[i] .. ": no ffi:begin/ffi:end block") end
end
local cdef = table.concat(parts, "\n")
local abi = abi_hash(cdef)

write_if_changed(out_dir .. "/luasched/cdefs.lua",
  "-- Generated by core/gen_cdefs.lua from the public headers. Do not edit.\n" ..
  "return { abi = " .. abi .. ", cdef = [==[\n" .. cdef .. "\n]==] }\n")
write_if_changed(out_dir .. "/include/luasched/abi.h",
  "/* Generated by core/gen_cdefs.lua: a hash of the FFI-visible text of the public\n" ..
  " * headers. Do not edit. */\n" ..
  "#ifndef LUASCHED_ABI_H\n#define LUASCHED_ABI_H\n#define LS_ABI_VERSION " .. abi .. "\n#endif\n")
write_if_changed(out_dir .. "/luasched/exports.txt", table.concat(declared_functions(cdef), "\n") .. "\n")
