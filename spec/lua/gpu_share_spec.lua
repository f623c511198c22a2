-- OpenGpuShare and the FGD paper's six policies (hkust-adsl/kubernetes-
-- scheduler-simulator: open_gpu_share.go, *_score.go, utils/frag.go), worked
-- by hand on one state:
--   n1: 32 cpu, 2 x V100M16; on it a pod of 2 cpu holding 600 milli of GPU 0
--       ("alibabacloud.com/gpu-index": "0") -> free milli [400, 1000], 1400 in
--       all, cpu left 30000.
--   n2: 16 cpu, no GPU.   n3: 16 cpu, 2 x V100M16, empty.
-- Each expectation says how it follows from the formula in the plugin's header.
local T = require("luasched.testing")
local ls = require("luasched")

local GPU_MILLI, COUNT, MILLI, MODEL, INDEX = "alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count",
  "alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-card-model", "alibabacloud.com/gpu-index"

local function gpu_node(name, cpu, gpus, model)
  local labels, alloc = {}, { cpu = cpu, memory = "64Gi" }
  if gpus > 0 then
    labels[COUNT] = tostring(gpus)
    labels[MODEL] = model
    alloc[GPU_MILLI] = tostring(gpus * 1000)
  end
  return { name = name, labels = labels, allocatable = alloc }
end

local function gpu_pod(name, cpu, gpus, milli, extra)
  extra = extra or {}
  local ann, req = {}, { cpu = cpu }
  if gpus > 0 then
    ann[COUNT], ann[MILLI] = tostring(gpus), tostring(milli)
    req[GPU_MILLI] = tostring(gpus * milli)
  end
  if extra.model then ann[MODEL] = extra.model end
  if extra.index then ann[INDEX] = extra.index end
  return T.pod { name = name, requests = req, annotations = ann, node_name = extra.node }
end

local cluster
before_each(function()
  cluster = T.cluster {
    nodes = { gpu_node("n1", "32", 2, "V100M16"), gpu_node("n2", "16", 0), gpu_node("n3", "16", 2, "V100M16") },
    pods = { gpu_pod("held", "2", 1, 600, { node = "n1", index = "0" }) },
  }
end)
after_each(function() cluster:close() end)

describe("OpenGpuShare", function()
  it("filters by GPUs, model and free milli per GPU", function()
    local p = T.plugin("OpenGpuShare")
    -- GPU 1 has 1000
    assert.are.equal(ls.SUCCESS, T.filter(p, cluster, gpu_pod("share", "1", 1, 500), "n1").code)
    assert.are.equal("node(s) had no GPU", T.filter(p, cluster, gpu_pod("share", "1", 1, 500), "n2").message)
    assert.are.equal("node(s) didn't have enough free GPU memory",                    -- one GPU fully free
      T.filter(p, cluster, gpu_pod("two", "1", 2, 1000), "n1").message)
    assert.are.equal(ls.SUCCESS, T.filter(p, cluster, gpu_pod("two", "1", 2, 1000), "n3").code)
    assert.are.equal("node(s) didn't have the GPU model the pod asks for",
      T.filter(p, cluster, gpu_pod("t4", "1", 1, 300, { model = "T4" }), "n1").message)
    local v100 = gpu_pod("v100", "1", 1, 300, { model = "V100M32|V100M16" })
    assert.are.equal(ls.SUCCESS, T.filter(p, cluster, v100, "n1").code)
    assert.are.equal(ls.SUCCESS, T.filter(p, cluster, gpu_pod("cpu", "1", 0, 0), "n2").code)
  end)

  it("reserves the GPU best fit (least free milli that holds the share) or worst fit picks", function()
    local best = T.plugin("OpenGpuShare")
    local small, half, whole = gpu_pod("small", "1", 1, 300), gpu_pod("half", "1", 1, 500), gpu_pod("w", "1", 1, 1000)
    T.node_hook(best, "reserve", cluster, small, "n1")
    assert.are.same({ 1 }, best.assigned[small.uid])        -- GPU 0: 400 >= 300 and least
    T.node_hook(best, "reserve", cluster, half, "n1")
    assert.are.same({ 2 }, best.assigned[half.uid])         -- GPU 0 has 400 < 500
    T.node_hook(best, "reserve", cluster, whole, "n3")
    assert.are.same({ 1 }, best.assigned[whole.uid])        -- the first fully free GPU
    T.node_hook(best, "unreserve", cluster, small, "n1")
    assert.is_nil(best.assigned[small.uid])
    local worst = T.plugin("OpenGpuShare", { gpuSelMethod = "worst" })
    T.node_hook(worst, "reserve", cluster, small, "n1")
    assert.are.same({ 2 }, worst.assigned[small.uid])       -- GPU 1: 1000 free
  end)

  it("reserves a random GPU among those that hold the share, the same one on every replay", function()
    local rnd = T.plugin("OpenGpuShare", { gpuSelMethod = "random" })
    -- n3: both GPUs hold 300; the pick is the pod's uid draw (a hash of the uid) modulo 2
    local seen = {}
    for i = 1, 16 do
      local pod = gpu_pod("r" .. i, "1", 1, 300)
      T.node_hook(rnd, "reserve", cluster, pod, "n3")
      local first = rnd.assigned[pod.uid][1]
      T.node_hook(rnd, "reserve", cluster, pod, "n3")
      assert.are.equal(first, rnd.assigned[pod.uid][1])      -- the same pod draws the same GPU
      seen[first] = true
    end
    assert.is_true(seen[1] and seen[2])                       -- both GPUs are drawn over 16 pods
    -- n1: only GPU 1 holds 500 (GPU 0 has 400): no choice to draw
    local half = gpu_pod("half", "1", 1, 500)
    T.node_hook(rnd, "reserve", cluster, half, "n1")
    assert.are.same({ 2 }, rnd.assigned[half.uid])
    -- whole GPUs: the first fully free ones, as best fit
    local two = gpu_pod("two", "1", 2, 1000)
    T.node_hook(rnd, "reserve", cluster, two, "n3")
    assert.are.same({ 1, 2 }, rnd.assigned[two.uid])
  end)
end)

