-- luasched.cel: the subset of CEL that DRA device selectors use
-- (DeviceClass spec.selectors[].cel.expression, a claim request's
-- selectors), compiled once into a Lua function of a device.
--
-- Supported (anything else is a compile error naming what is supported,
-- never a silent true):
--   device.driver
--   device.attributes["domain"].name   (a domain map: `"name" in ...`, has(...))
--   device.capacity["domain"].name     (a quantity)
--   literals: "strings" 'strings', integers, true, false, [lists]
--   == != on strings, ints, bools, versions and quantities
--   < <= > >= on strings, ints and bools (CEL's ordering; versions and
--     quantities have none in CEL: use their methods)
--   && || ! ( ), `x in [list]`, `"name" in device.attributes["domain"]`
--   quantity("40Gi"), semver("1.2.3") and their methods compareTo(x) (-1, 0,
--     1), isGreaterThan(x), isLessThan(x); quantity asInteger()
--   has(device.attributes["domain"].name)
-- Evaluation follows CEL: a missing attribute is the runtime error "no such
-- key: NAME" (guard it with has() or `in`), comparing values of different
-- types is "no such overload", && and || absorb an error when the other side
-- decides the result. A selector must evaluate to a bool.
local M = {}

-- ---- values -------------------------------------------------------------

-- The metatables are hidden from plugins (__metatable = false): a plugin that
-- requires luasched.cel shares them with DynamicResources, and could
-- otherwise replace their methods for it. This module reads them raw.
local getmetatable = debug.getmetatable
local quantity_mt = { __name = "quantity", __metatable = false }
local version_mt = { __name = "version", __metatable = false }
local domains_mt = { __name = "attributes", __metatable = false }   -- device.attributes / device.capacity
local map_mt = { __name = "map", __metatable = false }               -- one domain's names

local SUFFIX = {
  n = 1e-9, u = 1e-6, m = 1e-3, [""] = 1, k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15, E = 1e18,
  Ki = 2 ^ 10, Mi = 2 ^ 20, Gi = 2 ^ 30, Ti = 2 ^ 40, Pi = 2 ^ 50, Ei = 2 ^ 60,
}

--- A Kubernetes quantity ("40Gi", "500m", "1e3") as a number of base units;
--- nil for text that is not one.
function M.parse_quantity(s)
  if type(s) ~= "string" then return nil end
  local sign, num, rest = s:match("^([+-]?)([%d%.]+)(.*)$")
  if not num or not tonumber(num) then return nil end
  local v = tonumber(num) * (sign == "-" and -1 or 1)
  local mult = SUFFIX[rest]
  if mult then return v * mult end
  local exp = rest:match("^[eE]([+-]?%d+)$")
  if exp then return v * 10 ^ tonumber(exp) end
  return nil
end

function M.quantity(s)
  local v = M.parse_quantity(s)
  if v == nil then error({ cel = "quantity(" .. tostring(s) .. "): not a valid quantity" }) end
  return setmetatable({ v = v, text = s }, quantity_mt)
end

--- A semantic version ("1.2.3", "1.2.3-rc.1"); raises a CEL error when invalid.
function M.semver(s)
  local maj, min, pat, rest = tostring(s):match("^v?(%d+)%.(%d+)%.(%d+)(.*)$")
  if not maj then error({ cel = "semver(" .. tostring(s) .. "): not a valid semantic version" }) end
  local pre = rest:match("^%-([%w%.%-]+)") or ""
  return setmetatable({ tonumber(maj), tonumber(min), tonumber(pat), pre = pre, text = s }, version_mt)
end

local function cmp(a, b) return a < b and -1 or (a > b and 1 or 0) end

