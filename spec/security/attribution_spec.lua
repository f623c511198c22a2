-- Names are never wrong (issue 24, point 4), for every extension point and
-- every runtime hook: a plugin "Probe" whose hook raises, then loops, for
-- the probe pod only. The error and the cut-off must name the plugin, its
-- extension point (or hook) and file:line, in the pod's status where the point
-- has one, else in the log line; the other pod is bound. Each expected text is
-- built from the source below: the hook is defined at line 4 of probe.lua,
-- its body (the raise or the loop) is line 6. The queueing hints' errors and
-- cut-offs are boundary_attacks_spec's; PostFilter's nominated node, the sign
-- hook's cut-off (a state rebuilt mid-cycle ends the pod's cycle as the sign
-- plugin's Error), PostBind's, Unreserve's and the queue sort's cut-offs are
-- isolation_spec's "names are never wrong".
local probe_kit = require("probe_kit")

local FILE

local CLUSTER = [[
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: app}]}
]]
local bench = probe_kit.bench(CLUSTER)

-- Probe: `hook(args)` at line 4, returning `fallback` for pod b (line 5),
-- running `body` for pod a (line 6); `more` after it (other hooks).
local function write_probe(hook, args, guard, fallback, body, more)
  bench.write_plugin("probe", probe_kit.HEAD .. ([[
function P.%s(%s)
  if ls.label(%s.labels, KEY) ~= YES then return %s end
  %s
end
%s
return P
]]):format(hook, args, guard, fallback, body, more or ""))
end

local BASE = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n" ..
  "- schedulerName: default-scheduler\n  luasched: {pluginTimeoutMilliseconds: 300}\n  plugins:\n"
local MULTI = "    multiPoint:\n      enabled: [{name: Probe}]\n"

local function simulate(plugins) return bench.run(BASE .. (plugins or MULTI)) end

local RESTARTED = "(the Lua state was restarted)"
local function cut_in_cycle(hook) return ("plugin exceeded its time budget of 300 ms in %s at %s:4 %s"):format(hook,
  FILE, RESTARTED) end
local function cut_queue_side(point, hook)
  return ('%s: plugin "Probe" (%s at %s:4): exceeded its time budget of 300 ms %s'):format(point, hook, FILE, RESTARTED)
