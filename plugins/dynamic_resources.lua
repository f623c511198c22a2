-- DynamicResources: Dynamic Resource Allocation with structured parameters
-- (resource.k8s.io/v1). A pod's spec.resourceClaims name ResourceClaims; the
-- plugin allocates devices for unallocated claims from the ResourceSlices
-- of the node being filtered, matching the DeviceClass and request
-- selectors (CEL), and writes the claim's status.allocation and reservedFor
-- in PreBind.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/dynamicresources/
-- dynamicresources.go and staging/src/k8s.io/dynamic-resource-allocation/
-- structured/ (v1.37 where stated; the messages below were read in upstream's
-- code of earlier releases and are unchanged as far as could be seen):
-- * PreEnqueue and PreFilter: every claim must exist and not be deleted
--   (UnschedulableAndUnresolvable with the error text: `pod "ns/p":
--   ResourceClaim not created yet` for a template whose claim is not in
--   status.resourceClaimStatuses yet, `resourceclaim "c" is being deleted`,
--   `ResourceClaim ns/c was not created for pod ns/p (pod is not owner)`); a
--   template entry whose status names no claim is skipped. Pods without
--   claims: PreFilter Skip and nothing else runs (zero cost).
-- * PreFilter: an allocated claim that cannot take another consumer (256
--   reservedFor entries) and is not reserved for the pod: "resourceclaim in
--   use"; a claim whose allocation is in flight for another pod: "resource
--   claim ns/c is in the process of being allocated"; a missing class:
--   "request r: device class x does not exist" (all UnschedulableAndUnresolvable).
-- * Filter: an allocated claim's status.allocation.nodeSelector must match
--   the node ("resourceclaim not available on the node"); the others must
--   all be allocatable there ("cannot allocate all claims"); both
--   UnschedulableAndUnresolvable. A CEL error is an Error status (the pod
--   backs off), as upstream's allocator errors are.
-- * Allocation (structured allocator): per request, exactly (deviceClassName,
--   selectors, allocationMode ExactCount with count, default 1, or All,
--   adminAccess, tolerations) or firstAvailable (subrequests tried in order;
--   results name "request/subrequest"); devices of complete pools only
--   (slices of the pool's highest generation, as many as
--   resourceSliceCount) on slices for the node (nodeName, nodeSelector,
--   allNodes), not allocated to any claim nor in flight (adminAccess
--   requests may share); device taints NoSchedule/NoExecute block unless
--   the request tolerates them, effect None never blocks (DRADeviceTaints,
--   GA in 1.37). A backtracking search, so a later request can still get
--   what an earlier one could have taken. The result's nodeSelector is the
--   node (matchFields metadata.name) for node-local slices, else the slice's
--   nodeSelector, else none; class and claim configs are copied into
--   status.allocation.devices.config (FromClass before FromClaim).
-- * Reserve keeps the allocation in flight (no other pod takes its devices);
--   Unreserve drops it and removes the pod from reservedFor of claims it was
--   reserved in. PreBind writes status.allocation and reservedFor
--   ({resource: pods, name, uid}) in one merge patch of the status
--   subresource, with the claim's resourceVersion as precondition; errors
--   are "add allocation and reservation to claim ns/c: ..." / "add
--   reservation to claim ns/c: ..."; "claim ns/c got allocated elsewhere in
--   the meantime". The written claim is assumed until the store sees it.
-- * PostFilter: an allocated claim that was not available on some node and
--   is reserved for nobody or only this pod is deallocated ("deallocation of
--   ResourceClaim completed"); otherwise "still not schedulable"; a pod
--   without claims adds no reason (all Unschedulable).
-- * Events (QueueingHints on): Node Add/UpdateNodeLabel; ResourceClaim
--   Add/Update with upstream's isSchedulableAfterClaimChange; Pod
--   UpdatePodGeneratedResourceClaim with isSchedulableAfterPodChange;
--   DeviceClass and ResourceSlice Add/Update.
-- * Args: filterTimeout (default 10s; 0 turns it off): a node's allocation
--   search running longer is an Error (v1.36, #137607).
--
-- Deviations (said, not hidden):
-- * CEL: the subset of luasched.cel (device.driver, attributes, capacity,
--   comparisons, &&, ||, !, in, quantity/semver methods, has). An
--   expression outside it is an Error naming the class or claim field and
--   what is supported (upstream would evaluate it).
-- * Not modelled: spec.devices.constraints (matchAttribute) and per-request
--   capacity (consumable capacity) are an Error naming the field; devices
--   that consume counters (partitionable devices) and slices with
--   perDeviceNodeSelection are never allocated; binding conditions, the
--   extended-resource claims (DRAExtendedResource), the prioritized-list
--   Score (1.35) and the PreQueueingHint (1.37 alpha) are not implemented.
-- * The missing-claim message is the assume cache's `could not find
--   ResourceClaim "ns/c"` (the TypeName is from memory, not read); the
--   CEL and timeout error texts follow upstream's form, unverified.
-- * PreBind does not add the resource.kubernetes.io/delete-protection
--   finalizer (upstream adds it with a plain update before the status).
-- * Incomplete pools are skipped for every allocation mode.
local ls = require("luasched")
local json = require("luasched.json")
local cel = require("luasched.cel")

local CLAIMS = "resourceclaims.v1.resource.k8s.io"
local SLICES = "resourceslices.v1.resource.k8s.io"
local CLASSES = "deviceclasses.v1.resource.k8s.io"
local RESERVED_FOR_MAX = 256     -- ResourceClaimReservedForMaxSize
local MAX_COUNT = 128            -- AllocationResultsMaxSize

local CLAIM_NAMED, TEMPLATE_PENDING, TEMPLATE_CREATED, TEMPLATE_NONE = 0, 1, 2, 3

local fmt, concat = string.format, table.concat

local P = ls.plugin("DynamicResources", { defaults = { filterTimeout = "10s" } })

-- ---- args -------------------------------------------------------------------

local UNITS = { h = 3600, m = 60, s = 1, ms = 1e-3, us = 1e-6, ["µs"] = 1e-6, ns = 1e-9 }

--- A Go duration ("10s", "1m30s", "500ms", "0") in seconds; nil if invalid.
local function parse_duration(s)
  if s == "0" or s == 0 then return 0 end
  if type(s) ~= "string" or s == "" then return nil end
  local total, pos = 0, 1
  while pos <= #s do
    local num, unit, e = s:match("^(%d+%.?%d*)(%a+)()", pos)
    if not num or not UNITS[unit] then return nil end
    total = total + tonumber(num) * UNITS[unit]
    pos = e
  end
  return total
end

function P:init(args)
  local t = parse_duration(args.filterTimeout)
  if t == nil then
    error(fmt("filterTimeout: Invalid value: %q: expected a duration such as \"10s\"", tostring(args.filterTimeout)), 0)
  end
  self.filter_timeout = t
  self.in_flight = {}      -- claim uid -> list of device keys (Reserve .. PreBind)
  self.assumed = {}        -- claim uid -> { claim = table, old_rv = text } after PreBind
  self.selectors = {}      -- CEL text -> compiled function, or false and the error
  self.selector_errors = {}
  self.status_none = ls.status(ls.UNSCHEDULABLE)
  self.msg_unavailable = ls.unresolvable("resourceclaim not available on the node")
  self.msg_cannot = ls.unresolvable("cannot allocate all claims")
  self.msg_in_use = ls.unresolvable("resourceclaim in use")
  self.msg_still = ls.unschedulable("still not schedulable")
  self.msg_deallocated = ls.unschedulable("deallocation of ResourceClaim completed")
end

-- ---- claims -----------------------------------------------------------------

local function meta(t) return t.metadata or {} end
local function status_of(t) return t.status or {} end
local function allocated(t) local a = status_of(t).allocation; return a ~= nil and a ~= json.null end
local function reserved_for(t)
  local r = status_of(t).reservedFor
  return (r ~= nil and r ~= json.null) and r or {}
end

local function reserved_for_pod(t, pod)
  local uid = ls.str(pod.uid)
  for _, r in ipairs(reserved_for(t)) do
    if r.resource == "pods" and r.uid == uid then return true end
  end
  return false
end

-- The claim as the scheduler sees it: the store's, or what PreBind wrote
-- while the store still has the version before the write.
function P:claim_table(o)
  local t = ls.object_table(o)
  local uid = meta(t).uid
  local a = uid and self.assumed[uid]
  if a then
    if meta(t).resourceVersion == a.old_rv then return a.claim end
    self.assumed[uid] = nil
  end
  return t
end

local function owned_by(t, pod)
  local uid = ls.str(pod.uid)
  for _, ref in ipairs(meta(t).ownerReferences or {}) do
    if ref.controller == true and ref.uid == uid then return true end
  end
  return false
end

--- upstream's foreachPodResourceClaim: the pod's claims (pod order), or nil
--- and the error text.
function P:pod_claims(pod)
  local out, ns, name = {}, ls.str(pod.ns), ls.str(pod.name)
  for i = 0, pod.n_resource_claims - 1 do
    local c = pod.resource_claims[i]
    if c.state == TEMPLATE_PENDING then
      return nil, fmt('pod "%s/%s": ResourceClaim not created yet', ns, name)
    elseif c.state ~= CLAIM_NAMED and c.state ~= TEMPLATE_CREATED and c.state ~= TEMPLATE_NONE then
      return nil, fmt('pod "%s/%s", spec.resourceClaim %q: none of the supported fields are set', ns, name,
        ls.str(c.name))
    end
    if c.state ~= TEMPLATE_NONE then
      local claim_name = ls.str(c.claim_name)
      local o = ls.find_object(CLAIMS, pod.ns, c.claim_name)
      if o == nil then return nil, fmt('could not find ResourceClaim "%s/%s"', ns, claim_name) end
      local t = self:claim_table(o)
      local del = meta(t).deletionTimestamp
      if del ~= nil and del ~= json.null then
        return nil, fmt("resourceclaim %q is being deleted", claim_name)
      end
      if c.state == TEMPLATE_CREATED and not owned_by(t, pod) then
        return nil, fmt("ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)", ns, claim_name, ns, name)
      end
      out[#out + 1] = { obj = o, claim = t, name = claim_name, ns = ns, uid = meta(t).uid or (ns .. "/" .. claim_name) }
    end
  end
  return out
end

-- ---- events and hints -----------------------------------------------------

local function status_text(t)
  return json.encode(t.status or json.null)
end

local plugin_self   -- the instance hints consult (hints get no self)

local function claim_hint(pod, old, new)
  local self = plugin_self
  if self == nil or new == nil then return ls.QUEUE end
  local modified = ls.object_table(new)
  local original = old ~= nil and ls.object_table(old) or nil
  local claims = self:pod_claims(pod)
  if claims == nil then return ls.QUEUE_SKIP end
  if original ~= nil and allocated(original) and not allocated(modified) then return ls.QUEUE end
  local uses = false
  for _, c in ipairs(claims) do
    if c.uid == meta(modified).uid then uses = true end
  end
  if not uses then return ls.QUEUE_SKIP end
  if original == nil then return ls.QUEUE end
  if status_text(original) == status_text(modified) then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

local function pod_hint(pod, _, new)
  local self = plugin_self
  if self == nil or new == nil then return ls.QUEUE end
  if new.uid ~= pod.uid then return ls.QUEUE_SKIP end
  if self:pod_claims(new) == nil then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

P.events = {
  { resource = "Node", action = { "Add", "UpdateNodeLabel" } },
  { resource = CLAIMS, action = { "Add", "Update" }, hint = claim_hint },
  { resource = "Pod", action = { "UpdatePodGeneratedResourceClaim" }, hint = pod_hint },
  { resource = CLASSES, action = { "Add", "Update" } },
  { resource = SLICES, action = { "Add", "Update" } },
}

-- ---- PreEnqueue -------------------------------------------------------------

function P:pre_enqueue(pod)
  plugin_self = self
  if pod.n_resource_claims == 0 then return nil end
  local claims, err = self:pod_claims(pod)
  if claims == nil then return ls.unresolvable(err) end
  return nil
end

-- ---- the inventory: slices, pools, devices ----------------------------------

local function device_key(driver, pool, name) return driver .. "/" .. pool .. "/" .. name end

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

local function compile_node_selector(sel, where)
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
local function gather_slices()
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
  local out = {}
  for _, s in ipairs(slices) do
    local spec = s.t.spec
    local entry = { driver = spec.driver, pool = spec.pool.name, devices = {}, node_name = spec.nodeName,
                    all_nodes = spec.allNodes == true, where = "ResourceSlice " .. s.name }
    if spec.nodeSelector ~= nil and spec.nodeSelector ~= json.null then
      entry.node_selector = compile_node_selector(spec.nodeSelector, entry.where .. ": spec.nodeSelector")
      entry.node_selector_json = spec.nodeSelector
    end
    if spec.perDeviceNodeSelection ~= true then
      for _, d in ipairs(spec.devices or {}) do
        local cc = d.consumesCounters
        if cc == nil or cc == json.null or #cc == 0 then
          entry.devices[#entry.devices + 1] = { name = d.name, raw = d,
            key = device_key(entry.driver, entry.pool, d.name), slice = entry }
        end
      end
    end
    out[#out + 1] = entry
  end
  return out
end

local function add_allocated(set, allocation)
  local results = ((allocation or {}).devices or {}).results or {}
  for _, r in ipairs(results) do
    if r.adminAccess ~= true then set[device_key(r.driver, r.pool, r.device)] = true end
  end
end

function P:allocated_devices()
  local set = {}
  for o in ls.objects(CLAIMS) do
    local t = self:claim_table(o)
    if allocated(t) then add_allocated(set, t.status.allocation) end
  end
  for _, keys in pairs(self.in_flight) do
    for _, k in ipairs(keys) do set[k] = true end
  end
  return set
end

-- ---- requests and selectors -------------------------------------------------

function P:compile(expr, where)
  local fn = self.selectors[expr]
  if fn == nil then
    local f, err = cel.compile(expr)
    fn = f or false
    self.selectors[expr] = fn
    self.selector_errors[expr] = err
  end
  if fn == false then
    return nil, fmt("%s: CEL compile error: %s", where, self.selector_errors[expr])
  end
  return fn
end

-- Selectors of a class or request: list of { fn, label } or nil, error.
function P:selector_list(list, prefix, field)
  local out = {}
  for i, s in ipairs(list or {}) do
    local expr = s.cel and s.cel.expression
    local label = fmt("%s: selector #%d", prefix, i - 1)
    if type(expr) ~= "string" then return nil, fmt("%s: %s[%d].cel.expression: expected a string", label, field, i - 1) end
    local fn, err = self:compile(expr, fmt("%s (%s[%d].cel.expression)", label, field, i - 1))
    if not fn then return nil, err end
    out[#out + 1] = { fn = fn, label = label }
  end
  return out
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

-- One request (or subrequest) in allocator form, or nil and an Error text.
function P:request_spec(claim_label, name, r, where)
  local class_name = r.deviceClassName
  if class_name == nil or class_name == "" then
    return nil, fmt("request %s: unsupported request type", name), true
  end
  local class_obj = ls.find_object(CLASSES, 0, class_name)
  if class_obj == nil then
    return nil, fmt("request %s: device class %s does not exist", name, class_name)
  end
  if r.capacity ~= nil and r.capacity ~= json.null then
    return nil, fmt("%s: %s.capacity: consumable capacity is not supported by luasched", claim_label, where), true
  end
  local class = ls.object_table(class_obj)
  local class_sel, err = self:selector_list((class.spec or {}).selectors, "class " .. class_name, "spec.selectors")
  if not class_sel then return nil, err, true end
  local req_sel
  req_sel, err = self:selector_list(r.selectors, claim_label, where .. ".selectors")
  if not req_sel then return nil, err, true end
  local mode = r.allocationMode or "ExactCount"
  if mode ~= "ExactCount" and mode ~= "All" then
    return nil, fmt("%s: %s.allocationMode: unsupported %q", claim_label, where, tostring(mode)), true
  end
  return { name = name, class = class, class_name = class_name, selectors = { class_sel, req_sel },
           mode = mode, count = r.count or 1, admin = r.adminAccess == true, tolerations = r.tolerations or {},
           memo = {} }
end

--- The claims to allocate in allocator form: per claim a list of requests,
--- each a list of alternatives (one unless firstAvailable). nil, status on error.
function P:prepare(claim)
  local label = fmt("claim %s/%s", claim.ns, claim.name)
  local spec = (claim.claim.spec or {}).devices or {}
  local cons = spec.constraints
  if cons ~= nil and cons ~= json.null and #cons > 0 then
    return nil, ls.error(label .. ": spec.devices.constraints is not supported by luasched")
  end
  local requests = {}
  for i, r in ipairs(spec.requests or {}) do
    local where = fmt("spec.devices.requests[%d]", i - 1)
    local alts = {}
    if r.firstAvailable ~= nil and r.firstAvailable ~= json.null and #r.firstAvailable > 0 then
      for k, sub in ipairs(r.firstAvailable) do
        local a, err, is_error = self:request_spec(label, r.name .. "/" .. (sub.name or ""), sub,
          fmt("%s.firstAvailable[%d]", where, k - 1))
        if not a then return nil, is_error and ls.error(err) or ls.unresolvable(err) end
        alts[#alts + 1] = a
      end
    else
      local a, err, is_error = self:request_spec(label, r.name, r.exactly or {}, where .. ".exactly")
      if not a then return nil, is_error and ls.error(err) or ls.unresolvable(err) end
      alts[1] = a
    end
    requests[#requests + 1] = { name = r.name, alts = alts }
  end
  return { claim = claim, requests = requests, configs = spec.config }
end

-- ---- PreFilter --------------------------------------------------------------

function P:pre_filter(state, pod)
  plugin_self = self
  if pod.n_resource_claims == 0 then return ls.skip end
  local claims, err = self:pod_claims(pod)
  if claims == nil then return ls.unresolvable(err) end
  if #claims == 0 then return ls.skip end
  local s = { claims = claims, selectors = {}, to_allocate = {}, node_allocations = {}, unavailable = {} }
  for i, c in ipairs(claims) do
    if allocated(c.claim) then
      if #reserved_for(c.claim) >= RESERVED_FOR_MAX and not reserved_for_pod(c.claim, pod) then
        return self.msg_in_use
      end
      local sel = c.claim.status.allocation.nodeSelector
      s.selectors[i] = compile_node_selector(sel, "status.allocation.nodeSelector")
    else
      if self.in_flight[c.uid] then
        return ls.unresolvable(fmt("resource claim %s/%s is in the process of being allocated", c.ns, c.name))
      end
      local prepared, st = self:prepare(c)
      if not prepared then return st end
      prepared.index = i
      s.to_allocate[#s.to_allocate + 1] = prepared
    end
  end
  if #s.to_allocate > 0 then
    s.in_use = self:allocated_devices()
    s.slices = gather_slices()
  end
  state.dynamic_resources = s
  return nil
end

function P.clone_state(entry) return entry end

-- ---- Filter: the allocator ----------------------------------------------------

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
  for _, taint in ipairs(dev.raw.taints or {}) do
    if (taint.effect == "NoSchedule" or taint.effect == "NoExecute") and not tolerated(taint, tolerations) then
      return true
    end
  end
  return false
end

-- Does the device match the request's class and request selectors? true,
-- false, or nil and the CEL runtime error (memoized per device).
local function matches(req, dev)
  local m = req.memo[dev.key]
  if m ~= nil then return m[1], m[2] end
  dev.cel = dev.cel or cel.device(dev.slice.driver, dev.raw)
  local ok, err = true, nil
  for _, list in ipairs(req.selectors) do
    for _, sel in ipairs(list) do
      local v, e = cel.eval(sel.fn, dev.cel)
      if v == nil then ok, err = nil, sel.label .. ": CEL runtime error: " .. e break end
      if not v then ok = false break end
    end
    if ok ~= true then break end
  end
  req.memo[dev.key] = { ok, err }
  return ok, err
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
-- every slot got a distinct free device; picks[slot] holds it.
local function search(slots, k, taken, picks, budget)
  if k > #slots then return true end
  budget.steps = budget.steps + 1
  if budget.steps % 256 == 0 and budget.deadline and os.clock() > budget.deadline then error(Timeout) end
  local slot = slots[k]
  local cands = slot.cands
  -- Slots of one request take devices in increasing candidate order (no permutations).
  local first = (slot.prev_same and picks[k - 1].pos + 1) or 1
  for i = first, #cands do
    local dev = cands[i]
    if slot.admin or not taken[dev.key] then
      if not slot.admin then taken[dev.key] = true end
      picks[k] = { dev = dev, pos = i }
      if search(slots, k + 1, taken, picks, budget) then return true end
      if not slot.admin then taken[dev.key] = nil end
    end
  end
  picks[k] = nil
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

-- Tries the alternatives of every request in order (firstAvailable).
local function allocate_requests(requests, cands_of, budget)
  local choice = {}
  local function try(r)
    if r > #requests then
      local slots = slots_for(choice, cands_of)
      if not slots then return nil end
      local picks = {}
      if search(slots, 1, budget.taken_base(), picks, budget) then return slots, picks end
      return nil
    end
    for _, alt in ipairs(requests[r].alts) do
      choice[r] = alt
      local slots, picks = try(r + 1)
      if slots then return slots, picks end
    end
    return nil
  end
  return try(1)
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

local function allocation_result(prep, slots, picks, node_name)
  local results, used, used_classes = json.array(), {}, {}
  for k, slot in ipairs(slots) do
    local dev = picks[k].dev
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
function P:allocate(s, node)
  local devices = {}
  for _, slice in ipairs(s.slices) do
    if slice_on_node(slice, node) then
      for _, d in ipairs(slice.devices) do devices[#devices + 1] = d end
    end
  end
  local taken = {}
  local budget = { steps = 0, deadline = self.filter_timeout > 0 and os.clock() + self.filter_timeout or nil,
                   taken_base = function() return taken end }
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
    local ok, slots, picks = pcall(allocate_requests, prep.requests, cands_of, budget)
    if not ok then
      if slots == Timeout then return nil, "timed out trying to allocate devices" end
      error(slots, 0)
    end
    if not slots then return false end
    out[i] = allocation_result(prep, slots, picks, ls.str(node.name))
  end
  return out
end

function P:filter(state, _, node)
  local s = state.dynamic_resources
  if s == nil then return nil end
  local n = node.node
  local unavailable = false
  for i in pairs(s.selectors) do
    if not ls.node_selector_matches(s.selectors[i], n) then
      s.unavailable[i] = true
      unavailable = true
    end
  end
  if #s.to_allocate > 0 then
    local allocations, err = self:allocate(s, n)
    if allocations == nil then return ls.error(err) end
    if allocations == false then return self.msg_cannot end
    s.node_allocations[n.name] = allocations
  end
  if unavailable then return self.msg_unavailable end
  return nil
end

-- ---- PostFilter -------------------------------------------------------------

local function only_for(t, pod)
  local r = reserved_for(t)
  return #r == 0 or (#r == 1 and r[1].uid == ls.str(pod.uid))
end

function P:post_filter(state, pod)
  if pod.n_resource_claims == 0 then return self.status_none end
  local s = state.dynamic_resources
  if s == nil then return self.status_none end
  for i in pairs(s.unavailable) do
    local c = s.claims[i]
    if only_for(c.claim, pod) then
      local patch = { metadata = { resourceVersion = meta(c.claim).resourceVersion },
                      status = { allocation = json.null, reservedFor = json.null } }
      local err = ls.patch_status(c.obj, json.encode(patch))
      if err then return ls.error(err) end
      return self.msg_deallocated
    end
  end
  return self.msg_still
end

-- ---- Reserve / Unreserve ------------------------------------------------------

function P:reserve(state, _, node_name)
  local s = state.dynamic_resources
  if s == nil or #s.to_allocate == 0 then return nil end
  local allocations = s.node_allocations[ls.intern(node_name)]
  if allocations == nil then return ls.error("claim allocation not found for node") end
  s.allocations = {}
  for i, prep in ipairs(s.to_allocate) do
    local a = allocations[i]
    local keys = {}
    for _, r in ipairs(a.devices.results) do
      if not r.adminAccess then keys[#keys + 1] = device_key(r.driver, r.pool, r.device) end
    end
    self.in_flight[prep.claim.uid] = keys
    s.allocations[prep.index] = a
  end
  return nil
end

function P:unreserve(state, pod)
  local s = state.dynamic_resources
  if s == nil then return end
  local uid = ls.str(pod.uid)
  for _, c in ipairs(s.claims) do
    self.in_flight[c.uid] = nil
    local o = ls.find_object(CLAIMS, pod.ns, ls.intern(c.name))
    local t = o and self:claim_table(o)
    if t and allocated(t) and reserved_for_pod(t, pod) then
      local keep = json.array()
      for _, r in ipairs(reserved_for(t)) do
        if r.uid ~= uid then keep[#keep + 1] = r end
      end
      ls.patch_status(o, json.encode({ status = { reservedFor = keep } }))
    end
  end
end

-- ---- PreBind ----------------------------------------------------------------

local function merged_claim(t, status)
  local copy = {}
  for k, v in pairs(t) do copy[k] = v end
  local st = {}
  for k, v in pairs(t.status or {}) do st[k] = v end
  for k, v in pairs(status) do st[k] = v end
  copy.status = st
  return copy
end

function P:bind_claim(s, i, pod)
  local c = s.claims[i]
  local allocation = s.allocations and s.allocations[i]
  local o = ls.find_object(CLAIMS, pod.ns, ls.intern(c.name))
  local t = o and self:claim_table(o)
  if t == nil then return fmt("claim %s/%s got deleted in the meantime", c.ns, c.name) end
  local del = meta(t).deletionTimestamp
  if del ~= nil and del ~= json.null then return fmt("claim %s/%s got deleted in the meantime", c.ns, c.name) end
  local status = {}
  if allocation then
    if allocated(t) then return fmt("claim %s/%s got allocated elsewhere in the meantime", c.ns, c.name) end
    status.allocation = allocation
  end
  local reserved = json.array()
  for _, r in ipairs(reserved_for(t)) do reserved[#reserved + 1] = r end
  reserved[#reserved + 1] = { resource = "pods", name = ls.str(pod.name), uid = ls.str(pod.uid) }
  status.reservedFor = reserved
  local patch = { status = status }
  local rv = meta(t).resourceVersion
  if rv ~= nil then patch.metadata = { resourceVersion = rv } end
  local err = ls.patch_status(o, json.encode(patch))
  if err then
    return fmt(allocation and "add allocation and reservation to claim %s/%s: %s" or "add reservation to claim %s/%s: %s",
      c.ns, c.name, err)
  end
  if meta(t).uid then self.assumed[meta(t).uid] = { claim = merged_claim(t, status), old_rv = rv } end
  return nil
end

function P:pre_bind(state, pod)
  local s = state.dynamic_resources
  if s == nil then return nil end
  for i, c in ipairs(s.claims) do
    if not reserved_for_pod(c.claim, pod) then
      local err = self:bind_claim(s, i, pod)
      self.in_flight[c.uid] = nil
      if err then return ls.error(err) end
    end
  end
  return nil
end

return P
