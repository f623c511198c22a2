-- PodTopologySpread (upstream podtopologyspread/{plugin,common,filtering,scoring}.go,
-- helper/spread.go). Every expected value is worked out by hand in the comments:
-- Filter: count(domain) + selfMatch - min(count over domains; 0 when fewer
-- domains than minDomains) > maxSkew -> Unschedulable.
-- Score: round(sum of count * ln(size + 2) + maxSkew - 1); NormalizeScore:
-- ignored -> 0, max == 0 -> 100, else 100 * (max + min - s) / max (int64).
-- ln values used below: ln 3 = 1.0986123, ln 4 = 1.3862944, ln 5 = 1.6094379,
-- ln 6 = 1.7917595.
local T = require("luasched.testing")
local ls = require("luasched")

local HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
local MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
local VIOLATED = "node(s) didn't match pod topology spread constraints"
local UNSCHED, UNRESOLVABLE = ls.UNSCHEDULABLE, ls.UNSCHEDULABLE_AND_UNRESOLVABLE

-- A node with hostname and (unless zone is false) zone labels.
local function node(name, zone, extra)
  local labels = { [HOST] = name }
  if zone then labels[ZONE] = zone end
  extra = extra or {}
  for k, v in pairs(extra.labels or {}) do labels[k] = v end
  return { name = name, labels = labels, taints = extra.taints }
end

-- A pod as a full object table (usable in T.cluster and T.pod): the shorthand
-- plus topologySpreadConstraints and extra metadata.
local function pod(desc, constraints, meta)
  local o = T.pod_object(desc)
  o.spec.topologySpreadConstraints = constraints
  for k, v in pairs(meta or {}) do o.metadata[k] = v end
  return o
end

-- A topology spread constraint; `sel` is a matchLabels table.
local function tsc(key, skew, when, sel, extra)
  local c = { topologyKey = key, maxSkew = skew, whenUnsatisfiable = when }
  if sel then c.labelSelector = { matchLabels = sel } end
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

local function service(name, selector, ns)
  return { apiVersion = "v1", kind = "Service", metadata = { name = name, namespace = ns or "default" },
           spec = { selector = selector } }
end

local function replica_set(name, selector, ns)
  return { apiVersion = "apps/v1", kind = "ReplicaSet", metadata = { name = name, namespace = ns or "default" },
           spec = { selector = selector } }
end

local function owned_by(kind, name, controller)
  return { ownerReferences = { { apiVersion = "apps/v1", kind = kind, name = name, uid = "uid-" .. name,
                                 controller = controller } } }
end

local WEB = { app = "web" }

-- n copies of a pod on a node.
local function on(node_name, n, labels, extra)
  local out = {}
  for i = 1, n do
    local d = { name = string.format("%s-%s-%d", node_name, labels.app or "x", i), node_name = node_name,
                labels = labels }
    for k, v in pairs(extra or {}) do d[k] = v end
    out[i] = d
  end
  return out
end

