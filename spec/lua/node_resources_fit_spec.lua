-- NodeResourcesFit (upstream noderesources/fit.go, resource_allocation.go,
-- least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go,
-- helper/shape_score.go). Every expected number below is worked out by hand
-- from those formulas with Go int64 arithmetic (division truncates toward zero).
-- Memory is given in Mi so the arithmetic can be done in Mi: the 2^20 factor
-- cancels in every ratio.
local T = require("luasched.testing")
local ls = require("luasched")

local UNSCHED, UNRESOLVABLE = ls.UNSCHEDULABLE, ls.UNSCHEDULABLE_AND_UNRESOLVABLE

describe("NodeResourcesFit", function()
  describe("filter", function()
    local cluster, plugin
    setup(function()
      cluster = T.cluster {
        nodes = {
          { name = "n1", allocatable = { cpu = "4", memory = "8Gi", ["ephemeral-storage"] = "10Gi",
                                         ["example.com/gpu"] = "2", ["hugepages-2Mi"] = "8Mi" } },
          { name = "full", allocatable = { cpu = "4", memory = "8Gi", pods = "1" } },
          { name = "tiny", allocatable = { cpu = "0", memory = "0" } },
        },
        pods = {
          -- n1 keeps free: cpu 1000m, memory 2Gi, ephemeral 6Gi, gpu 1, hugepages 4Mi
          { name = "used", node_name = "n1", requests = { cpu = "3", memory = "6Gi",
            ["ephemeral-storage"] = "4Gi", ["example.com/gpu"] = "1", ["hugepages-2Mi"] = "4Mi" } },
          -- full: 1 pod of 1 allowed; cpu free 3000m
          { name = "occupant", node_name = "full", requests = { cpu = "1" } },
        },
      }
      plugin = T.plugin("NodeResourcesFit")
    end)
    teardown(function() cluster:close() end)

    local function fit(node, requests, args)
      local p = args and T.plugin("NodeResourcesFit", args) or plugin
      local pod = T.pod { name = "p", requests = requests }
      local state = {}
      local pre = T.pre_filter(p, cluster, pod, state)
      assert.are.equal(ls.SUCCESS, pre.code)
      return T.filter(p, cluster, pod, node, state)
    end

    it("fits a request equal to what is free", function()
      -- 1000 > 4000 - 3000 is false; 2Gi > 8Gi - 6Gi is false
      assert.are.equal(ls.SUCCESS, fit("n1", { cpu = "1", memory = "2Gi" }).code)
      -- 6Gi > 10Gi - 4Gi false; gpu 1 > 2 - 1 false; hugepages 4Mi > 8Mi - 4Mi false
      assert.are.equal(ls.SUCCESS, fit("n1", { ["ephemeral-storage"] = "6Gi", ["example.com/gpu"] = "1",
                                               ["hugepages-2Mi"] = "4Mi" }).code)
    end)

    it("reports Insufficient cpu, Unschedulable while the node could hold the pod", function()
      local r = fit("n1", { cpu = "1001m" })        -- 1001 > 1000; 1001 <= 4000
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient cpu", r.message)
    end)

    it("is UnschedulableAndUnresolvable when the request alone exceeds allocatable", function()
      local r = fit("n1", { cpu = "5" })            -- 5000 > 1000 and 5000 > 4000
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal("Insufficient cpu", r.message)
      r = fit("n1", { memory = "9Gi" })             -- 9Gi > 8Gi
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal("Insufficient memory", r.message)
    end)

    it("reports Insufficient memory", function()
      local r = fit("n1", { memory = "3Gi" })       -- 3Gi > 2Gi free; 3Gi <= 8Gi
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient memory", r.message)
    end)

    it("reports Insufficient ephemeral-storage", function()
      local r = fit("n1", { ["ephemeral-storage"] = "7Gi" })   -- 7Gi > 6Gi; 7Gi <= 10Gi
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient ephemeral-storage", r.message)
      r = fit("n1", { ["ephemeral-storage"] = "11Gi" })        -- 11Gi > 10Gi
      assert.are.equal(UNRESOLVABLE, r.code)
    end)

    it("reports Insufficient <name> for scalar resources", function()
      local r = fit("n1", { ["example.com/gpu"] = "2" })       -- 2 > 2 - 1; 2 <= 2
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient example.com/gpu", r.message)
      r = fit("n1", { ["example.com/gpu"] = "3" })             -- 3 > 2
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal("Insufficient example.com/gpu", r.message)
      r = fit("n1", { ["hugepages-2Mi"] = "6Mi" })             -- 6Mi > 4Mi free; <= 8Mi
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient hugepages-2Mi", r.message)
    end)

    it("treats a scalar resource the node does not have as allocatable 0", function()
      local r = fit("n1", { ["example.com/fpga"] = "1" })      -- 1 > 0 - 0 and 1 > 0
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal("Insufficient example.com/fpga", r.message)
    end)

    it("collects every failure in upstream's order into one status", function()
      local r = fit("n1", { ["example.com/gpu"] = "2", ["ephemeral-storage"] = "7Gi", memory = "3Gi", cpu = "2" })
      assert.are.equal(UNSCHED, r.code)   -- every request <= allocatable
      assert.are.same({ "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                        "Insufficient example.com/gpu" }, r.reasons)
      assert.are.equal("Insufficient cpu, Insufficient memory, Insufficient ephemeral-storage, "
        .. "Insufficient example.com/gpu", r.message)
    end)

    it("is Unresolvable when any one of several failures cannot be resolved", function()
      local r = fit("n1", { ["example.com/gpu"] = "2", ["ephemeral-storage"] = "7Gi", memory = "9Gi", cpu = "2" })
      assert.are.equal(UNRESOLVABLE, r.code)  -- memory 9Gi > 8Gi allocatable
      assert.are.same({ "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                        "Insufficient example.com/gpu" }, r.reasons)
    end)

    it("orders several scalar failures by resource slot", function()
      local r = fit("n1", { ["example.com/gpu"] = "3", ["example.com/fpga"] = "1" })
      local gpu, fpga = ls.resource_index("example.com/gpu"), ls.resource_index("example.com/fpga")
      local expected = gpu < fpga and { "Insufficient example.com/gpu", "Insufficient example.com/fpga" }
        or { "Insufficient example.com/fpga", "Insufficient example.com/gpu" }
      assert.are.same(expected, r.reasons)
    end)

    it("reports Too many pods, and never as Unresolvable", function()
      local r = fit("full", nil)                    -- 1 + 1 > 1
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Too many pods", r.message)
      r = fit("full", { cpu = "3500m" })            -- and 3500 > 4000 - 1000; 3500 <= 4000
      assert.are.equal(UNSCHED, r.code)
      assert.are.same({ "Too many pods", "Insufficient cpu" }, r.reasons)
      r = fit("full", { cpu = "5" })                -- 5000 > 4000 makes it Unresolvable
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal("Too many pods, Insufficient cpu", r.message)
    end)

    it("checks only the pod count for a pod that requests nothing (non-zero defaults do not apply)", function()
      assert.are.equal(ls.SUCCESS, fit("tiny", nil).code)           -- cpu 0, memory 0 allocatable
      assert.are.equal(ls.SUCCESS, fit("tiny", { cpu = "0" }).code)  -- explicit zero
      assert.are.equal("Insufficient cpu", fit("tiny", { cpu = "1m" }).message)
    end)

    it("skips ignoredResources (extended resources)", function()
      local args = { ignoredResources = { "example.com/gpu" } }
      assert.are.equal(ls.SUCCESS, fit("n1", { ["example.com/gpu"] = "3" }, args).code)
      local r = fit("n1", { ["example.com/gpu"] = "3", cpu = "2" }, args)
      assert.are.equal(UNSCHED, r.code)
      assert.are.equal("Insufficient cpu", r.message)
      -- another extended resource is still checked
      assert.are.equal("Insufficient example.com/fpga", fit("n1", { ["example.com/fpga"] = "1" }, args).message)
    end)

    it("skips resources whose group (the part before /) is in ignoredResourceGroups", function()
      local args = { ignoredResourceGroups = { "example.com" } }
      assert.are.equal(ls.SUCCESS, fit("n1", { ["example.com/gpu"] = "3", ["example.com/fpga"] = "1" }, args).code)
      -- "example" is not the group of "example.com/gpu"
      local r = fit("n1", { ["example.com/gpu"] = "3" }, { ignoredResourceGroups = { "example" } })
      assert.are.equal("Insufficient example.com/gpu", r.message)
    end)

    it("does not ignore resources that are not extended resources", function()
      local r = fit("n1", { ["hugepages-2Mi"] = "6Mi", cpu = "2" },
        { ignoredResources = { "hugepages-2Mi", "cpu" }, ignoredResourceGroups = { "hugepages-2Mi" } })
      assert.are.same({ "Insufficient cpu", "Insufficient hugepages-2Mi" }, r.reasons)
    end)

    it("builds each distinct status once", function()
      local c2 = T.cluster {
        nodes = { { name = "a", allocatable = { cpu = "1" } }, { name = "b", allocatable = { cpu = "1" } } },
      }
      local r = T.cycle(plugin, c2, T.pod { name = "p", requests = { cpu = "2" } })
      assert.are.equal("Insufficient cpu", r.filter.a.message)
      assert.are.equal(r.filter.a.status, r.filter.b.status)
      c2:close()
    end)

    it("works when Filter runs without PreFilter state", function()
      local r = T.filter(plugin, cluster, T.pod { name = "p", requests = { cpu = "2" } }, "n1")
      assert.are.equal("Insufficient cpu", r.message)
    end)
  end)

  describe("score", function()
    local cluster
    setup(function()
      cluster = T.cluster {
        nodes = {
          { name = "A", allocatable = { cpu = "4", memory = "10000Mi" } },
          { name = "B", allocatable = { cpu = "3", memory = "7000Mi" } },
          { name = "C", allocatable = { cpu = "1", memory = "1000Mi" } },
          { name = "D", allocatable = { cpu = "500m", memory = "1000Mi" } },
          { name = "E", allocatable = { cpu = "100", memory = "1000Mi" } },
          { name = "F", allocatable = { cpu = "4", memory = "4000Mi" } },
          { name = "G", allocatable = { cpu = "4", memory = "10000Mi", ["example.com/gpu"] = "4",
                                        ["ephemeral-storage"] = "10Gi" } },
        },
        pods = {
          { name = "on-a", node_name = "A", requests = { cpu = "1", memory = "2000Mi" } },
          -- no requests: counts as 100m / 200Mi in the non-zero sums
          { name = "on-c", node_name = "C" },
          { name = "on-g", node_name = "G", requests = { cpu = "1", memory = "2000Mi", ["example.com/gpu"] = "1",
                                                         ["ephemeral-storage"] = "4Gi" } },
        },
      }
    end)
    teardown(function() cluster:close() end)

    local P1 = { cpu = "1", memory = "3000Mi" }
    local function score(args, node, requests)
      local p = T.plugin("NodeResourcesFit", args)
      return T.score(p, cluster, T.pod { name = "p", requests = requests }, node)
    end
    local function strategy(type_, resources, shape)
      return { scoringStrategy = { type = type_, resources = resources,
                                   requestedToCapacityRatio = shape and { shape = shape } or nil } }
    end

    describe("LeastAllocated", function()
      it("is the default, on cpu and memory with weight 1", function()
        -- cpu: (4000 - (1000 + 1000)) * 100 / 4000 = 50; memory: (10000 - 5000) * 100 / 10000 = 50
        -- (50 + 50) / 2 = 50
        assert.are.equal(50, score(nil, "A", P1))
        -- cpu: (3000 - 1000) * 100 / 3000 = 66; memory: (7000 - 3000) * 100 / 7000 = 57
        -- (66 + 57) / 2 = 61
        assert.are.equal(61, score(nil, "B", P1))
      end)

      it("weights resources", function()
        local args = strategy("LeastAllocated", { { name = "cpu", weight = 3 }, { name = "memory", weight = 1 } })
        -- B: (66 * 3 + 57 * 1) / 4 = 255 / 4 = 63
        assert.are.equal(63, score(args, "B", P1))
        -- A: (50 * 3 + 50) / 4 = 50
        assert.are.equal(50, score(args, "A", P1))
      end)

      it("counts a pod without requests as 100m cpu and 200Mi memory", function()
        -- B: cpu (3000 - 100) * 100 / 3000 = 96; memory (7000 - 200) * 100 / 7000 = 97; 193 / 2 = 96
        assert.are.equal(96, score(nil, "B", nil))
      end)

      it("uses the node's non-zero requested sums for cpu and memory", function()
        -- C holds a pod without requests: 100m / 200Mi. Pod 200m / 300Mi.
        -- cpu (1000 - 300) * 100 / 1000 = 70; memory (1000 - 500) * 100 / 1000 = 50; 120 / 2 = 60
        assert.are.equal(60, score(nil, "C", { cpu = "200m", memory = "300Mi" }))
      end)

      it("scores a resource requested beyond allocatable 0", function()
        -- D: cpu 1000 > 500 -> 0; memory (1000 - 500) * 100 / 1000 = 50; (0 + 50) / 2 = 25
        assert.are.equal(25, score(nil, "D", { cpu = "1", memory = "500Mi" }))
      end)

      it("skips a resource with allocatable 0", function()
        -- only ephemeral-storage is configured and A has none: weightSum 0 -> 0
        assert.are.equal(0, score(strategy("LeastAllocated", { { name = "ephemeral-storage", weight = 1 } }), "A", P1))
      end)
    end)

    describe("MostAllocated", function()
      it("scores the allocated share", function()
        local args = strategy("MostAllocated")
        -- A: cpu 2000 * 100 / 4000 = 50; memory 5000 * 100 / 10000 = 50 -> 50
        assert.are.equal(50, score(args, "A", P1))
        -- B: cpu 1000 * 100 / 3000 = 33; memory 3000 * 100 / 7000 = 42; 75 / 2 = 37
        assert.are.equal(37, score(args, "B", P1))
        -- B, pod without requests: cpu 100 * 100 / 3000 = 3; memory 200 * 100 / 7000 = 2; 5 / 2 = 2
        assert.are.equal(2, score(args, "B", nil))
      end)

      it("weights resources", function()
        local args = strategy("MostAllocated", { { name = "cpu", weight = 1 }, { name = "memory", weight = 2 } })
        -- B: (33 * 1 + 42 * 2) / 3 = 117 / 3 = 39
        assert.are.equal(39, score(args, "B", P1))
      end)

      it("caps the requested amount at allocatable", function()
        -- D: cpu min(1000, 500) * 100 / 500 = 100; memory 500 * 100 / 1000 = 50; 150 / 2 = 75
        assert.are.equal(75, score(strategy("MostAllocated"), "D", { cpu = "1", memory = "500Mi" }))
      end)

      it("keeps the default resources when only the type is given", function()
        local p = T.plugin("NodeResourcesFit", { scoringStrategy = { type = "MostAllocated" } })
        assert.are.same({ { name = "cpu", weight = 1 }, { name = "memory", weight = 1 } },
          p.args.scoringStrategy.resources)
        assert.are.equal(37, T.score(p, cluster, T.pod { name = "p", requests = P1 }, "B"))
      end)
    end)

    describe("RequestedToCapacityRatio", function()
      -- shape points score 0..10 are scaled by 100 / 10 = 10
      -- scaled: (0,0) (100,100)
      local RISING = { { utilization = 0, score = 0 }, { utilization = 100, score = 10 } }
      -- scaled: (0,100) (50,20) (100,80)
      local VALLEY = { { utilization = 0, score = 10 }, { utilization = 50, score = 2 },
                       { utilization = 100, score = 8 } }
      -- scaled: (20,50) (100,100)
      local LATE = { { utilization = 20, score = 5 }, { utilization = 100, score = 10 } }

      it("interpolates the shape and rounds the weighted mean", function()
        local args = strategy("RequestedToCapacityRatio", nil, RISING)
        -- A: cpu utilization 2000 * 100 / 4000 = 50 -> 0 + (100 - 0) * (50 - 0) / 100 = 50; memory 50 -> 50
        -- round(100 / 2) = 50
        assert.are.equal(50, score(args, "A", P1))
        -- B: cpu 1000 * 100 / 3000 = 33 -> 33; memory 3000 * 100 / 7000 = 42 -> 42
        -- round(75 / 2 = 37.5) = 38 (LeastAllocated-style truncation would give 37)
        assert.are.equal(38, score(args, "B", P1))
      end)

      it("weights resources before rounding", function()
        local args = strategy("RequestedToCapacityRatio",
          { { name = "cpu", weight = 1 }, { name = "memory", weight = 3 } }, RISING)
        -- B: (33 * 1 + 42 * 3) / 4 = 159 / 4 = 39.75 -> 40
        assert.are.equal(40, score(args, "B", P1))
      end)

      it("truncates interpolation toward zero on a falling segment", function()
        local args = strategy("RequestedToCapacityRatio", nil, VALLEY)
        -- B: cpu u=33: 100 + (20 - 100) * (33 - 0) / (50 - 0) = 100 + (-2640 / 50 = -52.8 -> -52) = 48
        --    memory u=42: 100 + (-80 * 42) / 50 = 100 + (-67.2 -> -67) = 33
        --    round((48 + 33) / 2 = 40.5) = 41
        assert.are.equal(41, score(args, "B", P1))
        -- A: u=50 on both: 100 + (-80 * 50) / 50 = 20 -> 20
        assert.are.equal(20, score(args, "A", P1))
        -- C: cpu u = (100 + 200) * 100 / 1000 = 30: 100 + (-80 * 30) / 50 = 100 - 48 = 52
        --    memory u = (200 + 300) * 100 / 1000 = 50 -> 20; round(72 / 2) = 36
        assert.are.equal(36, score(args, "C", { cpu = "200m", memory = "300Mi" }))
        -- F: cpu u = 3000 * 100 / 4000 = 75: 20 + (80 - 20) * (75 - 50) / (100 - 50) = 20 + 30 = 50
        --    memory u = 1000 * 100 / 4000 = 25: 100 + (-80 * 25) / 50 = 60; round(110 / 2) = 55
        assert.are.equal(55, score(args, "F", { cpu = "3", memory = "1000Mi" }))
      end)

      it("scores a request beyond allocatable as utilization 100", function()
        -- D: cpu 1000 > 500 -> f(100) = 20 + 60 * (100 - 50) / 50 = 80; memory u=50 -> 20
        -- round(100 / 2) = 50
        assert.are.equal(50, score(strategy("RequestedToCapacityRatio", nil, VALLEY), "D",
          { cpu = "1", memory = "500Mi" }))
        -- RISING: cpu f(100) = 100; memory 50; round(150 / 2) = 75
        assert.are.equal(75, score(strategy("RequestedToCapacityRatio", nil, RISING), "D",
          { cpu = "1", memory = "500Mi" }))
      end)

      it("leaves resources scoring 0 out of the mean", function()
        -- E: cpu u = 100 * 100 / 100000 = 0 -> 0, left out; memory u = 500 * 100 / 1000 = 50 -> 50
        -- round(50 / 1) = 50 (25 if the zero counted)
        assert.are.equal(50, score(strategy("RequestedToCapacityRatio", nil, RISING), "E",
          { cpu = "100m", memory = "500Mi" }))
      end)

      it("uses the first point's score below the first utilization", function()
        -- E: cpu u=0 <= 20 -> 50; memory u=50: 50 + (100 - 50) * (50 - 20) / (100 - 20) = 50 + 1500 / 80
        -- = 50 + 18 = 68; round(118 / 2) = 59
        assert.are.equal(59, score(strategy("RequestedToCapacityRatio", nil, LATE), "E",
          { cpu = "100m", memory = "500Mi" }))
      end)

      it("requires a shape", function()
        assert.has_error(function()
          T.plugin("NodeResourcesFit", { scoringStrategy = { type = "RequestedToCapacityRatio" } })
        end)
      end)
    end)

    describe("resources", function()
      local GPU = { cpu = "1", memory = "3000Mi", ["example.com/gpu"] = "2" }
      local with_gpu = strategy("LeastAllocated", { { name = "cpu", weight = 1 }, { name = "memory", weight = 1 },
                                                    { name = "example.com/gpu", weight = 2 } })

      it("scores a requested scalar resource with its weight", function()
        -- G: cpu (4000 - 2000) * 100 / 4000 = 50; memory (10000 - 5000) * 100 / 10000 = 50;
        --    gpu (4 - (1 + 2)) * 100 / 4 = 25; (50 + 50 + 25 * 2) / (1 + 1 + 2) = 150 / 4 = 37
        assert.are.equal(37, score(with_gpu, "G", GPU))
        -- MostAllocated: gpu 3 * 100 / 4 = 75; (50 + 50 + 150) / 4 = 62
        local most = strategy("MostAllocated", with_gpu.scoringStrategy.resources)
        assert.are.equal(62, score(most, "G", GPU))
      end)

      it("skips a scalar resource the pod does not request", function()
        -- G, no gpu request: (50 + 50) / 2 = 50 (gpu neither scored nor weighted)
        assert.are.equal(50, score(with_gpu, "G", P1))
      end)

      it("skips a scalar resource the node does not have", function()
        -- A has no gpu: allocatable 0 -> skipped; (50 + 50) / 2 = 50
        assert.are.equal(50, score(with_gpu, "A", GPU))
      end)

      it("scores ephemeral-storage with plain requests, even when the pod requests none", function()
        local eph = strategy("LeastAllocated", { { name = "ephemeral-storage", weight = 1 } })
        -- G: (10Gi - (4Gi + 1Gi)) * 100 / 10Gi = 50
        assert.are.equal(50, score(eph, "G", { ["ephemeral-storage"] = "1Gi" }))
        -- G, no request: (10Gi - 4Gi) * 100 / 10Gi = 60 (not skipped: not a scalar resource)
        assert.are.equal(60, score(eph, "G", P1))
      end)

      it("skips pods and unknown resource names", function()
        local args = strategy("LeastAllocated", { { name = "pods", weight = 1 }, { name = "cpu", weight = 1 },
                                                  { name = "example.com/never-registered", weight = 5 } })
        -- A: only cpu counts: 50 * 1 / 1 = 50
        assert.are.equal(50, score(args, "A", P1))
      end)

      it("turns a weight of 0 into 1 and rejects weights outside [1, 100]", function()
        local zero = strategy("LeastAllocated", { { name = "cpu", weight = 3 }, { name = "memory", weight = 0 } })
        -- B: (66 * 3 + 57 * 1) / 4 = 63
        assert.are.equal(63, score(zero, "B", P1))
        assert.has_error(function()
          T.plugin("NodeResourcesFit", strategy("LeastAllocated", { { name = "cpu", weight = 101 } }))
        end)
      end)

      it("rejects an unknown strategy", function()
        assert.has_error(function()
          T.plugin("NodeResourcesFit", { scoringStrategy = { type = "Balanced" } })
        end, 'scoringStrategy.type: Unsupported value: "Balanced": supported values: "LeastAllocated", '
          .. '"MostAllocated", "RequestedToCapacityRatio"')
      end)

      it("picks up a resource name first seen after init", function()
        -- the name is unknown to the process when the plugin is built
        local name = "late.example.com/widget"
        assert.are.equal(-1, ls.resource_index(name))
        local p = T.plugin("NodeResourcesFit", strategy("LeastAllocated", { { name = name, weight = 1 } }))
        local c = T.cluster {
          nodes = { { name = "L", allocatable = { cpu = "1", [name] = "10" } } },
          pods = { { name = "holder", node_name = "L", requests = { [name] = "2" } } },
        }
        -- (10 - (2 + 3)) * 100 / 10 = 50
        assert.are.equal(50, T.score(p, c, T.pod { name = "p", requests = { [name] = "3" } }, "L"))
        c:close()
      end)
    end)

    it("has no NormalizeScore: a cycle's scores are the raw ones", function()
      local p = T.plugin("NodeResourcesFit")
      local r = T.cycle(p, cluster, T.pod { name = "p", requests = P1 })
      -- infeasible: C (cpu 1000 <= 1000 - 0 fits, memory 3000Mi > 1000Mi), D (cpu 1000 > 500),
      -- E (memory 3000Mi > 1000Mi)
      assert.are.same({ "A", "B", "F", "G" }, (function()
        local l = {}
        for _, n in ipairs(r.feasible) do l[#l + 1] = n end
        table.sort(l)
        return l
      end)())
      assert.are.same(r.raw, r.scores)
      assert.are.equal(50, r.scores.A)
      assert.are.equal(61, r.scores.B)
      -- F: cpu (4000 - 1000) * 100 / 4000 = 75; memory (4000 - 3000) * 100 / 4000 = 25; 100 / 2 = 50
      assert.are.equal(50, r.scores.F)
    end)
  end)
end)
