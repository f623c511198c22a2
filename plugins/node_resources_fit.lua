-- NodeResourcesFit: a pod fits a node only if the node's allocatable minus
-- what its pods already request covers the pod's requests (and the pod count);
-- scoring ranks the feasible nodes by how much of them would be allocated.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/noderesources/{fit.go,
-- resource_allocation.go,least_allocated.go,most_allocated.go,
-- requested_to_capacity_ratio.go} and plugins/helper/shape_score.go (v1.37; the
-- formulas and messages are those of v1.30-v1.34):
-- * Filter (fitsRequest) collects every failure, in the order "Too many pods",
--   "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
--   "Insufficient <scalar>". The status is UnschedulableAndUnresolvable when for
--   some failing resource the pod's request alone exceeds the node's allocatable
--   (preemption cannot help), else Unschedulable. ignoredResources and
--   ignoredResourceGroups (the part before "/") skip extended resources only.
-- * Score with scoringStrategy LeastAllocated, MostAllocated or
--   RequestedToCapacityRatio over the configured resources and weights; cpu and
--   memory use the non-zero requests (the pod's: 100m / 200Mi for each container
--   that sets none, then its pod-level requests in their place; the node's sums:
--   see the C decoder), other resources the plain ones; a scalar the pod does not request and any
--   resource with allocatable 0 is left out. Go int64 arithmetic: truncating
--   division; RequestedToCapacityRatio rounds (math.Round) the weighted mean.
--
-- Deviations:
-- * The pod's requests are computed once by the C decoder (pod.requests,
--   pod.scoring_*; pod-level resources and in-place resize included), so
--   PreFilter only records which scalar resources to check. PreFilter upstream
--   leaves the incoming pod's status out; a pod not yet bound has no resize
--   status, so the vectors agree.
--   The SidecarContainers feature gate is taken as on (GA in 1.33): no
--   PreFilter rejection of restartable init containers.
-- * Scalar resources are checked in the order the process first saw their
--   names (resource slot order); upstream iterates a Go map (random order).
-- * Arithmetic is done in Lua numbers (doubles): exact while the operands
--   times 100 stay below 2^53 (memory up to ~90 TB per node).
--
-- Events (upstream v1.37 plugin guide; hint logic as in the v1.32-v1.34 code,
-- InPlacePodVerticalScaling on as it is by default):
-- * AssignedPod Delete: Skip when the deleted pod was neither bound nor
--   nominated, else Queue.
-- * Node Add|UpdateNodeAllocatable: Skip when the pod would not fit the empty
--   node (isFit: one pod slot, then each resource it requests against
--   allocatable, extended ones never ignored); Queue for an added node; for an
--   update, Queue only when allowed pods grew or the allocatable of a resource
--   the pod requests grew (haveAnyRequestedResourcesIncreased).
-- * AssignedPod UpdatePodScaleDown: Queue when the scaled-down pod is bound and
--   its requests of a resource the pod requests went down; TargetPod
--   UpdatePodScaleDown: Queue (the pod itself shrank).
-- Not registered: DeviceClass (DRA extended resources, not implemented) and
-- UpdatePodScaleUp (the alpha in-place resize preemption).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeResourcesFit", {
  defaults = {
    ignoredResources = {},
    ignoredResourceGroups = {},
    scoringStrategy = {
      type = "LeastAllocated",
      resources = { { name = "cpu", weight = 1 }, { name = "memory", weight = 1 } },
    },
  },
  optional = { scoringStrategy = { requestedToCapacityRatio = "object" } },
})

local floor, tonumber = math.floor, tonumber
local CPU, MEMORY, EPHEMERAL = ls.RES_CPU, ls.RES_MEMORY, ls.RES_EPHEMERAL
local FIRST_SCALAR = ls.RES_FIRST_SCALAR
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE
local MAX_CUSTOM_PRIORITY_SCORE = 10          -- config.MaxCustomPriorityScore
local MAX_UTILIZATION = 100

local LEAST, MOST, RTCR = 1, 2, 3
local STRATEGIES = { LeastAllocated = LEAST, MostAllocated = MOST, RequestedToCapacityRatio = RTCR }

