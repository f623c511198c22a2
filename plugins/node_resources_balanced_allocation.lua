-- NodeResourcesBalancedAllocation: favours nodes whose resource usage, with
-- the pod placed, is balanced across the configured resources.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/noderesources/
-- {balanced_allocation.go,resource_allocation.go} (v1.37), no NormalizeScore:
-- * args.resources: default cpu and memory; a weight of 0 (or none) becomes 1,
--   and every weight must then be 1; a name may appear once.
-- * PreScore: the pod's actual requests (no 100m / 200Mi defaults) per
--   configured resource; Skip when all are zero (a best-effort pod).
-- * Score (since v1.36, kubernetes#135573: it rewards nodes whose balance the
--   pod improves): with_pod uses fraction_r = (node requested_r + pod
--   request_r) / allocatable_r, without_pod node requested_r / allocatable_r,
--   each as float64 capped at 1; a resource with allocatable 0, a scalar
--   resource the pod does not request, "pods" and unknown names are left out of
--   both. For each, std = 0 for one fraction, |f1 - f2| / 2 for two, the
--   population standard deviation sqrt(sum((f - mean)^2) / n) for more, and
--   S = int64((1 - std) * 100) (truncation).
--   score = 50 + (50 + S_with_pod - S_without_pod) / 2 (int64 division): 75
--   when the pod leaves the balance as it was, 50 to 100 otherwise.
--
-- Deviations:
-- * The pod's requests are the C decoder's (pod.requests: containers,
--   sidecars, init maximum, overhead, pod-level resources, in-place resize).
-- * node requested + pod request is added in doubles: exact below 2^53 (memory
--   up to 8 PiB per node).
-- * No EventsToRegister table yet: registered for every cluster event.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeResourcesBalancedAllocation", {
  defaults = { resources = { { name = "cpu", weight = 1 }, { name = "memory", weight = 1 } } },
})

local floor, abs, sqrt, tonumber = math.floor, math.abs, math.sqrt, tonumber
local CPU, MEMORY, EPHEMERAL, FIRST_SCALAR = ls.RES_CPU, ls.RES_MEMORY, ls.RES_EPHEMERAL, ls.RES_FIRST_SCALAR
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE
local HALF = MAX_NODE_SCORE / 2

-- SetDefaults_NodeResourcesBalancedAllocationArgs: no resources -> cpu and
-- memory; a weight absent or 0 -> 1.
function P.complete_args(args)
  local out = {}
  for k, v in pairs(args) do out[k] = v end
  local resources = args.resources
  if type(resources) ~= "table" or #resources == 0 then resources = P.defaults.resources end
  out.resources = {}
  for i, r in ipairs(resources) do
    local w = type(r) == "table" and r.weight or nil
    out.resources[i] = type(r) == "table" and { name = r.name, weight = (w == nil or w == 0) and 1 or w } or r
  end
  return out
end

function P:init(args)
  local resources = args.resources
  if resources == nil or (type(resources) == "table" and #resources == 0) then
    resources = P.defaults.resources
  end
  if type(resources) ~= "table" then error("resources must be a list of {name, weight}", 0) end
  self.res_name, self.res_slot = {}, {}
  local seen = {}
  for k, r in ipairs(resources) do
    if type(r) ~= "table" or type(r.name) ~= "string" or r.name == "" then
      error(string.format("resources[%d].name: a resource name is required", k - 1), 0)
    end
    if seen[r.name] then
      error(string.format('resources[%d].name: Duplicate value: "%s"', k - 1, r.name), 0)
    end
    seen[r.name] = true
    local w = r.weight
    if w == nil or w == 0 then w = 1 end
    if w ~= 1 then
      error(string.format("resources[%d].weight: Invalid value: %s: must be 1", k - 1, tostring(w)), 0)
    end
    self.res_name[k] = r.name
    self.res_slot[k] = ls.resource_index(r.name)
  end
  self.n_res = #self.res_name
  self.resolved_count = ls.resource_count()
  self.fractions = {}           -- scratch for Score (with the pod), reused for every node
  self.fractions_without = {}   -- the same without the pod
end

-- Resource names first seen after init (extended resources) get their slots here.
local function resolve_slots(self)
  local count = ls.resource_count()
  if count == self.resolved_count then return end
  self.resolved_count = count
  local slots = self.res_slot
  for k = 1, self.n_res do
    if slots[k] < 0 then slots[k] = ls.resource_index(self.res_name[k]) end
  end
end

-- The pod's request per configured resource (calculatePodResourceRequestList
-- with useRequested): "pods" and unknown names request 0.
local function prescore_state(self, pod)
  resolve_slots(self)
  local reqs, best_effort = {}, true
  local req = pod.requests
  for k = 1, self.n_res do
    local slot = self.res_slot[k]
    local r = 0
    if slot == CPU or slot == MEMORY or slot == EPHEMERAL or slot >= FIRST_SCALAR then
      r = tonumber(req.v[slot])
    end
    reqs[k] = r
    if r ~= 0 then best_effort = false end
  end
  return { reqs = reqs, best_effort = best_effort }
