-- A kit for the red-team specs (spec/security/): a two-node cluster with a
-- probe pod "a" (labelled probe=yes) and a plain pod "b", a plugin "Probe"
-- whose hook acts on the probe pod only, and a run of the real
-- `luasched simulate` (or `check`) over them.
--
--   local kit = require("probe_kit").new()      -- in setup()
--   kit.probe("filter", [[  error("x")]])       -- the hook's body: line 7 of the file
--   local r = kit.simulate({ profile = "  luasched: {pluginTimeoutMilliseconds: 300}\n" })
--   kit.expect_error(r, 'running "Probe" filter plugin: ' .. kit.FILE .. ":7: x")
--   kit.remove()                                 -- in teardown()
local sim = require("sim_helper")
local assert = require("luassert")

local M = {}

M.CLUSTER = [[
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec: {nodeName: node-1, containers: [{name: c, image: app}]}
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

--- A fresh kit with its own scratch directory.
function M.new()
  sim.bin()
  local kit = { runs = 0 }
  local tmp = sim.scratch("plugins")
  kit.dir = tmp
  kit.FILE = tmp .. "/plugins/probe.lua"

  --- Writes plugin `file` (snake_case name) with `source`.
  function kit.plugin(file, source)
    return sim.write(tmp .. "/plugins/" .. file .. ".lua", source)
  end

  --- Plugin "Probe": hook `hook` runs `body` (from line 7) for the probe pod
  --- only; `top` is top-level code (line 4). Its other pods get nil (0 for score,
  --- ls.skip for bind).
  function kit.probe(hook, body, top)
    kit.plugin("probe", ([[
local ls = require("luasched")
local P = ls.plugin("Probe")
local KEY, YES = ls.intern("probe"), ls.intern("yes")
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
  --- replaces the cluster. Returns { rc, out, err, config = its path,
  --- pods = name -> outcome }.
  function kit.simulate(opts)
    opts = opts or {}
    kit.runs = kit.runs + 1
    local dir = tmp .. "/run" .. kit.runs
    assert(sim.sh_ok("mkdir -p " .. sim.quote(dir)))
    local enabled = { "{name: Probe}" }
    for _, n in ipairs(opts.extra or {}) do enabled[#enabled + 1] = "{name: " .. n .. "}" end
    local cfg = sim.write(dir .. "/config.yaml",
      CONFIG:format(opts.global or "", table.concat(enabled, ", "), opts.profile or ""))
    local args = { opts.command or "simulate" }
    if args[1] == "simulate" then
      args[2] = sim.write(dir .. "/cluster.yaml", opts.cluster or M.CLUSTER)
      args[3] = "--allow-plugin-errors"   -- the probes end in plugin errors on purpose
      args[4] = "--config"
    end
    args[#args + 1] = cfg
    args[#args + 1] = "--plugin-path"
    args[#args + 1] = tmp .. "/plugins"
    local r = sim.run(args, { err = dir .. "/err" })
    r.pods = sim.pods(r.out)
    r.config = cfg
    return r
  end

  --- The run went on: status 0, the plain pod bound, the probe pod pending
  --- with exactly `message`.
  function kit.expect_error(r, message)
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("^bound to node%-[12]$", r.pods.b)
    assert.are.equal("pending: " .. message, r.pods.a)
  end

  --- Both pods bound, status 0.
  function kit.expect_bound(r)
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("^bound to node%-[12]$", r.pods.a)
    assert.matches("^bound to node%-[12]$", r.pods.b)
  end

  function kit.remove()
    sim.remove(tmp)
  end

  return kit
end

return M
