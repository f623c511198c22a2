-- DotProduct: the FGD paper's dot-product baseline (Tetris' packing
-- heuristic): the smaller the dot product of the node's free (cpu, GPU) and
-- the pod's request, both in units of the largest node, the higher the score;
-- each way the pod could take GPUs on the node is a candidate. A Score
-- plugin that also chooses the GPUs (`choose_gpus`, for OpenGpuShare's
-- gpuSelMethod: DotProduct, as the simulator does when it is the policy).
--
-- Mirrors dot_product_score.go with dimExtMethod "share" and normMethod
-- "max", the paper's setting (hkust-adsl/kubernetes-scheduler-simulator,
-- facts, not code):
-- * no candidate when the node's cpu left is below the pod's cpu;
-- * a pod asking for less than one GPU in total: each GPU in use (free milli
--   below 1000) holding it is a candidate (cpu left, that GPU's free milli);
-- * and, when the fully free GPUs hold the pod's total, one candidate (cpu
--   left, 1000 x fully free GPUs) taking the first fully free ones by index;
-- * pod vector (cpu, GPUs x milli); both divided by (128000, 8000); the
--   candidate's value 1 - dot / 2; the best (first on ties) wins; score =
--   int64(100 x value), 0 without a candidate.
-- Deviations: none known.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("DotProduct")

local MILLI, MAX_CPU, MAX_GPU = view.MILLI, 128000, 8000

local function value(cpu_left, gpu_left, req, total)
  local dot = (cpu_left / MAX_CPU) * (req.cpu / MAX_CPU) + (gpu_left / MAX_GPU) * (total / MAX_GPU)
  return 1 - dot / 2
end

--- The best candidate's value and GPU ids (nil, nil without one). Kept per
--- pod shape with the node's view.
local function best(v, req)
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

function P.choose_gpus(v, req)
  local _, ids = best(v, req)
  return ids and #ids > 0 and ids or nil
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  local val = best(view.node(node), view.request(pod))
  if val == nil then return ls.MIN_NODE_SCORE end
  local s = ls.MAX_NODE_SCORE * val
  return s < 0 and math.ceil(s) or math.floor(s)
end

P.view = view   -- the GPU view this plugin reads (its specs build states with it)
view.set_chooser(function(v, req) return P.choose_gpus(v, req) end)

return P
