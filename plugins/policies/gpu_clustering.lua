-- GpuClustering: the FGD paper's GPU-clustering baseline: GPU pods of the
-- same kind (a share of one GPU, or N whole GPUs) go together, onto nodes
-- whose GPUs are already in use. A Score plugin.
--
-- Mirrors gpu_clustering_score.go of hkust-adsl/kubernetes-scheduler-simulator
-- (facts, not code). A pod's affinity: "share-gpu" (one GPU, milli < 1000),
-- "N-gpu" (N whole GPUs); a pod without GPUs scores 0. A node's affinities:
-- those of the GPU pods on it. With L the node's free GPU milli, the score is
-- 25 * (8000 - L) / 8000 (integer division; 8000 = MaxSpecGpu) plus
-- * 75 when the node's only affinity is the pod's,
-- * 50 when the pod's is one of several,
-- * 25 when the node has no GPU pod,
-- * 0 when it has only others.
-- * GPU choice at Reserve: OpenGpuShare's "best" (the simulator's default).
-- * args.tieBreak "name": the best node with the smallest name in the
--   simulator's order wins (its vendored selectHost; gpu_share_view's
--   break_ties); "random" (default): kube-scheduler's random pick.
-- Deviations: none known.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("GpuClustering", { defaults = { tieBreak = "random" } })

function P.validate(args) return view.check_tie_break(args.tieBreak) end
function P:init(args) self.tie_break = args.tieBreak == "name" end

local MAX_SPEC_GPU = 8000
local idiv = ls.idiv

local function affinity(req)
  if req.gpus == 0 then return nil end
  if req.share then return "share-gpu" end
  return req.gpus .. "-gpu"
end

-- The node's affinities (kept with its view, which is rebuilt when it changes).
local function affinities(v, node)
  local a = v.memo.affinities
  if a then return a end
  a = { n = 0, has = {} }
  for k = 0, node.num_pods - 1 do
    local tag = affinity(view.request(node.pods[k]))
    if tag and not a.has[tag] then
      a.has[tag] = true
      a.n = a.n + 1
    end
  end
  v.memo.affinities = a
  return a
end

--- The simulator's clustering score.
function P.clustering_score(v, node, req)
  local tag = affinity(req)
  if tag == nil then return ls.MIN_NODE_SCORE end
  local a = affinities(v, node)
  local base = idiv(idiv(ls.MAX_NODE_SCORE, 4) * (MAX_SPEC_GPU - v.free_total), MAX_SPEC_GPU)
  if a.has[tag] then
    return base + (a.n == 1 and idiv(ls.MAX_NODE_SCORE * 3, 4) or idiv(ls.MAX_NODE_SCORE * 2, 4))
  end
  return base + (a.n == 0 and idiv(ls.MAX_NODE_SCORE, 4) or 0)
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  return P.clustering_score(view.node(node), node, view.request(pod))
end

function P:normalize_score(_, _, scores, nodes, n)
  if self.tie_break then view.break_ties(scores, nodes, n) end
  return nil
end

return P
