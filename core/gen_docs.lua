-- Generates the plugin API reference from the doc comments beside the code:
--   docs/plugins/api.md   the reference (committed; a test fails when it is stale);
--   luasched-meta.lua     LuaLS annotations (`---@meta luasched`), installed with
--                         the runtime so an editor completes `ls.`, `pod.`, `ni.node.`.
-- Sources, each the one home of what it documents:
--   lua/luasched.lua, lua/luasched/fields.lua  `---` lines right above `function ls.NAME`
--       or `ls.NAME = ...` (a constant may carry its doc at the end of its line:
--       `NAME = C.LS_NAME, --- doc`, `"NAME", --- doc`); `---@param name type doc`,
--       `---@return type doc`; `---@section Title` starts a group; `---@view Name`
--       blocks (`---@field name type doc`) describe the Lua-side views (score
--       slots, the cycle state, a status);
--   core/include/luasched/*.h  a comment holding `@view Name: what it is` right
--       above a `typedef struct`/`union` of an ffi block makes it a view: each
--       field then needs a comment (at the end of its line or right above it);
--   core/include/luasched/extension_points.h  `@hook name(args)` comment blocks
--       (`@param name type doc`, `@return value: what the runtime does`), one for
--       every hook of the extension-point table and for the other plugin hooks.
-- Whatever lacks a doc comment is named with its file and line: a warning in
-- the build, an error in --check (ctest docs/api_reference), so a new public
-- function, constant, view field or hook cannot go undocumented.
-- usage: luajit gen_docs.lua SOURCE_DIR OUT_API_MD OUT_META_LUA
--        luajit gen_docs.lua SOURCE_DIR --check   (exit 1 when undocumented or stale)
local M = {}

local files = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "gen_files.lua")
local read = files.read

local function lines_of(text)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = line end
  if out[#out] == "" then out[#out] = nil end
  return out
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local problems = {}
local function problem(file, line, fmt, ...)
  problems[#problems + 1] = string.format("%s:%d: " .. fmt, file, line, ...)
end

-- ---- Lua sources ----------------------------------------------------------------

-- A doc block: description lines, @param and @return entries.
local function new_doc() return { text = {}, params = {}, returns = {} } end

-- The LuaLS type at the start of `s` and the text after it. A type may hold
-- spaces inside brackets ({defaults?: table, optional?: table},
-- table<string, number>), a function's return after "): " (fun(): ls.Object)
-- and further types after ", " (ls.NodeInfo[], integer): splitting at the
-- first space put half of such a type in the description.
local OPENS, CLOSES = { ["("] = true, ["{"] = true, ["["] = true, ["<"] = true },
  { [")"] = true, ["}"] = true, ["]"] = true, [">"] = true }
local function read_type(s)
  local depth, i, n = 0, 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if OPENS[c] then depth = depth + 1
    elseif CLOSES[c] then depth = depth - 1
    elseif c:match("%s") and depth <= 0 then
      local before = s:sub(1, i - 1)
      local next_start = s:find("%S", i)
      -- "fun(...): T" and "A, B": the type goes on
      if not (next_start and (before:match("%):$") or before:match(",$"))) then break end
      i = next_start - 1
    end
    i = i + 1
  end
  return s:sub(1, i - 1), (s:sub(i):gsub("^%s+", ""))
end

local function add_doc_line(doc, body)
  local pname, prest = body:match("^@param%s+([%w_%.]+%??)%s+(.*)$")
  if pname then
    local ptype, pdoc = read_type(prest)
    doc.params[#doc.params + 1] = { name = pname, type = ptype, doc = pdoc }
    return
  end
  local rrest = body:match("^@return%s+(.*)$")
  if rrest then
    local rtype, rdoc = read_type(rrest)
    doc.returns[#doc.returns + 1] = { type = rtype, doc = rdoc }
    return
  end
  doc.text[#doc.text + 1] = body
end

local function has_text(doc) return doc and #doc.text > 0 and trim(table.concat(doc.text, " ")) ~= "" end

-- Parses one Lua source into api.sections (functions, constants) and api.lviews.
local function parse_lua(api, root, rel)
  local file = rel
  local lines = lines_of(read(root .. "/" .. rel))
  local doc, in_table, in_names, view = nil, false, false, nil
  local function section()
    return api.sections[#api.sections]
  end
  local function add(kind, name, line, d, extra)
    if name:sub(1, 1) == "_" then return end
    if api.seen[name] then return end   -- first declaration wins (an alias later is the same name)
    api.seen[name] = true
    if not has_text(d) then problem(file, line, "ls.%s has no doc comment (--- above it)", name) end
    local entry = { kind = kind, name = name, doc = d or new_doc(), file = file, line = line }
    for k, v in pairs(extra or {}) do entry[k] = v end
    local s = section()
    s.items[#s.items + 1] = entry
  end
  for i, raw in ipairs(lines) do
    local line = raw
    local body = line:match("^%s*%-%-%-%s?(.*)$")
    if body then
      local title = body:match("^@section%s+(.+)$")
      local vname, vdoc = body:match("^@view%s+([%w_]+):?%s*(.*)$")
      if title then
        api.sections[#api.sections + 1] = { title = trim(title), items = {} }
        doc, view = nil, nil
      elseif vname then
        view = { name = vname, doc = vdoc, fields = {}, file = file, line = i, lua = true }
        api.lviews[#api.lviews + 1] = view
        doc = nil
      elseif view then
        local fname, ftype, fdoc = body:match("^@field%s+([%w_%[%]%.]+)%s+(%S+)%s*(.*)$")
        if fname then
          view.fields[#view.fields + 1] = { name = fname, lua_type = ftype, doc = fdoc }
          if fdoc == "" then problem(file, i, "view %s: field %s has no doc", view.name, fname) end
        else
          view.doc = trim(view.doc .. " " .. body)
        end
      else
        doc = doc or new_doc()
        add_doc_line(doc, body)
      end
    else
      view = nil
      local fname, params = line:match("^%s*function%s+ls%.([%w_]+)%s*%(([^)]*)%)")
      local aname, rhs = line:match("^%s*ls%.([%w_]+)%s*=%s*(.-)%s*$")
      local multi = line:match("^%s*ls%.[%w_]+%s*,%s*ls%.")
      local trailing = line:match("%-%-%-%s*(.+)$")
      if line:match("^local ls = {") then in_table = true
      elseif in_table and line:match("^}") then in_table = false
      elseif line:match("^for _, name in ipairs%({") then in_names = true
      elseif in_names and line:match("^}%) do") then in_names = false
      end
      local function doc_of()
        local d = doc
        if trailing then d = d or new_doc(); add_doc_line(d, trim(trailing)) end
        return d
      end
      if multi then
        problem(file, i, "declare one ls.* name per line, each with its doc comment")
      elseif fname then
        add("function", fname, i, doc, { params = params })
      elseif aname then
        local kind = aname:match("^[A-Z][A-Z0-9_]*$") and "constant" or "value"
        add(kind, aname, i, doc_of(), { rhs = rhs:gsub("%s*%-%-%-.*$", "") })
      elseif in_table then
        for cname in line:gmatch("([A-Z][A-Z0-9_]*)%s*=") do add("constant", cname, i, doc_of()) end
      elseif in_names then
        for cname in line:gmatch('"([A-Z][A-Z0-9_]*)"') do add("constant", cname, i, doc_of()) end
      end
      doc = nil
    end
  end
end

-- ---- headers: views -------------------------------------------------------------

-- "const ls_pod *const *pods" -> type "const ls_pod *const *", name "pods"
local function split_decl(decl)
  decl = trim(decl)
  local base, first, rest = decl:match("^(.-)([%w_]+%s*%[?%d*%]?)%s*(,.*)$")
  local names = {}
  if not base then
    base, first = decl:match("^(.-)([%w_]+%s*%[?%d*%]?)$")
    rest = ""
  end
  if not base then return nil end
  names[1] = first
  for extra in rest:gmatch(",%s*([%w_]+)") do names[#names + 1] = extra end
  -- the pointer stars of the first name belong to the type; later names are plain
  return trim(base), names
end

local function parse_struct_body(view, body_lines, file)
  local pending = nil
  local function add_fields(decl, doc, line)
    local ctype, names = split_decl(decl)
    if not ctype then problem(file, line, "cannot read the declaration %q", decl) return end
    if not doc or trim(doc) == "" then
      problem(file, line, "view %s: field %s has no doc comment", view.name, table.concat(names, ", "))
    end
    for _, n in ipairs(names) do
      local name, dim = n:match("^([%w_]+)%s*(%[?%d*%]?)$")
      view.fields[#view.fields + 1] = { name = name, ctype = ctype .. (dim ~= "" and dim or ""),
        doc = doc and trim(doc) or "", line = line }
    end
  end
  local k = 1
  while k <= #body_lines do
    local ln, text = body_lines[k][1], body_lines[k][2]
    local inner = text:match("^%s*struct%s*{(.-)}%s*;")
    if inner then   -- anonymous struct of a union: its fields are the view's
      local doc = text:match("/%*(.-)%*/")
      for decl in inner:gmatch("([^;]+);") do add_fields(decl, doc or pending, ln) end
      pending = nil
    elseif text:match("^%s*/%*") then   -- a comment of its own: the doc of the next field
      local comment = text
      while not comment:match("%*/") and k < #body_lines do
        k = k + 1
        comment = comment .. "\n" .. body_lines[k][2]
      end
      local c = comment:match("/%*(.-)%*/") or ""
      c = c:gsub("\n%s*%*?", " ")
      pending = trim(c)
    elseif text:match("^%s*$") then
      pending = nil
    else
      local decl = text:match("^%s*(.-)%s*;")
      local doc = text:match(";%s*/%*(.-)%*/")
      if decl then
        if doc and pending then doc = pending .. " " .. doc end
        add_fields(decl, doc or pending, ln)
      end
      pending = nil
    end
    k = k + 1
  end
