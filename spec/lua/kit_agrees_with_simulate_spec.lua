-- The plugin author's kit runs the framework: the same plugin, cluster and
-- arguments give the same attempts under T.schedule as under `luasched
-- simulate` (the real scheduler), attempt by attempt: the node each pod is
-- bound to, or the very message of its rejection or its plugin's error.
local T = require("luasched.testing")
local json = require("json")
local sim = require("sim_helper")

local PLUGIN = [[
-- Filter, PreFilter node names, Score and NormalizeScore, and an error.
local ls = require("luasched")
local P = ls.plugin("AgreementProbe", { defaults = { avoid = "" } })
P.events = { { resource = "AssignedPod", action = { "Add", "Delete" } }, { resource = "Node", action = "Add" } }

function P:pre_filter(_, pod)
  if ls.str(pod.name) == "restricted" then return nil, { "n3" } end
  if ls.str(pod.name) == "pinned" then return nil, { "n2", "n3x" } end
end

function P:filter(_, pod, ni)
  local name = ls.str(pod.name)
  if name == "boom" then error("boom on " .. ls.str(ni.node.name)) end
  if ls.str(ni.node.name) == self.args.avoid then return ls.unschedulable("node is avoided") end
  if name == "big" and ni.num_pods >= 1 then return ls.unschedulable("node is busy") end
end

function P:score(_, _, ni)
  return 10 * ni.num_pods + #ls.str(ni.node.name)
end

function P:normalize_score(_, _, scores, _, n)
  local max = 0
  for i = 0, n - 1 do max = math.max(max, tonumber(scores[i])) end
  for i = 0, n - 1 do scores[i] = max == 0 and 0 or math.floor(100 - 100 * tonumber(scores[i]) / max) end
end

return P
]]

local function node(name)
  return ("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"
    .. "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"):format(name)
end

local function pod(name)
  return ("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\n"
    .. "spec:\n  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]\n"):format(name)
end

local PROFILE = [[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
      - name: AgreementProbe
      disabled:
      - name: "*"
  pluginConfig:
  - name: AgreementProbe
    args: {avoid: n2}
]]

describe("the kit and luasched simulate", function()
  local dir
  setup(function()
    dir = sim.scratch("plugins")
    sim.write(dir .. "/plugins/agreement_probe.lua", PLUGIN)
    local docs = { node("n1"), node("n2"), node("n3x") }
    for _, name in ipairs({ "a", "b", "c", "restricted", "pinned", "big", "d", "boom" }) do
      docs[#docs + 1] = pod(name)
    end
    sim.write(dir .. "/cluster.yaml", table.concat(docs, "---\n"))
    sim.write(dir .. "/profile.yaml", PROFILE)
  end)
  teardown(function()
    T.set_plugin_path()
    T.reload()
    sim.remove(dir)
  end)

  it("agree attempt by attempt on the same plugin, arguments and cluster", function()
    local r = sim.run({ "simulate", dir .. "/cluster.yaml", "--config", dir .. "/profile.yaml",
      "--plugin-path", dir .. "/plugins", "--output", "json", "--allow-plugin-errors" })
    assert.are.equal(0, r.rc, r.err)
    local want = {}
    for _, p in ipairs(json.decode(r.out).pods) do
      local first = p.attempts[1]
      want[#want + 1] = { pod = p.namespace .. "/" .. p.name, result = first.result,
        node = first.node ~= json.null and first.node or nil,
        message = first.result ~= "bound" and first.message or nil }
    end

    T.set_plugin_path({ dir .. "/plugins" })
    T.reload()
    local cluster = T.cluster { file = dir .. "/cluster.yaml" }
    local got = {}
    for i, a in ipairs(T.schedule(T.plugin("AgreementProbe", { avoid = "n2" }), cluster)) do
      got[i] = { pod = a.pod, result = a.result, node = a.node, message = a.message }
    end
    cluster:close()

    -- worked by hand: a: n1 (2) vs n3x (3), normalized 33 / 0 -> n1; b: n1 12, n3x 3 -> n3x;
    -- c: n1 12, n3x 13 -> n1 (8 vs 0); restricted: no node n3; pinned: n2 avoided -> n3x alone;
    -- big: every node busy or avoided; d: n1 22, n3x 23 -> n1; boom: the filter raises
    assert.are.same({ "bound", "bound", "bound", "unschedulable", "bound", "unschedulable", "bound", "error" },
      (function() local t = {} for i, a in ipairs(got) do t[i] = a.result end return t end)())
    assert.are.same({ "n1", "n3x", "n1" }, { got[1].node, got[2].node, got[3].node })
    assert.are.equal("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [AgreementProbe].", got[4].message)
    assert.are.equal("n3x", got[5].node)
    assert.matches('^running "AgreementProbe" filter plugin: .*agreement_probe%.lua:%d+: boom on n', got[8].message)
    assert.are.same(want, got)
  end)
end)
