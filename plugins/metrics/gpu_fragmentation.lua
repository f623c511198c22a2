-- The lab's GPU fragmentation metrics (`luasched compare`, built in on a GPU
-- trace; docs/policy-lab/gpu-sharing.md): the cluster's fragmented GPU milli,
-- the FGD paper's measure (gpu_frag.lua, the one FGD scores with) summed over
-- the GPU nodes, against the trace's typical pods (the TypicalPodSet
-- default/openb that `luasched import openb` writes). Two metrics read it:
--   gpu_fragmented_milli.lua     the fragmented GPU milli;
--   gpu_fragmentation_ratio.lua  its share of the free GPU milli (percent).
-- Both call M.measure, which computes once per sample.
--
-- A node's GPUs: labels alibabacloud.com/gpu-count and gpu-card-model. Its
-- pods hold GPUs in the order they arrived: a pod with the annotation
-- alibabacloud.com/gpu-index holds those GPUs; one without it (the lab's
-- profiles do not write it) is replayed with the policy's GPU choice, as
-- gpu_share_view replays it for the plugins: OpenGpuShare's gpuSelMethod
-- (cluster.pluginArgs), "best" by default, "worst", "random" (the draw fixed
-- by the pod's uid) or "FGD" (the GPU whose share fragments the node least,
-- first on ties of FGD's integer score). Whole GPUs go to the first fully
-- free ones by index under every method. Another chooser (a policy of your
-- own) is replayed as "best".
local frag = require("gpu_frag")

local M = {}

local MILLI = 1000
local TYPICAL = { "typicalpodsets.v1alpha1.luasched.io", "default", "openb" }

local function number(v) return tonumber(v) or 0 end

local function exclusive(free, n, gpus)
  local ids = {}
  for i = 1, n do
    if #ids == gpus then break end
    if free[i] == MILLI then ids[#ids + 1] = i end
  end
  return #ids == gpus and ids or nil
end

-- gpu_share_view's uid_draw: a number fixed by the pod's uid.
local function uid_draw(uid)
  local h = 0
  for i = 1, #uid do h = (h * 131 + uid:byte(i)) % 2147483647 end
  return h
end

local typical   -- gpu_frag.typical's form, read once

local function fgd_score(before, after)
  return math.floor(1 / (1 + math.exp(-((before - after) / 1000))) * 100)
end

-- The GPU of a share under each method: free milli per GPU, the node's
-- state (n, cpu left, model) and the pod.
local SHARE = {
  best = function(free, n, _, milli)
    local best
    for i = 1, n do
      if free[i] >= milli and (best == nil or free[i] < free[best]) then best = i end
    end
    return best
  end,
  worst = function(free, n, _, milli)
    local best
    for i = 1, n do
      if free[i] >= milli and (best == nil or free[i] > free[best]) then best = i end
    end
    return best
  end,
  random = function(free, n, _, milli, pod)
    local count = 0
    for i = 1, n do if free[i] >= milli then count = count + 1 end end
    if count == 0 then return nil end
    local pick = uid_draw(pod.uid) % count
    for i = 1, n do
      if free[i] >= milli then
        if pick == 0 then return i end
        pick = pick - 1
      end
    end
  end,
  FGD = function(free, n, node, milli, pod)
    local before = frag.fragmentation(typical, free, n, node.cpu_left, node.model)
    local cpu_after = node.cpu_left - (tonumber(pod.requests.cpu) or 0)
    local best, score
    for i = 1, n do
      if free[i] >= milli then
        local keep = free[i]
        free[i] = keep - milli
        local s = fgd_score(before, frag.fragmentation(typical, free, n, cpu_after, node.model))
        free[i] = keep
        if best == nil or s > score then best, score = i, s end
      end
    end
    return best
  end,
}

local function indices(text, n)
  local ids = {}
  for d in tostring(text):gmatch("[^-]+") do
    local i = tonumber(d)
    if not i or i < 0 or i >= n then return nil end
    ids[#ids + 1] = i + 1
  end
  return #ids > 0 and ids or nil
end

--- The free milli of each GPU of a node of the view, its GPU count and
--- its cpu left, the pods replayed with the GPU choice `method`.
function M.node_gpus(node, method)
  local n = number(node.labels["alibabacloud.com/gpu-count"])
  local free = {}
  for i = 1, n do free[i] = MILLI end
  local state = { cpu_left = number(node.allocatable.cpu),
                  model = node.labels["alibabacloud.com/gpu-card-model"] or false }
  local choose = SHARE[method] or SHARE.best
  for _, pod in ipairs(node.pods) do
    local a = pod.annotations
    local gpus = number(a["alibabacloud.com/gpu-count"])
    local milli = gpus > 0 and number(a["alibabacloud.com/gpu-milli"]) or 0
    if milli > 0 then
      local ids = a["alibabacloud.com/gpu-index"] and indices(a["alibabacloud.com/gpu-index"], n)
      if not ids then
        if gpus == 1 and milli < MILLI then
          local i = choose(free, n, state, milli, pod)
          ids = i and { i } or nil
        else
          ids = exclusive(free, n, gpus)
        end
      end
      for _, i in ipairs(ids or {}) do free[i] = free[i] - milli end
    end
    state.cpu_left = state.cpu_left - number(pod.requests.cpu)
  end
  return free, n, state.cpu_left
end

local last_sample, last_frag, last_free
-- Per node name: its fragmentation and free milli at its generation (a
-- node's generation changes whenever its pods or resources do).
local cache = {}

--- The cluster's fragmented GPU milli and free GPU milli at this sample.
function M.measure(cluster)
  if last_sample == cluster.sample then return last_frag, last_free end
  if typical == nil then
    local set = cluster.object(TYPICAL[1], TYPICAL[2], TYPICAL[3])
    if set == nil then
      error("no typical pods: the trace has no TypicalPodSet default/openb (luasched import openb writes it)", 0)
    end
    typical = frag.typical(set.spec and set.spec.pods or {}, "TypicalPodSet default/openb",
      function(name) return name end)
  end
  local share = cluster.pluginArgs("OpenGpuShare")
  local method = share and share.gpuSelMethod or "best"
  local total, free_total = 0, 0
  for _, node in ipairs(cluster.nodes) do
    local c = cache[node.name]
    if c == nil or c.generation ~= node.generation or c.method ~= method then
      local free, n, cpu_left = M.node_gpus(node, method)
      c = { generation = node.generation, method = method, frag = 0, free = 0 }
      if n > 0 then
        c.frag = frag.fragmentation(typical, free, n, cpu_left, node.labels["alibabacloud.com/gpu-card-model"] or false)
        for i = 1, n do c.free = c.free + free[i] end
      end
      cache[node.name] = c
    end
    total, free_total = total + c.frag, free_total + c.free
  end
  last_sample, last_frag, last_free = cluster.sample, total, free_total
  return total, free_total
end

return M
