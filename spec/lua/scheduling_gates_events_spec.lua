-- SchedulingGates' events table and queueing hint (upstream v1.37: TargetPod
-- UpdatePodSchedulingGatesEliminated -> Queue when it is the pod itself).
local T = require("luasched.testing")
local ls = require("luasched")

describe("SchedulingGates events", function()
  local p
  setup(function() p = T.plugin("SchedulingGates") end)

  it("registers the elimination of the pod's gates", function()
    assert.are.same({ "TargetPod:UpdatePodSchedulingGatesEliminated" }, T.events(p))
  end)

  it("queues the pod whose gates are gone, skips another pod", function()
    local gated = T.pod { name = "g", uid = "u-g", scheduling_gates = { "example.com/a" } }
    local open = T.pod { name = "g", uid = "u-g" }
    local other = T.pod { name = "o", uid = "u-o" }
    assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodSchedulingGatesEliminated", gated, gated, open))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "TargetPod", "UpdatePodSchedulingGatesEliminated", gated, other, other))
  end)
end)