local function compare_prerelease(a, b)
  if a == b then return 0 end
  if a == "" then return 1 end        -- a release ranks above its pre-releases
  if b == "" then return -1 end
  local ia, ib = a:gmatch("[^%.]+"), b:gmatch("[^%.]+")
  while true do
    local x, y = ia(), ib()
    if x == nil and y == nil then return 0 end
    if x == nil then return -1 end
    if y == nil then return 1 end
    local nx, ny = tonumber(x), tonumber(y)
    local c
    if nx and ny then c = cmp(nx, ny)
    elseif nx then c = -1
    elseif ny then c = 1
    else c = cmp(x, y) end
    if c ~= 0 then return c end
  end
end

local function compare_versions(a, b)
  for i = 1, 3 do
    if a[i] ~= b[i] then return cmp(a[i], b[i]) end
  end
  return compare_prerelease(a.pre, b.pre)
end

local function kind(v)
  local t = type(v)
  if t == "number" then return "int" end
  if t == "boolean" then return "bool" end
  if t ~= "table" then return t end
  local mt = getmetatable(v)
  if mt == quantity_mt then return "quantity" end
  if mt == version_mt then return "version" end
  if mt == map_mt or mt == domains_mt then return "map" end
  return "list"
end

local function overload_error(op, a, b)
  error({ cel = string.format("no such overload: %s %s %s", kind(a), op, kind(b)) })
end

local function equal(a, b)
  local ka, kb = kind(a), kind(b)
  if ka ~= kb then overload_error("==", a, b) end
  if ka == "quantity" then return a.v == b.v end
  if ka == "version" then return compare_versions(a, b) == 0 end
  if ka == "list" or ka == "map" then error({ cel = "== on lists and maps is not supported by this subset" }) end
  return a == b
end

local ORDERED = { string = true, int = true, bool = true }
local function order(op, a, b)
  local ka, kb = kind(a), kind(b)
  if ka ~= kb or not ORDERED[ka] then overload_error(op, a, b) end
  if ka == "bool" then a, b = a and 1 or 0, b and 1 or 0 end
  if op == "<" then return a < b elseif op == "<=" then return a <= b
  elseif op == ">" then return a > b else return a >= b end
end

local function member(x, coll)
  local k = kind(coll)
  if k == "list" then
    for i = 1, #coll do
      if kind(coll[i]) == kind(x) and equal(coll[i], x) then return true end
    end
    return false
  end
  if k == "map" then
    if type(x) ~= "string" then overload_error("in", x, coll) end
    return coll.items[x] ~= nil
  end
  overload_error("in", x, coll)
end

local METHODS = {
  compareTo = function(a, b)
    if kind(a) == "quantity" and kind(b) == "quantity" then return cmp(a.v, b.v) end
    if kind(a) == "version" and kind(b) == "version" then return compare_versions(a, b) end
    overload_error("compareTo", a, b)
  end,
  isGreaterThan = function(a, b)
    if kind(a) == "quantity" and kind(b) == "quantity" then return a.v > b.v end
    if kind(a) == "version" and kind(b) == "version" then return compare_versions(a, b) > 0 end
    overload_error("isGreaterThan", a, b)
  end,
  isLessThan = function(a, b)
    if kind(a) == "quantity" and kind(b) == "quantity" then return a.v < b.v end
    if kind(a) == "version" and kind(b) == "version" then return compare_versions(a, b) < 0 end
    overload_error("isLessThan", a, b)
  end,
  asInteger = function(a)
    if kind(a) ~= "quantity" then overload_error("asInteger", a, nil) end
    if a.v ~= math.floor(a.v) then error({ cel = "asInteger: " .. a.text .. " is not an integer" }) end
    return a.v
  end,
}
local METHOD_ARGS = { compareTo = 1, isGreaterThan = 1, isLessThan = 1, asInteger = 0 }

-- ---- the device as CEL sees it -----------------------------------------------

local function attribute_value(a, where)
  if type(a) ~= "table" then return nil end
  if a.string ~= nil then return a.string end
  if a.int ~= nil then return a.int end
  if a.bool ~= nil then return a.bool end
  if a.version ~= nil then return M.semver(a.version) end
  error({ cel = "attribute " .. where .. ": unsupported value type (string, int, bool, version are)" })
