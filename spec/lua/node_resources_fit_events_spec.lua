-- NodeResourcesFit's events table and queueing hints (upstream v1.37 with
-- InPlacePodVerticalScaling on):
-- * AssignedPod Delete -> Skip when the deleted pod was neither bound nor
--   nominated, else Queue;
-- * Node Add|UpdateNodeAllocatable -> Skip unless the pod fits the node alone
--   (isFit: 1 pod slot, each requested resource <= allocatable); an added node
--   queues; an update queues only when allowed pods or the allocatable of a
--   resource the pod requests grew (haveAnyRequestedResourcesIncreased);
-- * AssignedPod UpdatePodScaleDown -> Queue when the bound pod's request of a
--   resource the pod requests went down; TargetPod UpdatePodScaleDown -> Queue.
local T = require("luasched.testing")
local ls = require("luasched")

local function node(cpu, mem, pods, gpu)
  return T.node { name = "n", allocatable = { cpu = cpu, memory = mem, pods = pods, ["example.com/gpu"] = gpu } }
end

local function bound(name, requests, node_name, nominated)
  local o = T.pod_object { name = name, requests = requests }
  o.spec.nodeName = node_name
  if nominated then o.status = { nominatedNodeName = nominated } end
  return T.pod(o)
end

describe("NodeResourcesFit events", function()
  local p
  setup(function() p = T.plugin("NodeResourcesFit") end)

  it("registers upstream's events", function()
    assert.are.same({ "AssignedPod:Delete", "Node:Add|UpdateNodeAllocatable", "AssignedPod:UpdatePodScaleDown",
      "TargetPod:UpdatePodScaleDown" }, T.events(p))
    assert.is_nil(T.hint(p, "Node", "UpdateNodeLabel", T.pod {}, node("1", "1Gi"), node("2", "1Gi")))
  end)

  local pod = T.pod { name = "web", requests = { cpu = "2", memory = "1Gi" } }

  describe("an assigned pod deleted", function()
    it("queues a bound or a nominated pod", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", pod, bound("b", { cpu = "1" }, "n1"), nil))
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", pod, bound("m", { cpu = "1" }, nil, "n1"), nil))
    end)
    it("skips a pod that was neither", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", pod, bound("x", { cpu = "1" }), nil))
    end)
  end)

  describe("a node added or its allocatable changed", function()
    it("queues an added node the pod fits alone", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", pod, nil, node("2", "1Gi")))   -- exactly enough
    end)
    it("skips an added node too small or without a pod slot", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, node("1999m", "8Gi")))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, node("4", "1023Mi")))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod, nil, node("4", "8Gi", "0")))
    end)
    it("checks extended resources the pod requests", function()
      local gpu_pod = T.pod { name = "g", requests = { cpu = "1", ["example.com/gpu"] = "1" } }
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", gpu_pod, nil, node("4", "8Gi")))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", gpu_pod, nil, node("4", "8Gi", nil, "2")))
    end)
    it("queues an update that grew a requested resource or the pod slots", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("2", "1Gi"), node("3", "1Gi")))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("2", "1Gi"), node("2", "2Gi")))
      assert.are.equal(ls.QUEUE,
        T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("2", "1Gi", "10"), node("2", "1Gi", "11")))
    end)
    it("skips an update that grew nothing the pod requests, or still does not fit", function()
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("2", "1Gi"), node("2", "1Gi", nil, "4")))
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("4", "2Gi"), node("3", "2Gi")))
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "Node", "UpdateNodeAllocatable", pod, node("1", "1Gi"), node("1500m", "1Gi")))
    end)
  end)

  describe("a pod scaled down", function()
    it("queues a bound pod that released a resource the pod requests", function()
      local before, after = bound("b", { cpu = "2" }, "n1"), bound("b", { cpu = "1" }, "n1")
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "UpdatePodScaleDown", pod, before, after))
    end)
    it("skips a release of a resource the pod does not request, or an unbound pod", function()
      local cpu_only = T.pod { name = "c", requests = { cpu = "1" } }
      local before = bound("b", { cpu = "2", memory = "2Gi" }, "n1")
      local after = bound("b", { cpu = "2", memory = "1Gi" }, "n1")
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodScaleDown", cpu_only, before, after))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodScaleDown", pod,
        bound("u", { cpu = "2" }), bound("u", { cpu = "1" })))
    end)
    it("queues the pod's own scale-down", function()
      local small = T.pod { name = "web", uid = pod.uid ~= 0 and ls.str(pod.uid) or nil, requests = { cpu = "1" } }
      assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodScaleDown", pod, pod, small))
    end)
  end)
end)
