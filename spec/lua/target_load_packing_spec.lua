-- TargetLoadPacking (scheduler-plugins pkg/trimaran/targetloadpacking), scores
-- worked by hand from upstream's formula with the defaults (target T = 40,
-- multiplier 1.5, default request 1000m):
--   predicted% = 100 * (usage + pod + missing) / capacity.cpu
--   > 100 -> 0; > T -> round(T * (100 - p) / (100 - T)); else round((100 - T) * p / T + T)
-- The pod requests 500m: predicted CPU round(500 * 1.5) = 750m.
--   a: capacity 4000m, usage 1000m -> p = 100 * 1750 / 4000 = 43.75 > 40
--      -> round(40 * 56.25 / 60) = round(37.5) = 38 (half away from zero)
--   b: capacity 8000m, usage 800m -> p = 100 * 1550 / 8000 = 19.375
--      -> round(60 * 19.375 / 40 + 40) = round(69.0625) = 69
--   c: capacity 2000m, usage 1800m -> p = 127.5 > 100 -> 0
--   d: no NodeMetrics -> 0 (MinNodeScore)
local T = require("luasched.testing")
local ls = require("luasched")

local function node_metrics(node, cpu, memory, timestamp)
  return {
    apiVersion = "metrics.k8s.io/v1beta1", kind = "NodeMetrics",
    metadata = { name = node }, timestamp = timestamp or "2026-11-24T22:00:00Z", window = "30s",
    usage = { cpu = cpu, memory = memory },
  }
end

