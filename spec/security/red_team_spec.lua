-- The red-team suite of the plugin boundary (issue 11): one case per technique
-- a plugin can try and per finding of the issue, each run through the real
-- `luasched simulate` (or `check`) with a plugin this spec writes. A plugin
-- acts only on the pod labelled probe=yes; the plain pod must still be bound
-- and the run must end with status 0, whatever the plugin did. The expected
-- messages are the runtime's own wording, written here by hand.
local sim = require("sim_helper")

local tmp
local runs = 0

local CLUSTER = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec: {nodeName: node-1, containers: [{name: c, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
]]

local CONFIG = [[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
%s
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [%s]
%s]]

--- Writes plugin `file` (snake_case) with `source`.
local function plugin(file, source)
  return sim.write(tmp .. "/plugins/" .. file .. ".lua", source)
end

--- A plugin "Probe" whose hook `hook` runs `body` for the probe pod only.
--- `body` sees self, state, pod and (Filter/Score) ni; `init` is top-level code.
local function probe(hook, body, init)
  local args = ({ filter = "self, state, pod, ni", score = "self, state, pod, ni",
                  pre_filter = "self, state, pod", permit = "self, state, pod, node",
                  reserve = "self, state, pod, node", normalize_score = "self, state, pod, scores, nodes, n" })[hook]
  local fallback = hook == "score" and "return 0" or "return nil"
  local src = ([[
local ls = require("luasched")
local P = ls.plugin("Probe")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
%s
function P.%s(%s)
  if ls.label(pod.labels, KEY) ~= YES then %s end
%s
end
return P
]]):format(init or "", hook, args, fallback, body)
  if hook == "normalize_score" then
    src = src:gsub("return P\n$", "function P.score() return 0 end\nreturn P\n")
  end
  plugin("probe", src)
end

--- Runs simulate with the Probe plugin (and `extra` plugin names) enabled.
local function simulate(opts)
  opts = opts or {}
  runs = runs + 1
  local dir = tmp .. "/run" .. runs
  assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
  local enabled = { "{name: Probe}" }
  for _, n in ipairs(opts.extra or {}) do enabled[#enabled + 1] = "{name: " .. n .. "}" end
  local config = CONFIG:format(opts.luasched or "", table.concat(enabled, ", "), opts.plugin_config or "")
  local args = { opts.command or "simulate" }
  if args[1] == "simulate" then args[2] = sim.write(dir .. "/cluster.yaml", CLUSTER) end
  local cfg = sim.write(dir .. "/config.yaml", config)
  if args[1] == "simulate" then
    args[#args + 1] = "--config"
  end
  args[#args + 1] = cfg
  args[#args + 1] = "--plugin-path"
  args[#args + 1] = tmp .. "/plugins"
  for _, a in ipairs(opts.args or {}) do args[#args + 1] = a end
  local r = sim.run(args, { err = dir .. "/err" })
  r.pods = sim.pods(r.out)
  r.config = cfg
  return r
end

local FILE   -- the probe plugin's file as messages show it

--- The run went on: status 0, the plain pod bound, and the probe pod failed
--- with exactly `message` (the plugin's error status, as the text output shows it).
local function expect_error(r, message)
  assert.are.equal(0, r.rc, r.err .. r.out)
  assert.matches("^bound to node%-[12]$", r.pods.b)
  assert.are.equal("pending: " .. message, r.pods.a)
end

describe("red team: the plugin boundary", function()
  setup(function()
    sim.bin()
    tmp = sim.scratch("plugins")
    FILE = tmp .. "/plugins/probe.lua"
  end)

  teardown(function()
    sim.remove(tmp)
  end)

  -- ---- isolation: shared tables --------------------------------------------------

  it("the string metatable is hidden: getmetatable('') is false", function()
    probe("filter", [[  getmetatable("").__index.format = function() return "pwned" end]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: attempt to index a boolean value")
  end)

  it("setmetatable on the string metatable is refused", function()
    probe("filter", [[  setmetatable(getmetatable(""), {})]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: bad argument #1 to 'setmetatable' (table expected, got boolean)")
  end)

  it("replacing string.upper in one plugin does not change it for another", function()
    plugin("hijacker", [[
local ls = require("luasched")
local P = ls.plugin("Hijacker")
string.upper = function() return "hijacked" end
function P.filter() return nil end
return P
]])
    probe("filter", [[
  if string.upper("x") ~= "X" or ("x"):upper() ~= "X" then return ls.unschedulable("hijacked") end
  return ls.unschedulable("string.upper is intact")]])
    local r = simulate({ extra = { "Hijacker" } })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: 0/2 nodes are available: 2 string.upper is intact%.", r.pods.a)
  end)

  it("the luasched module is frozen: assignment raises", function()
    probe("filter", [[  ls.str = function() return "pwned" end]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: luasched is read-only (assigning str)")
  end)

  it("the luasched module is frozen: a constant cannot be changed", function()
    probe("filter", [[  ls.UNSCHEDULABLE = 0]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: luasched is read-only (assigning UNSCHEDULABLE)")
  end)

  it("rawset on the luasched module is refused", function()
    probe("filter", [[  rawset(ls, "str", print)]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: luasched is read-only (rawset of str)")
  end)

  it("setmetatable on the luasched module is refused", function()
    probe("filter", [[  setmetatable(ls, {})]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: cannot change a protected metatable")
  end)

  it("a status is read-only", function()
    probe("filter", [[  ls.skip.code = 0]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: a status is read-only (assigning code)")
  end)

  it("rawset on a status is refused", function()
    probe("filter", [[  rawset(ls.skip, "code", 0)]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: a status is read-only (rawset of code)")
  end)

  it("a forged status is not a status", function()
    probe("filter", [[  return setmetatable({ code = 0, id = 1, message = "" }, getmetatable(ls.skip) or {})]])
    expect_error(simulate(), 'running "Probe" filter plugin: filter returned a table, expected a status ' ..
      "(ls.unschedulable(...), ...) or nil (" .. FILE .. ":5)")
  end)

  it("ls.code_names is read-only", function()
    probe("filter", [=[  ls.code_names[2] = "Fine"]=])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: luasched.code_names is read-only (assigning 2)")
  end)

  it("self.handle is read-only and its metatable hidden", function()
    probe("filter", [[  getmetatable(self.handle).preempt = print]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: attempt to index a boolean value")
  end)

  -- ---- isolation: what is not there -------------------------------------------------

  local absent = {
    { "debug", "debug.getinfo(1)", "attempt to index global 'debug' (a nil value)" },
    { "load", "load('return 1')", "attempt to call global 'load' (a nil value)" },
    { "loadstring", "loadstring('return 1')", "attempt to call global 'loadstring' (a nil value)" },
    { "dofile", "dofile('/dev/null')", "attempt to call global 'dofile' (a nil value)" },
    { "string.dump", "string.dump(print)", "attempt to call field 'dump' (a nil value)" },
    { "collectgarbage", "collectgarbage('stop')", "attempt to call global 'collectgarbage' (a nil value)" },
    { "newproxy", "newproxy(true)", "attempt to call global 'newproxy' (a nil value)" },
    { "jit", "jit.off()", "attempt to index global 'jit' (a nil value)" },
    { "coroutine", "coroutine.create(print)", "attempt to index global 'coroutine' (a nil value)" },
    { "getfenv", "getfenv(1)", "attempt to call global 'getfenv' (a nil value)" },
    { "setfenv", "setfenv(1, {})", "attempt to call global 'setfenv' (a nil value)" },
    { "io", "io.open('/etc/hostname')", "attempt to index global 'io' (a nil value)" },
    { "os.execute", "os.execute('true')", "attempt to call field 'execute' (a nil value)" },
    { "os.getenv", "os.getenv('HOME')", "attempt to call field 'getenv' (a nil value)" },
    { "package", "package.loaded.luasched = nil", "attempt to index global 'package' (a nil value)" },
  }
  for _, case in ipairs(absent) do
    it("no " .. case[1] .. " for plugins", function()
      probe("filter", "  " .. case[2])
      expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: " .. case[3])
    end)
  end

  local modules = {
    { "ffi", "module 'ffi' not found on the plugin path" },
    { "jit.util", "module 'jit.util' not found on the plugin path" },
    { "luasched.clib", "module 'luasched.clib' is not available to plugins" },
    { "luasched.dispatch", "module 'luasched.dispatch' is not available to plugins" },
  }
  for _, case in ipairs(modules) do
    it("require('" .. case[1] .. "') is refused", function()
      probe("filter", "  require('" .. case[1] .. "')")
      expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: require: " .. case[2])
    end)
  end

  it("a __gc finalizer on a table never runs (Lua 5.1 tables have none)", function()
    probe("filter", [[
  setmetatable({}, { __gc = function() error("finalizer ran") end })
  return ls.unschedulable("no finalizer")]])
    local r = simulate()
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: 0/2 nodes are available: 2 no finalizer%.", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  it("a global set by one plugin is not seen by another, nor by the runtime", function()
    plugin("setter", [[
local ls = require("luasched")
local P = ls.plugin("Setter")
shared_secret = "from Setter"
function P.filter() return nil end
return P
]])
    probe("filter", [[  return ls.unschedulable("secret: " .. tostring(rawget(_G, "shared_secret")))]])
    local r = simulate({ extra = { "Setter" } })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: 0/2 nodes are available: 2 secret: nil%.", r.pods.a)
  end)

  -- ---- memory-safe views -------------------------------------------------------------

  it("an off-by-one over node.pods is a Lua error naming the plugin line", function()
    probe("filter", [[  for i = 0, ni.num_pods do local _ = ni.pods[i].name end]])
    local r = simulate()
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    -- node-1 has one pod (index 0 only), node-2 none
    local one = 'pending: running "Probe" filter plugin: ' .. FILE ..
      ":7: index 1 out of range for node info.pods (1 elements: 0..0)"
    local none = 'pending: running "Probe" filter plugin: ' .. FILE ..
      ":7: index 0 out of range for node info.pods (0 elements: 0..-1)"
    assert.is_true(r.pods.a == one or r.pods.a == none, r.pods.a)
  end)

  it("an index into an empty pods_with_affinity is a Lua error", function()
    probe("filter", [=[  local _ = ni.pods_with_affinity[0].name]=])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: index 0 out of range for node info.pods_with_affinity (0 elements: 0..-1)")
  end)

  it("a negative index is a Lua error", function()
    probe("filter", [=[  local _ = pod.labels.items[-1]]=])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: index -1 out of range for labels.items (1 elements: 0..0)")
  end)

  it("pointer arithmetic on a pod is refused", function()
    probe("filter", [[  local _ = (pod + 1).name]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: attempt to perform arithmetic on 'struct ls_pod' and 'number'")
  end)

  it("indexing a pod with a number is refused", function()
    probe("filter", [=[  local _ = pod[1].name]=])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: 'struct ls_pod' cannot be indexed with 'number'")
  end)

  it("pointer arithmetic on an array view is refused", function()
    probe("filter", [[  local _ = ni.pods + 1]])
    local r = simulate()
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: running \"Probe\" filter plugin: " .. FILE:gsub("%p", "%%%0") ..
      ":7: attempt to perform arithmetic on 'struct %d+' and 'number'$", r.pods.a)
  end)

  it("pointer arithmetic on ni.node is refused", function()
    probe("filter", [[  local _ = ni.node + 1]])
    local r = simulate()
    assert.are.equal(0, r.rc, r.err)
    assert.matches("attempt to perform arithmetic on 'struct %d+' and 'number'$", r.pods.a)
  end)

  it("the data is read-only", function()
    probe("filter", [[  pod.priority = 1000]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE .. ":7: attempt to write to constant location")
  end)

  it("a NormalizeScore write out of range is refused", function()
    probe("normalize_score", [=[  scores[n] = 1]=])
    expect_error(simulate(), 'running Score plugin "Probe": ' .. FILE ..
      ":7: index 2 out of range for list (2 elements: 0..1)")
  end)

  it("ls.all_nodes() is bounds-checked", function()
    probe("filter", [[  local nodes, n = ls.all_nodes(); local _ = nodes[n] ]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: index 2 out of range for list (2 elements: 0..1)")
  end)

  it("a C helper given nil raises instead of crashing", function()
    probe("filter", [[  ls.label(nil, 1)]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: luasched: ls.label: the label set is nil")
  end)

  it("a count larger than the list is refused by ls.tolerates", function()
    probe("filter", [[  ls.tolerates(pod.tolerations, 1000, ls.new_taint("k", "v", 1))]])
    expect_error(simulate(), 'running "Probe" filter plugin: ' .. FILE ..
      ":7: luasched: ls.tolerates: tolerations's count 1000 is out of range 0..0")
  end)
end)
