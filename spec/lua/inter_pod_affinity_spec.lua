-- InterPodAffinity (upstream interpodaffinity/{filtering.go,scoring.go,plugin.go},
-- framework.AffinityTerm.Matches). Every expected value below is worked out by
-- hand from those rules; the arithmetic is in the comments.
--
-- Counting (PreFilter), per (topologyKey, value of the existing pod's node):
--   existing: existing pods' required anti-affinity terms matching the incoming pod
--   affinity: existing pods matching ALL incoming required affinity terms (+1 per term)
--   anti:     existing pods matching an incoming required anti-affinity term
-- Scoring (PreScore), per existing pod P on node N (value of the term's key on N):
--   +w incoming preferred affinity matching P, -w incoming preferred anti-affinity,
--   +hardPodAffinityWeight per required affinity term of P matching the incoming
--   pod, +w / -w P's preferred (anti-)affinity terms matching the incoming pod.
-- NormalizeScore: int64(100 * (float64(s - min) / float64(max - min))), 0 if max == min.
local T = require("luasched.testing")
local ls = require("luasched")

local ZONE, HOST = "zone", "kubernetes.io/hostname"
local OK = "ok"
local AFFINITY = "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"
local ANTI = "Unschedulable: node(s) didn't match pod anti-affinity rules"
local EXISTING = "Unschedulable: node(s) didn't satisfy existing pods anti-affinity rules"

-- A PodAffinityTerm: labelSelector.matchLabels `sel`, topologyKey `key`,
-- other fields (namespaces, namespaceSelector, ...) from `extra`.
local function term(sel, key, extra)
  local t = { labelSelector = { matchLabels = sel }, topologyKey = key }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

local function weighted(w, t) return { weight = w, podAffinityTerm = t } end

-- spec.affinity from { required = {terms}, anti = {terms}, preferred = {weighted},
-- preferred_anti = {weighted} }.
local function affinity(a)
  local out = {}
  if a.required or a.preferred then
    out.podAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution = a.required,
      preferredDuringSchedulingIgnoredDuringExecution = a.preferred,
    }
  end
  if a.anti or a.preferred_anti then
    out.podAntiAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution = a.anti,
      preferredDuringSchedulingIgnoredDuringExecution = a.preferred_anti,
    }
  end
  return out
end

local function node(name, zone)
  local labels = { [HOST] = name }
  if zone then labels[ZONE] = zone end
  return { name = name, labels = labels, allocatable = { cpu = "8", memory = "16Gi" } }
end

-- node -> "ok" or "<code>: <message>"
local function verdicts(filter)
  local out = {}
  for name, res in pairs(filter) do
    out[name] = res.code == ls.SUCCESS and OK or (res.code_name .. ": " .. res.message)
  end
  return out
end

