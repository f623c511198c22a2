-- luasched.views: the memory-safe shapes in which C data reaches plugins.
--
-- The public headers declare arrays as a count and a pointer
-- (`uint32_t n_tolerations; const ls_toleration *tolerations;`). Before the
-- runtime declares them to the FFI, rewrite() replaces every such pointer
-- field of the structs plugins read with a view: a struct of the same size
-- (`{ uintptr_t addr_; }`) whose ffi.metatype finds the count at its fixed
-- offset in the same struct and checks every index, so `pod.tolerations[i]`
-- keeps its 0-based meaning, `#pod.tolerations` is the count, an index out of
-- range raises a Lua error, and there is no pointer to do arithmetic on. An
-- array of pointers (`ni.pods`) gives references, which cannot be indexed or
-- moved either. A single pointer to a struct (`ni.node`) becomes a view that
-- forwards field reads. Everything is const, so nothing can be written.
--
-- maker() makes the same kind of view for arrays the runtime hands out
-- (ls.all_nodes(), PreScore's nodes, NormalizeScore's scores). Such a view
-- carries the generation of the call that made it (ls_view_generation, one
-- number per call from C into Lua): read, written or measured after that
-- call, it raises an error naming the plugin running, instead of touching
-- memory the scheduler freed or reused (the score buffer is reallocated when
-- a profile with more Score plugins runs). One compare per access.
--
-- No address reaches plugin code: a view's address field is an opaque
-- pointer (no number, no arithmetic, no tostring), every struct plugins read
-- prints as its type only (`tostring(pod)` is "ls_pod"), and the sandbox's
-- tostring and string.format do not print addresses of tables or functions.
local ffi = require("ffi")
local cast, istype, typeof = ffi.cast, ffi.istype, ffi.typeof
local error, type, tostring, format = error, type, tostring, string.format

local M = {}

-- An address in a view: an opaque pointer. Plugins have no ffi to cast it,
-- and its metatable refuses everything else (arithmetic, indexing, printing).
ffi.cdef("typedef struct ls_opaque_ ls_opaque_;")
do
  local function refuse() error("a view's address cannot be used", 2) end
  ffi.metatype("ls_opaque_", {
    __index = refuse, __newindex = refuse, __add = refuse, __sub = refuse, __len = refuse,
    __concat = refuse, __call = refuse, __tostring = function() return "address" end,
  })
end

-- The generation of the running call (C's, bound once the library is loaded:
-- clib.lua) and who is running (dispatch.lua).
local generation = ffi.new("uint32_t[1]", 1)
local running = function() return nil end
local running_instance = function() return nil end
function M.bind(C) generation = ffi.cast("const uint32_t *", C.ls_view_generation()) end
function M.attach(running_plugin, running_inst)
  running = running_plugin
  running_instance = running_inst or running_instance
end

local function stale(what, level)
  local name, hook = running()
  error(format("%s was handed to a plugin by an earlier call and is gone: views live only during the call that " ..
    "made them (used by plugin %s%s)", what, name and format("%q", name) or "?", hook and (" in " .. hook) or ""),
    level or 3)
end

-- The structs plugins read; ls_cycle and the rest stay as declared.
local PLUGIN_STRUCTS = {
  ls_labels = "labels", ls_requirement = "requirement", ls_selector = "selector",
  ls_node_selector = "node selector", ls_pod_affinity_term = "affinity term", ls_pod = "pod",
  ls_node_image = "node image", ls_node = "node", ls_node_info = "node info", ls_object = "object",
  ls_container = "container", ls_resource_list = "resource list",
}
-- Count fields not named n_<field> or num_<field>.
local COUNT_OF = { items = "n", reqs = "n", json = "json_len" }

local specs = {}   -- one per rewritten field
local rewritten = ""   -- the cdef as declared (M.rewrite), for the references' fields