-- Failure bits: pods, cpu, memory, ephemeral-storage, then scalar slot s -> bit s.
local BIT_PODS, BIT_CPU, BIT_MEMORY, BIT_EPHEMERAL = 1, 2, 4, 8
local POW2 = {}
for s = 0, 31 do POW2[s] = 2 ^ s end

local idiv = ls.idiv   -- Go's int64 division

-- ---- resource names (v1helper.IsExtendedResourceName) ------------------------

local is_qualified_name = ls.is_qualified_name

local function is_extended_resource(name)
  -- native: no "/" or a "kubernetes.io/" prefix
  if not name:find("/", 1, true) or name:find("kubernetes.io/", 1, true) then return false end
  if name:sub(1, 9) == "requests." then return false end
  return is_qualified_name("requests." .. name)
end

-- ---- init -------------------------------------------------------------------

local function set_of(list, what)
  local set = {}
  if list == nil then return set end
  if type(list) ~= "table" then error(what .. " must be a list of strings", 0) end
  for _, v in ipairs(list) do
    if type(v) ~= "string" then error(what .. " must be a list of strings", 0) end
    set[v] = true
  end
  return set
end

local function resolve_slots(self)
  local count = ls.resource_count()
  if count == self.resolved_count then return end
  self.resolved_count = count
  local slots = self.res_slot
  for k = 1, self.n_res do
    if slots[k] < 0 then slots[k] = ls.resource_index(self.res_name[k]) end
  end
end

-- SetDefaults_NodeResourcesFitArgs: no resources -> cpu and memory; a
-- weight absent or 0 -> 1.
function P.complete_args(args)
  local out = {}
  for k, v in pairs(args) do out[k] = v end
  local strategy = args.scoringStrategy
  if type(strategy) ~= "table" then return out end
  local s = {}
  for k, v in pairs(strategy) do s[k] = v end
  local resources = strategy.resources
  if type(resources) ~= "table" or #resources == 0 then resources = P.defaults.scoringStrategy.resources end
  s.resources = {}
  for i, r in ipairs(resources) do
    local w = type(r) == "table" and r.weight or nil
    s.resources[i] = type(r) == "table" and { name = r.name, weight = (w == nil or w == 0) and 1 or w } or r
  end
  out.scoringStrategy = s
  return out
end

function P:init(args)
  self.ignored = set_of(args.ignoredResources, "ignoredResources")
  self.ignored_groups = set_of(args.ignoredResourceGroups, "ignoredResourceGroups")
  self.has_groups = next(self.ignored_groups) ~= nil
  self.slot_ignored = {}   -- scalar slot -> bool, filled on first sight
  self.fit_status = {}     -- failure key -> status

  local strategy = args.scoringStrategy or {}
  local stype = strategy.type or "LeastAllocated"
  self.mode = STRATEGIES[stype]
  if not self.mode then   -- upstream's validateScoringStrategy (field.NotSupported)
    error(string.format('scoringStrategy.type: Unsupported value: "%s": supported values: '
      .. '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"', tostring(stype)), 0)
  end

  local resources = strategy.resources
  if resources == nil or #resources == 0 then resources = P.defaults.scoringStrategy.resources end
  self.res_name, self.res_weight, self.res_slot = {}, {}, {}
  for k, r in ipairs(resources) do
    if type(r) ~= "table" or type(r.name) ~= "string" or r.name == "" then
      error(string.format("scoringStrategy.resources[%d].name: a resource name is required", k - 1), 0)
    end
    local w = r.weight
    if w == nil or w == 0 then w = 1 end
    if type(w) ~= "number" or w < 1 or w > 100 or w ~= floor(w) then
      error(string.format("scoringStrategy.resources[%d].weight: resource weight of %s not in valid range [1, 100]",
        k - 1, r.name), 0)
    end
    self.res_name[k], self.res_weight[k] = r.name, w
    self.res_slot[k] = ls.resource_index(r.name)
  end
  self.n_res = #self.res_name
  self.resolved_count = ls.resource_count()

  if self.mode == RTCR then
    local rtcr = strategy.requestedToCapacityRatio
    local shape = rtcr and rtcr.shape
    if type(shape) ~= "table" or #shape == 0 then
      error("scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified", 0)
    end
    self.shape_u, self.shape_s, self.shape_n = {}, {}, #shape
    local where = "scoringStrategy.requestedToCapacityRatio.shape[%d]"
    for i, pt in ipairs(shape) do
      local u, s = tonumber(pt.utilization) or 0, tonumber(pt.score) or 0
      if u < 0 or u > 100 or u ~= floor(u) then
        error(string.format(where .. ".utilization: Invalid value: %s: not in valid range [0, 100]",
          i - 1, tostring(u)), 0)
      end
      if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE or s ~= floor(s) then
        error(string.format(where .. ".score: Invalid value: %s: not in valid range [0, 10]",
          i - 1, tostring(s)), 0)
      end
      if i > 1 and u <= self.shape_u[i - 1] then
        error(string.format(where .. ".utilization: Invalid value: %d: utilization values must be sorted in "
          .. "increasing order", i - 1, u), 0)
      end
      self.shape_u[i] = u
      -- scaled from 0..10 to 0..MaxNodeScore
      self.shape_s[i] = s * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE)
    end
  end
  self.score_key = self.name .. "/PreScore"
