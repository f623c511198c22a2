-- OpenGpuShare: GPU sharing. Keeps the free milli of every GPU of every node
-- (gpu_share_view), lets a pod that asks for a share of one GPU onto a node
-- with one GPU holding that share, and a pod that asks for whole GPUs onto a
-- node with that many fully free GPUs, of an allowed model; picks the GPU
-- indices at Reserve and writes them at PreBind as the pod annotation
-- `alibabacloud.com/gpu-index` ("3", "0-1"), which a device plugin of the
-- open-gpu-share family reads. Filter, Reserve, Unreserve, PreBind.
--
-- Mirrors open_gpu_share.go of the FGD paper's simulator
-- (hkust-adsl/kubernetes-scheduler-simulator; facts, not code):
-- * Filter: a pod without a GPU request passes; a node without GPUs, of a
--   model the pod does not allow (`alibabacloud.com/gpu-card-model` "A|B"),
--   or whose GPUs cannot hold the request is Unschedulable.
-- * Reserve: the GPU choice (allocateGpuIdFunc) by args.gpuSelMethod:
--   "best" (default: the share goes to the GPU with the least free milli
--   that holds it; whole GPUs to the first fully free ones by index),
--   "worst" (the most free milli), "random" (one of the GPUs that hold the
--   share, each as likely; the paper's setting for Random), or the name of a
--   policy plugin that
--   exports `choose_gpus(view, req)` (FGD, DotProduct: the simulator hands
--   the choice to the score plugin of the highest weight).
-- * Unreserve forgets the choice.
-- Deviations:
-- * "random" draws with a number fixed by the pod's uid (gpu_share_view's
--   `draw`), not Go's math/rand: a view rebuilt by replay must repeat the
--   choice. Uniform over the GPUs that hold the share, as the simulator's.
-- * The simulator keeps its own GPU cache updated from informer events and
--   patches the pod at Reserve. Here every plugin's view of a node is rebuilt
--   from the pods on it when the node changes, replaying the GPU choice (see
--   gpu_share_view), so the indices need no write to be known. With
--   `args.annotate: true` the plugin also writes them at PreBind as the pod
--   annotation `alibabacloud.com/gpu-index` (a merge patch through the
--   cluster, for a device plugin on a live cluster); the embedded cluster of
--   simulate and compare binds the pod object it was given, so the profiles
--   of the policy lab keep the default, false.
local ls = require("luasched")
local view = require("gpu_share_view")

local P = ls.plugin("OpenGpuShare", {
  defaults = { gpuSelMethod = "best", annotate = false },
  optional = { dimExtMethod = "string", normMethod = "string" },
})

P.events = {
  { resource = "AssignedPod", action = { "Delete" } },
  { resource = "Node", action = { "Add", "UpdateNodeAllocatable", "UpdateNodeLabel" } },
}

local SNAKE = function(name) return (name:gsub("(%l)(%u)", "%1_%2"):gsub("(%u)(%u%l)", "%1_%2"):lower()) end

function P.validate(args)
  local m = args.gpuSelMethod
  if type(m) ~= "string" or m == "" then
    return "gpuSelMethod: expected best, worst, random or a policy plugin's name"
  end
  if type(args.annotate) ~= "boolean" then return "annotate: expected true or false" end
  return nil
end

function P:init(args)
  self.assigned = {}                 -- pod uid -> GPU ids chosen at Reserve (written at PreBind)
  self.annotate = args.annotate
  local m = args.gpuSelMethod
  if m == "best" then
    self.choose = function(v, req) return view.best_fit_ids(v.free, v.n, req) end
  elseif m == "worst" then
    self.choose = function(v, req) return view.worst_fit_ids(v.free, v.n, req) end
  elseif m == "random" then
    self.choose = function(v, req) return view.random_fit_ids(v.free, v.n, req) end
  else
    local policy = require(SNAKE(m))
    if type(policy) ~= "table" or type(policy.choose_gpus) ~= "function" then
      error("OpenGpuShare: gpuSelMethod " .. m .. ": the plugin " .. SNAKE(m) .. ".lua exports no choose_gpus", 0)
    end
    self.choose = function(v, req) return policy.choose_gpus(v, req) end
  end
  view.set_chooser(self.choose)
  self.no_gpu = ls.unschedulable("node(s) had no GPU")
  self.wrong_model = ls.unschedulable("node(s) didn't have the GPU model the pod asks for")
  self.no_room = ls.unschedulable("node(s) didn't have enough free GPU memory")
  self.no_choice = ls.error("OpenGpuShare: no GPU left on the node for the pod at Reserve")
end

function P:pre_filter()
  view.refresh()
  return nil
end

function P:filter(_, pod, node)
  local req = view.request(pod)
  if req.gpus == 0 then return nil end
  local v = view.node(node)
  if v.n == 0 then return self.no_gpu end
  if not view.accessible(v, req) then return self.wrong_model end
  if not view.fits(v, req) then return self.no_room end
  return nil
end

function P:reserve(_, pod, node_name)
  local req = view.request(pod)
  if req.gpus == 0 then return nil end
  local ni = ls.find_node(node_name)
  if ni == nil then return self.no_choice end
  local ids = self.choose(view.node(ni), req)
  if ids == nil then return self.no_choice end
  self.assigned[pod.uid] = ids
  return nil
end

function P:unreserve(_, pod)
  self.assigned[pod.uid] = nil
end

function P:pre_bind_pre_flight(_, pod)
  if not self.annotate or self.assigned[pod.uid] == nil then return ls.skip end
  return nil
end

function P:pre_bind(_, pod)
  local ids = self.assigned[pod.uid]
  if ids == nil or not self.annotate then return nil end
  local patch = '{"metadata":{"annotations":{"' .. view.INDEX_KEY .. '":"' .. view.format_ids(ids) .. '"}}}'
  local err = ls.patch_object("Pod", ls.str(pod.ns), ls.str(pod.name), patch)
  if err then return ls.error("OpenGpuShare: writing " .. view.INDEX_KEY .. ": " .. tostring(err)) end
  return nil
end

return P
