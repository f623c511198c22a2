-- NodeUnschedulable's events table and queueing hints (upstream v1.37:
-- Node Add|UpdateNodeTaint -> isSchedulableAfterNodeChange, TargetPod
-- UpdatePodToleration -> the pod now tolerates
-- node.kubernetes.io/unschedulable:NoSchedule).
local T = require("luasched.testing")
local ls = require("luasched")

describe("NodeUnschedulable events", function()
  local p
  setup(function() p = T.plugin("NodeUnschedulable") end)

  it("registers upstream's events", function()
    assert.are.same({ "Node:Add|UpdateNodeTaint", "TargetPod:UpdatePodToleration" }, T.events(p))
  end)

  describe("node added or its taints changed", function()
    local pod = T.pod { name = "web" }
    local cordoned, open = T.node { name = "n", unschedulable = true }, T.node { name = "n" }
    it("queues an added schedulable node", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, open))
    end)
    it("skips an added cordoned node", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, cordoned))
    end)
    it("queues an uncordon (unschedulable true -> false)", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeTaint", pod, cordoned, open))
    end)
    it("skips a cordon and an update of a node that stays schedulable", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, open, cordoned))
      local tainted = T.node { name = "n", taints = { { key = "k", effect = "NoSchedule" } } }
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, open, tainted))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, cordoned, cordoned))
    end)
    it("does not register label or allocatable changes", function()
      assert.is_nil(T.hint(p, "Node", "UpdateNodeLabel", pod, open, open))
      assert.is_nil(T.hint(p, "Node", "UpdateNodeAllocatable", pod, open, open))
    end)
  end)

  describe("the pod's tolerations changed", function()
    local before = T.pod { name = "web" }
    it("queues when the pod now tolerates the unschedulable taint", function()
      local after = T.pod { name = "web", tolerations = {
        { key = "node.kubernetes.io/unschedulable", operator = "Exists", effect = "NoSchedule" } } }
      assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodToleration", before, before, after))
    end)
    it("skips an unrelated toleration", function()
      local after = T.pod { name = "web", tolerations = { { key = "gpu", operator = "Exists" } } }
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "TargetPod", "UpdatePodToleration", before, before, after))
    end)
  end)
end)
