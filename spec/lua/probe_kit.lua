-- The red-team specs' harness (spec/security/). Two levels:
--
-- A bench: a scratch plugin folder and runs of the real `luasched simulate`
-- (or `check`) under a time limit, over configuration text the spec writes.
--
--   local bench = require("probe_kit").bench(CLUSTER)
--   setup(bench.open); teardown(bench.close)     -- in a describe (busted's globals are the spec's)
--   bench.probe("function P.filter(...) ... end")  -- Probe's hooks from line 4 (after HEAD)
--   local r = bench.run(config_text, { limit = 60 })
--   kit.expect_error(r, 'running "Probe" filter plugin: ' .. bench.file_of("probe") .. ":5: x")
--
-- A kit (a bench of its own): a two-node cluster with a
-- probe pod "a" (labelled probe=yes) and a plain pod "b", a plugin "Probe"
-- whose hook acts on the probe pod only, and a run over a configuration it
-- writes.
--
--   local kit = require("probe_kit").new()      -- in setup()
--   kit.probe("filter", [[  error("x")]])       -- the hook's body: line 7 of the file
--   local r = kit.simulate({ profile = "  luasched: {pluginTimeoutMilliseconds: 300}\n" })
--   kit.expect_error(r, 'running "Probe" filter plugin: ' .. kit.FILE .. ":7: x")
--   kit.remove()                                 -- in teardown()
local sim = require("sim_helper")
local assert = require("luassert")

local M = {}

--- Two nodes of 4 CPUs, labelled with their hostname.
M.NODES = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
]]

--- The probe pod a (labelled probe=yes) and the plain pod b, 100m of CPU each.
M.PROBE_PODS = [[
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}
]]

--- NODES, a pod running on node-1, then PROBE_PODS.
M.CLUSTER = M.NODES .. [[
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec: {nodeName: node-1, containers: [{name: c, image: app}]}
]] .. M.PROBE_PODS

--- One node of one CPU taken by a priority-0 pod `low`; the probe pod a
--- (priority 100) needs that CPU: DefaultPreemption evicts `low` (its dry run
--- runs the other plugins: Filter, RemovePod) and nominates a to node-1,
--- whose next attempt tries that node first (upstream's evaluateNominatedNode).
M.PREEMPTING = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec: {nodeName: node-1, priority: 0, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {priority: 100, containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
]]

--- node-1 with `cpu` CPUs and the probe pod a; a Timeline creates node-2
--- (`cpu` CPUs too) at 10s, the event a queueing hint hears.
function M.node2_at_10s(cpu)
  return ([[
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "%s", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app}]}
---
apiVersion: luasched.io/v1alpha1
kind: Timeline
steps:
- at: 10s
  create: {apiVersion: v1, kind: Node, metadata: {name: node-2}, status: {allocatable: {cpu: "%s", pods: "110"}}}
]]):format(cpu, cpu)
end

--- The first lines of plugin "Probe" (probe.lua): the require, the
--- declaration and the probe label's ids (lines 1-3).
M.HEAD = [[
local ls = require("luasched")
local P = ls.plugin("Probe")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
]]

--- `s` as a Lua pattern that matches it to the letter.
function M.plain(s) return (s:gsub("%p", "%%%0")) end

--- The run went on: status 0, the plain pod b bound, the probe pod a pending
--- with exactly `message`.
function M.expect_error(r, message)
  assert.are.equal(0, r.rc, r.err .. r.out)
  assert.matches("^bound to node%-[12]$", r.pods.b)
  assert.are.equal("pending: " .. message, r.pods.a)
end

