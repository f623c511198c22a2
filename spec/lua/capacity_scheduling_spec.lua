-- CapacityScheduling (plugins/policies/capacity_scheduling.lua) through the
-- plugin kit: args, PreFilter's two checks and messages (scheduler-plugins
-- pkg/capacityscheduling PreFilter: "Pod ns/name is rejected in PreFilter
-- because ElasticQuota ns is more than Max" / "... because total ElasticQuota
-- used is more than min"), quantities, Reserve/Unreserve accounting, the
-- PreFilter extensions on the cycle's copy, events and hints. Preemption runs
-- end to end in spec/scenarios/capacity_scheduling-*.yaml. Every expected value
-- is worked out by hand from upstream's rules in the comments.
local T = require("luasched.testing")
local ls = require("luasched")

local function quota(ns, min, max)
  return { apiVersion = "scheduling.x-k8s.io/v1alpha1", kind = "ElasticQuota",
    metadata = { name = ns, namespace = ns }, spec = { min = min, max = max } }
end

local MAX_MSG = "Pod %s/%s is rejected in PreFilter because ElasticQuota %s is more than Max"
local MIN_MSG = "Pod %s/%s is rejected in PreFilter because total ElasticQuota used is more than min"

describe("CapacityScheduling", function()
  describe("args", function()
    it("defaults to no ignored resource", function()
      local p = T.plugin("CapacityScheduling")
      assert.are.same({}, p.args.ignoredResources)
    end)
    it("refuses an ignored resource that is not a name, with its index", function()
      local ok, err = pcall(T.plugin, "CapacityScheduling", { ignoredResources = { "memory", "" } })
      assert.is_false(ok)
      assert.are.equal("ignoredResources[1]: Invalid value: : must be a resource name", err)
    end)
  end)

  describe("PreFilter", function()
    local cluster, plugin
    -- a: min cpu 2, max cpu 4, used 3 (a-run 3 cpu on n1);
    -- b: min cpu 3 and example.com/gpu 1, no max, used 0;
    -- sum(min) cpu 5; sum(used) cpu 3.
    before_each(function()
      cluster = T.cluster {
        nodes = { { name = "n1", allocatable = { cpu = "16", memory = "32Gi", ["example.com/gpu"] = "4" } } },
        pods = {
          { name = "a-run", namespace = "a", node_name = "n1", requests = { cpu = "3" } },
          { name = "free-run", namespace = "free", node_name = "n1", requests = { cpu = "8" } },
        },
        objects = {
          quota("a", { cpu = "2" }, { cpu = "4" }),
          quota("b", { cpu = "3", ["example.com/gpu"] = "1" }, nil),
        },
      }
      plugin = T.plugin("CapacityScheduling")
    end)
    after_each(function() cluster:close() end)

    local function pre(name, ns, requests)
      return T.pre_filter(plugin, cluster, T.pod { name = name, namespace = ns, requests = requests }, {})
    end

    it("lets a pod within max and within the sum of min through", function()
      -- a: 3 + 1 = 4 <= max 4; sum 3 + 1 = 4 <= 5
      assert.are.equal(ls.SUCCESS, pre("p", "a", { cpu = "1" }).code)
    end)
    it("rejects used + request over max (500m more than max 4)", function()
      -- a: 3000m + 1500m = 4500m > 4000m
      local r = pre("p", "a", { cpu = "1500m" })
      assert.are.equal(ls.UNSCHEDULABLE, r.code)
      assert.are.equal(MAX_MSG:format("a", "p", "a"), r.message)
    end)
    it("rejects sum(used) + request over sum(min) though the quota's max allows it", function()
      -- b: 0 + 3 <= unlimited; sum 3 + 3 = 6 > 5
      local r = pre("p", "b", { cpu = "3" })
      assert.are.equal(ls.UNSCHEDULABLE, r.code)
      assert.are.equal(MIN_MSG:format("b", "p"), r.message)
      -- 2 cpu: 3 + 2 = 5, not more than 5
      assert.are.equal(ls.SUCCESS, pre("q", "b", { cpu = "2" }).code)
    end)
    it("does not count pods of namespaces without a quota, nor limit them", function()
      -- free-run's 8 cpu are not in sum(used); a pod of "free" is not checked
      assert.are.equal(ls.SUCCESS, pre("p", "free", { cpu = "12" }).code)
    end)
    it("compares memory against a min that does not name it as 0 (upstream) unless ignored", function()
      -- sum(min).memory = 0 < 1Gi
      local r = pre("p", "b", { cpu = "1", memory = "1Gi" })
      assert.are.equal(MIN_MSG:format("b", "p"), r.message)
      plugin = T.plugin("CapacityScheduling", { ignoredResources = { "memory" } })
      assert.are.equal(ls.SUCCESS, pre("p", "b", { cpu = "1", memory = "1Gi" }).code)
    end)
    it("compares an extended resource the request has against the sum of min", function()
      -- gpu: sum(used) 0 + 1 <= sum(min) 1; 2 > 1
      assert.are.equal(ls.SUCCESS, pre("p", "b", { ["example.com/gpu"] = "1" }).code)
      assert.are.equal(MIN_MSG:format("b", "q"), pre("q", "b", { ["example.com/gpu"] = "2" }).message)
    end)
    it("fails the pods of a namespace whose quota has a malformed quantity, naming the field", function()
      cluster:add_object(quota("bad", { cpu = "two" }, nil))
      local r = pre("p", "bad", { cpu = "1" })
      assert.are.equal(ls.ERROR, r.code)
      assert.are.equal('ElasticQuota bad/bad: spec.min.cpu: invalid quantity "two"', r.message)
    end)

    it("counts a reserved pod once until Unreserve", function()
      -- r1 (1 cpu) reserved: a used 4; another 1 cpu pod: 4 + 1 > 4
      local r1 = T.pod { name = "r1", namespace = "a", requests = { cpu = "1" } }
      assert.are.equal(ls.SUCCESS, T.pre_filter(plugin, cluster, r1, {}).code)
      T.node_hook(plugin, "reserve", cluster, r1, "n1")
      T.node_hook(plugin, "reserve", cluster, r1, "n1")   -- again: no second count
      assert.are.equal(MAX_MSG:format("a", "p", "a"), pre("p", "a", { cpu = "1" }).message)
      -- 500m would be 4 + 0.5 > 4 as well; after Unreserve 3 + 1 = 4 fits
      T.node_hook(plugin, "unreserve", cluster, r1, "n1")
      assert.are.equal(ls.SUCCESS, pre("p", "a", { cpu = "1" }).code)
    end)

    it("RemovePod / AddPod change only the cycle's copy of the usage", function()
      local pod = T.pod { name = "p", namespace = "a", requests = { cpu = "2" } }
      local state = {}
      -- 3 + 2 = 5 > 4
      assert.are.equal(MAX_MSG:format("a", "p", "a"), T.pre_filter(plugin, cluster, pod, state).message)
      local victim = cluster:node_info("n1").pods[0]
      if ls.str(victim.name) ~= "a-run" then victim = cluster:node_info("n1").pods[1] end
      local copy = plugin:clone_state(state[plugin.name])
      local st = { [plugin.name] = copy }
      plugin:remove_pod(st, pod, victim)
      local a = tonumber(victim.ns)
      assert.are.equal(0, copy.own[a][0])                          -- 3000m - 3000m
      assert.is_nil(state[plugin.name].own[a])                     -- the cycle's state untouched
      plugin:add_pod(st, pod, victim)
      assert.are.equal(3000, copy.own[a][0])
    end)
  end)

  describe("events", function()
    it("registers assigned pod deletions and ElasticQuota changes", function()
      local p = T.plugin("CapacityScheduling")
      assert.are.same({
        "AssignedPod:Delete",
        "elasticquotas.v1alpha1.scheduling.x-k8s.io:All",
      }, T.events(p))
    end)
    it("queues on a deletion in a namespace with a quota, skips other namespaces", function()
      local cluster = T.cluster {
        nodes = { { name = "n1", allocatable = { cpu = "4", memory = "8Gi" } } },
        objects = { quota("a", { cpu = "2" }, nil) },
      }
      local p = T.plugin("CapacityScheduling")
      local pending = T.pod { name = "w", namespace = "a", requests = { cpu = "1" } }
      T.pre_filter(p, cluster, pending, {})   -- reads the quotas
      local in_a = T.pod { name = "x", namespace = "a", node_name = "n1", requests = { cpu = "1" } }
      local elsewhere = T.pod { name = "y", namespace = "other", node_name = "n1", requests = { cpu = "1" } }
      assert.are.equal(ls.QUEUE, T.hint(p, "AssignedPod", "Delete", pending, in_a, nil))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Delete", pending, elsewhere, nil))
      cluster:close()
    end)
  end)
end)
