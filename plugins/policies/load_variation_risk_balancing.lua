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
-- Deviations:
-- * Metrics come from the metrics API's NodeMetrics objects (trimaran_metrics):
--   their usage is the average and the standard deviation is 0, so the margin
--   and sensitivity have no effect on them (they do in the specs, which give
--   the deviation directly).
-- * The pod's request is luasched's PodRequests (containers, sidecars, init
--   maximum, overhead, pod-level resources); upstream sums the regular
--   containers, takes the init maximum and adds the overhead.
-- * Memory is compared in bytes, not MiB (the ratios are the same).
local ls = require("luasched")
local metrics = require("trimaran_metrics")

local P = ls.plugin("LoadVariationRiskBalancing", {
  defaults = { safeVarianceMargin = 1, safeVarianceSensitivity = 1 },
  optional = { watcherAddress = "string", metricProvider = "object" },
})

local floor, min, max, tonumber = math.floor, math.min, math.max, tonumber
local MIN_SCORE, MAX_SCORE = ls.MIN_NODE_SCORE, ls.MAX_NODE_SCORE

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

function P:pre_score()
  metrics.refresh()
end

function P:score(_, pod, ni)
  local cpu_avg, cpu_std, mem_avg, mem_std = metrics.node(ni)
  if cpu_avg == nil and mem_avg == nil then return MIN_SCORE end
  local alloc = ni.node.allocatable
  local cpu, mem = 0, 0
  if cpu_avg then
    cpu = self:resource_score(cpu_avg, cpu_std, tonumber(alloc.milli_cpu), tonumber(pod.requests.milli_cpu))
  end
  if mem_avg then
    mem = self:resource_score(mem_avg, mem_std, tonumber(alloc.memory), tonumber(pod.requests.memory))
  end
  if cpu_avg and mem_avg then return round(min(cpu, mem)) end
  return round(max(cpu, mem))
end

-- ---- events ---------------------------------------------------------------------
-- A Score plugin rejects no pod: nothing to register.
P.events = {}

return P