local function count_field(body, field)
  if COUNT_OF[field] then return COUNT_OF[field] end
  for _, name in ipairs({ "n_" .. field, "num_" .. field }) do
    if body:find("[%s,]" .. name .. "[%s,;]") then return name end
  end
  return nil
end

-- One field declaration ("const T *name" or "const T *const *name") ->
-- its replacement and the view's typedef, or nil to keep it.
local function rewrite_field(struct, body, decl)
  local double = false
  local elem, field = decl:match("^%s*const%s+([%w_]+)%s*%*%s*const%s*%*%s*([%w_]+)%s*$")
  if elem then
    double = true
  else
    elem, field = decl:match("^%s*const%s+([%w_]+)%s*%*%s*([%w_]+)%s*$")
  end
  if not elem then return nil end
  local count = count_field(body, field)
  if not count and (double or not elem:find("^ls_")) then return nil end
  local vt = string.format("ls_view_%s_%s", struct, field)
  specs[#specs + 1] = {
    struct = struct, field = field, count = count, type = vt,
    elem = double and ("const " .. elem .. " *const *") or ("const " .. elem .. " *"),
    deref = double, what = PLUGIN_STRUCTS[struct] .. "." .. field,
  }
  return string.format("const %s %s", vt, field), string.format("typedef struct { const ls_opaque_ *addr_; } %s;\n", vt)
end

