-- NodeResourceTopologyMatch (scheduler-plugins pkg/noderesourcetopology):
-- single-numa-node Filter at container and pod scope with upstream's
-- messages, Score strategies, the over-reserve of Reserve. Worked by hand:
--   n1 (container scope): node-0 {cpu 4, memory 8Gi, example.com/nic 1}, node-1 {cpu 8, memory 16Gi}
--   n2 (pod scope):       node-0 {cpu 6, memory 8Gi}, node-1 {cpu 6, memory 8Gi}
--   n3: policy best-effort (not handled: passes, scores 0); n4: no NodeResourceTopology (passes, 0)
-- g1: Guaranteed, one container cpu 6, memory 4Gi
--   Filter: n1 node-1 holds it; n2 node-0 holds it (cpu 6 >= 6).
--   LeastAllocated (cpu, memory weight 1; (avail - req) * 100 / avail, 0 when req > avail):
--     n1 node-0: cpu 0, mem 50 -> 25; node-1: cpu 25, mem 75 -> 50; lowest non-zero -> 25
--     n2 node-0 = node-1: cpu 0, mem 50 -> 25 -> 25
--   MostAllocated (req * 100 / avail): n1 node-0: 0, 50 -> 25; node-1: 75, 25 -> 50 -> 25;
--     n2: 100, 50 -> 75
--   BalancedAllocation (1 - sample variance of req/avail) * 100: n1 node-0 has 6/4 > 1 -> 0,
--     node-1 .75, .25: variance .125 -> 87 (the minimum starts at 0 and takes 87);
--     n2 1, .5: .125 -> 87
local T = require("luasched.testing")
local ls = require("luasched")

local KIND = "noderesourcetopologies.v1alpha2.topology.node.k8s.io"

