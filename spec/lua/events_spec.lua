-- Plugins' `events` tables (EventsToRegister) and queueing hints, end to end:
-- the real `luasched simulate` runs small clusters on its virtual clock with
-- plugins this spec writes into a scratch directory.
--
-- The plugins under test are Filter plugins that reject pods labelled `probe`
-- on every node that lacks the label ready=true; only their events tables
-- differ. A timeline then brings a ready node at 60 s. The expected times come
-- from the kube-scheduler reference, section 3:
-- * a plugin without EventsToRegister is registered for every event (3.5),
--   so the node's arrival moves the pod: bound at 1m0s (its 1 s backoff from
--   the failure at 0 s is long over);
-- * a plugin that registered nothing (`events = {}`), or whose hint says
--   QueueSkip, leaves the pod among the unschedulable pods until the flush of
--   pods unschedulable for strictly more than 5 min, run every 30 s (3.3): the
--   pod failed at 0 s, 300 s is not more than 5 min, so 330 s = 5m30s;
-- * a hint error counts as Queue (3.5).
-- Malformed events tables fail the plugin's load: exit code 2 and the message
-- lua/luasched/events.lua builds, naming the plugin, its file, the entry and
-- what was expected.
local sim = require("sim_helper")
local write = sim.write

local tmp      -- scratch directory: plugins/ and one subdirectory per run
local runs = 0

--- Writes a plugin file (snake_case name) into the plugin directory.
local function plugin(file, source)
  write(tmp .. "/plugins/" .. file .. ".lua", source)
end

--- The path luasched reports for a plugin file.
local function plugin_path(file)
  return tmp .. "/plugins/" .. file .. ".lua"
end

--- A Filter plugin `name` rejecting probe pods on nodes without ready=true,
--- with `events` (Lua source of the events table, or nil for none).
local function ready_plugin(file, name, events)
  plugin(file, ([[
local ls = require("luasched")
local P = ls.plugin("%s")
%s
function P:init()
  self.probe, self.ready = ls.intern("probe"), ls.intern("ready")
  self.not_ready = ls.unschedulable("node(s) not ready")
end
function P:filter(_, pod, node)
  if ls.label(pod.labels, self.probe) == 0 then return nil end
  if ls.str(ls.label(node.node.labels, self.ready)) ~= "true" then return self.not_ready end
end
return P
]]):format(name, events and ("P.events = " .. events) or "-- no events table"))
end

local NODE_SMALL = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
]]

local PROBE = [[
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
]]

