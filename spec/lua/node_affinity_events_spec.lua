-- NodeAffinity's events table and queueing hint (upstream v1.37: Node
-- Add|UpdateNodeLabel -> Skip when addedAffinity or the pod's selector does
-- not match the new node; Queue for an added node; for an update, Queue only
-- when the old node did not match the pod's selector/affinity).
local T = require("luasched.testing")
local ls = require("luasched")

local ZONE_A = {
  nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = {
    { matchExpressions = { { key = "zone", operator = "In", values = { "a" } } } } } } },
}

describe("NodeAffinity events", function()
  local p
  setup(function() p = T.plugin("NodeAffinity") end)

  it("registers node additions and label changes", function()
    assert.are.same({ "Node:Add|UpdateNodeLabel" }, T.events(p))
    assert.is_nil(T.hint(p, "Node", "UpdateNodeTaint", T.pod {}, T.node {}, T.node {}))
  end)

  local pod = T.pod { name = "web", affinity = ZONE_A, node_selector = { disk = "ssd" } }
  local a_ssd = T.node { name = "n", labels = { zone = "a", disk = "ssd" } }
  local a_ssd_gpu = T.node { name = "n", labels = { zone = "a", disk = "ssd", gpu = "1" } }
  local a_hdd = T.node { name = "n", labels = { zone = "a", disk = "hdd" } }
  local b_ssd = T.node { name = "n", labels = { zone = "b", disk = "ssd" } }

  it("queues an added node matching selector and affinity, skips one that does not", function()
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, a_ssd))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, b_ssd))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, a_hdd))
  end)

  it("queues a label update only from unmatched to matched", function()
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", pod, a_hdd, a_ssd))
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", pod, b_ssd, a_ssd))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", pod, a_ssd, a_ssd_gpu))
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", pod, a_ssd, b_ssd))
  end)

  it("skips a node addedAffinity rejects, even when the pod matches", function()
    local added = T.plugin("NodeAffinity", { addedAffinity = ZONE_A.nodeAffinity })
    local plain = T.pod { name = "plain" }
    assert.are.equal(ls.QUEUE_SKIP, T.hint(added, "Node", "Add", plain, nil, b_ssd))
    assert.are.equal(ls.QUEUE, T.hint(added, "Node", "Add", plain, nil, a_hdd))
    -- the pod itself matched before: upstream's hint checks only the pod's
    -- own affinity for the old node, so addedAffinity turning true is a Skip
    assert.are.equal(ls.QUEUE_SKIP, T.hint(added, "Node", "UpdateNodeLabel", plain, b_ssd, a_ssd))
  end)
end)
