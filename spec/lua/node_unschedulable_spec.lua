-- NodeUnschedulable (upstream nodeunschedulable/node_unschedulable.go): a node
-- with spec.unschedulable rejects pods that do not tolerate the taint
-- {key: node.kubernetes.io/unschedulable, effect: NoSchedule}.
local T = require("luasched.testing")
local ls = require("luasched")

local MSG = "node(s) were unschedulable"
local KEY = "node.kubernetes.io/unschedulable"

describe("NodeUnschedulable", function()
  local cluster, plugin

  setup(function()
    cluster = T.cluster {
      nodes = { { name = "ready" }, { name = "cordoned", unschedulable = true } },
    }
    plugin = T.plugin("NodeUnschedulable")
  end)

  teardown(function() cluster:close() end)

  local function on_cordoned(tolerations)
    return T.filter(plugin, cluster, T.pod { name = "p", tolerations = tolerations }, "cordoned")
  end

  it("passes a schedulable node", function()
    local r = T.filter(plugin, cluster, T.pod { name = "p" }, "ready")
    assert.are.equal(ls.SUCCESS, r.code)
  end)

  it("rejects an unschedulable node as UnschedulableAndUnresolvable", function()
    local r = on_cordoned(nil)
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal(MSG, r.message)
    assert.are.same({ MSG }, r.reasons)
  end)

  it("lets a pod that tolerates the unschedulable taint (Exists) through", function()
    local r = on_cordoned { { key = KEY, operator = "Exists", effect = "NoSchedule" } }
    assert.are.equal(ls.SUCCESS, r.code)
  end)

  it("lets a pod with an Equal toleration and no value through (the taint has no value)", function()
    local r = on_cordoned { { key = KEY, operator = "Equal", effect = "NoSchedule" } }
    assert.are.equal(ls.SUCCESS, r.code)
    r = on_cordoned { { key = KEY, operator = "Equal", value = "", effect = "NoSchedule" } }
    assert.are.equal(ls.SUCCESS, r.code)
  end)

  it("lets a pod whose toleration has no effect (all effects) through", function()
    local r = on_cordoned { { key = KEY, operator = "Exists" } }
    assert.are.equal(ls.SUCCESS, r.code)
  end)

  it("lets a pod that tolerates every taint (empty key, Exists) through", function()
    local r = on_cordoned { { operator = "Exists" } }
    assert.are.equal(ls.SUCCESS, r.code)
  end)

  it("rejects a toleration for another effect", function()
    local r = on_cordoned { { key = KEY, operator = "Exists", effect = "NoExecute" } }
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal(MSG, r.message)
  end)

  it("rejects a toleration for another key or value", function()
    assert.are.equal(MSG, on_cordoned({ { key = "other", operator = "Exists" } }).message)
    assert.are.equal(MSG, on_cordoned({ { key = KEY, operator = "Equal", value = "x" } }).message)
  end)

  it("filters the nodes in a whole cycle", function()
    local r = T.cycle(plugin, cluster, T.pod { name = "p" })
    assert.are.same({ "ready" }, r.feasible)
    assert.are.equal(MSG, r.filter.cordoned.message)
  end)
end)
