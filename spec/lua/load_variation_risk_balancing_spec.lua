-- LoadVariationRiskBalancing (scheduler-plugins
-- pkg/trimaran/loadvariationriskbalancing), scores worked by hand from
-- upstream's formula: per resource mu = clamp((usedAvg + req) / capacity),
-- sigma = clamp(clamp(std / capacity) ^ (1 / sensitivity) * margin),
-- risk = (mu + sigma) / 2, score = (1 - risk) * 100; node = round(min(cpu, mem))
-- with both measured. NodeMetrics give the average (usage / capacity) and no
-- deviation (sigma = 0).
-- Pod: cpu 1000m, memory 1Gi.
--   a: 4 cpu, 8Gi, usage 1 cpu (25%), 2Gi (25%):
--      cpu mu = (1000 + 1000) / 4000 = 0.5 -> risk 0.25 -> 75
--      mem mu = (2 + 1) / 8 = 0.375 -> risk 0.1875 -> 81.25; min -> 75
--   b: 8 cpu, 16Gi, usage 4 cpu (50%), 2Gi (12.5%):
--      cpu mu = (4000 + 1000) / 8000 = 0.625 -> 68.75; mem mu = 3 / 16 = 0.1875 -> 90.625
--      min 68.75 -> round -> 69
--   c: 2 cpu, 4Gi, usage 2 cpu (100%), 4Gi: mu clamps to 1 -> risk 0.5 -> 50
--   d: no NodeMetrics -> 0
local T = require("luasched.testing")
local ls = require("luasched")

local function node_metrics(node, usage)
  return {
    apiVersion = "metrics.k8s.io/v1beta1", kind = "NodeMetrics",
    metadata = { name = node }, timestamp = "2026-11-24T22:00:00Z", window = "30s", usage = usage,
  }
end

