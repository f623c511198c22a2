-- The attacker's round 4 of issue 24 (point 6): attacks a reviewer wrote
-- against the README's promise (docs/plugins/sandbox-guarantees.md) after
-- round 3, kept as cases. Each runs the real `luasched simulate` (or
-- `check`, `explain`, `compare`) under a time limit with plugins this spec
-- writes, and asserts the promise: the run goes on, the other pods are
-- scheduled where the cluster allows, an error names the plugin, its
-- extension point and its file:line, and no built-in is replaced or
-- steered. The comment of each case says what it did before, when it broke
-- the promise; a case without one held already.
--
-- Classes: a plugin passing as built-in or steering one (its plugin table's
-- metatable, the CycleState, objects it creates); C memory and memory of
-- several profiles; the runtime's modules and the plugin's own values
-- (error values, metatables of views); each command with a hostile plugin.
-- `luasched run`'s supervisor: attacker_round4_run_flood.sh.
local probe_kit = require("probe_kit")

local CLUSTER = probe_kit.NODES .. probe_kit.PROBE_PODS

-- The probe pod asks for 64 CPUs (the nodes have 4); b for 100m.
local BIG_PROBE = probe_kit.NODES .. [[
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "64"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
]]

local INSUFFICIENT = "pending: 0/2 nodes are available: 2 Insufficient cpu."

--- A configuration of one profile enabling `enabled` (a YAML flow list's
--- items), with a 300 ms budget unless `luasched` says otherwise.
local function config(enabled, luasched)
  return ([[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  luasched: {%s}
  plugins:
    multiPoint:
      enabled: [%s]
]]):format(luasched or "pluginTimeoutMilliseconds: 300", enabled)
end

local bench = probe_kit.bench(CLUSTER)
local file_of, write_plugin, probe, run = bench.file_of, bench.write_plugin, bench.probe, bench.run
local expect_error = probe_kit.expect_error
local function with_tmp() setup(bench.open); teardown(bench.close) end

