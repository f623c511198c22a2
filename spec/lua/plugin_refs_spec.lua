-- The references to pods and NodeInfos a plugin that is not built-in gets
-- (issue 24: lua/luasched/views.lua, profiles.lua's guarded hooks): they read
-- like the structs, compare by identity, pass to the ls.* functions, and cost
-- no allocation per node once the JIT compiled the loop; built-in plugins get
-- the structs themselves.
local T = require("luasched.testing")
local sim = require("sim_helper")

local SOURCE = [[
local ls = require("luasched")
local P = ls.plugin("CustomFit")
function P:filter(state, pod, ni)
  if ni.requested.milli_cpu + pod.requests.milli_cpu > ni.allocatable.milli_cpu then
    return ls.unschedulable("cpu")
  end
  return nil
end
function P:score(state, pod, ni)
  return tonumber(ni.allocatable.milli_cpu - ni.requested.milli_cpu) / 1000
end
function P:pre_filter(state, pod)
  state.same = pod == pod and tostring(pod) == "ls_pod"
  state.affine = ls.pod_matches_node_affinity(pod, state.ni.node)
end
function P:reserve(state, pod)
  local ni = state.ni
  state.nested = {
    node = tostring(ni.node), same_node = ni.node == ni.node, name = ls.str(ni.node.name),
    labels = tostring(pod.labels), app = ls.str(ls.label(pod.labels, ls.intern("app"))),
    n_tolerations = #pod.tolerations, tolerated = ls.pod_tolerates(pod, ls.new_taint("k", "v", ls.EFFECT_NO_SCHEDULE)),
    container = ls.str(pod.containers[0].name), cpu = tonumber(pod.requests.v[0]),
    pods = #ni.pods,
  }
end
return P
]]

describe("references to pods and NodeInfos (plugins not built in)", function()
  local dir, saved, plugin, cluster, p
  setup(function()
    dir = sim.scratch()
    sim.write(dir .. "/custom_fit.lua", SOURCE)
    saved = require("luasched.loader").path()
    T.set_plugin_path({ dir })
    plugin = T.plugin("CustomFit")
    local nodes = {}
    for i = 1, 100 do nodes[i] = { name = "n" .. i, allocatable = { cpu = "4", memory = "8Gi", pods = "110" } } end
    cluster = T.cluster { nodes = nodes, pods = {} }
    p = T.pod { name = "p", requests = { cpu = "100m" } }
    cluster:attach(p)
  end)
  teardown(function()
    cluster:close()
    T.set_plugin_path(saved)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("the plugin's hooks are guarded, a built-in's are not", function()
    assert.is_function(rawget(plugin, "filter"))
    T.set_plugin_path()
    local builtin = T.plugin("NodeResourcesFit")
    T.set_plugin_path({ dir })
    assert.is_nil(rawget(builtin, "filter"))
  end)

  it("reads, compares and hands on like the struct during its call", function()
    local state = { ni = cluster.list[0] }
    assert.is_nil(plugin:pre_filter(state, p))
    assert.is_true(state.same)
    assert.is_true(state.affine)
    assert.is_nil(plugin:filter(state, p, cluster.list[3]))
    assert.are.equal(4, plugin:score(state, p, cluster.list[3]))   -- 4000m allocatable, nothing requested
  end)

  it("what is read through them (nested structs, lists, ni.node) reads and hands on like the structs", function()
    local state = { ni = require("luasched.views").node_info_ref(cluster.list[0]) }   -- as a hook's argument
    local q = T.pod { name = "q", labels = { app = "web" }, requests = { cpu = "250m" },
      tolerations = { { key = "k", operator = "Equal", value = "v", effect = "NoSchedule" } } }
    assert.is_nil(plugin:reserve(state, q))
    assert.are.same({
      node = "ls_node", same_node = true, name = "n1", labels = "ls_labels", app = "web", n_tolerations = 1,
      tolerated = true, container = "c0", cpu = 250, pods = 0,
    }, state.nested)
  end)

  it("filter and score allocate nothing per node once compiled", function()
    if not jit or not jit.status() then
      pending("the JIT is off")
      return
    end
    local state, list, n = {}, cluster.list, cluster.num_nodes
    local function loops()
      local k = 0
      for i = 0, n - 1 do
        if plugin:filter(state, p, list[i]) == nil then k = k + plugin:score(state, p, list[i]) end
      end
      return k
    end
    -- as pod_topology_spread_spec: a measurement whose code did not compile
    -- in time (LuaJIT's random back-off) is taken again after a flush
    local grown
    for _ = 1, 3 do
      jit.flush()
      for _ = 1, 300 do loops() end
      collectgarbage()
      collectgarbage("stop")
      local before = collectgarbage("count")
      for _ = 1, 1000 do loops() end
      grown = collectgarbage("count") - before
      collectgarbage("restart")
      if grown < 64 then break end
    end
    -- 100000 filter and 100000 score calls: a reference (16 bytes) boxed per
    -- call would be > 3000 KB
    assert.is_true(grown < 64, string.format("grew by %.1f KB", grown))
  end)
end)