describe("LoadVariationRiskBalancing", function()
  local cluster
  setup(function()
    cluster = T.cluster {
      nodes = {
        { name = "a", allocatable = { cpu = "4", memory = "8Gi" } },
        { name = "b", allocatable = { cpu = "8", memory = "16Gi" } },
        { name = "c", allocatable = { cpu = "2", memory = "4Gi" } },
        { name = "d", allocatable = { cpu = "4", memory = "8Gi" } },
        { name = "e", allocatable = { cpu = "4", memory = "8Gi" } },
      },
      objects = {
        node_metrics("a", { cpu = "1", memory = "2Gi" }),
        node_metrics("b", { cpu = "4", memory = "2Gi" }),
        node_metrics("c", { cpu = "2", memory = "4Gi" }),
        node_metrics("e", { cpu = "3" }),   -- CPU measured only
      },
    }
  end)
  teardown(function() cluster:close() end)

  it("scores 1 - (mu + sigma) / 2 of the riskier resource", function()
    local p = T.plugin("LoadVariationRiskBalancing")
    local r = T.cycle(p, cluster, T.pod { name = "web", requests = { cpu = "1", memory = "1Gi" } })
    -- e: cpu only, mu = (3000 + 1000) / 4000 = 1 -> 50; the max of (50, 0) -> 50
    assert.are.same({ a = 75, b = 69, c = 50, d = 0, e = 50 }, r.scores)
    assert.are.same(r.raw, r.scores)   -- no NormalizeScore
  end)

  it("applies the margin and the sensitivity to the deviation (README's risk formula)", function()
    -- avg 40%, std 16% of 1000, request 100: mu = (400 + 100) / 1000 = 0.5.
    local p = T.plugin("LoadVariationRiskBalancing", { safeVarianceMargin = 1, safeVarianceSensitivity = 2 })
    -- sigma = 0.16 ^ (1/2) = 0.4 -> risk 0.45 -> 55
    assert.is_true(math.abs(p:resource_score(40, 16, 1000, 100) - 55) < 1e-9)
    local q = T.plugin("LoadVariationRiskBalancing", { safeVarianceMargin = 2, safeVarianceSensitivity = 2 })
    -- sigma = 0.4 * 2 = 0.8 -> risk 0.65 -> 35
    assert.is_true(math.abs(q:resource_score(40, 16, 1000, 100) - 35) < 1e-9)
    -- margin 4: sigma 1.6 clamps to 1 -> risk 0.75 -> 25
    local m = T.plugin("LoadVariationRiskBalancing", { safeVarianceMargin = 4, safeVarianceSensitivity = 2 })
    assert.is_true(math.abs(m:resource_score(40, 16, 1000, 100) - 25) < 1e-9)
    -- defaults (1, 1): sigma = 0.16 -> risk 0.33 -> 67
    local d = T.plugin("LoadVariationRiskBalancing")
    assert.is_true(math.abs(d:resource_score(40, 16, 1000, 100) - 67) < 1e-9)
    -- capacity 0 -> 0
    assert.are.equal(0, d:resource_score(40, 16, 0, 100))
  end)

  it("reads average and deviation from the node's annotations", function()
    -- g: 4 cpu, 8Gi; cpu-average 40, cpu-stddev 16, memory-average 10 (no stddev: 0). Pod 400m, 1Gi.
    --   cpu: usedAvg 1600, std 640; mu = (1600 + 400) / 4000 = 0.5, sigma = 0.16
    --        defaults (1, 1): risk 0.33 -> 67; sensitivity 2: sigma 0.4 -> risk 0.45 -> 55
    --   memory: usedAvg 0.8Gi; mu = 1.8 / 8 = 0.225 -> risk 0.1125 -> 88.75; min -> cpu's
    local annotated = T.cluster { nodes = { { name = "g", allocatable = { cpu = "4", memory = "8Gi" }, annotations = {
      ["trimaran.luasched.io/cpu-average"] = "40", ["trimaran.luasched.io/cpu-stddev"] = "16",
      ["trimaran.luasched.io/memory-average"] = "10" } } } }
    local pod = T.pod { name = "web", requests = { cpu = "400m", memory = "1Gi" } }
    -- one node: a cycle would not score it (one feasible node is taken at once), so T.score
    assert.are.equal(67, T.score(T.plugin("LoadVariationRiskBalancing"), annotated, pod, "g"))
    local s2 = T.plugin("LoadVariationRiskBalancing", { safeVarianceSensitivity = 2 })
    assert.are.equal(55, T.score(s2, annotated, pod, "g"))
    annotated:close()
  end)

  it("requests the regular containers' sum, raised to the largest init container, plus overhead", function()
    local P = T.plugin("LoadVariationRiskBalancing")
    local cpu, mem = P.pod_request(T.pod { name = "p", overhead = { cpu = "100m", memory = "64Mi" },
      containers = { { cpu = "500m", memory = "1Gi" }, { cpu = "500m" } },
      init_containers = { { cpu = "1500m", memory = "512Mi" } } })
    assert.are.equal(1600, cpu)                        -- max(1000, 1500) + 100
    assert.are.equal((1024 + 64) * 1024 * 1024, mem)   -- max(1Gi, 512Mi) + 64Mi
  end)

  it("takes negative args as upstream's defaults and validates their type", function()
    local n = T.plugin("LoadVariationRiskBalancing", { safeVarianceMargin = -1, safeVarianceSensitivity = -3 })
    assert.are.equal(1, n.margin)
    assert.are.equal(1, n.sensitivity)
    local P = T.plugin("LoadVariationRiskBalancing")
    assert.is_nil(P.validate(ls.merge_args(P.defaults, { safeVarianceMargin = 0.5 })))
    assert.are.equal("safeVarianceSensitivity: must be a finite number, got inf",
      P.validate(ls.merge_args(P.defaults, { safeVarianceSensitivity = math.huge })))
  end)

  it("registers no events (a Score plugin rejects nothing)", function()
    assert.are.same({}, T.events(T.plugin("LoadVariationRiskBalancing")))
  end)
end)
