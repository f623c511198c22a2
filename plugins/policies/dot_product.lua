-- DotProduct: the FGD paper's dot-product baseline (Tetris' packing
-- heuristic): the smaller the dot product of the node's free (cpu, GPU) and
-- the pod's request, both in units of the largest node, the higher the score.
-- A Score plugin; with dimExtMethod "share" it also chooses the GPUs
-- (`choose_gpus`, for OpenGpuShare's gpuSelMethod: DotProduct).
--
-- Mirrors dot_product_score.go and the match groups of pkg/type/resource.go
-- (hkust-adsl/kubernetes-scheduler-simulator, facts, not code), normMethod
-- "max":
-- * no candidate when the node's cpu left is below the pod's cpu;
-- * dimExtMethod "merge" (default; the paper's grid runs DotProd with merge,
--   max and gpuSelMethod best): one candidate (cpu left, the node's free GPU
--   milli in all);
-- * dimExtMethod "share": a pod asking for less than one GPU in total: each
--   GPU in use (free milli below 1000) holding it is a candidate (cpu left,
--   that GPU's free milli); and, when the fully free GPUs hold the pod's
--   total, one candidate (cpu left, 1000 x fully free GPUs) taking the first
--   fully free ones by index;
-- * pod vector (cpu, GPUs x milli); both divided by (128000, 8000); the
--   candidate's value 1 - dot / 2; the best (first on ties) wins; score =
--   int64(100 x value), 0 without a candidate.
-- * GPU choice at Reserve: with "merge" the candidate names no GPU, so the
--   profile leaves it to OpenGpuShare's "best" (as the paper's
--   generate_config_and_run.py does for merge); `choose_gpus` then answers
--   as "share" would.
-- * args.tieBreak "name": the best node with the smallest name in the
--   simulator's order wins (its vendored selectHost; gpu_share_view's
--   break_ties); "random" (default): kube-scheduler's random pick.
-- Deviations: none known.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("DotProduct", {
  defaults = { dimExtMethod = "merge", tieBreak = "random" },
  optional = { normMethod = "string" },
})

local MILLI, MAX_CPU, MAX_GPU = view.MILLI, 128000, 8000

function P.validate(args)
  if args.dimExtMethod ~= "merge" and args.dimExtMethod ~= "share" then
    return "dimExtMethod: expected merge or share, got " .. tostring(args.dimExtMethod)
  end
  if args.normMethod ~= nil and args.normMethod ~= "max" then
    return "normMethod: only max is built, got " .. tostring(args.normMethod)
  end
  return view.check_tie_break(args.tieBreak)
end

local merge = true   -- args.dimExtMethod == "merge" (set at init)

function P:init(args)
  merge = args.dimExtMethod == "merge"
  self.tie_break = args.tieBreak == "name"
  -- with "share" the GPUs are this plugin's choice: its view replays them
  view.set_chooser(not merge and function(v, req) return P.choose_gpus(v, req) end or nil)
end

local function value(cpu_left, gpu_left, req, total)
  local dot = (cpu_left / MAX_CPU) * (req.cpu / MAX_CPU) + (gpu_left / MAX_GPU) * (total / MAX_GPU)
  return 1 - dot / 2
end

--- The best "share" candidate's value and GPU ids (nil, nil without one).
--- Kept per pod shape with the node's view.
local function best_share(v, req)
  local m = v.memo[req.shape]
  if m then return m[1], m[2] end
  local val, ids
  if v.cpu_left >= req.cpu then
    local total = req.gpus * req.milli
    if total < MILLI then
      for i = 1, v.n do
        local f = v.free[i]
        if f < MILLI and f >= total then
          local x = value(v.cpu_left, f, req, total)
          if val == nil or x > val then val, ids = x, { i } end
        end
      end
    end
    local idle = view.fully_free(v)
    if total <= idle * MILLI then
      local x = value(v.cpu_left, idle * MILLI, req, total)
      if val == nil or x > val then val, ids = x, view.exclusive_ids(v.free, v.n, req) or {} end
    end
  end
  v.memo[req.shape] = { val, ids }
  return val, ids
end

--- The "merge" candidate's value (nil without one).
function P.merge_value(v, req)
  if v.cpu_left < req.cpu then return nil end
  return value(v.cpu_left, v.free_total, req, req.gpus * req.milli)
end

function P.choose_gpus(v, req)
  local _, ids = best_share(v, req)
  return ids and #ids > 0 and ids or nil
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  local v, req = view.node(node), view.request(pod)
  local val
  if merge then val = P.merge_value(v, req) else val = best_share(v, req) end
  if val == nil then return ls.MIN_NODE_SCORE end
  local s = ls.MAX_NODE_SCORE * val
  return s < 0 and math.ceil(s) or math.floor(s)
end

function P:normalize_score(_, _, scores, nodes, n)
  if self.tie_break then view.break_ties(scores, nodes, n) end
  return nil
end

P.view = view   -- the GPU view this plugin reads (its specs build states with it)

return P
