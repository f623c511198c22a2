-- NodePorts' events table and queueing hint (upstream v1.37: AssignedPod
-- Delete -> isSchedulableAfterPodDeleted: Skip unless the deleted pod was
-- bound or nominated and held a host port conflicting with a wanted one
-- (HostPortInfo.CheckConflict: same protocol and port, and 0.0.0.0 on either
-- side or the same IP); Node Add without hint).
local T = require("luasched.testing")
local ls = require("luasched")

local function pod_with_ports(name, ports, node, nominated)
  local o = T.pod_object { name = name }
  o.spec.containers[1].ports = ports
  o.spec.nodeName = node
  if nominated then o.status = { nominatedNodeName = nominated } end
  return T.pod(o)
end

describe("NodePorts events", function()
  local p
  setup(function() p = T.plugin("NodePorts") end)

  it("registers assigned pod deletions and node additions", function()
    assert.are.same({ "AssignedPod:Delete", "Node:Add" }, T.events(p))
    assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", T.pod {}, nil, T.node {}))
  end)

  local want = pod_with_ports("want", { { containerPort = 80, hostPort = 8080 } })

  it("queues the deletion of a bound pod holding the port", function()
    local holder = pod_with_ports("holder", { { containerPort = 80, hostPort = 8080 } }, "n1")
    assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", want, holder, nil))
    local on_ip = pod_with_ports("ip", { { containerPort = 80, hostPort = 8080, hostIP = "10.0.0.1" } }, "n1")
    assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", want, on_ip, nil))   -- wanted 0.0.0.0
  end)

  it("queues the deletion of a nominated pod holding the port", function()
    local nominated = pod_with_ports("nom", { { containerPort = 80, hostPort = 8080 } }, nil, "n1")
    assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", want, nominated, nil))
  end)

  it("skips an unscheduled pod, a pod without host ports, other ports", function()
    local pending = pod_with_ports("pending", { { containerPort = 80, hostPort = 8080 } })
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", want, pending, nil))
    local portless = T.pod_object { name = "portless" }
    portless.spec.nodeName = "n1"
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", want, T.pod(portless), nil))
    local other_port = pod_with_ports("o", { { containerPort = 80, hostPort = 9090 } }, "n1")
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", want, other_port, nil))
    local udp = pod_with_ports("u", { { containerPort = 80, hostPort = 8080, protocol = "UDP" } }, "n1")
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", want, udp, nil))
    local want_ip = pod_with_ports("w", { { containerPort = 80, hostPort = 8080, hostIP = "10.0.0.2" } })
    local other_ip = pod_with_ports("i", { { containerPort = 80, hostPort = 8080, hostIP = "10.0.0.1" } }, "n1")
    assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", want_ip, other_ip, nil))
  end)
end)
