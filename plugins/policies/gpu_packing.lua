-- GpuPacking: the FGD paper's GPU-packing baseline: a GPU pod goes first
-- where it shares a GPU already in use, then onto a used node's free GPUs,
-- last onto an idle node. A Score plugin.
--
-- Mirrors gpu_packing_score.go of hkust-adsl/kubernetes-scheduler-simulator
-- (facts, not code). A pod without GPUs scores 0 everywhere. Otherwise, with
-- F the node's fully free GPUs:
-- * every GPU of the node free: 100/3 - F (integer division: 33 - F),
--   raised to F when lower;
-- * else the GPUs the pod would take, least free milli first (each holding
--   the pod's milli per GPU): if one of them is fully free, 50 - (how many
--   fully free ones), raised to 33; otherwise 100 - sum(free milli x 100 /
--   1000 of those GPUs) / 10, raised to 50 (integer divisions);
-- * GPUs that cannot hold the pod, or a model it does not allow: an Error
--   (OpenGpuShare filters those first).
-- * GPU choice at Reserve: OpenGpuShare's "best" (the simulator's default).
-- * args.tieBreak "name": the best node with the smallest name in the
--   simulator's order wins (its vendored selectHost; gpu_share_view's
--   break_ties); "random" (default): kube-scheduler's random pick.
-- Deviations: none known.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("GpuPacking", { defaults = { tieBreak = "random" } })

function P.validate(args) return view.check_tie_break(args.tieBreak) end
function P:init(args) self.tie_break = args.tieBreak == "name" end

local MILLI = view.MILLI
local idiv = ls.idiv

--- The simulator's getPackingScore; nil when the GPUs cannot hold the pod.
function P.packing_score(v, req)
  local free, n = v.free, v.n
  local fully = view.fully_free(v)
  if fully == n then
    local s = idiv(ls.MAX_NODE_SCORE, 3) - fully
    return s > fully and s or fully
  end
  -- indices by free milli ascending (a stable sort: equal ones by index)
  local order = {}
  for i = 1, n do order[i] = i end
  table.sort(order, function(a, b)
    if free[a] ~= free[b] then return free[a] < free[b] end
    return a < b
  end)
  local want, fully_used, share_sum = req.gpus, 0, 0
  for _, i in ipairs(order) do
    if want == 0 then break end
    if req.milli <= free[i] then
      want = want - 1
      if free[i] == MILLI then fully_used = fully_used + 1 end
      share_sum = share_sum + idiv(free[i] * 100, MILLI)
    end
  end
  if want ~= 0 then return nil end
  if fully_used > 0 then
    local s = idiv(ls.MAX_NODE_SCORE, 2) - fully_used
    local cap = idiv(ls.MAX_NODE_SCORE, 3)
    return s > cap and s or cap
  end
  local s = ls.MAX_NODE_SCORE - idiv(share_sum, 10)
  local cap = idiv(ls.MAX_NODE_SCORE, 2)
  return s > cap and s or cap
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  local req = view.request(pod)
  if req.gpus == 0 then return ls.MIN_NODE_SCORE end
  local v = view.node(node)
  local s = view.accessible(v, req) and P.packing_score(v, req)
  if not s then
    error("GpuPacking: node " .. ls.str(node.node.name) .. " cannot hold the pod's GPUs", 0)
  end
  return s
end

function P:normalize_score(_, _, scores, nodes, n)
  if self.tie_break then view.break_ties(scores, nodes, n) end
  return nil
end

return P
