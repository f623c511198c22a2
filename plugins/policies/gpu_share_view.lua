-- gpu_share_view: the GPU-sharing view that OpenGpuShare and the GPU policies
-- (Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD) read, as a
-- module on the plugin path (`require("gpu_share_view")`; each plugin gets
-- its own copy). It mirrors the accounting of the FGD paper's simulator
-- (hkust-adsl/kubernetes-scheduler-simulator, open_gpu_share.go and
-- pkg/type/resource.go; facts, not code).
--
-- The form (written by `luasched import openb`, readable by a device plugin
-- of the open-gpu-share family):
-- * node: label `alibabacloud.com/gpu-count` (GPUs), label
--   `alibabacloud.com/gpu-card-model` (the model); allocatable
--   `alibabacloud.com/gpu-milli` (1000 per GPU, for NodeResourcesFit);
-- * pod: annotations `alibabacloud.com/gpu-count` (GPUs), `alibabacloud.com/
--   gpu-milli` (milli per GPU: below 1000 a share of one GPU),
--   `alibabacloud.com/gpu-card-model` (allowed models, "V100M16|V100M32");
--   once placed, `alibabacloud.com/gpu-index` ("3", or "0-1-2-3" for whole
--   GPUs), written by OpenGpuShare at PreBind.
--
-- A node's view (free milli per GPU, GPU model, cpu left) is rebuilt only
-- when its NodeInfo changed (its generation, unique process-wide), by
-- replaying the pods on it in the order they were placed (their arrival
-- order, `seq`; NodeInfo's list moves an updated pod to its end; only the
-- pods placed since the last view, when the others are unchanged): a pod's gpu-index annotation says
-- which GPUs it holds; a GPU pod without one takes them by the plugin's GPU
-- choice (M.set_chooser: the policy's own, as OpenGpuShare's gpuSelMethod
-- names it; best fit by default) on the state the pods before it left. The
-- choices depend only on that state, so the replay gives every plugin the
-- GPUs OpenGpuShare chose at Reserve. Pod requests are read once per pod
-- (by uid).
local ls = require("luasched")

local M = {}

local tonumber, floor = tonumber, math.floor
local MILLI = 1000
M.MILLI = MILLI

local K_COUNT = ls.intern("alibabacloud.com/gpu-count")
local K_MILLI = ls.intern("alibabacloud.com/gpu-milli")
local K_MODEL = ls.intern("alibabacloud.com/gpu-card-model")
local K_INDEX = ls.intern("alibabacloud.com/gpu-index")
M.INDEX_KEY = "alibabacloud.com/gpu-index"

local function number_of(labels, key)
  local v = ls.label(labels, key)
  if v == 0 then return 0 end
  return tonumber(ls.str(v)) or 0
end

-- ---- pod requests -------------------------------------------------------------------

local models_of = {}     -- spec id -> { [model id] = true }
local shape_ids = {}     -- "cpu/milli/gpus/spec" -> small integer
local n_shapes = 0

local function models(spec)
  local m = models_of[spec]
  if m == nil then
    m = {}
    for name in ls.str(spec):gmatch("[^|]+") do m[ls.intern(name)] = true end
    models_of[spec] = m
  end
  return m
end

-- A number in [0, 2^31 - 1) fixed by the pod's uid (a polynomial string hash
-- modulo the prime 2^31 - 1, exact in doubles): the "random" GPU choice draws
-- with it, so that replaying a node's pods repeats the choice.
local function uid_draw(uid)
  local h = 0
  for i = 1, #uid do h = (h * 131 + uid:byte(i)) % 2147483647 end
  return h
end

--- A pod's GPU request: { cpu, gpus, milli (per GPU), models (set of model
--- ids, nil when unconstrained), share (a fraction of one GPU), shape (an id
--- shared by pods with the same cpu and GPU request), draw (a number fixed by
--- the uid, for the random GPU choice) }. Cached by uid.
local requests = {}
function M.request(pod)
  local r = requests[pod.uid]
  if r then return r end
  local gpus = number_of(pod.annotations, K_COUNT)
  local milli = gpus > 0 and number_of(pod.annotations, K_MILLI) or 0
  if milli <= 0 then gpus, milli = 0, 0 end
  local spec = ls.label(pod.annotations, K_MODEL)
  local cpu = tonumber(pod.requests.milli_cpu)
  local key = cpu .. "/" .. milli .. "/" .. gpus .. "/" .. spec
  local shape = shape_ids[key]
  if not shape then
    n_shapes = n_shapes + 1
    shape = n_shapes
    shape_ids[key] = shape
  end
  r = { cpu = cpu, gpus = gpus, milli = milli, models = spec ~= 0 and models(spec) or nil,
        share = gpus == 1 and milli < MILLI, shape = shape, draw = gpus > 0 and uid_draw(ls.str(pod.uid)) or 0 }
  requests[pod.uid] = r
  return r
