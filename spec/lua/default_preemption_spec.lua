-- DefaultPreemption end to end: the real `luasched simulate` (built-in default
-- profile, or a KubeSchedulerConfiguration for the args) on small clusters
-- written into a scratch directory. Expected placements, victims and messages
-- are worked out by hand from the kube-scheduler reference §2.11 (the
-- algorithm), §3.6 (nominated pods) and §6.1 (FitError + PostFilter message),
-- i.e. upstream defaultpreemption/default_preemption.go and
-- framework/preemption/preemption.go.
--
-- Every node has 8Gi of memory and 110 pods; pods request only cpu, so
-- NodeResourcesFit is the Filter that matters: "Insufficient cpu" is
-- Unschedulable while the request fits the node's allocatable, and
-- UnschedulableAndUnresolvable beyond it.
local json = require("dkjson")

local sim = require("sim_helper")
local write = sim.write

local tmp
local runs = 0

-- ---- cluster objects (one JSON `kind: List`) ------------------------------

local function node(name, cpu, extra)
  local n = {
    apiVersion = "v1", kind = "Node", metadata = { name = name },
    status = { allocatable = { cpu = tostring(cpu), memory = "8Gi", pods = "110" } },
  }
  if extra then n.spec = extra end
  return n
end

--- A pod: o = { name, cpu, prio, node, ns, labels, start, nominated,
--- policy, class, deleting, gates, affinity }.
local function pod(o)
  local meta = { name = o.name, namespace = o.ns or "default", labels = o.labels }
  if o.deleting then meta.deletionTimestamp = "2024-01-01T00:00:00Z" end
  local spec = {
    containers = { { name = "c", image = "app", resources = { requests = { cpu = tostring(o.cpu or 1) } } } },
    priority = o.prio, nodeName = o.node, preemptionPolicy = o.policy, priorityClassName = o.class,
    affinity = o.affinity,
  }
  if o.gates then
    spec.schedulingGates = {}
    for i, g in ipairs(o.gates) do spec.schedulingGates[i] = { name = g } end
  end
  local status
  if o.start or o.nominated then status = { startTime = o.start, nominatedNodeName = o.nominated } end
  return { apiVersion = "v1", kind = "Pod", metadata = meta, spec = spec, status = status }
end

--- A PodDisruptionBudget: o = { name, ns, match (matchLabels) or empty_selector,
--- allowed, disrupted (list of pod names) }.
local function pdb(o)
  local selector
  if o.match then
    selector = { matchLabels = o.match }
  elseif o.empty_selector then
    selector = setmetatable({}, { __jsontype = "object" })
  end
  local status = { disruptionsAllowed = o.allowed }
  if o.disrupted then
    status.disruptedPods = {}
    for _, name in ipairs(o.disrupted) do status.disruptedPods[name] = "2024-01-01T00:00:00Z" end
  end
  return {
    apiVersion = "policy/v1", kind = "PodDisruptionBudget",
    metadata = { name = o.name, namespace = o.ns or "default" },
    spec = { selector = selector }, status = status,
  }
end

-- The preemptor's retry comes after its backoff (1 s of virtual time): the
-- victims' deletion during its own cycle is an AssignedPodDelete event that
-- sends it to the backoff queue. A timeline step later on keeps the virtual
-- clock running until then: without one the run currently ends right after
-- the preemption, because ls_squeue_settled takes the pod (last attempt at
-- 0 ms) as having seen the deletion (also at 0 ms, but during its cycle).
local LATER = {
  apiVersion = "luasched.io/v1alpha1", kind = "Timeline",
  steps = { { at = "10s", create = node("late", 1, { unschedulable = true }) } },
}

local function config(args)
  local text = "apiVersion: kubescheduler.config.k8s.io/v1\n" ..
    "kind: KubeSchedulerConfiguration\n" ..
    "profiles:\n" ..
    "- schedulerName: default-scheduler\n"
  if args then
    text = text .. "  pluginConfig:\n  - name: DefaultPreemption\n    args: " .. args .. "\n"
  end
  return text
