-- NodeName (upstream nodename/node_name.go): Filter passes when spec.nodeName
-- is empty or names the node; otherwise UnschedulableAndUnresolvable.
local T = require("luasched.testing")
local ls = require("luasched")

local MSG = "node(s) didn't match the requested node name"

describe("NodeName", function()
  local cluster, plugin

  setup(function()
    cluster = T.cluster { nodes = { { name = "n1" }, { name = "n2" } } }
    plugin = T.plugin("NodeName")
  end)

  teardown(function() cluster:close() end)

  it("passes every node when the pod names none", function()
    local r = T.cycle(plugin, cluster, T.pod { name = "p" })
    assert.are.same({ "n1", "n2" }, r.feasible)
    assert.are.equal(ls.SUCCESS, r.filter.n1.code)
    assert.are.equal(ls.SUCCESS, r.filter.n2.code)
  end)

  it("passes only the named node", function()
    local pod = T.pod { name = "p", node_name = "n2" }
    local r = T.cycle(plugin, cluster, pod)
    assert.are.same({ "n2" }, r.feasible)
    assert.are.equal(ls.SUCCESS, r.filter.n2.code)
  end)

  it("rejects other nodes as UnschedulableAndUnresolvable with upstream's message", function()
    local pod = T.pod { name = "p", node_name = "n2" }
    local r = T.filter(plugin, cluster, pod, "n1")
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal("UnschedulableAndUnresolvable", r.code_name)
    assert.are.equal(MSG, r.message)
    assert.are.same({ MSG }, r.reasons)
  end)

  it("rejects every node when the named node does not exist", function()
    local r = T.cycle(plugin, cluster, T.pod { name = "p", node_name = "gone" })
    assert.are.same({}, r.feasible)
    assert.are.equal(MSG, r.filter.n1.message)
    assert.are.equal(MSG, r.filter.n2.message)
    -- one status object, built once
    assert.are.equal(r.filter.n1.status, r.filter.n2.status)
  end)
end)
