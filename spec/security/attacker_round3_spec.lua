-- The attacker's last round of issue 24 (point 6): attacks a reviewer wrote
-- against the README's promise (docs/plugins/sandbox-guarantees.md) after the
-- worker process, the per-profile state and the view generations landed, kept
-- as cases. Each runs the real `luasched simulate` (or `check`) under a time
-- limit with plugins this spec writes, and asserts the promise: the run goes
-- on (status 0), the other pods are scheduled, and an error names the plugin
-- whose code ran, its extension point and its file:line. The comment of each
-- case says what it did before, when it broke the promise.
--
-- Classes: attribution (the runtime calling a plugin's metamethods; a
-- handle's dry run calling other plugins; a state rebuilt mid-cycle); C
-- memory a plugin grows through ls.* writes; reach beyond the plugin's own
-- scope (API writes of other kinds, plugin names that are paths, files that
-- are no files); escapes and time in error handlers, metamethods and C
-- callbacks.
local sim = require("sim_helper")
local probe_kit = require("probe_kit")

local CLUSTER = probe_kit.NODES .. probe_kit.PROBE_PODS

-- One node full of a low-priority pod: the probe pod (priority 100) preempts,
-- so DefaultPreemption's dry run runs the other plugins (Filter, RemovePod).
local PREEMPTING = probe_kit.PREEMPTING

local STORAGE = [[
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}
---
apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {team: a}}
]]

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
local expect_error, plain = probe_kit.expect_error, probe_kit.plain
local function with_tmp() setup(bench.open); teardown(bench.close) end

-- A bound on a run's peak RSS (MiB) far below what the attacks reached before
-- (1.3 GB and more); ASan's shadow memory and quarantine add their own.
local RSS_BOUND = os.getenv("LUASCHED_SANITIZED") and 600 or 200
local RESTARTED = "plugin exceeded its time budget of 300 ms (the Lua state was restarted)"
-- A cut-off in a cycle's call names the hook and its file:line too.
local function cut_off_at(hook, file, line)
  return string.format("plugin exceeded its time budget of 300 ms in %s at %s:%d (the Lua state was restarted)",
    hook, file, line)
end