--- The run went on, b bound, and the probe pod unschedulable on both nodes
--- with `reason` (what follows, preemption's words, is left out).
local function expect_unschedulable(r, reason)
  assert.are.equal(0, r.rc, r.err .. r.out)
  assert.matches("^bound to node%-[12]$", r.pods.b)
  local head = "pending: 0/2 nodes are available: 2 " .. reason .. "."
  assert.are.equal(head, r.pods.a:sub(1, #head), r.pods.a)
end

describe("attacker round 4: a plugin passing as built-in or steering one", function()
  with_tmp()

  -- Before: the loader's `P.shadows = ...` went to the plugin's __newindex
  -- and was lost: `check` said ok and NodeResourcesFit was replaced, the
  -- 64-CPU pod bound to a 4-CPU node.
  it("a file named as a built-in whose plugin table swallows assignments is still an error naming both files",
    function()
    write_plugin("node_resources_fit", [[
local ls = require("luasched")
local P = ls.plugin("NodeResourcesFit")
function P.pre_filter() return nil end
function P.filter() return nil end
setmetatable(P, { __newindex = function() end, __index = function(_, k) if k == "builtin" then return true end end })
return P
]])
    local cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" ..
      "profiles:\n- schedulerName: default-scheduler\n"
    local problem = 'plugin "NodeResourcesFit": ' .. file_of("node_resources_fit") .. " on the plugin path has " ..
      "the name of the built-in plugin "
    local c = run(cfg, { command = "check" })
    assert.are_not.equal(0, c.rc, c.out)
    assert.matches(problem, c.out .. c.err, 1, true)
    local s = run(cfg, { cluster = BIG_PROBE })
    assert.are_not.equal(0, s.rc, s.out)
    assert.matches(problem, s.err, 1, true)
    assert.is_nil(s.pods.a)
    os.remove(file_of("node_resources_fit"))   -- the describe's folder is shared by its cases
  end)

  -- Before: a plugin whose table answered `builtin` with true got the
  -- structs themselves (no generation: a pod kept past its call read freed
  -- memory) and the CycleState unguarded.
  it("a plugin answering P.builtin with true still gets references that end with their call", function()
    probe([[
local kept
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then kept = pod end
  return nil
end
function P.reserve(self, state, pod)
  if kept ~= nil and ls.label(pod.labels, KEY) == YES then return ls.unschedulable("name " .. kept.name) end
  return nil
end
setmetatable(P, { __index = function(_, k) if k == "builtin" then return true end end })
rawset(P, "builtin", true)]])
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.are.equal('pending: running Reserve plugin "Probe": ' .. file_of("probe") .. ":10: pod was handed to " ..
      "a plugin by an earlier call and is gone: views live only during the call that made them (used by plugin " ..
      '"Probe" in reserve)', r.pods.a)
  end)

  -- Before: the plugin got the cycle's own CycleState, set
  -- state.NodeResourcesFit.cpu = 0 after NodeResourcesFit's PreFilter, and
  -- the 64-CPU pod was bound to a 4-CPU node.
  it("a plugin rewriting a built-in's CycleState entry cannot make a 64-CPU pod fit a 4-CPU node", function()
    probe([[
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local fit = state.NodeResourcesFit
  if fit ~= nil then fit.cpu = 0 end
  state.NodeResourcesFit = { cpu = 0, memory = 0, ephemeral = 0, n = 0, nothing = true, reqs = {}, slots = {} }
  return nil
end
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  state.NodeResourcesFit = { cpu = 0, memory = 0, ephemeral = 0, n = 0, nothing = true, reqs = {}, slots = {} }
  return nil
end]])
    local r = run(config("{name: Probe}"), { cluster = BIG_PROBE })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^" .. probe_kit.plain(INSUFFICIENT), r.pods.a)
  end)

  it("plugins that are not built-in share their CycleState entries, cloned with their own clone_state hook",
    function()
    write_plugin("writer", [[
local ls = require("luasched")
local P = ls.plugin("Writer")
function P.pre_filter(self, state, pod)
  state.Writer = { n = 41 }
  return nil
end
function P.clone_state(self, entry) return { n = entry.n + 1 } end
return P
]])
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local copy = self.handle:clone_state(state)
  return ls.unschedulable(string.format("shared %s, clone %s, fit %s", tostring(state.Writer and state.Writer.n),
    tostring(copy.Writer and copy.Writer.n), tostring(state.NodeResourcesFit)))
end]])
    local r = run(config("{name: Writer}, {name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    expect_unschedulable(r, "shared 41, clone 42, fit nil")
  end)

  it("a plugin iterating its CycleState finds only the entries of plugins that are not built-in", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  state.mine = true
  local keys = {}
  for k in pairs(state) do keys[#keys + 1] = tostring(k) end
  return ls.unschedulable("keys " .. table.concat(keys, ","))
end]])
    expect_unschedulable(run(config("{name: Probe}")), "keys mine")
  end)

  -- Before: a priority-100 pod's PostFilter evicted a system-critical pod,
  -- and one on another node, each "to accommodate a higher priority pod".
  it("a plugin's PostFilter evicts only pods of lower priority on the node it names", function()
    probe([[
function P.post_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local all, n = ls.all_nodes()
  local errs = {}
  for i = 0, n - 1 do
    for j = 0, #all[i].pods - 1 do
      errs[#errs + 1] = tostring(self.handle:preempt(all[i].pods[j], "node-1"))
    end
  end
  table.sort(errs)
  return ls.unschedulable(table.concat(errs, "; "))
end]])
    local cluster = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: vip, namespace: kube-system}
spec: {nodeName: node-1, priority: 2000000000, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec: {nodeName: node-2, priority: 0, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {priority: 100, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
]]
    local r = run(config("{name: Probe}") .. "    postFilter: {enabled: [{name: Probe}], disabled: [{name: '*'}]}\n",
      { cluster = cluster })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal("pending: 0/2 nodes are available: 2 Insufficient cpu. self.handle: preempt: pod " ..
      "default/low is not on node node-1; self.handle: preempt: pod kube-system/vip has priority 2000000000, not " ..
      "lower than 100 of pod default/a", r.pods.a)
    assert.not_matches("preempted", r.out, 1, true)
  end)

  -- Before: both were created: pod b was bound to node "evil", which no
  -- cluster has, and the hog took node-1's CPU.
  it("ls.create_object of a Node or a Pod is refused; pods go only where the cluster allows", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local _, e1 = ls.create_object('{"apiVersion":"v1","kind":"Node","metadata":{"name":"evil"},' ..
    '"status":{"allocatable":{"cpu":"64","pods":"110"}}}')
  local _, e2 = ls.create_object('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"hog","namespace":"default"},' ..
    '"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"4"}}}]}}')
  return ls.unschedulable(e1 .. "; " .. e2)
end]])
    local r = run(config("{name: Probe}"))
    expect_unschedulable(r, "creating a Node: plugins create ResourceClaims only; creating a " ..
      "Pod: plugins create ResourceClaims only")
    assert.not_matches("evil", r.out, 1, true)
    assert.not_matches("hog", r.out, 1, true)
  end)

  it("a ResourceClaim created with a status is created without it", function()
    probe([[
function P.pre_bind(self, state, pod, node)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local name, err = ls.create_object('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":' ..
    '{"name":"forged","namespace":"default"},"spec":{"devices":{"requests":[]}},"status":{"allocation":' ..
    '{"devices":{"results":[{"request":"r","driver":"d","pool":"p","device":"gpu-0"}]}}}}')
  local o = ls.find_object("ResourceClaim", "default", "forged")
  print("created " .. tostring(name) .. " " .. tostring(err) .. ", status kept: " ..
    tostring(o ~= nil and ls.object_data(o).status ~= nil))
  return nil
end]])
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.a)
    assert.matches(file_of("probe") .. ": created forged nil, status kept: false", r.err, 1, true)
  end)

  -- Before: each call created 1 MiB objects until its budget ran out, kept
  -- for the whole simulation.
  it("ls.create_object past the API server's 3 MiB is refused before it is parsed", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local _, e = ls.create_object('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":' ..
    '{"name":"c","namespace":"default"},"spec":{"x":"' .. string.rep("x", 4 * 1024 * 1024) .. '"}}')
  return ls.unschedulable(e)
end]])
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^pending: 0/2 nodes are available: 2 creating an object of %d+ bytes: the API server " ..
      "takes at most 3145728%.", r.pods.a)
  end)