end

--- The CEL view of a device of a ResourceSlice (`driver`: the slice's
--- spec.driver; `device`: one spec.devices[] entry). Attribute and capacity
--- names without a domain are in the driver's domain.
function M.device(driver, device)
  local function domains(section, value_of)
    local by_domain = {}
    for qname, v in pairs(section or {}) do
      local domain, name = qname:match("^(.*)/([^/]+)$")
      if not domain then domain, name = driver, qname end
      by_domain[domain] = by_domain[domain] or {}
      by_domain[domain][name] = { raw = v, value_of = value_of, where = qname }
    end
    return setmetatable({ domains = by_domain }, domains_mt)
  end
  return {
    driver = driver,
    attributes = domains(device.attributes, attribute_value),
    capacity = domains(device.capacity, function(c, where)
      local q = type(c) == "table" and M.parse_quantity(c.value)
      if not q then error({ cel = "capacity " .. where .. ": expected {value: QUANTITY}" }) end
      return setmetatable({ v = q, text = c.value }, quantity_mt)
    end),
  }
end

local function index_domains(d, key)
  if type(key) ~= "string" then error({ cel = "attribute domains are strings" }) end
  return setmetatable({ items = d.domains[key] or {} }, map_mt)   -- an unknown domain is an empty map
end

local function select_field(m, name)
  local e = m.items[name]
  if e == nil then error({ cel = "no such key: " .. name }) end
  if e.value == nil then e.value = e.value_of(e.raw, e.where) end
  return e.value
end

-- ---- lexer ---------------------------------------------------------------

local SUPPORTED = "supported: device.driver, device.attributes[\"domain\"].name, device.capacity[\"domain\"].name, "
  .. "string/int/bool literals and lists, == != < <= > >= && || ! in, quantity(), semver(), has(), "
  .. "compareTo/isGreaterThan/isLessThan/asInteger"

local function compile_error(msg) error({ compile = msg }) end