local TIMELINE_NODE_ADD = [[
apiVersion: luasched.io/v1alpha1
kind: Timeline
steps:
- at: 60s
  create:
    apiVersion: v1
    kind: Node
    metadata: {name: node-ready, labels: {ready: "true"}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
]]

-- node-1 becomes ready through a label patch (Node/UpdateNodeLabel), no node added
local TIMELINE_LABEL_PATCH = [[
apiVersion: luasched.io/v1alpha1
kind: Timeline
steps:
- at: 60s
  patch:
    kind: Node
    metadata: {name: node-1, labels: {ready: "true"}}
]]

-- a node that is not ready at 60 s, a ready one at 120 s
local TIMELINE_DECOY = [[
apiVersion: luasched.io/v1alpha1
kind: Timeline
steps:
- at: 60s
  create:
    apiVersion: v1
    kind: Node
    metadata: {name: node-decoy, labels: {zone: b}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- at: 120s
  create:
    apiVersion: v1
    kind: Node
    metadata: {name: node-ready, labels: {ready: "true"}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
]]

local function docs(...)
  return table.concat({ ... }, "---\n")
end

--- A KubeSchedulerConfiguration whose single profile adds `filter` (a plugin
--- name) to the default plugins, or the built-in default when nil.
local function config(filter)
  if not filter then return nil end
  return "apiVersion: kubescheduler.config.k8s.io/v1\n" ..
    "kind: KubeSchedulerConfiguration\n" ..
    "profiles:\n" ..
    "- schedulerName: default-scheduler\n" ..
    "  plugins: {filter: {enabled: [{name: " .. filter .. "}]}}\n"
end

--- Runs `luasched simulate`. Returns rc, out, err and, for text output,
--- pods[name] = the outcome after "default/<name>: ".
local function simulate(cluster_text, config_text, json)
  runs = runs + 1
  local dir = tmp .. "/run" .. runs
  assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
  local args = { "simulate", write(dir .. "/cluster.yaml", cluster_text) }
  if config_text then
    args[#args + 1] = "--config"
    args[#args + 1] = write(dir .. "/config.yaml", config_text)
  end
  args[#args + 1] = "--plugin-path"
  args[#args + 1] = tmp .. "/plugins"
  if json then
    args[#args + 1] = "--output"
    args[#args + 1] = "json"
  end
  local r = sim.run(args, { err = dir .. "/err" })
  r.pods = json and {} or sim.pods(r.out)
  return r
end

local function expect_run(r)
  assert.are.equal(0, r.rc, "luasched simulate failed: " .. r.err .. r.out)
end

--- The scheduling attempts' times of pod `name` in `--output json`.
local function attempt_times(out, name)
  local start = out:find('{"namespace":"default","name":"' .. name .. '",', 1, true)
  assert(start, "no record for pod " .. name .. " in: " .. out)
  local record = out:match("^%b{}", start)
  local attempts = assert(record:match('"attempts":(%b[])'), "no attempts in " .. record)
  local times = {}
  for t in attempts:gmatch('"time":(%d+)') do times[#times + 1] = tonumber(t) end
  return times
end

local ACTIONS = "Add, Delete, Update, All, UpdateNodeAllocatable, UpdateNodeLabel, UpdateNodeTaint, "
  .. "UpdateNodeCondition, UpdateNodeAnnotation, UpdatePodLabel, UpdatePodScaleDown, UpdatePodToleration, "
  .. "UpdatePodSchedulingGatesEliminated or UpdatePodGeneratedResourceClaim"
local RESOURCES = "AssignedPod, UnscheduledPod, TargetPod, Pod, Node, PersistentVolume, PersistentVolumeClaim, "
  .. "StorageClass, CSINode, CSIDriver, "
  .. "CSIStorageCapacity, NodeMetrics, PodMetrics, \"*\", or a custom resource written plural.version.group"

describe("events tables and queueing hints (luasched simulate)", function()
  setup(function()
    sim.bin()   -- asserts LUASCHED_BIN
    tmp = sim.scratch("plugins")
  end)

  teardown(function()
    sim.remove(tmp)
  end)

  -- ---- malformed tables fail the load ------------------------------------

  describe("a malformed events table", function()
    --- Writes plugin `name` with `events`, runs a cluster with it enabled and
    --- checks exit 2 and the exact message on stderr.
    local function expect_load_error(file, name, events, message)
      ready_plugin(file, name, events)
      local r = simulate(docs(NODE_SMALL, PROBE), config(name))
      assert.are.equal(2, r.rc, r.out .. r.err)
      assert.are.equal("", r.out)
      assert.are.equal(string.format("luasched simulate: plugin %q (%s): %s\n", name, plugin_path(file), message),
        r.err)
    end

    it("names an unknown resource and lists the valid ones", function()
      expect_load_error("ev_bad_resource", "EvBadResource",
        '{ { resource = "Node", action = "Add" }, { resource = "Nodes", action = "Add" } }',
        'events[2].resource: unknown resource "Nodes" (expected ' .. RESOURCES .. "); did you mean Node?")
    end)

    it("rejects a resource that is not a string", function()
      expect_load_error("ev_nil_resource", "EvNilResource", '{ { action = "Add" } }',
        'events[1].resource: unknown resource "nil" (expected ' .. RESOURCES .. ")")
    end)

    it("rejects a malformed custom resource name", function()
      -- plural.version.group needs two dots, lowercase letters, no empty part
      expect_load_error("ev_bad_custom", "EvBadCustom", '{ { resource = "widgets.v1", action = "Add" } }',
        'events[1].resource: unknown resource "widgets.v1" (expected ' .. RESOURCES .. ")")
      expect_load_error("ev_bad_custom2", "EvBadCustom2", '{ { resource = "Widgets.v1.example.com", action = "Add" } }',
        'events[1].resource: unknown resource "Widgets.v1.example.com" (expected ' .. RESOURCES .. ")")
      expect_load_error("ev_bad_custom3", "EvBadCustom3", '{ { resource = "widgets..example.com", action = "Add" } }',
        'events[1].resource: unknown resource "widgets..example.com" (expected ' .. RESOURCES .. ")")
    end)

    it("names an unknown action and lists the valid ones", function()
      expect_load_error("ev_bad_action", "EvBadAction", '{ { resource = "Node", action = "Create" } }',
        'events[1].action: unknown action "Create" (expected ' .. ACTIONS .. ")")
    end)

    it("points at the bad element of an action list", function()
      expect_load_error("ev_bad_action_list", "EvBadActionList",
        '{ { resource = "Node", action = { "Add", "Remove" } } }',
        'events[1].action[2]: unknown action "Remove" (expected ' .. ACTIONS .. ")")
    end)

    it("names the action and the entry field meant", function()
      expect_load_error("ev_typo_action", "EvTypoAction", '{ { resource = "Node", action = "UpdateNodeLabels" } }',
        'events[1].action: unknown action "UpdateNodeLabels" (expected ' .. ACTIONS
        .. "); did you mean UpdateNodeLabel?")
      expect_load_error("ev_typo_field", "EvTypoField", '{ { resource = "Node", actions = "Add" } }',
        "events[1].actions: unknown field (expected resource, action or hint); did you mean action?")
    end)

    it("rejects an action that is neither a name nor a list, and an empty list", function()
      expect_load_error("ev_num_action", "EvNumAction", '{ { resource = "Node", action = 3 } }',
        "events[1].action: expected an action name or a list of them, got number")
      expect_load_error("ev_empty_action", "EvEmptyAction", '{ { resource = "Node", action = {} } }',
        "events[1].action: expected at least one action")
    end)

    it("rejects a hint that is not a function", function()
      expect_load_error("ev_bad_hint", "EvBadHint", '{ { resource = "Pod", action = "Delete", hint = "yes" } }',
        "events[1].hint: expected a function(pod, old, new, self), got string")
    end)

    it("rejects entries and tables of the wrong type", function()
      expect_load_error("ev_bad_entry", "EvBadEntry", '{ "Node" }',
        "events[1]: expected a table {resource, action, hint}")
      expect_load_error("ev_bad_events", "EvBadEvents", '"Node"',
        "events: expected a list of {resource, action, hint}, got string")
    end)

    it("accepts every valid form", function()
      ready_plugin("ev_valid", "EvValid", [[{
  { resource = "Node", action = "Add" },
  { resource = "Node", action = { "UpdateNodeLabel", "UpdateNodeTaint" } },
  { resource = "Pod", action = "All", hint = function() return ls.QUEUE end },
  { resource = "*", action = "Update" },
  { resource = "noderesourcetopologies.v1alpha2.topology.node.k8s.io", action = "Update" },
  { resource = "storage.k8s.io/CSINode", action = "Add" },
}]])
      local r = simulate(docs(NODE_SMALL, PROBE), config("EvValid"))
      expect_run(r)
      assert.are.equal("", r.err)
      local msg = "pending: 0/1 nodes are available: 1 node(s) not ready."
      assert.are.equal(msg, r.pods.probe:sub(1, #msg))
    end)
  end)

  -- ---- which events move a rejected pod ----------------------------------

  describe("registrations", function()
    it("no events table: any event moves the pod (a node added at 60 s)", function()
      ready_plugin("ev_none", "EvNone", nil)
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvNone"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 1m0s", r.pods.probe)
    end)

    it("no events table: a node label change moves the pod too", function()
      ready_plugin("ev_none", "EvNone", nil)
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_LABEL_PATCH), config("EvNone"))
      expect_run(r)
      assert.are.equal("bound to node-1 at 1m0s", r.pods.probe)
    end)

    it("an empty table: only the 5-minute flush moves the pod (5m30s)", function()
      ready_plugin("ev_empty", "EvEmpty", "{}")
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvEmpty"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 5m30s", r.pods.probe)
      -- two attempts: the failure at 0 s, the flush at 330 s
      r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvEmpty"), true)
      expect_run(r)
      assert.are.same({ 0, 330 }, attempt_times(r.out, "probe"))
    end)

    it("Node/Add only: the node's arrival moves the pod, a label change does not", function()
      ready_plugin("ev_node_add", "EvNodeAdd", '{ { resource = "Node", action = "Add" } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvNodeAdd"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 1m0s", r.pods.probe)
      r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_LABEL_PATCH), config("EvNodeAdd"))
      expect_run(r)
      assert.are.equal("bound to node-1 at 5m30s", r.pods.probe)
    end)

    it("Node/UpdateNodeLabel only: the label change moves the pod, the node's arrival does not", function()
      ready_plugin("ev_node_label", "EvNodeLabel", '{ { resource = "Node", action = "UpdateNodeLabel" } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_LABEL_PATCH), config("EvNodeLabel"))
      expect_run(r)
      assert.are.equal("bound to node-1 at 1m0s", r.pods.probe)
      r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvNodeLabel"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 5m30s", r.pods.probe)
    end)
  end)

  -- ---- hints --------------------------------------------------------------

  describe("queueing hints", function()
    it("ls.QUEUE_SKIP keeps the pod until the flush", function()
      ready_plugin("ev_hint_skip", "EvHintSkip",
        '{ { resource = "Node", action = "Add", hint = function() return ls.QUEUE_SKIP end } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvHintSkip"))
      expect_run(r)
      assert.are.equal("", r.err)
      assert.are.equal("bound to node-ready at 5m30s", r.pods.probe)
    end)

    it("ls.QUEUE moves the pod at the event", function()
      ready_plugin("ev_hint_queue", "EvHintQueue",
        '{ { resource = "Node", action = "Add", hint = function() return ls.QUEUE end } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvHintQueue"))
      expect_run(r)
      assert.are.equal("", r.err)
      assert.are.equal("bound to node-ready at 1m0s", r.pods.probe)
    end)

    it("sees the pod and the event's objects (old nil and the new node for Node/Add)", function()
      -- Queue only for a ready node: node-decoy (60 s) is skipped, node-ready
      -- (120 s) moves the pod. Attempts at 0 s and 120 s only; without the
      -- hint the decoy would add one at 60 s.
      ready_plugin("ev_hint_objects", "EvHintObjects", [[{
  { resource = "Node", action = "Add", hint = function(pod, old, new)
      assert(ls.str(pod.name) == "probe", "the hint gets the pod")
      assert(old == nil, "no old object for an Add")
      if ls.str(ls.label(new.labels, ls.intern("ready"))) == "true" then return ls.QUEUE end
      return ls.QUEUE_SKIP
    end },
}]])
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_DECOY), config("EvHintObjects"), true)
      expect_run(r)
      assert.are.equal("", r.err)
      assert.are.same({ 0, 120 }, attempt_times(r.out, "probe"))
      assert.truthy(r.out:find('"result":"bound","node":"node-ready"', 1, true), r.out)
      -- the same cluster with no events table: moved by the decoy too
      ready_plugin("ev_none", "EvNone", nil)
      r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_DECOY), config("EvNone"), true)
      expect_run(r)
      assert.are.same({ 0, 60, 120 }, attempt_times(r.out, "probe"))
    end)

    it("a hint that raises counts as Queue, and the error is logged", function()
      ready_plugin("ev_hint_error", "EvHintError",
        '{ { resource = "Node", action = "Add", hint = function() error("hint exploded") end } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvHintError"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 1m0s", r.pods.probe)
      -- the hint is defined on line 3 of the plugin file (after the require
      -- and ls.plugin lines); error() adds the position of the call, same line
      local src = plugin_path("ev_hint_error")
      local expected = string.format(
        "luasched: queueing hint at %s:3 failed (the pod is queued): %s:3: hint exploded\n", src, src)
      assert.are.equal(expected, r.err)
      -- counted with the other plugin faults (and luasched_queueing_hint_errors_total)
      assert.truthy(r.out:find("plugin faults: 0 attempts ended in Error, 0 calls over budget, " ..
        "0 Lua state restarts, 1 queueing hint errors", 1, true))
    end)

    it("a hint returning something else counts as Queue, and says what it returned", function()
      ready_plugin("ev_hint_bad", "EvHintBad",
        '{ { resource = "Node", action = "Add", hint = function() return true end } }')
      local r = simulate(docs(NODE_SMALL, PROBE, TIMELINE_NODE_ADD), config("EvHintBad"))
      expect_run(r)
      assert.are.equal("bound to node-ready at 1m0s", r.pods.probe)
      assert.truthy(r.err:find("failed (the pod is queued): returned true, expected ls.QUEUE or ls.QUEUE_SKIP",
        1, true), r.err)
    end)
  end)

  -- ---- scheduling gates (the default profile's SchedulingGates) -----------

  describe("gated pods", function()
    local GATED = [[
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  schedulingGates: [%s]
  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]
]]
    local function gated(name, gates)
      local list = {}
      for _, g in ipairs(gates) do list[#list + 1] = "{name: " .. g .. "}" end
      return GATED:format(name, table.concat(list, ", "))
    end
    local function patch_gates(at, name, gates)
      return ([[
- at: %s
  patch:
    kind: Pod
    metadata: {name: %s, namespace: default}
    spec: {schedulingGates: %s}
]]):format(at, name, gates)
    end

    it("leave the gate when a patch removes the gates, and are reported while gated", function()
      local timeline = "apiVersion: luasched.io/v1alpha1\nkind: Timeline\nsteps:\n" ..
        patch_gates("45s", "released", "null") ..
        patch_gates("30s", "partly", "[{name: example.com/b}]")
      local r = simulate(docs(NODE_SMALL,
        gated("released", { "example.com/a" }),
        gated("never", { "example.com/a", "example.com/b" }),
        gated("partly", { "example.com/a", "example.com/b" }),
        timeline), nil)
      expect_run(r)
      assert.are.equal("", r.err)
      -- released at 45 s: PreEnqueue passes, scheduled at once
      assert.are.equal("bound to node-1 at 45s", r.pods.released)
      -- never released: the gates in the pod's order, as Go prints a []string
      assert.are.equal("gated: waiting for scheduling gates: [example.com/a example.com/b]", r.pods.never)
      -- one gate removed of two: still gated, on the gate left
      assert.are.equal("gated: waiting for scheduling gates: [example.com/b]", r.pods.partly)
      assert.truthy(r.out:find("1 bound, 0 unschedulable, 0 already running, 2 gated", 1, true), r.out)
      assert.truthy(r.out:find("queues: 0 active, 0 backoff, 0 unschedulable, 2 gated", 1, true), r.out)
    end)

    it("do not count attempts while gated", function()
      local timeline = "apiVersion: luasched.io/v1alpha1\nkind: Timeline\nsteps:\n" ..
        patch_gates("90s", "released", "null")
      local r = simulate(docs(NODE_SMALL, gated("released", { "example.com/a" }), timeline), nil, true)
      expect_run(r)
      assert.are.same({ 90 }, attempt_times(r.out, "released"))
    end)
  end)
end)
