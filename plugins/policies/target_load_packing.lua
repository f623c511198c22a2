-- TargetLoadPacking: packs pods onto nodes until their measured CPU
-- utilization reaches a target, then spreads (a best-fit bin packing on real
-- load). A Score plugin.
--
-- Ported from kubernetes-sigs/scheduler-plugins pkg/trimaran/targetloadpacking
-- (Trimaran, KEP 61; behaviour, not code):
-- * args: targetUtilization (percent, default 40; 0 or less means the
--   default), defaultRequests (default {cpu: 1000m}: the CPU of a container
--   with neither a CPU request nor a limit), defaultRequestsMultiplier (a
--   number as text, default "1.5": the multiplier of a container's CPU request
--   when it has no CPU limit). watcherAddress and metricProvider are accepted
--   and ignored (see Deviations).
-- * Score, per node: no metrics for the node, or no CPU measure -> 0
--   (MinNodeScore). nodeCPUUtilMillis = avg% / 100 * capacity.cpu; the pod's
--   predicted CPU = sum over its containers of (limit if set, else
--   round(request * multiplier) if set, else defaultRequests.cpu) + overhead;
--   "missing" = the predicted CPU of pods assigned to the node that the
--   metrics cannot show yet. predicted% = 100 * (util + pod + missing) /
--   capacity.cpu (0 when the capacity is 0). Then, with T the target:
--     predicted% > 100           -> 0
--     predicted% > T             -> round(T * (100 - predicted%) / (100 - T))
--     otherwise                  -> round((100 - T) * predicted% / T + T)
--   (round half away from zero, Go's math.Round). No NormalizeScore.
--
-- Deviations:
-- * Metrics come from node annotations or the metrics API's NodeMetrics
--   objects (trimaran_metrics: the average CPU utilization, a percent of
--   capacity), not from a load-watcher service.
-- * "Missing" pods: upstream counts the pods its event handler saw assigned
--   less than 60 s before the metrics window ended (or after it), by wall
--   clock. Here: the pods this plugin reserved on the node while the node's
--   NodeMetrics object stayed the same version (the next report includes
--   them). Pods other schedulers bind are not counted.
-- * targetUtilization above 100 is refused (upstream accepts it and divides
--   by a negative number); defaultRequestsMultiplier must be a number >= 0.
-- * A container's CPU request that the API server would default from its
--   limit is there (the limit is used first anyway, as upstream).
local ls = require("luasched")
local metrics = require("trimaran_metrics")
local cel = require("luasched.cel")

local P = ls.plugin("TargetLoadPacking", {
  defaults = { targetUtilization = 40, defaultRequestsMultiplier = "1.5" },
  optional = { defaultRequests = "object", watcherAddress = "string", metricProvider = "object" },
})

local floor, tonumber = math.floor, tonumber
local MIN_SCORE = ls.MIN_NODE_SCORE
local REGULAR, CPU = ls.CONTAINER_REGULAR, ls.RES_CPU

-- Go's math.Round: half away from zero.
local function round(x)
  if x < 0 then return -floor(-x + 0.5) end
  return floor(x + 0.5)
end
P.round = round

local function multiplier_of(text)
  local m = tonumber(text)
  if m == nil or m ~= m or m < 0 or m == math.huge then return nil end
  return m
end

local function default_cpu_of(requests)
  if requests == nil then return 1000 end
  if type(requests) ~= "table" then return nil end
  local q = requests.cpu
  if q == nil then return 1000 end
  local v = cel.parse_quantity(tostring(q))
  if v == nil or v < 0 then return nil end
  return math.ceil(v * 1000)
end

function P.validate(args)
  if type(args.targetUtilization) ~= "number" or args.targetUtilization > 100 then
    return "targetUtilization: must be a percent up to 100, got " .. tostring(args.targetUtilization)
  end
  if multiplier_of(args.defaultRequestsMultiplier) == nil then
    return "defaultRequestsMultiplier: must be a number >= 0 as text (\"1.5\"), got "
      .. tostring(args.defaultRequestsMultiplier)
  end
  if default_cpu_of(args.defaultRequests) == nil then
    local r = args.defaultRequests
    return "defaultRequests.cpu: must be a CPU quantity (\"1000m\"), got "
      .. tostring(type(r) == "table" and r.cpu or r)
  end
end

function P:init(args)
  local target = args.targetUtilization
  if target <= 0 then target = P.defaults.targetUtilization end
  self.target = target
  self.multiplier = multiplier_of(args.defaultRequestsMultiplier)
  self.default_millis = default_cpu_of(args.defaultRequests)
  self.assigned = {}   -- node name id -> { version = metrics version, sum = millis, pods = { uid -> millis } }
end

--- The pod's predicted CPU in millicores: upstream's PredictUtilisation per
--- regular container (limit, else round(request x multiplier), else the
--- default) plus the pod overhead's CPU.
function P:predicted_cpu(pod)
  local sum = 0
  for i = 0, pod.n_containers - 1 do
    local c = pod.containers[i]
    if c.kind == REGULAR then
      local limit = ls.quantity(c.limits, CPU)
      local request = ls.quantity(c.requests, CPU)
      if limit ~= nil then
        sum = sum + limit
      elseif request ~= nil then
        sum = sum + round(request * self.multiplier)
      else
        sum = sum + self.default_millis
      end
    end
  end
  return sum + (ls.quantity(pod.overhead, CPU) or 0)
end

-- The predicted CPU of pods reserved on the node that its metrics (of that
-- version) cannot include yet.
function P:missing_millis(node_id, version)
  local a = self.assigned[node_id]
  if a == nil then return 0 end
  if a.version ~= version then
    self.assigned[node_id] = nil
    return 0
  end
  return a.sum
end

function P:pre_score(state, pod)
  metrics.refresh()
  state[self.name] = self:predicted_cpu(pod)
end

function P:score(state, pod, ni)
  local cpu_pct, _, _, _, _, version = metrics.node(ni)
  if cpu_pct == nil then return MIN_SCORE end
  local capacity = tonumber(ni.node.capacity.milli_cpu)
  local util_millis = cpu_pct / 100 * capacity
  local missing = self:missing_millis(ni.node.name, version)
  local pod_cpu = state[self.name] or self:predicted_cpu(pod)
  local predicted = 0
  if capacity ~= 0 then predicted = 100 * (util_millis + pod_cpu + missing) / capacity end
  local target = self.target
  if predicted > target then
    if predicted > 100 then return MIN_SCORE end
    return round(target * (100 - predicted) / (100 - target))
  end
  return round((100 - target) * predicted / target + target)
end

function P:reserve(state, pod, node_name)
  local ni = ls.find_node(node_name)
  if ni == nil then return end
  local _, _, _, _, _, version = metrics.node(ni)
  if version == nil then return end
  local id = ni.node.name
  local a = self.assigned[id]
  if a == nil or a.version ~= version then
    a = { version = version, sum = 0, pods = {} }
    self.assigned[id] = a
  end
  local millis = state[self.name] or self:predicted_cpu(pod)
  local uid = pod.uid
  a.sum = a.sum - (a.pods[uid] or 0) + millis
  a.pods[uid] = millis
end

function P:unreserve(_, pod, node_name)
  local a = self.assigned[ls.intern(node_name)]
  local millis = a and a.pods[pod.uid]
  if millis then
    a.sum = a.sum - millis
    a.pods[pod.uid] = nil
  end
end

-- The metrics API's objects this plugin reads: `luasched run` polls them.
P.object_data = { "NodeMetrics" }

-- ---- events ---------------------------------------------------------------------
-- A Score plugin rejects no pod: nothing to register (upstream registers no
-- EventsToRegister for TargetLoadPacking).
P.events = {}

return P
