-- LoadVariationRiskBalancing: balances the risk of load variation across
-- nodes; a node's risk is its measured average utilization plus a margin
-- times its standard deviation. A Score plugin.
--
-- Ported from kubernetes-sigs/scheduler-plugins
-- pkg/trimaran/loadvariationriskbalancing (Trimaran, KEP 61; behaviour, not
-- code):
-- * args: safeVarianceMargin (default 1), safeVarianceSensitivity (default 1);
--   a negative value means the default (upstream's defaulting).
--   watcherAddress and metricProvider are accepted and ignored.
-- * Score, per node: no metrics for the node -> 0. For CPU (millicores) and
--   memory, when the node has a measure of it: capacity = the node's
--   allocatable, usedAvg = avg% * capacity / 100, usedStdev = std% *
--   capacity / 100, req = the pod's request. capacity <= 0 -> that score is 0.
--   Otherwise req = max(req, 0), usedAvg and usedStdev clamped to [0,
--   capacity]; mu = clamp((usedAvg + req) / capacity, 0, 1), sigma =
--   clamp(usedStdev / capacity, 0, 1), sigma = sigma ^ (1 / sensitivity)
--   (when sensitivity >= 0), sigma = clamp(sigma * margin, 0, 1); risk = (mu +
--   sigma) / 2; score_r = (1 - risk) * 100 (a float).
--   Node score = round(min(cpu, memory)) when both were measured, else
--   round(max(cpu, memory)) (Go's math.Round). No NormalizeScore.
--
-- * The pod's request (upstream's GetResourceRequested): the regular
--   containers' requests summed, raised to any larger init (or sidecar)
--   container request, plus the pod overhead; cpu and memory.
--
-- Deviations:
-- * Metrics come from node annotations (average and standard deviation) or
--   the metrics API's NodeMetrics objects (trimaran_metrics; no deviation:
--   there the margin and sensitivity have no effect), not a load-watcher.
-- * Memory is compared in bytes, not MiB (the ratios are the same).
local ls = require("luasched")
local metrics = require("trimaran_metrics")

local P = ls.plugin("LoadVariationRiskBalancing", {
  defaults = { safeVarianceMargin = 1, safeVarianceSensitivity = 1 },
  optional = { watcherAddress = "string", metricProvider = "object" },
})

local floor, min, max, tonumber = math.floor, math.min, math.max, tonumber
local MIN_SCORE, MAX_SCORE = ls.MIN_NODE_SCORE, ls.MAX_NODE_SCORE
local REGULAR, CPU, MEMORY = ls.CONTAINER_REGULAR, ls.RES_CPU, ls.RES_MEMORY

local function round(x)
  if x < 0 then return -floor(-x + 0.5) end
  return floor(x + 0.5)
end

local function clamp(x, lo, hi) return max(min(x, hi), lo) end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

function P.validate(args)
  for _, k in ipairs({ "safeVarianceMargin", "safeVarianceSensitivity" }) do
    if not finite(args[k]) then return k .. ": must be a finite number, got " .. tostring(args[k]) end
  end
end

function P:init(args)
  local d = P.defaults
  self.margin = args.safeVarianceMargin < 0 and d.safeVarianceMargin or args.safeVarianceMargin
  self.sensitivity = args.safeVarianceSensitivity < 0 and d.safeVarianceSensitivity or args.safeVarianceSensitivity
end

--- One resource's score (a float): upstream's computeScore.
function P:resource_score(avg_pct, std_pct, capacity, req)
  if capacity <= 0 then return 0 end
  local used_avg = clamp(avg_pct * capacity / 100, 0, capacity)
  local used_std = clamp(std_pct * capacity / 100, 0, capacity)
  local mu = clamp((used_avg + max(req, 0)) / capacity, 0, 1)
  local sigma = clamp(used_std / capacity, 0, 1)
  if self.sensitivity >= 0 then sigma = sigma ^ (1 / self.sensitivity) end
  sigma = clamp(sigma * self.margin, 0, 1)
  local risk = (mu + sigma) / 2
  return (1 - risk) * MAX_SCORE
end

--- The pod's cpu (millicores) and memory (bytes) request as upstream's
--- GetResourceRequested sums them.
function P.pod_request(pod)
  local cpu, mem = 0, 0
  for i = 0, pod.n_containers - 1 do
    local c = pod.containers[i]
    if c.kind == REGULAR then
      cpu = cpu + (ls.quantity(c.requests, CPU) or 0)
      mem = mem + (ls.quantity(c.requests, MEMORY) or 0)
    end
  end
  for i = 0, pod.n_containers - 1 do
    local c = pod.containers[i]
    if c.kind ~= REGULAR then
      cpu = max(cpu, ls.quantity(c.requests, CPU) or 0)
      mem = max(mem, ls.quantity(c.requests, MEMORY) or 0)
    end
  end
  return cpu + (ls.quantity(pod.overhead, CPU) or 0), mem + (ls.quantity(pod.overhead, MEMORY) or 0)
end

function P:pre_score(state, pod)
  metrics.refresh()
  local cpu, mem = P.pod_request(pod)
  state[self.name] = { cpu = cpu, memory = mem }
end

function P:score(state, pod, ni)
  local cpu_avg, cpu_std, mem_avg, mem_std = metrics.node(ni)
  if cpu_avg == nil and mem_avg == nil then return MIN_SCORE end
  local req = state[self.name]
  if req == nil then
    local c, m = P.pod_request(pod)
    req = { cpu = c, memory = m }
  end
  local alloc = ni.node.allocatable
  local cpu, mem = 0, 0
  if cpu_avg then cpu = self:resource_score(cpu_avg, cpu_std, tonumber(alloc.milli_cpu), req.cpu) end
  if mem_avg then mem = self:resource_score(mem_avg, mem_std, tonumber(alloc.memory), req.memory) end
  if cpu_avg and mem_avg then return round(min(cpu, mem)) end
  return round(max(cpu, mem))
end

-- The metrics API's objects this plugin reads: `luasched run` polls them.
P.object_data = { "NodeMetrics" }

-- ---- events ---------------------------------------------------------------------
-- A Score plugin rejects no pod: nothing to register.
P.events = {}

return P
