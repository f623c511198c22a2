-- NodeResourcesBalancedAllocation: favours nodes whose resource usage, with
-- the pod placed, is balanced across the configured resources.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/noderesources/
-- {balanced_allocation.go,resource_allocation.go} (v1.30-v1.34), no NormalizeScore:
-- * args.resources: default cpu and memory; a weight of 0 (or none) becomes 1,
--   and every weight must then be 1; a name may appear once.
-- * PreScore: the pod's actual requests (no 100m / 200Mi defaults) per
--   configured resource; Skip when all are zero (a best-effort pod).
-- * Score: fraction_r = (node requested_r + pod request_r) / allocatable_r as
--   float64, capped at 1; a resource with allocatable 0, a scalar resource the
--   pod does not request, "pods" and unknown names are left out.
--   std = 0 for one fraction, |f1 - f2| / 2 for two, the population standard
--   deviation sqrt(sum((f - mean)^2) / n) for more;
--   score = int64((1 - std) * 100) (truncation).
--
-- Deviations:
-- * The pod's requests are the C decoder's (pod.requests: containers,
--   sidecars, init maximum, overhead); pod-level resources are not read.
-- * node requested + pod request is added in doubles: exact below 2^53 (memory
--   up to 8 PiB per node).
-- * No EventsToRegister table yet: registered for every cluster event.
local ls = require("luasched")

local P = ls.plugin("NodeResourcesBalancedAllocation", {
  defaults = { resources = { { name = "cpu", weight = 1 }, { name = "memory", weight = 1 } } },
})

local floor, abs, sqrt, tonumber = math.floor, math.abs, math.sqrt, tonumber
local CPU, MEMORY, EPHEMERAL, FIRST_SCALAR = ls.RES_CPU, ls.RES_MEMORY, ls.RES_EPHEMERAL, ls.RES_FIRST_SCALAR
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE

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
  self.fractions = {}   -- scratch for Score, reused for every node
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

-- Appends resource k's fraction on the node, if the resource takes part:
-- a scalar the pod does not request, "pods" and unknown names are (0, 0) and
-- left out, as is a resource with allocatable 0. Returns the new count and sum.
local function add_fraction(fractions, n, total, slot, req, alloc_v, used_v)
  if slot == CPU or slot == MEMORY or slot == EPHEMERAL or (slot >= FIRST_SCALAR and req ~= 0) then
    local alloc = tonumber(alloc_v[slot])
    if alloc ~= 0 then
      local f = (tonumber(used_v[slot]) + req) / alloc
      if f > 1 then f = 1 end
      n = n + 1
      fractions[n] = f
      total = total + f
    end
  end
  return n, total
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
  local reqs, slots, fractions = s.reqs, self.res_slot, self.fractions
  local alloc_v, used_v = ni.allocatable.v, ni.requested.v
  local nres = self.n_res
  local n, total = add_fraction(fractions, 0, 0, slots[1], reqs[1], alloc_v, used_v)
  if nres >= 2 then n, total = add_fraction(fractions, n, total, slots[2], reqs[2], alloc_v, used_v) end
  if nres >= 3 then n, total = add_fraction(fractions, n, total, slots[3], reqs[3], alloc_v, used_v) end
  if nres >= 4 then n, total = add_fraction(fractions, n, total, slots[4], reqs[4], alloc_v, used_v) end
  for k = 5, nres do n, total = add_fraction(fractions, n, total, slots[k], reqs[k], alloc_v, used_v) end
  local std = 0
  if n == 2 then
    std = abs((fractions[1] - fractions[2]) / 2)
  elseif n > 2 then
    -- sum((f - mean)^2) in resource order, as upstream adds it
    local mean = total / n
    local d = fractions[1] - mean
    local sum = d * d
    d = fractions[2] - mean
    sum = sum + d * d
    d = fractions[3] - mean
    sum = sum + d * d
    for i = 4, n do
      d = fractions[i] - mean
      sum = sum + d * d
    end
    std = sqrt(sum / n)
  end
  -- int64((1 - std) * MaxNodeScore): std <= 0.5 for fractions in [0, 1], so floor truncates
  return floor((1 - std) * MAX_NODE_SCORE)
end

-- ---- events ---------------------------------------------------------------------

-- None: a Score plugin rejects no pod, so upstream registers no event for it
-- (the runtime only asks PreEnqueue, PreFilter, Filter, Reserve and Permit
-- plugins for events tables).
P.events = {}

return P