end

-- ---- GPU indices --------------------------------------------------------------------

--- "0-2-3" -> { 1, 3, 4 } (Lua indices); nil when malformed or out of range.
function M.parse_ids(text, n)
  local ids = {}
  for d in text:gmatch("[^-]+") do
    local i = tonumber(d)
    if not i or i < 0 or i >= n or i ~= floor(i) then return nil end
    ids[#ids + 1] = i + 1
  end
  return #ids > 0 and ids or nil
end

--- { 1, 3, 4 } -> "0-2-3" (the annotation's form).
function M.format_ids(ids)
  local parts = {}
  for k, i in ipairs(ids) do parts[k] = tostring(i - 1) end
  return table.concat(parts, "-")
end

--- Best fit for a share (the GPU with the least free milli that holds it,
--- lowest index first), open_gpu_share.go's allocateGpuIdBasedOnBestFit;
--- whole GPUs: the first free ones by index (AllocateExclusiveGpuId).
function M.best_fit_ids(free, n, req)
  if req.share then
    local best
    for i = 1, n do
      local f = free[i]
      if f >= req.milli and (best == nil or f < free[best]) then best = i end
    end
    return best and { best } or nil
  end
  return M.exclusive_ids(free, n, req)
end

--- Worst fit for a share (the most free milli); whole GPUs as best fit.
function M.worst_fit_ids(free, n, req)
  if req.share then
    local best
    for i = 1, n do
      local f = free[i]
      if f >= req.milli and (best == nil or f > free[best]) then best = i end
    end
    return best and { best } or nil
  end
  return M.exclusive_ids(free, n, req)
end

--- Random fit for a share: one of the GPUs that hold it, each as likely
--- (allocateGpuIdBasedOnRandomFit), drawn with the pod's `draw` so that a
--- replay repeats it; whole GPUs as best fit.
function M.random_fit_ids(free, n, req)
  if req.share then
    local count = 0
    for i = 1, n do if free[i] >= req.milli then count = count + 1 end end
    if count == 0 then return nil end
    local pick = req.draw % count
    for i = 1, n do
      if free[i] >= req.milli then
        if pick == 0 then return { i } end
        pick = pick - 1
      end
    end
  end
  return M.exclusive_ids(free, n, req)
end

function M.exclusive_ids(free, n, req)
  local ids, want = {}, req.gpus
  for i = 1, n do
    if want == 0 then break end
    if free[i] == MILLI then
      ids[#ids + 1] = i
      want = want - 1
    end
  end
  return want == 0 and ids or nil
end

-- ---- node views ---------------------------------------------------------------------

local views = {}         -- snapshot position -> view
local stale = {}         -- snapshot position -> the view before its node changed (build continues it)
local chooser            -- the GPU choice the views replay (M.set_chooser)

--- Sets how GPU pods without a gpu-index annotation take their GPUs when a
--- view is rebuilt: `choose(view, req)` -> ids, called on the node as it was
--- when the pod was placed (the pods before it on the node). Default: best
--- fit, OpenGpuShare's default gpuSelMethod.
function M.set_chooser(choose)
  chooser = choose
  for k in pairs(views) do views[k] = nil end
  for k in pairs(stale) do stale[k] = nil end
end

local function take(free, ids, milli)
  for _, i in ipairs(ids) do free[i] = free[i] - milli end
end

local function new_view(ni, n, free)
  local total = 0
  for i = 1, n do total = total + free[i] end
  return {
    gen = tonumber(ni.generation), n = n, free = free, free_total = total,
    model = ls.label(ni.node.labels, K_MODEL),
    cpu_left = tonumber(ni.allocatable.milli_cpu - ni.requested.milli_cpu),
    cpu_capacity = tonumber(ni.allocatable.milli_cpu),
    memo = {},   -- per pod shape: what a policy computed for this state
  }
end

-- The node's pods in the order they were placed: their arrival order (the
-- pod's `seq`, kept across updates). NodeInfo's list is not that order once
-- a bound pod is updated (the cache removes it and adds it at the end), and
-- a replay in another order may give other GPUs than Reserve chose.
local order, order_seq = {}, {}
local function by_seq(a, b) return order_seq[a] < order_seq[b] end

local function placed_order(ni)
  local n, sorted, last = ni.num_pods, true, -1
  for k = 0, n - 1 do
    local s = tonumber(ni.pods[k].seq)
    order[k + 1], order_seq[k] = k, s
    if s < last then sorted = false end
    last = s
  end
  for k = n + 1, #order do order[k] = nil end
  if not sorted then table.sort(order, by_seq) end
  return order, n
end

-- The replay of a node's pods, kept in its view so that the next view of the
-- node continues it: `uids` the pods replayed (their uid ids, in order),
-- `marks` their gpu-index annotations (the one input of the replay not
-- cached by uid), `replay_cpu` the cpu the last of them left. A node that gained pods at the
-- end of its placed order (a binding) replays only those; any other change (a pod
-- gone, another model or size) replays from the start. The result is the
-- same either way: a choice depends only on the state the pods before it
-- left.
local function continues(old, ni, seq_order, num, n, model, cpu_capacity)
  if old == nil or old.n ~= n or old.model ~= model or old.cpu_capacity ~= cpu_capacity then return false end
  local uids, marks, k = old.uids, old.marks, old.replayed
  if k > num then return false end
  for i = 1, k do
    local p = ni.pods[seq_order[i]]
    if p.uid ~= uids[i] or ls.label(p.annotations, K_INDEX) ~= marks[i] then return false end
  end
  return true
end

-- Replays the node's pods in the order they were placed: a pod's gpu-index annotation says
-- which GPUs it holds; one without it takes them by the chooser, on the
-- state the pods before it left (free milli and cpu). `old`, the node's
-- previous view, when its replay can be continued.
local function build(ni, old)
  local n = number_of(ni.node.labels, K_COUNT)
  local model = ls.label(ni.node.labels, K_MODEL)
  local cpu_capacity = tonumber(ni.allocatable.milli_cpu)
  local free, uids, marks, first, cpu_left = {}, {}, {}, 0, cpu_capacity
  local seq_order, num = placed_order(ni)
  if continues(old, ni, seq_order, num, n, model, cpu_capacity) then
    for i = 1, n do free[i] = old.free[i] end
    for i = 1, old.replayed do uids[i], marks[i] = old.uids[i], old.marks[i] end
    first, cpu_left = old.replayed, old.replay_cpu
  else
    for i = 1, n do free[i] = MILLI end
  end
  local step = new_view(ni, n, free)
  step.free_total = n * MILLI   -- as the replay from the start had it: its total is never updated
  step.cpu_left = cpu_left
  for j = first + 1, num do
    local p = ni.pods[seq_order[j]]
    local r = M.request(p)
    local idx = ls.label(p.annotations, K_INDEX)
    if r.gpus > 0 then
      local ids = idx ~= 0 and M.parse_ids(ls.str(idx), n)
      if not ids then
        step.memo = {}
        ids = chooser and chooser(step, r) or M.best_fit_ids(free, n, r)
      end
      if ids then take(free, ids, r.milli) end
    end
    step.cpu_left = step.cpu_left - r.cpu
    uids[j], marks[j] = p.uid, idx
  end
  local v = new_view(ni, n, free)
  v.uids, v.marks, v.replayed, v.replay_cpu = uids, marks, num, step.cpu_left
  local most, whole = 0, 0
  for i = 1, n do
    local f = free[i]
    if f > most then most = f end
    if f >= MILLI then whole = whole + 1 end
  end
  v.max_free, v.whole_free = most, whole   -- M.fits without a loop per node
  return v
end

-- Per cycle, M.refresh drops the views of the nodes the snapshot reports
-- changed (ls.refresh_nodes), so M.node is a table lookup: reading a node's
-- 64-bit generation on every call would box it.
local tracked = { gen = {}, num = 0 }
local refreshed = false

local function invalidate(entry, j, _, g)
  entry.gen[j] = g
  if views[j] ~= nil then stale[j] = views[j] end
  views[j] = nil
end

local function drop(entry, j)
  entry.gen[j] = nil
  views[j] = nil
  stale[j] = nil
end

--- Brings the views up to date with the cycle's snapshot (call it once per
--- cycle: OpenGpuShare at PreFilter, a policy at PreScore).
function M.refresh()
  local nodes, num = ls.all_nodes()
  ls.refresh_nodes(tracked, nodes, num, invalidate, drop)
  refreshed = true
end

--- The node's GPU view (read-only for callers, but `memo` is theirs).
function M.node(ni)
  local v = views[ni.index]
  if v == nil or (not refreshed and v.gen ~= tonumber(ni.generation)) then
    local j = ni.index
    v = build(ni, v or stale[j])
    views[j] = v
    stale[j] = nil
  end
  return v
end

--- The pod may use the node's GPU model (no constraint, or the model listed).
function M.accessible(v, req)
  return req.models == nil or (v.model ~= 0 and req.models[v.model] == true)
end

--- The node's GPUs can hold the request (CanNodeHostPodOnGpuMemory).
function M.fits(v, req)
  local want = req.gpus
  if want == 0 then return true end
  -- A share or one GPU: the roomiest GPU; whole GPUs: the fully free ones
  -- (a loop over the GPUs here, inside the per-node filter loop, made LuaJIT
  -- box the node per call).
  if want == 1 then return v.max_free >= req.milli end
  if req.milli == MILLI then return v.whole_free >= want end
  local free = v.free
  for i = 1, v.n do
    if free[i] >= req.milli then
      want = want - 1
      if want == 0 then return true end
    end
  end
  return false
end

--- GPUs fully free on the node.
function M.fully_free(v)
  local c = 0
  for i = 1, v.n do if v.free[i] == MILLI then c = c + 1 end end
  return c
end

-- ---- the simulator's tie-break ----------------------------------------------------

local K_RANK = ls.intern("luasched.io/openb-rank")
local rank_of = {}       -- node name id -> rank (the label's number, else false)

local function rank(ni)
  local name = ni.node.name
  local r = rank_of[name]
  if r == nil then
    local v = ls.label(ni.node.labels, K_RANK)
    r = v ~= 0 and tonumber(ls.str(v)) or false
    rank_of[name] = r
  end
  return r
end

-- a before b in the simulator's order: its node names are "%04d-" + name, the
-- number the node's rank (luasched import openb writes it as the label
-- luasched.io/openb-rank); a node without the label comes after, by name.
local function before(a, b)
  local ra, rb = rank(a), rank(b)
  if ra and rb then return ra < rb end
  if ra or rb then return ra ~= false end
  return ls.str(a.node.name) < ls.str(b.node.name)
end

--- The FGD paper's simulator breaks ties among the best-scored nodes by the
--- smallest node name, not at random (its vendored selectHost, "for
--- reproducibility"). For a policy that is the profile's only score, this
--- makes the winner its only best node: +1 for it when below 100, else the
--- other 100s become 99 (the rest keep their scores). Call it last in
--- normalize_score; nodes[i] is the NodeInfo of scores[i].
function M.break_ties(scores, nodes, n)
  if n < 2 then return end
  local best, top = nil, -math.huge
  for i = 0, n - 1 do
    local s = tonumber(scores[i])
    if s > top then best, top = i, s
    elseif s == top and before(nodes[i], nodes[best]) then best = i end
  end
  if top < ls.MAX_NODE_SCORE then
    scores[best] = top + 1
    return
  end
  for i = 0, n - 1 do
    if i ~= best and tonumber(scores[i]) == top then scores[i] = top - 1 end
  end
end

--- Checks a policy's tieBreak argument.
function M.check_tie_break(v)
  if v ~= "random" and v ~= "name" then return "tieBreak: expected random or name, got " .. tostring(v) end
  return nil
end

--- GPUs fully free on the node.
function M.fully_free(v)
  local c = 0
  for i = 1, v.n do if v.free[i] == MILLI then c = c + 1 end end
  return c
end

return M
