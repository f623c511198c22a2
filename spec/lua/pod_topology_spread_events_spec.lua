-- PodTopologySpread's events table and queueing hints (upstream v1.37), over
-- the pod's DoNotSchedule constraints:
-- * AssignedPod Add|UpdatePodLabel|Delete -> Skip unless the other pod is bound
--   in the pod's namespace (involvedInTopologySpreading); update: Queue when a
--   selector's match flips between the old and new labels; add/delete: Queue
--   when a selector matches the pod's labels.
-- * TargetPod UpdatePodLabel|UpdatePodToleration -> Queue when the pod's own
--   match flips, or its tolerations change with nodeTaintsPolicy Honor.
-- * Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint -> a node matches when it
--   has every topology key; update: Queue when that flips, or it matches and a
--   key's value or its taints changed; add/delete: Queue when it matches.
local T = require("luasched.testing")
local ls = require("luasched")

local function spread(policy)
  return { { maxSkew = 1, topologyKey = "zone", whenUnsatisfiable = "DoNotSchedule",
             labelSelector = { matchLabels = { app = "web" } }, nodeTaintsPolicy = policy } }
end

local function pod(name, labels, opts)
  opts = opts or {}
  local o = T.pod_object { name = name, uid = opts.uid, namespace = opts.ns, labels = labels,
                           tolerations = opts.tolerations }
  o.spec.topologySpreadConstraints = opts.constraints
  o.spec.nodeName = opts.node
  return T.pod(o)
end

describe("PodTopologySpread events", function()
  local p
  setup(function() p = T.plugin("PodTopologySpread") end)

  it("registers upstream's events", function()
    assert.are.same({ "AssignedPod:Add|UpdatePodLabel|Delete", "TargetPod:UpdatePodLabel|UpdatePodToleration",
      "Node:Add|Delete|UpdateNodeLabel|UpdateNodeTaint" }, T.events(p))
  end)

  local target = pod("t", { app = "web" }, { uid = "u-t", constraints = spread() })

  describe("assigned pods", function()
    it("queues an added or deleted bound pod the selector matches", function()
      local web = pod("w", { app = "web" }, { node = "n1" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Add", target, nil, web))
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", target, web, nil))
    end)
    it("skips a pod the selector does not match, in another namespace, or not bound", function()
      local db = pod("d", { app = "db" }, { node = "n1" })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Add", target, nil, db))
      local elsewhere = pod("e", { app = "web" }, { node = "n1", ns = "other" })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", target, elsewhere, nil))
      local pending = pod("p", { app = "web" })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Add", target, nil, pending))
    end)
    it("queues a label update that flips the match, skips one that does not", function()
      local web, db = pod("w", { app = "web" }, { node = "n1" }), pod("w", { app = "db" }, { node = "n1" })
      local web2 = pod("w", { app = "web", v = "2" }, { node = "n1" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "UpdatePodLabel", target, web, db))
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "UpdatePodLabel", target, db, web))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodLabel", target, web, web2))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodLabel", target, web, web))
    end)
    it("skips everything for a pod without constraints (and no defaults apply)", function()
      local plain = pod("plain", { app = "web" })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Add", plain, nil, pod("w", { app = "web" },
        { node = "n1" })))
    end)
  end)

  describe("the pod itself", function()
    it("queues its own label change that flips the match", function()
      local moved = pod("t", { app = "db" }, { uid = "u-t", constraints = spread() })
      assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodLabel", target, target, moved))
      local extra = pod("t", { app = "web", v = "2" }, { uid = "u-t", constraints = spread() })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "TargetPod", "UpdatePodLabel", target, target, extra))
    end)
    it("queues a new toleration only under nodeTaintsPolicy Honor", function()
      local tol = { { key = "k", operator = "Exists" } }
      local honor = pod("h", { app = "web" }, { uid = "u-h", constraints = spread("Honor") })
      local honor2 = pod("h", { app = "web" }, { uid = "u-h", constraints = spread("Honor"), tolerations = tol })
      assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodToleration", honor, honor, honor2))
      local tolerant = pod("t", { app = "web" }, { uid = "u-t", constraints = spread(), tolerations = tol })
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "TargetPod", "UpdatePodToleration", target, target, tolerant))
    end)
  end)

  describe("nodes", function()
    local a = T.node { name = "n", labels = { zone = "a" } }
    local b = T.node { name = "n", labels = { zone = "b" } }
    local a_more = T.node { name = "n", labels = { zone = "a", disk = "ssd" } }
    local none = T.node { name = "n", labels = { disk = "ssd" } }
    local a_tainted = T.node { name = "n", labels = { zone = "a" }, taints = { { key = "k", effect = "NoSchedule" } } }
    it("queues an added or deleted node with the topology key", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", target, nil, a))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Delete", target, a, nil))
    end)
    it("skips an added or deleted node without it", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", target, nil, none))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Delete", target, none, nil))
    end)
    it("queues an update that adds or removes the key, changes its value or the taints", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", target, none, a))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", target, a, none))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", target, a, b))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeTaint", target, a, a_tainted))
    end)
    it("skips an update of other labels, or of a node without the key", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", target, a, a_more))
      local none_tainted = T.node { name = "n", labels = { disk = "ssd" },
                                    taints = { { key = "k", effect = "NoSchedule" } } }
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeTaint", target, none, none_tainted))
    end)
  end)
end)