end
local function raised() return FILE .. ":6: boom" end
-- the log line of a cut-off call in a cycle (runtime.c's ls_rt_recover)
local function cut_log(point, hook, head)
  return ('"Plugin call cut off" plugin="Probe" extensionPoint="%s" hook="%s:4" err="%s%s"'):format(point, FILE,
    head:gsub('"', '\\"'), cut_in_cycle(hook))
end

-- Points whose failure is the pod's status: { hook, args, head of the
-- message, what precedes the head in the pod's outcome, more source, plugins }.
local FILTER_NO = 'function P.filter(self, state, pod) ' ..
  'if ls.label(pod.labels, KEY) == YES then return ls.unschedulable("no") end end'
local IN_POD = {
  { "pre_filter", "self, state, pod", 'running PreFilter plugin "Probe": ' },
  { "filter", "self, state, pod, ni", 'running "Probe" filter plugin: ' },
  { "post_filter", "self, state, pod", '0/2 nodes are available: 2 no. running PostFilter plugin "Probe": ',
    FILTER_NO },
  { "pre_score", "self, state, pod, nodes", 'running PreScore plugin "Probe": ' },
  { "score", "self, state, pod, ni", 'running Score plugin "Probe": ', nil, nil, "0" },
  { "reserve", "self, state, pod, node", 'running Reserve plugin "Probe": ' },
  { "permit", "self, state, pod, node", 'running Permit plugin "Probe": ' },
  { "pre_bind", "self, state, pod, node", 'running PreBind plugin "Probe": ' },
  { "bind", "self, state, pod, node", 'running Bind plugin "Probe": ', nil,
    '    bind: {enabled: [{name: Probe}, {name: DefaultBinder}], disabled: [{name: "*"}]}\n', "ls.skip" },
}

describe("attribution: every extension point and runtime hook names the plugin, its point and file:line", function()
  setup(function()
    bench.open()
    FILE = bench.file_of("probe")
  end)
  teardown(bench.close)

  for _, case in ipairs(IN_POD) do
    local hook, args, head, more, plugins, fallback = case[1], case[2], case[3], case[4], case[5], case[6]
    local point = head:match("running (%u%a+) plugin") or "Filter"
    it(hook .. ": an error names the plugin, " .. point .. " and file:line in the pod's status", function()
      write_probe(hook, args, "pod", fallback or "nil", 'error("boom")', more)
      local r = simulate(plugins and (MULTI .. plugins))
      assert.are.equal(0, r.rc, r.err)
      assert.are.equal("pending: " .. head .. raised(), r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
    end)
    it(hook .. ": a cut-off names them in the pod's status and the log", function()
      write_probe(hook, args, "pod", fallback or "nil", "while true do end", more)
      local r = simulate(plugins and (MULTI .. plugins))
      assert.are.equal(0, r.rc, r.err)
      assert.are.equal("pending: " .. head .. cut_in_cycle(hook), r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
      local log_head = head:match("(running .*)$")
      assert.truthy(r.err:find(cut_log(point, hook, log_head), 1, true), r.err)
    end)
  end

  -- NormalizeScore runs inside Score's call: its error is Score's in upstream's
  -- words; its cut-off names Score and the score hook (the runtime cannot ask
  -- the abandoned state which hook ran).
  it("normalize_score: an error names the plugin and file:line under Score", function()
    write_probe("normalize_score", "self, state, pod", "pod", "nil", 'error("boom")', "function P.score() return 0 end")
    local r = simulate()
    assert.are.equal("pending: running Score plugin \"Probe\": " .. raised(), r.pods.a)
  end)

  it("pre_enqueue: an error gates the pod under the plugin; a cut-off names the hook and file:line", function()
    write_probe("pre_enqueue", "self, pod", "pod", "nil", 'error("boom")')
    local r = simulate()
    assert.are.equal('gated: running PreEnqueue plugin "Probe": ' .. raised(), r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    write_probe("pre_enqueue", "self, pod", "pod", "nil", "while true do end")
    r = simulate()
    assert.are.equal("pending: " .. cut_queue_side("PreEnqueue", "pre_enqueue"), r.pods.a)
  end)

  -- Hooks without a status of their own: the log names them.
  local RESERVE_NO = "function P.reserve(self, state, pod) " ..
    'if ls.label(pod.labels, KEY) == YES then return ls.unschedulable("reserve says no") end end'
  local LOGGED = {
    { "unreserve", "self, state, pod, node", "pod", "nil", RESERVE_NO, nil,
      'luasched: running Unreserve plugin "Probe": ',
      "pending: 0/1 nodes are available: 1 reserve says no." },
    { "post_bind", "self, state, pod, node", "pod", "nil", nil, nil, 'luasched: running PostBind plugin "Probe": ' },
    { "pre_bind_pre_flight", "self, state, pod, node", "pod", "nil", "function P.pre_bind() return nil end", nil,
      'luasched: running PreBindPreFlight plugin "Probe": ' },
    { "less", "self, a, b", "a", "a.priority > b.priority", nil,
      '    queueSort: {enabled: [{name: Probe}], disabled: [{name: "*"}]}\n',
      'luasched: running QueueSort plugin "Probe" (less): ' },
    { "sign", "self, pod", "pod", '""', "function P.filter() return nil end",
      "    multiPoint:\n      enabled: [{name: PrioritySort}, {name: Probe}, {name: NodeResourcesFit}, " ..
      '{name: DefaultBinder}]\n      disabled: [{name: "*"}]\n', 'luasched: running Sign plugin "Probe": ' },
  }
  for _, case in ipairs(LOGGED) do
    local hook, args, guard, fallback, more, plugins, head, a_outcome =
      case[1], case[2], case[3], case[4], case[5], case[6], case[7], case[8]
    it(hook .. ": an error is logged naming the plugin, its hook and file:line", function()
      write_probe(hook, args, guard, fallback, 'error("boom")', more)
      local r = simulate(plugins)
      assert.are.equal(0, r.rc, r.err)
      assert.truthy(r.err:find(head .. raised(), 1, true), r.err)
      if a_outcome then
        assert.are.equal(a_outcome, r.pods.a)
      else
        assert.matches("^bound to node%-[12]$", r.pods.a)
      end
      assert.matches("^bound to node%-[12]$", r.pods.b)
    end)
  end

  it("less: a cut-off is logged naming QueueSort, the plugin, its hook and file:line", function()
    write_probe("less", "self, a, b", "a", "a.priority > b.priority", "while true do end")
    local r = simulate('    queueSort: {enabled: [{name: Probe}], disabled: [{name: "*"}]}\n')
    assert.are.equal(0, r.rc, r.err)
    assert.truthy(r.err:find(cut_queue_side("QueueSort", "less"):gsub('"', '\\"'), 1, true), r.err)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)
end)