end)

describe("attacker round 4: memory", function()
  with_tmp()

  -- Before: four million entries took the profiles' build past its 10 s
  -- budget ("building profiles: plugin exceeded its time budget", no plugin
  -- named) and 800 MB.
  it("a plugin registering millions of events is refused at load, named, in check and simulate", function()
    probe([[
P.events = {}
local e = { resource = "Node", action = { "Add" } }
for i = 1, 4000000 do P.events[i] = e end
function P.filter() return nil end]])
    local want = 'plugin "Probe" (' .. file_of("probe") .. "): events: more than 1024 entries"
    local c = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 10000"), { command = "check" })
    assert.are_not.equal(0, c.rc)
    assert.matches(want, c.out .. c.err, 1, true)
    local s = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 10000"))
    assert.are.equal(2, s.rc, s.err)
    assert.matches(want, s.err, 1, true)
    assert.is_true(s.rss == nil or s.rss < 400, tostring(s.rss))
  end)

  -- Before: each profile had the whole 1 GiB: two profiles of a plugin
  -- hoarding strings and tables reached 2.5 GB peak RSS together.
  it("profiles without a limit of their own split the configuration's: two hoarders stay within it", function()
    write_plugin("hoarder", [[
local ls = require("luasched")
local P = ls.plugin("Hoarder")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
local hoard = {}
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  for i = 1, 700 do hoard[#hoard + 1] = string.rep("y", 1024 * 1024 - 64) .. i .. tostring(ni) end
  return nil
end
return P
]])
    local cluster = probe_kit.NODES .. probe_kit.PROBE_PODS .. [[
---
apiVersion: v1
kind: Pod
metadata: {name: a2, namespace: default, labels: {probe: "yes"}}
spec: {schedulerName: second, containers: [{name: c, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b2, namespace: default}
spec: {schedulerName: second, containers: [{name: c, image: app}]}
]]
    local profile = "- schedulerName: %s\n  luasched: {pluginTimeoutMilliseconds: 10000}\n" ..
      "  plugins: {multiPoint: {enabled: [{name: Hoarder}]}}\n"
    local cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n" ..
      profile:format("default-scheduler") .. profile:format("second")
    local r = run(cfg, { cluster = cluster })
    assert.are.equal(0, r.rc, r.err)
    local limit = "plugin exceeded the Lua memory limit of 536870912 bytes in filter at " .. file_of("hoarder") .. ":5"
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^bound to node%-[12]$", r.pods.b2)
    assert.matches('running "Hoarder" filter plugin: ' .. probe_kit.plain(limit), r.pods.a)
    assert.matches('running "Hoarder" filter plugin: ' .. probe_kit.plain(limit), r.pods.a2)
    assert.is_true(r.rss < 1536, "peak RSS " .. tostring(r.rss) .. " MiB")
  end)
end)

describe("attacker round 4: values a plugin makes and modules it reaches", function()
  with_tmp()

  -- Before: "config.yaml:8: profile default-scheduler: plugin exceeded its
  -- time budget of 500 ms", naming no plugin: top-level code cut off inside
  -- C (growing a table of string keys) has no position.
  it("top-level code cut off inside C is named by its plugin and file", function()
    probe([[
local d = {}
for r = 1, 1000 do for i = 1, 1000000 do d["k" .. r .. ":" .. i] = i end end
function P.filter() return nil end]])
    for _, command in ipairs({ "check", "simulate" }) do
      local r = run("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" ..
        "luasched: {pluginTimeoutMilliseconds: 500}\nprofiles:\n- schedulerName: default-scheduler\n" ..
        "  plugins: {multiPoint: {enabled: [{name: Probe}]}}\n", { command = command })
      assert.are_not.equal(0, r.rc, r.err)
      local text = r.out .. r.err
      assert.matches("exceeded its time budget of 500 ms", text, 1, true)
      assert.is_true(text:find('plugin "Probe" (' .. file_of("probe") .. ", top-level code)", 1, true) ~= nil
        or text:find(file_of("probe") .. ":5", 1, true) ~= nil, text)
    end
  end)

  it("error(nil) is named with the plugin, its point and line", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  error(nil)
end]])
    expect_error(run(config("{name: Probe}")), 'running "Probe" filter plugin: ' .. file_of("probe") .. ":6: nil")
  end)

  -- Before: `running "Probe" filter plugin: lua/luasched.lua:213: table
  -- index is NaN`, the runtime's file and line instead of the plugin's.
  it("ls.str of NaN is an error at the plugin's line", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  return ls.unschedulable(ls.str(0 / 0))
end]])
    expect_error(run(config("{name: Probe}")), 'running "Probe" filter plugin: ' .. file_of("probe") ..
      ":6: ls.str: expected an interned string id (a whole number from 0), got nan")
  end)

  it("the runtime modules a plugin requires are read-only, and their errors are the plugin's", function()
    probe([[
local json = require("luasched.json")
local cel = require("luasched.cel")
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local out = {}
  out[#out + 1] = tostring(pcall(function() json.encode = function() return "{}" end end))
  out[#out + 1] = tostring(pcall(function() cel.compile = nil end))
  out[#out + 1] = tostring(pcall(rawset, json, "decode", print))
  local loop = {}
  loop.self = loop
  out[#out + 1] = tostring(pcall(json.encode, loop))
  out[#out + 1] = tostring(pcall(json.decode, string.rep("[", 200000)))
  for _, v in ipairs({ pod, ni, ni.node, pod.labels }) do out[#out + 1] = tostring(getmetatable(v)) end
  return ls.unschedulable(table.concat(out, " "))
end]])
    expect_unschedulable(run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000")),
      "false false false false false ffi ffi ffi ffi")
  end)

  it("a hook returning thousands of values is named by what it returned", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local t = {}
  for i = 1, 7000 do t[i] = i end
  return unpack(t)
end]])
    expect_error(run(config("{name: Probe}")), 'running "Probe" filter plugin: filter returned a number, expected ' ..
      "a status (ls.unschedulable(...), ...) or nil (" .. file_of("probe") .. ":4)")
  end)

  it("ls.allow, ls.reject and ls.wait from the wrong hook touch nothing and name the plugin", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local out = { tostring(ls.allow(pod, "Probe")), tostring(ls.reject(pod, "Probe", "no")) }
  local ok, e = pcall(ls.wait, 10)
  out[#out + 1] = tostring(ok)
  return ls.unschedulable(table.concat(out, " "))
end]])
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^pending: 0/2 nodes are available: 2 false false ", r.pods.a)
  end)

  it("a plugin in two profiles keeps a module table per profile", function()
    write_plugin("counter", [[
local ls = require("luasched")
local P = ls.plugin("Counter")
local seen = {}
function P.filter(self, state, pod, ni)
  local name = ls.str(pod.name)
  seen[name] = true
  local names = {}
  for k in pairs(seen) do names[#names + 1] = k end
  table.sort(names)
  if name == "a" or name == "a2" then return ls.unschedulable("saw " .. table.concat(names, ",")) end
  return nil
end
return P
]])
    local cluster = probe_kit.NODES .. [[
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec: {containers: [{name: c, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a2, namespace: default}
spec: {schedulerName: second, containers: [{name: c, image: app}]}
]]
    local profile = "- schedulerName: %s\n  plugins: {multiPoint: {enabled: [{name: Counter}]}}\n"
    local r = run("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n" ..
      profile:format("default-scheduler") .. profile:format("second"), { cluster = cluster })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: 0/2 nodes are available: 2 saw a%.", r.pods.a)
    assert.matches("^pending: 0/2 nodes are available: 2 saw a2%.", r.pods.a2)
  end)
end)

describe("attacker round 4: a plugin's writes and its own pod's retries", function()
  with_tmp()

  -- simulate retries a pod while the cluster changed since its last try; a
  -- Filter that creates an object in every call changed it in every attempt,
  -- and the pod was retried without end (20203 attempts in 34 s). An object a
  -- plugin wrote during a pod's attempt is no news for that pod
  -- (scheduler/own_writes.c): it waits for another change, as any
  -- unschedulable pod does.
  it("a Filter creating an object in every call does not keep its pod retried for ever", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  ls.create_object('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":' ..
    '{"generateName":"c-","namespace":"default"},"spec":{"devices":{"requests":[]}}}')
  return ls.unschedulable("no")
end]])
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 10000"), { limit = 60 })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^pending: 0/2 nodes are available: 2 no%. ", r.pods.a)   -- waits, as any unschedulable pod
    local attempts = tonumber(r.out:match("throughput: (%d+) attempts"))
    assert.is_true(attempts ~= nil and attempts < 100, tostring(attempts))
  end)