--- A bench over `cluster` (YAML text): its scratch folder is made by open()
--- and removed by close(); b.dir is that folder.
function M.bench(cluster)
  local b = { runs = 0 }

  function b.open()
    sim.bin()
    b.dir = sim.scratch("plugins")
    return b.dir
  end

  function b.close() sim.remove(b.dir) end

  --- The path of plugin `name` (snake_case) in the plugin folder.
  function b.file_of(name) return b.dir .. "/plugins/" .. name .. ".lua" end

  --- Writes plugin `name` with `source`; returns its path.
  function b.write_plugin(name, source) return sim.write(b.file_of(name), source) end

  --- Plugin "Probe": M.HEAD, then `hooks` from line 4.
  function b.probe(hooks) return b.write_plugin("probe", M.HEAD .. hooks .. "\nreturn P\n") end

  --- Runs `luasched <opts.command>` (simulate by default) with the
  --- configuration text `cfg`, killed after opts.limit seconds (120) so that a
  --- hang fails the case, not the suite. simulate runs over opts.cluster (the
  --- bench's cluster by default) with --allow-plugin-errors (the probes end in
  --- plugin errors on purpose). opts.plugin_path replaces the plugin folder;
  --- opts.args are added last. Returns { rc, out, err, config = its path,
  --- pods = name -> outcome, rss = peak RSS in MiB }.
  function b.run(cfg, opts)
    opts = opts or {}
    b.runs = b.runs + 1
    local dir = b.dir .. "/run" .. b.runs
    assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
    local cfg_path = sim.write(dir .. "/config.yaml", cfg)
    local args = { "timeout", "-s", "KILL", tostring(opts.limit or 120), sim.bin() }
    if (opts.command or "simulate") == "simulate" then
      args[#args + 1] = "simulate"
      args[#args + 1] = sim.write(dir .. "/cluster.yaml", opts.cluster or cluster)
      args[#args + 1] = "--allow-plugin-errors"
      args[#args + 1] = "--config"
    else
      args[#args + 1] = opts.command
    end
    args[#args + 1] = cfg_path
    args[#args + 1] = "--plugin-path"
    args[#args + 1] = opts.plugin_path or (b.dir .. "/plugins")
    for _, a in ipairs(opts.args or {}) do args[#args + 1] = a end
    local cmd = {}
    for i, a in ipairs(args) do cmd[i] = sim.quote(a) end
    local p = assert(io.popen(table.concat(cmd, " ") .. " 2>" .. sim.quote(dir .. "/err") .. "; echo \"rc=$?\""))
    local out = p:read("*a")
    p:close()
    local rc
    out = out:gsub("rc=(%d+)\n$", function(c) rc = tonumber(c); return "" end)
    return { rc = rc, out = out, err = sim.read(dir .. "/err"), config = cfg_path, pods = sim.pods(out),
      rss = tonumber(out:match("peak RSS ([%d.]+) MiB")) }
  end

  return b
end

local CONFIG = [[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
%sprofiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [%s]
%s]]

-- The arguments each hook gets (as the probe declares them).
local ARGS = {
  filter = "self, state, pod, ni", score = "self, state, pod, ni", pre_filter = "self, state, pod",
  pre_score = "self, state, pod, nodes", normalize_score = "self, state, pod, scores, nodes, n",
  reserve = "self, state, pod, node", unreserve = "self, state, pod, node", permit = "self, state, pod, node",
  pre_bind = "self, state, pod, node", bind = "self, state, pod, node", post_bind = "self, state, pod, node",
  pre_enqueue = "self, pod",
}

-- What the hook returns for the other pods (a Bind plugin skips them).
local FALLBACK = { score = "0", bind = "ls.skip" }

--- A profile's lines that run Probe's bind before DefaultBinder.
M.BIND_FIRST = '    bind: {enabled: [{name: Probe}, {name: DefaultBinder}], disabled: [{name: "*"}]}\n'

--- A fresh kit with its own scratch directory: a bench over M.CLUSTER, opened.
function M.new()
  local kit = M.bench(M.CLUSTER)
  kit.open()
  kit.FILE = kit.file_of("probe")
  kit.plugin = kit.write_plugin
  kit.remove = kit.close
  kit.expect_error = M.expect_error

  --- Plugin "Probe": hook `hook` runs `body` (from line 7) for the probe pod
  --- only; `top` is top-level code (line 4). Its other pods get nil (0 for score,
  --- ls.skip for bind).
  function kit.probe(hook, body, top)
    kit.plugin("probe", M.HEAD .. ([[
%s
function P.%s(%s)
  if ls.label(pod.labels, KEY) ~= YES then return %s end
%s
end
return P
]]):format(top or "", hook, ARGS[hook], FALLBACK[hook] or "nil", body))
  end

  --- Runs `luasched simulate` (opts.command "check": check) with Probe and
  --- opts.extra plugin names enabled; opts.global and opts.profile are YAML
  --- lines of the configuration and of the profile (each ending in a newline,
  --- the profile's indented by two); opts.cluster
  --- replaces the cluster. Returns bench.run's { rc, out, err, config, pods }.
  function kit.simulate(opts)
    opts = opts or {}
    local enabled = { "{name: Probe}" }
    for _, n in ipairs(opts.extra or {}) do enabled[#enabled + 1] = "{name: " .. n .. "}" end
    return kit.run(CONFIG:format(opts.global or "", table.concat(enabled, ", "), opts.profile or ""),
      { command = opts.command, cluster = opts.cluster })
  end

  --- Both pods bound, status 0.
  function kit.expect_bound(r)
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("^bound to node%-[12]$", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end

  return kit
end

return M