describe("attacker round 3: the runtime runs a plugin's code for it", function()
  with_tmp()

  -- Reserve plugins [Evil, Victim]: Victim rejects the probe pod, so
  -- Unreserve runs in reverse order; Evil has no unreserve, and its plugin
  -- table's __index runs when the runtime looks the hook up.
  local function evil_index(body)
    write_plugin("evil", ([[
local ls = require("luasched")
local P = ls.plugin("Evil")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
local armed = false
function P.reserve(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then armed = true end
  return nil
end
setmetatable(P, { __index = function(_, k)
  if armed and k == "unreserve" then armed = false; %s end
end })
return P
]]):format(body))
    write_plugin("victim", [[
local ls = require("luasched")
local P = ls.plugin("Victim")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.reserve(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then return ls.unschedulable("victim says no") end
  return nil
end
function P.unreserve() end
return P
]])
  end

  -- Before: `running Unreserve plugin "Victim"` in the pod and the log (the
  -- Reserve plugin index left current from Reserve), Victim's hook as where.
  it("an __index on the plugin table looping when the runtime looks up unreserve is that plugin's", function()
    evil_index("local x = 0 while true do x = x + 1 end")
    local r = run(config("{name: Evil}, {name: Victim}"))
    expect_error(r, 'running Unreserve plugin "Evil": ' .. RESTARTED)
    assert.matches('"Plugin call cut off" plugin="Evil" extensionPoint="Unreserve"', r.err, 1, true)
    assert.not_matches('plugin="Victim"', r.err, 1, true)
  end)

  -- Before: the error escaped Unreserve as `unreserve: FILE:10: from evil
  -- index`, naming no plugin, and replaced the pod's Reserve status.
  it("an __index raising when the runtime looks up unreserve is logged as that plugin's; the pod keeps its status",
    function()
    evil_index('error("from evil index")')
    local r = run(config("{name: Evil}, {name: Victim}"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.are.equal("pending: 0/1 nodes are available: 1 victim says no.", r.pods.a)
    assert.matches('luasched: running Unreserve plugin "Evil": ' .. file_of("evil") .. ":10: from evil index",
      r.err, 1, true)
  end)

  -- Before: after the cut-off rebuilt the Lua state, Unreserve ran on the new
  -- instances with a nil CycleState, and the log said `running Unreserve
  -- plugin "VolumeBinding": volume_binding.lua:768: attempt to index local
  -- 'state' (a nil value)`: an innocent built-in blamed.
  it("a PreBind cut off blames no other plugin's Unreserve in the rebuilt state", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local x = 0 while true do x = x + 1 end
end]])
    local r = run(config("{name: Probe}"))
    expect_error(r, 'running PreBind plugin "Probe": ' .. cut_off_at("pre_bind", file_of("probe"), 4))
    assert.not_matches("Unreserve", r.err, 1, true)
    assert.not_matches("VolumeBinding", r.err, 1, true)
  end)

  -- Before: `running PostFilter plugin "?"` (the Filter plugin's index
  -- looked up in the PostFilter list), hook="?".
  it("a Filter plugin looping in DefaultPreemption's dry run is named with Filter and its line", function()
    write_plugin("evil", [[
local ls = require("luasched")
local P = ls.plugin("Evil")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) == YES then local x = 0 while true do x = x + 1 end end
end
return P
]])
    local r = run(config("{name: Evil}"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    -- NodeResourcesFit rejects the pod before Evil runs; Evil loops in the dry run
    assert.are.equal('pending: 0/1 nodes are available: 1 Insufficient cpu. running "Evil" filter plugin: ' ..
      cut_off_at("filter", file_of("evil"), 4), r.pods.a)
    assert.matches('"Plugin call cut off" plugin="Evil" extensionPoint="Filter" hook="' .. file_of("evil") .. ':4"',
      r.err, 1, true)
  end)

  -- Before: cut off as DefaultPreemption's PostFilter.
  it("a RemovePod looping in DefaultPreemption's dry run is named with RemovePod and its line", function()
    write_plugin("evil", [[
local ls = require("luasched")
local P = ls.plugin("Evil")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.pre_filter() return nil end
function P.remove_pod(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then local x = 0 while true do x = x + 1 end end
end
function P.add_pod() end
return P
]])
    local r = run(config("{name: Evil}"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal('pending: 0/1 nodes are available: 1 Insufficient cpu. running RemovePod plugin "Evil": ' ..
      cut_off_at("remove_pod", file_of("evil"), 5), r.pods.a)
    assert.matches('"Plugin call cut off" plugin="Evil" extensionPoint="RemovePod" hook="' ..
      file_of("evil") .. ':5"', r.err, 1, true)
  end)

  -- Before: a plugin's clone_state hook (CycleState.Clone of its entry), run
  -- by the plugin that clones the state (DefaultPreemption's dry run), was
  -- cut off as `running PostFilter plugin "DefaultPreemption"`. It is a hook
  -- row of its own now (CloneState, over the PreFilter list).
  it("a clone_state hook looping in DefaultPreemption's dry run is named as its own plugin's", function()
    write_plugin("evil", [[
local ls = require("luasched")
local P = ls.plugin("Evil")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then state.Evil = { n = 1 } end
  return nil
end
function P.clone_state(self, entry)
  local x = 0 while true do x = x + 1 end
end
return P
]])
    local r = run(config("{name: Evil}"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.matches('"Plugin call cut off" plugin="Evil" extensionPoint="CloneState" hook="' .. file_of("evil") ..
      ':8"', r.err, 1, true)
    assert.matches('running CloneState plugin "Evil": ', r.pods.a, 1, true)
    assert.matches(" in clone_state at " .. file_of("evil") .. ":8", r.pods.a, 1, true)
    assert.not_matches("DefaultPreemption", r.pods.a, 1, true)
  end)

  it("an error value whose __index, __tostring and __concat loop is named by its type, none of them run", function()
    probe([[
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local function spin() while true do end end
  error(setmetatable({}, { __index = spin, __tostring = spin, __concat = spin, __eq = spin, __len = spin }))
end]])
    expect_error(run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000")),
      'running "Probe" filter plugin: ' .. file_of("probe") .. ":7: (a table was raised as the error)")
  end)

  it("a returned table whose metamethods loop is named by its type, none of them run", function()
    probe([[
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local function spin() while true do end end
  return setmetatable({}, { __index = spin, __len = spin, __tostring = spin, __eq = spin })
end]])
    expect_error(run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000")),
      'running "Probe" filter plugin: filter returned a table, expected a status ' ..
      "(ls.unschedulable(...), ...) or nil (" ..
      file_of("probe") .. ":4)")
  end)
end)

describe("attacker round 3: a plugin's text in the scheduler's log", function()
  with_tmp()

  local FORGED = 'E1129 07:40:52.678226   23400 runtime.c:760] "Plugin call cut off" plugin="NodeResourcesFit"'

  -- Before: the second line was written as it was, a log line of the
  -- scheduler naming NodeResourcesFit.
  it("print of several lines prefixes every line with the plugin's file", function()
    probe(([[
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  print("hello\n%s\r\ndefault/b: bound to node-9\rlast")
end]]):format(FORGED:gsub('"', '\\"')))
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err)
    local prefix = file_of("probe") .. ": "
    local lines = {}
    for line in r.err:gmatch("[^\n]+") do
      if line:find("hello", 1, true) or line:find("node-9", 1, true) or line:find("last", 1, true)
        or line:find("NodeResourcesFit", 1, true) then
        lines[#lines + 1] = line
      end
    end
    assert.are.same({ prefix .. "hello", prefix .. FORGED, prefix .. "default/b: bound to node-9", prefix .. "last" },
      { lines[1], lines[2], lines[3], lines[4] })
    for _, line in ipairs(lines) do assert.are.equal(prefix, line:sub(1, #prefix)) end
    assert.not_matches("node-9", r.out, 1, true)
  end)

  -- Before: `luasched: running Unreserve plugin "Evil": FILE:5: boom` then
  -- the forged line on a line of its own.
  it("an Unreserve error of several lines is logged on one line", function()
    write_plugin("evil", ([[
local ls = require("luasched")
local P = ls.plugin("Evil")
function P.reserve() return nil end
function P.unreserve()
  error("boom\n%s")
end
return P
]]):format(FORGED:gsub('"', '\\"')))
    write_plugin("victim", [[
local ls = require("luasched")
local P = ls.plugin("Victim")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
function P.reserve(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then return ls.unschedulable("victim says no") end
  return nil
end
return P
]])
    local r = run(config("{name: Evil}, {name: Victim}"))
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal("pending: 0/1 nodes are available: 1 victim says no.", r.pods.a)
    assert.matches('luasched: running Unreserve plugin "Evil": ' .. file_of("evil") .. ":5: boom\\n" .. FORGED,
      r.err, 1, true)
    for line in r.err:gmatch("[^\n]+") do
      assert.is_nil(line:find("^E%d+ .*Plugin call cut off"), line)
    end
  end)
end)

describe("attacker round 3: a plugin's text in the report", function()
  with_tmp()

  -- Before: ls.reject's message kept its line breaks, and the report printed
  -- them: `default/b: bound to node-9` and `summary: forged` were lines of
  -- simulate's own report.
  it("a waiting pod rejected with a message of several lines is one line of the report", function()
    probe([[
function P.permit(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then return ls.wait(1) end
  return nil
end
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) == YES then return nil end
  for wp in ls.waiting_pods() do ls.reject(wp, "Probe", "no\ndefault/b: bound to node-9\rsummary: forged") end
  return nil
end]])
    local cluster = CLUSTER .. "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: default}\n" ..
      "spec: {containers: [{name: c, image: app}]}\n"
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000"),
      { cluster = cluster, args = { "--realtime" } })
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("\ndefault/a: pending: no\\ndefault/b: bound to node-9\\rsummary: forged (attempt 1 at ", r.out,
      1, true)
    assert.not_matches("\ndefault/b: bound to node%-9", r.out)
    assert.not_matches("\nsummary: forged", r.out)
    assert.matches("\ndefault/b: bound to node%-[12] at ", r.out)
  end)
end)

describe("attacker round 3: C memory and API writes", function()
  with_tmp()

  -- Before: each patch merged into the PV kept in the embedded cluster: 400
  -- patches of 1 MiB made a peak RSS of 1.3 GB with a 64 MiB Lua limit.
  it("annotations past the API server's 256 KiB are refused as upstream refuses them; memory stays bounded", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local s, first, ok = string.rep("x", 100 * 1024), nil, 0
  for i = 1, 400 do
    local e = ls.patch_object("PersistentVolume", nil, "pv1",
      '{"metadata":{"annotations":{"k' .. i .. '":"' .. s .. '"}}}')
    if e then first = first or e else ok = ok + 1 end
  end
  return ls.unschedulable(ok .. " accepted; " .. tostring(first))
end]])
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 20000, memoryLimitBytes: 67108864"),
      { cluster = CLUSTER .. STORAGE })
    -- 2 x 100 KiB fit in 256 KiB, the third does not
    expect_error(r, '2 accepted; PersistentVolume "pv1" is invalid: ' ..
      "metadata.annotations: Too long: must have at most 262144 bytes")
    assert.is_true(r.rss < RSS_BOUND, "peak RSS " .. tostring(r.rss) .. " MiB")
  end)

  -- Before: ls.patch_object("Namespace", ...) changed the namespace's labels
  -- in simulate (and so every profile's namespaceSelector answers), while
  -- run's worker and supervisor write PersistentVolumes and claims only.
  it("a patch of any kind but PersistentVolumes and claims is refused in simulate as in run", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local e = ls.patch_object("Namespace", nil, "default", '{"metadata":{"labels":{"team":"evil"}}}')
  local team = ls.str(ls.label(ls.namespace_labels("default"), ls.intern("team")))
  return ls.unschedulable(tostring(e) .. "; team " .. team)
end]])
    expect_error(run(config("{name: Probe}"), { cluster = CLUSTER .. STORAGE }),
      "updating Namespace default: only PersistentVolumes and claims are written; team a")
  end)

  it("a string of 2 GiB is the plugin's out-of-memory error, named", function()
    probe([[
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  return ls.unschedulable(#string.rep("ab", 2 ^ 30))
end]])
    expect_error(run(config("{name: Probe}")),
      'running "Probe" filter plugin: not enough memory (' .. file_of("probe") .. ":4)")
  end)

  -- Before: every patch the embedded cluster accepts keeps the replaced
  -- version until the cluster is freed (core/src/sim/cluster.c: the
  -- scheduler's snapshot may still point at it). 2000 small patches of one
  -- 200 KiB PersistentVolume in one call reached 400 MiB of C memory with a
  -- 64 MiB Lua limit, 10000 (the per-call cap) 2 GB. Now the versions one
  -- plugin call's writes make the cluster keep are capped (16 MiB): past it,
  -- the write fails with a message saying so.
  it("repeated patches of one object keep C memory bounded", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  ls.patch_object("PersistentVolume", nil, "pv1",
    '{"metadata":{"annotations":{"big":"' .. string.rep("x", 200 * 1024) .. '"}}}')
  local err
  for i = 1, 2000 do
    err = ls.patch_object("PersistentVolume", nil, "pv1", '{"metadata":{"annotations":{"n":"' .. i .. '"}}}') or err
  end
  return ls.unschedulable("patched: " .. tostring(err))
end]])
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 20000, memoryLimitBytes: 67108864"),
      { cluster = CLUSTER .. STORAGE })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("patched: updating PersistentVolume pv1: this plugin call's writes replaced %d+ bytes of " ..
      "objects, which the cluster keeps until the simulation ends %(at most 16 MiB per call%); write each object " ..
      "once per call", r.pods.a)
    assert.is_true(r.rss < RSS_BOUND, "peak RSS " .. tostring(r.rss) .. " MiB")
  end)

  -- Before: a NodeInfo clone (self.handle:clone_node_info) was freed by the
  -- garbage collector once its reference was dropped, while the views taken
  -- from it (clone.pods) still pointed into it: after a collection the plugin
  -- read the freed clone's count (0 instead of 1) in the same call. Now a
  -- plugin's clones live until its call ends, and what it reads through them
  -- is a reference of that call (views.lua).
  it("a view taken from a NodeInfo clone keeps reading the clone during its call", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local c = self.handle:clone_node_info(ni)
  self.handle:add_pod_to(c, pod)   -- the dry run removed the victim: the clone holds the probe pod only
  local pods = c.pods
  local before = #pods
  c = nil
  for _ = 1, 30 do local t = {} for j = 1, 10000 do t[j] = { j } end end
  local more = {}
  for i = 1, 100 do more[i] = self.handle:clone_node_info(ni) end
  return ls.unschedulable(before .. " then " .. #pods)
end]])
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("1 then 1", r.pods.a, 1, true)
  end)
end)

