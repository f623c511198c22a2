-- dynamic_resources_allocator: DynamicResources' structured allocator (see
-- plugins/dynamic_resources.lua for what it mirrors and its deviations): the
-- inventory of complete pools' ResourceSlices, the devices a request may
-- take on a node (class and request CEL selectors, device taints), and a
-- backtracking search giving every request distinct free devices, with
-- firstAvailable alternatives tried in order; then the allocation result
-- (devices.results, devices.config, nodeSelector) in API form. Split from
-- the plugin only to keep each file under 800 lines.
local ls = require("luasched")
local json = require("luasched.json")
local cel = require("luasched.cel")

local SLICES = "resourceslices.v1.resource.k8s.io"
local MAX_COUNT = 128            -- AllocationResultsMaxSize
local fmt = string.format

local M = {}
local NO_TAINTS = {}

local function meta(t) return t.metadata or {} end

-- ---- the inventory: slices, pools, devices ----------------------------------

function M.device_key(driver, pool, name) return driver .. "/" .. pool .. "/" .. name end

-- A NodeSelector in API form -> an ls node selector (nil for none).
local OPS = { In = ls.OP_IN, NotIn = ls.OP_NOT_IN, Exists = ls.OP_EXISTS, DoesNotExist = ls.OP_DOES_NOT_EXIST,
              Gt = ls.OP_GT, Lt = ls.OP_LT }
local node_selectors = ls.bounded_cache(1024)

local function requirements(list, where)
  local out = {}
  for i, r in ipairs(list or {}) do
    local op = OPS[r.operator]
    if not op then error(fmt("%s[%d].operator: unsupported %q", where, i - 1, tostring(r.operator)), 0) end
    local values = {}
    for k, v in ipairs(r.values or {}) do values[k] = ls.intern(v) end
    out[i] = { key = ls.intern(r.key or ""), op = op, values = values,
               number = (op == ls.OP_GT or op == ls.OP_LT) and (r.values or {})[1] or nil }
  end
  return out
end

function M.compile_node_selector(sel, where)
  if sel == nil or sel == json.null then return nil end
  local key = json.encode(sel)
  return ls.cache_get(node_selectors, key, function()
    local terms = {}
    for i, term in ipairs(sel.nodeSelectorTerms or {}) do
      local w = fmt("%s.nodeSelectorTerms[%d]", where, i - 1)
      terms[i] = { exprs = requirements(term.matchExpressions, w .. ".matchExpressions"),
                   fields = requirements(term.matchFields, w .. ".matchFields") }
    end
    return ls.new_node_selector(terms)
  end)
end

-- Complete pools' slices, with their devices (consumers of counters left out).
-- A slice's allocator entry, built once per version of the slice (the
-- decoded table is the same while the object's JSON is): its devices keep
-- their CEL view and selector results across cycles.
local slice_entries = setmetatable({}, { __mode = "k" })
local function slice_entry(t, name)
  local entry = slice_entries[t]
  if entry then return entry end
  local spec = t.spec
  entry = { driver = spec.driver, pool = spec.pool.name, devices = {}, node_name = spec.nodeName,
            all_nodes = spec.allNodes == true, where = "ResourceSlice " .. name }
  if spec.nodeSelector ~= nil and spec.nodeSelector ~= json.null then
    entry.node_selector = M.compile_node_selector(spec.nodeSelector, entry.where .. ": spec.nodeSelector")
    entry.node_selector_json = spec.nodeSelector
  end
  if spec.perDeviceNodeSelection ~= true then
    for _, d in ipairs(spec.devices or {}) do
      local cc = d.consumesCounters
      if cc == nil or cc == json.null or #cc == 0 then
        entry.devices[#entry.devices + 1] = { name = d.name, raw = d, taints = d.taints or NO_TAINTS,
          key = M.device_key(entry.driver, entry.pool, d.name), slice = entry }
      end
    end
  end
  slice_entries[t] = entry
  return entry
end

local gathered = { gen = -1 }