describe("GpuPacking", function()
  it("prefers GPUs in use, then used nodes, then idle ones", function()
    local p = T.plugin("GpuPacking")
    -- share 300 on n1: GPU 0 (400) takes it: 100 - (400 * 100 / 1000) / 10 = 96
    assert.are.equal(96, T.score(p, cluster, gpu_pod("a", "1", 1, 300), "n1"))
    -- share 500 on n1: only GPU 1, fully free: 50 - 1 = 49
    assert.are.equal(49, T.score(p, cluster, gpu_pod("b", "1", 1, 500), "n1"))
    -- n3 all free: 100 / 3 - 2 = 31 (above the floor of 2)
    assert.are.equal(31, T.score(p, cluster, gpu_pod("c", "1", 1, 500), "n3"))
    assert.are.equal(0, T.score(p, cluster, gpu_pod("d", "1", 0, 0), "n1"))
  end)
end)

describe("GpuClustering", function()
  it("groups pods of the same GPU kind", function()
    local p = T.plugin("GpuClustering")
    -- n1: base 25 * (8000 - 1400) / 8000 = 20 (integer); its only kind is share-gpu
    assert.are.equal(95, T.score(p, cluster, gpu_pod("a", "1", 1, 300), "n1"))   -- + 75
    assert.are.equal(20, T.score(p, cluster, gpu_pod("b", "1", 1, 1000), "n1"))  -- 1-gpu: others only
    -- n3: base 25 * 6000 / 8000 = 18; no GPU pod: + 25
    assert.are.equal(43, T.score(p, cluster, gpu_pod("c", "1", 1, 1000), "n3"))
    assert.are.equal(0, T.score(p, cluster, gpu_pod("d", "1", 0, 0), "n3"))
  end)
end)

describe("BestFit", function()
  it("scores the cpu and GPU left after the pod", function()
    -- n1: 1 - (0.5 x 29000 / 128000 + 0.5 x 900 / 8000) = 0.83046875 -> 83
    assert.are.equal(83, T.score(T.plugin("BestFit"), cluster, gpu_pod("a", "1", 1, 500), "n1"))
    -- n3: 1 - (0.5 x 15000 / 128000 + 0.5 x 1500 / 8000) = 0.84765625 -> 84
    assert.are.equal(84, T.score(T.plugin("BestFit"), cluster, gpu_pod("a", "1", 1, 500), "n3"))
  end)
end)

