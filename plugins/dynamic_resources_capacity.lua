-- dynamic_resources_capacity: what DynamicResources' allocator checks on a
-- device beyond its selectors and taints (see plugins/dynamic_resources.lua):
-- consumable capacity (DRAConsumableCapacity), shared counters of
-- partitionable devices (DRAPartitionableDevices) and the claim constraints
-- matchAttribute / distinctAttribute. Quantities are kept as integer milli
-- units. Mirrors upstream staging/src/k8s.io/dynamic-resource-allocation/
-- structured/internal/incubating/ (consumable_capacity.go, constraint.go and
-- allocator_incubating.go's allocateDevice / checkAvailableCounters).
local cel = require("luasched.cel")
local json = require("luasched.json")

local M = {}
local floor = math.floor

-- ---- quantities ----------------------------------------------------------------

local milli_of = {}   -- quantity text -> milli (the texts of slices and claims: few distinct)
local N_MILLI_MAX = 4096
local n_milli = 0

--- A quantity's text as integer milli units, or nil.
function M.milli(text)
  local m = milli_of[text]
  if m ~= nil then return m end
  local v = cel.parse_quantity(text)
  if v == nil then return nil end
  m = floor(v * 1000 + 0.5)
  if n_milli < N_MILLI_MAX and type(text) == "string" then
    milli_of[text], n_milli = m, n_milli + 1
  end
  return m
end

local function binary_text(text) return type(text) == "string" and text:match("i$") ~= nil end

local BIN = { { "Ei", 2 ^ 60 }, { "Pi", 2 ^ 50 }, { "Ti", 2 ^ 40 }, { "Gi", 2 ^ 30 }, { "Mi", 2 ^ 20 },
              { "Ki", 2 ^ 10 } }
local DEC = { { "E", 1e18 }, { "P", 1e15 }, { "T", 1e12 }, { "G", 1e9 }, { "M", 1e6 }, { "k", 1e3 } }

--- The canonical text of a quantity of `milli` units (resource.Quantity's
--- String for the format: BinarySI when `binary`, else DecimalSI).
function M.format(milli, binary)
  if milli % 1000 ~= 0 then return string.format("%dm", milli) end
  local v = milli / 1000
  if v ~= 0 then
    for _, s in ipairs(binary and BIN or DEC) do
      if v % s[2] == 0 then return string.format("%d%s", v / s[2], s[1]) end
    end
  end
  return string.format("%d", v)
end

-- ---- consumable capacity ---------------------------------------------------------

-- A device's capacity entries by fully qualified name ("driver/name"): an
-- entry published with the driver's own domain wins over the same name
-- without a domain (resolveDeviceCapacity).
local function resolved_capacity(driver, capacity)
  local out = {}
  local prefix = driver .. "/"
  for name, c in pairs(capacity) do
    if name:sub(1, #prefix) == prefix then out[name] = { key = name, c = c } end
  end
  for name, c in pairs(capacity) do
    if name:sub(1, #prefix) ~= prefix then
      local q = name:find("/", 1, true) and name or prefix .. name
      if out[q] == nil then out[q] = { key = name, c = c } end
    end
  end
  return out
end

-- The fully qualified capacity a request's name refers to on the device, or
-- nil (resolveCapacityName).
local function request_target(name, driver, capacity)
  if capacity[name] ~= nil then
    return name:find("/", 1, true) and name or driver .. "/" .. name
  end
  local domain, id = name:match("^([^/]+)/(.+)$")
  if domain then
    if domain ~= driver then return nil end
    return capacity[id] ~= nil and name or nil
  end
  local q = driver .. "/" .. name
  return capacity[q] ~= nil and q or nil
end

-- A request policy's rounding (calculateConsumedQuantity): requested (milli,
-- text) or nil -> the consumed milli and its text format (binary or not).
local function consumed_of(req_milli, req_text, c)
  local policy = c.requestPolicy
  if policy == json.null then policy = nil end
  if req_milli == nil then
    if policy and policy.default ~= nil then return M.milli(policy.default), binary_text(policy.default) end
    return M.milli(c.value), binary_text(c.value)
  end
  if policy == nil then return req_milli, binary_text(req_text) end
  local range = policy.validRange
  if range ~= nil and range ~= json.null and range.min ~= nil then
    local min = M.milli(range.min)
    if req_milli < min then return min, binary_text(range.min) end
    if range.step == nil then return req_milli, binary_text(req_text) end
    local step = M.milli(range.step)
    local n = math.ceil((req_milli - min) / step)
    return min + step * n, binary_text(range.step)
  end
  if policy.validValues ~= nil and policy.validValues ~= json.null then
    for _, v in ipairs(policy.validValues) do
      local m = M.milli(v)
      if req_milli <= m then return m, binary_text(v) end
    end
  end
  return req_milli, binary_text(req_text)
end

-- violatesPolicy: the consumed amount is not one the policy allows.
local function violates(consumed, c)
  local policy = c.requestPolicy
  if policy == nil or policy == json.null then return false end
  if policy.default ~= nil and M.milli(policy.default) == consumed then return false end
  local range = policy.validRange
  if range ~= nil and range ~= json.null then
    if range.max ~= nil and consumed > M.milli(range.max) then return true end
    if range.step ~= nil and (consumed - M.milli(range.min or "0")) % M.milli(range.step) ~= 0 then return true end
    return false
  end
  local values = policy.validValues
  if values ~= nil and values ~= json.null and #values > 0 then
    for _, v in ipairs(values) do
      if M.milli(v) == consumed then return false end
    end
    return true
  end
  return false
end

--- The capacity a request would consume on a device (cmpRequestOverCapacity):
--- a table { [qualified name] = { milli, binary, key } } when it fits beside
--- `used` and `using` (qualified name -> milli consumed by allocated claims,
--- and by this allocation so far; false for a device allocated whole), or
--- nil when the device cannot serve the request (a requested capacity it
--- does not have, a policy violation, not enough left).
local EMPTY = {}
local wanted_text = {}      -- scratch: qualified capacity name -> the request's text
local amounts, binaries = {}, {}   -- scratch: qualified name -> milli, binary format

function M.consume(dev, requests, used, using)
  local capacity = dev.capacity
  if capacity == nil then
    if requests ~= nil and next(requests) ~= nil then return nil end
    return EMPTY
  end
  local driver = dev.slice.driver
  local rcap = dev.resolved_capacity
  if rcap == nil then
    rcap = resolved_capacity(driver, capacity)
    dev.resolved_capacity = rcap
  end
  for q in pairs(wanted_text) do wanted_text[q] = nil end
  for name, text in pairs(requests or EMPTY) do
    local q = request_target(name, driver, capacity)
    if q == nil then return nil end
    wanted_text[q] = text
  end
  -- check every capacity before building the result (nothing made for a device that does not fit)
  for q, e in pairs(rcap) do
    local text = wanted_text[q]
    local amount, binary = consumed_of(text and M.milli(text), text, e.c)
    if amount == nil or amount < 0 then return nil end
    if violates(amount, e.c) then return nil end
    local before = (used and used[q] or 0) + (using and using[q] or 0)
    if before + amount > (M.milli(e.c.value) or 0) then return nil end
    amounts[q], binaries[q] = amount, binary
  end
  local out = {}
  for q, e in pairs(rcap) do out[q] = { milli = amounts[q], binary = binaries[q], key = e.key } end
  return out
end

--- Adds (sign 1) or removes (sign -1) a consumption to a per-device usage table.
function M.add_usage(usage, consumed, sign)
  for q, e in pairs(consumed) do usage[q] = (usage[q] or 0) + sign * e.milli end
end

--- The usage of a consumedCapacity map as written in an allocation result
--- (names as published, qualified with the driver when they have no domain).
function M.usage_of_result(driver, consumed, usage)
  for name, text in pairs(consumed or {}) do
    local q = name:find("/", 1, true) and name or driver .. "/" .. name
    usage[q] = (usage[q] or 0) + (M.milli(text) or 0)
  end
end

--- A consumption in API form: { [published name] = canonical quantity }.
function M.consumed_result(consumed)
  local out = {}
  for _, e in pairs(consumed) do out[e.key] = M.format(e.milli, e.binary) end
  return out
end

-- ---- shared counters ----------------------------------------------------------------

--- A device's counter consumption: list of { set, counter, milli }, or nil.
function M.counter_consumption(d)
  local cc = d.consumesCounters
  if cc == nil or cc == json.null or #cc == 0 then return nil end
  local out = {}
  for _, c in ipairs(cc) do
    for name, v in pairs(c.counters or {}) do
      out[#out + 1] = { set = c.counterSet, counter = name, milli = M.milli(v.value) or 0 }
    end
  end
  return out
end

--- Adds a slice's sharedCounters to its pool's counter sets.
function M.add_counter_sets(sets, shared)
  if shared == nil or shared == json.null then return end
  for _, cs in ipairs(shared) do
    local set = sets[cs.name] or {}
    for name, v in pairs(cs.counters or {}) do set[name] = M.milli(v.value) or 0 end
    sets[cs.name] = set
  end
end

--- Does taking the device keep every counter of its pool within what is
--- available? `avail`: set -> counter -> milli left after allocated devices;
--- `taking`: set -> counter -> milli of the devices being allocated.
--- Adds the device's consumption to `taking` when it fits.
function M.take_counters(consumes, avail, taking)
  for _, c in ipairs(consumes) do
    local t = taking[c.set] or {}
    taking[c.set] = t
    t[c.counter] = (t[c.counter] or 0) + c.milli
  end
  for _, c in ipairs(consumes) do
    local left = avail[c.set] and avail[c.set][c.counter]
    if left == nil or taking[c.set][c.counter] > left then
      M.give_counters(consumes, taking)
      return false
    end
  end
  return true
end

function M.give_counters(consumes, taking)
  for _, c in ipairs(consumes) do
    taking[c.set][c.counter] = taking[c.set][c.counter] - c.milli
  end
end

-- ---- constraints (matchAttribute, distinctAttribute) -------------------------------

-- A device attribute by fully qualified name (the driver's own domain may be
-- left out in the slice): { type, value } or nil.
local function attribute(dev, qname)
  local attrs = dev.raw.attributes
  if attrs == nil or attrs == json.null then return nil end
  local a = attrs[qname]
  if a == nil then
    local domain, id = qname:match("^([^/]+)/(.+)$")
    if domain == dev.slice.driver then a = attrs[id] end
  end
  if type(a) ~= "table" then return nil end
  for _, t in ipairs({ "string", "int", "bool", "version" }) do
    if a[t] ~= nil then return t, tostring(a[t]) end
  end
  return nil
end

--- The claim's constraints in allocator form, or nil and an error text.
function M.constraints(list, label)
  local out = {}
  for i, c in ipairs(list or {}) do
    local reqs
    if c.requests ~= nil and c.requests ~= json.null and #c.requests > 0 then
      reqs = {}
      for _, r in ipairs(c.requests) do reqs[r] = true end
    end
    if type(c.matchAttribute) == "string" then
      out[#out + 1] = { requests = reqs, attr = c.matchAttribute, distinct = false, values = {} }
    elseif type(c.distinctAttribute) == "string" then
      out[#out + 1] = { requests = reqs, attr = c.distinctAttribute, distinct = true, values = {} }
    else
      return nil, string.format("claim %s, constraint #%d: empty constraint (unsupported constraint type?)",
        label, i - 1)
    end
  end
  return out
end

local function applies(c, base, full)
  return c.requests == nil or c.requests[base] or (full ~= nil and c.requests[full])
end

-- One constraint's check of a device: true and the value it records.
local function admits(c, dev)
  local t, v = attribute(dev, c.attr)
  if t == nil then return false end
  local key = t .. "\0" .. v
  local vals = c.values
  if c.distinct then
    for i = 1, #vals do if vals[i] == key then return false end end
  elseif #vals > 0 and vals[1] ~= key then
    return false
  end
  return true, key
end

--- Adds the device to every constraint that applies to the request (base
--- name, and "base/sub" for a subrequest); false (nothing added) when one
--- does not admit it.
function M.constraints_add(cons, base, full, dev)
  for i = 1, #cons do
    local c = cons[i]
    if applies(c, base, full) then
      local ok, key = admits(c, dev)
      if not ok then
        M.constraints_remove(cons, base, full, i - 1)
        return false
      end
      c.values[#c.values + 1] = key
    end
  end
  return true
end

--- Undoes constraints_add for the first `upto` constraints (all by default).
function M.constraints_remove(cons, base, full, upto)
  for i = 1, upto or #cons do
    local c = cons[i]
    if applies(c, base, full) then c.values[#c.values] = nil end
  end
end

return M
