-- The attacker's round 5 of issue 24 (point 6): attacks written against the
-- README's promise (docs/plugins/sandbox-guarantees.md) after round 4, kept
-- as cases. Each runs the real `luasched simulate` under a time limit with
-- plugins this spec writes and asserts the promise: the run ends, the other
-- pods are scheduled, an error names the plugin whose code ran, its
-- extension point and its file:line. The comment of each case says what it
-- did before, when it broke the promise; a case without one held already.
--
-- Classes: facts the runtime read back from the plugin's own table (its
-- `file`, its hooks); a cycle going on after a cut-off rebuilt the state
-- (the nominated node's Filter); a plugin holding the state at the edge of
-- its memory limit for the next built-in to fail; a name cut short by a
-- fixed buffer; hostile arguments to every ls.* function and metamethods
-- of the plugin's own values; one plugin's code (a metamethod on another's
-- CycleState entry, a function in its own) run in another plugin's call.
local probe_kit = require("probe_kit")

local CLUSTER = probe_kit.NODES .. probe_kit.PROBE_PODS

--- One profile enabling Probe, with a 300 ms budget unless `luasched` says otherwise.
local function config(luasched)
  return ([[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  luasched: {%s}
  plugins:
    multiPoint:
      enabled: [{name: Probe}]
]]):format(luasched or "pluginTimeoutMilliseconds: 300")
end

local bench = probe_kit.bench(CLUSTER)
local file_of, probe, run = bench.file_of, bench.probe, bench.run
local expect_error = probe_kit.expect_error
local function with_tmp() setup(bench.open); teardown(bench.close) end

local PREEMPTING = probe_kit.PREEMPTING   -- the probe pod preempts `low` on node-1, then is nominated there

describe("attacker round 5: what the runtime knows of a plugin is not the plugin's to change", function()
  with_tmp()

  -- Before: `running "Probe" filter plugin: filter returned a table, expected
  -- a status (...) or nil`, no file:line: the runtime appended the hook's
  -- place only when the message did not hold P.file, which the plugin had
  -- set to a word of the message.
  it("a plugin that sets its own file field is still reported at its file and line", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  rawset(P, "file", "filter")
  self.file = ""
  return {}
end]])
    expect_error(run(config()), 'running "Probe" filter plugin: filter returned a table, expected a status ' ..
      "(ls.unschedulable(...), ...) or nil (" .. file_of("probe") .. ":4)")
  end)

  -- Before: the place of `other` (line 4), the hook the plugin assigned
  -- during its call, not of its filter.
  it("a plugin replacing its hook during its call is reported at the hook its profile was built with", function()
    probe([[
local function other() return nil end
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  self.filter = other
  return {}
end]])
    expect_error(run(config()), 'running "Probe" filter plugin: filter returned a table, expected a status ' ..
      "(ls.unschedulable(...), ...) or nil (" .. file_of("probe") .. ":5)")
  end)
end)