-- Node names in sorted order (the snapshot lists nodes zone by zone).
local function sorted(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = v end
  table.sort(out)
  return out
end

local function concat(...)
  local out = {}
  for _, list in ipairs({ ... }) do
    for _, v in ipairs(list) do out[#out + 1] = v end
  end
  return out
end

describe("PodTopologySpread", function()
  local plugin
  setup(function() plugin = T.plugin("PodTopologySpread") end)

  describe("filter (DoNotSchedule)", function()
    local cluster
    setup(function()
      -- zone a: a1 (2 web), a2; zone b: b1 (1 web); zone c: c1 (a db pod, a web
      -- pod of another namespace, a terminating web pod: none counts);
      -- nolabel: no zone label (its web pod is not counted either).
      -- Counts: a = 2, b = 1, c = 0 -> min 0.
      local terminating = pod({ name = "leaving", node_name = "c1", labels = WEB }, nil,
        { deletionTimestamp = "2024-01-01T00:00:00Z" })
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("a2", "a"), node("b1", "b"), node("c1", "c"), node("nolabel", false) },
        pods = concat(on("a1", 2, WEB), on("b1", 1, WEB), on("c1", 1, { app = "db" }),
          on("c1", 1, WEB, { namespace = "other" }), { terminating }, on("nolabel", 1, WEB)),
      }
    end)
    teardown(function() cluster:close() end)

    local function run(labels, constraints)
      return T.cycle(plugin, cluster, T.pod(pod({ name = "p", labels = labels }, constraints)))
    end

    it("counts the incoming pod's self-match in the skew", function()
      local r = run(WEB, { tsc(ZONE, 1, "DoNotSchedule", WEB) })
      assert.are.equal(ls.SUCCESS, r.pre_filter.code)
      -- a: 2 + 1 - 0 = 3 > 1; b: 1 + 1 - 0 = 2 > 1; c: 0 + 1 - 0 = 1
      for _, n in ipairs({ "a1", "a2", "b1" }) do
        assert.are.equal(UNSCHED, r.filter[n].code, n)
        assert.are.equal(VIOLATED, r.filter[n].message)
      end
      assert.are.equal(ls.SUCCESS, r.filter.c1.code)
      assert.are.same({ "c1" }, sorted(r.feasible))
    end)

    it("allows up to maxSkew", function()
      -- maxSkew 2: a 3 > 2 fails; b 2 and c 1 pass
      local r = run(WEB, { tsc(ZONE, 2, "DoNotSchedule", WEB) })
      assert.are.same({ "b1", "c1" }, sorted(r.feasible))
    end)

    it("adds no self-match when the pod does not match its own selector", function()
      -- a: 2 + 0 - 0 = 2 > 1 fails; b: 1 passes; c: 0 passes
      local r = run({ app = "other" }, { tsc(ZONE, 1, "DoNotSchedule", WEB) })
      assert.are.same({ "b1", "c1" }, sorted(r.feasible))
    end)

    it("rejects a node without the topology key as unresolvable", function()
      local r = run(WEB, { tsc(ZONE, 1, "DoNotSchedule", WEB) })
      assert.are.equal(UNRESOLVABLE, r.filter.nolabel.code)
      assert.are.equal(MISSING, r.filter.nolabel.message)
    end)

    it("checks the constraints in order and reports the first failure", function()
      -- hostname first (nodes with both keys count): a1 2, a2 0, b1 1, c1 0 ->
      -- min 0; a1 2 + 1 - 0 = 3 > 1; nolabel passes it (0 + 1 - 0 = 1) but
      -- then misses the zone key
      local r = run(WEB, { tsc(HOST, 1, "DoNotSchedule", WEB), tsc(ZONE, 5, "DoNotSchedule", WEB) })
      assert.are.equal(VIOLATED, r.filter.a1.message)
      assert.are.equal(MISSING, r.filter.nolabel.message)
    end)

    it("counts nothing with an empty selector but still self-matches", function()
      -- labelSelector {}: countPodsMatchSelector gives 0 everywhere; 0 + 1 - 0 = 1
      local c = tsc(ZONE, 1, "DoNotSchedule")
      c.labelSelector = {}
      local r = run(WEB, { c })
      assert.are.same({ "a1", "a2", "b1", "c1" }, sorted(r.feasible))
    end)

    it("skips PreFilter and Filter without DoNotSchedule constraints", function()
      local r = run(WEB, { tsc(ZONE, 1, "ScheduleAnyway", WEB) })
      assert.are.equal(ls.SKIP, r.pre_filter.code)
      -- and with no constraints and the System defaults (all ScheduleAnyway)
      r = run(WEB, nil)
      assert.are.equal(ls.SKIP, r.pre_filter.code)
    end)

    it("is an Error without PreFilter state", function()
      local r = T.filter(plugin, cluster, T.pod { name = "p" }, "a1")
      assert.are.equal(ls.ERROR, r.code)
      assert.are.equal('reading "PreFilterPodTopologySpread" from cycleState: not found', r.message)
    end)
  end)

  describe("minDomains", function()
    local cluster
    setup(function()
      -- counts a = 2, b = 1, c = 1: three domains, min 1
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b"), node("c1", "c") },
        pods = concat(on("a1", 2, WEB), on("b1", 1, WEB), on("c1", 1, WEB)),
      }
    end)
    teardown(function() cluster:close() end)

    local function feasible(min_domains)
      local extra = min_domains and { minDomains = min_domains } or nil
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(ZONE, 1, "DoNotSchedule", WEB, extra) }))
      return sorted(T.cycle(plugin, cluster, p).feasible)
    end

    it("uses the global minimum when there are enough domains", function()
      -- a: 2 + 1 - 1 = 2 > 1; b, c: 1 + 1 - 1 = 1
      assert.are.same({ "b1", "c1" }, feasible(nil))
      assert.are.same({ "b1", "c1" }, feasible(3))
    end)

    it("treats the minimum as 0 with fewer domains than minDomains", function()
      -- 3 domains < 4: a 3 > 1, b and c 2 > 1
      assert.are.same({}, feasible(4))
    end)
  end)

  describe("node inclusion policies", function()
    it("nodeAffinityPolicy Honor counts only nodes matching the pod's node affinity", function()
      -- a1 (ssd, 1 web), b1 (hdd, 0), c1 (ssd, 1 web); the pod wants disk=ssd.
      local cluster = T.cluster {
        nodes = { node("a1", "a", { labels = { disk = "ssd" } }), node("b1", "b", { labels = { disk = "hdd" } }),
                  node("c1", "c", { labels = { disk = "ssd" } }) },
        pods = concat(on("a1", 1, WEB), on("c1", 1, WEB)),
      }
      local function feasible(policy)
        local p = T.pod(pod({ name = "p", labels = WEB, node_selector = { disk = "ssd" } },
          { tsc(ZONE, 1, "DoNotSchedule", WEB, { nodeAffinityPolicy = policy }) }))
        return sorted(T.cycle(plugin, cluster, p).feasible)
      end
      -- Honor (also the default): domains a = 1, c = 1 -> min 1; a1, c1: 1 + 1 - 1 = 1;
      -- b1 is no domain: 0 + 1 - 1 = 0 (NodeAffinity itself rejects it)
      assert.are.same({ "a1", "b1", "c1" }, feasible("Honor"))
      assert.are.same({ "a1", "b1", "c1" }, feasible(nil))
      -- Ignore: b = 0 counts -> min 0; a1, c1: 2 > 1
      assert.are.same({ "b1" }, feasible("Ignore"))
      cluster:close()
    end)

    it("nodeTaintsPolicy Honor leaves out nodes with untolerated NoSchedule/NoExecute taints", function()
      local cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b", { taints = { { key = "k", value = "v", effect = "NoSchedule" } } }),
                  node("c1", "c"), node("d1", "d", { taints = { { key = "soft", effect = "PreferNoSchedule" } } }) },
        pods = concat(on("a1", 1, WEB), on("c1", 1, WEB), on("d1", 1, WEB)),
      }
      local function feasible(policy, tolerations)
        local p = T.pod(pod({ name = "p", labels = WEB, tolerations = tolerations },
          { tsc(ZONE, 1, "DoNotSchedule", WEB, { nodeTaintsPolicy = policy }) }))
        return sorted(T.cycle(plugin, cluster, p).feasible)
      end
      -- Honor: b1 excluded (PreferNoSchedule d1 stays): a = c = d = 1 -> min 1;
      -- a1, c1, d1: 1 + 1 - 1 = 1; b1 (no domain): 0 + 1 - 1 = 0
      assert.are.same({ "a1", "b1", "c1", "d1" }, feasible("Honor"))
      -- Ignore (the default): b = 0 -> min 0; a1, c1, d1: 2 > 1
      assert.are.same({ "b1" }, feasible("Ignore"))
      assert.are.same({ "b1" }, feasible(nil))
      -- Honor with the taint tolerated: b1 counts again
      assert.are.same({ "b1" }, feasible("Honor", { { key = "k", operator = "Exists" } }))
      cluster:close()
    end)
  end)

  describe("matchLabelKeys", function()
    local cluster
    setup(function()
      -- a1: 2 web v1; b1: 1 web v2; c1: none
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b"), node("c1", "c") },
        pods = concat(on("a1", 2, { app = "web", version = "v1" }), on("b1", 1, { app = "web", version = "v2" })),
      }
    end)
    teardown(function() cluster:close() end)

    local function feasible(labels, keys)
      local p = T.pod(pod({ name = "p", labels = labels },
        { tsc(ZONE, 1, "DoNotSchedule", WEB, { matchLabelKeys = keys }) }))
      return sorted(T.cycle(plugin, cluster, p).feasible)
    end

    it("ANDs the pod's own value of each key into the selector (through the decoder)", function()
      -- selector app=web,version=v2: a = 0, b = 1, c = 0 -> min 0;
      -- a1 1, b1 2 > 1, c1 1
      assert.are.same({ "a1", "c1" }, feasible({ app = "web", version = "v2" }, { "version" }))
    end)

    it("ignores keys the pod does not carry", function()
      -- selector app=web: a = 2, b = 1, c = 0; a1 3, b1 2, c1 1
      assert.are.same({ "c1" }, feasible(WEB, { "version" }))
      assert.are.same({ "c1" }, feasible({ app = "web", version = "v2" }, nil))
    end)
  end)

  describe("score (ScheduleAnyway)", function()
    local cluster
    setup(function()
      -- a1 (zone a): 3 web, a2 (a): 1 web, b1 (b): 1 web, x1 (no zone): 2 web
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("a2", "a"), node("b1", "b"), node("x1", false) },
        pods = concat(on("a1", 3, WEB), on("a2", 1, WEB), on("b1", 1, WEB), on("x1", 2, WEB)),
      }
    end)
    teardown(function() cluster:close() end)

    it("weights hostname and zone counts, rounds, normalizes and ignores nodes missing a key", function()
      local p = T.pod(pod({ name = "p", labels = WEB },
        { tsc(HOST, 1, "ScheduleAnyway", WEB), tsc(ZONE, 2, "ScheduleAnyway", WEB) }))
      local r = T.cycle(plugin, cluster, p)
      assert.are.equal(ls.SKIP, r.pre_filter.code)
      assert.are.equal(ls.SUCCESS, r.pre_score.code)
      -- own constraints: requireAllTopologies, x1 (no zone) is ignored.
      -- hostname: size 4 - 1 = 3, w = ln 5 = 1.6094379
      -- zone: domains {a, b} among the others, w = ln 4 = 1.3862944;
      --   counts over eligible nodes (x1 lacks the key): a = 3 + 1 = 4, b = 1
      -- a1: 3 * 1.6094379 + 0 + 4 * 1.3862944 + 1 = 4.8283137 + 6.5451774 = 11.37 -> 11
      -- a2: 1.6094379 + 6.5451774 = 8.15 -> 8
      -- b1: 1.6094379 + (1.3862944 + 1) = 3.9957 -> 4 (rounded up)
      -- x1: ignored -> 0
      assert.are.same({ a1 = 11, a2 = 8, b1 = 4, x1 = 0 }, r.raw)
      -- min 4, max 11: a1 100 * (15 - 11) / 11 = 36, a2 700 / 11 = 63, b1 1100 / 11 = 100, x1 0
      assert.are.same({ a1 = 36, a2 = 63, b1 = 100, x1 = 0 }, r.scores)
    end)

    it("gives every node 100 when the highest raw score is 0", function()
      -- maxSkew 1, a selector nothing matches: every raw score is 0 * w + 0 = 0
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(HOST, 1, "ScheduleAnyway", { app = "none" }) }))
      local r = T.cycle(plugin, cluster, p)
      assert.are.same({ a1 = 0, a2 = 0, b1 = 0, x1 = 0 }, r.raw)
      assert.are.same({ a1 = 100, a2 = 100, b1 = 100, x1 = 100 }, r.scores)
    end)

    it("counts every eligible node's pods into the feasible nodes' zones", function()
      -- Only a2 and b1 are handed to PreScore: zone size 2 (w = ln 4), hostname
      -- size 2 (w = ln 4); zone counts a = 4 (a1 counts though not feasible), b = 1
      -- a2: 1 * 1.3862944 + 4 * 1.3862944 + 1 = 7.93 -> 8
      -- b1: 1.3862944 + 1.3862944 + 1 = 3.77 -> 4
      local p = T.pod(pod({ name = "p", labels = WEB },
        { tsc(HOST, 1, "ScheduleAnyway", WEB), tsc(ZONE, 2, "ScheduleAnyway", WEB) }))
      cluster:attach(p)
      local state = {}
      local ffi = require("ffi")
      local nodes = ffi.new("const ls_node_info *[2]", { cluster:node_info("a2"), cluster:node_info("b1") })
      assert.is_nil(plugin:pre_score(state, p, nodes, 2))
      assert.are.equal(8, plugin:score(state, p, nodes[0]))
      assert.are.equal(4, plugin:score(state, p, nodes[1]))
    end)

    it("skips PreScore without ScheduleAnyway constraints", function()
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(ZONE, 5, "DoNotSchedule", WEB) }))
      local r = T.cycle(plugin, cluster, p)
      assert.are.equal(ls.SKIP, r.pre_score.code)
    end)

    it("raises without PreScore state", function()
      -- the framework's Error: the plugin's point, name, file and line, then its error
      local ok, err = pcall(T.score, plugin, cluster, T.pod { name = "p" }, "a1")
      assert.is_false(ok)
      assert.matches('^[^:]+_spec%.lua:%d+: running Score plugin "PodTopologySpread": '
        .. 'plugins/pod_topology_spread%.lua:%d+: '
        .. 'error reading "PreScorePodTopologySpread" from cycleState: not found$', err)
    end)
  end)

  describe("system default constraints", function()
    it("spread the pods a Service selects; a node without a zone is still scored by hostname", function()
      -- a1 (a): 2 web, a2 (a): 1 db, b1 (b): 1 web, x1 (no zone): 1 web
      local cluster = T.cluster {
        nodes = { node("a1", "a"), node("a2", "a"), node("b1", "b"), node("x1", false) },
        pods = concat(on("a1", 2, WEB), on("a2", 1, { app = "db" }), on("b1", 1, WEB), on("x1", 1, WEB)),
        objects = { service("web", WEB), service("db", { app = "db" }), service("elsewhere", WEB, "other") },
      }
      local r = T.cycle(plugin, cluster, T.pod { name = "p", labels = WEB })
      assert.are.equal(ls.SKIP, r.pre_filter.code)     -- both defaults are ScheduleAnyway
      assert.are.equal(ls.SUCCESS, r.pre_score.code)
      -- selector app=web (the Service "web"); not requireAllTopologies: nobody ignored.
      -- hostname {maxSkew 3}: size 4, w = ln 6 = 1.7917595
      -- zone {maxSkew 5}: values among feasible a, b and "" (x1's missing label,
      --   as upstream's map lookup gives) -> size 3, w = ln 5 = 1.6094379;
      --   counts a = 2, b = 1
      -- a1: 2 * 1.7917595 + 2 + 2 * 1.6094379 + 4 = 5.5835 + 7.2189 = 12.80 -> 13
      -- a2: 0 + 2 + 7.2189 = 9.22 -> 9
      -- b1: 1.7917595 + 2 + 1.6094379 + 4 = 9.40 -> 9
      -- x1: 1.7917595 + 2 (no zone label: no zone term) = 3.79 -> 4
      assert.are.same({ a1 = 13, a2 = 9, b1 = 9, x1 = 4 }, r.raw)
      -- min 4, max 13: a1 100 * 4 / 13 = 30, a2 and b1 800 / 13 = 61, x1 1300 / 13 = 100
      assert.are.same({ a1 = 30, a2 = 61, b1 = 61, x1 = 100 }, r.scores)
      cluster:close()
    end)

    it("AND the Services' selectors with the controller's (ReplicaSet by ownerReference)", function()
      -- n1: 1 pod app=web,tier=front + 1 pod app=web; n2: none; no zone labels.
      local cluster = T.cluster {
        nodes = { node("n1", false), node("n2", false) },
        pods = concat(on("n1", 1, { app = "web", tier = "front" }), on("n1", 1, WEB)),
        objects = { service("web", WEB),
                    replica_set("rs1", {
                      matchExpressions = { { key = "tier", operator = "In", values = { "front" } } } }) },
      }
      local labels = { app = "web", tier = "front" }
      local function run(meta)
        return T.cycle(plugin, cluster, T.pod(pod({ name = "p", labels = labels }, nil, meta)))
      end
      -- selector app=web AND tier In (front): n1 counts 1.
      -- hostname size 2, w = ln 4 = 1.3862944; no node has a zone label.
      -- n1: 1.3862944 + 2 = 3.39 -> 3; n2: 0 + 2 = 2
      local r = run(owned_by("ReplicaSet", "rs1", true))
      assert.are.same({ n1 = 3, n2 = 2 }, r.raw)
      -- min 2, max 3: n1 100 * 2 / 3 = 66, n2 100
      assert.are.same({ n1 = 66, n2 = 100 }, r.scores)
      -- not the controller: the Service alone, n1 counts 2: 2 * 1.3862944 + 2 = 4.77 -> 5
      r = run(owned_by("ReplicaSet", "rs1", false))
      assert.are.same({ n1 = 5, n2 = 2 }, r.raw)
      -- a controller that does not exist: the Service alone as well
      r = run(owned_by("ReplicaSet", "missing", true))
      assert.are.same({ n1 = 5, n2 = 2 }, r.raw)
      cluster:close()
    end)

    it("use the controller alone when no Service selects the pod", function()
      local cluster = T.cluster {
        nodes = { node("n1", false), node("n2", false) },
        pods = on("n1", 1, { app = "web", tier = "front" }),
        objects = { replica_set("rs1", { matchLabels = { tier = "front" } }) },
      }
      local r = T.cycle(plugin, cluster, T.pod(pod({ name = "p", labels = { app = "web", tier = "front" } }, nil,
        owned_by("ReplicaSet", "rs1", true))))
      -- n1: 1 * ln 4 + 2 = 3.39 -> 3, n2: 2
      assert.are.same({ n1 = 3, n2 = 2 }, r.raw)
      cluster:close()
    end)

    it("do not apply when nothing selects the pod", function()
      local no_selector = { apiVersion = "v1", kind = "Service", metadata = { name = "bare", namespace = "default" },
                            spec = {} }
      local cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b") },
        pods = on("a1", 2, WEB),
        -- a Service without a selector selects nothing; the others do not match
        -- the pod or live in another namespace
        objects = { no_selector, service("db", { app = "db" }), service("web", WEB, "other"),
                    replica_set("rs-other-ns", { matchLabels = WEB }, "other") },
      }
      local r = T.cycle(plugin, cluster, T.pod(pod({ name = "p", labels = WEB }, nil,
        owned_by("ReplicaSet", "rs-other-ns", true))))
      assert.are.equal(ls.SKIP, r.pre_filter.code)
      assert.are.equal(ls.SKIP, r.pre_score.code)
      assert.is_true(r.skipped_score)
      cluster:close()
    end)

    it("do not apply to a pod with constraints of its own", function()
      local cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b") },
        pods = on("a1", 2, WEB),
        objects = { service("web", WEB) },
      }
      -- only a DoNotSchedule constraint: PreScore has no ScheduleAnyway ones
      local r = T.cycle(plugin, cluster, T.pod(pod({ name = "p", labels = WEB },
        { tsc(ZONE, 5, "DoNotSchedule", WEB) })))
      assert.are.equal(ls.SUCCESS, r.pre_filter.code)
      assert.are.equal(ls.SKIP, r.pre_score.code)
      cluster:close()
    end)
  end)

  describe("defaultingType List", function()
    local cluster
    setup(function()
      -- a1 (a): 2 web, b1 (b): none, x1 (no zone): 1 web
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b"), node("x1", false) },
        pods = concat(on("a1", 2, WEB), on("x1", 1, WEB)),
        objects = { service("web", WEB) },
      }
    end)
    teardown(function() cluster:close() end)

    it("filters with the listed DoNotSchedule constraints and the default selector", function()
      local pl = T.plugin("PodTopologySpread", { defaultingType = "List",
        defaultConstraints = { { maxSkew = 1, topologyKey = ZONE, whenUnsatisfiable = "DoNotSchedule" } } })
      local r = T.cycle(pl, cluster, T.pod { name = "p", labels = WEB })
      -- zone counts a = 2, b = 0 (x1 lacks the key) -> min 0: a1 3 > 1, b1 1
      assert.are.equal(VIOLATED, r.filter.a1.message)
      assert.are.equal(ls.SUCCESS, r.filter.b1.code)
      assert.are.equal(MISSING, r.filter.x1.message)
      -- nothing selects this pod: no default constraint
      r = T.cycle(pl, cluster, T.pod { name = "q", labels = { app = "lonely" } })
      assert.are.equal(ls.SKIP, r.pre_filter.code)
    end)

    it("requires all topology keys when scoring", function()
      local pl = T.plugin("PodTopologySpread", { defaultingType = "List",
        defaultConstraints = { { maxSkew = 2, topologyKey = ZONE, whenUnsatisfiable = "ScheduleAnyway" } } })
      local r = T.cycle(pl, cluster, T.pod { name = "p", labels = WEB })
      -- List: requireAllTopologies, x1 ignored. zone size 2, w = ln 4 = 1.3862944;
      -- counts a = 2, b = 0. a1: 2 * 1.3862944 + 1 = 3.77 -> 4; b1: 1
      assert.are.same({ a1 = 4, b1 = 1, x1 = 0 }, r.raw)
      -- min 1, max 4: a1 100 * 1 / 4 = 25, b1 100 * 4 / 4 = 100, x1 0
      assert.are.same({ a1 = 25, b1 = 100, x1 = 0 }, r.scores)
    end)

    it("with no constraints listed, never applies", function()
      local pl = T.plugin("PodTopologySpread", { defaultingType = "List" })
      local r = T.cycle(pl, cluster, T.pod { name = "p", labels = WEB })
      assert.are.equal(ls.SKIP, r.pre_filter.code)
      assert.are.equal(ls.SKIP, r.pre_score.code)
    end)
  end)

  describe("args validation", function()
    local function init_error(args)
      local ok, err = pcall(T.plugin, "PodTopologySpread", args)
      assert.is_false(ok)
      return err
    end

    it("rejects defaultConstraints with System", function()
      assert.are.equal('defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        init_error { defaultConstraints = {
          { maxSkew = 1, topologyKey = ZONE, whenUnsatisfiable = "DoNotSchedule" } } })
    end)

    it("rejects an unknown defaultingType", function()
      assert.are.equal('defaultingType: Unsupported value: "Magic": supported values: "System", "List"',
        init_error { defaultingType = "Magic" })
    end)

    it("checks each listed constraint", function()
      assert.are.equal('[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range, '
        .. 'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Later": supported values: '
        .. '"DoNotSchedule", "ScheduleAnyway", '
        .. 'defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, '
        .. 'as they deduced for each pod]',
        init_error { defaultingType = "List", defaultConstraints = {
          { maxSkew = 0, topologyKey = ZONE, whenUnsatisfiable = "Later", labelSelector = { matchLabels = WEB } } } })
      assert.are.equal('defaultConstraints[1]: Duplicate value: "{' .. ZONE .. ', DoNotSchedule}"',
        init_error { defaultingType = "List", defaultConstraints = {
          { maxSkew = 1, topologyKey = ZONE, whenUnsatisfiable = "DoNotSchedule" },
          { maxSkew = 2, topologyKey = ZONE, whenUnsatisfiable = "DoNotSchedule" } } })
      assert.are.equal("defaultConstraints[0].topologyKey: Required value: can not be empty",
        init_error { defaultingType = "List", defaultConstraints = {
          { maxSkew = 1, whenUnsatisfiable = "DoNotSchedule" } } })
      assert.matches("^defaultConstraints%[0%]%.topologyKey: Invalid value: \"bad key\": name part",
        init_error { defaultingType = "List", defaultConstraints = {
          { maxSkew = 1, topologyKey = "bad key", whenUnsatisfiable = "DoNotSchedule" } } })
    end)
  end)

  describe("add_pod / remove_pod", function()
    local cluster
    setup(function()
      -- counts a = 2, b = 1, c = 0 (as in the filter cluster, without extras)
      cluster = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b"), node("c1", "c"), node("nolabel", false) },
        pods = concat(on("a1", 2, WEB), on("b1", 1, WEB)),
      }
    end)
    teardown(function() cluster:close() end)

    local function fresh(p)
      local state = {}
      assert.are.equal(ls.SUCCESS, T.pre_filter(plugin, cluster, p, state).code)
      return state
    end
    local function passes(state, p, n)
      return T.filter(plugin, cluster, p, n, state).code == ls.SUCCESS
    end

    it("adjust the counts and the global minimum", function()
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(ZONE, 1, "DoNotSchedule", WEB) }))
      local state = fresh(p)
      -- min 0: a 3, b 2, c 1 -> only c1
      assert.is_false(passes(state, p, "b1"))
      assert.is_true(passes(state, p, "c1"))
      -- a web pod added on c1: a 2, b 1, c 1 -> min 1: b1 1 + 1 - 1 = 1 passes, a1 2 fails
      local added = T.pod { name = "nominated", labels = WEB }
      assert.is_nil(plugin:add_pod(state, p, added, cluster:node_info("c1")))
      assert.is_true(passes(state, p, "b1"))
      assert.is_true(passes(state, p, "c1"))
      assert.is_false(passes(state, p, "a1"))
      -- one removed from a1: a 1 -> a1 1 + 1 - 1 = 1 passes
      assert.is_nil(plugin:remove_pod(state, p, T.pod { name = "victim", labels = WEB }, cluster:node_info("a1")))
      assert.is_true(passes(state, p, "a1"))
      -- removing the c1 pod again: c 0 -> min 0, b1 2 > 1 fails
      assert.is_nil(plugin:remove_pod(state, p, added, cluster:node_info("c1")))
      assert.is_false(passes(state, p, "b1"))
    end)

    it("ignore pods of other namespaces, non-matching pods and nodes without the key", function()
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(ZONE, 1, "DoNotSchedule", WEB) }))
      local state = fresh(p)
      plugin:add_pod(state, p, T.pod { name = "x", namespace = "other", labels = WEB }, cluster:node_info("c1"))
      plugin:add_pod(state, p, T.pod { name = "y", labels = { app = "db" } }, cluster:node_info("c1"))
      plugin:add_pod(state, p, T.pod { name = "z", labels = WEB }, cluster:node_info("nolabel"))
      -- still min 0: b1 fails, c1 passes
      assert.is_false(passes(state, p, "b1"))
      assert.is_true(passes(state, p, "c1"))
    end)

    it("keep the exact minimum when tied domains go up (where upstream's criticalPaths can overestimate)", function()
      -- a, b, c each with 1 web pod: min 1
      local tied = T.cluster {
        nodes = { node("a1", "a"), node("b1", "b"), node("c1", "c") },
        pods = concat(on("a1", 1, WEB), on("b1", 1, WEB), on("c1", 1, WEB)),
      }
      local p = T.pod(pod({ name = "p", labels = WEB }, { tsc(ZONE, 1, "DoNotSchedule", WEB) }))
      local state = {}
      T.pre_filter(plugin, tied, p, state)
      plugin:add_pod(state, p, T.pod { name = "n1", labels = WEB }, tied:node_info("a1"))
      plugin:add_pod(state, p, T.pod { name = "n2", labels = WEB }, tied:node_info("b1"))
      -- a 2, b 2, c 1: min is still 1: a1 2 + 1 - 1 = 2 > 1 fails, c1 1 passes
      assert.are.equal(UNSCHED, T.filter(plugin, tied, p, "a1", state).code)
      assert.are.equal(ls.SUCCESS, T.filter(plugin, tied, p, "c1", state).code)
      -- c goes up too: a 2, b 2, c 2 -> min 2: every node 2 + 1 - 2 = 1 passes
      plugin:add_pod(state, p, T.pod { name = "n3", labels = WEB }, tied:node_info("c1"))
      assert.are.equal(ls.SUCCESS, T.filter(plugin, tied, p, "a1", state).code)
      tied:close()
    end)
  end)

  describe("hot paths", function()
    it("filter and score allocate nothing per node once compiled", function()
      if not jit or not jit.status() then
        pending("the JIT is off")
        return
      end
      local nodes, pods = {}, {}
      for i = 1, 100 do
        nodes[i] = node("n" .. i, "z" .. (i % 5))
        pods[#pods + 1] = { name = "w" .. i, node_name = "n" .. i, labels = WEB }
        pods[#pods + 1] = { name = "d" .. i, node_name = "n" .. i, labels = { app = "db" } }
      end
      local cluster = T.cluster { nodes = nodes, pods = pods }
      local p = T.pod(pod({ name = "p", labels = WEB }, {
        tsc(ZONE, 1, "DoNotSchedule", WEB, { nodeTaintsPolicy = "Honor" }),
        tsc(HOST, 2, "ScheduleAnyway", WEB), tsc(ZONE, 3, "ScheduleAnyway", WEB) }))
      cluster:attach(p)
      local state = {}
      assert.is_nil(plugin:pre_filter(state, p))
      local list, n = cluster.list, cluster.num_nodes
      assert.is_nil(plugin:pre_score(state, p, list, n))
      local function loops()
        local k = 0
        for i = 0, n - 1 do
          if plugin:filter(state, p, list[i]) == nil then k = k + plugin:score(state, p, list[i]) end
        end
        return k
      end
      -- LuaJIT's hot-loop counters back off by random penalties, so now and
      -- then (about 1 run in 50) a trace is not formed in time: the claim is
      -- about compiled code, so a measurement whose code did not compile is
      -- taken again after a flush (at most three times).
      local grown
      for _ = 1, 3 do
        jit.flush()
        for _ = 1, 300 do loops() end   -- compile
        collectgarbage()
        collectgarbage("stop")
        local before = collectgarbage("count")
        for _ = 1, 1000 do loops() end
        grown = collectgarbage("count") - before
        collectgarbage("restart")
        if grown < 64 then break end
      end
      -- 100000 filter + 100000 score calls; a box per call would be > 3000 KB
      assert.is_true(grown < 64, string.format("grew by %.1f KB", grown))
      cluster:close()
    end)
  end)

  describe("end to end (luasched simulate, built-in default profile)", function()
    local sim = require("sim_helper")

    it("scores the pods a Service and a ReplicaSet select with the system defaults", function()
      sim.bin()   -- asserts LUASCHED_BIN
      local yaml = [[
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: b1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api-1, namespace: default}
spec: {selector: {matchLabels: {app: api}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-old, namespace: default, labels: {app: web}}
spec: {nodeName: a1, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-new, namespace: default, labels: {app: web}, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: api-new
  namespace: default
  labels: {app: api}
  creationTimestamp: "2024-01-01T00:00:01Z"
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: api-1, uid: u1, controller: true}]
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: loner, namespace: default, labels: {app: loner}, creationTimestamp: "2024-01-01T00:00:02Z"}
spec: {containers: [{name: c, image: x}]}
]]
      local path = sim.write(os.tmpname(), yaml)
      local out = sim.run({ "simulate", path, "--output", "json" }, { merge = true }).out
      os.remove(path)
      -- one pod's record: from its name to its finalScore object
      local function record(name)
        local r = out:match('"name":"' .. name .. '".-"finalScore":%b{}')
        assert(r, "no record for " .. name .. " in: " .. out)
        return r
      end
      -- web-new: hostname size 2 and zone size 2, w = ln 4 = 1.3862944; web-old on a1.
      --   a1: 1.3862944 + 2 + 1.3862944 + 4 = 8.77 -> 9; b1: 2 + 4 = 6
      --   normalized: a1 100 * (15 - 9) / 9 = 66 (weight 2: 132), b1 100 (200) -> b1
      local web = record("web%-new")
      assert.matches('^"name":"web%-new","node":"b1"', web)
      local score, final = web:match('"score":(%b{})'), web:match('"finalScore":(%b{})')
      assert.matches('"a1":{[^}]*"PodTopologySpread":9[,}]', score)
      assert.matches('"b1":{[^}]*"PodTopologySpread":6[,}]', score)
      assert.matches('"a1":{[^}]*"PodTopologySpread":132[,}]', final)
      assert.matches('"b1":{[^}]*"PodTopologySpread":200[,}]', final)
      -- api-new (its ReplicaSet's selector): no api pod yet, both 0 + 2 + 0 + 4 = 6
      score = record("api%-new"):match('"score":(%b{})')
      assert.matches('"a1":{[^}]*"PodTopologySpread":6[,}]', score)
      assert.matches('"b1":{[^}]*"PodTopologySpread":6[,}]', score)
      -- loner: nothing selects it, PreScore skips and no PodTopologySpread score appears
      local loner = record("loner")
      assert.is_nil(loner:find("PodTopologySpread", 1, true))
    end)
  end)

  describe("the kit's objects", function()
    it("reach ls.objects and ls.find_object through the attached cycle", function()
      local cluster = T.cluster { nodes = { node("a1", "a") },
                                  objects = { service("web", WEB), replica_set("rs", { matchLabels = WEB }) } }
      cluster:attach(T.pod { name = "p" })
      local names = {}
      for o in ls.objects("Service") do names[#names + 1] = ls.str(o.name) end
      assert.are.same({ "web" }, names)
      local rs = ls.find_object("ReplicaSet", "default", "rs")
      assert.is_not_nil(rs)
      assert.are.equal(1, rs.has_selector)
      cluster:close()
    end)
  end)
end)
