-- The FGD paper's fragmentation measure (plugins/policies/gpu_frag.lua, shared by
-- FGD and the lab's metric plugins/metrics/gpu_fragmentation.lua), worked by hand
-- from utils/frag.go of hkust-adsl/kubernetes-scheduler-simulator
-- (NodeGpuShareFragAmountScore: for each typical pod, weight x the node's free GPU
-- milli, except when the node can host it (Q3Satisfied): then weight x the free milli
-- of the GPUs each smaller than its milli per GPU).
--
-- One node, model A, 4 GPUs, 8000 cpu, holding in arrival order:
--   p1 1000 cpu, a share of 600 -> best fit: every GPU has 1000, the lowest index: GPU 0 -> [400, 1000, 1000, 1000]
--   p2 1000 cpu, a share of 300 -> the GPU with the least free that holds it: GPU 0 (400) -> [100, 1000, 1000, 1000]
--   p3 2000 cpu, one whole GPU -> the first fully free by index: GPU 1 -> [100, 0, 1000, 1000]
-- cpu left 8000 - 4000 = 4000; free milli 2100.
-- Typical pods: t1 1000 cpu + 500 milli, 0.5; t2 5000 cpu + one whole GPU, 0.25; t3 no GPU, 0.25.
--   t1: GPUs 2 and 3 hold 500, cpu 1000 <= 4000: hosted; fragment = GPUs below 500: 100 + 0 = 100 -> 50
--   t2: cpu 5000 > 4000: not hosted, all 2100 -> 525
--   t3: no GPU: all 2100 -> 525
--   F = 1100; the fragmentation ratio 1100 / 2100 = 52.38%.
local src = os.getenv("LUASCHED_SOURCE_DIR") or "."
package.path = src .. "/plugins/policies/?.lua;" .. src .. "/plugins/metrics/?.lua;" .. package.path

local frag = require("gpu_frag")
local metric = require("gpu_fragmentation")

local TYPICAL = {
  { milliCpu = 1000, milliGpu = 500, gpus = 1, weight = 0.5 },
  { milliCpu = 5000, milliGpu = 1000, gpus = 1, weight = 0.25 },
  { milliCpu = 0, milliGpu = 0, gpus = 0, weight = 0.25 },
}
local function same(name) return name end

local function pod(name, cpu, gpus, milli)
  local a = {}
  if gpus > 0 then
    a["alibabacloud.com/gpu-count"], a["alibabacloud.com/gpu-milli"] = tostring(gpus), tostring(milli)
  end
  return { name = name, uid = name, annotations = a, labels = {}, requests = { cpu = cpu } }
end

local NODE = {
  name = "n1",
  generation = 1,
  labels = { ["alibabacloud.com/gpu-count"] = "4", ["alibabacloud.com/gpu-card-model"] = "A" },
  allocatable = { cpu = 8000 },
  requested = { cpu = 4000 },
  pods = { pod("p1", 1000, 1, 600), pod("p2", 1000, 1, 300), pod("p3", 2000, 1, 1000) },
}

describe("gpu_frag.fragmentation", function()
  it("sums weight x fragment over the typical pods", function()
    local t = frag.typical(TYPICAL, "spec", same)
    assert.are.equal(1100, frag.fragmentation(t, { 100, 0, 1000, 1000 }, 4, 4000, "A"))
  end)

  it("counts all the free milli for a typical pod of another model", function()
    -- t1 constrained to model B: 0.5 x 2100 = 1050 instead of 50: F = 2100
    local list = { { milliCpu = 1000, milliGpu = 500, gpus = 1, weight = 0.5, model = "B|C" }, TYPICAL[2], TYPICAL[3] }
    assert.are.equal(2100, frag.fragmentation(frag.typical(list, "spec", same), { 100, 0, 1000, 1000 }, 4, 4000, "A"))
  end)

  it("is 0 on a node with nothing free, and names a bad typical pod", function()
    assert.are.equal(0, frag.fragmentation(frag.typical(TYPICAL, "spec", same), { 0, 0 }, 2, 4000, "A"))
    assert.has_error(function() frag.typical({ { milliCpu = 1 } }, "TypicalPodSet x", same) end,
      "TypicalPodSet x: typical pod 1: expected {milliCpu, milliGpu, gpus, model, weight}")
  end)
end)

describe("the fragmentation metric", function()
  local function cluster(sample, method)
    return {
      sample = sample,
      nodes = {
        NODE,
        { name = "cpu", generation = 1, labels = {}, allocatable = { cpu = 1000 }, requested = {}, pods = {} },
      },
      object = function(kind, ns, name)
        assert.are.same({ "typicalpodsets.v1alpha1.luasched.io", "default", "openb" }, { kind, ns, name })
        return { spec = { pods = TYPICAL } }
      end,
      pluginArgs = function(name)
        assert.are.equal("OpenGpuShare", name)
        return method and { gpuSelMethod = method } or nil
      end,
    }
  end

  it("replays the node's pods with best fit and measures the cluster", function()
    local free, n, cpu_left = metric.node_gpus(NODE, "best")
    assert.are.same({ { 100, 0, 1000, 1000 }, 4, 4000 }, { free, n, cpu_left })
    local fragmented, total_free = metric.measure(cluster(1, "best"))
    assert.are.same({ 1100, 2100 }, { fragmented, total_free })
  end)

  it("replays a share with worst fit under gpuSelMethod worst", function()
    -- p1 600: all 1000 -> the first most free: GPU 0 -> [400, ...];
    -- p2 300: the most free, GPU 1 -> [400, 700, 1000, 1000]; p3 whole: GPU 2 -> [400, 700, 0, 1000]
    assert.are.same({ 400, 700, 0, 1000 }, (metric.node_gpus(NODE, "worst")))
  end)

  it("takes the GPU a pod's gpu-index annotation names", function()
    local node = { labels = NODE.labels, allocatable = NODE.allocatable, requested = NODE.requested,
                   pods = { pod("p1", 1000, 1, 600) } }
    node.pods[1].annotations["alibabacloud.com/gpu-index"] = "3"
    assert.are.same({ 1000, 1000, 1000, 400 }, (metric.node_gpus(node, "best")))
  end)
end)
