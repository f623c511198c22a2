-- NodeName's events table and queueing hint (upstream v1.37: Node Add ->
-- isSchedulableAfterNodeAdd: Queue when the pod names no node or this one).
local T = require("luasched.testing")
local ls = require("luasched")

describe("NodeName events", function()
  local p
  setup(function() p = T.plugin("NodeName") end)

  it("registers only node additions", function()
    assert.are.same({ "Node:Add" }, T.events(p))
    assert.is_nil(T.hint(p, "Node", "UpdateNodeLabel", T.pod {}, nil, T.node {}))
  end)

  it("queues the node the pod names", function()
    local unnamed = T.pod_object { name = "p" }
    unnamed.spec.nodeName = ""
    local pod = T.pod(unnamed)
    local named = T.pod_object { name = "q" }
    named.spec.nodeName = "wanted"
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", T.pod(named), nil, T.node { name = "wanted" }))
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, T.node { name = "any" }))
  end)

  it("skips another node", function()
    local named = T.pod_object { name = "q" }
    named.spec.nodeName = "wanted"
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", T.pod(named), nil, T.node { name = "other" }))
  end)
end)