end

local function parse_header_views(api, root, rel)
  local lines = lines_of(read(root .. "/" .. rel))
  local i = 1
  local comment, comment_end = nil, nil
  while i <= #lines do
    local line = lines[i]
    if line:match("^%s*/%*") then
      local start, text = i, line
      while not text:match("%*/") and i < #lines do i = i + 1; text = text .. "\n" .. lines[i] end
      comment, comment_end = text, i
      local _ = start
    elseif line:match("^typedef%s+[su][tn][ri][uo][cn]") and comment and comment_end == i - 1 then
      local c = comment:match("/%*(.-)%*/") or ""
      c = c:gsub("\n%s*%*?", " ")
      local vname, vdoc = c:match("@view%s+([%w_]+):?%s*(.*)$")
      if vname then
        local cname = line:match("typedef%s+%a+%s+([%w_]+)")
        local view = { name = vname, cname = cname, doc = trim(vdoc), fields = {}, file = rel, line = i }
        local body = {}
        local one = line:match("{(.*)}")
        if one then
          for decl in one:gmatch("([^;]+);") do body[#body + 1] = { i, decl .. ";" } end
          -- a one-line struct: its comment follows the closing name
          local doc = line:match("}%s*[%w_]+%s*;%s*/%*(.-)%*/")
          for _, b in ipairs(body) do b[2] = b[2] .. (doc and (" /*" .. doc .. "*/") or "") end
        else
          i = i + 1
          while lines[i] and not lines[i]:match("^}") do body[#body + 1] = { i, lines[i] }; i = i + 1 end
        end
        parse_struct_body(view, body, rel)
        api.views[#api.views + 1] = view
        api.view_of_c[cname] = view
      end
      comment = nil
    elseif not line:match("^%s*$") then
      comment = nil
    end
    i = i + 1
  end
end

-- ---- extension points -------------------------------------------------------------

local function parse_hooks(api, root, rel)
  local text = read(root .. "/" .. rel)
  local lines = lines_of(text)
  -- the table's hook column
  local in_table = {}
  for hook in text:gmatch('X%([%w_]+,%s*"[%w]+",%s*"([%w_]+)"') do in_table[#in_table + 1] = hook end
  local hook
  for i, line in ipairs(lines) do
    local body = line:match("^%s*%*%s?(.*)$") or line:match("^%s*/%*%s*(.*)$")
    if line:match("^%s*%*/") then body = "" end   -- the closing line
    if body then
      body = body:gsub("%s*%*/%s*$", "")
      local name, sig, ret = body:match("^@hook%s+([%w_]+)(%b())%s*(.*)$")
      if not name then   -- a plugin table field: P.events -> table
        name, ret = body:match("^@hook%s+(P%.[%w_]+)%s*(.*)$")
        sig = ""
      end
      if name then
        hook = { name = name, sig = sig, ret_sig = trim((ret:gsub("^%->%s*", ""))), text = {}, params = {},
          returns = {}, file = rel, line = i }
        api.hooks[#api.hooks + 1] = hook
        api.hook_by_name[name] = hook
      elseif hook then
        local pname, ptype, pdoc = body:match("^@param%s+([%w_]+)%s+(%S+)%s*(.*)$")
        local rval, rdoc = body:match("^@return%s+(.-):%s+(.*)$")
        local point = body:match("^@point%s+(.+)$")
        if body == "@static" then hook.static = true
        elseif pname then hook.params[#hook.params + 1] = { name = pname, type = ptype, doc = pdoc }
        elseif rval then hook.returns[#hook.returns + 1] = { value = rval, doc = rdoc }
        elseif point then hook.point = trim(point)
        elseif body:match("^@") then problem(rel, i, "unknown tag in %q", body)
        elseif #hook.returns > 0 and body ~= "" then
          local r = hook.returns[#hook.returns]
          r.doc = r.doc .. " " .. trim(body)
        elseif #hook.params > 0 and body ~= "" then
          local p = hook.params[#hook.params]
          p.doc = p.doc .. " " .. trim(body)
        elseif body ~= "" then hook.text[#hook.text + 1] = trim(body)
        end
        if line:match("%*/") then hook = nil end
      end
    else
      hook = nil
    end
  end
  for _, name in ipairs(in_table) do
    if not api.hook_by_name[name] then
      problem(rel, 1, "hook %s of the extension-point table has no @hook doc block", name)
    end
  end
  for _, h in ipairs(api.hooks) do
    if #h.text == 0 then problem(h.file, h.line, "@hook %s has no description", h.name) end
    if #h.returns == 0 then problem(h.file, h.line, "@hook %s lists no @return", h.name) end
  end
  api.table_hooks = in_table
end

-- ---- the model ------------------------------------------------------------------

M.LUA_SOURCES = { "lua/luasched.lua", "lua/luasched/fields.lua" }
M.HEADERS = { "core/include/luasched/base.h", "core/include/luasched/model.h", "core/include/luasched/cache.h",
  "core/include/luasched/objects.h" }
M.HOOKS = "core/include/luasched/extension_points.h"

function M.collect(root)
  problems = {}
  local api = { sections = { { title = "Module", items = {} } }, seen = {}, lviews = {}, views = {}, view_of_c = {},
    hooks = {}, hook_by_name = {} }
  for _, rel in ipairs(M.LUA_SOURCES) do parse_lua(api, root, rel) end
  for _, rel in ipairs(M.HEADERS) do parse_header_views(api, root, rel) end
  parse_hooks(api, root, M.HOOKS)
  -- sections without items (a heading in a file whose names all come later) are dropped
  local kept = {}
  for _, s in ipairs(api.sections) do if #s.items > 0 then kept[#kept + 1] = s end end
  api.sections = kept
  api.problems = problems
  return api
end

-- ---- types ----------------------------------------------------------------------

local SCALAR = {
  ls_str = "integer", uint8_t = "integer", uint32_t = "integer", int32_t = "integer", int = "integer",
  int64_t = "ls.int64", uint64_t = "ls.int64", bool = "boolean", ["const char *"] = "ffi.cdata*",
}

-- Whether pointer field `f` of view `v` is a list (a count beside it).
local function is_list(v, f)
  for _, g in ipairs(v.fields) do
    if g.name == "n_" .. f.name or g.name == "num_" .. f.name then return true end
  end
  if f.name == "items" or f.name == "reqs" then return true end
  return false
end

local function lua_type(api, v, f)
  if f.lua_type then return f.lua_type end
  local t = f.ctype
  local arr = t:match("%[(%d+)%]$")
  if arr then t = t:gsub("%[%d+%]$", "") end
  local base = t:gsub("^const%s+", ""):gsub("%s*%*.*$", "")
  local pointer = t:match("%*")
  local view = api.view_of_c[base]
  local elem = SCALAR[t] or SCALAR[base] or (view and ("ls." .. view.name)) or "ffi.cdata*"
  if t == "const char *" then return "ffi.cdata*" end
  if arr then return elem .. "[]" end
  if pointer then return is_list(v, f) and (elem .. "[]") or elem end
  return elem
end

-- ---- api.md ---------------------------------------------------------------------

local function md_escape(s) return (s:gsub("|", "\\|")) end
local function anchor(s) return (s:lower():gsub("[^%w_%- ]", ""):gsub(" ", "-")) end

local function signature(item)
  if item.kind == "function" then return "ls." .. item.name .. "(" .. item.params .. ")" end
  if item.kind == "value" and #item.doc.params > 0 then
    local names = {}
    for _, p in ipairs(item.doc.params) do names[#names + 1] = p.name end
    return "ls." .. item.name .. "(" .. table.concat(names, ", ") .. ")"
  end
  return "ls." .. item.name
end

function M.markdown(api)
  local out = {}
  local function w(s) out[#out + 1] = s or "" end
  w("# Plugin API reference")
  w()
  w("<!-- Generated by core/gen_docs.lua from the doc comments of " ..
    table.concat(M.LUA_SOURCES, ", ") .. ", the `@view` structs of core/include/luasched/*.h and the `@hook` " ..
    "blocks of " .. M.HOOKS .. ". Do not edit: edit those comments and rebuild (the test docs/api_reference " ..
    "fails while this file is stale). -->")
  w()
  w("Everything a plugin sees: the hooks it defines (extension points), the `luasched` module (`local ls = " ..
    "require(\"luasched\")`), and the read-only views of the cluster its hooks receive. Lists in views are " ..
    "**0-based** (`pod.tolerations[0]` .. `pod.tolerations[pod.n_tolerations - 1]`); strings are **interned " ..
    "ids** (`ls.str(id)` gives the text, `ls.intern(s)` the id); 64-bit fields are int64 cdata (`tonumber(x)`).")
  w("Editor completion: `cmake --install` puts `luasched-meta.lua` (LuaLS annotations) in " ..
    "`PREFIX/share/luasched/meta/`; see [testing](testing.md#editor-completion).")
  w()
  w("- [Extension points](#extension-points)")
  for _, s in ipairs(api.sections) do w("- [" .. s.title .. "](#" .. anchor(s.title) .. ")") end
  w("- [Views](#views)")
  w()
  w("## Extension points")
  w()
  w("A plugin is a table made by `ls.plugin(NAME, spec)`; it implements a point by defining the hook " ..
    "(a method: `function P:filter(state, pod, node)`). The table lists the hooks in the order a pod meets " ..
    "them, then batching's, loading's and the plugin table's fields. A hook that raises ends the attempt in an " ..
    "Error status naming the plugin, its file and line.")
  w()
  w("| hook | point | returns |")
  w("|---|---|---|")
  for _, h in ipairs(api.hooks) do
    w("| [`" .. h.name .. h.sig .. "`](#" .. anchor(h.name) .. ") | " .. (h.point or "") .. " | " ..
      md_escape(h.ret_sig) .. " |")
  end
  w()
  for _, h in ipairs(api.hooks) do
    w("### " .. h.name)
    w()
    local prefix = (h.name:match("^P%.") and "") or (h.static and "P." or "P:")
    w("`" .. prefix .. h.name .. h.sig .. "`" ..
      (h.ret_sig ~= "" and (" → " .. h.ret_sig) or "") .. (h.point and (" (" .. h.point .. ")") or ""))
    w()
    w(table.concat(h.text, " "))
    w()
    for _, p in ipairs(h.params) do
      w("- `" .. p.name .. "` (" .. p.type .. ")" .. (p.doc ~= "" and (": " .. p.doc) or ""))
    end
    if #h.params > 0 then w() end
    w("| returns | the runtime |")
    w("|---|---|")
    for _, r in ipairs(h.returns) do w("| " .. md_escape(r.value) .. " | " .. md_escape(r.doc) .. " |") end
    w()
  end
  for _, s in ipairs(api.sections) do
    w("## " .. s.title)
    w()
    local consts = {}
    for _, item in ipairs(s.items) do
      if item.kind == "constant" then consts[#consts + 1] = item
      else
        w("### " .. signature(item))
        w()
        w(table.concat(item.doc.text, " "))
        if #item.doc.params > 0 or #item.doc.returns > 0 then w() end
        for _, p in ipairs(item.doc.params) do
          w("- `" .. p.name .. "` (" .. p.type .. ")" .. (p.doc ~= "" and (": " .. p.doc) or ""))
        end
        for _, r in ipairs(item.doc.returns) do
          w("- returns " .. r.type .. (r.doc ~= "" and (": " .. r.doc) or ""))
        end
        w()
      end
    end
    if #consts > 0 then
      w("| constant | meaning |")
      w("|---|---|")
      for _, c in ipairs(consts) do
        w("| `ls." .. c.name .. "` | " .. md_escape(table.concat(c.doc.text, " ")) .. " |")
      end
      w()
    end
  end
  w("## Views")
  w()
  w("What hooks receive, read-only (a write raises `attempt to write to constant location`; an index " ..
    "outside 0..n-1 raises). Each view's fields, its C type (`core/include/luasched/`) and the Lua type " ..
    "the annotations give.")
  w()
  for _, v in ipairs(api.views) do
    w("### " .. v.name .. " (`" .. v.cname .. "`)")
    w()
    w(v.doc)
    w()
    w("| field | C type | Lua | meaning |")
    w("|---|---|---|---|")
    for _, f in ipairs(v.fields) do
      w("| `" .. f.name .. "` | `" .. f.ctype .. "` | " .. md_escape(lua_type(api, v, f)) .. " | " ..
        md_escape(f.doc) .. " |")
    end
    w()
  end
  for _, v in ipairs(api.lviews) do
    w("### " .. v.name)
    w()
    w(v.doc)
    w()
    w("| field | Lua | meaning |")
    w("|---|---|---|")
    for _, f in ipairs(v.fields) do
      w("| `" .. f.name .. "` | " .. md_escape(f.lua_type) .. " | " .. md_escape(f.doc) .. " |")
    end
    w()
  end
  return table.concat(out, "\n")
end

-- ---- luasched-meta.lua (LuaLS) ----------------------------------------------------

local function comment_lines(out, text)
  for _, l in ipairs(type(text) == "table" and text or { text }) do
    if l ~= "" then out[#out + 1] = "--- " .. l end
  end
end

-- A hook's parameter list as a LuaLS fun() type.
local function hook_fun(h)
  local ps = {}
  if not h.static then ps[1] = "self: ls.Plugin" end
  for _, p in ipairs(h.params) do ps[#ps + 1] = p.name .. ": " .. p.type end
  local ret = h.ret_sig ~= "" and (": " .. h.ret_sig:gsub("%s*|%s*", "|")) or ""
  return "fun(" .. table.concat(ps, ", ") .. ")" .. ret
end

function M.meta(api)
  local out = {}
  local function w(s) out[#out + 1] = s or "" end
  w("---@meta luasched")
  w("-- Generated by core/gen_docs.lua: LuaLS annotations of the luasched plugin API.")
  w("-- Point your editor's Lua.workspace.library at the folder holding this file.")
  w()
  w("---@alias ls.int64 integer an int64 cdata in LuaJIT: read it with tonumber()")
  w()
  for _, v in ipairs(api.views) do
    comment_lines(out, v.doc)
    w("---@class ls." .. v.name)
    for _, f in ipairs(v.fields) do w("---@field " .. f.name .. " " .. lua_type(api, v, f) .. " " .. f.doc) end
    w()
  end
  for _, v in ipairs(api.lviews) do
    comment_lines(out, v.doc)
    w("---@class ls." .. v.name)
    for _, f in ipairs(v.fields) do w("---@field " .. f.name .. " " .. f.lua_type .. " " .. f.doc) end
    w()
  end
  w("--- A plugin: the table ls.plugin returns; define the hooks you implement as methods.")
  w("---@class ls.Plugin")
  w("---@field name string the registered name")
  w("---@field handle ls.Handle the framework (preemption, nominations, state clones)")
  for _, h in ipairs(api.hooks) do
    local field = h.name:match("^P%.(.+)$")
    if field then
      local summary = table.concat(h.text, " "):sub(1, 160)
      w("---@field " .. field .. "? " .. (h.ret_sig ~= "" and h.ret_sig or "table") .. " " .. summary)
    else
      w("---@field " .. h.name .. "? " .. hook_fun(h) .. " " .. table.concat(h.text, " "):sub(1, 160))
    end
  end
  w()
  w("--- The framework handle a plugin gets as self.handle (lua/luasched/handle.lua): preemption,")
  w("--- nominated pods, state and NodeInfo clones, running other plugins' filters.")
  w("---@class ls.Handle")
  w()
  w("---@class luasched")
  w("local ls = {}")
  w()
  for _, s in ipairs(api.sections) do
    w("-- " .. s.title)
    for _, item in ipairs(s.items) do
      comment_lines(out, item.doc.text)
      if item.kind == "function" or (item.kind == "value" and #item.doc.params > 0) then
        local names = {}
        for _, p in ipairs(item.doc.params) do
          w("---@param " .. p.name .. " " .. p.type .. (p.doc ~= "" and (" " .. p.doc) or ""))
          names[#names + 1] = (p.name:gsub("%?$", ""))
        end
        for _, r in ipairs(item.doc.returns) do
          w("---@return " .. r.type .. (r.doc ~= "" and (" # " .. r.doc) or ""))
        end
        local params = item.kind == "function" and item.params or table.concat(names, ", ")
        w("function ls." .. item.name .. "(" .. params .. ") end")
      else
        local t = item.kind == "constant" and "integer" or (item.doc.returns[1] and item.doc.returns[1].type or "any")
        w("---@type " .. t)
        w("ls." .. item.name .. " = nil")
      end
    end
    w()
  end
  w("return ls")
  return table.concat(out, "\n") .. "\n"
end

-- ---- main -----------------------------------------------------------------------

-- Written only when the content changes (the committed api.md keeps its time).
local write = files.write_if_changed

local function main(args)
  local root = assert(args[1], "usage: gen_docs.lua SOURCE_DIR (OUT_API_MD OUT_META_LUA | --check)")
  local api = M.collect(root)
  -- The build writes what it can and warns; the test (--check) fails.
  if #api.problems > 0 then
    for _, p in ipairs(api.problems) do io.stderr:write(p, "\n") end
    io.stderr:write(string.format("gen_docs: %s%d undocumented item(s): document them beside the code\n",
      args[2] == "--check" and "" or "warning: ", #api.problems))
    if args[2] == "--check" then os.exit(1) end
  end
  local md = M.markdown(api) .. "\n"
  if args[2] == "--check" then
    -- the file in the work tree, and the committed one when this is a git checkout
    local f = io.open(root .. "/docs/plugins/api.md", "r")
    local current = f and f:read("*a")
    if f then f:close() end
    if current ~= md then
      io.stderr:write("gen_docs: docs/plugins/api.md is stale (the doc comments changed since it was " ..
        "generated): rebuild (cmake --build) and commit the docs/plugins/api.md it writes\n")
      os.exit(1)
    end
    local git = io.popen("git -C '" .. root .. "' show HEAD:docs/plugins/api.md 2>/dev/null")
    local committed = git and git:read("*a")
    if git then git:close() end
    if committed and committed ~= "" and committed ~= md then
      io.stderr:write("gen_docs: the committed docs/plugins/api.md is stale: commit the regenerated file\n")
      os.exit(1)
    end
    print(string.format("gen_docs: docs/plugins/api.md is current (%d hooks, %d sections, %d views)",
      #api.hooks, #api.sections, #api.views + #api.lviews))
    return
  end
  -- a read-only source tree does not stop the build: docs/api_reference still
  -- reports the committed file stale
  local ok, err = pcall(write, assert(args[2]), md)
  if not ok then io.stderr:write("gen_docs: warning: cannot update ", args[2], ": ", tostring(err), "\n") end
  write(assert(args[3]), M.meta(api))
end

if arg and arg[0] and arg[0]:match("gen_docs%.lua$") then main(arg) end
return M
