-- CapacityScheduling: elastic quota per namespace (ElasticQuota min and max),
-- borrowing of unused min, and preemption that reclaims borrowed quota.
--
-- Ports the behaviour of kubernetes-sigs/scheduler-plugins
-- pkg/capacityscheduling (capacity_scheduling.go, elasticquota.go; KEP
-- kep/9-capacity-scheduling), ElasticQuota scheduling.x-k8s.io/v1alpha1:
-- * An ElasticQuota (one per namespace; with several, the first listed)
--   gives spec.min and spec.max (quantities). A resource min does not name is
--   0; max nil is unlimited. Used = the requests of the namespace's pods on
--   nodes (not Succeeded/Failed) plus the pods reserved and not yet on a node.
-- * PreFilter: with the nominated pods (of every node, not the pod itself)
--   of the same namespace and priority >= the pod's (inEQ), and those of
--   other quota namespaces whose used is within their min (all):
--   used + pod + inEQ > max -> Unschedulable "Pod <ns>/<name> is rejected in
--   PreFilter because ElasticQuota <ns> is more than Max"; sum(used) + pod +
--   all > sum(min) -> Unschedulable "Pod <ns>/<name> is rejected in
--   PreFilter because total ElasticQuota used is more than min". A pod whose
--   namespace has no quota passes.
-- * Comparisons (cmp2): cpu (millicores), memory and ephemeral-storage always;
--   an extended resource only where the left-hand side has it.
-- * AddPod / RemovePod (PreFilter extensions) change the cycle's copy of the
--   usage, so preemption's dry runs see the quota without their victims.
-- * Reserve adds the pod to its namespace's used, Unreserve takes it out
--   (each once, by pod: a pod already counted is not counted again).
-- * PostFilter: the framework's preemption (DefaultPreemption's evaluator,
--   required as a module) with this plugin's preemption.Interface:
--   every potential node from offset 0 (GetOffsetAndNumCandidates = 0, n);
--   PodEligibleToPreemptOthers: preemptionPolicy Never, then terminating pods
--   on the nominated node (same quota and lower priority, or another quota
--   over its min while the preemptor stays within its own);
--   SelectVictimsOnNode: pods taken least important first; a preemptor whose
--   used + request (+ inEQ) stays within its min takes pods of other quota
--   namespaces while those are over their min (reclaiming what they borrow),
--   else only lower-priority pods of its own namespace; a preemptor without
--   quota takes lower-priority pods without quota. None -> Unresolvable "No
--   victims found on node <node> for preemptor pod <name>"; the pod must fit
--   with them all gone and its quota checks pass ("global quota max
--   exceeded", Unschedulable); victims reprieved most important first (PDB
--   violating first) while the pod fits and the quota checks pass.
-- * Events: an assigned pod deleted in a namespace with a quota, and any
--   ElasticQuota change (elasticquotas.v1alpha1.scheduling.x-k8s.io).
-- * Quotas are read as the custom resource elasticquotas.v1alpha1.
--   scheduling.x-k8s.io (or objects stored by kind ElasticQuota with that
--   apiVersion, as the test kit stores them).
-- * Args (ours; upstream's have nothing that applies): ignoredResources ({}:
--   resource names no quota check looks at, each a non-empty string).
--
-- Deviations:
-- * Resources max does not name are unlimited (upstream: 0 for cpu, memory
--   and ephemeral-storage when max names other resources, which rejects every
--   pod requesting them).
-- * Pod requests are the scheduler's PodRequests (sidecars, pod-level
--   resources) rather than upstream's own sum/max of containers + overhead;
--   the pods count is not compared (upstream's used never counts it).
-- * An extended resource counts as "present" where it is non-zero.
-- * A reprieved pod that no longer fits or breaks the quota is a victim once
--   (upstream removes it a second time when both hold and fails the node).
-- * Used is read from the snapshot (and the reserved pods) instead of pod
--   informer events.
-- * A quota with a malformed quantity makes its namespace's pods fail with an
--   Error naming the object and field (the API server would refuse it).
local ls = require("luasched")
local DP = require("default_preemption")

local P = ls.plugin("CapacityScheduling", {
  defaults = { ignoredResources = {} },
})

local UNSCHED, UNRESOLVABLE = ls.UNSCHEDULABLE, ls.UNSCHEDULABLE_AND_UNRESOLVABLE
local PHASE_SUCCEEDED, PHASE_FAILED = 2, 3
local SLOT_PODS = 3                   -- ls_resources.pods: not compared
local FIRST_SCALAR = 4                -- cpu, memory, ephemeral-storage before
local UNLIMITED = math.huge
local RESOURCE = "elasticquotas.v1alpha1.scheduling.x-k8s.io"
local KIND = "ElasticQuota"   -- objects stored by kind (the test kit's add_object)
local API_VERSION = "scheduling.x-k8s.io/v1alpha1"
local MSG_QUOTA_EXCEEDED = "global quota max exceeded"

local ceil, fmt = math.ceil, string.format

-- ---- args ---------------------------------------------------------------------

function P.validate(args)
  for i, name in ipairs(args.ignoredResources) do
    if type(name) ~= "string" or name == "" then
      return fmt("ignoredResources[%d]: Invalid value: %s: must be a resource name", i - 1, tostring(name))
    end
  end
  return nil
end

function P:init(args)
  local bad = P.validate(args)
  if bad then error(bad, 0) end
  local ignored = {}
  for _, name in ipairs(args.ignoredResources) do ignored[name] = true end
  self.kinds, self.ignored = { ls.intern(RESOURCE), ls.intern(KIND) }, ignored
  self.infos, self.quota_gen, self.rcount = {}, -1, -1
  self.used = {}          -- namespace id -> { [slot] = amount }
  self.nodes = { gen = {}, contrib = {}, num = 0 }   -- per-node pods (ls.refresh_nodes)
  self.placed = {}        -- pod key -> true while on a node of the snapshot
  self.reserved = {}      -- pod key -> { ns =, req = } reserved, not yet on a node
  self.in_flight = ls.unresolvable("waiting for the preemption for this pod to be finished")
  -- the preemption.Interface over DefaultPreemption's evaluator
  local ev = setmetatable({ quota = self }, { __index = DP })   -- its handle: set in PostFilter
  DP.init(ev, DP.defaults)
  ev.select_victims, ev.waiting_for_victims = P.select_victims, P.waiting_for_victims
  ev.offset_and_num_candidates = P.offset_and_num_candidates
  self.evaluator = ev
end

-- ---- quantities and resource vectors -------------------------------------------

local SUFFIX = { [""] = 1, m = 1e-3, k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15, E = 1e18,
  Ki = 2 ^ 10, Mi = 2 ^ 20, Gi = 2 ^ 30, Ti = 2 ^ 40, Pi = 2 ^ 50, Ei = 2 ^ 60 }

-- A quantity in the resource's units (cpu in millicores), rounded up as
-- resource.Quantity's Value()/MilliValue(); nil when malformed.
local function quantity(q, milli)
  local n
  if type(q) == "number" then
    n = q
  elseif type(q) == "string" then
    local num, suffix = q:match("^%+?(%d*%.?%d+)(%a*)$")
    local mult = suffix and SUFFIX[suffix]
    if not mult then
      local base, exp = q:match("^%+?(%d*%.?%d+)[eE]([%+%-]?%d+)$")
      if not base then return nil end
      num, mult = base, 10 ^ tonumber(exp)
    end
    n = tonumber(num) * mult
  else
    return nil
  end
  if milli then n = n * 1000 end
  return ceil(n - 1e-9 * math.abs(n))
end

-- The slots every check compares (cpu, memory, ephemeral-storage and the
-- extended resources known so far, less the ignored ones).
function P:compared_slots()
  local slots, count = {}, ls.resource_count()
  for i = 0, count - 1 do
    if i ~= SLOT_PODS and not self.ignored[ls.resource_name(i)] then slots[#slots + 1] = i end
  end
  return slots, count
end

-- cmp2(x1, x2, y): x1 + x2 > y in some compared resource; extended resources
-- only where x1 has them. x2 may be nil.
local function over(slots, x1, x2, y)
  for k = 1, #slots do
    local s = slots[k]
    local a = x1[s] or 0
    if s < FIRST_SCALAR or a ~= 0 then
      if a + (x2 and x2[s] or 0) > y[s] then return true end
    end
  end
  return false
end

-- The same with presence judged on x1 + x2 (cmp over a sum, as the aggregate).
local function over_sum(slots, x1, x2, y)
  for k = 1, #slots do
    local s = slots[k]
    local v = (x1[s] or 0) + (x2[s] or 0)
    if (s < FIRST_SCALAR or v ~= 0) and v > y[s] then return true end
  end
  return false
end

local function add_into(dst, src, sign)
  for s, v in pairs(src) do dst[s] = (dst[s] or 0) + sign * v end
end

local function request_of(pod, slots)
  local req, r = {}, pod.requests
  for k = 1, #slots do
    local s = slots[k]
    local v = tonumber(r.v[s])
    if v ~= 0 then req[s] = v end
  end
  return req
end

-- dst[slot] += sign * the pod's request, over the compared slots.
local function add_request(dst, pod, slots, sign)
  local r = pod.requests
  for k = 1, #slots do
    local slot = slots[k]
    local v = tonumber(r.v[slot])
    if v ~= 0 then dst[slot] = (dst[slot] or 0) + sign * v end
  end
end

-- ---- quotas ---------------------------------------------------------------------

-- spec.min / spec.max as a full vector over the slots (absent: `default`).
local function bounds(spec_list, default, slots, where)
  local v = {}
  for k = 1, #slots do v[slots[k]] = default end
  if spec_list == nil then return v end
  if type(spec_list) ~= "table" then return nil, where .. ": expected a map of resource quantities" end
  for name, q in pairs(spec_list) do
    local idx = ls.resource_index(name)
    local n = quantity(q, name == "cpu")
    if n == nil then return nil, fmt("%s.%s: invalid quantity %q", where, name, tostring(q)) end
    if idx >= 0 and v[idx] ~= nil then v[idx] = n end
  end
  return v
end

-- Rebuilds the quota table when a quota changed or a resource became known.
function P:refresh_quotas()
  local gen, count = 0, ls.resource_count()
  for _, kind in ipairs(self.kinds) do gen = gen + ls.objects_generation(kind) end
  if gen == self.quota_gen and count == self.rcount then return end
  local slots = self:compared_slots()
  local infos, sum_min = {}, {}
  for k = 1, #slots do sum_min[slots[k]] = 0 end
  for _, kind in ipairs(self.kinds) do
    for o in ls.objects(kind) do
      self:add_quota(infos, sum_min, slots, o)
    end
  end
  self.infos, self.sum_min, self.slots = infos, sum_min, slots
  self.quota_gen, self.rcount = gen, count
end

-- One ElasticQuota into `infos` (the first of a namespace wins).
function P:add_quota(infos, sum_min, slots, o)
  local ns = tonumber(o.ns)
  if infos[ns] ~= nil then return end
  local d = ls.object_data(o)
  if d.apiVersion ~= API_VERSION then return end
  local spec = d.spec or {}
  local where = fmt("ElasticQuota %s/%s: spec", ls.str(o.ns), ls.str(o.name))
  local min, err = bounds(spec.min, 0, slots, where .. ".min")
  local max, err2 = bounds(spec.max, UNLIMITED, slots, where .. ".max")
  if not min or not max then
    infos[ns] = { err = ls.error(err or err2) }
  else
    infos[ns] = { ns = ns, min = min, max = max }
    add_into(sum_min, min, 1)
  end
end

-- ---- used: the snapshot's pods and the reserved ones ----------------------------

local function pod_key(p) return tonumber(p.ns) * 4294967296 + tonumber(p.name) end

local function count_pod(self, key, ns, req, sign)
  local used = self.used[ns]
  if not used then used = {}; self.used[ns] = used end
  add_into(used, req, sign)
  if sign > 0 then self.placed[key] = true else self.placed[key] = nil end
  local r = self.reserved[key]
  if sign > 0 and r then   -- a reserved pod now on its node: counted once
    add_into(self.used[r.ns], r.req, -1)
    self.reserved[key] = nil
  end
end

local function apply_node(self, list, sign)
  for i = 1, #list do
    local e = list[i]
    count_pod(self, e.key, e.ns, e.req, sign)
  end
end

local function update_node(M, j, ni, g, self)
  local old = M.contrib[j]
  if old then apply_node(self, old, -1) end
  local list = false
  local slots = self.slots
  for i = 0, ni.num_pods - 1 do
    local p = ni.pods[i]
    if p.phase ~= PHASE_SUCCEEDED and p.phase ~= PHASE_FAILED then
      list = list or {}
      list[#list + 1] = { key = pod_key(p), ns = tonumber(p.ns), req = request_of(p, slots) }
    end
  end
  if list then apply_node(self, list, 1) end
  M.contrib[j], M.gen[j] = list, g
end

local function drop_node(M, j, self)
  local old = M.contrib[j]
  if old then apply_node(self, old, -1) end
  M.contrib[j], M.gen[j] = nil, nil
end

function P:refresh_used()
  if self.nodes_rcount ~= self.rcount then   -- new slots: count every node again
    self.used, self.placed = {}, {}
    for _, r in pairs(self.reserved) do add_into(self:used_of(r.ns), r.req, 1) end
    self.nodes, self.nodes_rcount = { gen = {}, contrib = {}, num = 0 }, self.rcount
  end
  local nodes, num = ls.all_nodes()
  ls.refresh_nodes(self.nodes, nodes, num, update_node, drop_node, self)
end

function P:used_of(ns)
  local u = self.used[ns]
  if not u then u = {}; self.used[ns] = u end
  return u
end

-- ---- the cycle's view: shared quotas, usage copied on first change --------------

-- s = { infos, slots, sum_min, base (used by namespace), own (changed copies),
--       total (sum of the quotas' used), req, in_eq, all }
local EMPTY = setmetatable({}, { __newindex = function() error("CapacityScheduling: EMPTY is read-only", 2) end })
local function used_in(s, ns)
  return s.own[ns] or s.base[ns] or EMPTY
end

local function own_used(s, ns)
  local u = s.own[ns]
  if not u then
    u = {}
    add_into(u, s.base[ns] or EMPTY, 1)
    s.own[ns] = u
  end
  return u
end

-- usedOverMin / usedOverMinWith / usedOverMaxWith on the cycle's usage.
local function over_min(s, info, with)
  if with then return over(s.slots, with, used_in(s, info.ns), info.min) end
  return over(s.slots, used_in(s, info.ns), nil, info.min)
end
local function over_max(s, info, with) return over(s.slots, with, used_in(s, info.ns), info.max) end

-- aggregatedUsedOverMinWith: the sum of every quota's used + with > sum(min).
local function aggregated_over_min(s, with)
  return over_sum(s.slots, with, s.total, s.sum_min)
end

-- The sum of the used of every (well-formed) quota.
local function total_used(infos, used)
  local total = {}
  for ns, info in pairs(infos) do
    if not info.err and used[ns] then add_into(total, used[ns], 1) end
  end
  return total
end

function P:clone_state(s)
  local c = {}
  for k, v in pairs(s) do c[k] = v end
  c.total = {}
  add_into(c.total, s.total, 1)
  c.own = {}
  for ns, u in pairs(s.own) do
    local copy = {}
    add_into(copy, u, 1)
    c.own[ns] = copy
  end
  return c
end

-- ---- PreFilter and its extensions -------------------------------------------------

function P:pre_filter(state, pod)
  self:refresh_quotas()
  self:refresh_used()
  local req = request_of(pod, self.slots)
  local s = { infos = self.infos, slots = self.slots, sum_min = self.sum_min, base = self.used, own = {},
    total = total_used(self.infos, self.used), req = req, in_eq = req, all = req }
  state[self.name] = s
  local eq = self.infos[tonumber(pod.ns)]
  if eq == nil then return nil end
  if eq.err then return eq.err end
  local in_eq, all = {}, {}
  add_into(in_eq, req, 1)
  add_into(all, req, 1)
  local key = pod_key(pod)
  local nominated = self.handle and self.handle:all_nominated_pods() or {}
  for _, p in ipairs(nominated) do
    local info = self.infos[tonumber(p.ns)]
    if info and not info.err and pod_key(p) ~= key then
      if p.ns == pod.ns and p.priority >= pod.priority then
        add_request(in_eq, p, self.slots, 1)
        add_request(all, p, self.slots, 1)
      elseif p.ns ~= pod.ns and not over_min(s, info) then
        add_request(all, p, self.slots, 1)
      end
    end
  end
  s.in_eq, s.all = in_eq, all
  if over_max(s, eq, in_eq) then
    return ls.unschedulable(fmt("Pod %s/%s is rejected in PreFilter because ElasticQuota %s is more than Max",
      ls.str(pod.ns), ls.str(pod.name), ls.str(pod.ns)))
  end
  if aggregated_over_min(s, all) then
    return ls.unschedulable(fmt("Pod %s/%s is rejected in PreFilter because total ElasticQuota used is more than min",
      ls.str(pod.ns), ls.str(pod.name)))
  end
  return nil
end

local function change_usage(self, state, other, sign)
  local s = state[self.name]
  if not s then return nil end
  local info = s.infos[tonumber(other.ns)]
  if info and not info.err then
    add_request(own_used(s, info.ns), other, s.slots, sign)
    add_request(s.total, other, s.slots, sign)
  end
  return nil
end

function P:add_pod(state, _, other) return change_usage(self, state, other, 1) end
function P:remove_pod(state, _, other) return change_usage(self, state, other, -1) end

-- ---- Reserve / Unreserve ------------------------------------------------------------

function P:reserve(_, pod)
  local ns, key = tonumber(pod.ns), pod_key(pod)
  if not self.infos[ns] or self.placed[key] or self.reserved[key] then return nil end
  local req = request_of(pod, self.slots)
  self.reserved[key] = { ns = ns, req = req }
  add_into(self:used_of(ns), req, 1)
  return nil
end

function P:unreserve(_, pod)
  local key = pod_key(pod)
  local r = self.reserved[key]
  if r then
    add_into(self:used_of(r.ns), r.req, -1)
    self.reserved[key] = nil
  end
end

-- ---- PostFilter: the framework's preemption with this preemption.Interface ----------

function P:post_filter(state, pod)
  local ev = self.evaluator
  ev.handle = self.handle
  return DP.post_filter(ev, state, pod)
end

-- GetOffsetAndNumCandidates: every potential node, from the first.
function P.offset_and_num_candidates(_, n) return 0, n end

-- The quota state of the cycle (PreFilter ran), or an error.
local function cycle_quota(ev, state)
  local s = state[ev.quota.name]
  if not s then error("CapacityScheduling: no PreFilter state in the cycle (is the plugin a PreFilter?)", 0) end
  return s
end

-- PodEligibleToPreemptOthers' second rule, quota-aware (self: the evaluator).
function P.waiting_for_victims(ev, pod, state)
  local h = ev.handle
  local nominated = h:nominated_node_of(pod)
  if not nominated then return false end
  local ni = ls.find_node(nominated)
  if ni == nil or h:node_code(ni) == UNRESOLVABLE then return false end
  local s = cycle_quota(ev, state)
  local eq = s.infos[tonumber(pod.ns)]
  if eq and eq.err then eq = nil end
  local within_min = eq and not over_min(s, eq, s.in_eq)
  for i = 0, ni.num_pods - 1 do
    local p = ni.pods[i]
    if p.deletion_ns ~= 0 then
      local info = s.infos[tonumber(p.ns)]
      if eq then
        if info and not info.err then
          if p.ns == pod.ns and p.priority < pod.priority then return true end
          if p.ns ~= pod.ns and within_min and over_min(s, info) then return true end
        end
      elseif not info and p.priority < pod.priority then
        return true
      end
    end
  end
  return false
end

-- Least important first (the order pods are taken from the node).
local function less_important(a, b) return DP.more_important(b, a) end

-- SelectVictimsOnNode with quotas (self: the evaluator). Returns the victims
-- and the PDB violations, or nil and a failure { code=, reasons= }.
function P.select_victims(ev, state, pod, ni, pdbs)
  local h, name = ev.handle, ev.quota.name
  local node = h:clone_node_info(ni)
  local st = h:clone_state(state)
  local s = cycle_quota(ev, st)
  local eq = s.infos[tonumber(pod.ns)]
  if eq and eq.err then eq = nil end
  local prio = pod.priority
  local function remove(p)
    if not h:remove_pod_from(node, p) then
      error(fmt("no corresponding pod %s in pods of node %s", ls.str(p.name), ls.str(ni.node.name)), 0)
    end
    h:run_remove_pod(st, pod, p, node)
    s = st[name]
  end
  -- the pods the rules may take, least important first; "over its min"
  -- is read again at each, as the pods before it leave the cycle's usage
  local over_own_min = eq and over_min(s, eq, s.in_eq)
  local pods = {}
  for i = 0, ni.num_pods - 1 do
    local p = ni.pods[i]
    local info = s.infos[tonumber(p.ns)]
    if info and info.err then info = nil end
    local may
    if eq then
      if over_own_min then may = info and p.ns == pod.ns and p.priority < prio
      else may = info and p.ns ~= pod.ns end
    else
      may = not info and p.priority < prio
    end
    if may then pods[#pods + 1] = { pod = p, start = DP.start_of(p), order = i, info = info } end
  end
  table.sort(pods, less_important)
  local potential = {}
  for _, v in ipairs(pods) do
    if not eq or over_own_min or over_min(s, v.info) then
      potential[#potential + 1] = v
      remove(v.pod)
    end
  end
  if #potential == 0 then
    return nil, { code = UNRESOLVABLE, reasons = {
      fmt("No victims found on node %s for preemptor pod %s", ls.str(ni.node.name), ls.str(pod.name)) } }
  end
  local fits, code, message = h:run_filter_with_nominated(st, pod, node)
  if not fits then return nil, { code = code, reasons = DP.reasons_of(message) } end
  if eq and (over_max(s, eq, s.req) or aggregated_over_min(s, s.req)) then
    return nil, { code = UNSCHED, reasons = { MSG_QUOTA_EXCEEDED } }
  end
  table.sort(potential, DP.more_important)
  local violating, fine = DP.split_by_pdb(potential, pdbs)
  local victims = {}
  local function reprieve(v)
    h:add_pod_to(node, v.pod)
    h:run_add_pod(st, pod, v.pod, node)
    s = st[name]
    local ok = h:run_filter_with_nominated(st, pod, node)
    local quota_ok = not (eq and (over_max(s, eq, s.in_eq) or aggregated_over_min(s, s.all)))
    if ok and quota_ok then return true end
    remove(v.pod)
    victims[#victims + 1] = v
    return ok
  end
  return victims, DP.reprieve_in_order(violating, fine, reprieve)
end

-- ---- async preemption: the preemptor waits while its victims go ------------------

-- DefaultPreemption's PreEnqueue: self.in_flight while the pod's victims go.
P.pre_enqueue = DP.pre_enqueue

-- ---- events and hints -----------------------------------------------------------------

-- A deleted assigned pod frees quota only in a namespace with a quota.
local function assigned_pod_deleted(_, old, _, self)
  if old ~= nil and self.infos[tonumber(old.ns)] == nil then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

P.events = {
  { resource = "AssignedPod", action = "Delete", hint = assigned_pod_deleted },
  { resource = RESOURCE, action = "All" },
}

return P
