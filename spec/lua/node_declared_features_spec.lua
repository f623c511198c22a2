-- NodeDeclaredFeatures (upstream nodedeclaredfeatures/nodedeclaredfeatures.go, in the
-- v1.37 default profile): PreFilter Skips a pod that needs no declared feature; Filter
-- rejects (UnschedulableAndUnresolvable) a node whose status.declaredFeatures lacks one
-- the pod needs, with "node(s) didn't match Pod's required features". The features are
-- inferred from the spec: RestartAllContainersOnContainerExits (a restartPolicyRules
-- entry with action RestartAllContainers), UserNamespacesHostNetworkSupport (hostNetwork
-- with hostUsers false).
local T = require("luasched.testing")
local ls = require("luasched")

local MSG = "node(s) didn't match Pod's required features"

local function node(name, features)
  return {
    apiVersion = "v1", kind = "Node",
    metadata = { name = name, uid = "uid-" .. name },
    status = { allocatable = { cpu = "4", memory = "8Gi", pods = "110" }, declaredFeatures = features },
  }
end

local function pod(spec)
  spec.containers = spec.containers or { { name = "c", image = "app" } }
  return T.pod { apiVersion = "v1", kind = "Pod", metadata = { name = "p", namespace = "default", uid = "uid-p" },
                 spec = spec }
end

local RESTART_ALL = { { name = "c", image = "app",
  restartPolicyRules = { { action = "RestartAllContainers", exitCodes = { operator = "In", values = { 42 } } } } } }

describe("NodeDeclaredFeatures", function()
  local cluster, plugin
  setup(function()
    cluster = T.cluster { nodes = {
      node("none", nil),
      node("restart", T.array { "RestartAllContainersOnContainerExits" }),
      node("both", T.array { "RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport" }),
    } }
    plugin = T.plugin("NodeDeclaredFeatures")
  end)
  teardown(function() cluster:close() end)

  it("skips a pod that needs no feature, so every node passes", function()
    local r = T.cycle(plugin, cluster, pod {})
    assert.are.equal(ls.SKIP, r.pre_filter.code)
    assert.are.same({ "none", "restart", "both" }, r.feasible)
  end)

  it("needs RestartAllContainersOnContainerExits for a RestartAllContainers rule", function()
    local r = T.cycle(plugin, cluster, pod { containers = RESTART_ALL })
    assert.are.equal(ls.SUCCESS, r.pre_filter.code)
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.filter.none.code)
    assert.are.equal(MSG, r.filter.none.message)
    assert.are.same({ "restart", "both" }, r.feasible)
  end)

  it("needs UserNamespacesHostNetworkSupport for host networking in a user namespace", function()
    local r = T.cycle(plugin, cluster, pod { hostNetwork = true, hostUsers = false })
    assert.are.same({ "both" }, r.feasible)
    assert.are.equal(MSG, r.filter.restart.message)
    -- hostUsers left unset (true) needs nothing
    r = T.cycle(plugin, cluster, pod { hostNetwork = true })
    assert.are.equal(ls.SKIP, r.pre_filter.code)
  end)

  it("needs every inferred feature", function()
    local r = T.cycle(plugin, cluster, pod { containers = RESTART_ALL, hostNetwork = true, hostUsers = false })
    assert.are.same({ "both" }, r.feasible)
    assert.are.equal(MSG, r.filter.restart.message)
  end)
end)
