-- TaintToleration (upstream tainttoleration/taint_toleration.go): Filter on
-- NoSchedule/NoExecute taints, Score = number of untolerated PreferNoSchedule
-- taints, NormalizeScore = DefaultNormalizeScore(100, reverse):
-- max == 0 -> 100 everywhere, else 100 - raw * 100 / max (int64 division).
local T = require("luasched.testing")
local ls = require("luasched")

local function taint(key, value, effect) return { key = key, value = value, effect = effect } end

describe("TaintToleration", function()
  local plugin
  setup(function() plugin = T.plugin("TaintToleration") end)

  describe("filter", function()
    local cluster
    setup(function()
      cluster = T.cluster {
        nodes = {
          { name = "clean" },
          { name = "gpu", taints = { taint("dedicated", "gpu", "NoSchedule") } },
          { name = "gpu2", taints = { taint("dedicated", "gpu", "NoSchedule") } },
          { name = "novalue", taints = { taint("maintenance", nil, "NoExecute") } },
          { name = "soft", taints = { taint("spot", "true", "PreferNoSchedule") } },
          { name = "multi", taints = {
              taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute"), taint("c", "3", "NoSchedule") } },
        },
      }
    end)
    teardown(function() cluster:close() end)

    local function run(node, tolerations)
      return T.filter(plugin, cluster, T.pod { name = "p", tolerations = tolerations }, node)
    end

    it("passes a node without taints", function()
      assert.are.equal(ls.SUCCESS, run("clean").code)
    end)

    it("rejects an untolerated NoSchedule taint without naming it (v1.35 message)", function()
      local r = run("gpu")
      assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
      assert.are.equal("node(s) had untolerated taint(s)", r.message)
    end)

    it("rejects an untolerated NoExecute taint without a value", function()
      local r = run("novalue")
      assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
      assert.are.equal("node(s) had untolerated taint(s)", r.message)
    end)

    it("ignores PreferNoSchedule taints", function()
      assert.are.equal(ls.SUCCESS, run("soft").code)
    end)

    it("passes when the taint is tolerated (Equal with value, Exists)", function()
      assert.are.equal(ls.SUCCESS,
        run("gpu", { { key = "dedicated", operator = "Equal", value = "gpu", effect = "NoSchedule" } }).code)
      assert.are.equal(ls.SUCCESS, run("gpu", { { key = "dedicated", operator = "Exists" } }).code)
      assert.are.equal(ls.SUCCESS, run("novalue", { { operator = "Exists" } }).code)
    end)

    it("rejects a toleration with the wrong value or effect", function()
      assert.are.equal("node(s) had untolerated taint(s)",
        run("gpu", { { key = "dedicated", operator = "Equal", value = "cpu" } }).message)
      assert.are.equal("node(s) had untolerated taint(s)",
        run("gpu", { { key = "dedicated", operator = "Exists", effect = "NoExecute" } }).message)
    end)

    it("rejects while any filtering taint is left untolerated", function()
      -- a is tolerated, b and c are not; then only c; then none
      local r = run("multi", { { key = "a", operator = "Exists" } })
      assert.are.equal("node(s) had untolerated taint(s)", r.message)
      r = run("multi", { { key = "a", operator = "Exists" }, { key = "b", operator = "Exists" } })
      assert.are.equal("node(s) had untolerated taint(s)", r.message)
      r = run("multi", { { key = "a", operator = "Exists" }, { key = "b", operator = "Exists" },
                         { key = "c", operator = "Exists" } })
      assert.are.equal(ls.SUCCESS, r.code)
    end)

    it("builds one status and reuses it for every node", function()
      local r = T.cycle(plugin, cluster, T.pod { name = "p" })
      assert.are.equal(r.filter.gpu.status, r.filter.gpu2.status)
      assert.are.equal(r.filter.gpu.status, r.filter.novalue.status)
      assert.are.same({ "clean", "soft" }, r.feasible)
    end)
  end)

  describe("score and normalize_score", function()
    local cluster
    setup(function()
      cluster = T.cluster {
        nodes = {
          { name = "n0" },                                                    -- raw 0
          { name = "n1", taints = { taint("spot", "true", "PreferNoSchedule") } },   -- raw 1
          { name = "n2", taints = { taint("spot", "true", "PreferNoSchedule"),
                                    taint("old", "yes", "PreferNoSchedule") } },     -- raw 2
          { name = "n3", taints = { taint("zone", "b", "PreferNoSchedule"),
                                    taint("spot", "true", "PreferNoSchedule"),
                                    taint("old", "yes", "PreferNoSchedule") } },     -- raw 3
        },
      }
    end)
    teardown(function() cluster:close() end)

    it("counts untolerated PreferNoSchedule taints and reverses the scale", function()
      local r = T.cycle(plugin, cluster, T.pod { name = "p" })
      assert.are.same({ n0 = 0, n1 = 1, n2 = 2, n3 = 3 }, r.raw)
      -- max = 3: n0 100 - 0*100/3 = 100; n1 100 - 100/3 = 100 - 33 = 67;
      -- n2 100 - 200/3 = 100 - 66 = 34; n3 100 - 300/3 = 0
      assert.are.same({ n0 = 100, n1 = 67, n2 = 34, n3 = 0 }, r.scores)
    end)

    it("does not count taints tolerated by PreferNoSchedule or empty-effect tolerations", function()
      local pod = T.pod { name = "p", tolerations = {
        { key = "spot", operator = "Equal", value = "true", effect = "PreferNoSchedule" },
        { key = "old", operator = "Exists" },
      } }
      local r = T.cycle(plugin, cluster, pod)
      -- n1: spot tolerated -> 0; n2: spot, old tolerated -> 0; n3: zone left -> 1
      assert.are.same({ n0 = 0, n1 = 0, n2 = 0, n3 = 1 }, r.raw)
      -- max = 1: 100 - raw*100/1
      assert.are.same({ n0 = 100, n1 = 100, n2 = 100, n3 = 0 }, r.scores)
    end)

    it("does not let NoSchedule tolerations count against PreferNoSchedule taints", function()
      local pod = T.pod { name = "p", tolerations = {
        { key = "spot", operator = "Exists", effect = "NoSchedule" },
      } }
      local r = T.cycle(plugin, cluster, pod)
      assert.are.same({ n0 = 0, n1 = 1, n2 = 2, n3 = 3 }, r.raw)
    end)

    it("gives every node 100 when no node has an untolerated PreferNoSchedule taint", function()
      local r = T.cycle(plugin, cluster, T.pod { name = "p", tolerations = { { operator = "Exists" } } })
      assert.are.same({ n0 = 0, n1 = 0, n2 = 0, n3 = 0 }, r.raw)
      -- max = 0 and reverse: every node MaxNodeScore
      assert.are.same({ n0 = 100, n1 = 100, n2 = 100, n3 = 100 }, r.scores)
    end)

    it("scores one node without PreScore having run", function()
      assert.are.equal(2, T.score(plugin, cluster, T.pod { name = "p" }, "n2"))
    end)
  end)
end)