function M.gather_slices()
  local store_gen = ls.objects_generation(SLICES)
  if gathered.gen == store_gen then return gathered.slices end
  local pools = {}
  for o in ls.objects(SLICES) do
    local t = ls.object_table(o)
    local spec = t.spec or {}
    local pool = spec.pool or {}
    local key = (spec.driver or "") .. "/" .. (pool.name or "")
    local p = pools[key]
    if p == nil then p = { gen = -1, slices = {}, count = 0 }; pools[key] = p end
    local gen = pool.generation or 0
    if gen > p.gen then p.gen, p.slices, p.count = gen, {}, pool.resourceSliceCount or 1 end
    if gen == p.gen then p.slices[#p.slices + 1] = { t = t, name = meta(t).name or "" } end
  end
  local slices = {}
  for _, p in pairs(pools) do
    if #p.slices >= p.count then
      for _, s in ipairs(p.slices) do slices[#slices + 1] = s end
    end
  end
  -- 1.36: slices in name order, so allocation priority follows names.
  table.sort(slices, function(a, b) return a.name < b.name end)
  local out = { by_node = {}, shared = {} }
  for _, s in ipairs(slices) do
    local entry = slice_entry(s.t, s.name)
    out[#out + 1] = entry
    local node_name = entry.node_name
    if node_name ~= nil and node_name ~= json.null then
      local list = out.by_node[node_name]
      if list == nil then list = {}; out.by_node[node_name] = list end
      list[#list + 1] = entry
    elseif entry.all_nodes or entry.node_selector ~= nil then
      out.shared[#out.shared + 1] = entry
    end
  end
  gathered.gen, gathered.slices = store_gen, out
  return out
end

function M.add_allocated(set, allocation)
  local results = ((allocation or {}).devices or {}).results or {}
  for _, r in ipairs(results) do
    if r.adminAccess ~= true then set[M.device_key(r.driver, r.pool, r.device)] = true end
  end
end


local function configs_of(list, source, only)
  local out = {}
  for _, c in ipairs(list or {}) do
    local e = { source = source, opaque = c.opaque }
    if c.requests ~= nil and c.requests ~= json.null then e.requests = c.requests
    elseif only then e.requests = json.array(only) end
    out[#out + 1] = e
  end
  return out
end


-- ---- the search ----------------------------------------------------

local function slice_on_node(slice, node)
  if slice.node_name ~= nil and slice.node_name ~= json.null then return slice.node_name == ls.str(node.name) end
  if slice.all_nodes then return true end
  if slice.node_selector ~= nil then return ls.node_selector_matches(slice.node_selector, node) end
  return false
end

local function tolerated(taint, tolerations)
  for _, t in ipairs(tolerations) do
    local key_ok = t.key == nil or t.key == "" or t.key == taint.key
    local op = t.operator or "Equal"
    local value_ok = op == "Exists" or (op == "Equal" and (t.value or "") == (taint.value or ""))
    local effect_ok = t.effect == nil or t.effect == "" or t.effect == taint.effect
    if (t.key == nil or t.key == "") and op ~= "Exists" then key_ok = false end
    if key_ok and value_ok and effect_ok then return true end
  end
  return false
end

local function blocked_by_taint(dev, tolerations)
  for _, taint in ipairs(dev.taints) do
    if (taint.effect == "NoSchedule" or taint.effect == "NoExecute") and not tolerated(taint, tolerations) then
      return true
    end
  end
  return false
end

-- Does the device match the request's class and request selectors? true,
-- false, or nil and the CEL runtime error (memoized per device).
local function matches(req, dev)
  local m = req.memo[dev]
  if m == nil then
    dev.cel = dev.cel or cel.device(dev.slice.driver, dev.raw)
    m = { true }
    for li, list in ipairs(req.selectors) do
      for si, sel in ipairs(list) do
        local v, e = cel.eval(sel.fn, dev.cel)
        if v == nil then m = { nil, li, si, e } break end
        if not v then m = { false } break end
      end
      if m[1] ~= true then break end
    end
    req.memo[dev] = m
  end
  if m[1] == nil then
    -- the memo is shared by requests with the same selectors: name this one's
    return nil, req.selectors[m[2]][m[3]].label .. ": CEL runtime error: " .. m[4]
  end
  return m[1]
end

-- Candidates of one request alternative on the node, or nil and an error.
local function candidates(alt, devices, in_use)
  local out = {}
  for _, dev in ipairs(devices) do
    if (alt.admin or not in_use[dev.key]) and not blocked_by_taint(dev, alt.tolerations) then
      local ok, err = matches(alt, dev)
      if ok == nil then return nil, err end
      if ok then out[#out + 1] = dev end
    end
  end
  return out
end

local Timeout = {}

-- Backtracking over the slots (one per device to pick). Returns true when
-- every slot got a distinct free device: devs[k] (its position in the
-- slot's candidates in pos[k]).
local function search(slots, k, taken, devs, pos, budget)
  if k > #slots then return true end
  budget.steps = budget.steps + 1
  if budget.steps % 256 == 0 and budget.deadline and os.clock() > budget.deadline then error(Timeout) end
  local slot = slots[k]
  local cands = slot.cands
  -- Slots of one request take devices in increasing candidate order (no permutations).
  local first = slot.prev_same and pos[k - 1] + 1 or 1
  for i = first, #cands do
    local dev = cands[i]
    if slot.admin or not taken[dev.key] then
      if not slot.admin then taken[dev.key] = true end
      devs[k], pos[k] = dev, i
      if search(slots, k + 1, taken, devs, pos, budget) then return true end
      if not slot.admin then taken[dev.key] = nil end
    end
  end
  devs[k], pos[k] = nil, nil
  return false
end

-- Expands the chosen alternative of every request into slots.
local function slots_for(choice, cands_of)
  local slots = {}
  for r, alt in ipairs(choice) do
    local cands = cands_of[r][alt]
    local n = alt.mode == "All" and #cands or alt.count
    if alt.mode == "All" and n == 0 then return nil end
    if n > MAX_COUNT then return nil end
    for j = 1, n do
      slots[#slots + 1] = { cands = cands, admin = alt.admin, alt = alt, prev_same = j > 1 }
    end
  end
  return slots
end

-- Tries the alternatives of requests r.. in order (firstAvailable), the
-- earlier ones fixed in `choice`.
local function try_alternatives(requests, r, choice, cands_of, taken, budget)
  if r > #requests then
    local slots = slots_for(choice, cands_of)
    if not slots then return nil end
    local devs, pos = {}, {}
    if search(slots, 1, taken, devs, pos, budget) then return slots, devs end
    return nil
  end
  for _, alt in ipairs(requests[r].alts) do
    choice[r] = alt
    local slots, devs = try_alternatives(requests, r + 1, choice, cands_of, taken, budget)
    if slots then return slots, devs end
  end
  choice[r] = nil
  return nil
end

local function node_selector_for(node_name, used_slices)
  for _, slice in ipairs(used_slices) do
    if slice.node_name ~= nil and slice.node_name ~= json.null then
      return { nodeSelectorTerms = json.array { { matchFields = json.array {
        { key = "metadata.name", operator = "In", values = json.array { node_name } } } } } }
    end
  end
  for _, slice in ipairs(used_slices) do
    if slice.node_selector_json then return slice.node_selector_json end
  end
  return nil
end

--- The allocation result in API form of one claim's search (M.allocate's
--- entry for the claim) on the node: devices.results, devices.config and the
--- nodeSelector.
function M.result(prep, found, node_name)
  local slots, devs = found.slots, found.devs
  local results, used, used_classes = json.array(), {}, {}
  for k, slot in ipairs(slots) do
    local dev = devs[k]
    local r = { request = slot.alt.name, driver = dev.slice.driver, pool = dev.slice.pool, device = dev.name }
    if slot.alt.admin then r.adminAccess = true end
    local tols = slot.alt.tolerations
    if #tols > 0 then r.tolerations = tols end
    results[#results + 1] = r
    used[#used + 1] = dev.slice
    used_classes[slot.alt.class_name] = used_classes[slot.alt.class_name] or { slot.alt, {} }
    local names = used_classes[slot.alt.class_name][2]
    if names[#names] ~= slot.alt.name then names[#names + 1] = slot.alt.name end
  end
  local config = json.array()
  for _, entry in pairs(used_classes) do
    for _, c in ipairs(configs_of((entry[1].class.spec or {}).config, "FromClass", entry[2])) do
      config[#config + 1] = c
    end
  end
  for _, c in ipairs(configs_of(prep.configs, "FromClaim", nil)) do config[#config + 1] = c end
  local devices = { results = results }
  if #config > 0 then devices.config = config end
  return { devices = devices, nodeSelector = node_selector_for(node_name, used) }
end

-- Allocates every claim of the pod on the node: a list of allocations (in
-- to_allocate order), false when impossible, or nil and an error text.
-- Allocates every claim of the pod on the node, one claim after the other:
-- per claim { slots, devs } (M.result makes the API form), false when
-- impossible, or nil and an error text.
-- The usual claim: one request for one device. Returns the allocator's
-- entry list, false when no device fits, nil and an error, or nil, nil when
-- the claims are not of that shape.
local function allocate_single(s, node)
  local prep = s.to_allocate[1]
  if #s.to_allocate ~= 1 or #prep.requests ~= 1 or #prep.requests[1].alts ~= 1 then return nil end
  local alt = prep.requests[1].alts[1]
  if alt.mode ~= "ExactCount" or alt.count ~= 1 then return nil end
  local in_use = s.in_use
  local function scan(slices, check_node)
    for _, slice in ipairs(slices) do
      if not check_node or slice_on_node(slice, node) then
        for _, dev in ipairs(slice.devices) do
          if (alt.admin or not in_use[dev.key]) and not blocked_by_taint(dev, alt.tolerations) then
            local ok, err = matches(alt, dev)
            if ok == nil then return nil, err end
            if ok then return dev end
          end
        end
      end
    end
    return false
  end
  local dev, err = scan(s.slices.by_node[ls.str(node.name)] or NO_TAINTS, false)
  if dev == false then dev, err = scan(s.slices.shared, true) end
  if dev == nil then return nil, err end
  if dev == false then return false end
  prep.single_slots = prep.single_slots or { { alt = alt, admin = alt.admin } }
  return { { slots = prep.single_slots, devs = { dev } } }
end

function M.allocate(s, node, filter_timeout)
  local single, single_err = allocate_single(s, node)
  if single ~= nil then return single end
  if single_err ~= nil then return nil, single_err end
  local devices = {}
  for _, slice in ipairs(s.slices.by_node[ls.str(node.name)] or NO_TAINTS) do
    for _, d in ipairs(slice.devices) do devices[#devices + 1] = d end
  end
  for _, slice in ipairs(s.slices.shared) do
    if slice_on_node(slice, node) then
      for _, d in ipairs(slice.devices) do devices[#devices + 1] = d end
    end
  end
  local taken = {}
  local budget = { steps = 0, deadline = filter_timeout > 0 and os.clock() + filter_timeout or nil }
  local out = {}
  for i, prep in ipairs(s.to_allocate) do
    local cands_of = {}
    for r, req in ipairs(prep.requests) do
      cands_of[r] = {}
      for _, alt in ipairs(req.alts) do
        local c, err = candidates(alt, devices, s.in_use)
        if c == nil then return nil, err end
        cands_of[r][alt] = c
      end
    end
    local ok, slots, devs = pcall(try_alternatives, prep.requests, 1, {}, cands_of, taken, budget)
    if not ok then
      if slots == Timeout then return nil, "timed out trying to allocate devices" end
      error(slots, 0)
    end
    if not slots then return false end
    out[i] = { slots = slots, devs = devs }
  end
  return out
end

return M