end

-- ---- PreFilter / Filter -----------------------------------------------------

local function ignored_slot(self, slot)
  local v = self.slot_ignored[slot]
  if v == nil then
    local name = ls.resource_name(slot)
    v = false
    if is_extended_resource(name) then
      if self.ignored[name] then
        v = true
      elseif self.has_groups and self.ignored_groups[name:match("^[^/]*")] then
        v = true
      end
    end
    self.slot_ignored[slot] = v
  end
  return v
end

-- What Filter needs of the pod: its requests as numbers and the scalar slots to check.
local function prefilter_state(self, pod)
  local req = pod.requests
  local s = {
    nothing = pod.requests_nothing ~= 0,
    cpu = tonumber(req.milli_cpu), memory = tonumber(req.memory),
    ephemeral = tonumber(req.ephemeral_storage),
    n = 0, slots = {}, reqs = {},
  }
  local classes
  for slot = FIRST_SCALAR, ls.resource_count() - 1 do
    local r = tonumber(req.v[slot])
    if r ~= 0 and not ignored_slot(self, slot) then
      s.n = s.n + 1
      s.slots[s.n], s.reqs[s.n] = slot, r
      -- DRAExtendedResource (GA, locked): a resource a DeviceClass maps is
      -- DynamicResources' to check on a node that does not advertise it
      -- (loaded on the first pod that asks for an extended resource)
      classes = classes or require("dynamic_resources_extended").class_mapping()
      if classes[ls.resource_name(slot)] then
        s.dra = s.dra or {}
        s.dra[s.n] = true
      end
    end
  end
  return s
end

function P:pre_filter(state, pod)
  state[self.name] = prefilter_state(self, pod)
  return nil
end