describe("InterPodAffinity", function()
  local plugin
  setup(function() plugin = T.plugin("InterPodAffinity") end)

  describe("args", function()
    it("defaults hardPodAffinityWeight to 1 and ignorePreferredTermsOfExistingPods to false", function()
      assert.are.equal(1, plugin.args.hardPodAffinityWeight)
      assert.is_false(plugin.args.ignorePreferredTermsOfExistingPods)
      assert.are.equal(0, T.plugin("InterPodAffinity", { hardPodAffinityWeight = 0 }).hard_weight)
    end)

    it("rejects a hardPodAffinityWeight outside [0, 100]", function()
      assert.has_error(function() T.plugin("InterPodAffinity", { hardPodAffinityWeight = 101 }) end,
        "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]")
      assert.has_error(function() T.plugin("InterPodAffinity", { hardPodAffinityWeight = -1 }) end,
        "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]")
    end)
  end)

  -- n1, n2 in zone z1; n3 in z2; n4 without a zone label.
  -- web-1 (app=web, tier=front) on n1; db-1 (app=db) on n3; web-other (app=web,
  -- namespace other) on n3; guard (app=guard) on n3 with required anti-affinity
  -- app=batch per zone; fence on n2 with required anti-affinity app=lonely per
  -- hostname for namespaces without a "team" label (namespaceSelector DoesNotExist).
  describe("filter", function()
    local cluster
    setup(function()
      cluster = T.cluster {
        nodes = { node("n1", "z1"), node("n2", "z1"), node("n3", "z2"), node("n4") },
        pods = {
          { name = "web-1", node_name = "n1", labels = { app = "web", tier = "front" } },
          { name = "db-1", node_name = "n3", labels = { app = "db" } },
          { name = "web-other", namespace = "other", node_name = "n3", labels = { app = "web" } },
          { name = "guard", node_name = "n3", labels = { app = "guard" },
            affinity = affinity { anti = { term({ app = "batch" }, ZONE) } } },
          { name = "fence", node_name = "n2", labels = { app = "fence" },
            affinity = affinity { anti = { term({ app = "lonely" }, HOST, {
              namespaceSelector = { matchExpressions = { { key = "team", operator = "DoesNotExist" } } } }) } } },
        },
      }
    end)
    teardown(function() cluster:close() end)

    local function run(desc)
      desc.name = desc.name or "p"
      local r = T.cycle(plugin, cluster, T.pod(desc))
      return verdicts(r.filter), r
    end

    describe("PreFilter Skip", function()
      it("skips a pod without required terms that no existing anti-affinity term matches", function()
        -- existing: guard wants app=batch, fence app=lonely; p has app=web -> empty
        local v, r = run { labels = { app = "web" },
          affinity = affinity { preferred = { weighted(1, term({ app = "db" }, ZONE)) } } }
        assert.are.equal(ls.SKIP, r.pre_filter.code)
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = OK }, v)
      end)

      it("does not skip when an existing pod's anti-affinity matches the pod", function()
        local _, r = run { labels = { app = "batch" } }
        assert.are.equal(ls.SUCCESS, r.pre_filter.code)
      end)

      it("does not skip a pod with required terms even when nothing matches them", function()
        local _, r = run { affinity = affinity { anti = { term({ app = "nothing" }, ZONE) } } }
        assert.are.equal(ls.SUCCESS, r.pre_filter.code)
      end)
    end)

    describe("required affinity", function()
      it("passes the nodes of the topology domains holding a matching pod", function()
        -- affinity: web-1 matches app=web -> (zone, z1) = 1. web-other is in
        -- namespace other: the term defaults to the pod's own (default).
        -- n1, n2: z1 count 1; n3: (zone, z2) 0; n4: no zone label.
        local v = run { affinity = affinity { required = { term({ app = "web" }, ZONE) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = AFFINITY, n4 = AFFINITY }, v)
      end)

      it("needs one pod to match all terms, counted per term", function()
        -- web-1 matches app=web and tier=front: (zone, z1) = 1, (hostname, n1) = 1
        -- n2: zone ok but (hostname, n2) = 0; n3: (zone, z2) = 0; n4: no zone key
        local v = run { affinity = affinity { required = {
          term({ app = "web" }, ZONE), term({ tier = "front" }, HOST) } } }
        assert.are.same({ n1 = OK, n2 = AFFINITY, n3 = AFFINITY, n4 = AFFINITY }, v)
        -- no pod matches both app=web and app=db: counts empty; p matches neither itself
        v = run { affinity = affinity { required = { term({ app = "web" }, ZONE), term({ app = "db" }, HOST) } } }
        assert.are.same({ n1 = AFFINITY, n2 = AFFINITY, n3 = AFFINITY, n4 = AFFINITY }, v)
      end)

      it("rejects every node when no pod matches and the pod does not match its own terms", function()
        local v = run { labels = { app = "other" },
          affinity = affinity { required = { term({ app = "cache" }, ZONE) } } }
        assert.are.same({ n1 = AFFINITY, n2 = AFFINITY, n3 = AFFINITY, n4 = AFFINITY }, v)
      end)

      it("lets the first pod of a group in where it matches its own terms (topology key still required)", function()
        -- counts empty, p (app=cache, namespace default) matches app=cache in default
        local v = run { labels = { app = "cache" },
          affinity = affinity { required = { term({ app = "cache" }, ZONE) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = AFFINITY }, v)
        -- the term names namespace "other" only: p (in default) does not match itself
        v = run { labels = { app = "cache" },
          affinity = affinity { required = { term({ app = "cache" }, ZONE, { namespaces = { "other" } }) } } }
        assert.are.same({ n1 = AFFINITY, n2 = AFFINITY, n3 = AFFINITY, n4 = AFFINITY }, v)
      end)

      it("fails affinity before anti-affinity", function()
        -- affinity app=web per zone: n1, n2 pass, n3 (z2) and n4 (no key) fail;
        -- anti-affinity app=web per hostname: (hostname, n1) = 1 -> n1 fails it
        local v = run { affinity = affinity {
          required = { term({ app = "web" }, ZONE) }, anti = { term({ app = "web" }, HOST) } } }
        assert.are.same({ n1 = ANTI, n2 = OK, n3 = AFFINITY, n4 = AFFINITY }, v)
      end)
    end)

    describe("required anti-affinity", function()
      it("rejects the topology domains holding a matching pod (Unschedulable)", function()
        -- anti: web-1 -> (zone, z1) = 1: n1, n2 fail; n3 (z2) passes; n4 has no zone key
        local v = run { affinity = affinity { anti = { term({ app = "web" }, ZONE) } } }
        assert.are.same({ n1 = ANTI, n2 = ANTI, n3 = OK, n4 = OK }, v)
        -- per hostname: only (hostname, n1)
        v = run { affinity = affinity { anti = { term({ app = "web" }, HOST) } } }
        assert.are.same({ n1 = ANTI, n2 = OK, n3 = OK, n4 = OK }, v)
      end)

      it("honours existing pods' anti-affinity against the incoming pod", function()
        -- guard (on n3, z2) rejects app=batch per zone: existing (zone, z2) = 1
        local v = run { labels = { app = "batch" } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = EXISTING, n4 = OK }, v)
        -- another namespace: guard's term defaults to its own (default)
        v = run { namespace = "elsewhere", labels = { app = "batch" } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = OK }, v)
      end)

      it("reports the incoming pod's anti-affinity first in the symmetric case", function()
        -- p (app=batch) rejects app=guard per zone: anti (zone, z2) = 1 from guard,
        -- and guard rejects p: existing (zone, z2) = 1. n3 fails the first check.
        local v = run { labels = { app = "batch" }, affinity = affinity { anti = { term({ app = "guard" }, ZONE) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = ANTI, n4 = OK }, v)
      end)
    end)

    describe("namespaces and namespaceSelector", function()
      it("matches pods of the listed namespaces", function()
        -- namespaces [other]: web-other on n3 -> (zone, z2) = 1
        local v = run { affinity = affinity { required = {
          term({ app = "web" }, ZONE, { namespaces = { "other" } }) } } }
        assert.are.same({ n1 = AFFINITY, n2 = AFFINITY, n3 = OK, n4 = AFFINITY }, v)
        -- namespaces [default, other]: (zone, z1) = 1 and (zone, z2) = 1
        v = run { affinity = affinity { required = {
          term({ app = "web" }, ZONE, { namespaces = { "default", "other" } }) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = AFFINITY }, v)
      end)

      it("treats an empty namespaceSelector as every namespace", function()
        -- anti app=web, namespaceSelector {}: web-1 (z1) and web-other (z2) match
        local v = run { affinity = affinity { anti = { term({ app = "web" }, ZONE, { namespaceSelector = {} }) } } }
        assert.are.same({ n1 = ANTI, n2 = ANTI, n3 = ANTI, n4 = OK }, v)
      end)

      it("never selects a namespace without a Namespace object for the incoming pod", function()
        -- upstream lists Namespace objects matching the selector: there are none
        -- here, so even "team DoesNotExist" selects nothing and only the listed
        -- namespaces count. anti: nothing matches -> every node passes.
        local sel = { matchExpressions = { { key = "team", operator = "DoesNotExist" } } }
        local v = run { affinity = affinity { anti = { term({ app = "web" }, ZONE, { namespaceSelector = sel }) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = OK }, v)
        -- with namespaces [other] as well: web-other (z2) only
        v = run { affinity = affinity { anti = { term({ app = "web" }, ZONE,
          { namespaceSelector = sel, namespaces = { "other" } }) } } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = ANTI, n4 = OK }, v)
      end)

      it("matches an existing pod's namespaceSelector against the incoming namespace's labels (none: empty)", function()
        -- fence: app=lonely, team DoesNotExist, per hostname. Namespace "solo" has
        -- no object -> empty labels -> DoesNotExist matches -> existing (hostname, n2) = 1
        local v = run { namespace = "solo", labels = { app = "lonely" } }
        assert.are.same({ n1 = OK, n2 = EXISTING, n3 = OK, n4 = OK }, v)
      end)
    end)

    describe("namespaceSelector with Namespace objects (kit objects store)", function()
      -- Namespaces alpha (team=a), beta (team=b), gamma (no labels); "ghost" has
      -- no Namespace object. m1..m4 in zones y1..y4; app=cache pods: alpha on m1,
      -- beta on m2, gamma on m3, ghost on m4. fence (beta, on m2) rejects
      -- app=intruder from namespaces with team=a, per hostname.
      local c
      local function ns(name, labels)
        return { apiVersion = "v1", kind = "Namespace", metadata = { name = name, labels = labels } }
      end
      setup(function()
        c = T.cluster {
          nodes = { node("m1", "y1"), node("m2", "y2"), node("m3", "y3"), node("m4", "y4") },
          pods = {
            { name = "cache", namespace = "alpha", node_name = "m1", labels = { app = "cache" } },
            { name = "cache", namespace = "beta", node_name = "m2", labels = { app = "cache" } },
            { name = "cache", namespace = "gamma", node_name = "m3", labels = { app = "cache" } },
            { name = "cache", namespace = "ghost", node_name = "m4", labels = { app = "cache" } },
            { name = "fence", namespace = "beta", node_name = "m2",
              affinity = affinity { anti = { term({ app = "intruder" }, HOST,
                { namespaceSelector = { matchLabels = { team = "a" } } }) } } },
          },
        }
        if c.add_object then
          c:add_object(ns("alpha", { team = "a" }))
          c:add_object(ns("beta", { team = "b" }))
          c:add_object(ns("gamma"))
        end
      end)
      teardown(function() c:close() end)

      local function run_c(desc)
        if not c.add_object then pending("the testing kit has no cluster:add_object") return nil end
        desc.name = desc.name or "p"
        return verdicts(T.cycle(plugin, c, T.pod(desc)).filter)
      end
      local function with_selector(sel)
        return affinity { required = { term({ app = "cache" }, ZONE, { namespaceSelector = sel }) } }
      end

      it("selects the Namespaces whose labels match", function()
        -- team=a: alpha -> (zone, y1) = 1
        local v = run_c { affinity = with_selector { matchLabels = { team = "a" } } }
        if v == nil then return end
        assert.are.same({ m1 = OK, m2 = AFFINITY, m3 = AFFINITY, m4 = AFFINITY }, v)
        -- team In (a, b): alpha and beta -> y1, y2
        v = run_c { affinity = with_selector {
          matchExpressions = { { key = "team", operator = "In", values = { "a", "b" } } } } }
        assert.are.same({ m1 = OK, m2 = OK, m3 = AFFINITY, m4 = AFFINITY }, v)
      end)

      it("selects a Namespace without labels by DoesNotExist, never a namespace without an object", function()
        -- team DoesNotExist: gamma (object, no labels) -> y3; ghost has no object
        local v = run_c { affinity = with_selector {
          matchExpressions = { { key = "team", operator = "DoesNotExist" } } } }
        if v == nil then return end
        assert.are.same({ m1 = AFFINITY, m2 = AFFINITY, m3 = OK, m4 = AFFINITY }, v)
        -- {} selects every namespace, with or without an object
        v = run_c { affinity = with_selector {} }
        assert.are.same({ m1 = OK, m2 = OK, m3 = OK, m4 = OK }, v)
      end)

      it("matches existing pods' namespaceSelector against the incoming pod's Namespace labels", function()
        -- alpha has team=a: fence matches -> existing (hostname, m2) = 1
        local v = run_c { namespace = "alpha", labels = { app = "intruder" } }
        if v == nil then return end
        assert.are.same({ m1 = OK, m2 = EXISTING, m3 = OK, m4 = OK }, v)
        -- beta (team=b) and ghost (no object: no labels) do not match
        assert.are.same({ m1 = OK, m2 = OK, m3 = OK, m4 = OK },
          run_c { namespace = "beta", labels = { app = "intruder" } })
        assert.are.same({ m1 = OK, m2 = OK, m3 = OK, m4 = OK },
          run_c { namespace = "ghost", labels = { app = "intruder" } })
      end)
    end)

    describe("add_pod / remove_pod", function()
      local function filter_with(desc, change)
        desc.name = desc.name or "p"
        local pod = T.pod(desc)
        local state = {}
        local pre = T.pre_filter(plugin, cluster, pod, state)
        assert.are.equal(ls.SUCCESS, pre.code)
        change(state, pod)
        local out = {}
        for _, name in ipairs(cluster.names) do out[name] = T.filter(plugin, cluster, pod, name, state) end
        return verdicts(out)
      end

      local function add(state, pod, other, node_name)
        assert.is_nil(plugin:add_pod(state, pod, other, cluster:node_info(node_name)))
      end
      local function remove(state, pod, other, node_name)
        assert.is_nil(plugin:remove_pod(state, pod, other, cluster:node_info(node_name)))
      end

      it("adds and removes matches of the incoming pod's anti-affinity", function()
        local web = T.pod { name = "web-2", labels = { app = "web" } }
        local desc = { affinity = affinity { anti = { term({ app = "web" }, HOST) } } }
        -- anti (hostname, n1) = 1 -> +1 at (hostname, n2)
        assert.are.same({ n1 = ANTI, n2 = ANTI, n3 = OK, n4 = OK },
          filter_with(desc, function(state, pod) add(state, pod, web, "n2") end))
        -- web-1 removed from n1: (hostname, n1) back to 0
        local web1 = cluster:node_info("n1").pods[0]
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = OK },
          filter_with(desc, function(state, pod) remove(state, pod, web1, "n1") end))
      end)

      it("adds matches of the incoming pod's affinity", function()
        -- affinity app=web per zone: (zone, z1) = 1; a web pod added on n3 -> (zone, z2) = 1
        local web = T.pod { name = "web-3", labels = { app = "web" } }
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = AFFINITY },
          filter_with({ affinity = affinity { required = { term({ app = "web" }, ZONE) } } },
            function(state, pod) add(state, pod, web, "n3") end))
      end)

      it("ends the first-pod exception while a matching pod is added, and restores it on removal", function()
        local desc = { labels = { app = "cache" },
          affinity = affinity { required = { term({ app = "cache" }, ZONE) } } }
        local cache = T.pod { name = "cache-1", labels = { app = "cache" } }
        -- +1 at (zone, z1): counts no longer empty -> n3 (z2 = 0) fails
        assert.are.same({ n1 = OK, n2 = OK, n3 = AFFINITY, n4 = AFFINITY },
          filter_with(desc, function(state, pod) add(state, pod, cache, "n1") end))
        -- +1 then -1: the entry is deleted, counts are empty again -> first pod
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = AFFINITY },
          filter_with(desc, function(state, pod)
            add(state, pod, cache, "n1")
            remove(state, pod, cache, "n1")
          end))
      end)

      it("adds and removes existing pods' anti-affinity", function()
        -- a pod rejecting app=batch per hostname added on n1: existing (hostname, n1) = 1
        local picky = T.pod { name = "picky", affinity = affinity { anti = { term({ app = "batch" }, HOST) } } }
        assert.are.same({ n1 = EXISTING, n2 = OK, n3 = EXISTING, n4 = OK },
          filter_with({ labels = { app = "batch" } }, function(state, pod) add(state, pod, picky, "n1") end))
        -- guard removed from n3: existing (zone, z2) = 0
        local guard
        local ni = cluster:node_info("n3")
        for i = 0, ni.num_pods - 1 do
          if ls.str(ni.pods[i].name) == "guard" then guard = ni.pods[i] end
        end
        assert.are.same({ n1 = OK, n2 = OK, n3 = OK, n4 = OK },
          filter_with({ labels = { app = "batch" } }, function(state, pod) remove(state, pod, guard, "n3") end))
      end)

      it("returns an Error status without PreFilter state", function()
        local st = plugin:add_pod({}, T.pod { name = "p" }, T.pod { name = "q" }, cluster:node_info("n1"))
        assert.are.equal(ls.ERROR, st.code)
        assert.are.equal('error reading "PreFilterInterPodAffinity" from cycleState: not found', st.message)
      end)
    end)
  end)

  describe("score", function()
    local function scored(cluster, desc, p)
      desc.name = desc.name or "p"
      local r = T.cycle(p or plugin, cluster, T.pod(desc))
      return r
    end

    describe("the incoming pod's preferred terms", function()
      -- s1, s2 in z1; s3 in z2; s4 in z3. a (app=web) on s1, b (app=db) and c (app=web) on s3.
      local cluster
      setup(function()
        cluster = T.cluster {
          nodes = { node("s1", "z1"), node("s2", "z1"), node("s3", "z2"), node("s4", "z3") },
          pods = {
            { name = "a", node_name = "s1", labels = { app = "web" } },
            { name = "b", node_name = "s3", labels = { app = "db" } },
            { name = "c", node_name = "s3", labels = { app = "web" } },
          },
        }
      end)
      teardown(function() cluster:close() end)

      it("adds affinity weights and subtracts anti-affinity weights per topology domain", function()
        -- affinity app=web (5) per zone: a -> (zone, z1) += 5; c -> (zone, z2) += 5
        -- anti-affinity app=db (3) per hostname: b -> (hostname, s3) -= 3
        -- raw: s1 5, s2 5, s3 5 - 3 = 2, s4 0; min 0, max 5
        -- s1, s2: 100 * (5/5) = 100; s3: 100 * (2/5) = 40; s4: 0
        local r = scored(cluster, { affinity = affinity {
          preferred = { weighted(5, term({ app = "web" }, ZONE)) },
          preferred_anti = { weighted(3, term({ app = "db" }, HOST)) } } })
        assert.are.equal(ls.SKIP, r.pre_filter.code)
        assert.are.equal(ls.SUCCESS, r.pre_score.code)
        assert.are.same({ s1 = 5, s2 = 5, s3 = 2, s4 = 0 }, r.raw)
        assert.are.same({ s1 = 100, s2 = 100, s3 = 40, s4 = 0 }, r.scores)
      end)

      it("normalizes negative raw scores from the minimum", function()
        -- as above with anti-affinity weight 8: s3 = 5 - 8 = -3
        -- min -3, max 5, diff 8: s1, s2 100 * (8/8) = 100; s3 0; s4 100 * (3/8) = 37.5 -> 37
        local r = scored(cluster, { affinity = affinity {
          preferred = { weighted(5, term({ app = "web" }, ZONE)) },
          preferred_anti = { weighted(8, term({ app = "db" }, HOST)) } } })
        assert.are.same({ s1 = 5, s2 = 5, s3 = -3, s4 = 0 }, r.raw)
        assert.are.same({ s1 = 100, s2 = 100, s3 = 0, s4 = 37 }, r.scores)
        -- only anti-affinity: (zone, z1) -= 4 (a), (zone, z2) -= 4 (c)
        -- raw s1 -4, s2 -4, s3 -4, s4 0; min -4, max 0: s1..s3 0, s4 100
        r = scored(cluster, { affinity = affinity { preferred_anti = { weighted(4, term({ app = "web" }, ZONE)) } } })
        assert.are.same({ s1 = -4, s2 = -4, s3 = -4, s4 = 0 }, r.raw)
        assert.are.same({ s1 = 0, s2 = 0, s3 = 0, s4 = 100 }, r.scores)
      end)

      it("truncates 100 * ((s - min) / (max - min)) computed in float64, in that order", function()
        -- affinity app=web (100) per hostname: a -> (hostname, s1) += 100, c -> (hostname, s3) += 100
        -- affinity app=db (29) per zone: b -> (zone, z2) += 29
        -- raw: s1 100, s2 0, s3 100 + 29 = 129, s4 0; min 0, max 129
        -- s1: 100 * (100/129) = 77.5 -> 77; s3: 100
        local r = scored(cluster, { affinity = affinity { preferred = {
          weighted(100, term({ app = "web" }, HOST)), weighted(29, term({ app = "db" }, ZONE)) } } })
        assert.are.same({ s1 = 100, s2 = 0, s3 = 129, s4 = 0 }, r.raw)
        assert.are.same({ s1 = 77, s2 = 0, s3 = 100, s4 = 0 }, r.scores)
      end)

      it("keeps float64's rounding: 100 * (29/100) is 28.999999999999996 -> 28", function()
        -- x1 (zone zx) has web, x2 (zone zy) has db, x3 (zone zz) nothing
        -- affinity app=web (100) and app=db (29) per zone: raw x1 100, x2 29, x3 0
        -- x2: 29/100 = 0.29 (float64), * 100 = 28.999999999999996 -> 28, not 29
        local c = T.cluster {
          nodes = { node("x1", "zx"), node("x2", "zy"), node("x3", "zz") },
          pods = {
            { name = "w", node_name = "x1", labels = { app = "web" } },
            { name = "d", node_name = "x2", labels = { app = "db" } },
          },
        }
        local r = scored(c, { affinity = affinity { preferred = {
          weighted(100, term({ app = "web" }, ZONE)), weighted(29, term({ app = "db" }, ZONE)) } } })
        c:close()
        assert.are.same({ x1 = 100, x2 = 29, x3 = 0 }, r.raw)
        assert.are.same({ x1 = 100, x2 = 28, x3 = 0 }, r.scores)
      end)

      it("gives 0 everywhere when all raw scores are equal", function()
        -- q1, q2 both in zone z1, web on q1: affinity app=web (5) per zone
        -- raw q1 5, q2 5: max == min -> 0, 0
        local c = T.cluster {
          nodes = { node("q1", "z1"), node("q2", "z1") },
          pods = { { name = "w", node_name = "q1", labels = { app = "web" } } },
        }
        local r = scored(c, { affinity = affinity { preferred = { weighted(5, term({ app = "web" }, ZONE)) } } })
        c:close()
        assert.are.same({ q1 = 5, q2 = 5 }, r.raw)
        assert.are.same({ q1 = 0, q2 = 0 }, r.scores)
      end)

      it("skips PreScore when no term counted anything", function()
        -- preferred affinity app=cache: no pod matches
        local r = scored(cluster, { affinity = affinity {
          preferred = { weighted(5, term({ app = "cache" }, ZONE)) } } })
        assert.are.equal(ls.SKIP, r.pre_score.code)
        assert.is_true(r.skipped_score)
        -- a matching pod on a node without the key counts nothing: s1..s4 have no "rack"
        r = scored(cluster, { affinity = affinity { preferred = { weighted(5, term({ app = "web" }, "rack")) } } })
        assert.are.equal(ls.SKIP, r.pre_score.code)
        -- a pod without terms, and no pod with affinity in the cluster
        r = scored(cluster, { labels = { app = "web" } })
        assert.are.equal(ls.SKIP, r.pre_score.code)
      end)

      it("skips PreScore without feasible nodes", function()
        local pod = T.pod { name = "p",
          affinity = affinity { preferred = { weighted(5, term({ app = "web" }, ZONE)) } } }
        cluster:attach(pod)
        assert.are.equal(ls.skip, plugin:pre_score({}, pod, nil, 0))
      end)
    end)

    describe("existing pods' terms", function()
      -- s1, s2 in z1; s3 in z2; s4 in z3.
      -- e (app=back) on s2: required affinity app=front per zone
      -- f on s4: preferred affinity app=front (10) per hostname
      -- g on s3: preferred anti-affinity app=front (4) per zone
      -- h on s1: required affinity app=solo per zone
      local cluster
      setup(function()
        cluster = T.cluster {
          nodes = { node("s1", "z1"), node("s2", "z1"), node("s3", "z2"), node("s4", "z3") },
          pods = {
            { name = "e", node_name = "s2", labels = { app = "back" },
              affinity = affinity { required = { term({ app = "front" }, ZONE) } } },
            { name = "f", node_name = "s4",
              affinity = affinity { preferred = { weighted(10, term({ app = "front" }, HOST)) } } },
            { name = "g", node_name = "s3",
              affinity = affinity { preferred_anti = { weighted(4, term({ app = "front" }, ZONE)) } } },
            { name = "h", node_name = "s1", affinity = affinity { required = { term({ app = "solo" }, ZONE) } } },
          },
        }
      end)
      teardown(function() cluster:close() end)

      it("counts hardPodAffinityWeight and existing preferred weights for a pod without terms", function()
        -- only pods with affinity are processed (e, f, g), all match app=front in default:
        -- e: (zone, z1) += 1 (hard weight); f: (hostname, s4) += 10; g: (zone, z2) -= 4
        -- raw s1 1, s2 1, s3 -4, s4 10; min -4, max 10, diff 14
        -- s1, s2: 100 * (5/14) = 35.7 -> 35; s3 0; s4 100
        local r = scored(cluster, { labels = { app = "front" } })
        assert.are.equal(ls.SKIP, r.pre_filter.code)
        assert.are.same({ s1 = 1, s2 = 1, s3 = -4, s4 = 10 }, r.raw)
        assert.are.same({ s1 = 35, s2 = 35, s3 = 0, s4 = 100 }, r.scores)
      end)

      it("uses hardPodAffinityWeight from the args; 0 disables it", function()
        -- weight 7: (zone, z1) += 7 -> raw s1 7, s2 7, s3 -4, s4 10; diff 14
        -- s1, s2: 100 * (11/14) = 78.57 -> 78; s3 0; s4 100
        local r = scored(cluster, { labels = { app = "front" } },
          T.plugin("InterPodAffinity", { hardPodAffinityWeight = 7 }))
        assert.are.same({ s1 = 7, s2 = 7, s3 = -4, s4 = 10 }, r.raw)
        assert.are.same({ s1 = 78, s2 = 78, s3 = 0, s4 = 100 }, r.scores)
        -- weight 0: raw s1 0, s2 0, s3 -4, s4 10; s1, s2: 100 * (4/14) = 28.57 -> 28
        r = scored(cluster, { labels = { app = "front" } }, T.plugin("InterPodAffinity", { hardPodAffinityWeight = 0 }))
        assert.are.same({ s1 = 0, s2 = 0, s3 = -4, s4 = 10 }, r.raw)
        assert.are.same({ s1 = 28, s2 = 28, s3 = 0, s4 = 100 }, r.scores)
      end)

      it("with hardPodAffinityWeight 0 counts nothing for required terms (Skip if nothing else)", function()
        -- p (app=solo) matches only h's required term: (zone, z1) += 1
        -- raw s1 1, s2 1, s3 0, s4 0 -> 100, 100, 0, 0
        local r = scored(cluster, { labels = { app = "solo" } })
        assert.are.same({ s1 = 1, s2 = 1, s3 = 0, s4 = 0 }, r.raw)
        assert.are.same({ s1 = 100, s2 = 100, s3 = 0, s4 = 0 }, r.scores)
        r = scored(cluster, { labels = { app = "solo" } }, T.plugin("InterPodAffinity", { hardPodAffinityWeight = 0 }))
        assert.are.equal(ls.SKIP, r.pre_score.code)
      end)

      it("matches existing terms only in their namespaces", function()
        -- e, f, g's terms default to namespace default; p is in "other": nothing -> Skip
        local r = scored(cluster, { namespace = "other", labels = { app = "front" } })
        assert.are.equal(ls.SKIP, r.pre_score.code)
      end)

      it("ignorePreferredTermsOfExistingPods skips a pod without preferred terms", function()
        local ignoring = T.plugin("InterPodAffinity", { ignorePreferredTermsOfExistingPods = true })
        local r = scored(cluster, { labels = { app = "front" } }, ignoring)
        assert.are.equal(ls.SKIP, r.pre_score.code)
        -- with a preferred term the existing pods' terms still count, over all pods:
        -- p's affinity app=back (2) per hostname: e -> (hostname, s2) += 2
        -- raw s1 1, s2 1 + 2 = 3, s3 -4, s4 10; diff 14
        -- s1: 100 * (5/14) -> 35; s2: 100 * (7/14) = 50; s3 0; s4 100
        r = scored(cluster, { labels = { app = "front" },
          affinity = affinity { preferred = { weighted(2, term({ app = "back" }, HOST)) } } }, ignoring)
        assert.are.same({ s1 = 1, s2 = 3, s3 = -4, s4 = 10 }, r.raw)
        assert.are.same({ s1 = 35, s2 = 50, s3 = 0, s4 = 100 }, r.scores)
      end)
    end)
  end)