end

function P:pre_score(state, pod)
  local s = prescore_state(self, pod)
  state[self.name] = s
  if s.best_effort then return ls.skip end
  return nil
end

-- Appends resource k's fractions on the node, with the pod (fw) and without it
-- (fo), if the resource takes part: a scalar the pod does not request, "pods"
-- and unknown names are (0, 0) and left out, as is a resource with allocatable
-- 0. Returns the new count and the two sums.
local function add_fraction(fw, fo, n, tw, to, slot, req, alloc_v, used_v)
  if slot == CPU or slot == MEMORY or slot == EPHEMERAL or (slot >= FIRST_SCALAR and req ~= 0) then
    local alloc = tonumber(alloc_v[slot])
    if alloc ~= 0 then
      local used = tonumber(used_v[slot])
      local f = (used + req) / alloc
      if f > 1 then f = 1 end
      local g = used / alloc
      if g > 1 then g = 1 end
      n = n + 1
      fw[n], fo[n] = f, g
      tw, to = tw + f, to + g
    end
  end
  return n, tw, to
end

-- balancedResourceScore: int64((1 - std) * MaxNodeScore) over n fractions.
-- std = 0 for fewer than two, |f1 - f2| / 2 for two, else the population
-- standard deviation with sum((f - mean)^2) added in resource order. std <= 0.5
-- for fractions in [0, 1], so floor truncates as int64() does.
local function balance_score(fr, n, total)
  local std = 0
  if n == 2 then
    std = abs((fr[1] - fr[2]) / 2)
  elseif n > 2 then
    local mean = total / n
    local d = fr[1] - mean
    local sum = d * d
    d = fr[2] - mean
    sum = sum + d * d
    d = fr[3] - mean
    sum = sum + d * d
    for i = 4, n do
      d = fr[i] - mean
      sum = sum + d * d
    end
    std = sqrt(sum / n)
  end
  return floor((1 - std) * MAX_NODE_SCORE)
end

-- The per-node code below is written out for up to four resources (and three
-- fractions in the deviation sum) instead of looping: a short inner loop that
-- runs two or more times per node tends to become LuaJIT's root trace, and
-- the node loop then runs as side traces that box the node pointers (an
-- allocation per node). Only configurations of five or more resources loop.
function P:score(state, pod, ni)
  local s = state[self.name]
  if s == nil then
    s = prescore_state(self, pod)
    state[self.name] = s
  end
  if s.best_effort then return 0 end
  local reqs, slots, fw, fo = s.reqs, self.res_slot, self.fractions, self.fractions_without
  local alloc_v, used_v = ni.allocatable.v, ni.requested.v
  local nres = self.n_res
  local n, tw, to = add_fraction(fw, fo, 0, 0, 0, slots[1], reqs[1], alloc_v, used_v)
  if nres >= 2 then n, tw, to = add_fraction(fw, fo, n, tw, to, slots[2], reqs[2], alloc_v, used_v) end
  if nres >= 3 then n, tw, to = add_fraction(fw, fo, n, tw, to, slots[3], reqs[3], alloc_v, used_v) end
  if nres >= 4 then n, tw, to = add_fraction(fw, fo, n, tw, to, slots[4], reqs[4], alloc_v, used_v) end
  for k = 5, nres do n, tw, to = add_fraction(fw, fo, n, tw, to, slots[k], reqs[k], alloc_v, used_v) end
  local with_pod = balance_score(fw, n, tw)
  local without_pod = balance_score(fo, n, to)
  -- MaxNodeScore/2 + (MaxNodeScore/2 + with - without)/2 in int64: both scores
  -- are in [50, 100], so the dividend is in [0, 100] and floor is Go's division
  return HALF + floor((HALF + with_pod - without_pod) / 2)
end

-- ---- events ---------------------------------------------------------------------

-- None: a Score plugin rejects no pod, so upstream registers no event for it
-- (the runtime only asks PreEnqueue, PreFilter, Filter, Reserve and Permit
-- plugins for events tables).
P.events = {}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeResourcesBalancedAllocation: as NodeResourcesFit (ResourcesSignerName).
function P:sign(pod) return signers.resources(pod) end

return P
