-- InterPodAffinity's events table and queueing hints (upstream v1.37):
-- * AssignedPod Add|UpdatePodLabel|Delete -> Skip unless the other pod is
--   bound or nominated. Added: Queue when it matches all the pod's required
--   affinity terms. Updated: Queue when it now matches all affinity terms and
--   did not, or matched an anti-affinity term and matches none now. Deleted:
--   Queue when it matched an anti-affinity term, or its own required
--   anti-affinity matched the pod.
-- * TargetPod UpdatePodLabel -> Queue.
-- * Node Add|UpdateNodeLabel -> affinity terms: Queue for an added node with
--   the topology key, an update that gained it or changed its value; anti
--   terms: Queue for any added node, an update that lost the key or changed it.
local T = require("luasched.testing")
local ls = require("luasched")

local function term(app, key)
  return { labelSelector = { matchLabels = { app = app } }, topologyKey = key or "zone" }
end

local function pod(name, labels, opts)
  opts = opts or {}
  local o = T.pod_object { name = name, uid = opts.uid, labels = labels }
  local aff = {}
  if opts.affinity then aff.podAffinity = { requiredDuringSchedulingIgnoredDuringExecution = opts.affinity } end
  if opts.anti then aff.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = opts.anti } end
  if next(aff) then o.spec.affinity = aff end
  o.spec.nodeName = opts.node
  if opts.nominated then o.status = { nominatedNodeName = opts.nominated } end
  return T.pod(o)
end

describe("InterPodAffinity events", function()
  local p
  setup(function() p = T.plugin("InterPodAffinity") end)

  it("registers upstream's events", function()
    assert.are.same({ "AssignedPod:Add|UpdatePodLabel|Delete", "TargetPod:UpdatePodLabel",
      "Node:Add|UpdateNodeLabel" }, T.events(p))
  end)

  local wants_db = pod("t", { app = "web" }, { uid = "u-t", affinity = { term("db"), term("db", "rack") } })
  local hates_cache = pod("h", { app = "web" }, { uid = "u-h", anti = { term("cache"), term("queue") } })

  describe("assigned pods", function()
    it("queues an added pod matching all affinity terms, skips others", function()
      local db = pod("d", { app = "db" }, { node = "n" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Add", wants_db, nil, db))
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "AssignedPod", "Add", wants_db, nil, pod("x", { app = "x" }, { node = "n" })))
      -- an added pod never helps anti-affinity
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "AssignedPod", "Add", hates_cache, nil, pod("c", { app = "x" }, { node = "n" })))
    end)
    it("skips a pod neither bound nor nominated, counts a nominated one", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Add", wants_db, nil, pod("d", { app = "db" })))
      assert.are.equal(ls.QUEUE,
        T.hint(p, "AssignedPod", "Add", wants_db, nil, pod("d", { app = "db" }, { nominated = "n" })))
    end)
    it("queues an update that makes a pod match the affinity", function()
      local x, db = pod("d", { app = "x" }, { node = "n" }), pod("d", { app = "db" }, { node = "n" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "UpdatePodLabel", wants_db, x, db))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodLabel", wants_db, db, x))
    end)
    it("queues an update that makes a pod match no anti-affinity term", function()
      local cache, queue = pod("c", { app = "cache" }, { node = "n" }), pod("c", { app = "queue" }, { node = "n" })
      local other = pod("c", { app = "other" }, { node = "n" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "UpdatePodLabel", hates_cache, cache, other))
      -- still matching the other term: no help
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "UpdatePodLabel", hates_cache, cache, queue))
    end)
    it("queues the deletion of a pod the pod hates, or of a pod that hated it", function()
      assert.are.equal(ls.QUEUE,
        T.hint(p, "AssignedPod", "Delete", hates_cache, pod("c", { app = "queue" }, { node = "n" }), nil))
      local hater = pod("z", { app = "z" }, { node = "n", anti = { term("web") } })
      local plain = pod("plain", { app = "web" })
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", plain, hater, nil))
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, "AssignedPod", "Delete", plain, pod("y", { app = "web" }, { node = "n" }), nil))
    end)
  end)

  it("queues the pod's own label change", function()
    local relabelled = pod("t", { app = "api" }, { uid = "u-t" })
    assert.are.equal(ls.QUEUE, T.hint(p, "TargetPod", "UpdatePodLabel", wants_db, wants_db, relabelled))
  end)

  describe("nodes", function()
    local zone_a = T.node { name = "n", labels = { zone = "a" } }
    local zone_b = T.node { name = "n", labels = { zone = "b" } }
    local bare = T.node { name = "n", labels = { disk = "ssd" } }
    local zone_a_ssd = T.node { name = "n", labels = { zone = "a", disk = "ssd" } }
    it("affinity: queues a node added with the key, gaining it or changing it", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", wants_db, nil, zone_a))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", wants_db, bare, zone_a))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", wants_db, zone_a, zone_b))
    end)
    it("affinity: skips a node without the key, losing it or unchanged", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", wants_db, nil, bare))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", wants_db, zone_a, bare))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", wants_db, zone_a, zone_a_ssd))
    end)
    it("anti-affinity: queues any added node, a node losing or changing the key", function()
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "Add", hates_cache, nil, bare))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", hates_cache, zone_a, bare))
      assert.are.equal(ls.QUEUE, T.hint(p, "Node", "UpdateNodeLabel", hates_cache, zone_a, zone_b))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "UpdateNodeLabel", hates_cache, bare, zone_a))
    end)
    it("a pod without terms skips node events", function()
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Node", "Add", pod("plain", { app = "web" }), nil, zone_a))
    end)
  end)
end)
