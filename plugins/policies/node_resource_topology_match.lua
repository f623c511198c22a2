-- NodeResourceTopologyMatch: NUMA-aware fit. Filters out the nodes whose
-- kubelet Topology Manager (single-numa-node policy) would refuse the pod
-- because no single NUMA zone can hold it (or each of its containers), and
-- scores the NUMA zones' fit. Filter, Score, Reserve and Unreserve.
--
-- Ported from kubernetes-sigs/scheduler-plugins pkg/noderesourcetopology
-- (behaviour, not code). Topology: NodeResourceTopology objects
-- (topology.node.k8s.io/v1alpha2, one per node, named after it): attributes
-- topologyManagerPolicy / topologyManagerScope (else the deprecated
-- topologyPolicies[0]: SingleNUMANodeContainerLevel, SingleNUMANodePodLevel,
-- ...; defaults policy none, scope container), zones of type "Node" named
-- "node-<id>" (id 0..64) with resources[] {name, available}.
-- * Filter: a BestEffort pod requesting no extended (non-native) resource
--   passes; a node without a NodeResourceTopology passes; a policy other than
--   single-numa-node passes. Container scope: each init container, then each
--   app container must fit one NUMA zone ("cannot align init container",
--   "cannot align container", Unschedulable); an app container's requests are
--   taken from the zone the kubelet would pick (the lowest id that fits)
--   before the next one is tried. Pod scope: the pod's effective request
--   (max of the app containers' sum and the largest init container, per
--   resource) must fit one zone ("cannot align pod").
--   A resource fits a zone when the zone lists it with available >= the
--   request; for a pod that is not Guaranteed, cpu, memory and hugepages-*
--   always fit (their NUMA pinning is the Guaranteed pods'). A requested
--   resource the node's allocatable lacks fits nowhere; an extended resource
--   or ephemeral-storage that no zone lists is a node-level resource (no
--   constraint). Zero requests are ignored.
-- * Score (single-numa-node only; otherwise, and without a topology, 0): a
--   pod that is not Guaranteed scores 100. Per zone, the strategy over the
--   requested resources (quantities as whole units, rounded up, upstream's
--   Quantity.Value(); cpu in cores): LeastAllocated sum_r w_r * ((avail -
--   req) * 100 / avail) / sum_r w_r, MostAllocated the same with req * 100 /
--   avail (a resource with avail 0 or req > avail scores 0; integer
--   divisions), BalancedAllocation int64((1 - variance(req/avail)) * 100)
--   with the sample variance (n - 1) and 0 when a fraction exceeds 1 (avail
--   0 counts as fraction 1). Weights from scoringStrategy.resources (missing
--   or < 1 -> 1). Node score: the lowest non-zero zone score (upstream's
--   loop: it starts at 0 and takes a zone's score while the minimum is 0).
--   Pod scope scores the effective request; container scope the int64 mean
--   over the init and app containers.
-- * Reserve: the pod's effective request is taken from every zone of the node
--   until the node's NodeResourceTopology changes (upstream's over-reserve
--   cache: the scheduler cannot know which zone the kubelet picks, so it
--   assumes all); Unreserve gives it back.
-- * args: scoringStrategy {type: LeastAllocated (default) | MostAllocated |
--   BalancedAllocation, resources: [{name, weight}] (default cpu 1, memory
--   1)}; cacheResyncPeriodSeconds, cache and discardReservedNodes are
--   accepted and ignored.
--
-- Deviations:
-- * No LeastNUMANodes strategy (refused by validate), no maxNUMANodes
--   attribute, no zone costs; the 32 lowest NUMA ids of a node are used (the
--   kubelet's default limit is 8).
-- * Reserved resources are released when the node's NodeResourceTopology
--   object changes, not on a resync timer; no foreign-pods detection.
-- * BalancedAllocation over one resource: upstream's sample variance of one
--   value is NaN (an undefined int64 conversion); here it is 0 (score 100).
-- * A resource counts as "on the node" when its allocatable is above 0
--   (upstream: when the node lists it at all).
local ls = require("luasched")
local cel = require("luasched.cel")
local pods = require("pod_containers")

local P = ls.plugin("NodeResourceTopologyMatch", {
  defaults = {
    scoringStrategy = { type = "LeastAllocated",
                        resources = { { name = "cpu", weight = 1 }, { name = "memory", weight = 1 } } },
  },
  optional = { cacheResyncPeriodSeconds = "number", cache = "object", discardReservedNodes = "boolean" },
})

P.KIND = "noderesourcetopologies.v1alpha2.topology.node.k8s.io"

local floor, ceil, tonumber, band, bor, lshift = math.floor, math.ceil, tonumber, bit.band, bit.bor, bit.lshift
local CPU, MEMORY, EPHEMERAL = ls.RES_CPU, ls.RES_MEMORY, ls.RES_EPHEMERAL
local MAX_SCORE = ls.MAX_NODE_SCORE
local MAX_NUMA_ID = 64
local MAX_ZONES = 32     -- a zone is a bit of a 32-bit mask
local SLOTS = 16         -- resource slots of ls_resources
local STRATEGIES = { LeastAllocated = true, MostAllocated = true, BalancedAllocation = true }

-- ---- args -------------------------------------------------------------------------

function P.validate(args)
  local s = args.scoringStrategy
  if type(s) ~= "table" then return "scoringStrategy: expected an object" end
  if not STRATEGIES[s.type] then
    return string.format("scoringStrategy.type: Unsupported value: %q: supported values: "
      .. "\"LeastAllocated\", \"MostAllocated\", \"BalancedAllocation\"", tostring(s.type))
  end
  for i, r in ipairs(s.resources or {}) do
    if type(r) ~= "table" or type(r.name) ~= "string" or r.name == "" then
      return string.format("scoringStrategy.resources[%d].name: Required value", i - 1)
    end
    if r.weight ~= nil and (type(r.weight) ~= "number" or r.weight < 0 or r.weight > 100) then
      return string.format("scoringStrategy.resources[%d].weight: Invalid value: %s: must be in the range [0, 100]",
        i - 1, tostring(r.weight))
    end
  end
end

function P:init(args)
  local s = args.scoringStrategy
  self.strategy = s.type
  self.weights = {}   -- slot -> weight (missing or < 1 -> 1 at use)
  for _, r in ipairs(s.resources or {}) do
    local slot = ls.resource_index(r.name)
    if slot >= 0 then self.weights[slot] = r.weight or 1 end
  end
  self.unaligned = {
    init = ls.unschedulable("cannot align init container"),
    container = ls.unschedulable("cannot align container"),
    pod = ls.unschedulable("cannot align pod"),
  }
  self.topologies = {}   -- node name id -> parsed topology (see parse)
  self.built_at = -1
  -- What Filter fits against, reused by every call (nothing allocated per
  -- node): zone k's amount of a slot at (k - 1) * SLOTS + slot + 1, valid when
  -- its stamp is the call's.
  self.avail_value, self.avail_stamp, self.stamp = {}, {}, 0
  for i = 1, MAX_ZONES * SLOTS do self.avail_value[i], self.avail_stamp[i] = 0, 0 end
end

-- ---- topology objects -------------------------------------------------------------

local POLICIES = {
  SingleNUMANodeContainerLevel = { "single-numa-node", "container" },
  SingleNUMANodePodLevel = { "single-numa-node", "pod" },
  BestEffortContainerLevel = { "best-effort", "container" },
  BestEffortPodLevel = { "best-effort", "pod" },
  RestrictedContainerLevel = { "restricted", "container" },
  RestrictedPodLevel = { "restricted", "pod" },
}
local VALID_POLICY = { none = true, ["best-effort"] = true, restricted = true, ["single-numa-node"] = true }
local VALID_SCOPE = { container = true, pod = true }

-- A quantity in the unit requests use (cpu in millicores).
local function amount(slot, q)
  local v = cel.parse_quantity(tostring(q))
  if v == nil then return nil end
  if slot == CPU then return ceil(v * 1000) end
  return ceil(v)
end

local function parse_zone(zone)
  if zone.type ~= "Node" or type(zone.name) ~= "string" then return nil end
  local id = tonumber(zone.name:match("^node%-(%d+)$"))
  if id == nil or id > MAX_NUMA_ID then return nil end
  local avail = {}
  for _, r in ipairs(zone.resources or {}) do
    local slot = type(r.name) == "string" and ls.resource_index(r.name) or -1
    local v = slot >= 0 and r.available ~= nil and amount(slot, r.available) or nil
    if v then avail[slot] = math.max(v, 0) end
  end
  return { id = id, avail = avail }
end

-- A topology in flat arrays (what Filter and Score read per node): zone k's
-- amount of a slot at i = (k - 1) * SLOTS + slot + 1: amount[i] (-1 when the zone
-- does not list the resource); the listed entries' i and slot + 1 in entry_i /
-- entry_s.
local function flatten(t, zones)
  t.n = #zones
  t.amount, t.entry_i, t.entry_s = {}, {}, {}
  for i = 1, t.n * SLOTS do t.amount[i] = -1 end
  -- What this plugin reserved on the node while the topology is this version
  -- (a new version is a new table: the reservations go with the old one).
  t.reserved, t.reserved_pods = {}, {}
  for i = 1, SLOTS do t.reserved[i] = 0 end
  for k, zone in ipairs(zones) do
    for slot = 0, SLOTS - 1 do
      local v = zone.avail[slot]
      if v ~= nil then
        local i = (k - 1) * SLOTS + slot + 1
        t.amount[i] = v
        t.entry_i[#t.entry_i + 1], t.entry_s[#t.entry_s + 1] = i, slot + 1
      end
    end
  end
end

local function parse(d, seq)
  local t = { policy = "none", scope = "container", seq = seq }
  local legacy = d.topologyPolicies and POLICIES[d.topologyPolicies[1]]
  if legacy then t.policy, t.scope = legacy[1], legacy[2] end
  for _, a in ipairs(d.attributes or {}) do
    if a.name == "topologyManagerScope" and VALID_SCOPE[a.value] then t.scope = a.value end
    if a.name == "topologyManagerPolicy" and VALID_POLICY[a.value] then t.policy = a.value end
  end
  local zones = {}
  for _, z in ipairs(d.zones or {}) do
    local zone = parse_zone(z)
    if zone then zones[#zones + 1] = zone end
  end
  table.sort(zones, function(a, b) return a.id < b.id end)
  for k = #zones, MAX_ZONES + 1, -1 do zones[k] = nil end
  flatten(t, zones)
  return t
end

function P:refresh()
  local gen = ls.objects_generation(P.KIND)
  if gen == self.built_at then return end
  local old, fresh = self.topologies, {}
  for o in ls.objects(P.KIND) do
    local seq = tonumber(o.seq)
    local d = ls.object_data(o)
    local name = d.metadata and d.metadata.name
    if type(name) == "string" then
      local id = ls.intern(name)
      local prev = old[id]
      fresh[id] = (prev and prev.seq == seq) and prev or parse(d, seq)
    end
  end
  self.topologies = fresh
  self.built_at = gen
end

-- ---- fitting ------------------------------------------------------------------------

-- Per slot, decided once (resource names are registered for good).
local hugepages_slot, node_level_slot = {}, {}

local function is_hugepages(slot)
  local v = hugepages_slot[slot]
  if v == nil then
    v = ls.resource_name(slot):find("^hugepages%-") ~= nil
    hugepages_slot[slot] = v
  end
  return v
end

local function is_node_level(slot)
  local v = node_level_slot[slot]
  if v == nil then
    local name = ls.resource_name(slot)
    v = slot == EPHEMERAL or (name:find("/", 1, true) ~= nil and name:find("kubernetes.io/", 1, true) == nil)
    node_level_slot[slot] = v
  end
  return v
end

local function suitable(guaranteed, slot, want, have)
  if not guaranteed and (slot == CPU or slot == MEMORY or is_hugepages(slot)) then return true end
  return have >= want
end

--- The zone index (zones sorted by NUMA id: the lowest id) where every
--- requested resource of `req` ({ slots = {...}, [slot] = amount }) fits, or
--- nil, against the amounts fill_available left.
function P:fit_zone(ni, n_zones, req, guaranteed)
  local value, stamp, now = self.avail_value, self.avail_stamp, self.stamp
  local mask = -1
  local alloc = ni.allocatable
  for _, slot in ipairs(req.slots) do
    local want = req[slot]
    if want ~= 0 then
      if tonumber(alloc.v[slot]) <= 0 then return nil end
      local has_affinity, fits = false, 0
      for k = 1, n_zones do
        local i = (k - 1) * SLOTS + slot + 1
        if stamp[i] == now then
          has_affinity = true
          if suitable(guaranteed, slot, want, value[i]) then fits = bor(fits, lshift(1, k - 1)) end
        end
      end
      if has_affinity or not is_node_level(slot) then
        mask = band(mask, fits)
        if mask == 0 then return nil end
      end
    end
  end
  for k = 1, n_zones do
    if band(mask, lshift(1, k - 1)) ~= 0 then return k end
  end
  return nil
end

-- Loads the node's zones' available amounts (less what this plugin reserved)
-- for fit_zone: a new stamp invalidates the previous node's.
function P:fill_available(topo)
  local value, stamp = self.avail_value, self.avail_stamp
  local now = self.stamp + 1
  self.stamp = now
  local listed_amount, entry_i, entry_s = topo.amount, topo.entry_i, topo.entry_s
  local reserved = topo.reserved
  for e = 1, #entry_i do
    local i = entry_i[e]
    value[i] = listed_amount[i] - reserved[entry_s[e]]
    stamp[i] = now
  end
end

-- Takes a container's request from zone k (container scope).
function P:take(k, req)
  local value, stamp, now = self.avail_value, self.avail_stamp, self.stamp
  for _, slot in ipairs(req.slots) do
    local i = (k - 1) * SLOTS + slot + 1
    if stamp[i] == now then value[i] = value[i] - req[slot] end
  end
end

function P:pre_filter(state, pod)
  self:refresh()
  state[self.name] = pods.shape(pod)
end

-- The per-pod shape is not changed after PreFilter: clones share it.
function P:clone_state(entry) return entry end

function P:filter(state, pod, ni)
  local shape = state[self.name] or pods.shape(pod)
  if shape.qos == "BestEffort" and not shape.non_native then return nil end
  local id = ni.node.name
  local topo = self.topologies[id]
  if topo == nil or topo.policy ~= "single-numa-node" then return nil end
  local n = topo.n
  local guaranteed = shape.qos == "Guaranteed"
  self:fill_available(topo)
  if topo.scope == "pod" then
    if not self:fit_zone(ni, n, shape.effective, guaranteed) then return self.unaligned.pod end
    return nil
  end
  for _, c in ipairs(shape.init) do
    if not self:fit_zone(ni, n, c, guaranteed) then return self.unaligned.init end
  end
  for _, c in ipairs(shape.app) do
    local k = self:fit_zone(ni, n, c, guaranteed)
    if not k then return self.unaligned.container end
    self:take(k, c)
  end
  return nil
end

-- ---- scoring ------------------------------------------------------------------------

-- Quantity.Value(): whole units, rounded up (cpu millicores -> cores).
local function units(slot, v)
  if slot == CPU then return ceil(v / 1000) end
  return v
end

local function weight_of(weights, slot)
  local w = weights[slot]
  if w == nil or w < 1 then return 1 end
  return w
end

local function idiv(a, b) return floor(a / b) end   -- operands are >= 0 here

-- Zone k's available amount of a slot in whole units (0 when not listed).
local function have_units(topo, reserved, k, slot)
  local i = (k - 1) * SLOTS + slot + 1
  local v = topo.amount[i]
  if v < 0 then return 0 end
  return units(slot, v - reserved[slot + 1])
end

function P:zone_score(req, topo, reserved, k)
  local strategy = self.strategy
  if strategy == "BalancedAllocation" then
    local n, sum, sq = 0, 0, 0
    for _, slot in ipairs(req.slots) do
      local have = have_units(topo, reserved, k, slot)
      local f = 1
      if have ~= 0 then f = units(slot, req[slot]) / have end
      if f > 1 then return 0 end
      n, sum, sq = n + 1, sum + f, sq + f * f
    end
    local variance = 0
    if n > 1 then variance = (sq - sum * sum / n) / (n - 1) end
    local s = (1 - variance) * MAX_SCORE
    return s >= 0 and floor(s) or -floor(-s)
  end
  local total, weights = 0, 0
  for _, slot in ipairs(req.slots) do
    local have = have_units(topo, reserved, k, slot)
    local want = units(slot, req[slot])
    local s = 0
    if have > 0 and want <= have then
      if strategy == "LeastAllocated" then s = idiv((have - want) * MAX_SCORE, have)
      else s = idiv(want * MAX_SCORE, have) end
    end
    local w = weight_of(self.weights, slot)
    total, weights = total + s * w, weights + w
  end
  if weights == 0 then return 0 end
  return idiv(total, weights)
end

function P:numa_score(req, topo, reserved)
  local min_score = 0
  for k = 1, topo.n do
    local s = self:zone_score(req, topo, reserved, k)
    if min_score == 0 or (s ~= 0 and s < min_score) then min_score = s end
  end
  return min_score
end

function P:pre_score(state, pod)
  self:refresh()
  state[self.name] = state[self.name] or pods.shape(pod)
end

function P:score(state, pod, ni)
  local shape = state[self.name] or pods.shape(pod)
  if shape.qos ~= "Guaranteed" then return MAX_SCORE end
  local id = ni.node.name
  local topo = self.topologies[id]
  if topo == nil or topo.policy ~= "single-numa-node" then return 0 end
  local reserved = topo.reserved
  if topo.scope == "pod" then return self:numa_score(shape.effective, topo, reserved) end
  local sum, n = 0, 0
  for _, c in ipairs(shape.init) do sum, n = sum + self:numa_score(c, topo, reserved), n + 1 end
  for _, c in ipairs(shape.app) do sum, n = sum + self:numa_score(c, topo, reserved), n + 1 end
  if n == 0 then return 0 end
  return floor(sum / n)
end

-- ---- reserve ------------------------------------------------------------------------

function P:reserve(state, pod, node_name)
  self:refresh()
  local id = ls.intern(node_name)
  local topo = self.topologies[id]
  if topo == nil then return nil end
  local req = (state[self.name] or pods.shape(pod)).effective
  if topo.reserved_pods[pod.uid] then return nil end
  topo.reserved_pods[pod.uid] = req
  local sum = topo.reserved
  for _, slot in ipairs(req.slots) do sum[slot + 1] = sum[slot + 1] + req[slot] end
  return nil
end

function P:unreserve(_, pod, node_name)
  local topo = self.topologies[ls.intern(node_name)]
  local req = topo and topo.reserved_pods[pod.uid]
  if req == nil then return end
  topo.reserved_pods[pod.uid] = nil
  local sum = topo.reserved
  for _, slot in ipairs(req.slots) do sum[slot + 1] = sum[slot + 1] - req[slot] end
end

-- ---- events ---------------------------------------------------------------------
-- Upstream's EventsToRegister: a deleted pod frees NUMA resources, a node added
-- or given more allocatable, and a NodeResourceTopology added or updated.
P.events = {
  { resource = "Pod", action = { "Delete" } },
  { resource = "Node", action = { "Add", "UpdateNodeAllocatable" } },
  { resource = P.KIND, action = { "Add", "Update" } },
}

return P