describe("attacker round 3: plugin files and names", function()
  with_tmp()

  -- Before: check said ok and loaded plugins/../outside/sneaky.lua.
  it("a plugin name holding a path is refused, at its line, in check and simulate", function()
    assert(sim.sh_ok("mkdir -p " .. sim.quote(bench.dir .. "/outside")))
    sim.write(bench.dir .. "/outside/sneaky.lua", [[
local ls = require("luasched")
local P = ls.plugin("../outside/Sneaky")
function P.filter() return ls.unschedulable("sneaky ran") end
return P
]])
    assert(sim.sh_ok("mkdir -p " .. sim.quote(bench.dir .. "/plugins")))
    local cfg = config("{name: ../outside/Sneaky}")
    local want = ':8: profile default-scheduler: plugin "../outside/Sneaky" not found: a plugin name is no path ' ..
      '(it may not hold "/" or "..")'
    for _, command in ipairs({ "check", "simulate" }) do
      local r = run(cfg, { command = command })
      assert.are.equal(2, r.rc, command .. ": " .. r.err .. r.out)
      assert.matches(plain(want), r.err .. r.out)
      assert.not_matches("sneaky ran", r.out, 1, true)
    end
  end)

  -- Before: `loading plugin DirPlug: .../lua/luasched/loader.lua:141:
  -- attempt to index local 'text' (a nil value)`.
  it("a plugin file that is a directory is named with why it cannot be read", function()
    assert(sim.sh_ok("mkdir -p " .. sim.quote(bench.dir .. "/plugins/dir_plug.lua")))
    local r = run(config("{name: DirPlug}"), { command = "check" })
    assert.are.equal(2, r.rc, r.err .. r.out)
    assert.matches("plugins/dir_plug.lua: cannot be read: Is a directory", r.err .. r.out, 1, true)
    assert.not_matches("loader.lua", r.err .. r.out, 1, true)
    assert(sim.sh_ok("rmdir " .. sim.quote(bench.dir .. "/plugins/dir_plug.lua")))
  end)

  it("a plugin file that is a symlink to a file that is no Lua is a syntax error naming the plugin's file", function()
    assert(sim.sh_ok("ln -sf /etc/hostname " .. sim.quote(bench.dir .. "/plugins/link_plug.lua")))
    local r = run(config("{name: LinkPlug}"), { command = "check" })
    assert.are.equal(2, r.rc, r.err .. r.out)
    assert.matches("plugins/link_plug.lua:%d+: ", r.err .. r.out)
    assert(sim.sh_ok("rm -f " .. sim.quote(bench.dir .. "/plugins/link_plug.lua")))
  end)
end)

