-- DynamicResources: Dynamic Resource Allocation with structured parameters
-- (resource.k8s.io/v1). A pod's spec.resourceClaims name ResourceClaims; the
-- plugin allocates devices for unallocated claims from the ResourceSlices
-- of the node being filtered, matching the DeviceClass and request
-- selectors (CEL), and writes the claim's status.allocation and reservedFor
-- in PreBind.
--
-- (Over 800 lines because of this header, the list of what is and is not
-- modelled, kept beside the code; the allocator, capacity and binding
-- checks and the extended-resource claim are in
-- dynamic_resources_{allocator,capacity,binding,extended}.lua.)
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
-- * Allocation (structured allocator, dynamic_resources_allocator.lua and
--   dynamic_resources_capacity.lua; upstream structured/internal/incubating):
--   per request, exactly (deviceClassName, selectors, allocationMode
--   ExactCount with count, default 1, or All, adminAccess, tolerations,
--   capacity.requests) or firstAvailable (subrequests tried in order;
--   results name "request/subrequest"); devices of complete pools only
--   (slices of the pool's highest generation, as many as resourceSliceCount)
--   on slices for the node (nodeName, nodeSelector, allNodes), not allocated
--   to any claim nor in flight (adminAccess requests may share); device
--   taints NoSchedule/NoExecute block unless the request tolerates them,
--   effect None never blocks (DRADeviceTaints, GA in 1.37). A backtracking
--   search, so a later request can still get what an earlier one could have
--   taken. The result's nodeSelector is the node (matchFields metadata.name)
--   for node-local slices or a bindsToNode device, else the slice's
--   nodeSelector, else none; class and claim configs are copied into
--   status.allocation.devices.config (FromClass before FromClaim).
-- * Partitionable devices (DRAPartitionableDevices, beta, on): a device's
--   consumesCounters take from its pool's counter sets (sharedCounters, in
--   any slice of the pool, 1.35+); a device is allocated only while the
--   counters of the pool's allocated and being-allocated devices stay within
--   the sets (checkAvailableCounters).
-- * Consumable capacity (DRAConsumableCapacity, beta, on): a device with
--   allowMultipleAllocations is shared by claims; each result consumes, per
--   capacity of the device, the request's capacity.requests rounded by the
--   capacity's requestPolicy (validRange: up to min, then to min + k*step;
--   validValues: the first value >= the request), or the policy's default,
--   or the whole value when nothing is asked; a request above validRange.max
--   or off validValues, for a capacity the device lacks, or beyond what the
--   other shares left, does not fit. The result records consumedCapacity and
--   a shareID; allocated shares are summed from the claims' results.
-- * Constraints: matchAttribute (all devices of the named requests, or of
--   all, share the attribute's value) and distinctAttribute (no two equal);
--   an attribute is "domain/name", the driver's own domain optional in the
--   slice.
-- * Binding conditions (DRADeviceBindingConditions with
--   DRAResourceClaimDeviceStatus, on): a device's bindingConditions and
--   bindingFailureConditions are copied into its result; PreBind sets
--   status.allocation.allocationTimestamp, then (when a result has binding
--   conditions) checks the claims at once and every 5 s: done when every
--   binding condition is True in the claim's status.devices entry for the
--   device; a True failure condition is the Error `claim <name> binding
--   failed: reason=<r>, message="<m>"`, a claim allocated longer than
--   bindingTimeout ago `claim <name> binding timeout`, the end of the wait
--   (bindingTimeout) "device binding timeout". In a later cycle Filter
--   marks such a claim unavailable ("resourceclaim not available on the
--   node") and PostFilter deallocates it, status.devices with it.
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
--   whose PreFilter recorded no claims (a pod without claims, a PreFilter
--   that failed first, or every template needed none): "no new claims to
--   deallocate" (all Unschedulable, so the next PostFilter plugin, preemption,
--   still runs). When this plugin's PreFilter did not run at all (an earlier
--   PreFilter plugin rejected the pod as UnschedulableAndUnresolvable, or
--   PreFilter results did not intersect), upstream's getStateData finds no
--   state and PostFilter is an Error "not found" (CycleState.Read's
--   ErrNotFound, unwrapped): it ends PostFilter, preemption does not run.
-- * Events (QueueingHints on): Node Add/UpdateNodeLabel; ResourceClaim
--   Add/Update with upstream's isSchedulableAfterClaimChange; Pod
--   UpdatePodGeneratedResourceClaim with isSchedulableAfterPodChange;
--   DeviceClass and ResourceSlice Add/Update.
-- * Args: filterTimeout (default 10s; 0 turns it off): a node's allocation
--   search running longer is an Error (v1.36, #137607). bindingTimeout
--   (default 10m0s, as when DRADeviceBindingConditions and
--   DRAResourceClaimDeviceStatus are on, both on in v1.37) bounds PreBind's
--   wait for binding conditions.
--
-- Deviations (said, not hidden):
-- * deviceSelection (luasched's own arg; upstream has no such field and
--   always takes the first device that fits, the default here too):
--   {rule: BestFit|WorstFit, capacity: <name>} makes a claim of one request
--   for one device take, among the devices that fit, the one with the least
--   (most) of that consumable capacity left, the earlier on ties: the GPU
--   choice of OpenGpuShare's gpuSelMethod best (worst), for the policy lab's
--   GPU sharing through DRA. Requests for more devices keep the first fit.
-- * CEL: the subset of luasched.cel (device.driver, attributes, capacity,
--   comparisons, &&, ||, !, in, quantity/semver methods, has). An
--   expression outside it (or malformed) is an Error at PreFilter ("running
--   PreFilter plugin ...: class c: selector #0 (spec.selectors[0].cel.
--   expression): CEL compile error: ... (supported: ...)"); upstream compiles
--   in its allocator and would evaluate what is outside the subset. CEL
--   runtime errors (a missing attribute) are Filter Errors, as upstream's.
-- * Extended resources backed by DRA (DRAExtendedResource, GA, locked): a
--   pod's request of a resource a DeviceClass maps (spec.extendedResourceName,
--   or deviceclass.resource.kubernetes.io/<class>) is, on a node that does
--   not advertise it, allocated through a special claim: one request per
--   container asking for it, container-<i>-request-<j>, ExactCount of the
--   quantity (NodeResourcesFit leaves such a resource to this plugin on
--   those nodes). PreBind creates the claim (generateName
--   <pod>-extended-resources-, the pod as controller, annotation
--   resource.kubernetes.io/extended-resource-claim: "true"), writes its
--   allocation and reservation, then the pod's
--   status.extendedResourceClaimStatus; errors "create claim for extended
--   resources <ns>/: ...", "update pod <ns>/<name>
--   ExtendedResourceClaimStatus: ...". A claim of an earlier cycle makes
--   Filter "cannot schedule extended resource claim".
-- * Not modelled: deleting the special claim (upstream's PostFilter
--   "deletion of ResourceClaim completed" and Unreserve: plugins cannot
--   delete objects; `run` creates it through its supervisor, which allows
--   only this claim: core/src/client/claim_check.c); the
--   special claim's binding conditions are not waited for; slices with
--   perDeviceNodeSelection are never allocated; DeviceTaintRules are not
--   read; the PreQueueingHint (1.37 alpha) is not implemented. With
--   DRAConsumableCapacity off, the capacity-request Error comes at PreFilter
--   (upstream: the allocator, at Filter). A shareID is derived
--   from the claim, the device and the result's index (upstream draws a
--   random one), so a replay writes the same; the CEL view of a device has
--   no allowMultipleAllocations field.
-- * Score (the prioritized-list score, 1.35+): see Score below; 0 for a pod
--   without claims, as upstream's Score plugin gives.
-- * The missing-claim message is the assume cache's `could not find
--   ResourceClaim "ns/c"` (the TypeName is from memory, not read); the
--   CEL and timeout error texts follow upstream's form, unverified.
-- * PreBind does not add the resource.kubernetes.io/delete-protection
--   finalizer (upstream adds it with a plain update before the status).
-- * Incomplete pools are skipped for every allocation mode. A pod's claims
--   are allocated one after the other: the search backtracks within a claim
--   (requests, subrequests) but not across claims.
-- * Objects are decoded from JSON once per version (ls.object_table); the
--   slice inventory and the allocated-device set are kept between cycles
--   until a slice or claim changes (ls.objects_generation).
local ls = require("luasched")
local json = require("luasched.json")
local cel = require("luasched.cel")
local A = require("dynamic_resources_allocator")
local CAP = require("dynamic_resources_capacity")
local B = require("dynamic_resources_binding")
local E = require("dynamic_resources_extended")

local CLAIMS = "resourceclaims.v1.resource.k8s.io"
local SLICES = "resourceslices.v1.resource.k8s.io"
local CLASSES = "deviceclasses.v1.resource.k8s.io"
local RESERVED_FOR_MAX = 256     -- ResourceClaimReservedForMaxSize
local CLAIM_NAMED, TEMPLATE_PENDING = ls.CLAIM_NAMED, ls.CLAIM_TEMPLATE_PENDING
local TEMPLATE_CREATED, TEMPLATE_NONE = ls.CLAIM_TEMPLATE_CREATED, ls.CLAIM_TEMPLATE_NONE

local fmt = string.format

-- DRASchedulerFilterTimeout (beta, on in v1.37). With --feature-gates
-- DRASchedulerFilterTimeout=false, as upstream: no default filterTimeout,
-- one given is refused (Forbidden), and Filter has no time limit.
local FILTER_TIMEOUT = ls.feature_enabled("DRASchedulerFilterTimeout")
local P = ls.plugin("DynamicResources", {
  defaults = { filterTimeout = FILTER_TIMEOUT and "10s" or nil, bindingTimeout = "10m0s" },
  -- deviceSelection: a luasched extension (not in upstream's DynamicResourcesArgs), see init
  optional = { filterTimeout = not FILTER_TIMEOUT and "any" or nil,
               deviceSelection = { rule = "string", capacity = "string" } },
})
P.allocator = A   -- its allocator module (the test kit reads results through it)

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

-- A Go duration that may be negative: its seconds, or nil.
local function signed_duration(s)
  if type(s) == "string" and s:sub(1, 1) == "-" then
    local t = parse_duration(s:sub(2))
    return t and -t
  end
  return parse_duration(s)
end

function P:init(args)
  local t = 0   -- no limit
  if not FILTER_TIMEOUT then
    if args.filterTimeout ~= nil then
      error("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled", 0)
    end
  else
    t = signed_duration(args.filterTimeout)
    if t == nil then
      error(fmt("filterTimeout: Invalid value: %q: expected a duration such as \"10s\"",
        tostring(args.filterTimeout)), 0)
    end
    if t < 0 then error(fmt("filterTimeout: Invalid value: %q: must be zero or positive", args.filterTimeout), 0) end
  end
  self.filter_timeout = t
  local b = signed_duration(args.bindingTimeout)
  if b == nil then
    error(fmt("bindingTimeout: Invalid value: %q: expected a duration such as \"10m0s\"",
      tostring(args.bindingTimeout)), 0)
  end
  if b < 1 then error(fmt("bindingTimeout: Invalid value: %q: must be at least 1 second", args.bindingTimeout), 0) end
  self.binding_timeout = b   -- bounds PreBind's wait for binding conditions
  -- deviceSelection (luasched's, absent upstream): which of the devices that
  -- fit a one-device request is taken. Unset or FirstFit: the first in slice
  -- order, as upstream's allocator; BestFit / WorstFit: the least / most of
  -- the named consumable capacity left (docs/upstream-parity/dra.md).
  local sel_err = A.check_selection(args.deviceSelection)
  if sel_err then error(sel_err, 0) end
  self.device_selection = args.deviceSelection
  -- allocationTimestamp is wall-clock time (upstream's time.Now()): the
  -- scheduler's clock (ms since the start, virtual in a simulation) from now
  self.wall_anchor_ms = os.time() * 1000
  self.in_flight = {}      -- claim uid -> list of device keys (Reserve .. PreBind)
  self.flight_version = 0  -- bumped when in_flight or assumed change (allocated_devices' cache)
  self.assumed = {}        -- claim uid -> { claim = table, old_rv = text } after PreBind
  self.selectors = {}      -- CEL text -> compiled function, or false and the error
  self.selector_errors = {}
  self.match_memos = ls.bounded_cache(256)   -- selector texts -> { device entry -> result }
  self.msg_no_state = ls.error("not found")
  self.msg_unavailable = ls.unresolvable("resourceclaim not available on the node")
  self.msg_cannot = ls.unresolvable("cannot allocate all claims")
  self.msg_in_use = ls.unresolvable("resourceclaim in use")
  self.msg_still = ls.unschedulable("still not schedulable")
  self.msg_no_claims = ls.unschedulable("no new claims to deallocate")
  self.msg_deallocated = ls.unschedulable("deallocation of ResourceClaim completed")
  self.msg_ext_existing = ls.unresolvable("cannot schedule extended resource claim")
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
    self.flight_version = self.flight_version + 1
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
        return nil, fmt("ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)",
          ns, claim_name, ns, name)
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
  -- Only pods DynamicResources rejected get here, and those have claims.
  if pod.n_resource_claims == 0 then return ls.QUEUE_SKIP end
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

-- ---- allocated devices ------------------------------------------------------

-- A claim version's allocated device keys (not admin access) and its shares
-- of devices allowing multiple allocations, built once.
local claim_devices = setmetatable({}, { __mode = "k" })
local NONE = { keys = {} }

local function devices_of(t)
  local d = claim_devices[t]
  if d == nil then
    d = NONE
    if allocated(t) then
      local set, shared = {}, {}
      A.add_allocated(set, t.status.allocation, shared)
      d = { keys = {}, shared = next(shared) and shared or nil }
      for k in pairs(set) do d.keys[#d.keys + 1] = k end
    end
    claim_devices[t] = d
  end
  return d
end

local function add_shares(shared, from)
  for key, usage in pairs(from) do
    local u = shared[key] or {}
    shared[key] = u
    for q, m in pairs(usage) do u[q] = (u[q] or 0) + m end
  end
end

--- The devices allocated to claims or in flight (key -> true), and the
--- capacity consumed on devices allowing multiple allocations (key -> name
--- -> milli): upstream's AllocatedState.
function P:allocated_devices()
  local gen = ls.objects_generation(CLAIMS)
  local cached = self.allocated_cache
  if cached and cached.gen == gen and cached.flight == self.flight_version then return cached.set, cached.shared end
  local set, shared = {}, {}
  for o in ls.objects(CLAIMS) do
    local d = devices_of(self:claim_table(o))
    for _, k in ipairs(d.keys) do set[k] = true end
    if d.shared then add_shares(shared, d.shared) end
  end
  for _, allocation in pairs(self.in_flight) do A.add_allocated(set, allocation, shared) end
  self.allocated_cache = { gen = gen, flight = self.flight_version, set = set, shared = shared }
  return set, shared
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
    if type(expr) ~= "string" then
      return nil, fmt("%s: %s[%d].cel.expression: expected a string", label, field, i - 1)
    end
    local fn, err = self:compile(expr, fmt("%s (%s[%d].cel.expression)", label, field, i - 1))
    if not fn then return nil, err end
    out[#out + 1] = { fn = fn, label = label }
  end
  return out
end

-- One request (or subrequest) in allocator form, or nil and an Error text.
function P:request_spec(claim_label, name, r, where, base, full)
  local class_name = r.deviceClassName
  if class_name == nil or class_name == "" then
    return nil, fmt("request %s: unsupported request type", name), true
  end
  local class_obj = ls.find_object(CLASSES, 0, class_name)
  if class_obj == nil then
    return nil, fmt("request %s: device class %s does not exist", name, class_name)
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
  -- Selector results per device entry, kept across cycles for the same
  -- class and request selectors (entries change with their slice's version).
  local sig = {}
  for _, list in ipairs({ (class.spec or {}).selectors or {}, r.selectors or {} }) do
    for _, sel in ipairs(list) do sig[#sig + 1] = sel.cel.expression end
    sig[#sig + 1] = "\0"
  end
  local memo = ls.cache_get(self.match_memos, table.concat(sig, "\1"), function()
    return setmetatable({}, { __mode = "k" })
  end)
  local capacity = r.capacity ~= nil and r.capacity ~= json.null and r.capacity.requests or nil
  if capacity == json.null or (capacity ~= nil and next(capacity) == nil) then capacity = nil end
  if r.capacity ~= nil and r.capacity ~= json.null and not A.consumable_capacity then
    -- upstream's allocator (an Error; see the deviations: PreFilter here, Filter there)
    return nil, fmt("claim %s, %s %s: has capacity requests, but the DRAConsumableCapacity feature is disabled",
      claim_label:sub(7), full and "subrequest" or "request", full and full:match("/(.*)$") or name), true
  end
  return { name = name, base = base, full = full, class = class, class_name = class_name,
           selectors = { class_sel, req_sel }, mode = mode, count = r.count or 1, admin = r.adminAccess == true,
           tolerations = r.tolerations or {}, capacity = capacity, memo = memo }
end

--- The claims to allocate in allocator form: per claim a list of requests,
--- each a list of alternatives (one unless firstAvailable). nil, status on error.
function P:prepare(claim)
  local label = fmt("claim %s/%s", claim.ns, claim.name)
  local spec = (claim.claim.spec or {}).devices or {}
  local constraints, cerr = CAP.constraints(spec.constraints ~= json.null and spec.constraints or nil,
    claim.ns .. "/" .. claim.name)
  if not constraints then return nil, ls.error(cerr) end
  local requests = {}
  for i, r in ipairs(spec.requests or {}) do
    local where = fmt("spec.devices.requests[%d]", i - 1)
    local alts = {}
    if r.firstAvailable ~= nil and r.firstAvailable ~= json.null and #r.firstAvailable > 0 then
      for k, sub in ipairs(r.firstAvailable) do
        local full = r.name .. "/" .. (sub.name or "")
        local a, err, is_error = self:request_spec(label, full, sub,
          fmt("%s.firstAvailable[%d]", where, k - 1), r.name, full)
        if not a then return nil, is_error and ls.error(err) or ls.unresolvable(err) end
        a.rank = k - 1   -- its place in firstAvailable, for Score
        alts[#alts + 1] = a
      end
    else
      local a, err, is_error = self:request_spec(label, r.name, r.exactly or {}, where .. ".exactly", r.name, nil)
      if not a then return nil, is_error and ls.error(err) or ls.unresolvable(err) end
      alts[1] = a
    end
    requests[#requests + 1] = { name = r.name, alts = alts }
  end
  return { claim = claim, requests = requests, configs = spec.config,
           constraints = #constraints > 0 and constraints or nil }
end

local FIRST_AVAILABLE_MAX = 8   -- resourceapi.FirstAvailableDeviceRequestMaxSize

-- The score of the claims allocated before this cycle (the same on every node).
local function allocated_claims_score(claims)
  local score = 0
  for _, c in ipairs(claims) do
    if allocated(c.claim) then
      local got = {}
      local devices = c.claim.status.allocation.devices or {}
      for _, r in ipairs(devices.results or {}) do got[r.request or ""] = true end
      for _, req in ipairs(((c.claim.spec or {}).devices or {}).requests or {}) do
        for i, sub in ipairs(req.firstAvailable or {}) do
          if got[(req.name or "") .. "/" .. (sub.name or "")] then score = score + FIRST_AVAILABLE_MAX - (i - 1) end
        end
      end
    end
  end
  return score
end

-- ---- binding conditions (DRADeviceBindingConditions, DRAResourceClaimDeviceStatus) --

local BINDING_POLL_S = 5   -- upstream polls the claims every 5 s while it waits
local has_binding_conditions, ready_for_binding = B.has_binding_conditions, B.ready_for_binding

--- upstream's isClaimTimeout: allocated at allocationTimestamp, a device with
--- binding conditions, and bindingTimeout gone by.
function P:binding_timed_out(t, now)
  if not has_binding_conditions(t) then return false end
  local at = B.time_ms(t.status.allocation.allocationTimestamp)
  return at ~= nil and at + self.binding_timeout * 1000 < self.wall_anchor_ms + now
end

-- isPodReadyForBinding over the pod's claims as the store has them now.
function P:pod_ready_for_binding(s, pod, now)
  for _, c in ipairs(s.claims) do
    local o = ls.find_object(CLAIMS, pod.ns, ls.intern(c.name))
    local t = o and self:claim_table(o)
    if t == nil then return nil, fmt('could not find ResourceClaim "%s/%s"', c.ns, c.name) end
    local ready, err = ready_for_binding(t, c.name)
    if ready == nil then return nil, err end
    if not ready then
      if self:binding_timed_out(t, now) then return nil, fmt("claim %s binding timeout", c.name) end
      return false
    end
  end
  return true
end

-- ---- PreFilter --------------------------------------------------------------

function P:pre_filter(state, pod)
  plugin_self = self
  -- upstream writes its (empty) state before anything else: PostFilter
  -- tells "no claims" from "PreFilter never ran" by it
  state.dynamic_resources_prefiltered = true
  local ext = E.pre_filter(pod)
  if pod.n_resource_claims == 0 and ext == nil then return ls.skip end
  local claims = {}
  if pod.n_resource_claims > 0 then
    local err
    claims, err = self:pod_claims(pod)
    if claims == nil then return ls.unresolvable(err) end
  end
  if #claims == 0 and ext == nil then return ls.skip end
  local s = { claims = claims, selectors = {}, to_allocate = {}, node_allocations = {}, unavailable = {},
              binding_stuck = {}, ext = ext, node_lists = {} }
  for i, c in ipairs(claims) do
    if allocated(c.claim) then
      if #reserved_for(c.claim) >= RESERVED_FOR_MAX and not reserved_for_pod(c.claim, pod) then
        return self.msg_in_use
      end
      local sel = c.claim.status.allocation.nodeSelector
      s.selectors[i] = A.compile_node_selector(sel, "status.allocation.nodeSelector") or false
      if A.binding_conditions and has_binding_conditions(c.claim) then
        local ready, failed = ready_for_binding(c.claim, c.name)
        if failed or (not ready and self:binding_timed_out(c.claim, ls.now_ms())) then s.binding_stuck[i] = true end
      end
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
  if #s.to_allocate > 0 or ext then
    s.in_use, s.shared_use = self:allocated_devices()
    s.slices = A.gather_slices()
    if next(s.slices.counters) ~= nil then s.counters_avail = A.available_counters(s.slices, s.in_use, s.shared_use) end
  end
  s.allocated_score = allocated_claims_score(claims)
  state.dynamic_resources = s
  return nil
end

function P.clone_state(entry) return entry end

-- ---- Filter -----------------------------------------------------------------

function P:filter(state, pod, node)
  local s = state.dynamic_resources
  if s == nil then return nil end
  local n = node.node
  local to_allocate, ext_status = E.node_claims(self, s, pod, node)
  if to_allocate == nil then return ext_status end
  local unavailable = false
  for i in pairs(s.selectors) do
    local sel = s.selectors[i]
    if sel and not ls.node_selector_matches(sel, n) then
      s.unavailable[i] = true
      unavailable = true
    elseif s.binding_stuck[i] then
      -- binding failed or timed out: PostFilter may deallocate it
      s.unavailable[i] = true
      unavailable = true
    end
  end
  if #to_allocate > 0 then
    local view = to_allocate == s.to_allocate and s or setmetatable({ to_allocate = to_allocate }, { __index = s })
    local allocations, err = A.allocate(view, n, self.filter_timeout, self.device_selection)
    if allocations == nil then return ls.error(err) end
    if allocations == false then return self.msg_cannot end
    s.node_allocations[n.name] = allocations
    if to_allocate ~= s.to_allocate then s.node_lists[n.name] = to_allocate end
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
  if not state.dynamic_resources_prefiltered then return self.msg_no_state end
  local s = state.dynamic_resources
  -- no claims, or PreFilter stopped before recording them
  if s == nil or (#s.claims == 0 and s.ext == nil) then return self.msg_no_claims end
  for i in pairs(s.unavailable) do
    local c = s.claims[i]
    if only_for(c.claim, pod) then
      local patch = { metadata = { resourceVersion = meta(c.claim).resourceVersion },
                      status = { allocation = json.null, reservedFor = json.null, devices = json.null } }
      local err = ls.patch_status(c.obj, json.encode(patch))
      if err then return ls.error(err) end
      return self.msg_deallocated
    end
  end
  return self.msg_still
end

-- ---- Score -------------------------------------------------------------------

-- upstream's computeScore: per claim, each firstAvailable subrequest that got
-- devices adds FirstAvailableDeviceRequestMaxSize (8) minus its index; an
-- allocated claim counts its status.allocation, the others what Filter found
-- on the node. NormalizeScore: DefaultNormalizeScore(100, false). A pod
-- without claims scores 0 everywhere (upstream registers Score, v1.35+).
function P:score(state, _, ni)
  local s = state.dynamic_resources
  if s == nil then return 0 end
  local score = s.allocated_score
  local allocations = s.node_allocations[ni.node.name]
  for i = 1, allocations and #allocations or 0 do
    local slots = allocations[i].slots
    for k = 1, #slots do
      local slot = slots[k]
      local rank = slot.alt.rank
      if rank and not slot.prev_same then score = score + FIRST_AVAILABLE_MAX - rank end
    end
  end
  return score
end

function P:normalize_score(_, _, scores, _, n)
  ls.default_normalize_score(scores, n, 100, false)
  return nil
end

-- ---- Reserve / Unreserve ------------------------------------------------------

function P:reserve(state, _, node_name)
  local s = state.dynamic_resources
  if s == nil then return nil end
  local node = ls.intern(node_name)
  local list = s.node_lists[node] or s.to_allocate
  if #list == 0 then return nil end
  local allocations = s.node_allocations[node]
  if allocations == nil then return ls.error("claim allocation not found for node") end
  s.allocations = {}
  for i, prep in ipairs(list) do
    local a = A.result(prep, allocations[i], node_name)
    self.in_flight[prep.claim.uid] = a
    self.flight_version = self.flight_version + 1
    if prep.index then s.allocations[prep.index] = a else s.ext_prep, s.ext_allocation = prep, a end
  end
  return nil
end

function P:unreserve(state, pod)
  local s = state.dynamic_resources
  if s == nil then return end
  local uid = ls.str(pod.uid)
  self.flight_version = self.flight_version + 1
  if s.ext_prep then self.in_flight[s.ext_prep.claim.uid] = nil end
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

--- After a claim's status was written (allocation, reservation): the claim
--- as written is what the scheduler sees while the store still holds the
--- version `rv` before the write (upstream's assume cache).
function P:assume_written(t, status, rv)
  if meta(t).uid == nil then return end
  self.assumed[meta(t).uid] = { claim = merged_claim(t, status), old_rv = rv }
  self.flight_version = self.flight_version + 1
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
  local alloc_now = status.allocation or (allocated(t) and t.status.allocation)
  local stamped = alloc_now and alloc_now.allocationTimestamp ~= nil and alloc_now.allocationTimestamp ~= json.null
  if alloc_now and A.binding_conditions and not stamped then
    -- DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (on): the
    -- time the allocation was recorded, from which bindingTimeout runs
    local copy = {}
    for k, v in pairs(alloc_now) do copy[k] = v end
    copy.allocationTimestamp = B.time_text(self.wall_anchor_ms + ls.now_ms())
    status.allocation = copy
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
    local what = allocation and "add allocation and reservation to claim" or "add reservation to claim"
    return fmt("%s %s/%s: %s", what, c.ns, c.name, err)
  end
  self:assume_written(t, status, rv)
  return nil
end

-- PreBindPreFlight: Skip when the pod has no claim to allocate or reserve
-- (upstream: no claims, or every one already reserved for the pod).
function P:pre_bind_pre_flight(state, pod)
  local s = state.dynamic_resources
  if s == nil then return ls.skip end
  if s.ext_allocation then return nil end
  for _, c in ipairs(s.claims) do
    if not reserved_for_pod(c.claim, pod) then return nil end
  end
  return ls.skip
end

function P:pre_bind(state, pod)
  local s = state.dynamic_resources
  if s == nil then return nil end
  local now = ls.now_ms()
  if s.bound_at == nil then
    for i, c in ipairs(s.claims) do
      if not reserved_for_pod(c.claim, pod) then
        local err = self:bind_claim(s, i, pod)
        self.in_flight[c.uid] = nil
        self.flight_version = self.flight_version + 1
        if err then return ls.error(err) end
      end
    end
    if s.ext_allocation then
      local err = E.bind(self, s, pod)
      if err then return ls.error(err) end
    end
    s.bound_at = now
    if not A.binding_conditions then return nil end
    local wait = false
    for _, c in ipairs(s.claims) do
      local o = ls.find_object(CLAIMS, pod.ns, ls.intern(c.name))
      local t = o and self:claim_table(o)
      if t and has_binding_conditions(t) then wait = true end
    end
    if not wait then return nil end
    s.next_poll = now
  end
  if s.next_poll == nil then return nil end
  -- wait.PollUntilContextTimeout(5 s, bindingTimeout, immediate): the claims
  -- are checked when the pod gets here and every 5 s after, not in between
  if now < s.next_poll then return ls.wait((s.next_poll - now) / 1000) end
  if now >= s.bound_at + self.binding_timeout * 1000 then return ls.error("device binding timeout") end
  local ready, err = self:pod_ready_for_binding(s, pod, now)
  if ready == nil then return ls.error(err) end
  if ready then return nil end
  s.next_poll = now + BINDING_POLL_S * 1000
  return ls.wait(BINDING_POLL_S)
end

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- DynamicResources: a pod with resource claims is unsignable; otherwise no
-- fragment.
function P:sign(pod)
  if pod.n_resource_claims > 0 then return false, "pods with dra resource claims are not signable" end
  return nil
end

return P
