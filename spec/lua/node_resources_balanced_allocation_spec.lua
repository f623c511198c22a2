-- NodeResourcesBalancedAllocation (upstream noderesources/balanced_allocation.go,
-- resource_allocation.go): fraction_r = (node requested_r + pod request_r) /
-- allocatable_r capped at 1, actual requests (no 100m / 200Mi defaults);
-- allocatable 0 and unrequested scalars left out; std = 0 (one), |f1 - f2| / 2
-- (two), population std (more); S = int64((1 - std) * 100), taken with the pod
-- (S_with) and without it (S_without, node requested / allocatable); since
-- v1.36 score = 50 + (50 + S_with - S_without) / 2 (int64 division). No normalize.
-- Memory in Gi: the 2^30 factor cancels in every fraction.
-- Without the pod: n1 cpu 1000/4000 = mem 1/4 = 0.25 -> std 0 -> 100;
-- n2 cpu 4000/8000 = 0.5, mem 2/16 = 0.125 -> std 0.1875 -> 81.25 -> 81;
-- n3 and n4 run nothing -> 100.
local T = require("luasched.testing")
local ls = require("luasched")

describe("NodeResourcesBalancedAllocation", function()
  local cluster, plugin
  setup(function()
    cluster = T.cluster {
      nodes = {
        { name = "n1", allocatable = { cpu = "4", memory = "4Gi" } },
        { name = "n2", allocatable = { cpu = "8", memory = "16Gi", ["ephemeral-storage"] = "100Gi",
                                       ["example.com/gpu"] = "4", ["example.com/fpga"] = "8" } },
        { name = "n3", allocatable = { cpu = "2" } },                 -- memory allocatable 0
        { name = "n4", allocatable = { cpu = "1", memory = "1Gi" } },
      },
      pods = {
        { name = "on-n1", node_name = "n1", requests = { cpu = "1", memory = "1Gi" } },
        { name = "on-n2", node_name = "n2", requests = { cpu = "4", memory = "2Gi", ["ephemeral-storage"] = "25Gi",
                                                         ["example.com/gpu"] = "1", ["example.com/fpga"] = "2" } },
      },
    }
    plugin = T.plugin("NodeResourcesBalancedAllocation")
  end)
  teardown(function() cluster:close() end)

  local function scores(p, requests)
    local r = T.cycle(p, cluster, T.pod { name = "p", requests = requests })
    assert.are.equal(ls.SUCCESS, r.pre_score.code)
    assert.are.same(r.raw, r.scores)   -- no NormalizeScore
    return r.scores
  end

  it("has no NormalizeScore", function()
    assert.is_nil(plugin.normalize_score)
  end)

  it("scores cpu and memory by default, capping fractions at 1", function()
    -- pod 1500m, 1Gi:
    -- n1: cpu (1000 + 1500) / 4000 = 0.625, mem (1 + 1) / 4 = 0.5; std 0.125 / 2 = 0.0625 -> 93.75 -> 93
    -- n2: cpu 5500 / 8000 = 0.6875, mem 3 / 16 = 0.1875; std 0.5 / 2 = 0.25 -> 75
    -- n3: cpu 1500 / 2000 = 0.75, memory allocatable 0 skipped: one fraction, std 0 -> 100
    -- n4: cpu 1500 / 1000 = 1.5 capped to 1, mem 1 / 1 = 1; std 0 -> 100 (uncapped: 75)
    -- final: n1 50 + (50 + 93 - 100) / 2 = 50 + 21 = 71; n2 50 + (50 + 75 - 81) / 2 = 72;
    --        n3, n4 50 + (50 + 100 - 100) / 2 = 75
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 }, scores(plugin, { cpu = "1500m", memory = "1Gi" }))
  end)

  it("uses actual requests, not the non-zero defaults", function()
    -- a container without requests counts 0 here (not 100m / 200Mi): pod cpu 1000m, memory 0
    -- n1: cpu 2000 / 4000 = 0.5, mem 1 / 4 = 0.25; std 0.125 -> 87.5 -> 87;
    --     50 + (50 + 87 - 100) / 2 = 50 + 18 = 68
    local pod = T.pod { name = "p", containers = { false, { cpu = "1" } } }
    local r = T.cycle(plugin, cluster, pod)
    assert.are.equal(68, r.scores.n1)
  end)

  it("skips a pod whose configured requests are all zero", function()
    local r = T.cycle(plugin, cluster, T.pod { name = "p" })
    assert.are.equal(ls.SKIP, r.pre_score.code)
    assert.is_true(r.skipped_score)
    -- a request for a resource that is not configured does not count
    r = T.cycle(plugin, cluster, T.pod { name = "p", requests = { ["example.com/gpu"] = "1" } })
    assert.are.equal(ls.SKIP, r.pre_score.code)
    -- one non-zero configured request is enough
    r = T.cycle(plugin, cluster, T.pod { name = "p", requests = { memory = "1Gi" } })
    assert.are.equal(ls.SUCCESS, r.pre_score.code)
    -- n1: cpu 1000 / 4000 = 0.25, mem 2 / 4 = 0.5; std 0.125 -> 87 -> 50 + (50 + 87 - 100) / 2 = 68
    assert.are.equal(68, r.scores.n1)
  end)

  it("scores 0 for a best-effort pod when PreScore did not run", function()
    assert.are.equal(0, T.score(plugin, cluster, T.pod { name = "p" }, "n1"))
    -- and computes the requests itself otherwise: n1 as above, 71
    local pod = T.pod { name = "p", requests = { cpu = "1500m", memory = "1Gi" } }
    assert.are.equal(71, T.score(plugin, cluster, pod, "n1"))
  end)

  it("uses the population standard deviation for more than two resources", function()
    local p = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu", weight = 1 }, { name = "memory", weight = 1 }, { name = "ephemeral-storage", weight = 1 } } })
    -- pod 1500m, 1Gi, 5Gi ephemeral:
    -- n2: 0.6875, 0.1875, (25 + 5) / 100 = 0.3; mean 1.175 / 3 = 0.391667;
    --     squares 0.295833^2 + 0.204167^2 + 0.091667^2 = 0.087517 + 0.041684 + 0.008403 = 0.137604;
    --     std sqrt(0.137604 / 3) = sqrt(0.045868) = 0.214168 -> 78.58 -> 78
    --     without the pod 0.5, 0.125, 25 / 100 = 0.25; mean 0.291667; squares
    --     0.208333^2 + 0.166667^2 + 0.041667^2 = 0.043403 + 0.027778 + 0.001736 = 0.072917;
    --     std sqrt(0.024306) = 0.155902 -> 84.41 -> 84; 50 + (50 + 78 - 84) / 2 = 72
    -- n1, n3, n4: ephemeral allocatable 0 skipped -> as with cpu and memory: 71, 75, 75
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 },
      scores(p, { cpu = "1500m", memory = "1Gi", ["ephemeral-storage"] = "5Gi" }))
  end)

  it("scores scalar resources the pod requests and leaves out the others", function()
    local p = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu" }, { name = "memory", weight = 0 }, { name = "example.com/gpu", weight = 1 } } })
    -- gpu requested: n2 0.6875, 0.1875, (1 + 1) / 4 = 0.5; mean 1.375 / 3 = 0.458333;
    --   squares 0.229167^2 + 0.270833^2 + 0.041667^2 = 0.052517 + 0.073351 + 0.001736 = 0.127604;
    --   std sqrt(0.042535) = 0.206240 -> 79.38 -> 79; without the pod 0.5, 0.125, 1 / 4 = 0.25
    --   -> 84 (as for ephemeral-storage above); 50 + (50 + 79 - 84) / 2 = 50 + 22 = 72;
    --   n1, n3, n4 have no gpu: 71, 75, 75
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 },
      scores(p, { cpu = "1500m", memory = "1Gi", ["example.com/gpu"] = "1" }))
    -- gpu not requested: left out although n2 has it -> cpu and memory only: 72
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 }, scores(p, { cpu = "1500m", memory = "1Gi" }))
  end)

  it("handles four and more resources", function()
    local four = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu" }, { name = "memory" }, { name = "example.com/gpu" }, { name = "example.com/fpga" } } })
    local requests = { cpu = "1500m", memory = "1Gi", ["ephemeral-storage"] = "5Gi",
                       ["example.com/gpu"] = "1", ["example.com/fpga"] = "2" }
    -- n2: 0.6875, 0.1875, gpu 2/4 = 0.5, fpga (2 + 2)/8 = 0.5; mean 1.875 / 4 = 0.46875;
    --   squares 0.21875^2 + 0.28125^2 + 0.03125^2 + 0.03125^2
    --   = 0.0478515625 + 0.0791015625 + 0.0009765625 + 0.0009765625 = 0.12890625;
    --   std sqrt(0.12890625 / 4) = sqrt(0.0322265625) = 0.179518 -> 82.05 -> 82
    --   without the pod 0.5, 0.125, 0.25, 0.25; mean 0.28125; squares 0.21875^2 + 0.15625^2
    --   + 2 * 0.03125^2 = 0.0742188; std sqrt(0.0185547) = 0.136216 -> 86.38 -> 86;
    --   50 + (50 + 82 - 86) / 2 = 73
    -- n1, n3, n4: no gpu or fpga allocatable -> 71, 75, 75 as with cpu and memory
    assert.are.same({ n1 = 71, n2 = 73, n3 = 75, n4 = 75 }, scores(four, requests))
    local five = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu" }, { name = "memory" }, { name = "ephemeral-storage" }, { name = "example.com/gpu" },
      { name = "example.com/fpga" } } })
    -- n2: 0.6875, 0.1875, 0.3, 0.5, 0.5; mean 2.175 / 5 = 0.435;
    --   squares 0.2525^2 + 0.2475^2 + 0.135^2 + 0.065^2 + 0.065^2
    --   = 0.06375625 + 0.06125625 + 0.018225 + 0.004225 + 0.004225 = 0.1516875;
    --   std sqrt(0.1516875 / 5) = sqrt(0.0303375) = 0.174177 -> 82.58 -> 82
    --   without the pod 0.5, 0.125, 0.25, 0.25, 0.25; mean 0.275; squares 0.225^2 + 0.15^2
    --   + 3 * 0.025^2 = 0.075; std sqrt(0.015) = 0.122474 -> 87.75 -> 87; 50 + (50 + 82 - 87) / 2 = 72
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 }, scores(five, requests))
    -- a pod requesting cpu only: on n2 cpu 5500/8000 = 0.6875, memory 2/16 = 0.125 and
    -- ephemeral 25/100 = 0.25 stay in (pod request 0), gpu and fpga (unrequested scalars) leave;
    -- mean 1.0625 / 3 = 0.354167; squares 0.333333^2 + 0.229167^2 + 0.104167^2
    --   = 0.111111 + 0.052517 + 0.010851 = 0.174479; std sqrt(0.058160) = 0.241163 -> 75.88 -> 75
    --   without the pod 0.5, 0.125, 0.25 -> 84; 50 + (50 + 75 - 84) / 2 = 50 + 20 = 70
    assert.are.equal(70, scores(five, { cpu = "1500m" }).n2)
  end)

  it("leaves out pods and unknown resource names", function()
    local p = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu" }, { name = "pods" }, { name = "example.com/never-seen" } } })
    -- only cpu is left: one fraction, std 0 -> 100 with and without the pod -> 75 everywhere
    assert.are.same({ n1 = 75, n2 = 75, n3 = 75, n4 = 75 }, scores(p, { cpu = "1500m" }))
  end)

  it("scores 75 on a node where every configured resource has allocatable 0", function()
    local c = T.cluster { nodes = { { name = "bare", allocatable = { pods = "10" } } } }
    -- cpu and memory allocatable 0: no fraction, std 0 -> 100 with and without -> 75
    -- one node: a cycle would not score it (one feasible node is taken at once), so T.score
    assert.are.equal(75, T.score(plugin, c, T.pod { name = "p", requests = { cpu = "1" } }, "bare"))
    c:close()
  end)

  it("resolves resource names first seen after init", function()
    local p = T.plugin("NodeResourcesBalancedAllocation", { resources = {
      { name = "cpu" }, { name = "example.com/late-fpga" } } })
    local c = T.cluster { nodes = { { name = "f", allocatable = { cpu = "4", ["example.com/late-fpga"] = "4" } } } }
    -- cpu 1000 / 4000 = 0.25, fpga 3 / 4 = 0.75; std 0.25 -> 75; empty node -> 100;
    -- 50 + (50 + 75 - 100) / 2 = 50 + 12 = 62
    local pod = T.pod { name = "p", requests = { cpu = "1", ["example.com/late-fpga"] = "3" } }
    assert.are.equal(62, T.score(p, c, pod, "f"))
    c:close()
  end)

  it("validates the resources", function()
    assert.has_error(function()
      T.plugin("NodeResourcesBalancedAllocation", { resources = { { name = "cpu", weight = 2 } } })
    end, "resources[0].weight: Invalid value: 2: must be 1")
    assert.has_error(function()
      T.plugin("NodeResourcesBalancedAllocation", { resources = { { name = "cpu" }, { name = "cpu" } } })
    end, 'resources[1].name: Duplicate value: "cpu"')
    assert.has_error(function()
      T.plugin("NodeResourcesBalancedAllocation", { resources = { { weight = 1 } } })
    end, "resources[0].name: a resource name is required")
    assert.has_error(function()
      T.plugin("NodeResourcesBalancedAllocation", { resources = "cpu" })
    end, 'args of plugin "NodeResourcesBalancedAllocation": args.resources: Invalid type: expected list, '
      .. 'got string "cpu"')
  end)

  it("falls back to cpu and memory for an empty list", function()
    local p = T.plugin("NodeResourcesBalancedAllocation", { resources = {} })
    assert.are.same({ n1 = 71, n2 = 72, n3 = 75, n4 = 75 }, scores(p, { cpu = "1500m", memory = "1Gi" }))
  end)

  it("rewards a pod that improves the node's balance (v1.36)", function()
    -- Two nodes equally balanced with the pod (S_with 100), differently without it:
    -- m1 runs cpu 2/4 with no memory used: without 0.5, 0 -> std 0.25 -> 75;
    --   the pod (0 cpu, 2Gi) makes it 0.5, 0.5 -> 100: 50 + (50 + 100 - 75) / 2 = 50 + 37 = 87
    -- m2 runs cpu 1/4, memory 1Gi/4Gi: without 0.25, 0.25 -> 100;
    --   the pod (1 cpu, 1Gi) makes it 0.5, 0.5 -> 100: 50 + (50 + 100 - 100) / 2 = 75
    local c = T.cluster {
      nodes = { { name = "m1", allocatable = { cpu = "4", memory = "4Gi" } },
                { name = "m2", allocatable = { cpu = "4", memory = "4Gi" } } },
      pods = { { name = "a", node_name = "m1", requests = { cpu = "2" } },
               { name = "b", node_name = "m2", requests = { cpu = "1", memory = "1Gi" } } },
    }
    assert.are.equal(87, T.score(plugin, c, T.pod { name = "p", requests = { memory = "2Gi" } }, "m1"))
    assert.are.equal(75, T.score(plugin, c, T.pod { name = "p", requests = { cpu = "1", memory = "1Gi" } }, "m2"))
    -- a pod that breaks a perfect balance scores the least: m2 with (2 cpu, 0):
    -- with 0.75, 0.25 -> std 0.25 -> 75; 50 + (50 + 75 - 100) / 2 = 62
    assert.are.equal(62, T.score(plugin, c, T.pod { name = "p", requests = { cpu = "2" } }, "m2"))
    c:close()
  end)
end)
