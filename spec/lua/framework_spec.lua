-- The framework's extension-point semantics, end to end: the real `luasched
-- simulate` runs small clusters with small plugins this spec writes into a
-- scratch directory and enables through a KubeSchedulerConfiguration file.
-- Expected messages are upstream's (kube-scheduler reference §1.1, §1.2, §1.5,
-- §6.1 and pkg/scheduler/framework/runtime/framework.go). Plugins act only on
-- pods labelled `probe`, and every run has a plain pod that must still be
-- scheduled, whatever happens to the probe pod.
local sim = require("sim_helper")
local write = sim.write

local tmp      -- scratch directory: plugins/ and one subdirectory per run
local runs = 0

--- Writes plugin `name` (snake_case file name) into the plugin directory.
local function plugin(file, source)
  write(tmp .. "/plugins/" .. file .. ".lua", source)
end

local NODE = [[
apiVersion: v1
kind: Node
metadata: {name: %s}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
]]

local POD = [[
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, labels: {%s}}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
]]

--- A cluster file: `nodes` a list of names, `pods` a list of {name, labels}
--- (labels in YAML flow syntax without the braces, "" for none).
local function cluster(nodes, pods)
  local docs = {}
  for _, n in ipairs(nodes) do docs[#docs + 1] = NODE:format(n) end
  for _, p in ipairs(pods) do docs[#docs + 1] = POD:format(p[1], p[2]) end
  return table.concat(docs, "---\n")
end

--- A KubeSchedulerConfiguration with one profile; `plugins` is the profile's
--- `plugins:` value in YAML flow syntax.
local function config(plugins)
  return "apiVersion: kubescheduler.config.k8s.io/v1\n" ..
    "kind: KubeSchedulerConfiguration\n" ..
    "profiles:\n" ..
    "- schedulerName: default-scheduler\n" ..
    "  plugins: " .. plugins .. "\n"
end

--- Runs `luasched simulate` on a cluster and a config. Returns a table with
--- rc, out, err and, for text output, pods[name] = "bound to N" / "pending: msg".
local function simulate(cluster_text, config_text, json)
  runs = runs + 1
  local dir = tmp .. "/run" .. runs
  assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
  local args = { "simulate", write(dir .. "/cluster.yaml", cluster_text),
                 "--config", write(dir .. "/config.yaml", config_text),
                 "--plugin-path", tmp .. "/plugins",
                 "--allow-plugin-errors" }   -- these runs study plugin errors on purpose
  if json then
    args[#args + 1] = "--output"
    args[#args + 1] = "json"
  end
  local r = sim.run(args, { err = dir .. "/err" })
  r.pods = json and {} or sim.pods(r.out)
  return r
end

-- ---- minimal JSON reading (no JSON library): exact substrings of cJSON's
-- unformatted output; the messages used here contain no braces.

local function escape(s) return (s:gsub("%p", "%%%0")) end

--- The record of pod `name` in `--output json`.
local function pod_record(out, name)
  local start = out:find('{"namespace":"default","name":"' .. name .. '",', 1, true)
  assert(start, "no record for pod " .. name .. " in: " .. out)
  return out:match("^%b{}", start)
end

--- `"key":{...}` of a JSON object text: the {...} part.
local function object(text, key)
  return text:match('"' .. escape(key) .. '":(%b{})')
end

local function number(obj, key)
  return tonumber(obj:match('"' .. escape(key) .. '":(%-?%d+)[,}]'))
end

local function expect_run(r)
  assert.are.equal(0, r.rc, "luasched simulate failed: " .. r.err .. r.out)
  assert.are.equal("", r.err)
end

local DEFAULT_FILTERS = '"NodeUnschedulable":"passed","NodeName":"passed","TaintToleration":"passed",' ..
  '"NodeResourcesFit":"passed"'

-- The profiles merge with the built-in default, so DynamicResources and then
-- DefaultPreemption run at PostFilter (upstream's applyFeatureGates puts
-- DynamicResources before DefaultPreemption); RunPostFilterPlugins joins their
-- Unschedulable reasons with ", ": DynamicResources' "no new claims to
-- deallocate" (its PreFilter recorded no claims), then DefaultPreemption's
-- FitError (reference §2.11, §6.1): nodes rejected as Unresolvable are not
-- candidates; an Unschedulable node without any lower-priority pod (every pod
-- here has priority 0) has no victims.
local NO_CLAIMS = " no new claims to deallocate,"
local NOT_HELPFUL_2 = NO_CLAIMS .. " preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
local NO_VICTIMS_2 = NO_CLAIMS ..
  " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."

local TWO_NODES = { "node-1", "node-2" }
local PROBE_AND_PLAIN = { { "a", "probe: 'yes'" }, { "b", "" } }

describe("framework extension points (luasched simulate)", function()
  setup(function()
    sim.bin()   -- asserts LUASCHED_BIN
    tmp = sim.scratch("plugins")
  end)

  teardown(function()
    sim.remove(tmp)
  end)

  -- ---- 1. PreFilter node names ---------------------------------------------

  describe("PreFilter returning node names", function()
    setup(function()
      for _, spec in ipairs {
        { "only_node_one", "OnlyNodeOne", '"node-1"' },
        { "only_node_two", "OnlyNodeTwo", '"node-2"' },
        { "only_both", "OnlyBoth", '"node-1", "node-2"' },
        { "only_ghost", "OnlyGhost", '"node-9"' },
        { "only_ghost_too", "OnlyGhostToo", '"node-9"' },
        { "only_none", "OnlyNone", "" },
      } do
        plugin(spec[1], ([[
local ls = require("luasched")
local P = ls.plugin("%s")
function P:init() self.key, self.yes = ls.intern("probe"), ls.intern("yes") end
function P:pre_filter(state, pod)
  if ls.label(pod.labels, self.key) == self.yes then return nil, { %s } end
end
return P
]]):format(spec[2], spec[3]))
      end
      plugin("unschedulable_first", [[
local ls = require("luasched")
local P = ls.plugin("UnschedulableFirst")
function P:init() self.key, self.yes = ls.intern("probe"), ls.intern("yes") end
function P:pre_filter(state, pod)
  if ls.label(pod.labels, self.key) == self.yes then return ls.unschedulable("first is unschedulable") end
end
return P
]])
      plugin("prefer_node_one", [[
local ls = require("luasched")
local P = ls.plugin("PreferNodeOne")
function P:init() self.one = ls.intern("node-1") end
function P:score(state, pod, node)
  return node.node.name == self.one and 100 or 0
end
return P
]])
    end)

    it("restricts the candidates: the pod lands on node-2 although node-1 scores higher", function()
      local c = cluster(TWO_NODES, PROBE_AND_PLAIN)
      local cfg = config("{multiPoint: {enabled: [{name: OnlyNodeTwo}, {name: PreferNodeOne, weight: 5}]}}")
      local r = simulate(c, cfg)
      expect_run(r)
      assert.are.equal("bound to node-2", r.pods.a)
      assert.are.equal("bound to node-1", r.pods.b)
      local j = simulate(c, cfg, true)
      expect_run(j)
      -- only node-2 was a candidate for a: one feasible node, nothing scored
      local a = pod_record(j.out, "a")
      assert.are.equal('{"node-2":{' .. DEFAULT_FILTERS .. '}}', object(a, "filter"))
      assert.are.equal("{}", object(a, "score"))
      -- the unrestricted pod sees node-1 preferred (100 × 5)
      local b = pod_record(j.out, "b")
      assert.are.equal(500, number(object(object(b, "finalScore"), "node-1"), "PreferNodeOne"))
      assert.are.equal(0, number(object(object(b, "finalScore"), "node-2"), "PreferNodeOne"))
    end)

    it("disjoint lists: UnschedulableAndUnresolvable at once, plugins listed sorted", function()
      -- OnlyBoth, after the intersection became empty, is not run (and not named)
      local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN),
        config("{multiPoint: {enabled: [{name: OnlyNodeTwo}, {name: OnlyNodeOne}, {name: OnlyBoth}]}}"))
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: node(s) didn't satisfy plugin(s) " ..
        "[OnlyNodeOne OnlyNodeTwo] simultaneously." .. NOT_HELPFUL_2, r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
      -- the empty intersection also wins over an earlier plugin's Unschedulable
      r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN),
        config("{multiPoint: {enabled: [{name: UnschedulableFirst}, {name: OnlyNodeOne}, {name: OnlyNodeTwo}]}}"))
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: node(s) didn't satisfy plugin(s) " ..
        "[OnlyNodeOne OnlyNodeTwo] simultaneously." .. NOT_HELPFUL_2, r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
    end)

    it("an empty list from one plugin: node(s) didn't satisfy plugin <name>", function()
      local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: OnlyNone}]}}"))
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: node(s) didn't satisfy plugin OnlyNone." .. NOT_HELPFUL_2,
        r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
    end)

    it("names of nodes that do not exist: every node gets the absent status", function()
      -- the intersection {node-9} is not empty, so PreFilter succeeds; no
      -- candidate exists and every node counts with the absent status
      local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: OnlyGhost}]}}"))
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [OnlyGhost]." ..
        NOT_HELPFUL_2, r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
      r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN),
        config("{multiPoint: {enabled: [{name: OnlyGhostToo}, {name: OnlyGhost}]}}"))
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) " ..
        "[OnlyGhost OnlyGhostToo]." .. NOT_HELPFUL_2, r.pods.a)
      assert.matches("^bound to node%-[12]$", r.pods.b)
    end)
  end)

  -- ---- 2. PreFilter Skip ---------------------------------------------------

  it("PreFilter returning ls.skip: the plugin's Filter is not run", function()
    plugin("skips_filter", [[
local ls = require("luasched")
local P = ls.plugin("SkipsFilter")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.no = ls.unschedulable("filter should not run")
end
function P:pre_filter(state, pod)
  if ls.label(pod.labels, self.key) == self.yes then return ls.skip end
end
function P:filter(state, pod, node)
  return self.no
end
return P
]])
    local c = cluster(TWO_NODES, PROBE_AND_PLAIN)
    local cfg = config("{multiPoint: {enabled: [{name: SkipsFilter}]}}")
    local r = simulate(c, cfg)
    expect_run(r)
    assert.matches("^bound to node%-[12]$", r.pods.a)
    -- without the Skip the same Filter rejects every node
    assert.are.equal("pending: 0/2 nodes are available: 2 filter should not run." .. NO_VICTIMS_2, r.pods.b)
    local j = simulate(c, cfg, true)
    expect_run(j)
    local a = pod_record(j.out, "a")
    assert.are.equal('{"node-1":{' .. DEFAULT_FILTERS .. '},"node-2":{' .. DEFAULT_FILTERS .. '}}',
      object(a, "filter"))
  end)

  -- ---- 3. PreFilter Unschedulable -------------------------------------------

  it("PreFilter returning ls.unschedulable: FitError with the message; later PreFilter plugins still run", function()
    plugin("rejects_early", [[
local ls = require("luasched")
local P = ls.plugin("RejectsEarly")
function P:init()
  self.key, self.reject = ls.intern("probe"), ls.intern("reject")
  self.x = ls.unschedulable("x")
end
function P:pre_filter(state, pod)
  if ls.label(pod.labels, self.key) == self.reject then return self.x end
end
return P
]])
    -- records every pod its PreFilter saw (module state outlives the cycle);
    -- its Filter reports the record for pods labelled probe=report
    plugin("records_pre_filter", [[
local ls = require("luasched")
local P = ls.plugin("RecordsPreFilter")
local seen = {}
function P:init() self.key, self.report = ls.intern("probe"), ls.intern("report") end
function P:pre_filter(state, pod)
  seen[#seen + 1] = ls.str(pod.name)
end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.report then
    return ls.unschedulable("pre_filter ran for " .. table.concat(seen, " "))
  end
end
return P
]])
    local r = simulate(cluster(TWO_NODES, { { "a", "probe: reject" }, { "b", "probe: report" }, { "c", "" } }),
      config("{multiPoint: {enabled: [{name: RejectsEarly}, {name: RecordsPreFilter}]}}"))
    expect_run(r)
    assert.are.equal("pending: 0/2 nodes are available: x." .. NO_VICTIMS_2, r.pods.a)
    -- RecordsPreFilter's PreFilter ran for a after RejectsEarly rejected it (upstream issue 119770).
    -- Then c was bound: that AssignedPodAdd event moves a and b (their plugins have no
    -- events table, so they are registered for every event) and both try once more.
    assert.are.equal("pending: 0/2 nodes are available: 2 pre_filter ran for a b c a b." .. NO_VICTIMS_2, r.pods.b)
    assert.matches("^bound to node%-[12]$", r.pods.c)
  end)

  -- ---- 4. Filter -------------------------------------------------------------

  it("Filter: the first rejection stops the chain for that node", function()
    plugin("first_rejects", [[
local ls = require("luasched")
local P = ls.plugin("FirstRejects")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.one = ls.intern("node-1")
  self.no = ls.unschedulable("first says no")
end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.yes and node.node.name == self.one then return self.no end
end
return P
]])
    plugin("second_rejects", [[
local ls = require("luasched")
local P = ls.plugin("SecondRejects")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.no = ls.unschedulable("second says no")
end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.yes then return self.no end
end
return P
]])
    local c = cluster(TWO_NODES, PROBE_AND_PLAIN)
    local cfg = config("{multiPoint: {enabled: [{name: FirstRejects}, {name: SecondRejects}]}}")
    local r = simulate(c, cfg)
    expect_run(r)
    assert.are.equal("pending: 0/2 nodes are available: 1 first says no, 1 second says no." .. NO_VICTIMS_2,
      r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    local j = simulate(c, cfg, true)
    expect_run(j)
    local filter = object(pod_record(j.out, "a"), "filter")
    assert.are.equal('{' .. DEFAULT_FILTERS .. ',"FirstRejects":"first says no"}', object(filter, "node-1"))
    assert.are.equal('{' .. DEFAULT_FILTERS .. ',"FirstRejects":"passed","SecondRejects":"second says no"}',
      object(filter, "node-2"))
  end)

  it("Filter: every reason of every node is counted, entries sorted as strings", function()
    -- node-01..09: "x"; node-10, node-11: "y" and "x"; node-12: "z" (Unresolvable)
    plugin("many_reasons", [[
local ls = require("luasched")
local P = ls.plugin("ManyReasons")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.x, self.yx, self.z = ls.unschedulable("x"), ls.unschedulable("y", "x"), ls.unresolvable("z")
end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) ~= self.yes then return nil end
  local i = tonumber(ls.str(node.node.name):sub(-2))
  if i <= 9 then return self.x elseif i <= 11 then return self.yx end
  return self.z
end
return P
]])
    local nodes = {}
    for i = 1, 12 do nodes[i] = string.format("node-%02d", i) end
    local r = simulate(cluster(nodes, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: ManyReasons}]}}"))
    expect_run(r)
    -- x 11 times, y twice, z once; "1 z" < "11 x" < "2 y" byte-wise
    assert.are.equal("pending: 0/12 nodes are available: 1 z, 11 x, 2 y. no new claims to deallocate, " ..
      "preemption: 0/12 nodes are available: " ..
      "1 Preemption is not helpful for scheduling, 11 No preemption victims found for incoming pod.", r.pods.a)
    assert.matches("^bound to node%-%d%d$", r.pods.b)
  end)

  -- ---- 4b. PostFilter ------------------------------------------------------------

  it("PostFilter: Unschedulable reasons joined in profile order; an Error ends it with its own message", function()
    -- upstream's RunPostFilterPlugins: reasons of every Unschedulable plugin joined with ", ";
    -- an Error returns AsStatus(s.AsError()): the plugin's message alone, not wrapped, and the
    -- reasons gathered before it are dropped. Custom plugins come after the default ones
    -- (DynamicResources, DefaultPreemption) in the merged profile.
    plugin("rejects_probe", [[
local ls = require("luasched")
local P = ls.plugin("RejectsProbe")
function P:init() self.key, self.yes, self.no = ls.intern("probe"), ls.intern("yes"), ls.unschedulable("nope") end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.yes then return self.no end
end
return P
]])
    plugin("post_says_no", [[
local ls = require("luasched")
local P = ls.plugin("PostSaysNo")
function P:init() self.no = ls.unschedulable("post says no") end
function P:post_filter(state, pod) return self.no end
return P
]])
    plugin("post_fails", [[
local ls = require("luasched")
local P = ls.plugin("PostFails")
function P:init() self.err = ls.error("post failed") end
function P:post_filter(state, pod) return self.err end
return P
]])
    local c = cluster(TWO_NODES, PROBE_AND_PLAIN)
    local r = simulate(c, config("{multiPoint: {enabled: [{name: RejectsProbe}, {name: PostSaysNo}]}}"))
    expect_run(r)
    assert.are.equal("pending: 0/2 nodes are available: 2 nope." .. NO_VICTIMS_2 .. ", post says no", r.pods.a)
    r = simulate(c, config("{multiPoint: {enabled: [{name: RejectsProbe}, {name: PostFails}]}}"))
    assert.are.equal(0, r.rc, r.err)
    -- logged as upstream logs a PostFilter Error
    assert.matches('"Status after running PostFilter plugins for pod" pod="default/a" status="post failed"', r.err,
      1, true)
    assert.are.equal("pending: 0/2 nodes are available: 2 nope. post failed", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  -- ---- 5. Score ----------------------------------------------------------------

  it("Score: finalScore is the normalized score times the weight", function()
    plugin("weighted", [[
local ls = require("luasched")
local P = ls.plugin("Weighted")
function P:init() self.one = ls.intern("node-1") end
function P:score(state, pod, node) return node.node.name == self.one and 30 or 10 end
return P
]])
    plugin("multi_weighted", [[
local ls = require("luasched")
local P = ls.plugin("MultiWeighted")
function P:init() self.one = ls.intern("node-1") end
function P:score(state, pod, node) return node.node.name == self.one and 20 or 7 end
return P
]])
    plugin("inverted", [[
local ls = require("luasched")
local P = ls.plugin("Inverted")
function P:init() self.one = ls.intern("node-1") end
function P:score(state, pod, node) return node.node.name == self.one and 40 or 80 end
function P:normalize_score(state, pod, scores, nodes, n)
  for i = 0, n - 1 do scores[i] = 100 - scores[i] end
end
return P
]])
    -- Weighted: the Score entry's weight (5) wins over the multiPoint one (3)
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN),
      config("{multiPoint: {enabled: [{name: Weighted, weight: 3}, {name: MultiWeighted, weight: 4}," ..
        " {name: Inverted, weight: 2}]}, score: {enabled: [{name: Weighted, weight: 5}]}}"), true)
    expect_run(r)
    local a = pod_record(r.out, "a")
    local raw, final = object(a, "score"), object(a, "finalScore")
    local expected = {
      -- plugin = { raw node-1, raw node-2, final node-1, final node-2 }
      Weighted = { 30, 10, 150, 50 },
      MultiWeighted = { 20, 7, 80, 28 },
      Inverted = { 40, 80, 120, 40 },   -- normalize_score: 100 - raw, in place
    }
    for name, e in pairs(expected) do
      assert.are.same(e, {
        number(object(raw, "node-1"), name), number(object(raw, "node-2"), name),
        number(object(final, "node-1"), name), number(object(final, "node-2"), name),
      }, name)
    end
    -- 150 + 80 + 120 beats 50 + 28 + 40 by more than the default plugins can make up
    assert.are.equal("node-1", a:match('"node":"([^"]*)"'))
  end)

  it("Score: a score outside [0, 100] after normalize_score is an Error", function()
    plugin("too_high", [[
local ls = require("luasched")
local P = ls.plugin("TooHigh")
function P:init() self.key, self.yes = ls.intern("probe"), ls.intern("yes") end
function P:score(state, pod, node) return 50 end
function P:normalize_score(state, pod, scores, nodes, n)
  if ls.label(pod.labels, self.key) == self.yes then
    for i = 0, n - 1 do scores[i] = scores[i] + 51 end
  end
end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: TooHigh}]}}"))
    expect_run(r)
    assert.are.equal('pending: applying score defaultWeights on Score plugins: plugin "TooHigh" returns an ' ..
      "invalid score 101, it should in the range of [0, 100] after normalizing", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  it("Score: a negative score after normalize_score is an Error naming it", function()
    plugin("too_low", [[
local ls = require("luasched")
local P = ls.plugin("TooLow")
function P:init() self.key, self.yes = ls.intern("probe"), ls.intern("yes") end
function P:score(state, pod, node) return 50 end
function P:normalize_score(state, pod, scores, nodes, n)
  if ls.label(pod.labels, self.key) == self.yes then scores[n - 1] = -7 end
end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: TooLow}]}}"))
    expect_run(r)
    assert.are.equal('pending: applying score defaultWeights on Score plugins: plugin "TooLow" returns an ' ..
      "invalid score -7, it should in the range of [0, 100] after normalizing", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  -- ---- 6. Reserve and Permit -------------------------------------------------

  it("Reserve rejecting: a FitError on the one chosen node", function()
    plugin("reserve_rejects", [[
local ls = require("luasched")
local P = ls.plugin("ReserveRejects")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.no = ls.unschedulable("no room")
end
function P:reserve(state, pod, node_name)
  if ls.label(pod.labels, self.key) == self.yes then return self.no end
end
function P:unreserve(state, pod, node_name) end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: ReserveRejects}]}}"))
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 no room.", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  it("Permit rejecting: a FitError on the one chosen node", function()
    plugin("permit_rejects", [[
local ls = require("luasched")
local P = ls.plugin("PermitRejects")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.no = ls.unschedulable("no room")
end
function P:permit(state, pod, node_name)
  if ls.label(pod.labels, self.key) == self.yes then return self.no end
end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: PermitRejects}]}}"))
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 no room.", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)

  -- ---- 7. Bind -----------------------------------------------------------------

  it("Bind: Skip passes the pod to the next binder; an error fails the pod", function()
    plugin("skip_binder", [[
local ls = require("luasched")
local P = ls.plugin("SkipBinder")
function P:bind(state, pod, node_name) return ls.skip end
return P
]])
    plugin("api_down", [[
local ls = require("luasched")
local P = ls.plugin("ApiDown")
function P:init()
  self.key, self.yes = ls.intern("probe"), ls.intern("yes")
  self.down = ls.error("api down")
end
function P:bind(state, pod, node_name)
  if ls.label(pod.labels, self.key) == self.yes then return self.down end
  return ls.skip
end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN),
      config("{bind: {disabled: [{name: '*'}]," ..
        " enabled: [{name: SkipBinder}, {name: ApiDown}, {name: DefaultBinder}]}}"))
    expect_run(r)
    -- ApiDown runs before DefaultBinder: its error is the pod's, nobody binds it
    assert.are.equal('pending: running Bind plugin "ApiDown": api down', r.pods.a)
    -- both custom binders skip b: DefaultBinder binds it
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.is_truthy(r.out:find("summary: 2 nodes, 2 pods: 1 bound, 1 unschedulable", 1, true))
  end)

  -- ---- 8. A wrong return type ---------------------------------------------------

  it("Filter returning a string: an Error naming the plugin", function()
    plugin("bad_return", [[
local ls = require("luasched")
local P = ls.plugin("BadReturn")
function P:init() self.key, self.yes = ls.intern("probe"), ls.intern("yes") end
function P:filter(state, pod, node)
  if ls.label(pod.labels, self.key) == self.yes then return "nope" end
end
return P
]])
    local r = simulate(cluster(TWO_NODES, PROBE_AND_PLAIN), config("{multiPoint: {enabled: [{name: BadReturn}]}}"))
    expect_run(r)
    -- the plugin's own file and the line of its filter hook
    assert.are.equal('pending: running "BadReturn" filter plugin: filter returned a string, expected a status ' ..
      "(ls.unschedulable(...), ...) or nil (" .. tmp .. "/plugins/bad_return.lua:4)", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end)
end)
