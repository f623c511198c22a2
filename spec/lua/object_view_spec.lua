-- The lazily decoded whole-object view of pods and nodes (ls.pod_data,
-- ls.node_data, declared by a plugin's object_data list), the metrics.k8s.io
-- objects (NodeMetrics / PodMetrics through ls.objects and ls.object_data),
-- and ls.parse_quantity: in the test kit and in the real `luasched simulate`.
-- Expected values are read by hand from the manifests below.
local T = require("luasched.testing")
local ls = require("luasched")
local sim = require("sim_helper")

local POD = [[
apiVersion: v1
kind: Pod
metadata:
  name: web
  generateName: web-
  annotations: {arch: arm64}
spec:
  dnsPolicy: ClusterFirstWithHostNet
  containers: [{name: c, image: app, env: [{name: MODE, value: fast}]}]
]]

local NODE = [[
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4"}
  nodeInfo: {architecture: arm64, kernelVersion: 6.1.0}
]]

describe("ls.pod_data / ls.node_data in the test kit", function()
  it("gives fields the C model does not flatten", function()
    local pod, node = T.pod(POD), T.node(NODE)
    local p = ls.pod_data(pod)
    assert.are.equal("ClusterFirstWithHostNet", p.spec.dnsPolicy)
    assert.are.equal("web-", p.metadata.generateName)
    assert.are.equal("fast", p.spec.containers[1].env[1].value)
    assert.are.equal("6.1.0", ls.node_data(node).status.nodeInfo.kernelVersion)
  end)

  it("decodes once per object version (the same table again)", function()
    local pod = T.pod(POD)
    assert.are.equal(ls.pod_data(pod), ls.pod_data(pod))
  end)

  it("builds the view from a cluster file's documents", function()
    local c = T.cluster { yaml = NODE .. "---\n" .. POD .. [[
---
apiVersion: metrics.k8s.io/v1beta1
kind: NodeMetrics
metadata: {name: n1}
timestamp: "2026-11-24T12:00:00Z"
window: 30s
usage: {cpu: 1500m, memory: 3Gi}
]] }
    assert.are.equal(1, #c.pending)
    assert.are.equal("web", ls.str(c.pending[1].name))
    assert.are.equal("arm64", ls.str(ls.label(c.pending[1].annotations, ls.intern("arch"))))
    local ni = c:node_info("n1")
    assert.are.equal("arm64", ls.node_data(ni.node).status.nodeInfo.architecture)
    c:close()
  end)
end)

describe("custom resources in the test kit", function()
  it("are named plural.version.group, as in simulate and run", function()
    local c = T.cluster { objects = {
      { apiVersion = "scheduling.x-k8s.io/v1alpha1", kind = "PodGroup",
        metadata = { name = "team-a", namespace = "ml" }, spec = { minMember = 8 } },
      { apiVersion = "example.com/v1", kind = "Policy", metadata = { name = "p" } },
    } }
    c:attach(T.pod { name = "x" })
    local pg = ls.find_object("podgroups.v1alpha1.scheduling.x-k8s.io", "ml", "team-a")
    assert.is_not_nil(pg)
    assert.are.equal(8, ls.object_data(pg).spec.minMember)
    assert.is_not_nil(ls.find_object("policies.v1.example.com", "default", "p"))
    assert.is_nil(ls.find_object("PodGroup", "ml", "team-a"))
    c:close()
  end)
end)

describe("plugin object_data declarations", function()
  local dir
  setup(function()
    dir = sim.scratch("plugins")
    sim.write(dir .. "/plugins/bad_view.lua", [[
local ls = require("luasched")
local P = ls.plugin("BadView")
P.object_data = { "Pod", "Deployment" }
function P:filter() return nil end
return P
]])
    T.set_plugin_path({ dir .. "/plugins" })
  end)
  teardown(function()
    T.reload()
    sim.remove(dir)
  end)

  it("refuses an unknown kind, naming the plugin and the entry", function()
    local ok, err = pcall(T.plugin, "BadView")
    assert.is_false(ok)
    assert.matches('plugin "BadView" (', err, 1, true)
    assert.matches('object_data[2]: unknown kind "Deployment" (expected Pod, Node, NodeMetrics or PodMetrics)',
      err, 1, true)
  end)
end)

describe("ls.parse_quantity", function()
  it("reads quantities as upstream's ScaledValue", function()
    assert.are.equal(1500, ls.parse_quantity("1500m", "cpu"))
    assert.are.equal(2000, ls.parse_quantity("2", "cpu"))
    assert.are.equal(1, ls.parse_quantity("250000n", "cpu"))    -- rounded up to 1 millicore
    assert.are.equal(3 * 1024 ^ 3, ls.parse_quantity("3Gi"))
    assert.are.equal(1536 * 1024, ls.parse_quantity("1536Ki"))
    assert.are.equal(250000, ls.parse_quantity("250000n", 9))
    assert.is_nil(ls.parse_quantity("lots"))
    assert.is_nil(ls.parse_quantity(nil))
  end)
end)

-- A plugin that reads all three in `luasched simulate`: it filters out nodes
-- whose status.nodeInfo.architecture differs from the pod's `arch` annotation
-- (read through the view, though ls.label would do) and scores nodes by free
-- cpu from their NodeMetrics (100 - used percent of allocatable).
local PLUGIN = [[
local ls = require("luasched")
local P = ls.plugin("ArchAndLoad")
P.object_data = { "Pod", "Node", "NodeMetrics" }
local NO = ls.unschedulable("node architecture differs")
function P:filter(_, pod, ni)
  local want = ls.pod_data(pod).metadata.annotations.arch
  if want and ls.node_data(ni.node).status.nodeInfo.architecture ~= want then return NO end
  return nil
end
function P:score(_, _, ni)
  local m = ls.find_object("NodeMetrics", nil, ni.node.name)
  if m == nil then return 0 end
  local used = ls.parse_quantity(ls.object_data(m).usage.cpu, "cpu")
  return math.floor(100 - 100 * used / tonumber(ni.node.allocatable.milli_cpu))
end
return P
]]

local function node(name, arch)
  return ("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"
    .. "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}, nodeInfo: {architecture: %s}}\n")
    :format(name, arch)
end

local function metrics(name, cpu)
  return ("apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: %s}\n"
    .. "timestamp: \"2026-11-24T12:00:00Z\"\nwindow: 30s\nusage: {cpu: %s, memory: 1Gi}\n"):format(name, cpu)
end

describe("the view and NodeMetrics in luasched simulate", function()
  local dir
  setup(function()
    dir = sim.scratch("plugins")
    sim.write(dir .. "/plugins/arch_and_load.lua", PLUGIN)
    sim.write(dir .. "/config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
      .. "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n"
      .. "  plugins: {filter: {enabled: [{name: ArchAndLoad}]}, score: {enabled: [{name: ArchAndLoad, weight: 50}]}}\n")
  end)
  teardown(function() sim.remove(dir) end)

  it("filters on a node field through the view and scores by NodeMetrics", function()
    -- amd: any arch; a1 busy (3500m of 4), a2 idle (500m of 4), x1 arm64 but the pod wants amd64
    sim.write(dir .. "/cluster.yaml", table.concat({
      node("a1", "amd64"), node("a2", "amd64"), node("x1", "arm64"),
      metrics("a1", "3500m"), metrics("a2", "500m"), metrics("x1", "0"),
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {arch: amd64}}\n"
        .. "spec: {containers: [{name: c, image: app}]}\n",
    }, "---\n"))
    local r = sim.run({ "simulate", dir .. "/cluster.yaml", "--config", dir .. "/config.yaml",
      "--plugin-path", dir .. "/plugins" }, { err = dir .. "/err" })
    assert.are.equal(0, r.rc, r.err .. r.out)
    -- a2: 100 - 12.5 -> 87 x 50 beats a1's 12 x 50; the default scorers see equal idle nodes
    assert.are.equal("bound to a2", sim.outcomes(r.out)["default/p"])
  end)
end)