end)

describe("attacker round 4: every command with a hostile plugin", function()
  with_tmp()
  local sim = require("sim_helper")

  -- `luasched ARGS...` under a time limit of 120 s; { rc, out, err }.
  local function luasched(args)
    local cmd = { "timeout", "-s", "KILL", "120", sim.bin() }
    for _, a in ipairs(args) do cmd[#cmd + 1] = a end
    for i, a in ipairs(cmd) do cmd[i] = sim.quote(a) end
    local err_path = bench.dir .. "/cmd.err"
    local p = assert(io.popen(table.concat(cmd, " ") .. " 2>" .. sim.quote(err_path) .. "; echo \"rc=$?\""))
    local out = p:read("*a")
    p:close()
    local rc
    out = out:gsub("rc=(%d+)\n$", function(c) rc = tonumber(c); return "" end)
    return { rc = rc, out = out, err = sim.read(err_path) }
  end

  local function files()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local x = 0 while true do x = x + 1 end
end]])
    local cfg = sim.write(bench.dir .. "/config.yaml", config("{name: Probe}"))
    return sim.write(bench.dir .. "/cluster.yaml", CLUSTER), cfg
  end
  local CUT_OFF = 'running "Probe" filter plugin: plugin exceeded its time budget of 300 ms in filter at '

  it("explain of a pod whose Filter plugin loops ends, naming the plugin and its line", function()
    local cluster, cfg = files()
    local r = luasched({ "explain", cluster, "a", "--config", cfg, "--plugin-path", bench.dir .. "/plugins" })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("Result: not scheduled: " .. CUT_OFF .. file_of("probe") .. ":4", r.out, 1, true)
  end)

  -- The generated Filter loop is left by the error before the node's trace
  -- row is written; the dispatcher's error path writes it (handle.trace_raised).
  it("explain shows the node on which a Filter plugin raised as rejected by it", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  error("boom")
end]])
    local cluster = sim.write(bench.dir .. "/cluster.yaml", CLUSTER)
    local cfg = sim.write(bench.dir .. "/config.yaml", config("{name: Probe}"))
    local r = luasched({ "explain", cluster, "a", "--config", cfg, "--plugin-path", bench.dir .. "/plugins" })
    assert.are.equal(0, r.rc, r.err)
    assert.not_matches("\n    node%-[12] +passed\n", r.out)   -- no node row reads passed
    local row = "\n    node%-[12] +rejected by Probe: running \"Probe\" filter plugin: "
    assert.matches(row .. file_of("probe"):gsub("%p", "%%%0") .. ":6: boom\n", r.out)
  end)

  it("compare of two policies whose Filter plugin loops ends, naming the plugin and its line", function()
    local cluster, cfg = files()
    local r = luasched({ "compare", cluster, "--config", cfg, "--config", cfg, "--plugin-path",
      bench.dir .. "/plugins" })
    assert.are.equal(0, r.rc, r.err)
    assert.matches('"Plugin call cut off" plugin="Probe" extensionPoint="Filter" hook="' .. file_of("probe") .. ':4"',
      r.err, 1, true)
    assert.matches("placed differently (seed 0): 0 pods", r.out, 1, true)
  end)
end)