local function build_fit_status(self, key)
  local mask, unresolvable = floor(key / 2), key % 2 == 1
  local reasons = {}
  if bit.band(mask, BIT_PODS) ~= 0 then reasons[#reasons + 1] = "Too many pods" end
  if bit.band(mask, BIT_CPU) ~= 0 then reasons[#reasons + 1] = "Insufficient cpu" end
  if bit.band(mask, BIT_MEMORY) ~= 0 then reasons[#reasons + 1] = "Insufficient memory" end
  if bit.band(mask, BIT_EPHEMERAL) ~= 0 then reasons[#reasons + 1] = "Insufficient ephemeral-storage" end
  for slot = FIRST_SCALAR, 31 do
    if bit.band(mask, POW2[slot]) ~= 0 then
      reasons[#reasons + 1] = "Insufficient " .. ls.resource_name(slot)
    end
  end
  local code = unresolvable and ls.UNSCHEDULABLE_AND_UNRESOLVABLE or ls.UNSCHEDULABLE
  local st = ls.status(code, unpack(reasons))
  self.fit_status[key] = st
  return st
end

-- CycleState.Clone (nominated pods, preemption's dry runs): the PreFilter
-- state is never changed after PreFilter, so a clone shares it (upstream's
-- preFilterState.Clone returns itself).
function P:clone_state(s)
  return s
end

-- One extended resource of the pod against the node's free amount: the mask
-- gets the resource's bit when it does not fit, unresolvable 1 when it does
-- not fit even an empty node.
-- One extended resource of the pod against the node. One backed by DRA
-- (DRAExtendedResource) that the node does not advertise is DynamicResources'
-- to serve, not a misfit here.
local NO_DRA = {}
local function extended_fit(alloc, used, slot, r, dra_backed, mask, unresolvable)
  local a = tonumber(alloc.v[slot])
  if r > a - tonumber(used.v[slot]) and not (dra_backed and a == 0) then
    mask = mask + POW2[slot]
    if r > a then unresolvable = 1 end
  end
  return mask, unresolvable
end

function P:filter(state, pod, ni)
  local s = state[self.name]
  if s == nil then
    s = prefilter_state(self, pod)
    state[self.name] = s
  end
  local alloc, used = ni.allocatable, ni.requested
  local mask, unresolvable = 0, 0
  if ni.num_pods + 1 > tonumber(alloc.pods) then mask = BIT_PODS end
  if not s.nothing then
    local r = s.cpu
    if r > 0 then
      local a = tonumber(alloc.milli_cpu)
      if r > a - tonumber(used.milli_cpu) then
        mask = mask + BIT_CPU
        if r > a then unresolvable = 1 end
      end
    end
    r = s.memory
    if r > 0 then
      local a = tonumber(alloc.memory)
      if r > a - tonumber(used.memory) then
        mask = mask + BIT_MEMORY
        if r > a then unresolvable = 1 end
      end
    end
    r = s.ephemeral
    if r > 0 then
      local a = tonumber(alloc.ephemeral_storage)
      if r > a - tonumber(used.ephemeral_storage) then
        mask = mask + BIT_EPHEMERAL
        if r > a then unresolvable = 1 end
      end
    end
    -- The first two extended resources outside a loop: a loop here, inside
    -- the generated per-node loop, made LuaJIT's side traces abort ("register
    -- coalescing too complex") and the filter run interpreted, allocating a
    -- box per node (a GPU trace: 1,500 nodes x 10,000 pods).
    local n = s.n
    if n > 0 then
      local slots, reqs, dra = s.slots, s.reqs, s.dra or NO_DRA
      mask, unresolvable = extended_fit(alloc, used, slots[1], reqs[1], dra[1], mask, unresolvable)
      if n > 1 then
        mask, unresolvable = extended_fit(alloc, used, slots[2], reqs[2], dra[2], mask, unresolvable)
        for k = 3, n do
          mask, unresolvable = extended_fit(alloc, used, slots[k], reqs[k], dra[k], mask, unresolvable)
        end
      end
    end
  end
  if mask == 0 then return nil end
  local key = mask * 2 + unresolvable
  return self.fit_status[key] or build_fit_status(self, key)
end

-- ---- PreScore / Score -------------------------------------------------------

-- The pod's request per configured resource (calculatePodResourceRequestList):
-- non-zero requests for cpu and memory, plain ones otherwise.
local function prescore_state(self, pod)
  resolve_slots(self)
  local reqs = {}
  local req = pod.requests
  for k = 1, self.n_res do
    local slot = self.res_slot[k]
    if slot == CPU then
      reqs[k] = tonumber(pod.scoring_milli_cpu)
    elseif slot == MEMORY then
      reqs[k] = tonumber(pod.scoring_memory)
    elseif slot >= 0 then
      reqs[k] = tonumber(req.v[slot])
    else
      reqs[k] = 0
    end
  end
  return { reqs = reqs }
end

function P:pre_score(state, pod)
  state[self.score_key] = prescore_state(self, pod)
  return nil
end

-- helper.BuildBrokenLinearFunction over the scaled shape.
local function shape_score(self, p)
  local u, s, n = self.shape_u, self.shape_s, self.shape_n
  for i = 1, n do
    if p <= u[i] then
      if i == 1 then return s[1] end
      return s[i - 1] + idiv((s[i] - s[i - 1]) * (p - u[i - 1]), u[i] - u[i - 1])
    end
  end
  return s[n]
end

function P:score(state, pod, ni)
  local st = state[self.score_key]
  if st == nil then
    st = prescore_state(self, pod)
    state[self.score_key] = st
  end
  local reqs, slots, weights = st.reqs, self.res_slot, self.res_weight
  local mode = self.mode
  local alloc_v, used_v = ni.allocatable, ni.requested
  local node_score, weight_sum = 0, 0
  for k = 1, self.n_res do
    local slot = slots[k]
    local alloc, req = 0, 0
    if slot == CPU then
      alloc = tonumber(alloc_v.milli_cpu)
      req = tonumber(ni.nonzero_milli_cpu) + reqs[k]
    elseif slot == MEMORY then
      alloc = tonumber(alloc_v.memory)
      req = tonumber(ni.nonzero_memory) + reqs[k]
    elseif slot == EPHEMERAL then
      alloc = tonumber(alloc_v.ephemeral_storage)
      req = tonumber(used_v.ephemeral_storage) + reqs[k]
    elseif slot >= FIRST_SCALAR and reqs[k] ~= 0 then
      alloc = tonumber(alloc_v.v[slot])
      req = tonumber(used_v.v[slot]) + reqs[k]
    end
    -- "pods", unknown names and scalars the pod does not request stay (0, 0): skipped
    if alloc ~= 0 then
      local w = weights[k]
      if mode == LEAST then
        local rs = 0
        if req <= alloc then rs = floor((alloc - req) * MAX_NODE_SCORE / alloc) end
        node_score = node_score + rs * w
        weight_sum = weight_sum + w
      elseif mode == MOST then
        if req > alloc then req = alloc end
        node_score = node_score + floor(req * MAX_NODE_SCORE / alloc) * w
        weight_sum = weight_sum + w
      else
        local rs
        if req > alloc then
          rs = shape_score(self, MAX_UTILIZATION)
        else
          rs = shape_score(self, floor(req * MAX_UTILIZATION / alloc))
        end
        if rs > 0 then
          node_score = node_score + rs * w
          weight_sum = weight_sum + w
        end
      end
    end
  end
  if weight_sum == 0 then return 0 end
  if mode == RTCR then
    -- math.Round(float64(nodeScore) / float64(weightSum)), half away from zero
    local x = node_score / weight_sum
    local f = floor(x)
    if x - f >= 0.5 then f = f + 1 end
    return f
  end
  return floor(node_score / weight_sum)
end


-- ---- events and queueing hints ------------------------------------------------

local EMPTY = ls.intern("")
local PODS = ls.RES_PODS

local function set_name(id) return id ~= 0 and id ~= EMPTY end

local function after_pod_deleted(_, old, _)
  if not set_name(old.node_name) and not set_name(old.nominated_node_name) then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

-- isFit: the pod alone on the node (no pods, nothing requested).
local function fits_empty(pod, node)
  local alloc, req = node.allocatable.v, pod.requests.v
  if alloc[PODS] < 1 then return false end
  for r = 0, ls.resource_count() - 1 do
    if r ~= PODS and req[r] > 0 and req[r] > alloc[r] then return false end
  end
  return true
end

local function requested_grew(pod, old, new)
  local a, b, req = old.allocatable.v, new.allocatable.v, pod.requests.v
  if b[PODS] > a[PODS] then return true end
  for r = 0, ls.resource_count() - 1 do
    if r ~= PODS and req[r] > 0 and b[r] > a[r] then return true end
  end
  return false
end

local function after_node_change(pod, old, new)
  if not fits_empty(pod, new) then return ls.QUEUE_SKIP end
  if old == nil or requested_grew(pod, old, new) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_assigned_scale_down(pod, old, new)
  if not set_name(new.node_name) then return ls.QUEUE_SKIP end
  local req, before, after = pod.requests.v, old.requests.v, new.requests.v
  for r = 0, ls.resource_count() - 1 do
    if r ~= PODS and req[r] > 0 and before[r] > after[r] then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "AssignedPod", action = "Delete", hint = after_pod_deleted },
  { resource = "Node", action = { "Add", "UpdateNodeAllocatable" }, hint = after_node_change },
  { resource = "AssignedPod", action = "UpdatePodScaleDown", hint = after_assigned_scale_down },
  { resource = "TargetPod", action = "UpdatePodScaleDown", hint = ls.hint_own_pod },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeResourcesFit: computePodResourceRequest (ResourcesSignerName). Upstream's
-- pods requesting a DRA-backed extended resource are unsignable; those are not
-- modelled here (every extended resource is a node-allocatable one).
function P:sign(pod) return signers.resources(pod) end

return P
