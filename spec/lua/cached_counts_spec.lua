-- PodTopologySpread and InterPodAffinity keep per-node counts between cycles
-- (refreshed from the nodes whose NodeInfo changed). Whatever the cluster went
-- through, a long-lived instance must give exactly what a fresh instance
-- (which counts everything from scratch) gives: here after every step of a
-- seeded random sequence of pod and node additions and removals, for incoming
-- pods that use every cached path.
local T = require("luasched.testing")
local ls = require("luasched")
local ffi = require("ffi")
local C = require("luasched.clib")

local HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
local COLORS = { "red", "blue", "green" }
local NAMESPACES = { "default", "other" }

local function sel(color) return { matchLabels = { color = color } } end

local function term(key, color)
  return { labelSelector = sel(color), topologyKey = key }
end

-- Incoming pods: spreading (DoNotSchedule, ScheduleAnyway, system defaults
-- through a Service), required and preferred (anti-)affinity.
local function incoming()
  return {
    T.pod(T.pod_object({ name = "in-spread", labels = { color = "red" }, spec = {
      topologySpreadConstraints = {
        { maxSkew = 1, topologyKey = ZONE, whenUnsatisfiable = "DoNotSchedule", labelSelector = sel("red") },
        { maxSkew = 2, topologyKey = HOST, whenUnsatisfiable = "DoNotSchedule", labelSelector = sel("red") },
      } } })),
    T.pod(T.pod_object({ name = "in-soft", labels = { color = "blue" }, spec = {
      topologySpreadConstraints = {
        { maxSkew = 1, topologyKey = ZONE, whenUnsatisfiable = "ScheduleAnyway", labelSelector = sel("blue") },
        { maxSkew = 1, topologyKey = HOST, whenUnsatisfiable = "ScheduleAnyway", labelSelector = sel("red") },
      } } })),
    T.pod(T.pod_object({ name = "in-default", labels = { app = "web", color = "green" } })),
    T.pod(T.pod_object({ name = "in-affinity", labels = { color = "blue" }, affinity = {
      podAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { term(ZONE, "blue") } },
      podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { term(HOST, "green") } },
    } })),
    T.pod(T.pod_object({ name = "in-preferred", namespace = "other", labels = { color = "red" }, affinity = {
      podAffinity = { preferredDuringSchedulingIgnoredDuringExecution = {
        { weight = 3, podAffinityTerm = term(ZONE, "red") } } },
      podAntiAffinity = { preferredDuringSchedulingIgnoredDuringExecution = {
        { weight = 5, podAffinityTerm = term(HOST, "blue") } } },
    } })),
  }
end

-- An existing pod; some carry required anti-affinity or affinity terms of their own.
local function existing_pod(rng, name, node)
  local color = COLORS[rng(#COLORS)]
  local labels = { color = color }
  if rng(3) == 1 then labels.app = "web" end
  local affinity
  local k = rng(6)
  if k == 1 then
    affinity = { podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { term(HOST, "red") } } }
  elseif k == 2 then
    affinity = { podAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { term(ZONE, color) } } }
  elseif k == 3 then
    affinity = { podAntiAffinity = { preferredDuringSchedulingIgnoredDuringExecution = {
      { weight = 7, podAffinityTerm = term(ZONE, "red") } } } }
  end
  return T.pod(T.pod_object({ name = name, node_name = node, namespace = NAMESPACES[rng(2)], labels = labels,
                              affinity = affinity }))
end

local function node_desc(i)
  local name = string.format("n%02d", i)
  local labels = { [HOST] = name }
  if i % 5 ~= 0 then labels[ZONE] = "z" .. (i % 3) end
  return { name = name, labels = labels }
end

-- A cycle's outcome as plain data, to compare.
local function outcome(r)
  local out = { pre_filter = r.pre_filter and r.pre_filter.code, pre_score = r.pre_score and r.pre_score.code,
                filter = {}, raw = r.raw, scores = r.scores }
  for name, res in pairs(r.filter) do out.filter[name] = res.code .. " " .. res.message end
  return out
end

describe("counts kept between cycles", function()
  for _, name in ipairs({ "PodTopologySpread", "InterPodAffinity" }) do
    it(name .. " matches a fresh instance after every change", function()
      local rng_state = 12345
      local function rng(n)   -- a small LCG: the same sequence on every run
        rng_state = (rng_state * 1103515245 + 12345) % 2147483648
        return rng_state % n + 1
      end
      local cluster = T.cluster {
        objects = { { apiVersion = "v1", kind = "Service", metadata = { name = "web", namespace = "default" },
                      spec = { selector = { app = "web" } } },
                    { apiVersion = "v1", kind = "Namespace", metadata = { name = "other" } } },
      }
      local nodes, pods, num_nodes = {}, {}, 0
      for _ = 1, 6 do
        num_nodes = num_nodes + 1
        nodes[#nodes + 1] = cluster:add_node(node_desc(num_nodes))
      end
      local cached = T.plugin(name)
      local err = ffi.new("ls_error")
      local pods_in = incoming()
      for step = 1, 60 do
        local op = rng(10)
        if op <= 6 or #pods == 0 then
          local node = nodes[rng(#nodes)]
          pods[#pods + 1] = cluster:add_pod(existing_pod(rng, "p" .. step, ls.str(node.name)))
        elseif op <= 8 then
          local i = rng(#pods)
          assert.is_true(C.ls_cache_remove_pod(cluster.res.cache, pods[i], err))
          table.remove(pods, i)
          cluster:refresh()
        elseif op == 9 then
          num_nodes = num_nodes + 1
          nodes[#nodes + 1] = cluster:add_node(node_desc(num_nodes))
        else
          -- remove a node without pods (if any)
          for i, node in ipairs(nodes) do
            if C.ls_cache_node_info(cluster.res.cache, node.name).num_pods == 0 and #nodes > 2 then
              C.ls_cache_remove_node(cluster.res.cache, node)
              table.remove(nodes, i)
              cluster:refresh()
              break
            end
          end
        end
        for _, pod in ipairs(pods_in) do
          local got = outcome(T.cycle(cached, cluster, pod))
          local want = outcome(T.cycle(T.plugin(name), cluster, pod))
          assert.are.same(want, got, string.format("step %d, pod %s", step, ls.str(pod.name)))
        end
      end
      cluster:close()
    end)
  end
end)
