-- TaintToleration's events table and queueing hints (upstream v1.37: Node
-- Add|UpdateNodeTaint -> Queue only when the node had a NoSchedule/NoExecute
-- taint the pod does not tolerate (an added node counts as having had one)
-- and has none now; TargetPod UpdatePodToleration -> Queue for the pod itself).
local T = require("luasched.testing")
local ls = require("luasched")

local function taint(key, effect) return { key = key, value = "x", effect = effect } end

describe("TaintToleration events", function()
  local p
  setup(function() p = T.plugin("TaintToleration") end)

  it("registers upstream's events", function()
    assert.are.same({ "Node:Add|UpdateNodeTaint", "TargetPod:UpdatePodToleration" }, T.events(p))
  end)

  describe("node added or its taints changed", function()
    local pod = T.pod { name = "web", tolerations = { { key = "ok", operator = "Exists" } } }
    local clean = T.node { name = "n" }
    local blocked = T.node { name = "n", taints = { taint("gpu", "NoSchedule") } }
    local evicting = T.node { name = "n", taints = { taint("gpu", "NoExecute") } }
    local tolerated = T.node { name = "n", taints = { taint("ok", "NoSchedule") } }
    local soft = T.node { name = "n", taints = { taint("gpu", "PreferNoSchedule") } }

    it("queues an added node whose taints the pod tolerates", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, clean))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, tolerated))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, soft))   -- PreferNoSchedule never blocks
    end)
    it("skips an added node with an untolerated NoSchedule or NoExecute taint", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, blocked))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, evicting))
    end)
    it("queues the removal of the untolerated taint", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeTaint", pod, blocked, clean))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeTaint", pod, evicting, tolerated))
    end)
    it("skips an update of a node that was already tolerated or still is not", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, clean, tolerated))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, blocked, evicting))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", pod, clean, blocked))
    end)
  end)

  it("queues the pod's own toleration change, skips another pod's", function()
    local pod = T.pod { name = "web", uid = "u-web" }
    local tolerant = T.pod { name = "web", uid = "u-web", tolerations = { { key = "gpu", operator = "Exists" } } }
    local other = T.pod { name = "other", uid = "u-other" }
    assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodToleration", pod, pod, tolerant))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "TargetPod", "UpdatePodToleration", pod, other, other))
  end)
end)
