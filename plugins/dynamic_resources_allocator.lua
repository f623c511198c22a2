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
local CAP = require("dynamic_resources_capacity")

local SLICES = "resourceslices.v1.resource.k8s.io"
local MAX_COUNT = 128            -- AllocationResultsMaxSize

-- The beta gates of v1.37 (on by default); --feature-gates may turn them off:
-- then, as upstream's allocator, devices consuming counters are never
-- allocated, devices with binding conditions never selected, and
-- allowMultipleAllocations and device capacity are not looked at.
local PARTITIONABLE = ls.feature_enabled("DRAPartitionableDevices")
local CONSUMABLE = ls.feature_enabled("DRAConsumableCapacity")
local BINDING = ls.feature_enabled("DRADeviceBindingConditions")
local fmt = string.format

local M = {}
M.consumable_capacity, M.binding_conditions = CONSUMABLE, BINDING
M.capacity = CAP   -- its capacity, counter and constraint checks (the test kit reads them)
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
      local cap = d.capacity
      if cap == json.null or (cap ~= nil and next(cap) == nil) or not CONSUMABLE then cap = nil end
      local bc, bfc = d.bindingConditions, d.bindingFailureConditions
      bc = (bc ~= nil and bc ~= json.null and #bc > 0) and bc or nil
      local consumes = CAP.counter_consumption(d)
      if (PARTITIONABLE or consumes == nil) and (BINDING or bc == nil) then
        entry.devices[#entry.devices + 1] = { name = d.name, raw = d, taints = d.taints or NO_TAINTS,
          key = M.device_key(entry.driver, entry.pool, d.name), slice = entry,
          multi = CONSUMABLE and d.allowMultipleAllocations == true, capacity = cap, consumes = consumes,
          binding = bc, binding_failure = (bfc ~= nil and bfc ~= json.null and #bfc > 0) and bfc or nil,
          binds_to_node = d.bindsToNode == true }
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
  local slices, counters = {}, {}
  for key, p in pairs(pools) do
    if #p.slices >= p.count then
      local sets = {}
      for _, s in ipairs(p.slices) do
        slices[#slices + 1] = s
        -- 1.35+: a pool's counter sets may sit in any of its slices
        CAP.add_counter_sets(sets, s.t.spec.sharedCounters)
      end
      counters[key] = sets
    end
  end
  -- 1.36: slices in name order, so allocation priority follows names.
  table.sort(slices, function(a, b) return a.name < b.name end)
  local out = { by_node = {}, shared = {}, by_key = {}, counters = counters }
  for _, s in ipairs(slices) do
    local entry = slice_entry(s.t, s.name)
    out[#out + 1] = entry
    entry.pool_key = entry.driver .. "/" .. entry.pool
    for _, d in ipairs(entry.devices) do out.by_key[d.key] = d end
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

--- Adds an allocation's devices to `set` (key -> true: allocated to this
--- claim alone) and its shares of devices that allow multiple allocations
--- to `shared` (key -> capacity name -> milli consumed): upstream's
--- AllocatedDevices and AggregatedCapacity. Admin access takes nothing.
function M.add_allocated(set, allocation, shared)
  local results = ((allocation or {}).devices or {}).results or {}
  for _, r in ipairs(results) do
    local key = M.device_key(r.driver, r.pool, r.device)
    if r.shareID ~= nil and r.shareID ~= json.null then
      if shared then
        local u = shared[key] or {}
        shared[key] = u
        CAP.usage_of_result(r.driver, r.consumedCapacity, u)
      end
    elseif r.adminAccess ~= true then
      set[key] = true
    end
  end
end

--- The counters left in each pool once the allocated devices took theirs
--- (checkAvailableCounters' first part): pool key -> set -> counter -> milli.
function M.available_counters(slices, in_use, shared_use)
  local avail = {}
  for key, sets in pairs(slices.counters) do
    local a = {}
    for set, counters in pairs(sets) do
      a[set] = {}
      for name, v in pairs(counters) do a[set][name] = v end
    end
    avail[key] = a
  end
  local function subtract(k)
    local dev = slices.by_key[k]
    if dev and dev.consumes then
      local a = avail[dev.slice.pool_key]
      for _, c in ipairs(dev.consumes) do
        if a[c.set] and a[c.set][c.counter] then a[c.set][c.counter] = a[c.set][c.counter] - c.milli end
      end
    end
  end
  for k in pairs(in_use) do subtract(k) end
  for k in pairs(shared_use) do if not in_use[k] then subtract(k) end end
  return avail
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

-- Candidates of one request alternative on the node, or nil and an error:
-- the devices its selectors match that no taint keeps from it and that are
-- not allocated to another claim (what may still change during the search,
-- counters, capacity and constraints, is checked by `take`).
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
local EMPTY = {}
local PLAIN = {}   -- what take records for a device without counters or capacity (read-only)

-- Tries to take the device for the slot (upstream's allocateDevice): not in
-- use (unless admin access or the device allows multiple allocations), the
-- pool's shared counters not exceeded, the claim's constraints kept, the
-- requested capacity within what is left. Returns what `give` needs to undo
-- it, or nil.
local function take(ctx, slot, dev)
  local alt = slot.alt
  if not alt.admin and not dev.multi and ctx.taken[dev.key] then return nil end
  local counted = false
  if dev.consumes and not (dev.multi and (ctx.shared_use[dev.key] or (ctx.share_n[dev.key] or 0) > 0)) then
    local pool = dev.slice.pool_key
    local taking = ctx.taking[pool]
    if taking == nil then taking = {}; ctx.taking[pool] = taking end
    if not CAP.take_counters(dev.consumes, ctx.avail[pool] or EMPTY, taking) then return nil end
    counted = true
  end
  local cons = ctx.cons
  if #cons > 0 and not CAP.constraints_add(cons, alt.base, alt.full, dev) then
    if counted then CAP.give_counters(dev.consumes, ctx.taking[dev.slice.pool_key]) end
    return nil
  end
  local consumed
  if dev.capacity or alt.capacity then
    consumed = CAP.consume(dev, alt.capacity, dev.multi and ctx.shared_use[dev.key], dev.multi and ctx.sharing[dev.key])
    if consumed == nil then
      if #cons > 0 then CAP.constraints_remove(cons, alt.base, alt.full) end
      if counted then CAP.give_counters(dev.consumes, ctx.taking[dev.slice.pool_key]) end
      return nil
    end
  end
  if dev.multi then
    local u = ctx.sharing[dev.key]
    if u == nil then u = {}; ctx.sharing[dev.key] = u end
    CAP.add_usage(u, consumed or EMPTY, 1)
    ctx.share_n[dev.key] = (ctx.share_n[dev.key] or 0) + 1
  elseif not alt.admin then
    ctx.taken[dev.key] = true
  end
  if not counted and consumed == nil then return PLAIN end
  return { counted = counted, consumed = consumed }
end

local function give(ctx, slot, dev, info)
  local alt = slot.alt
  if dev.multi then
    CAP.add_usage(ctx.sharing[dev.key], info.consumed or EMPTY, -1)
    ctx.share_n[dev.key] = ctx.share_n[dev.key] - 1
  elseif not alt.admin then
    ctx.taken[dev.key] = nil
  end
  if #ctx.cons > 0 then CAP.constraints_remove(ctx.cons, alt.base, alt.full) end
  if info.counted then CAP.give_counters(dev.consumes, ctx.taking[dev.slice.pool_key]) end
end

-- Backtracking over the slots (one per device to pick). Returns true when
-- every slot got a device: devs[k] (its position in the slot's candidates in
-- pos[k], what take recorded in infos[k]).
local function search(ctx, slots, k, devs, pos, infos, budget)
  if k > #slots then return true end
  budget.steps = budget.steps + 1
  if budget.steps % 256 == 0 and budget.deadline and os.clock() > budget.deadline then error(Timeout) end
  local slot = slots[k]
  local cands = slot.cands
  -- Slots of one request take devices in increasing candidate order (no permutations).
  local first = slot.prev_same and pos[k - 1] + 1 or 1
  for i = first, #cands do
    local dev = cands[i]
    local info = take(ctx, slot, dev)
    if info then
      devs[k], pos[k], infos[k] = dev, i, info
      if search(ctx, slots, k + 1, devs, pos, infos, budget) then return true end
      give(ctx, slot, dev, info)
    end
  end
  devs[k], pos[k], infos[k] = nil, nil, nil
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
local function try_alternatives(ctx, requests, r, choice, cands_of, budget)
  if r > #requests then
    local slots = slots_for(choice, cands_of)
    if not slots then return nil end
    local devs, pos, infos = {}, {}, {}
    if search(ctx, slots, 1, devs, pos, infos, budget) then return slots, devs, infos end
    return nil
  end
  for _, alt in ipairs(requests[r].alts) do
    choice[r] = alt
    local slots, devs, infos = try_alternatives(ctx, requests, r + 1, choice, cands_of, budget)
    if slots then return slots, devs, infos end
  end
  choice[r] = nil
  return nil
end

local function node_selector_for(node_name, used_slices, pinned)
  for _, slice in ipairs(used_slices) do
    if pinned or (slice.node_name ~= nil and slice.node_name ~= json.null) then
      return { nodeSelectorTerms = json.array { { matchFields = json.array {
        { key = "metadata.name", operator = "In", values = json.array { node_name } } } } } }
    end
  end
  for _, slice in ipairs(used_slices) do
    if slice.node_selector_json then return slice.node_selector_json end
  end
  return nil
end

-- A share's ID (upstream GenerateNewShareID draws a random one): derived
-- from the claim, the device and the result's index, so a replay writes the
-- same IDs.
local function share_id(claim_uid, key, k)
  local h = 5381
  for _, s in ipairs({ claim_uid, key, tostring(k) }) do
    for i = 1, #s do h = (h * 33 + s:byte(i)) % 2147483647 end
  end
  return string.format("%08x", h)
end

--- The allocation result in API form of one claim's search (M.allocate's
--- entry for the claim) on the node: devices.results (with the consumed
--- capacity and share ID of a device allowing multiple allocations, and the
--- device's binding conditions), devices.config and the nodeSelector.
function M.result(prep, found, node_name)
  local slots, devs, infos = found.slots, found.devs, found.infos or EMPTY
  local results, used, used_classes, pinned = json.array(), {}, {}, false
  for k, slot in ipairs(slots) do
    local dev = devs[k]
    local r = { request = slot.alt.name, driver = dev.slice.driver, pool = dev.slice.pool, device = dev.name }
    if slot.alt.admin then r.adminAccess = true end
    local tols = slot.alt.tolerations
    if #tols > 0 then r.tolerations = tols end
    if dev.multi then
      r.shareID = share_id(prep.claim.uid, dev.key, k)
      local consumed = infos[k] and infos[k].consumed
      if consumed and next(consumed) ~= nil then r.consumedCapacity = CAP.consumed_result(consumed) end
    end
    if dev.binding then
      r.bindingConditions = dev.binding
      if dev.binding_failure then r.bindingFailureConditions = dev.binding_failure end
    end
    pinned = pinned or dev.binds_to_node
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
  return { devices = devices, nodeSelector = node_selector_for(node_name, used, pinned) }
end

local function new_context(s)
  return { in_use = s.in_use, shared_use = s.shared_use or EMPTY, avail = s.counters_avail or EMPTY,
           taken = {}, sharing = {}, share_n = {}, taking = {}, cons = EMPTY }
end

-- The one-device path's search state, reused (emptied) from call to call:
-- it tries devices until one fits, so it never undoes more than one take.
local scratch = { taken = {}, sharing = {}, share_n = {}, taking = {}, cons = EMPTY }

local function clear(t) for k in pairs(t) do t[k] = nil end end

local function scratch_context(s)
  scratch.in_use, scratch.shared_use, scratch.avail = s.in_use, s.shared_use or EMPTY, s.counters_avail or EMPTY
  clear(scratch.taken); clear(scratch.sharing); clear(scratch.share_n); clear(scratch.taking)
  return scratch
end

local function start_claim(ctx, prep)
  ctx.cons = prep.constraints or EMPTY
  for _, c in ipairs(ctx.cons) do c.values = {} end
end

-- ---- the device choice (a luasched extension; upstream takes the first) ----

--- The free amount (milli) of the capacity `name` ("milli", or qualified
--- "driver/milli") of a device allowing multiple allocations, beside the
--- shares of allocated claims (`shared_use`); nil when it has no such
--- capacity.
function M.free_capacity(dev, name, shared_use)
  if dev.capacity == nil then return nil end
  local driver = dev.slice.driver
  local q = name:find("/", 1, true) and name or driver .. "/" .. name
  local published = dev.capacity[name] or dev.capacity[q] or dev.capacity[name:match("^[^/]+/(.+)$") or ""]
  if published == nil then return nil end
  local total = CAP.milli(published.value) or 0
  local used = shared_use[dev.key]
  return total - ((used and used[q]) or 0)
end

--- Checks DynamicResources' `deviceSelection` arg: nil (upstream's first
--- fit) or { rule = "FirstFit" | "BestFit" | "WorstFit", capacity = name }.
function M.check_selection(sel)
  if sel == nil then return nil end
  local rule = sel.rule
  if rule ~= "FirstFit" and rule ~= "BestFit" and rule ~= "WorstFit" then
    return fmt("deviceSelection.rule: Unsupported value: %q: supported values: \"FirstFit\", \"BestFit\", \"WorstFit\"",
      tostring(rule))
  end
  if rule ~= "FirstFit" and (type(sel.capacity) ~= "string" or sel.capacity == "") then
    return "deviceSelection.capacity: Required value: the device capacity " .. rule .. " compares (e.g. \"milli\")"
  end
  return nil
end

-- Is a device with `free` left (nil: it lacks the capacity) a better choice
-- than the best so far (`best_free`; `have_best` false when none)?
-- BestFit: the least free (the tightest fit); WorstFit: the most; devices
-- without the capacity come after those with it; ties keep the earlier
-- device (the lowest position in slice order).
local function better(rule, free, have_best, best_free)
  if not have_best then return true end
  if free == nil then return false end
  if best_free == nil then return true end
  if rule == "BestFit" then return free < best_free end
  return free > best_free
end

-- The usual claim: one request for one device. Returns the allocator's
-- entry list, false when no device fits, nil and an error, or nil, nil when
-- the claims are not of that shape. With a `selection` (BestFit, WorstFit)
-- every device that fits is looked at and the one the rule prefers is
-- taken; otherwise the first that fits, as upstream.
local function allocate_single(s, node, selection)
  local prep = s.to_allocate[1]
  if #s.to_allocate ~= 1 or #prep.requests ~= 1 or #prep.requests[1].alts ~= 1 then return nil end
  local alt = prep.requests[1].alts[1]
  if alt.mode ~= "ExactCount" or alt.count ~= 1 then return nil end
  local in_use = s.in_use
  prep.single_slots = prep.single_slots or { { alt = alt, admin = alt.admin } }
  local slot = prep.single_slots[1]
  -- one device for one request: a plain device (no counters, no capacity,
  -- not shared) with no constraint to keep needs no search state
  local simple = prep.constraints == nil and alt.capacity == nil
  local ctx
  local rule = selection and selection.rule ~= "FirstFit" and selection.rule or nil
  local best, best_info, best_free
  local function consider(dev, info)
    if rule == nil then return true end
    local free = M.free_capacity(dev, selection.capacity, s.shared_use or EMPTY)
    if better(rule, free, best ~= nil, best_free) then
      if best ~= nil then give(ctx, slot, best, best_info) end
      best, best_info, best_free = dev, info, free
    else
      give(ctx, slot, dev, info)
    end
    return false
  end
  local function scan(slices, check_node)
    for _, slice in ipairs(slices) do
      if not check_node or slice_on_node(slice, node) then
        for _, dev in ipairs(slice.devices) do
          if (alt.admin or not in_use[dev.key]) and not blocked_by_taint(dev, alt.tolerations) then
            local ok, err = matches(alt, dev)
            if ok == nil then return nil, err end
            if ok then
              if simple and not dev.consumes and not dev.capacity and not dev.multi then
                if rule == nil then return dev, PLAIN end
                if ctx == nil then ctx = scratch_context(s); start_claim(ctx, prep) end
                consider(dev, PLAIN)
              else
                if ctx == nil then ctx = scratch_context(s); start_claim(ctx, prep) end
                local info = take(ctx, slot, dev)
                if info and consider(dev, info) then return dev, info end
              end
            end
          end
        end
      end
    end
    return false
  end
  local dev, info = scan(s.slices.by_node[ls.str(node.name)] or NO_TAINTS, false)
  if dev == false then dev, info = scan(s.slices.shared, true) end
  if dev == false and best ~= nil then dev, info = best, best_info end
  if dev == nil then return nil, info end
  if dev == false then return false end
  return { { slots = prep.single_slots, devs = { dev }, infos = { info } } }
end

--- Allocates every claim of the pod on the node, one claim after the other:
--- per claim { slots, devs, infos } (M.result makes the API form), false
--- when impossible, or nil and an error text.
function M.allocate(s, node, filter_timeout, selection)
  local single, single_err = allocate_single(s, node, selection)
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
  local ctx = new_context(s)
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
    start_claim(ctx, prep)
    local ok, slots, devs, infos = pcall(try_alternatives, ctx, prep.requests, 1, {}, cands_of, budget)
    if not ok then
      if slots == Timeout then return nil, "timed out trying to allocate devices" end
      error(slots, 0)
    end
    if not slots then return false end
    out[i] = { slots = slots, devs = devs, infos = infos }
  end
  return out
end

return M