describe("DotProduct", function()
  it("merges the GPUs into one dimension by default (the paper's DotProd)", function()
    local p = T.plugin("DotProduct")
    -- n1: free (30000 cpu, 1400 milli); pod (30000, 500):
    -- 1 - ((30000/128000)^2 + (1400/8000)(500/8000)) / 2 = 1 - 0.065869140625 / 2 = 0.96706... -> 96
    local big = gpu_pod("big", "30", 1, 500)
    assert.are.equal(96, T.score(p, cluster, big, "n1"))
    -- n3: 16000 cpu left < 30000: no candidate -> 0
    assert.are.equal(0, T.score(p, cluster, big, "n3"))
  end)

  it("with dimExtMethod share, takes the candidate with the smallest dot product and its GPU", function()
    local p = T.plugin("DotProduct", { dimExtMethod = "share" })
    -- GPU 0: 1 - ((30000/128000)(1000/128000) + (400/8000)(300/8000)) / 2 = 0.99814697...
    -- idle GPUs: 1 - ((30000/128000)(1000/128000) + (1000/8000)(300/8000)) / 2 = 0.99674...
    local pod = gpu_pod("a", "1", 1, 300)
    assert.are.equal(99, T.score(p, cluster, pod, "n1"))
    local view = p.view
    assert.are.same({ 1 }, p.choose_gpus(view.node(cluster:node_info("n1")), view.request(pod)))
  end)

  it("refuses a dimExtMethod it does not build", function()
    assert.has_error(function() T.plugin("DotProduct", { dimExtMethod = "extend" }) end)
  end)
end)

describe("FGD", function()
  -- Typical pods: half are 1 cpu + 500 milli of a GPU, half 1 cpu without GPU.
  -- n1 before: t1 can use GPU 1 (>= 500) and cpu -> its fragment is GPU 0's 400:
  -- 0.5 x 400; t2 asks for no GPU -> all 1400: 0.5 x 1400. F = 900.
  local TYPICAL = { { milliCpu = 1000, milliGpu = 500, gpus = 1, weight = 0.5 },
                    { milliCpu = 1000, milliGpu = 0, gpus = 0, weight = 0.5 } }
  local function fgd() return T.plugin("FGD", { typicalPods = TYPICAL }) end

  it("measures fragmentation over the typical pods", function()
    local p = fgd()
    assert.are.equal(900, p.fragmentation({ 400, 1000 }, 2, 30000, ls.intern("V100M16")))
    -- t1 cannot be hosted (no GPU >= 500): all 400 counts for both
    assert.are.equal(400, p.fragmentation({ 400, 0 }, 2, 29000, ls.intern("V100M16")))
  end)

  it("scores sigmoid((F before - F after) / 1000) x 100 and picks the share's GPU", function()
    local p = fgd()
    -- share 300: GPU 0 -> [100, 1000]: 0.5 x 100 + 0.5 x 1100 = 600, delta 300,
    -- sigmoid(0.3) = 0.5744 -> 57; GPU 1 -> [400, 700]: 200 + 550 = 750, delta 150 -> 53.
    local share = gpu_pod("a", "1", 1, 300)
    assert.are.equal(57, T.score(p, cluster, share, "n1"))
    local view = p.view
    assert.are.same({ 1 }, p.choose_gpus(view.node(cluster:node_info("n1")), view.request(share)))
    -- one whole GPU: takes GPU 1 -> [400, 0]: 200 + 200 = 400, delta 500, sigmoid(0.5) = 0.6225 -> 62
    assert.are.equal(62, T.score(p, cluster, gpu_pod("b", "1", 1, 1000), "n1"))
    -- a cpu pod leaving 500 cpu: t1 lacks cpu -> all 1400 for both: delta -500 -> 37
    assert.are.equal(37, T.score(p, cluster, gpu_pod("c", "29500m", 0, 0), "n1"))
  end)
end)

describe("RandomScore", function()
  it("gives 100 to the one node PreScore drew with the scheduler's generator, 0 to the others", function()
    local p = T.plugin("RandomScore")
    local r = T.cycle(p, cluster, gpu_pod("a", "1", 0, 0))   -- the kit runs the framework's own handle
    local hundreds, zeros = 0, 0
    for _, node in ipairs({ "n1", "n2", "n3" }) do
      if r.scores[node] == 100 then hundreds = hundreds + 1 elseif r.scores[node] == 0 then zeros = zeros + 1 end
    end
    assert.are.same({ 1, 2 }, { hundreds, zeros })
  end)
end)