-- Structs the runtime builds or writes itself (ffi.new, dispatch's cycle),
-- with no struct nested in them: left as declared. In every other struct the
-- nested structs are const (the runtime fills the selectors nested in the
-- terms it builds through a cast: luasched.lua's fill_requirements).
local WRITTEN_BY_RUNTIME = {
  ls_error = true, ls_cycle = true, ls_taint = true, ls_requirement = true, ls_selector = true,
  ls_node_selector = true,
}

-- LuaJIT does not carry a const struct's qualifier into its nested structs,
-- unions and arrays (`pod.labels.n = 0` and `ni.requested.pods = 1` wrote
-- into the cache, seen by every plugin and the next pods): such fields of
-- C's structs are declared const themselves, and so are the members of the
-- ls_resources union.
local function const_nested(cdef)
  local aggregate = {}
  for name in cdef:gmatch("typedef%s+struct%s+([%w_]+)%s*%b{}") do aggregate[name] = true end
  for name in cdef:gmatch("typedef%s+union%s+([%w_]+)%s*%b{}") do aggregate[name] = true end
  cdef = cdef:gsub("(typedef%s+union%s+ls_resources%s*)(%b{})", function(head, braces)
    return head .. braces:gsub("int64_t", "const int64_t")
  end)
  return (cdef:gsub("(typedef%s+struct%s+([%w_]+)%s*)(%b{})", function(head, struct, braces)
    if WRITTEN_BY_RUNTIME[struct] then return nil end
    local body = braces:sub(2, -2)
    if body:find("{", 1, true) then return nil end
    local decls = {}
    for decl in body:gmatch("[^;]+") do
      local ty = decl:match("^%s*([%w_]+)%s")
      if ty and ty ~= "const" and not decl:find("*", 1, true) and (aggregate[ty] or decl:find("%[")) then
        decl = decl:gsub("^(%s*)", "%1const ")
      end
      decls[#decls + 1] = decl
    end
    return head .. "{" .. table.concat(decls, ";") .. "}"
  end))
end

--- The cdef text with the plugin structs' pointer fields made views, and the
--- nested data of C's structs const.
function M.rewrite(cdef)
  cdef = const_nested(cdef:gsub("/%*.-%*/", ""))
  rewritten = cdef:gsub("(typedef%s+struct%s+([%w_]+)%s*)(%b{})", function(head, struct, braces)
    if not PLUGIN_STRUCTS[struct] then return nil end
    local body = braces:sub(2, -2)
    local pre, decls = {}, {}
    for decl in body:gmatch("[^;]+") do
      local new, typedef = rewrite_field(struct, body, decl)
      if new then pre[#pre + 1] = typedef end
      decls[#decls + 1] = new or decl
    end
    return table.concat(pre) .. head .. "{" .. table.concat(decls, ";") .. "}"
  end)
  return rewritten
end

-- ---- errors -------------------------------------------------------------------

local function out_of_range(what, i, n)
  error(format("index %s out of range for %s (%d elements: 0..%d)", type(i) == "string" and format("%q", i)
    or tostring(i), what, n, n - 1), 2)
end

local function read_only(v, k)
  local _ = v
  error(format("cannot assign %s: data from the scheduler is read-only", tostring(k)), 2)
end

-- ---- views of fields ----------------------------------------------------------

local u32p, bytep = typeof("const uint32_t *"), typeof("const uint8_t *")

local function array_mt(spec, delta)
  local pp = typeof(spec.elem .. "*")   -- the view's address read as a pointer to the elements
  local what = spec.what
  local function len(v) return cast(u32p, cast(bytep, v) + delta)[0] end
  local index
  if spec.deref then
    index = function(v, i)
      local n = cast(u32p, cast(bytep, v) + delta)[0]
      if type(i) == "number" and i >= 0 and i < n then return cast(pp, v)[0][i][0] end
      if type(i) == "string" then error(format("%s has no field %q (it is a list: index it 0..n-1)", what, i), 2) end
      return out_of_range(what, i, n)
    end
  else
    index = function(v, i)
      local n = cast(u32p, cast(bytep, v) + delta)[0]
      if type(i) == "number" and i >= 0 and i < n then return cast(pp, v)[0][i] end
      if type(i) == "string" then error(format("%s has no field %q (it is a list: index it 0..n-1)", what, i), 2) end
      return out_of_range(what, i, n)
    end
  end
  return { __index = index, __newindex = read_only, __len = len, __tostring = function() return what end }
end

local function single_mt(spec)
  local pp = typeof(spec.elem .. "*")
  return {
    -- no type check on k: a number key is refused by the FFI itself ("cannot
    -- be indexed with 'number'"), and the JIT compiles this to one load
    __index = function(v, k)
      return cast(pp, v)[0][k]
    end,
    __newindex = read_only,
    __tostring = function() return spec.what end,
    __eq = function(a, b)
      return istype(spec.ctype, a) and istype(spec.ctype, b) and cast(pp, a)[0] == cast(pp, b)[0]
    end,
  }
end

local single_types = {}   -- ctype of a single view -> pointer-to-pointer ctype

local install_refs

--- Declares the metatypes of the rewritten fields and of the references to
--- pods and NodeInfos (after ffi.cdef).
function M.install()
  install_refs()
  for _, spec in ipairs(specs) do
    spec.ctype = typeof(spec.type)
    if spec.count then
      local delta = ffi.offsetof(spec.struct, spec.count) - ffi.offsetof(spec.struct, spec.field)
      ffi.metatype(spec.ctype, array_mt(spec, delta))
    else
      ffi.metatype(spec.ctype, single_mt(spec))
      single_types[#single_types + 1] = { spec.ctype, typeof(spec.elem .. "*") }
    end
  end
end

-- ---- arrays the runtime hands out -----------------------------------------------

local array_types = {}

local function array_type(elem, deref, writable, checker, wrap)
  local key = elem .. (deref and "&" or "") .. (writable and "w" or "") .. (wrap and "r" or "")
  local ct = array_types[key]
  if ct then return ct end
  local name = "ls_arr_" .. key:gsub("[^%w]", "_")
  ffi.cdef(string.format("typedef struct { const ls_opaque_ *addr_; const uint32_t n_; const uint32_t gen_; } %s;",
    name))
  local ptr = typeof(elem)
  local what = "list"
  -- gen_ 0: a view of memory the plugin owns (ls.new_preferred_terms), for good
  local mt = {
    __len = function(v)
      if v.gen_ ~= 0 and v.gen_ ~= generation[0] then stale(what) end
      return v.n_
    end,
    __tostring = function() return what end,
  }
  if deref and wrap then   -- elements handed out as references (M.refs below)
    mt.__index = function(v, i)
      local n = v.n_
      if v.gen_ ~= 0 and v.gen_ ~= generation[0] then stale(what) end
      if type(i) == "number" and i >= 0 and i < n then return wrap(cast(ptr, v.addr_)[i]) end
      return out_of_range(what, i, n)
    end
  elseif deref then
    mt.__index = function(v, i)
      local n = v.n_
      if v.gen_ ~= 0 and v.gen_ ~= generation[0] then stale(what) end
      if type(i) == "number" and i >= 0 and i < n then return cast(ptr, v.addr_)[i][0] end
      return out_of_range(what, i, n)
    end
  else
    mt.__index = function(v, i)
      local n = v.n_
      if v.gen_ ~= 0 and v.gen_ ~= generation[0] then stale(what) end
      if type(i) == "number" and i >= 0 and i < n then return cast(ptr, v.addr_)[i] end
      return out_of_range(what, i, n)
    end
  end
  if writable then
    mt.__newindex = function(v, i, x)
      local n = v.n_
      if v.gen_ ~= 0 and v.gen_ ~= generation[0] then stale(what) end
      if not (type(i) == "number" and i >= 0 and i < n) then return out_of_range(what, i, n) end
      cast(ptr, v.addr_)[i] = checker(x)
    end
  else
    mt.__newindex = read_only
  end
  ct = ffi.metatype(name, mt)
  array_types[key] = ct
  return ct
end

local keep = setmetatable({}, { __mode = "k" })   -- view -> what its memory belongs to

--- A maker of bounds-checked views of arrays whose pointer type is `elem`:
--- make(ptr, n [, owner]) gives a view of n elements at ptr. With an `owner`
--- the memory is the plugin's (owner stays alive as long as the view) and the
--- view lasts; without, it is the scheduler's and the view is usable only
--- during the call that made it. `deref`: the elements are pointers, handed
--- out as references. `checker`: the view is writable and stores checker(x)
--- (NormalizeScore's scores). Build the maker once: make() only allocates the view.
function M.maker(elem, deref, checker, wrap)
  local ct = array_type(elem, deref, checker ~= nil, checker, wrap)
  local opaque = typeof("const ls_opaque_ *")
  return function(ptr, n, owner, gen)
    local v = ct(cast(opaque, ptr), n, owner ~= nil and 0 or gen or generation[0])
    if owner ~= nil then keep[v] = owner end
    return v
  end
end

-- ---- references: pods, NodeInfos and everything read through them ---------------

-- A reference to a pod or a NodeInfo carries the generation of the call that
-- made it, as the arrays' views do: read after that call (a plugin kept it in
-- a module table), it raises an error naming the plugin instead of reading
-- memory the cache freed or reused. Everything read through a reference that
-- is not a number is a reference of the same generation: a nested struct
-- (`pod.labels`, `ni.requested`), a list field (`pod.tolerations`, and its
-- elements), the NodeInfo's node (`ni.node`) and pods (`ni.pods[i]`), a
-- resource vector's slots (`ni.requested.v`). So no part of a pod kept past
-- its call can be read or passed to the runtime. The runtime hands these to
-- the plugins that are not built-in (profiles.lua wraps their hooks'
-- arguments, dispatch.lua a hint's, handle.lua the nominated pods and clones);
-- built-in plugins get the structs themselves. Once the JIT compiled a loop,
-- the references read through are not allocated (allocation sinking).

local bytep_t, voidp = typeof("const uint8_t *"), typeof("const void *")
local opaque_t = typeof("const ls_opaque_ *")
local fields_of                -- struct or union -> { field -> { off, type, n } } (parsed once)
local members_of = {}          -- struct or union -> the names of all its fields (a misspelling's hint)
local aggregate = {}           -- names of the structs and unions
local struct_ref, view_ref     -- (below) constructors of references, by struct and by view spec
local ref_by_id = {}           -- ctype id of a reference type -> function(v, up) giving what is behind it

-- The fields of every struct and union that are not numbers: nested structs,
-- views and inline arrays (a nested anonymous struct's fields are numbers).
local function parse_fields()
  fields_of = {}
  for _, spec in ipairs(specs) do aggregate[spec.type] = true end
  for kind, name in rewritten:gmatch("typedef%s+(%a+)%s+([%w_]+)%s*%b{}") do
    if kind == "struct" or kind == "union" then aggregate[name] = true end
  end
  for _, name, braces in rewritten:gmatch("typedef%s+(%a+)%s+([%w_]+)%s*(%b{})") do
    local fields, body = {}, braces:sub(2, -2):gsub("struct%s*%b{}%s*;", "")
    local members = {}
    for decl in body:gmatch("[^;]+") do
      decl = decl:gsub("const%s+", "")
      members[#members + 1] = decl:match("([%w_]+)%s*%[?[%s%d]*%]?%s*$")
      local ty, field, n = decl:match("^%s*([%w_]+)%s+([%w_]+)%s*%[%s*(%d+)%s*%]%s*$")
      if not ty then ty, field = decl:match("^%s*([%w_]+)%s+([%w_]+)%s*$") end
      if ty and (n or aggregate[ty]) then
        fields[field] = { off = ffi.offsetof(name, field), type = ty, n = n and tonumber(n) }
      end
    end
    fields_of[name] = fields
    members_of[name] = members
  end
end

-- A field `k` struct does not have: the error LuaJIT gives, at the plugin's
-- line (`level`), with the closest field named.
-- The two a newcomer mixes up: a NodeInfo read as the node (node.labels for
-- node.node.labels), and a pod read as a NodeInfo (a hook defined with
-- P.score(...) instead of P:score(...) gets its arguments one place off).
local function has_member(struct, k)
  for _, m in ipairs(members_of[struct] or {}) do
    if m == k then return true end
  end
  return false
end
local function mixed_up(struct, k)
  if struct == "ls_node_info" and has_member("ls_node", k) then
    return format("; this is a NodeInfo: the node's own fields are under .node (.node.%s)", k)
  end
  if struct == "ls_resources" and has_member("ls_resource_list", k) then   -- ls.quantity(pod.requests, ...)
    return "; this is a Resources vector (pod.requests, ni.allocatable), not a resource list "
      .. "(container.requests): read .v[ls.resource_index(name)]"
  end
  if struct == "ls_pod" and has_member("ls_node_info", k) then
    return "; this is a pod, not a NodeInfo: a hook defined as P.hook(...) instead of P:hook(...) "
      .. "gets its arguments one place off"
  end
end

-- The runtime's own Lua files ("@.../lua/luasched"): an ls.* function that
-- read a view it was wrongly given is not where the mistake is.
local runtime_source = "@" .. (debug.getinfo(1, "S").source:match("^@(.*/)luasched/[^/]*$") or "\0") .. "luasched"

local function no_member(struct, k, level)
  local hint = mixed_up(struct, k)
  if not hint then
    hint = require("luasched.suggest").did_you_mean(k, members_of[struct] or {})
    hint = hint and format("; did you mean '%s'?", hint) or ""
  end
  local at = level + 1   -- error()'s level of the frame that indexed; past the runtime's frames
  while true do
    local info = debug.getinfo(at, "S")
    if not info or info.source:sub(1, #runtime_source) ~= runtime_source then break end
    at = at + 1
  end
  error(format("'struct %s' has no member named '%s'%s", struct, k, hint), at)
end

-- The reference type `name` ({ opaque address, generation }) with metatable
-- `mt`; `behind(v)` gives what the reference stands for (for C calls).
local function ref_ctype(name, mt, what, behind)
  ffi.cdef(format("typedef struct %s { const ls_opaque_ *addr_; const uint32_t gen_; } %s;", name, name))
  local ct = ffi.metatype(name, mt)
  ref_by_id[tonumber(ct)] = function(v, up)
    if v.gen_ ~= generation[0] then stale(what, 3 + up) end
    return behind(v)
  end
  return ct
end

-- Two references (or a reference and a struct) are equal when they stand for
-- the same memory; no memory is read, so a stale reference compares too
-- (`kept == nil` is false, never an error).
local function address(x)
  if type(x) ~= "cdata" then return nil end
  if ref_by_id[tonumber(typeof(x))] then return cast(voidp, x.addr_) end
  return cast(voidp, x)
end
local function same(a, b)
  local x, y = address(a), address(b)
  return x ~= nil and y ~= nil and x == y
end

local function refused(v, k)
  local _ = v
  error(format("cannot assign %s: data from the scheduler is read-only", tostring(k)), 2)
end

-- function(base, gen) reading field `f` (of fields_of) at `base` as a reference.
local function field_reader(f)
  local off = f.off
  if f.n then   -- an inline array of numbers (ls_resources.v)
    local make = view_ref({ inline = f.n, elem = "const " .. f.type .. " *", what = "resources.v" })
    return function(base, gen) return (make(base + off, gen)) end
  end
  for _, spec in ipairs(specs) do
    if spec.type == f.type then
      if spec.count then
        local make = view_ref(spec)
        return function(base, gen) return (make(base + off, gen)) end
      end
      -- a single pointer (ni.node): the reference is to the struct it points to
      local make, pp = struct_ref(spec.elem:match("([%w_]+)%s*%*$")), typeof(spec.elem .. "*")
      return function(base, gen)
        local p = cast(pp, base + off)[0]
        if p == nil then return nil end
        return (make(p, gen))
      end
    end
  end
  local make = struct_ref(f.type)
  return function(base, gen) return (make(base + off, gen)) end
end

local struct_refs = {}

--- A constructor make(p, gen) of references to struct (or union) `struct` at
--- pointer p, of generation gen (default: the running call's).
struct_ref = function(struct)
  local made = struct_refs[struct]
  if made then return made end
  local name, pp = struct .. "_ref", typeof("const " .. struct .. " *")
  local what = PLUGIN_STRUCTS[struct] or struct:gsub("^ls_", ""):gsub("_", " ")
  -- field -> its reader, or false for a number: made on first use (a state
  -- declares only the references its plugins read through)
  local fields = fields_of[struct] or {}
  local readers = setmetatable({}, { __index = function(t, k)
    local f = fields[k]
    -- a name that is no field raises here, at the plugin's line (the
    -- reference's __index called this), instead of inside this file
    if f == nil and type(k) == "string" and not ffi.offsetof(struct, k) then no_member(struct, k, 3) end
    local r = f ~= nil and field_reader(f)
    t[k] = r
    return r
  end })
  local ct
  ct = ref_ctype(name, {
    __index = function(v, k)
      if v.gen_ ~= generation[0] then stale(what) end
      local r = readers[k]
      if r then return (r(cast(bytep_t, v.addr_), v.gen_)) end
      if type(k) ~= "string" then error(format("'struct %s' cannot be indexed with '%s'", struct, type(k)), 2) end
      return cast(pp, v.addr_)[0][k]
    end,
    __newindex = function(v, k)
      if v.gen_ ~= generation[0] then stale(what) end
      return refused(v, k)   -- a tail call: the error names the plugin's line
    end,
    __eq = same,
    __tostring = function() return struct end,
  }, what, function(v) return cast(pp, v.addr_)[0] end)
  made = function(p, gen) return (ct(cast(opaque_t, p), gen or generation[0])) end
  struct_refs[struct] = made
  return made
end

local view_refs = {}

--- A constructor make(p, gen) of references to the view field at p (a list
--- field of a struct: `spec` of specs) or to an inline array of `spec.inline`
--- numbers at p. Their elements are numbers or references.
view_ref = function(spec)
  local key = spec.type or spec.elem .. spec.inline
  local made = view_refs[key]
  if made then return made end
  local what, inline = spec.what, spec.inline
  local elem = spec.elem:match("^const%s+([%w_]+)")
  local elem_ref = aggregate[elem] and struct_ref(elem)
  local elems_pp = typeof(spec.elem .. "*")   -- the view's address read as a pointer to the elements
  local elem_p = typeof(spec.elem)
  local delta = spec.count and ffi.offsetof(spec.struct, spec.count) - ffi.offsetof(spec.struct, spec.field)
  local function len(v)
    if inline then return inline end
    return cast(u32p, cast(bytep_t, v.addr_) + delta)[0]
  end
  local function elements(v)
    if inline then return cast(elem_p, v.addr_) end
    return cast(elems_pp, v.addr_)[0]
  end
  local ct = ref_ctype((spec.type or ("ls_inline_" .. elem)) .. "_ref", {
    __len = function(v)
      if v.gen_ ~= generation[0] then stale(what) end
      return len(v)
    end,
    __index = function(v, i)
      if v.gen_ ~= generation[0] then stale(what) end
      local n = len(v)
      if type(i) == "number" and i >= 0 and i < n then
        local p = elements(v)
        if spec.deref then return (elem_ref(p[i], v.gen_)) end
        if elem_ref then return (elem_ref(p + i, v.gen_)) end
        return p[i]
      end
      if type(i) == "string" then error(format("%s has no field %q (it is a list: index it 0..n-1)", what, i), 2) end
      return out_of_range(what, i, n)
    end,
    __newindex = function(v, k)
      if v.gen_ ~= generation[0] then stale(what) end
      return refused(v, k)   -- a tail call: the error names the plugin's line
    end,
    __eq = same,
    __tostring = function() return what end,
  }, what, function(v)
    if inline then return cast(elem_p, v.addr_) end
    return cast(typeof("const " .. spec.type .. " *"), v.addr_)[0]
  end)
  made = function(p, gen) return (ct(cast(opaque_t, p), gen or generation[0])) end
  view_refs[key] = made
  return made
end

--- The struct (or view) behind a reference, its generation checked, for C
--- calls; anything else is returned as it is (the FFI checks its type). A
--- stale reference raises, blaming the code `up` frames above unwrap's caller
--- (default 1: the plugin that called the ls.* function calling unwrap).
function M.unwrap(v, up)
  if type(v) ~= "cdata" then return v end
  local behind = ref_by_id[tonumber(typeof(v))]
  if behind then return behind(v, up or 1) end   -- a tail call: unwrap's frame is gone
  for i = 1, #single_types do
    local s = single_types[i]
    if istype(s[1], v) then return cast(s[2], v)[0] end
  end
  return v
end

--- unwrap for arguments of one struct type (`struct`): one type check for
--- the structs built-in plugins pass (ls.label's labels on a hot path).
function M.unwrap_as(struct)
  if not fields_of then parse_fields() end
  struct_ref(struct)
  local ct = typeof(struct .. "_ref")
  local behind = ref_by_id[tonumber(ct)]
  return function(v)
    if istype(ct, v) then return behind(v, 1) end   -- a tail call, as unwrap's
    return v
  end
end

--- A reference to `p` (a struct of type `struct`, or a pointer to one; nil
--- stays nil) for the running call: views.ref("ls_node")(p).
function M.ref(struct)
  if not fields_of then parse_fields() end
  local make = struct_ref(struct)
  local ct = typeof(struct .. "_ref")
  return function(p)
    if p == nil or istype(ct, p) then return p end
    return (make(p))
  end
end

local plain_nodes, ref_nodes

--- Declares the references' types (after ffi.cdef, from M.install):
--- M.pod_ref(p), M.node_info_ref(p), and the list of NodeInfos whose
--- elements are references.
install_refs = function()
  parse_fields()
  M.pod_ref = M.ref("ls_pod")
  M.node_info_ref = M.ref("ls_node_info")
  M.object_ref = M.ref("ls_object")
  plain_nodes = M.maker("const ls_node_info *const *", true)
  ref_nodes = M.maker("const ls_node_info *const *", true, nil, M.node_info_ref)
end

-- Whether the plugin whose code runs is one that gets references (not a
-- built-in; the runtime's own code gets the structs).
-- The loader is required on first use (it requires this module), then kept:
-- `require` on every call stopped the JIT in ImageLocality's per-node score
-- (ls.all_nodes), four times slower (bench SchedulingBasic).
local is_builtin
local function wants_refs()
  local inst = running_instance()
  if inst == nil then return false end
  is_builtin = is_builtin or require("luasched.loader").is_builtin
  return not is_builtin(inst)   -- never inst.builtin: the plugin's
end

--- For the ls.* functions that hand out a pod, a NodeInfo or an object
--- (ls.find_node, ls.waiting_pods, ls.queued_pod, ls.objects, ls.find_object):
--- a reference when the running plugin is not built-in, else `p` itself.
M.wants_refs = wants_refs
--- Whether v is a reference (what plugins that are not built-in hold).
function M.is_ref(v) return type(v) == "cdata" and ref_by_id[tonumber(typeof(v))] ~= nil end
function M.generation() return generation[0] end
function M.pod_for_plugin(p) if p ~= nil and wants_refs() then return M.pod_ref(p) end return p end
function M.object_for_plugin(p) if p ~= nil and wants_refs() then return M.object_ref(p) end return p end
function M.node_info_for_plugin(p) if p ~= nil and wants_refs() then return M.node_info_ref(p) end return p end

--- A list of n NodeInfos at `ptr` (ls.all_nodes()) whose elements are
--- references when the running plugin is not built-in.
function M.nodes_for_plugin(ptr, n)
  return (wants_refs() and ref_nodes or plain_nodes)(ptr, n)
end

--- The same list as `nodes` (PreScore's, NormalizeScore's) with references for
--- elements (profiles.lua's guard of a plugin that is not built-in).
function M.ref_node_list(nodes)
  if nodes == nil then return nil end
  return ref_nodes(nodes.addr_, nodes.n_, nil, nodes.gen_)
end

-- Every struct plugins can reach prints as its type, never its address
-- (tostring(pod) gave "cdata<const struct 123 &>: 0x55d0...").
function M.hide_addresses(cdef)
  for name in cdef:gmatch("typedef%s+struct%s+([%w_]+)%s*%b{}") do
    if not name:find("^ls_view_") and not name:find("^ls_arr_") then
      pcall(ffi.metatype, name, { __tostring = function() return name end })
    end
  end
  for name in cdef:gmatch("typedef%s+union%s+([%w_]+)%s*%b{}") do
    pcall(ffi.metatype, name, { __tostring = function() return name end })
  end
end

--- For a C call: a function(v) giving the pointer and the length behind a
--- view of field `field` of `struct` (nil when v is not such a view).
function M.accessor(struct, field)
  for _, spec in ipairs(specs) do
    if spec.struct == struct and spec.field == field then
      local ct, pp = spec.ctype, typeof(spec.elem .. "*")
      local delta = ffi.offsetof(spec.struct, spec.count) - ffi.offsetof(spec.struct, spec.field)
      return function(v, up)
        v = M.unwrap(v, (up or 1) + 1)   -- a reference's view (pod.tolerations of a pod reference)
        if istype(ct, v) then return cast(pp, v)[0], cast(u32p, cast(bytep, v) + delta)[0] end
        return nil
      end
    end
  end
  error("no view for " .. struct .. "." .. field)
end

--- Points view field `field` of a struct the runtime built (ffi.new) at `ptr`.
function M.set(obj, struct, field, ptr)
  cast("uintptr_t *", cast("uint8_t *", obj) + ffi.offsetof(struct, field))[0] = cast("uintptr_t", ptr)
end

return M
