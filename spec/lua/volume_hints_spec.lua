-- The volume plugins' queueing hints, case by case as upstream's unit tests
-- state them (volumebinding, volumerestrictions, volumezone, nodevolumelimits
-- EventsToRegister / isSchedulableAfter...): Queue only for changes that can
-- make the rejected pod schedulable.
local T = require("luasched.testing")
local ls = require("luasched")

local function hint_of(plugin, resource, action)
  for _, e in ipairs(T.plugin(plugin).events) do
    local actions = type(e.action) == "table" and e.action or { e.action }
    for _, a in ipairs(actions) do
      if e.resource == resource and a == action then return e.hint end
    end
  end
  error(plugin .. " registers no " .. resource .. "/" .. action)
end

local function pod_of(desc) return T.pod(T.pod_object(desc)) end

local function claim_pod(name, claim, node)
  return pod_of { name = name, namespace = "ns", node_name = node,
    spec = { volumes = { { name = "v", persistentVolumeClaim = { claimName = claim } } } } }
end

local cluster
before_each(function() cluster = T.cluster { nodes = { { name = "n1" } } } end)
after_each(function() cluster:close() end)

local function claim(name, ns, spec)
  return cluster:add_object { apiVersion = "v1", kind = "PersistentVolumeClaim",
    metadata = { name = name, namespace = ns or "ns" }, spec = spec or {} }
end

describe("VolumeRestrictions hints", function()
  it("queue on a deleted pod sharing a claim or a conflicting disk, same namespace only", function()
    local hint = hint_of("VolumeRestrictions", "Pod", "Delete")
    local pod = claim_pod("p", "data")
    assert.are.equal(ls.QUEUE, hint(pod, claim_pod("other", "data", "n1")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, claim_pod("other", "logs", "n1")))
    local disk = { volumes = { { name = "d", gcePersistentDisk = { pdName = "disk-1" } } } }
    local pd_pod = pod_of { name = "pd", namespace = "ns", spec = disk }
    assert.are.equal(ls.QUEUE, hint(pd_pod, pod_of { name = "old", namespace = "ns", spec = disk }))
    assert.are.equal(ls.QUEUE_SKIP, hint(pd_pod, pod_of { name = "old", namespace = "elsewhere", spec = disk }))
  end)

  it("queue on an added claim the pod uses", function()
    local hint = hint_of("VolumeRestrictions", "PersistentVolumeClaim", "Add")
    local pod = claim_pod("p", "data")
    assert.are.equal(ls.QUEUE, hint(pod, nil, claim("data")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, nil, claim("other")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, nil, claim("data", "elsewhere")))
  end)
end)

describe("VolumeBinding hints", function()
  local function class(topologies)
    return cluster:add_object { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
      metadata = { name = "c" }, provisioner = "p", allowedTopologies = topologies }
  end
  local function capacity(name, cap, max)
    return cluster:add_object { apiVersion = "storage.k8s.io/v1", kind = "CSIStorageCapacity",
      metadata = { name = name, namespace = "kube-system" }, storageClassName = "c", capacity = cap,
      maximumVolumeSize = max }
  end

  it("queue on a new class or a change of allowedTopologies only", function()
    local hint = hint_of("VolumeBinding", "StorageClass", "Update")
    local pod = claim_pod("p", "data")
    local a = class({ { matchLabelExpressions = { { key = "zone", values = { "a" } } } } })
    local a2 = class({ { matchLabelExpressions = { { key = "zone", values = { "a" } } } } })
    local b = class({ { matchLabelExpressions = { { key = "zone", values = { "a", "b" } } } } })
    assert.are.equal(ls.QUEUE, hint(pod, nil, a))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, a, a2))
    assert.are.equal(ls.QUEUE, hint(pod, a, b))
  end)

  it("queue when a capacity's volume limit grew (maximumVolumeSize first)", function()
    local hint = hint_of("VolumeBinding", "CSIStorageCapacity", "Update")
    local pod = claim_pod("p", "data")
    local small, big = capacity("s", "1Gi"), capacity("b", "2Gi")
    local capped = capacity("m", "100Gi", "1Gi")
    assert.are.equal(ls.QUEUE, hint(pod, nil, small))
    assert.are.equal(ls.QUEUE, hint(pod, small, big))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, big, small))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, small, capped))   -- the limit stays 1Gi
  end)

  it("queue on a claim of the pod only", function()
    local hint = hint_of("VolumeBinding", "PersistentVolumeClaim", "Update")
    local pod = claim_pod("p", "data")
    assert.are.equal(ls.QUEUE, hint(pod, claim("data"), claim("data")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, claim("x"), claim("x")))
  end)
end)

describe("NodeVolumeLimits hints", function()
  local function csinode(count)
    return cluster:add_object { apiVersion = "storage.k8s.io/v1", kind = "CSINode", metadata = { name = "n1" },
      spec = { drivers = { { name = "d", nodeID = "n1", allocatable = { count = count } } } } }
  end

  it("queue when a driver's count grew", function()
    local hint = hint_of("NodeVolumeLimits", "CSINode", "Update")
    local pod = claim_pod("p", "data")
    local one, two = csinode(1), csinode(2)
    assert.are.equal(ls.QUEUE, hint(pod, one, two))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, two, one))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, one, csinode(1)))
  end)

  it("queue on a deleted pod that had a node and a claim", function()
    local hint = hint_of("NodeVolumeLimits", "Pod", "Delete")
    local pod = claim_pod("p", "data")
    assert.are.equal(ls.QUEUE, hint(pod, claim_pod("gone", "x", "n1")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, claim_pod("pending", "x")))
    assert.are.equal(ls.QUEUE_SKIP, hint(pod, pod_of { name = "plain", namespace = "ns", node_name = "n1" }))
  end)
end)