end

--- Runs `luasched simulate` twice (text and JSON output). Returns { rc, err,
--- out, lines = { ["ns/name"] = outcome }, pods = { name = JSON record } }.
local function simulate(docs, opts)
  opts = opts or {}
  runs = runs + 1
  local dir = tmp .. "/run" .. runs
  assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
  local cluster = json.encode({ apiVersion = "v1", kind = "List", items = docs })
  local args = { "simulate", write(dir .. "/cluster.json", cluster) }
  if opts.config then
    args[#args + 1] = "--config"
    args[#args + 1] = write(dir .. "/config.yaml", opts.config)
  end
  if opts.seed then
    args[#args + 1] = "--seed"
    args[#args + 1] = tostring(opts.seed)
  end
  local r = sim.run(args, { err = dir .. "/err" })
  r.lines, r.pods = sim.outcomes(r.out, "^([%w-]+/[%w-]+): (.*)$"), {}
  if r.rc == 0 then
    args[#args + 1] = "--output"
    args[#args + 1] = "json"
    local jout = sim.run(args, { err = dir .. "/err" }).out
    local doc = assert(json.decode(jout), "no JSON in: " .. jout)
    for _, rec in ipairs(doc.pods) do r.pods[rec.name] = rec end
    r.summary = doc.summary
  end
  return r
end

local function expect_run(r)
  assert.are.equal(0, r.rc, "luasched simulate failed: " .. r.err .. r.out)
  assert.are.equal("", r.err)
end

local function preempted_by(preemptor, node_name)
  return "preempted: DisruptionTarget=True (PreemptionByScheduler): default-scheduler: preempting to " ..
    "accommodate a higher priority pod; Preempted by pod default/" .. preemptor .. " on node " .. node_name
end

--- Runs a cluster with seeds 0..3, so that the dry runs start at either
--- node (the random offset), and calls check(r) on each run.
local function for_seeds(docs, check)
  for seed = 0, 3 do
    local r = simulate(docs, { seed = seed })
    expect_run(r)
    check(r)
  end
end

--- The outcome fields of each attempt (without its Filter and Score details).
local function outcomes(attempts)
  local out = {}
  for i, a in ipairs(attempts) do
    out[i] = { time = a.time, result = a.result, message = a.message, node = a.node,
      nominatedNode = a.nominatedNode, victims = a.victims }
  end
  return out
end

--- The first attempt of a pod that preempted: its nomination and victims.
local function first_attempt(r, name)
  local rec = assert(r.pods[name], "no JSON record for " .. name .. ": " .. r.out)
  return rec.attempts[1]
end

describe("DefaultPreemption (luasched simulate)", function()
  setup(function()
    sim.bin()   -- asserts LUASCHED_BIN
    tmp = sim.scratch()
  end)

  teardown(function()
    sim.remove(tmp)
  end)

  -- ---- the whole path -----------------------------------------------------

  it("preempts the lowest-priority pod on the best node, then binds there on the next attempt", function()
    -- n1 runs a, b (priority 10); n2 runs c (5) and d (20); hp (100) wants 2 cpu.
    -- Dry runs: n1 removes a, b; a is reprieved (2 + 2 <= 4), b is the victim.
    -- n2 removes c, d; d (more important) is reprieved, c is the victim.
    -- pickOneNodeForPreemption: no PDB violations either way; highest victim
    -- priority 10 on n1, 5 on n2 -> n2. c is preempted; hp is nominated to n2.
    -- c's deletion arrived during hp's attempt (an in-flight event NodeResourcesFit
    -- registered): hp goes to backoffQ, and with activeQ idle it is taken from
    -- there at once (v1.37 PopFromBackoffQ): at 0 s only n2 fits (d 2 + hp 2 = 4).
    local r = simulate({
      node("n1", 4), node("n2", 4),
      pod { name = "a", node = "n1", prio = 10, cpu = 2 },
      pod { name = "b", node = "n1", prio = 10, cpu = 2 },
      pod { name = "c", node = "n2", prio = 5, cpu = 2 },
      pod { name = "d", node = "n2", prio = 20, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2 },
      LATER,
    })
    expect_run(r)
    assert.are.equal(preempted_by("hp", "n2"), r.lines["default/c"])
    assert.is_nil(r.lines["default/a"])   -- running pods have no line
    assert.is_nil(r.lines["default/b"])
    assert.is_nil(r.lines["default/d"])
    assert.are.equal("bound to n2 at 0s", r.lines["default/hp"])
    assert.matches("\npreempted: 1 pods\n", r.out, 1, true)
    assert.are.same({
      { time = 0, result = "unschedulable", message = "0/2 nodes are available: 2 Insufficient cpu.",
        nominatedNode = "n2", victims = { "default/c" } },
      { time = 0, result = "bound", node = "n2" },
    }, outcomes(r.pods.hp.attempts))
    -- The first attempt's Filter: both nodes failed (the nominated path is the
    -- second's: n2 alone, every filter passed). The pod's top-level fields are
    -- the second attempt's, the one that bound it.
    local first, second = r.pods.hp.attempts[1], r.pods.hp.attempts[2]
    assert.are.equal("Insufficient cpu", first.filter.n1.NodeResourcesFit)
    assert.are.equal("Insufficient cpu", first.filter.n2.NodeResourcesFit)
    assert.are.equal(0, first.feasibleNodes)
    assert.is_true(second.nominatedNodeOnly)
    assert.are.equal(1, second.evaluatedNodes)
    local examined = {}
    for n in pairs(second.filter) do examined[#examined + 1] = n end
    assert.are.same({ "n2" }, examined)
    assert.are.equal("passed", second.filter.n2.NodeResourcesFit)
    assert.are.same(second.filter, r.pods.hp.filter)
    assert.are.equal("n2", r.pods.hp.node)
    assert.is_true(r.pods.hp.nominatedNodeOnly)
    assert.are.equal(1, r.summary.preempted)
  end)

  it("reprieves the most important pods: only as many victims as needed", function()
    -- p1..p4 (priorities 1..4, 1 cpu each) fill n1; hp needs 2 cpu. All four
    -- are removed; reprieve in importance order: p4 (1 + 2 = 3 <= 4), p3 (4 <= 4)
    -- stay; p2 and p1 do not fit back: victims p2, p1 (most important first).
    local r = simulate({
      node("n1", 4),
      pod { name = "p1", node = "n1", prio = 1, cpu = 1 },
      pod { name = "p2", node = "n1", prio = 2, cpu = 1 },
      pod { name = "p3", node = "n1", prio = 3, cpu = 1 },
      pod { name = "p4", node = "n1", prio = 4, cpu = 1 },
      pod { name = "hp", prio = 100, cpu = 2 },
      LATER,
    })
    expect_run(r)
    local a = first_attempt(r, "hp")
    assert.are.equal("n1", a.nominatedNode)
    assert.are.same({ "default/p2", "default/p1" }, a.victims)
    assert.are.equal(preempted_by("hp", "n1"), r.lines["default/p1"])
    assert.are.equal(preempted_by("hp", "n1"), r.lines["default/p2"])
    assert.is_nil(r.lines["default/p3"])
    assert.is_nil(r.lines["default/p4"])
    assert.are.equal("bound to n1 at 0s", r.lines["default/hp"])
  end)

  it("among equal priorities keeps the longest-running pods (earlier start time is more important)", function()
    -- three priority-1 pods, 1 cpu each, on a 3-cpu node; hp needs 2 cpu. Sorted
    -- by start time: old, mid, new. old is reprieved (1 + 2 = 3), mid and new
    -- are victims, in that order.
    local r = simulate({
      node("n1", 3),
      pod { name = "new", node = "n1", prio = 1, cpu = 1, start = "2024-03-01T00:00:00Z" },
      pod { name = "old", node = "n1", prio = 1, cpu = 1, start = "2024-01-01T00:00:00Z" },
      pod { name = "mid", node = "n1", prio = 1, cpu = 1, start = "2024-02-01T00:00:00Z" },
      pod { name = "hp", prio = 100, cpu = 2 },
    })
    expect_run(r)
    assert.are.same({ "default/mid", "default/new" }, first_attempt(r, "hp").victims)
    assert.is_nil(r.lines["default/old"])
  end)

  -- ---- eligibility ------------------------------------------------------------

  it("preemptionPolicy Never (from the PriorityClass): not eligible, nothing is evicted", function()
    local r = simulate({
      { apiVersion = "scheduling.k8s.io/v1", kind = "PriorityClass", metadata = { name = "polite" },
        value = 1000, preemptionPolicy = "Never" },
      node("n1", 2),
      pod { name = "lo", node = "n1", prio = 1, cpu = 2 },
      pod { name = "hp", class = "polite", cpu = 2 },
    })
    expect_run(r)
    local msg = "0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    assert.are.equal("pending: " .. msg, r.lines["default/hp"])
    assert.are.same({ { time = 0, result = "unschedulable", message = msg } }, outcomes(r.pods.hp.attempts))
    assert.is_nil(r.lines["default/lo"])
    assert.are.equal(0, r.summary.preempted)
  end)

  it("a terminating lower-priority pod on the nominated node: not eligible (wait for it)", function()
    -- luasched reads "terminating because of preemption" as metadata.deletionTimestamp set
    local r = simulate({
      node("n1", 2),
      pod { name = "dying", node = "n1", prio = 1, cpu = 2, deleting = true },
      pod { name = "hp", prio = 100, cpu = 2, nominated = "n1" },
    })
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: not eligible due to " ..
      "a terminating pod on the nominated node.", r.lines["default/hp"])
    assert.is_nil(r.pods.hp.attempts[1].victims)
  end)

  -- ---- no candidate -----------------------------------------------------------

  it("no lower-priority pod: No preemption victims found for incoming pod", function()
    local r = simulate({
      node("n1", 2),
      pod { name = "peer", node = "n1", prio = 100, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2 },
    })
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: 0/1 nodes are " ..
      "available: 1 No preemption victims found for incoming pod.", r.lines["default/hp"])
    assert.is_nil(r.pods.hp.attempts[1].nominatedNode)
  end)

  it("Unresolvable nodes are not candidates (the reference's example message)", function()
    -- cp: untolerated taint (Unresolvable) -> not a potential node; w1, w2:
    -- Insufficient cpu (Unschedulable) but their pods have the same priority.
    local r = simulate({
      node("cp", 4, { taints = { { key = "node-role.kubernetes.io/control-plane", effect = "NoSchedule" } } }),
      node("w1", 2), node("w2", 2),
      pod { name = "r1", node = "w1", prio = 0, cpu = 2 },
      pod { name = "r2", node = "w2", prio = 0, cpu = 2 },
      pod { name = "p", prio = 0, cpu = 2 },
    })
    expect_run(r)
    assert.are.equal("pending: 0/3 nodes are available: 1 node(s) had untolerated taint(s), " ..
      "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: " ..
      "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
      r.lines["default/p"])
  end)

  it("every node Unresolvable: Preemption is not helpful, and the pod's nomination is cleared", function()
    -- stale (nominated to n1 in its status) asks 3 cpu of a 2-cpu node:
    -- Unresolvable, no potential node. Its nomination is cleared, so small
    -- (priority 0, after stale in the queue) no longer counts it on n1 and fits.
    local docs = {
      node("n1", 2),
      pod { name = "stale", prio = 100, cpu = 3, nominated = "n1" },
      pod { name = "small", prio = 0, cpu = 2 },
    }
    local r = simulate(docs)
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: 0/1 nodes are " ..
      "available: 1 Preemption is not helpful for scheduling.", r.lines["default/stale"])
    assert.are.equal("bound to n1", r.lines["default/small"])
    -- a gated pod's status.nominatedNodeName holds its room: v1.37 stores the
    -- nomination before PreEnqueue (#139057; v1.32-v1.34 did not). On n1 (4
    -- cpu) small sees stale's 3 cpu: 3 + 2 > 4; no pod runs there to preempt
    docs[1] = node("n1", 4)
    docs[2] = pod { name = "stale", prio = 100, cpu = 3, nominated = "n1", gates = { "hold" } }
    r = simulate(docs)
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: 0/1 nodes are " ..
      "available: 1 No preemption victims found for incoming pod.", r.lines["default/small"])
  end)

  it("a node that still fails Filter without its lower-priority pods is not a candidate", function()
    -- hi (200, 3 cpu) stays; without lo, 1 cpu is free < 2: the dry run's
    -- Filter status is the node's entry in preemption's FitError.
    local r = simulate({
      node("n1", 4),
      pod { name = "hi", node = "n1", prio = 200, cpu = 3 },
      pod { name = "lo", node = "n1", prio = 1, cpu = 1 },
      pod { name = "p", prio = 100, cpu = 2 },
    })
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: 0/1 nodes are " ..
      "available: 1 Insufficient cpu.", r.lines["default/p"])
    assert.is_nil(r.lines["default/lo"])
  end)

  it("nodes outside a PreFilter restriction are not candidates", function()
    -- NodeAffinity's matchFields restricts the cycle to n1; n2 (with a cheaper
    -- victim) is absent, i.e. UnschedulableAndUnresolvable.
    local affinity = { nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution = {
      nodeSelectorTerms = { { matchFields = { { key = "metadata.name", operator = "In", values = { "n1" } } } } },
    } } }
    local r = simulate({
      node("n1", 2), node("n2", 2),
      pod { name = "x", node = "n1", prio = 10, cpu = 2 },
      pod { name = "y", node = "n2", prio = 1, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2, affinity = affinity },
    })
    expect_run(r)
    local a = first_attempt(r, "hp")
    assert.are.equal("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) " ..
      "[NodeAffinity].", a.message)
    assert.are.equal("n1", a.nominatedNode)
    assert.are.same({ "default/x" }, a.victims)
  end)

  -- ---- nominations ------------------------------------------------------------

  it("clears the nominations of lower-priority pods nominated to the chosen node", function()
    -- g (50, gated: never attempts) is nominated to n1 and counts there for
    -- pods of priority <= 50. hp (100) preempts lo on n1 and clears g's
    -- nomination; small (10) then sees n1 with only hp nominated (2 + 2 <= 4)
    -- and binds; hp follows at 0 s, taken from backoffQ with activeQ idle
    -- (v1.37 PopFromBackoffQ) (small 2 + hp 2 = 4).
    local base = {
      node("n1", 4),
      pod { name = "g", prio = 50, cpu = 3, nominated = "n1", gates = { "hold" } },
      pod { name = "small", prio = 10, cpu = 2 },
    }
    local docs = { base[1], base[2], base[3],
      pod { name = "lo", node = "n1", prio = 1, cpu = 4 },
      pod { name = "hp", prio = 100, cpu = 2 },
      LATER,
    }
    local r = simulate(docs)
    expect_run(r)
    assert.are.same({ "default/lo" }, first_attempt(r, "hp").victims)
    assert.are.equal("bound to n1 at 0s", r.lines["default/small"])
    assert.are.equal("bound to n1 at 0s", r.lines["default/hp"])
    -- without hp, g's nomination (gated or not, v1.37 #139057) holds 3 of n1's
    -- 4 cpu for pods of priority <= 50: small (2 cpu) does not fit and finds
    -- nothing to preempt
    r = simulate(base)
    expect_run(r)
    assert.are.equal("pending: 0/1 nodes are available: 1 Insufficient cpu. " ..
      "no new claims to deallocate, preemption: 0/1 nodes are " ..
      "available: 1 No preemption victims found for incoming pod.", r.lines["default/small"])
  end)

  -- ---- PodDisruptionBudgets -----------------------------------------------------

  it("a PDB with no disruptions allowed steers preemption to the other node", function()
    -- n1's pods are guarded (disruptionsAllowed 0), n2's are not; everything
    -- else ties. One victim either way (f1 reprieved, f2 evicted on n2); the
    -- fewest PDB violations decide: n2, whatever the random offset.
    local docs = {
      node("n1", 4), node("n2", 4),
      pod { name = "g1", node = "n1", prio = 1, cpu = 2, labels = { app = "guarded" } },
      pod { name = "g2", node = "n1", prio = 1, cpu = 2, labels = { app = "guarded" } },
      pod { name = "f1", node = "n2", prio = 1, cpu = 2, labels = { app = "free" } },
      pod { name = "f2", node = "n2", prio = 1, cpu = 2, labels = { app = "free" } },
      pdb { name = "guard", match = { app = "guarded" }, allowed = 0 },
      pod { name = "hp", prio = 100, cpu = 2 },
    }
    for_seeds(docs, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n2", a.nominatedNode)
      assert.are.same({ "default/f2" }, a.victims)
    end)
  end)

  it("reprieves PDB-protected pods first: a protected pod is evicted only when unavoidable", function()
    -- g (priority 1) is guarded, f (priority 2) is not. Without the PDB, f is
    -- more important, reprieved first, and g is the victim; with it, g
    -- (violating) is reprieved first and f is the victim.
    local docs = {
      node("n1", 4),
      pod { name = "g", node = "n1", prio = 1, cpu = 2, labels = { app = "guarded" } },
      pod { name = "f", node = "n1", prio = 2, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2 },
    }
    local r = simulate(docs)
    expect_run(r)
    assert.are.same({ "default/g" }, first_attempt(r, "hp").victims)
    docs[#docs + 1] = pdb { name = "guard", match = { app = "guarded" }, allowed = 0 }
    r = simulate(docs)
    expect_run(r)
    assert.are.same({ "default/f" }, first_attempt(r, "hp").victims)
    -- unavoidable: hp needs the whole node. disruptionsAllowed 1: g1 (more
    -- important, earlier start) takes the one disruption, g2 violates. g2 is
    -- tried first and evicted, then g1; victims re-sorted by importance.
    r = simulate({
      node("n1", 4),
      pod { name = "g1", node = "n1", prio = 1, cpu = 2, labels = { app = "guarded" }, start = "2024-01-01T00:00:00Z" },
      pod { name = "g2", node = "n1", prio = 1, cpu = 2, labels = { app = "guarded" }, start = "2024-02-01T00:00:00Z" },
      pdb { name = "guard", match = { app = "guarded" }, allowed = 1 },
      pod { name = "hp", prio = 100, cpu = 4 },
      LATER,
    })
    expect_run(r)
    local a = first_attempt(r, "hp")
    assert.are.equal("n1", a.nominatedNode)
    assert.are.same({ "default/g1", "default/g2" }, a.victims)
    assert.are.equal("bound to n1 at 0s", r.lines["default/hp"])
  end)

  it("PDBs of another namespace, with an empty selector, or listing the pod as disrupted do not count", function()
    -- n1's x pods match three PDBs that do not apply; n2's y pods violate y-guard.
    local docs = {
      node("n1", 4), node("n2", 4),
      pod { name = "x1", node = "n1", prio = 1, cpu = 2, labels = { app = "x" } },
      pod { name = "x2", node = "n1", prio = 1, cpu = 2, labels = { app = "x" } },
      pod { name = "y1", node = "n2", prio = 1, cpu = 2, labels = { app = "y" } },
      pod { name = "y2", node = "n2", prio = 1, cpu = 2, labels = { app = "y" } },
      pdb { name = "x-elsewhere", ns = "other", match = { app = "x" }, allowed = 0 },
      pdb { name = "everything", empty_selector = true, allowed = 0 },
      pdb { name = "x-disrupted", match = { app = "x" }, allowed = 0, disrupted = { "x1", "x2" } },
      pdb { name = "y-guard", match = { app = "y" }, allowed = 0 },
      pod { name = "hp", prio = 100, cpu = 2 },
    }
    for_seeds(docs, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n1", a.nominatedNode)
      assert.are.same({ "default/x2" }, a.victims)
    end)
  end)

  -- ---- pickOneNodeForPreemption tie-breaks ------------------------------------

  it("tie-break: lowest highest-victim priority, before the sum", function()
    -- hp needs a whole node. n1: one victim of priority 10 (sum 10 + 2^31);
    -- n2: two of priority 5 (sum 10 + 2^32). The highest priority decides: n2.
    for_seeds({
      node("n1", 4), node("n2", 4),
      pod { name = "x", node = "n1", prio = 10, cpu = 4 },
      pod { name = "y1", node = "n2", prio = 5, cpu = 2 },
      pod { name = "y2", node = "n2", prio = 5, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 4 },
    }, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n2", a.nominatedNode)
      assert.are.same({ "default/y1", "default/y2" }, a.victims)
    end)
  end)

  it("tie-break: smallest sum of victim priorities (each + 2^31)", function()
    -- hp needs a whole node. Highest victim priority 5 on both; sums 5+5 on
    -- n1, 5+1 on n2 -> n2.
    for_seeds({
      node("n1", 4), node("n2", 4),
      pod { name = "x1", node = "n1", prio = 5, cpu = 2 },
      pod { name = "x2", node = "n1", prio = 5, cpu = 2 },
      pod { name = "y1", node = "n2", prio = 5, cpu = 2 },
      pod { name = "y2", node = "n2", prio = 1, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 4 },
    }, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n2", a.nominatedNode)
      assert.are.same({ "default/y1", "default/y2" }, a.victims)
    end)
  end)

  it("tie-break: fewest victims", function()
    -- n1: one victim of priority 0 -> sum 2^31. n2: priorities 0 and -2^31 ->
    -- sum 2^31 + 0: equal sums and highest priorities; one victim beats two.
    for_seeds({
      node("n1", 4), node("n2", 4),
      pod { name = "x", node = "n1", prio = 0, cpu = 4 },
      pod { name = "y1", node = "n2", prio = 0, cpu = 2 },
      pod { name = "y2", node = "n2", prio = -2147483648, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 4 },
    }, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n1", a.nominatedNode)
      assert.are.same({ "default/x" }, a.victims)
    end)
  end)

  it("tie-break: latest earliest start time among the highest-priority victims", function()
    local docs = {
      node("n1", 2), node("n2", 2),
      pod { name = "x", node = "n1", prio = 5, cpu = 2, start = "2024-01-01T00:00:00Z" },
      pod { name = "y", node = "n2", prio = 5, cpu = 2, start = "2024-06-01T00:00:00Z" },
      pod { name = "hp", prio = 100, cpu = 2 },
    }
    for_seeds(docs, function(r)
      assert.are.equal("n2", first_attempt(r, "hp").nominatedNode)
    end)
    -- a pod without status.startTime started "now": later than both
    table.insert(docs, 3, node("n3", 2))
    table.insert(docs, 4, pod { name = "z", node = "n3", prio = 5, cpu = 2 })
    for_seeds(docs, function(r)
      local a = first_attempt(r, "hp")
      assert.are.equal("n3", a.nominatedNode)
      assert.are.same({ "default/z" }, a.victims)
    end)
  end)

  it("tie-break: a full tie takes the first candidate, which follows the random offset", function()
    local docs = {
      node("n1", 2), node("n2", 2),
      pod { name = "x", node = "n1", prio = 5, cpu = 2 },
      pod { name = "y", node = "n2", prio = 5, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2 },
    }
    local chosen = {}
    for seed = 0, 7 do
      local r = simulate(docs, { seed = seed })
      expect_run(r)
      local a = first_attempt(r, "hp")
      assert.are.same({ a.nominatedNode == "n1" and "default/x" or "default/y" }, a.victims)
      chosen[a.nominatedNode] = true
    end
    assert.are.same({ n1 = true, n2 = true }, chosen)
  end)

  -- ---- args -------------------------------------------------------------------

  describe("args", function()
    local function init_error(args, want)
      local r = simulate({ node("n1", 1) }, { config = config(args) })
      assert.are.equal(2, r.rc, r.out .. r.err)
      -- the args' place in the file (line 7, `args:`), then the plugin's message
      local text = r.err:gsub("\n$", "")
      assert.matches("^luasched simulate: [^\n]*config%.yaml:7: profiles%[0%]%.pluginConfig%[0%]%.args: ", text)
      assert.are.equal('initializing plugin "DefaultPreemption": ' .. want,
        text:match("profiles%[0%]%.pluginConfig%[0%]%.args: (.*)$"))
    end

    it("are validated with upstream's messages", function()
      init_error("{minCandidateNodesPercentage: 101}",
        "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]")
      init_error("{minCandidateNodesAbsolute: -1}",
        "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)")
      init_error("{minCandidateNodesPercentage: -1, minCandidateNodesAbsolute: -1}",
        "[minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], " ..
        "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]")
      init_error("{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
        "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as " ..
        "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same " ..
        "time as minCandidateNodesPercentage]")
    end)

    -- The first test's cluster: n2 (victim priority 5) beats n1 (10).
    local docs = {
      node("n1", 4), node("n2", 4),
      pod { name = "a", node = "n1", prio = 10, cpu = 2 },
      pod { name = "b", node = "n1", prio = 10, cpu = 2 },
      pod { name = "c", node = "n2", prio = 5, cpu = 2 },
      pod { name = "d", node = "n2", prio = 20, cpu = 2 },
      pod { name = "hp", prio = 100, cpu = 2 },
    }

    -- The node hp is nominated to, per seed.
    local function nominations(args)
      local out = {}
      for seed = 0, 7 do
        local r = simulate(docs, { seed = seed, config = config(args) })
        expect_run(r)
        out[first_attempt(r, "hp").nominatedNode] = true
      end
      return out
    end

    it("numCandidates = max(nodes * pct / 100, abs), capped at the nodes: all nodes are compared", function()
      -- defaults: max(2 * 10 / 100 = 0, 100) capped at 2; and 100 %, 0
      assert.are.same({ n2 = true }, nominations(nil))
      assert.are.same({ n2 = true }, nominations("{minCandidateNodesPercentage: 100, minCandidateNodesAbsolute: 0}"))
    end)

    it("one candidate: the dry run stops at the first node from the random offset", function()
      -- max(0, 1) = 1, and 50 % of 2 = 1: whichever node comes first wins
      assert.are.same({ n1 = true, n2 = true },
        nominations("{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1}"))
      assert.are.same({ n1 = true, n2 = true },
        nominations("{minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 0}"))
    end)

    it("zero candidates (10 % of 2 nodes, absolute 0): no preemption, as upstream", function()
      -- upstream's candidate lists then hold nothing; the nodes whose dry run
      -- succeeded have no status and count as not helpful
      local r = simulate(docs, { config = config("{minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 0}") })
      expect_run(r)
      assert.are.equal("pending: 0/2 nodes are available: 2 Insufficient cpu. " ..
        "no new claims to deallocate, preemption: 0/2 nodes are " ..
        "available: 2 Preemption is not helpful for scheduling.", r.lines["default/hp"])
      assert.are.equal(0, r.summary.preempted)
    end)
  end)
end)
