-- DefaultPreemption with asynchronous preemption (upstream v1.37,
-- SchedulerAsyncPreemption on): PreEnqueue holds a pod whose victims' deletions
-- are being issued ("waiting for the preemption for this pod to be finished",
-- UnschedulableAndUnresolvable); PostFilter on such a pod starts no second
-- preemption and keeps its nomination (Success); EventsToRegister is
-- AssignedPod Delete with a hint that always says Skip.
-- The framework side (the deletions after the cycle, a failed one) is in
-- spec/scenarios/default_preemption-async-failed-deletion.yaml; here the
-- handle's answer is given by the spec.
local T = require("luasched.testing")
local ls = require("luasched")

describe("DefaultPreemption async preemption", function()
  local p, preempting
  setup(function()
    p = T.plugin("DefaultPreemption")
    p.handle = {
      preempting = function(_, _) return preempting end,
      nominated_node_of = function(_, _) return "n1" end,
    }
  end)

  it("PreEnqueue holds a preempting pod, lets others through", function()
    local pod = T.pod { name = "high", priority = 100 }
    preempting = true
    local r = T.result(p:pre_enqueue(pod))
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.code)
    assert.are.equal("waiting for the preemption for this pod to be finished", r.message)
    preempting = false
    assert.is_nil(p:pre_enqueue(pod))
  end)

  it("PostFilter starts no second preemption and keeps the nomination", function()
    preempting = true
    local st, node = p:post_filter({}, T.pod { name = "high", priority = 100 })
    assert.is_nil(st)
    assert.are.equal("n1", node)
  end)

  it("registers assigned pod deletions with a Skip hint", function()
    assert.are.same({ "AssignedPod:Delete" }, T.events(p))
    local victim = T.pod_object { name = "v" }
    victim.spec.nodeName = "n1"
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", T.pod {}, T.pod(victim), nil))
  end)
end)
