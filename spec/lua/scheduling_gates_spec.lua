-- SchedulingGates (upstream schedulinggates/scheduling_gates.go): PreEnqueue
-- keeps a pod with spec.schedulingGates out of the queue with
-- UnschedulableAndUnresolvable "waiting for scheduling gates: %v" over the gate
-- names (Go prints a []string as [a b c]).
local T = require("luasched.testing")
local ls = require("luasched")

describe("SchedulingGates", function()
  local plugin
  setup(function() plugin = T.plugin("SchedulingGates") end)

  local function enqueue(gates)
    return T.result(plugin:pre_enqueue(T.pod { name = "p", scheduling_gates = gates }))
  end

  it("lets a pod without gates in", function()
    local r = enqueue(nil)
    assert.are.equal(ls.SUCCESS, r.code)
    assert.is_nil(r.status)
  end)

  it("holds a pod with one gate", function()
    local r = enqueue({ "example.com/quota" })
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal("waiting for scheduling gates: [example.com/quota]", r.message)
    assert.are.same({ "waiting for scheduling gates: [example.com/quota]" }, r.reasons)
  end)

  it("lists several gates in the pod's order, separated by spaces", function()
    local r = enqueue({ "b.io/second", "a.io/first", "c.io/third" })
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal("waiting for scheduling gates: [b.io/second a.io/first c.io/third]", r.message)
  end)

  it("reuses one status per list of gates", function()
    assert.are.equal(enqueue({ "g1" }).status, enqueue({ "g1" }).status)
    assert.are.equal(enqueue({ "g1", "g2" }).status, enqueue({ "g1", "g2" }).status)
    assert.are_not.equal(enqueue({ "g1" }).status, enqueue({ "g2" }).status)
    assert.are_not.equal(enqueue({ "g1", "g2" }).status, enqueue({ "g2", "g1" }).status)
  end)

  it("is a PreEnqueue plugin only", function()
    assert.is_function(plugin.pre_enqueue)
    assert.is_nil(plugin.filter)
    assert.is_nil(plugin.pre_filter)
  end)
  describe("end to end (luasched simulate, built-in default profile)", function()
    local sim = require("sim_helper")

    local function simulate(yaml)
      local path = sim.write(os.tmpname(), yaml)
      local out = sim.run({ "simulate", path }, { merge = true }).out
      os.remove(path)
      return out
    end

    local NODE = [[
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
]]

    it("keeps a gated pod out of the queue with the message", function()
      local out = simulate(NODE .. [[
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: default}
spec:
  schedulingGates: [{name: example.com/a}, {name: example.com/b}]
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: free, namespace: default}
spec: {containers: [{name: c, image: x}]}
]])
      assert.matches("default/gated: gated: waiting for scheduling gates: [example.com/a example.com/b]\n",
        out, 1, true)
      assert.matches("default/free: bound to n1\n", out, 1, true)
      assert.matches("summary: 1 nodes, 2 pods: 1 bound, 0 unschedulable, 0 already running, 1 gated, 0 not ours",
        out, 1, true)
    end)
  end)
end)