local function lex(src)
  local toks, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c == '"' or c == "'" then
      local j, buf = i + 1, {}
      while j <= n and src:sub(j, j) ~= c do
        local ch = src:sub(j, j)
        if ch == "\\" then
          local nx = src:sub(j + 1, j + 1)
          buf[#buf + 1] = ({ n = "\n", t = "\t", ["\\"] = "\\", ['"'] = '"', ["'"] = "'" })[nx]
            or compile_error("unsupported escape \\" .. nx .. " in a string literal")
          j = j + 2
        else
          buf[#buf + 1] = ch
          j = j + 1
        end
      end
      if j > n then compile_error("unterminated string literal") end
      toks[#toks + 1] = { t = "str", v = table.concat(buf), at = i }
      i = j + 1
    elseif c:match("%d") then
      local s, e = src:find("^%d+", i)
      local nx = src:sub(e + 1, e + 1)
      if nx == "." or nx == "u" or nx == "e" or nx == "E" or src:sub(i, i + 1):lower() == "0x" then
        compile_error("only decimal integer literals are supported (at offset " .. (i - 1) .. ")")
      end
      toks[#toks + 1] = { t = "num", v = tonumber(src:sub(s, e)), at = i }
      i = e + 1
    elseif c:match("[%a_]") then
      local s, e = src:find("^[%w_]+", i)
      local word = src:sub(s, e)
      toks[#toks + 1] = { t = (word == "in" or word == "true" or word == "false" or word == "null") and word or "id",
                          v = word, at = i }
      i = e + 1
    else
      local two = src:sub(i, i + 1)
      if two == "==" or two == "!=" or two == "<=" or two == ">=" or two == "&&" or two == "||" then
        toks[#toks + 1] = { t = two, at = i }
        i = i + 2
      elseif ("<>!()[].,"):find(c, 1, true) then
        toks[#toks + 1] = { t = c, at = i }
        i = i + 1
      else
        compile_error("unsupported character '" .. c .. "' at offset " .. (i - 1))
      end
    end
  end
  toks[#toks + 1] = { t = "eof", at = n + 1 }
  return toks
end

-- ---- parser: closures over an environment (the device) -------------------

local P = {}
P.__index = P

function P:peek() return self.toks[self.pos] end
function P:next() local t = self.toks[self.pos]; self.pos = self.pos + 1; return t end
function P:expect(t, what)
  local tok = self:next()
  if tok.t ~= t then
    compile_error(string.format("expected %s at offset %d, found %s", what or t, tok.at - 1,
      tok.t == "eof" and "the end" or (tok.v and tostring(tok.v) or tok.t)))
  end
  return tok
end

local function const(v) return function() return v end end

function P:list()
  local items = {}
  if self:peek().t ~= "]" then
    repeat items[#items + 1] = self:expr() until self:peek().t ~= "," or not self:next()
  end
  self:expect("]", "']'")
  return function(dev)
    local out = {}
    for i = 1, #items do out[i] = items[i](dev) end
    return out
  end
end

function P:call(name)
  if name == "quantity" or name == "semver" then
    local arg = self:expect("str", name .. "(\"...\") with a string literal")
    self:expect(")", "')'")
    local ok, v = pcall(M[name], arg.v)
    if not ok then compile_error(v.cel) end
    return const(v)
  end
  if name == "has" then
    local base = self:postfix(true)
    self:expect(")", "')'")
    return base
  end
  compile_error("function " .. name .. "() is not supported (" .. SUPPORTED .. ")")
end

function P:primary()
  local tok = self:next()
  if tok.t == "str" or tok.t == "num" then return const(tok.v) end
  if tok.t == "true" then return const(true) end
  if tok.t == "false" then return const(false) end
  if tok.t == "(" then
    local e = self:expr()
    self:expect(")", "')'")
    return e
  end
  if tok.t == "[" then return self:list() end
  if tok.t == "id" then
    if self:peek().t == "(" then
      self:next()
      return self:call(tok.v)
    end
    if tok.v == "device" then return function(dev) return dev end end
    compile_error("unknown identifier " .. tok.v .. " (" .. SUPPORTED .. ")")
  end
  compile_error("unexpected " .. (tok.t == "eof" and "end of expression" or tok.t) .. " at offset " .. (tok.at - 1))
end

local DEVICE_FIELDS = { driver = true, attributes = true, capacity = true }

-- Postfix chains: .field, .method(args), [index]. `for_has` makes the last
-- field selection a presence test (has()).
function P:postfix(for_has)
  local e = self:primary()
  while true do
    local t = self:peek().t
    if t == "." then
      self:next()
      local name = self:expect("id", "a field or method name").v
      local base = e
      if self:peek().t == "(" then
        self:next()
        local nargs = METHOD_ARGS[name]
        if not nargs then compile_error("method " .. name .. "() is not supported (" .. SUPPORTED .. ")") end
        local arg
        if nargs == 1 then arg = self:expr() end
        self:expect(")", "')'")
        local fn = METHODS[name]
        e = function(dev) return fn(base(dev), arg and arg(dev)) end
      elseif for_has and self:peek().t == ")" then
        return function(dev)
          local m = base(dev)
          if kind(m) ~= "map" or getmetatable(m) ~= map_mt then
            error({ cel = "has(): expects device.attributes[\"domain\"].name or device.capacity[...]" })
          end
          return m.items[name] ~= nil
        end
      else
        e = function(dev)
          local v = base(dev)
          if v == dev and DEVICE_FIELDS[name] then return dev[name] end
          if getmetatable(v) == map_mt then return select_field(v, name) end
          error({ cel = "no such field: " .. name })
        end
      end
    elseif t == "[" then
      self:next()
      local key = self:expr()
      self:expect("]", "']'")
      local base = e
      e = function(dev)
        local v = base(dev)
        if getmetatable(v) == domains_mt then return index_domains(v, key(dev)) end
        if getmetatable(v) == map_mt then return select_field(v, key(dev)) end
        if kind(v) == "list" then
          local i = key(dev)
          if type(i) ~= "number" or v[i + 1] == nil then error({ cel = "index out of range" }) end
          return v[i + 1]
        end
        error({ cel = "cannot index a " .. kind(v) })
      end
    else
      if for_has then compile_error("has() expects a field selection such as has(device.attributes[\"d\"].name)") end
      return e
    end
  end
end

function P:unary()
  if self:peek().t == "!" then
    self:next()
    local e = self:unary()
    return function(dev)
      local v = e(dev)
      if type(v) ~= "boolean" then error({ cel = "no such overload: !" .. kind(v) }) end
      return not v
    end
  end
  return self:postfix(false)
end

local REL = { ["=="] = true, ["!="] = true, ["<"] = true, ["<="] = true, [">"] = true, [">="] = true, ["in"] = true }

function P:relation()
  local a = self:unary()
  local op = self:peek().t
  if not REL[op] then return a end
  self:next()
  local b = self:unary()
  if REL[self:peek().t] then compile_error("chained comparisons need parentheses") end
  if op == "==" then return function(dev) return equal(a(dev), b(dev)) end end
  if op == "!=" then return function(dev) return not equal(a(dev), b(dev)) end end
  if op == "in" then return function(dev) return member(a(dev), b(dev)) end end
  return function(dev) return order(op, a(dev), b(dev)) end
end

-- CEL's commutative && / ||: an error on one side is absorbed when the
-- other side decides the result.
local function logic(a, b, decisive)
  return function(dev)
    local ok1, v1 = pcall(a, dev)
    if ok1 and type(v1) ~= "boolean" then error({ cel = "no such overload: logical operator on " .. kind(v1) }) end
    if ok1 and v1 == decisive then return decisive end
    local ok2, v2 = pcall(b, dev)
    if ok2 and type(v2) ~= "boolean" then error({ cel = "no such overload: logical operator on " .. kind(v2) }) end
    if ok2 and v2 == decisive then return decisive end
    if not ok1 then error(v1, 0) end
    if not ok2 then error(v2, 0) end
    return not decisive
  end
end

-- operand (op operand)*, left-associative: the && and || levels.
function P:logic_chain(op, operand, decisive)
  local e = operand(self)
  while self:peek().t == op do
    self:next()
    e = logic(e, operand(self), decisive)
  end
  return e
end

function P:conj()
  return self:logic_chain("&&", P.relation, false)
end

function P:expr()
  local e = self:logic_chain("||", P.conj, true)
  if self:peek().t == "?" then compile_error("the conditional operator is not supported") end
  return e
end

--- Compiles an expression: a function(device) -> true/false, or raises
--- {cel = msg} at run time; nil and a message when the expression is outside
--- the subset or malformed.
function M.compile(src)
  if type(src) ~= "string" or src:match("^%s*$") then return nil, "empty expression" end
  local ok, res = pcall(function()
    local p = setmetatable({ toks = lex(src), pos = 1 }, P)
    local e = p:expr()
    local tok = p:peek()
    if tok.t ~= "eof" then
      compile_error("unexpected " .. (tok.v and tostring(tok.v) or tok.t) .. " at offset " .. (tok.at - 1))
    end
    return e
  end)
  if not ok then
    if type(res) == "table" and res.compile then return nil, res.compile end
    error(res, 0)
  end
  return function(dev)
    local v = res(dev)
    if type(v) ~= "boolean" then error({ cel = "expression evaluated to " .. kind(v) .. ", not bool" }) end
    return v
  end
end

--- Runs a compiled selector: true/false, or nil and the CEL runtime error.
function M.eval(fn, dev)
  local ok, v = pcall(fn, dev)
  if ok then return v end
  if type(v) == "table" and v.cel then return nil, v.cel end
  error(v, 0)
end

M.SUPPORTED = SUPPORTED
return M
