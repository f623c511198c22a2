-- FGD: fragmentation gradient descent (Weng et al., "Beware of
-- Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
-- Gradient Descent", USENIX ATC '23): the node where placing the pod grows
-- the cluster's GPU fragmentation the least, fragmentation measured against
-- the "typical pods" of the workload. A Score plugin that also chooses the
-- GPU (`choose_gpus`, for OpenGpuShare's gpuSelMethod: FGD, as the paper's
-- simulator does when FGD is the policy).
--
-- Mirrors fgd_score.go and utils/frag.go (NodeGpuShareFragAmountScore) of
-- hkust-adsl/kubernetes-scheduler-simulator (facts, not code):
-- * a node's fragmentation F (gpu_frag.lua, shared with the lab's metric)
--   = sum over the typical pods t (weight w_t, the
--   share of the workload's pods of that shape) of w_t x
--   - the node's free GPU milli, when t asks for no GPU, when the node's
--     model is not one t allows, or when the node cannot host t (its free
--     GPUs or its free cpu are short);
--   - else the free milli of the GPUs each too small for t's milli per GPU;
-- * score = int64(sigmoid((F before - F after) / 1000) x 100), sigmoid(x) =
--   1 / (1 + e^-x); for a share of one GPU "after" is tried on every GPU
--   that holds it and the best one (first on ties) is both the score and the
--   GPU chosen; otherwise the pod takes its cpu and, for whole GPUs, the
--   GPUs with the least free milli that hold it (NodeResource.Sub), the
--   GPUs chosen being the first fully free ones by index
--   (AllocateExclusiveGpuId);
-- * a pod without requests scores 100; a node of a model the pod does not
--   allow is an Error (OpenGpuShare filters it first).
-- Typical pods: args.typicalPods ([{milliCpu, milliGpu, gpus, model,
-- weight}]), or else the TypicalPodSet object args.typicalPodsObject
-- ("namespace/name", default "default/openb") that `luasched import openb`
-- writes into the trace (the shapes of the trace's tasks covering 95% of
-- them, renormalized: the simulator's GetTypicalPods with
-- podPopularityThreshold 95, isInvolvedCpuPods true).
-- args.tieBreak "name": the best node with the smallest name in the
-- simulator's order wins (its vendored selectHost; gpu_share_view's
-- break_ties); "random" (default): kube-scheduler's random pick.
-- Deviations: none known in the measure. Scores are kept per node state and
-- pod shape (recomputed when the node changes), which changes no result.
local ls = require("luasched")
local view = require("gpu_share_view")
local frag = require("gpu_frag")

local P = ls.plugin("FGD", {
  defaults = { typicalPodsObject = "default/openb", tieBreak = "random" },
  optional = { typicalPods = "table", dimExtMethod = "string", normMethod = "string" },
})

local exp, floor = math.exp, math.floor

-- ---- typical pods -----------------------------------------------------------------

local T = { n = 0 }   -- gpu_frag.typical's arrays: cpu, milli, gpus, models (set or false), w

local function set_typical(list, where) return frag.typical(list, where, ls.intern) end

local loaded = false
local object_ref = "default/openb"   -- args.typicalPodsObject; OpenGpuShare's copy keeps the default

--- The typical pods (read once: from the args, or the trace's object).
function P.typical_pods()
  if loaded then return T end
  local ns, name = object_ref:match("^([^/]+)/(.+)$")
  local o = ns and ls.find_object("typicalpodsets.v1alpha1.luasched.io", ls.intern(ns), ls.intern(name))
  if o == nil then
    error("FGD: no typical pods: set args.typicalPods, or load a trace with the TypicalPodSet object "
      .. object_ref .. " (luasched import openb writes it)", 0)
  end
  local d = ls.object_data(o)
  T = set_typical(d.spec and d.spec.pods or {}, "TypicalPodSet " .. object_ref)
  loaded = true
  return T
end

function P.validate(args) return view.check_tie_break(args.tieBreak) end

function P:init(args)
  self.tie_break = args.tieBreak == "name"
  object_ref = args.typicalPodsObject
  if args.typicalPods then
    T = set_typical(args.typicalPods, "FGD args.typicalPods")
    loaded = true
  end
end

-- ---- the fragmentation measure ---------------------------------------------------

--- F of a node state: free milli per GPU (1..n), cpu left, model id
--- (the measure is gpu_frag's, over the typical pods).
function P.fragmentation(free, n, cpu_left, model)
  return frag.fragmentation(P.typical_pods(), free, n, cpu_left, model)
end

local function sigmoid_score(before, after)
  local s = 1 / (1 + exp(-((before - after) / 1000))) * ls.MAX_NODE_SCORE
  return floor(s)
end

local scratch = {}

local function before_of(v)
  local b = v.memo.fgd_before
  if b == nil then
    b = P.fragmentation(v.free, v.n, v.cpu_left, v.model)
    v.memo.fgd_before = b
  end
  return b
end

-- NodeResource.Sub for a pod that is not a share: the cpu, and its GPUs
-- from the least free milli up (stable), each holding the milli per GPU.
local function after_sub(v, req)
  local n, free = v.n, v.free
  for i = 1, n do scratch[i] = free[i] end
  local want = req.gpus
  while want > 0 do
    local pick
    for i = 1, n do
      local x = scratch[i]
      if x >= req.milli and x == free[i] and (pick == nil or x < scratch[pick]) then pick = i end
    end
    if pick == nil then break end
    scratch[pick] = scratch[pick] - req.milli
    want = want - 1
  end
  return P.fragmentation(scratch, n, v.cpu_left - req.cpu, v.model)
end

--- Score and GPU ids of the pod on the node's view, kept per pod shape.
local function assess(v, req)
  local m = v.memo[req.shape]
  if m then return m[1], m[2] end
  local before = before_of(v)
  local score, ids
  if req.share then
    local n, free = v.n, v.free
    for i = 1, n do scratch[i] = free[i] end
    for i = 1, n do
      if free[i] >= req.milli then
        scratch[i] = free[i] - req.milli
        local s = sigmoid_score(before, P.fragmentation(scratch, n, v.cpu_left - req.cpu, v.model))
        scratch[i] = free[i]
        if ids == nil or s > score then score, ids = s, { i } end
      end
    end
    score = score or 0
  else
    score = sigmoid_score(before, after_sub(v, req))
    ids = req.gpus > 0 and view.exclusive_ids(v.free, v.n, req) or nil
  end
  v.memo[req.shape] = { score, ids }
  return score, ids
end

function P.choose_gpus(v, req)
  local _, ids = assess(v, req)
  return ids
end

function P:pre_score()
  view.refresh()   -- the views of the nodes that changed are rebuilt
  return nil
end

function P:score(_, pod, node)
  if pod.requests_nothing ~= 0 then return ls.MAX_NODE_SCORE end
  local req = view.request(pod)
  local v = view.node(node)
  if req.gpus > 0 and not view.accessible(v, req) then
    error("FGD: node " .. ls.str(node.node.name) .. ": its GPU model is not one the pod allows", 0)
  end
  return (assess(v, req))
end

function P:normalize_score(_, _, scores, nodes, n)
  if self.tie_break then view.break_ties(scores, nodes, n) end
  return nil
end

P.view = view   -- the GPU view this plugin reads (its specs build states with it)
view.set_chooser(function(v, req) return P.choose_gpus(v, req) end)

return P