describe("gpu_share_view", function()
  -- n3: 16 cpu, 2 x V100M16, empty. Pods bound to it one at a time, without a
  -- gpu-index annotation, so the view's GPU choice (here best fit, counted)
  -- places them: a (1 cpu, 300 milli): both GPUs have 1000 -> GPU 0 (lowest
  -- index on ties) -> [700, 1000]; b (2 cpu, 500): GPU 0's 700 holds it and is
  -- the least -> [200, 1000], cpu left 16000 - 1000 - 2000 = 13000.
  it("continues a node's replay when it only gained pods, and gives what a replay from the start gives", function()
    local view = T.plugin("FGD", { typicalPods = { { milliCpu = 0, milliGpu = 0, gpus = 0, weight = 1 } } }).view
    local calls = 0
    local function choose(v, req)
      calls = calls + 1
      return view.best_fit_ids(v.free, v.n, req)
    end
    view.set_chooser(choose)
    local function current()
      cluster:attach(gpu_pod("probe", "1", 0, 0))
      view.refresh()
      return view.node(cluster:node_info("n3"))
    end
    assert.are.same({ 1000, 1000 }, current().free)
    cluster:add_pod(gpu_pod("a", "1", 1, 300, { node = "n3" }))
    assert.are.same({ 700, 1000 }, current().free)
    assert.are.equal(1, calls)
    cluster:add_pod(gpu_pod("b", "2", 1, 500, { node = "n3" }))
    local continued = current()
    assert.are.equal(2, calls)                   -- b alone was replayed
    assert.are.same({ 200, 1000 }, continued.free)
    assert.are.equal(13000, continued.replay_cpu)
    assert.are.equal(1000, continued.max_free)   -- fits: a share up to 1000, one whole GPU
    assert.are.equal(1, continued.whole_free)
    view.set_chooser(choose)                     -- forgets every view: a replay from the start
    local fresh = current()
    assert.are.equal(4, calls)                   -- a and b
    assert.are.same(continued.free, fresh.free)
    assert.are.equal(continued.replay_cpu, fresh.replay_cpu)
  end)
end)

describe("tieBreak: name (the simulator's selectHost: the smallest node name)", function()
  -- m1 (rank 2, 16 cpu), m2 (rank 0, 32 cpu), m3 (rank 1, 16 cpu), no GPU; the simulator's
  -- names are "0002-m1", "0000-m2", "0001-m3".
  local tied
  before_each(function()
    local function ranked(name, cpu, rank)
      local n = gpu_node(name, cpu, 0)
      n.labels["luasched.io/openb-rank"] = rank
      return n
    end
    tied = T.cluster { nodes = { ranked("m1", "16", "0002"), ranked("m2", "32", "0000"), ranked("m3", "16", "0001") } }
  end)
  after_each(function() tied:close() end)

  it("GpuPacking: a CPU-only pod scores 0 everywhere; the first in rank gets 1", function()
    local r = T.cycle(T.plugin("GpuPacking", { tieBreak = "name" }), tied, gpu_pod("cpu", "1", 0, 0))
    assert.are.same({ m1 = 0, m2 = 1, m3 = 0 }, r.scores)
    assert.are.equal("m2", r.node)
  end)

  it("BestFit: after min-max, the 100s but the first in rank become 99", function()
    -- raw: m1, m3: trunc((1 - 0.5 x 15000 / 128000) x 100) = 94; m2: trunc((1 - 0.5 x 31000 / 128000) x 100) = 87
    -- normalized: m1, m3 (94 - 87) x 100 / 7 = 100, m2 0; m3 (rank 1) before m1 (rank 2)
    local r = T.cycle(T.plugin("BestFit", { tieBreak = "name" }), tied, gpu_pod("cpu", "1", 0, 0))
    assert.are.same({ m1 = 99, m2 = 0, m3 = 100 }, r.scores)
    assert.are.equal("m3", r.node)
  end)

  it("random (the default) leaves the scores as they are", function()
    local r = T.cycle(T.plugin("GpuPacking"), tied, gpu_pod("cpu", "1", 0, 0))
    assert.are.same({ m1 = 0, m2 = 0, m3 = 0 }, r.scores)
  end)

  it("refuses another tieBreak", function()
    assert.has_error(function() T.plugin("FGD", { tieBreak = "first" }) end)
  end)
end)