end)

-- ---- end to end: Namespace objects ----------------------------------------------
-- The namespaceSelector cases through the whole runtime: `luasched simulate`
-- (LUASCHED_BIN) loads Namespaces alpha (team=a) and beta (team=b) from the
-- cluster file and schedules with the built-in default profile
-- (InterPodAffinity enabled, Score weight 2), JIT-compiled dispatch loops.
local CLUSTER = [=[
apiVersion: v1
kind: Namespace
metadata: {name: alpha, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: beta, labels: {team: b}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: z1, kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {zone: z2, kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-3, labels: {zone: z3, kubernetes.io/hostname: node-3}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: cache, namespace: alpha, uid: u-cache-a, labels: {app: cache}}
spec: {nodeName: node-1, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: cache, namespace: beta, uid: u-cache-b, labels: {app: cache}}
spec: {nodeName: node-2, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: fence, namespace: beta, uid: u-fence}
spec:
  nodeName: node-3
  containers: [{name: c, image: pause}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: intruder}}
        namespaceSelector: {matchLabels: {team: a}}
        topologyKey: zone
---
apiVersion: v1
kind: Pod
metadata: {name: follow-team-a, namespace: default, uid: u-follow-a}
spec:
  containers: [{name: c, image: pause}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: cache}}
        namespaceSelector: {matchLabels: {team: a}}
        topologyKey: zone
---
apiVersion: v1
kind: Pod
metadata: {name: follow-team-c, namespace: default, uid: u-follow-c}
spec:
  containers: [{name: c, image: pause}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: cache}}
        namespaceSelector: {matchLabels: {team: c}}
        topologyKey: zone