describe("attacker round 5: a cycle after a cut-off rebuilt the state", function()
  with_tmp()

  -- Before: the cut-off rebuilt the state, the scheduler went on to filter
  -- every node (as upstream does after the nominated node fails), and
  -- NodeResourcesFit, handed no CycleState, raised: the pod's Error read
  -- `running "NodeResourcesFit" filter plugin: node_resources_fit.lua:294:
  -- attempt to index local 'state' (a nil value)`.
  it("a Filter looping on the pod's nominated node ends the cycle as its own Error", function()
    probe([[
local calls = 0
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  calls = calls + 1
  if calls >= 2 then while true do end end
  return nil
end]])
    local r = run(config(), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^preempted: ", r.pods.low)   -- the first attempt's preemption, Probe passing
    assert.are.equal('pending: running "Probe" filter plugin: plugin exceeded its time budget of 300 ms in filter ' ..
      "at " .. file_of("probe") .. ":5 (the Lua state was restarted)", r.pods.a)
    assert.not_matches("NodeResourcesFit", r.out, 1, true)
  end)

  it("a Filter past the memory limit on the pod's nominated node ends the cycle as its own Error", function()
    probe([[
local calls, hoard = 0, {}
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  calls = calls + 1
  if calls >= 2 then for i = 1, 200 do hoard[#hoard + 1] = string.rep("z", 1024 * 1024 - 64) .. i end end
  return nil
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal('pending: running "Probe" filter plugin: plugin exceeded the Lua memory limit of 67108864 ' ..
      "bytes in filter at " .. file_of("probe") .. ":5 (the Lua state was restarted)", r.pods.a)
    assert.not_matches("NodeResourcesFit", r.out, 1, true)
  end)
end)

describe("attacker round 5: memory held for the next plugin to fail", function()
  with_tmp()

  -- Before: the plugin kept 62.6 MB of a 64 MiB limit from its PreFilter and
  -- returned; the next pod's cycle ran over the limit in InterPodAffinity's
  -- PreScore, and pod b, which no plugin rejected, ended `running PreScore
  -- plugin "InterPodAffinity": plugin exceeded the Lua memory limit`. A plugin
  -- that is not built-in may hold seven eighths of the limit after its call;
  -- the built-ins keep the last eighth.
  it("a plugin holding its state past its share of the memory limit is cut off itself", function()
    probe([[
local hoard = {}
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  for i = 1, 60000 do hoard[i] = string.rep("h", 1000) .. i end
  return nil
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches('^pending: running PreFilter plugin "Probe": plugin left its Lua state holding %d+ bytes, past ' ..
      "the 58720256 its plugins may hold of the Lua memory limit of 67108864 bytes %(the last eighth is kept for " ..
      "the built%-in plugins%) in pre_filter at " .. probe_kit.plain(file_of("probe")) .. ":5 %(the Lua state was " ..
      "restarted%)$", r.pods.a)
  end)

  it("a plugin within its share keeps what it holds", function()
    probe([[
local hoard = {}
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  for i = 1, 40000 do hoard[i] = string.rep("h", 1000) .. i end
  return nil
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)
end)

describe("attacker round 5: names and buffers", function()
  with_tmp()

  -- Before: the claim was created and its name handed back cut to 255
  -- characters; the plugin's own write was news for its pod (another name
  -- noted), the pod retried and the claim written again in every attempt:
  -- simulate did not end (killed by the time limit, the worker at 100% CPU).
  it("a ResourceClaim named past 253 characters is refused as the API server refuses it; simulate ends", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local name, err = ls.create_object('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":' ..
    '{"name":"' .. string.rep("n", 256) .. '","namespace":"default"},"spec":{"devices":{"requests":[]}}}')
  return ls.unschedulable(tostring(name) .. ": " .. tostring(err))
end]])
    local r = run(config(), { limit = 60 })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    local n200 = string.rep("n", 200)
    assert.matches("^pending: 0/2 nodes are available: 2 nil: ResourceClaim \"" .. n200 .. "\" is invalid: " ..
      "metadata.name: Invalid value: \"" .. n200 .. "\": must be no more than 253 characters%.", r.pods.a)
  end)
end)

describe("attacker round 5: values a plugin makes (held)", function()
  with_tmp()

  it("an xpcall handler looping inside a looping call is cut off and named", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  local n = 0
  while true do
    xpcall(function() while true do n = n + 1 end end, function() while true do n = n + 1 end end)
  end
end]])
    expect_error(run(config()), 'running "Probe" filter plugin: plugin exceeded its time budget of 300 ms in ' ..
      "filter at " .. file_of("probe") .. ":4 (the Lua state was restarted)")
  end)

  it("a __tostring that loops, run by tostring, is cut off and named", function()
    probe([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  return ls.unschedulable(tostring(setmetatable({}, { __tostring = function() while true do end end })))
end]])
    expect_error(run(config()), 'running "Probe" filter plugin: plugin exceeded its time budget of 300 ms in ' ..
      "filter at " .. file_of("probe") .. ":4 (the Lua state was restarted)")
  end)

  it("hostile arguments to the ls.* functions raise errors the plugin catches; nothing crashes", function()
    probe([[
local out = {}
local function try(name, f, ...)
  local ok = pcall(f, ...)
  out[#out + 1] = name .. (ok and "+" or "-")
end
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  out = {}
  local mt = setmetatable({}, { __index = function() error("idx") end, __len = function() return 1e9 end })
  try("rn", ls.resource_name, 1e12)
  try("ri", ls.resource_index, mt)
  try("fn", ls.find_node, 0 / 0)
  try("fo", ls.find_object, 1e300, -1, 0 / 0)
  try("ob", ls.objects, mt)
  try("is", ls.image_state, mt, 1)
  try("ns", ls.new_node_selector, { { exprs = { { key = 1e12, op = 99, values = { -1, 0 / 0 }, number = "x" } } } })
  try("nm", function()
    return ls.node_selector_matches(ls.new_node_selector({ { exprs = { { key = 1, op = 99, values = { 5 } } } } }),
      ni.node)
  end)
  try("pt", ls.new_preferred_terms, { { weight = "x", term = mt } })
  try("tol", ls.tolerates, pod.tolerations, 0 / 0, mt)
  try("pq", ls.parse_quantity, string.rep("9", 100000), "cpu")
  try("lbl", ls.label, mt, 1)
  try("st", ls.status, 1e9, "x")
  try("w", ls.wait, 0 / 0)
  try("dns", ls.default_normalize_score, mt, 1e6, 100, false)
  try("po", ls.patch_object, mt, mt, mt, "{}")
  try("co", ls.create_object, string.rep("{", 100000))
  try("qp", ls.queued_pod, 1e300)
  return ls.unschedulable(table.concat(out, " "))
end]])
    local r = run(config("pluginTimeoutMilliseconds: 3000"))
    assert.are.equal(0, r.rc, r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.matches("^pending: 0/2 nodes are available: 2 rn%+ ri%- fn%+ fo%+ ob%- is%- ns%- nm%+ pt%- tol%- pq%+ " ..
      "lbl%- st%- w%- dns%- po%- co%+ qp%+%.", r.pods.a)
  end)

  it("a queue sort whose less is inconsistent schedules every pod once", function()
    bench.write_plugin("probe", [[
local ls = require("luasched")
local P = ls.plugin("Probe")
local n = 0
function P.less(self, a, b)
  n = n + 1
  return n % 3 ~= 0
end
return P
]])
    local pods = {}
    for i = 1, 40 do
      pods[#pods + 1] = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default}\n" ..
        "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 10m}}}]}\n"):format(i)
    end
    local r = run("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n" ..
      "- schedulerName: default-scheduler\n  plugins:\n" ..
      "    queueSort: {enabled: [{name: Probe}], disabled: [{name: \"*\"}]}\n",
      { cluster = probe_kit.NODES .. table.concat(pods) })
    assert.are.equal(0, r.rc, r.err)
    assert.matches("40 pods: 40 bound", r.out, 1, true)
  end)
end)

describe("attacker round 5: an instance claiming to be built-in", function()
  with_tmp()

  -- Before: "read cdata 0": the hint runner asked the instance's own
  -- `builtin` field, which the plugin set in init, and handed it the
  -- event's node itself, readable after its call.
  it("a queueing hint's object kept by a plugin that set self.builtin in init raises when read later", function()
    probe([[
local kept
function P.init(self) self.builtin = true end
P.events = { { resource = "Node", action = { "Add" }, hint = function(pod, old, new) kept = new return ls.QUEUE end } }
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  if kept == nil then
    if ls.str(ni.node.name) ~= "node-2" then return ls.unschedulable("waits for node-2") end
    return nil
  end
  return ls.unschedulable("read " .. type(kept) .. " " .. tostring(kept.labels.n))
end]])
    local r = run(config(), { cluster = probe_kit.node2_at_10s("4") })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal('pending: running "Probe" filter plugin: ' .. file_of("probe") .. ":13: node was handed to a " ..
      "plugin by an earlier call and is gone: views live only during the call that made them (used by plugin " ..
      '"Probe" in filter)', r.pods.a)
  end)
end)

describe("attacker round 5: memory a queueing hint keeps", function()
  with_tmp()

  -- Before: the hint kept 64 MB of a 64 MiB limit and returned (a hint
  -- past the limit was only failed as Queue, the state kept what it took):
  -- the next call to allocate, Probe's Filter, was cut off and blamed for it.
  it("a queueing hint holding its state past the share is named as the hint; the state is rebuilt", function()
    probe([[
local hoard = {}
P.events = { { resource = "Node", action = { "Add" }, hint = function(pod, old, new)
  for i = 1, 60000 do hoard[i] = string.rep("h", 1000) .. i end
  return ls.QUEUE end } }
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  if ls.str(ni.node.name) ~= "node-2" then return ls.unschedulable("waits for node-2") end
  return nil
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"),
      { cluster = probe_kit.node2_at_10s("4") })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal("bound to node-2 at 10s", r.pods.a)
    assert.matches('"Plugin call cut off" err="queueing hint: plugin \\"Probe\\" (queueing hint at ' ..
      file_of("probe") .. ":5): left its Lua state holding ", r.err, 1, true)
    assert.matches("(the last eighth is kept for the built-in plugins) (the Lua state was restarted)", r.err, 1, true)
  end)
end)

describe("attacker round 5: memory a clone_state hook keeps", function()
  with_tmp()

  it("a clone_state hook holding its state past the share is cut off as CloneState, named", function()
    probe([[
local hoard = {}
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  state.Probe = { n = 1 }
  return nil
end
function P.clone_state(self, entry)
  if #hoard == 0 then for i = 1, 60000 do hoard[i] = string.rep("h", 1000) .. i end end
  return { n = entry.n }
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"), { cluster = PREEMPTING })
    assert.are.equal(0, r.rc, r.err)
    assert.matches('running CloneState plugin "Probe": plugin left its Lua state holding %d+ bytes, past the ' ..
      "58720256 its plugins may hold of the Lua memory limit of 67108864 bytes %(the last eighth is kept for the " ..
      "built%-in plugins%) in clone_state at " .. probe_kit.plain(file_of("probe")) .. ":10 %(the Lua state was " ..
      "restarted%)$", r.pods.a)
    assert.matches('"Plugin call cut off" plugin="Probe" extensionPoint="CloneState"', r.err, 1, true)
  end)
end)

describe("attacker round 5: a queueing hint that ends the worker", function()
  with_tmp()

  -- Before: `running (outside a cycle) plugin "plugin "Probe" (queueing hint
  -- at probe.lua:4)": ...` and "an Error of plugin plugin "Probe" (...)": the
  -- runtime's whole note went in the plugin's place, the point was none.
  it("a hint stuck in C ends the worker, named by its plugin, QueueingHint and the hint's line", function()
    probe([[
P.events = { { resource = "Node", action = { "Add" }, hint = function(pod, old, new)
  local s = string.rep("a", 40)
  return s:find(string.rep("a?", 40) .. s .. "b") and ls.QUEUE or ls.QUEUE
end } }
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  if ls.str(ni.node.name) ~= "node-2" then return ls.unschedulable("waits for node-2") end
  return nil
end]])
    local r = run(config(), { cluster = probe_kit.node2_at_10s("4"), limit = 90 })
    assert.are.equal(0, r.rc, r.err)
    assert.are.equal('pending: running QueueingHint plugin "Probe": the simulate worker process was ended by its ' ..
      "supervisor: a plugin call ran past its budget of 300 ms and the 2000 ms grace: default-scheduler/Probe/" ..
      "QueueingHint/default/a in queueing hint at " .. file_of("probe") .. ":4", r.pods.a)
    assert.matches("failed as an Error of plugin Probe\n", r.err, 1, true)
  end)
end)

describe("attacker round 5: memory a plugin's top-level code keeps", function()
  with_tmp()

  -- A hook is cut off only when its own call grows the state past the
  -- share: a plugin that took its memory at load was never checked.
  it("top-level code holding the state past the share is a load error naming the plugin", function()
    probe([[
local hoard = {}
for i = 1, 60000 do hoard[i] = string.rep("h", 1000) .. i end
function P.filter(self, state, pod, ni)
  return #hoard > 0 and nil or nil
end]])
    local r = run(config("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864"))
    assert.are.equal(2, r.rc, r.err)
    assert.matches('plugin "Probe" %(' .. probe_kit.plain(file_of("probe")) .. "%): its top%-level code and init " ..
      "left its Lua state holding %d+ bytes, past the 58720256 its plugins may hold of the Lua memory limit %(the " ..
      "last eighth is kept for the built%-in plugins%)", r.err)
  end)
end)

describe("attacker round 5: the CycleState the plugins that are not built-in share", function()
  with_tmp()

  -- Before: `running "Other" filter plugin: plugin exceeded its time budget
  -- ... in filter at other.lua:3`: Probe's __newindex, set on the shared
  -- side of the state, ran in Other's call and Other was cut off for it.
  it("a metatable on the shared side of the state is refused, in the plugin that sets it", function()
    probe([[
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
  setmetatable(state, { __newindex = function() while true do end end })
  return nil
end]])
    bench.write_plugin("other", [[
local ls = require("luasched")
local P = ls.plugin("Other")
function P.filter(self, state, pod, ni)
  state.Other = 1
  return nil
end
return P
]])
    local cfg = config():gsub("%[{name: Probe}%]", "[{name: Probe}, {name: Other}]")
    expect_error(run(cfg), 'running PreFilter plugin "Probe": ' .. file_of("probe") .. ":6: cannot change a " ..
      "protected metatable")
  end)

end)

describe("attacker round 5: one plugin's code run in another's call", function()
  with_tmp()

  -- Other and Probe, in that order at every point (Other's PreFilter makes
  -- its entry before Probe's runs).
  local function both(luasched)
    return (config(luasched):gsub("%[{name: Probe}%]", "[{name: Other}, {name: Probe}]"))
  end

  -- Plugin Other: its PreFilter makes its entry, state.Other (line 4); its
  -- Filter (line 7) runs `filter_body` from line 8.
  local function other(filter_body)
    bench.write_plugin("other", [[
local ls = require("luasched")
local P = ls.plugin("Other")
function P.pre_filter(self, state, pod)
  state.Other = { seen = true }
  return nil
end
function P.filter(self, state, pod, ni)
]] .. filter_body .. [[

  return nil
end
return P
]])
  end

  -- Probe's PreFilter, for the probe pod: `setup` from line 6.
  local function probe_pre_filter(setup)
    probe([[
function P.pre_filter(self, state, pod)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
]] .. setup .. [[

  return nil
end]])
  end

  local function blamed(line)
    return 'running "Other" filter plugin: plugin "Probe" (' .. file_of("probe") .. ":" .. line ..
      ", its code run in Other's call): "
  end
  local function restarted(what)
    return what .. " in filter at " .. file_of("other") .. ":7 (the Lua state was restarted)"
  end

  -- Before: `running "Other" filter plugin: plugin exceeded its time budget
  -- of 300 ms in filter at other.lua:7`, and the log and the metrics named
  -- Other: Probe's __index on Other's entry ran in Other's call.
  it("an __index set on another plugin's entry, looping in that plugin's call, is cut off naming its own plugin",
    function()
      probe_pre_filter([[
  setmetatable(state.Other, { __index = function(t, k)
    while true do end
  end })]])
      other("  if state.Other.missing then return ls.unschedulable('never') end")
      local r = run(both())
      expect_error(r, blamed(7) .. restarted("plugin exceeded its time budget of 300 ms"))
      assert.matches('"Plugin call cut off" plugin="Probe" extensionPoint="Filter" code="' .. file_of("probe") ..
        ':7" calledPlugin="Other" hook="' .. file_of("other") .. ':7"', r.err, 1, true)
    end)

  it("a function a plugin leaves in its own entry, looping when another plugin calls it, names its own plugin",
    function()
      probe_pre_filter([[
  state.Probe = { next_step = function()
    local n = 0
    while true do n = n + 1 end
  end }]])
      other("  local p = state.Probe\n  if p and p.next_step then p.next_step() end")
      expect_error(run(both()), blamed(8) .. restarted("plugin exceeded its time budget of 300 ms"))
    end)

  it("an error raised by a plugin's metamethod in another plugin's call names the plugin that raised it",
    function()
      probe_pre_filter([[
  setmetatable(state.Other, { __index = function(t, k)
    error("no field " .. k)
  end })]])
      other("  if state.Other.missing then return ls.unschedulable('never') end")
      expect_error(run(both()), blamed(7) .. "no field missing")
    end)

  -- The words name another plugin only when the runtime wrote them: raised
  -- by a plugin itself, they come after its own file and line.
  it("a plugin raising the words that name another plugin's code is still named at its own line", function()
    probe_pre_filter("  state.Other.raise = true")
    other([[  if state.Other.raise then error("plugin \"Probe\" (p.lua:1, its code run in Other's call): x", 0) end]])
    expect_error(run(both()), 'running "Other" filter plugin: ' .. file_of("other") .. ':8: plugin "Probe" ' ..
      "(p.lua:1, its code run in Other's call): x")
  end)

  it("a plugin's metamethod past the memory limit in another plugin's call is cut off naming its own plugin",
    function()
      probe_pre_filter([[
  setmetatable(state.Other, { __index = function(t, k)
    local hoard = {}
    for i = 1, 100000 do hoard[i] = string.rep("m", 1024 * 1024 - 64) .. i end
  end })]])
      other("  if state.Other.missing then return ls.unschedulable('never') end")
      expect_error(run(both("pluginTimeoutMilliseconds: 5000, memoryLimitBytes: 67108864")),
        blamed(8) .. restarted("plugin exceeded the Lua memory limit of 67108864 bytes"))
    end)

  -- A C stack overflowed (an error LuaJIT raises, or the guard page's
  -- fault, recovered): which one depends on where the stack ends; either way
  -- Probe's recursion is named.
  it("a plugin's metamethod recursing through gsub callbacks in another plugin's call names its own plugin",
    function()
      probe_pre_filter([[
  local function deep(s) return (string.gsub(s, ".", function(c) return deep(c .. c) end)) end
  setmetatable(state.Other, { __index = function(t, k)
    local r = deep("ab")
    return r
  end })]])
      other("  if state.Other.missing then return ls.unschedulable('never') end")
      local r = run(both(), { limit = 60 })
      assert.are.equal(0, r.rc, r.err)
      assert.matches("^bound to node%-[12]$", r.pods.b)
      assert.matches('pending: running "Other" filter plugin: plugin "Probe" (' .. file_of("probe") .. ":",
        r.pods.a, 1, true)
    end)

  -- Inside C (a pattern that backtracks) no cut-off ends the call: the
  -- supervisor ends the worker, and the worker's page says whose code ran.
  it("a plugin's metamethod stuck in C in another plugin's call ends the worker, named as its own plugin's", function()
    probe_pre_filter([[
  setmetatable(state.Other, { __index = function(t, k)
    local at = string.rep("a", 40):find(string.rep("a*", 40) .. "b")
    return at
  end })]])
    other("  if state.Other.missing then return ls.unschedulable('never') end")
    local r = run(both(), { limit = 90 })
    expect_error(r, 'running "Other" filter plugin: the simulate worker process was ended by its supervisor: a ' ..
      "plugin call ran past its budget of 300 ms and the 2000 ms grace: default-scheduler/Other/Filter/default/a " ..
      "in filter at " .. file_of("other") .. ':7: plugin "Probe" (' .. file_of("probe") .. ":7, its code run in " ..
      "Other's call)")
    assert.matches("failed as an Error of plugin Probe\n", r.err, 1, true)
  end)

  -- Probe's __index ran (and returned false) in Other's call before Other's
  -- own loop: the cut-off is Other's, worded as ever.
  it("a plugin's own loop after another's metamethod ran in its call is still its own", function()
    probe_pre_filter([[
  setmetatable(state.Other, { __index = function(t, k)
    return tostring(k) ~= "missing" and nil
  end })]])
    other("  if state.Other.missing == false then while true do end end")
    local r = run(both())
    expect_error(r, 'running "Other" filter plugin: ' .. restarted("plugin exceeded its time budget of 300 ms"))
    assert.matches('"Plugin call cut off" plugin="Other" extensionPoint="Filter" hook="' .. file_of("other") ..
      ':7"', r.err, 1, true)
  end)
end)