describe("attacker round 3: error handlers, C callbacks and addresses", function()
  with_tmp()

  it("an xpcall handler that raises again ends as Lua's 'error in error handling', the run goes on", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local function again(e) error(e) end
  local ok, e = xpcall(function() error("x") end, again)
  return ls.unschedulable(tostring(ok) .. " " .. tostring(e))
end]])
    expect_error(run(config("{name: Probe}")), "false error in error handling")
  end)

  it("an xpcall handler that recurses through xpcall ends, the run goes on", function()
    probe([[
function P.pre_bind(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local function h(e) return xpcall(error, h, e) end
  local ok = xpcall(error, h, "x")
  return ls.unschedulable("ended " .. tostring(ok))
end]])
    expect_error(run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000")), "ended false")
  end)

  it("a gsub callback allocating for ever is cut off at the plugin's line", function()
    probe([[
function P.filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  return ("x"):rep(1000):gsub("x", function() local t = {} for i = 1, 1e7 do t[i] = i end end)
end]])
    -- cut off by the count hook (at the line) or, in a C call, by the signal
    -- (the state restarted): named by the plugin and its point either way
    local r = run(config("{name: Probe}"))
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    local a = r.pods.a
    assert.is_true(a == "pending: " .. 'running "Probe" filter plugin: ' .. file_of("probe") ..
      ":6: plugin exceeded its time budget of 300 ms"
      or a == 'pending: running "Probe" filter plugin: ' .. RESTARTED
      -- under load the signal may land in the hook's own frame (seen in a
      -- loaded ctest run): the cut-off then names the hook's line
      or a == 'pending: running "Probe" filter plugin: ' .. cut_off_at("filter", file_of("probe"), 4), a)
  end)

  it("string.format('%s') of every struct and list a plugin reaches shows no address", function()
    local fields = {}
    local cdefs = sim.read((sim.bin():gsub("luasched$", "gen/luasched/cdefs.lua")))
    for f in cdefs:gmatch("\n%s*const [%w_]+ %*([%w_]+);") do
      fields[#fields + 1] = '"' .. f .. '"'
    end
    assert.is_true(#fields > 20, "the struct fields of cdefs.lua")
    probe(([[
local FIELDS = { %s }
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local found, tried = {}, 0
  for name, o in pairs({ pod = pod, ni = ni, node = ni.node, labels = pod.labels, container = pod.containers[0] }) do
    for _, f in ipairs(FIELDS) do
      local ok, v = pcall(function() return o[f] end)
      if ok and v ~= nil then
        tried = tried + 1
        for _, s in ipairs({ string.format("%%s", v), tostring(v), ("%%s"):format(v) }) do
          if s:find("0x") then found[#found + 1] = name .. "." .. f .. "=" .. s end
        end
        local ok0, e0 = pcall(function() return v[0] end)
        if ok0 and e0 ~= nil and string.format("%%s", e0):find("0x") then
          found[#found + 1] = name .. "." .. f .. "[0]"
        end
      end
    end
  end
  return ls.unschedulable(tried .. " tried, addresses: " .. table.concat(found, ","))
end]]):format(table.concat(fields, ", ")))
    local r = run(config("{name: Probe}", "pluginTimeoutMilliseconds: 3000"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^pending: 0/2 nodes are available: 2 %d+ tried, addresses: %.", r.pods.a)
  end)
end)