---
apiVersion: v1
kind: Pod
metadata: {name: intruder, namespace: alpha, uid: u-intruder-a, labels: {app: intruder}}
spec: {containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: intruder, namespace: beta, uid: u-intruder-b, labels: {app: intruder}}
spec: {containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: magnet, namespace: beta, uid: u-magnet}
spec:
  nodeName: node-3
  containers: [{name: c, image: pause}]
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector: {matchLabels: {app: visitor}}
          namespaceSelector: {matchLabels: {team: a}}
          topologyKey: zone
---
apiVersion: v1
kind: Pod
metadata: {name: visitor, namespace: alpha, uid: u-visitor-a, labels: {app: visitor}}
spec: {containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: visitor, namespace: beta, uid: u-visitor-b, labels: {app: visitor}}
spec: {containers: [{name: c, image: pause}]}
]=]

describe("InterPodAffinity end to end (luasched simulate, Namespace labels)", function()
  local json = require("dkjson")
  local pods = {}

  setup(function()
    local sim = require("sim_helper")
    local path = sim.write(os.tmpname(), CLUSTER)
    local out = sim.run({ "simulate", path, "--output", "json" }).out
    os.remove(path)
    local doc = assert(json.decode(out), "simulate --output json gave no JSON: " .. out)
    for _, rec in ipairs(doc.pods) do pods[rec.namespace .. "/" .. rec.name] = rec end
  end)

  it("unrolls the incoming pod's namespaceSelector into the matching Namespaces", function()
    -- follow-team-a: app=cache in namespaces with team=a -> alpha/cache on node-1 (z1)
    local r = pods["default/follow-team-a"]
    assert.are.equal("node-1", r.node)
    assert.are.equal("node(s) didn't match pod affinity rules", r.filter["node-2"].InterPodAffinity)
    assert.are.equal("node(s) didn't match pod affinity rules", r.filter["node-3"].InterPodAffinity)
    -- follow-team-c: no Namespace has team=c -> nothing matches, and the pod
    -- (no labels) does not match its own term
    r = pods["default/follow-team-c"]
    assert.is_nil(r.node)   -- JSON null
    -- InterPodAffinity's rejection is Unresolvable: no node is a preemption candidate
    assert.are.equal("0/3 nodes are available: 3 node(s) didn't match pod affinity rules. " ..
      "no new claims to deallocate, preemption: " ..
      "0/3 nodes are available: 3 Preemption is not helpful for scheduling.", r.message)
  end)

  it("matches an existing pod's namespaceSelector against the incoming pod's Namespace labels", function()
    -- fence (beta, node-3, z3) rejects app=intruder from namespaces with team=a
    local r = pods["alpha/intruder"]
    assert.are.equal("node(s) didn't satisfy existing pods anti-affinity rules", r.filter["node-3"].InterPodAffinity)
    assert.are_not.equal("node-3", r.node)
    -- beta/intruder: beta has team=b, fence does not match it and it has no
    -- terms -> PreFilter Skip: its Filter does not run (no verdict recorded)
    r = pods["beta/intruder"]
    assert.are.equal("passed", r.filter["node-3"].NodeResourcesFit)
    assert.is_nil(r.filter["node-3"].InterPodAffinity)
  end)

  it("scores an existing pod's preferred term for a pod of a selected Namespace only", function()
    -- magnet (beta, node-3, z3) prefers app=visitor from team=a, weight 50:
    -- alpha/visitor: (zone, z3) += 50 -> raw node-3 50, others 0
    -- normalized: node-3 100 * (50/50) = 100, others 0; weighted by 2 -> 200
    local r = pods["alpha/visitor"]
    assert.are.equal(50, r.score["node-3"].InterPodAffinity)
    assert.are.equal(0, r.score["node-1"].InterPodAffinity)
    assert.are.equal(200, r.finalScore["node-3"].InterPodAffinity)
    assert.are.equal(0, r.finalScore["node-1"].InterPodAffinity)
    assert.are.equal("node-3", r.node)
    -- beta/visitor: beta has team=b, nothing counted -> PreScore Skip (no score entry)
    assert.is_nil(pods["beta/visitor"].score["node-3"].InterPodAffinity)
  end)
end)