local function zone(id, res)
  local list = {}
  for _, r in ipairs(res) do
    list[#list + 1] = { name = r[1], capacity = r[2], allocatable = r[2], available = r[2] }
  end
  return { name = "node-" .. id, type = "Node", resources = list }
end

local function nrt(node, policy, scope, zones)
  return {
    apiVersion = "topology.node.k8s.io/v1alpha2", kind = "NodeResourceTopology", metadata = { name = node },
    attributes = { { name = "topologyManagerPolicy", value = policy },
                   { name = "topologyManagerScope", value = scope } },
    zones = zones,
  }
end

local function guaranteed(name, containers, init)
  local list, inits = {}, nil
  for i, c in ipairs(containers) do list[i] = { requests = c, limits = c } end
  if init then
    inits = {}
    for i, c in ipairs(init) do inits[i] = { requests = c, limits = c } end
  end
  return T.pod { name = name, containers = list, init_containers = inits }
end

describe("NodeResourceTopologyMatch", function()
  local cluster
  local N2_ZONES = { zone(0, { { "cpu", "6" }, { "memory", "8Gi" } }),
                    zone(1, { { "cpu", "6" }, { "memory", "8Gi" } }) }
  before_each(function()
    local alloc = { cpu = "16", memory = "64Gi" }
    cluster = T.cluster { nodes = {
      { name = "n1", allocatable = { cpu = "16", memory = "64Gi", ["example.com/nic"] = "4" } },
      { name = "n2", allocatable = alloc }, { name = "n3", allocatable = alloc }, { name = "n4", allocatable = alloc },
    } }
    cluster:add_object(nrt("n1", "single-numa-node", "container", {
      zone(0, { { "cpu", "4" }, { "memory", "8Gi" }, { "example.com/nic", "1" } }),
      zone(1, { { "cpu", "8" }, { "memory", "16Gi" } }) }))
    cluster:add_object(nrt("n2", "single-numa-node", "pod", N2_ZONES))
    cluster:add_object(nrt("n3", "best-effort", "container", N2_ZONES))
  end)
  after_each(function() cluster:close() end)

  local function filters(p, pod)
    local r = T.cycle(p, cluster, pod)
    local out = {}
    for node, res in pairs(r.filter) do out[node] = res.code == ls.SUCCESS and "ok" or res.message end
    return out, r
  end

  it("fits a Guaranteed pod on one NUMA zone and scores LeastAllocated by default", function()
    local p = T.plugin("NodeResourceTopologyMatch")
    local f, r = filters(p, guaranteed("g1", { { cpu = "6", memory = "4Gi" } }))
    assert.are.same({ n1 = "ok", n2 = "ok", n3 = "ok", n4 = "ok" }, f)
    assert.are.same({ n1 = 25, n2 = 25, n3 = 0, n4 = 0 }, r.scores)
  end)

  it("scores MostAllocated and BalancedAllocation", function()
    local g1 = guaranteed("g1", { { cpu = "6", memory = "4Gi" } })
    local most = T.plugin("NodeResourceTopologyMatch", { scoringStrategy = { type = "MostAllocated" } })
    assert.are.same({ n1 = 25, n2 = 75, n3 = 0, n4 = 0 }, T.cycle(most, cluster, g1).scores)
    local bal = T.plugin("NodeResourceTopologyMatch", { scoringStrategy = { type = "BalancedAllocation" } })
    assert.are.same({ n1 = 87, n2 = 87, n3 = 0, n4 = 0 }, T.cycle(bal, cluster, g1).scores)
  end)

  it("weights the resources of LeastAllocated", function()
    -- cpu weight 3: n1 node-0 (0 * 3 + 50) / 4 = 12; node-1 (25 * 3 + 75) / 4 = 37 -> 12
    local p = T.plugin("NodeResourceTopologyMatch", { scoringStrategy = { type = "LeastAllocated",
      resources = { { name = "cpu", weight = 3 }, { name = "memory", weight = 1 } } } })
    assert.are.equal(12, T.cycle(p, cluster, guaranteed("g1", { { cpu = "6", memory = "4Gi" } })).scores.n1)
  end)

  it("rejects with upstream's messages at container and pod scope", function()
    local p = T.plugin("NodeResourceTopologyMatch")
    -- two containers of cpu 5: the first takes node-1 of n1 (8 -> 3), the second fits nowhere;
    -- n2 needs cpu 10 in one zone.
    local f = filters(p, guaranteed("g2", { { cpu = "5", memory = "1Gi" }, { cpu = "5", memory = "1Gi" } }))
    assert.are.same({ n1 = "cannot align container", n2 = "cannot align pod", n3 = "ok", n4 = "ok" }, f)
    -- an init container of cpu 10 fits no zone of n1
    f = filters(p, guaranteed("g3", { { cpu = "1", memory = "1Gi" } }, { { cpu = "10", memory = "1Gi" } }))
    assert.are.equal("cannot align init container", f.n1)
    assert.are.equal("cannot align pod", f.n2)   -- effective cpu max(1, 10) = 10 > 6
  end)

  it("checks only the amounts of a Guaranteed pod's cpu and memory", function()
    local p = T.plugin("NodeResourceTopologyMatch")
    -- Burstable, cpu 10: cpu always fits a zone when not Guaranteed; scores 100 everywhere.
    local f, r = filters(p, T.pod { name = "b", requests = { cpu = "10" } })
    assert.are.same({ n1 = "ok", n2 = "ok", n3 = "ok", n4 = "ok" }, f)
    assert.are.same({ n1 = 100, n2 = 100, n3 = 100, n4 = 100 }, r.scores)
    -- BestEffort with an extended resource is checked: nic 1 fits node-0 of n1, nic 2 nowhere.
    f = filters(p, T.pod { name = "nic1", requests = { ["example.com/nic"] = "1" } })
    assert.are.equal("ok", f.n1)
    f = filters(p, T.pod { name = "nic2", requests = { ["example.com/nic"] = "2" } })
    assert.are.equal("cannot align container", f.n1)
    -- a requested resource the node does not have at all fits no zone (n2 lists no nic)
    assert.are.equal("cannot align pod", f.n2)
  end)

  it("reserves the pod on every zone until the node's topology is reported again", function()
    local p = T.plugin("NodeResourceTopologyMatch")
    local g1 = guaranteed("g1", { { cpu = "6", memory = "4Gi" } })
    local r = T.cycle(p, cluster, g1)
    T.node_hook(p, "reserve", cluster, g1, "n2", r.state)
    local again = guaranteed("g1b", { { cpu = "6", memory = "4Gi" } })
    assert.are.equal("cannot align pod", (filters(p, again)).n2)      -- both zones now cpu 0
    T.node_hook(p, "unreserve", cluster, g1, "n2", r.state)
    assert.are.equal("ok", (filters(p, again)).n2)
    T.node_hook(p, "reserve", cluster, g1, "n2", r.state)
    -- n2's agent reports zone 1 with cpu 6 still free: the reservation is dropped with the old version
    cluster:add_object(nrt("n2", "single-numa-node", "pod", {
      zone(0, { { "cpu", "0" }, { "memory", "4Gi" } }), zone(1, { { "cpu", "6" }, { "memory", "8Gi" } }) }))
    assert.are.equal("ok", (filters(p, again)).n2)
  end)

  it("reads the deprecated topologyPolicies field", function()
    local obj = nrt("n4", "none", "container", N2_ZONES)
    obj.attributes = nil
    obj.topologyPolicies = { "SingleNUMANodePodLevel" }
    cluster:add_object(obj)
    local p = T.plugin("NodeResourceTopologyMatch")
    assert.are.equal("cannot align pod", (filters(p, guaranteed("big", { { cpu = "7", memory = "1Gi" } }))).n4)
  end)

  it("validates its args", function()
    local P = T.plugin("NodeResourceTopologyMatch")
    local function check(args) return P.validate(ls.merge_args(P.defaults, args)) end
    assert.is_nil(check({ scoringStrategy = { type = "BalancedAllocation" } }))
    assert.are.equal('scoringStrategy.type: Unsupported value: "LeastNUMANodes": supported values: '
      .. '"LeastAllocated", "MostAllocated", "BalancedAllocation"',
      check({ scoringStrategy = { type = "LeastNUMANodes" } }))
    assert.are.equal("scoringStrategy.resources[0].weight: Invalid value: 200: must be in the range [0, 100]",
      check({ scoringStrategy = { type = "LeastAllocated", resources = { { name = "cpu", weight = 200 } } } }))
  end)

  it("registers upstream's events", function()
    assert.are.same({ "Pod:Delete", "Node:Add|UpdateNodeAllocatable", KIND .. ":Add|Update" },
      T.events(T.plugin("NodeResourceTopologyMatch")))
  end)
end)
