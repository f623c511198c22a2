-- BestFit: the FGD paper's best-fit baseline on a GPU-sharing cluster: the
-- node whose cpu and GPU left after the pod are the smallest, in units of
-- the largest node (128 cores, 8 GPUs). A Score plugin with NormalizeScore.
--
-- Mirrors best_fit_score.go of hkust-adsl/kubernetes-scheduler-simulator
-- (facts, not code):
-- * free = (cpu left, GPU milli left on the node), request = (cpu, GPUs x
--   milli); score = int64((1 - sum_i 0.5 * (free_i - request_i) / max_i) *
--   100) with max = (128000, 8000) (MaxSpecCpu, MaxSpecGpu);
-- * a free dimension below the request, or a GPU model the pod does not
--   allow, is an Error (raised: the pod's status names the plugin;
--   OpenGpuShare and NodeResourcesFit filter those first);
-- * NormalizeScore: (s - lowest) * 100 / (highest - lowest), integer
--   division; all equal -> 0 (the simulator's NormalizeScore).
-- * GPU choice at Reserve: OpenGpuShare's "best" (the simulator's default).
-- * args.tieBreak "name": after NormalizeScore, the best node with the
--   smallest name in the simulator's order wins (its vendored selectHost;
--   gpu_share_view's break_ties); "random" (default): kube-scheduler's pick.
-- Deviations: none known.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("BestFit", { defaults = { tieBreak = "random" } })

function P.validate(args) return view.check_tie_break(args.tieBreak) end
function P:init(args) self.tie_break = args.tieBreak == "name" end

local MAX_CPU, MAX_GPU = 128000, 8000

local function trunc(x) return x < 0 and math.ceil(x) or math.floor(x) end

--- The simulator's getBestFitScore; nil when a free dimension is short.
function P.best_fit_score(v, req)
  local dcpu = v.cpu_left - req.cpu
  local dgpu = v.free_total - req.gpus * req.milli
  if dcpu < 0 or dgpu < 0 then return nil end
  return trunc((1 - (dcpu / MAX_CPU * 0.5 + dgpu / MAX_GPU * 0.5)) * ls.MAX_NODE_SCORE)
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  local req = view.request(pod)
  local v = view.node(node)
  if req.gpus > 0 and not view.accessible(v, req) then
    error("BestFit: node " .. ls.str(node.node.name) .. ": its GPU model is not one the pod allows", 0)
  end
  local s = P.best_fit_score(v, req)
  if s == nil then
    error("BestFit: node " .. ls.str(node.node.name) .. " has less free cpu or GPU than the pod asks for", 0)
  end
  return s
end

function P:normalize_score(_, _, scores, nodes, n)
  local lo, hi = math.huge, -math.huge
  for i = 0, n - 1 do
    local s = tonumber(scores[i])
    if s > hi then hi = s end
    if s < lo then lo = s end
  end
  local range = hi - lo
  for i = 0, n - 1 do
    scores[i] = range == 0 and 0 or math.floor((tonumber(scores[i]) - lo) * ls.MAX_NODE_SCORE / range)
  end
  if self.tie_break then view.break_ties(scores, nodes, n) end
  return nil
end

return P
