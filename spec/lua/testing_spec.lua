-- luasched.testing, the plugin author's kit: objects, clusters, plugins, cycles.
local T = require("luasched.testing")
local ls = require("luasched")

describe("luasched.testing", function()
  describe("json", function()
    it("encodes objects with sorted keys, arrays and scalars", function()
      assert.are.equal('{"a":1,"b":[true,false,"x"],"c":{"d":null}}',
        T.json { c = { d = T.null }, b = { true, false, "x" }, a = 1 })
    end)

    it("encodes integers without exponent and other numbers exactly", function()
      assert.are.equal("[0,-3,9007199254740991,0.5]", T.json { 0, -3, 2 ^ 53 - 1, 0.5 })
    end)

    it("encodes empty tables as objects unless marked as arrays", function()
      assert.are.equal('{"a":{},"b":[]}', T.json { a = {}, b = T.array() })
    end)

    it("escapes strings", function()
      assert.are.equal('"q\\"b\\\\n\\n\\u0001"', T.json('q"b\\n\n\1'))
    end)

    it("rejects tables that are neither arrays nor string-keyed objects", function()
      assert.has_error(function() T.json { 1, 2, x = 3 } end)
      assert.has_error(function() T.json { [true] = 1 } end)
    end)
  end)

  describe("pods and nodes", function()
    it("builds a pod from the shorthand", function()
      local pod = T.pod { name = "web", namespace = "shop", labels = { app = "web" }, priority = 7,
        requests = { cpu = "250m", memory = "64Mi" }, node_name = "n1",
        tolerations = { { key = "k", operator = "Exists" } } }
      assert.are.equal("web", ls.str(pod.name))
      assert.are.equal("shop", ls.str(pod.ns))
      assert.are.equal("n1", ls.str(pod.node_name))
      assert.are.equal(7, pod.priority)
      assert.are.equal(1, pod.has_priority)
      assert.are.equal(250, tonumber(pod.requests.milli_cpu))
      assert.are.equal(64 * 2 ^ 20, tonumber(pod.requests.memory))
      assert.are.equal(1, pod.n_tolerations)
      assert.are.equal("web", ls.str(ls.label(pod.labels, ls.intern("app"))))
    end)

    it("gives a container without requests the non-zero defaults", function()
      local pod = T.pod { name = "be", containers = { false, { cpu = "1" } } }
      assert.are.equal(1000, tonumber(pod.requests.milli_cpu))
      -- 100m for the container without a cpu request + 1000m
      assert.are.equal(1100, tonumber(pod.nonzero_milli_cpu))
      -- 200Mi for each container without a memory request
      assert.are.equal(2 * 209715200, tonumber(pod.nonzero_memory))
    end)

    it("sets the arrival sequence number", function()
      assert.are.equal(42, tonumber(T.pod({ name = "s", seq = 42 }).seq))
    end)

    it("builds a pod from YAML text and from a full object", function()
      local pod = T.pod [[
apiVersion: v1
kind: Pod
metadata: {name: from-yaml, namespace: default, uid: u-1}
spec:
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "2"}}
]]
      assert.are.equal("from-yaml", ls.str(pod.name))
      assert.are.equal(2000, tonumber(pod.requests.milli_cpu))
      local full = T.pod { apiVersion = "v1", kind = "Pod",
        metadata = { name = "full", namespace = "default", uid = "u-2" },
        spec = { containers = { { name = "c", image = "busybox" } } } }
      assert.are.equal("full", ls.str(full.name))
      assert.are.equal(1, full.requests_nothing)
    end)

    it("raises the decoder's error for bad input", function()
      local ok, err = pcall(T.pod, "{ not: [valid")
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("T.pod: ", 1, true))
      assert.has_error(function() T.pod(42) end)
    end)

    it("builds a node from the shorthand, with 110 pods allowed by default", function()
      local node = T.node { name = "n", allocatable = { cpu = "2", memory = "1Gi" }, unschedulable = true,
        taints = { { key = "k", value = "v", effect = "NoSchedule" } }, labels = { zone = "a" } }
      assert.are.equal("n", ls.str(node.name))
      assert.are.equal(2000, tonumber(node.allocatable.milli_cpu))
      assert.are.equal(110, tonumber(node.allocatable.pods))
      assert.are.equal(2000, tonumber(node.capacity.milli_cpu))
      assert.are.equal(1, node.unschedulable)
      assert.are.equal(1, node.n_taints)
      assert.are.equal("k", ls.str(node.taints[0].key))
      assert.are.equal(ls.EFFECT_NO_SCHEDULE, node.taints[0].effect)
      assert.are.equal("a", ls.str(ls.label(node.labels, ls.intern("zone"))))
    end)
  end)

  describe("cluster", function()
    local cluster
    before_each(function()
      cluster = T.cluster {
        nodes = { { name = "n1", allocatable = { cpu = "4", memory = "4Gi" } }, T.node { name = "n2" } },
        pods = {
          { name = "a", node_name = "n1", requests = { cpu = "1", memory = "1Gi" } },
          { name = "b", node_name = "n1" },
        },
      }
    end)
    after_each(function() cluster:close() end)

    it("keeps requested and non-zero requested sums in the NodeInfos", function()
      local ni = cluster:node_info("n1")
      assert.are.equal(2, ni.num_pods)
      assert.are.equal(1000, tonumber(ni.requested.milli_cpu))
      assert.are.equal(1100, tonumber(ni.nonzero_milli_cpu))                    -- b counts 100m
      assert.are.equal(2 ^ 30 + 209715200, tonumber(ni.nonzero_memory))         -- b counts 200Mi
      assert.are.equal(4000, tonumber(ni.allocatable.milli_cpu))
      assert.are.equal(0, cluster:node_info("n2").num_pods)
    end)

    it("lists the snapshot's nodes", function()
      assert.are.equal(2, cluster.num_nodes)
      local names = { cluster.names[1], cluster.names[2] }
      table.sort(names)
      assert.are.same({ "n1", "n2" }, names)
      assert.has_error(function() cluster:node_info("nope") end)
    end)

    it("adds pods and refreshes the snapshot", function()
      cluster:add_pod { name = "c", node_name = "n2", requests = { cpu = "3" } }
      cluster:add_pod(T.pod { name = "d", node_name = "n2", requests = { cpu = "1" } })
      assert.are.equal(4000, tonumber(cluster:node_info("n2").requested.milli_cpu))
      assert.are.equal(2, cluster:node_info("n2").num_pods)
      assert.has_error(function() cluster:add_pod { name = "pending" } end)
    end)

    it("attaches a cycle so ls.all_nodes sees the snapshot", function()
      local pod = T.pod { name = "p" }
      local cycle = cluster:attach(pod)
      assert.are.equal(pod, cycle.pod)
      local nodes, n = ls.all_nodes()
      assert.are.equal(2, n)
      assert.are.equal(cluster.node_infos[1], nodes[0])
    end)

    it("can be closed twice", function()
      cluster:close()
      cluster:close()
      ls._allow_bind(true)   -- as inside a Bind hook
      assert.are.equal("no scheduling cycle is running", ls.bind("n1"))
      ls._allow_bind(false)
    end)
  end)

  describe("plugins and cycles", function()
    local cluster
    setup(function()
      cluster = T.cluster { nodes = { { name = "a" }, { name = "b" }, { name = "c" } } }
    end)
    teardown(function() cluster:close() end)

    it("loads a plugin by name, merges args over its defaults and runs init", function()
      local p = T.plugin("NodeResourcesFit", { ignoredResources = { "x.io/y" } })
      assert.are.equal("NodeResourcesFit", p.name)
      assert.are.same({ "x.io/y" }, p.args.ignoredResources)
      assert.are.equal("LeastAllocated", p.args.scoringStrategy.type)
      assert.is_true(p.ignored["x.io/y"])      -- set by init
    end)

    it("names the missing file when a plugin does not exist", function()
      local ok, err = pcall(T.plugin, "NoSuchThing")
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("no_such_thing.lua", 1, true))
    end)

    local function probe(hooks)
      local P = ls.plugin("Probe", { defaults = { bonus = 1 } })
      for k, v in pairs(hooks) do P[k] = v end
      return T.plugin(P, { bonus = 5 })
    end

    it("runs a whole cycle: filter, score, normalize_score", function()
      local calls = {}
      local p = probe {
        filter = function(_, _, _, ni)
          calls[#calls + 1] = ls.str(ni.node.name)
          if ls.str(ni.node.name) == "b" then return ls.unschedulable("no b") end
        end,
        score = function(self, _, _, ni) return (ls.str(ni.node.name) == "a" and 10 or 30) + self.args.bonus end,
        normalize_score = function(_, _, _, scores, _, n)
          for i = 0, n - 1 do scores[i] = scores[i] * 2 end
        end,
      }
      local r = T.cycle(p, cluster, T.pod { name = "p" })
      table.sort(calls)
      assert.are.same({ "a", "b", "c" }, calls)
      assert.are.equal("no b", r.filter.b.message)
      assert.are.equal(ls.UNSCHEDULABLE, r.filter.b.code)
      assert.are.equal(ls.SUCCESS, r.filter.a.code)
      assert.are.same({ a = 15, c = 35 }, r.raw)
      assert.are.same({ a = 30, c = 70 }, r.scores)
    end)

    it("restricts Filter to PreFilter's node names", function()
      local p = probe {
        pre_filter = function() return nil, { "c", "a" } end,
        filter = function() return nil end,
      }
      local r = T.cycle(p, cluster, T.pod { name = "p" })
      assert.are.same({ "c", "a" }, r.pre_filter_nodes)
      assert.is_nil(r.filter.b)
      local f = {}
      for _, n in ipairs(r.feasible) do f[#f + 1] = n end
      table.sort(f)
      assert.are.same({ "a", "c" }, f)
    end)

    it("skips Filter after a PreFilter Skip and Score after a PreScore Skip", function()
      local p = probe {
        pre_filter = function() return ls.skip end,
        filter = function() error("filter must not run") end,
        pre_score = function() return ls.skip end,
        score = function() error("score must not run") end,
      }
      local r = T.cycle(p, cluster, T.pod { name = "p" })
      assert.are.equal(3, #r.feasible)
      assert.is_true(r.skipped_score)
      assert.are.same({ a = 0, b = 0, c = 0 }, r.scores)
    end)

    it("ends the cycle on a PreFilter rejection", function()
      local p = probe {
        pre_filter = function() return ls.unresolvable("nope") end,
        filter = function() error("filter must not run") end,
      }
      local r = T.cycle(p, cluster, T.pod { name = "p" })
      assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.pre_filter.code)
      assert.are.equal("nope", r.pre_filter.message)
      assert.are.same({}, r.feasible)
    end)

    it("gives the same state table to every hook of the cycle", function()
      local seen = {}
      local p = probe {
        pre_filter = function(_, state) state.mark = true end,
        filter = function(_, state) seen[#seen + 1] = state.mark end,
        score = function(_, state) return state.mark and 1 or 0 end,
      }
      local r = T.cycle(p, cluster, T.pod { name = "p" })
      assert.are.same({ true, true, true }, seen)
      assert.are.same({ a = 1, b = 1, c = 1 }, r.scores)
      assert.is_true(r.state.mark)
    end)

    it("rejects hooks that return something other than a status", function()
      local p = probe { filter = function() return "bad" end }
      assert.has_error(function() T.cycle(p, cluster, T.pod { name = "p" }) end)
      assert.has_error(function() T.filter(p, cluster, T.pod { name = "p" }, "a") end)
      local s = probe { score = function() return "high" end }
      assert.has_error(function() T.score(s, cluster, T.pod { name = "p" }, "a") end)
    end)

    it("runs node-name hooks with the cycle's selected node", function()
      local got
      local p = probe { reserve = function(_, _, pod, node) got = ls.str(pod.name) .. "@" .. node end }
      local r = T.node_hook(p, "reserve", cluster, T.pod { name = "p" }, "b")
      assert.are.equal(ls.SUCCESS, r.code)
      assert.are.equal("p@b", got)
    end)

    it("describes statuses as plain tables", function()
      assert.are.same({ code = 0, code_name = "Success", message = "", reasons = {} }, T.result(nil))
      local st = ls.unschedulable("x", "y")
      local r = T.result(st)
      assert.are.equal("x, y", r.message)
      assert.are.same({ "x", "y" }, r.reasons)
      assert.are.equal(st, r.status)
    end)
  end)
end)