describe("TargetLoadPacking", function()
  local cluster
  before_each(function()
    cluster = T.cluster {
      nodes = {
        { name = "a", allocatable = { cpu = "4", memory = "8Gi" } },
        { name = "b", allocatable = { cpu = "8", memory = "8Gi" } },
        { name = "c", allocatable = { cpu = "2", memory = "8Gi" } },
        { name = "d", allocatable = { cpu = "4", memory = "8Gi" } },
      },
      objects = {
        node_metrics("a", "1", "1Gi"), node_metrics("b", "800m", "1Gi"), node_metrics("c", "1800m", "1Gi"),
      },
    }
  end)
  after_each(function() cluster:close() end)

  it("scores by upstream's formula around the target utilization", function()
    local p = T.plugin("TargetLoadPacking")
    local r = T.cycle(p, cluster, T.pod { name = "web", requests = { cpu = "500m" } })
    assert.are.same({ a = 38, b = 69, c = 0, d = 0 }, r.scores)
  end)

  it("predicts the default request for a pod without a CPU request", function()
    -- b: p = 100 * (800 + 1000) / 8000 = 22.5 -> round(60 * 22.5 / 40 + 40) = round(73.75) = 74
    local p = T.plugin("TargetLoadPacking")
    local r = T.cycle(p, cluster, T.pod { name = "idle" })
    assert.are.equal(74, r.scores.b)
  end)

  it("exactly at the target scores 100, and the target moves with the args", function()
    -- targetUtilization 70, pod 500m * 2 = 1000m on b: p = 100 * 1800 / 8000 = 22.5
    --   -> round(30 * 22.5 / 70 + 70) = round(79.64) = 80;
    -- on a: p = 100 * 2000 / 4000 = 50 -> round(30 * 50 / 70 + 70) = round(91.43) = 91.
    local p = T.plugin("TargetLoadPacking", { targetUtilization = 70, defaultRequestsMultiplier = "2" })
    local r = T.cycle(p, cluster, T.pod { name = "web", requests = { cpu = "500m" } })
    assert.are.equal(80, r.scores.b)
    assert.are.equal(91, r.scores.a)
    -- T = 50, a: p = 50 exactly -> round(50 * 50 / 50 + 50) = 100
    local q = T.plugin("TargetLoadPacking", { targetUtilization = 50, defaultRequestsMultiplier = "2" })
    assert.are.equal(100, T.cycle(q, cluster, T.pod { name = "web", requests = { cpu = "500m" } }).scores.a)
  end)

  it("counts the pods it reserved until the node's metrics are reported again", function()
    local p = T.plugin("TargetLoadPacking")
    local pod = T.pod { name = "first", requests = { cpu = "500m" } }
    local r = T.cycle(p, cluster, pod)
    T.node_hook(p, "reserve", cluster, pod, "b", r.state)
    -- b now: p = 100 * (800 + 750 + 750) / 8000 = 28.75 -> round(60 * 28.75 / 40 + 40) = round(83.125) = 83
    local second = T.pod { name = "second", requests = { cpu = "500m" } }
    assert.are.equal(83, T.cycle(p, cluster, second).scores.b)
    -- Unreserve takes it back: 69 again.
    T.node_hook(p, "unreserve", cluster, pod, "b", r.state)
    assert.are.equal(69, T.cycle(p, cluster, second).scores.b)
    -- Reserved again, then b reports new metrics (usage 2400m, which includes the pod):
    -- p = 100 * (2400 + 750) / 8000 = 39.375 -> round(60 * 39.375 / 40 + 40) = round(99.06) = 99
    T.node_hook(p, "reserve", cluster, pod, "b", r.state)
    cluster:add_object(node_metrics("b", "2400m", "1Gi", "2026-11-24T22:01:00Z"))
    assert.are.equal(99, T.cycle(p, cluster, second).scores.b)
  end)

  it("validates its args", function()
    local P = T.plugin("TargetLoadPacking")
    local function check(args) return P.validate(ls.merge_args(P.defaults, args)) end
    assert.is_nil(check({ targetUtilization = 100, defaultRequestsMultiplier = "0", defaultRequests = { cpu = "2" } }))
    assert.are.equal("targetUtilization: must be a percent up to 100, got 120", check({ targetUtilization = 120 }))
    assert.are.equal('defaultRequestsMultiplier: must be a number >= 0 as text ("1.5"), got x',
      check({ defaultRequestsMultiplier = "x" }))
    assert.are.equal('defaultRequests.cpu: must be a CPU quantity ("1000m"), got lots',
      check({ defaultRequests = { cpu = "lots" } }))
    -- 0 or less is upstream's "unset": the default 40 (b scores 69 as above).
    local p = T.plugin("TargetLoadPacking", { targetUtilization = 0 })
    assert.are.equal(69, T.cycle(p, cluster, T.pod { name = "web", requests = { cpu = "500m" } }).scores.b)
    -- defaultRequests.cpu 2 on b: p = 100 * 2800 / 8000 = 35 -> round(60 * 35 / 40 + 40) = round(92.5) = 93
    local q = T.plugin("TargetLoadPacking", { defaultRequests = { cpu = "2" } })
    assert.are.equal(93, T.cycle(q, cluster, T.pod { name = "idle" }).scores.b)
  end)

  it("predicts each regular container: limit, else request x multiplier, else the default; plus overhead", function()
    -- c0 limit 1 (request 500m) -> 1000; c1 request 200m -> round(300) = 300; c2 nothing -> 1000;
    -- the init container is not counted; overhead 100m: 2400m.
    -- b: p = 100 * (800 + 2400) / 8000 = 40 = T -> round(60 * 40 / 40 + 40) = 100
    local p = T.plugin("TargetLoadPacking")
    local pod = T.pod { name = "multi", overhead = { cpu = "100m" },
      containers = { { requests = { cpu = "500m" }, limits = { cpu = "1" } }, { cpu = "200m" }, false },
      init_containers = { { cpu = "4" } } }
    assert.are.equal(2400, p:predicted_cpu(pod))
    assert.are.equal(100, T.cycle(p, cluster, pod).scores.b)
  end)

  it("reads the node's annotations before its NodeMetrics", function()
    -- e: annotation cpu-average 10 (NodeMetrics say 3 cpu): util 400m;
    --    p = 100 * (400 + 750) / 4000 = 28.75 -> round(60 * 28.75 / 40 + 40) = round(83.125) = 83
    -- f: annotation "n/a" is no value and f has no NodeMetrics -> 0
    cluster:add_node({ name = "e", allocatable = { cpu = "4", memory = "8Gi" },
                       annotations = { ["trimaran.luasched.io/cpu-average"] = "10" } })
    cluster:add_node({ name = "f", allocatable = { cpu = "4", memory = "8Gi" },
                       annotations = { ["trimaran.luasched.io/cpu-average"] = "n/a" } })
    cluster:add_object(node_metrics("e", "3", "1Gi"))
    local p = T.plugin("TargetLoadPacking")
    local r = T.cycle(p, cluster, T.pod { name = "web", requests = { cpu = "500m" } })
    assert.are.equal(83, r.scores.e)
    assert.are.equal(0, r.scores.f)
  end)

  it("registers no events (a Score plugin rejects nothing)", function()
    assert.are.same({}, T.events(T.plugin("TargetLoadPacking")))
  end)

  it("refuses nothing and never leaves 0..100", function()
    local p = T.plugin("TargetLoadPacking")
    local r = T.cycle(p, cluster, T.pod { name = "huge", requests = { cpu = "64" } })
    for _, s in pairs(r.scores) do assert.is_true(s >= 0 and s <= 100) end
    assert.are.equal(ls.SUCCESS, r.pre_score.code)
  end)
end)
