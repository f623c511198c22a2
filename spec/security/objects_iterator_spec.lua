-- ls.objects hands plugins its iterator and the iterator's state table (a
-- plain function over a table, so that the JIT compiles loops over objects).
-- A plugin that changes the state can only end the loop or get an error: the
-- C lookup checks the kind and the index, and the store must be a store.
local probe_kit = require("probe_kit")

local CLUSTER = [[
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {probe: "yes"}}
spec: {containers: [{name: c, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: app}]}
]]
local bench = probe_kit.bench(CLUSTER)

local CONFIG = [[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Probe}]
]]

-- A pod every node rejected with `reason` (upstream's FitError text, with
-- the PostFilter part: DynamicResources' reason (the pod has no claims), then
-- DefaultPreemption's (the one node has no victims), joined with ", ").
local function rejected(reason)
  return "pending: 0/1 nodes are available: 1 " .. reason ..
    ". no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for " ..
    "incoming pod."
end

-- A Filter plugin that runs `body` for the probe pod; `body` returns its status.
local function run(body)
  bench.probe(([[
function P.filter(self, state, pod, ni)
  if ls.label(pod.labels, KEY) ~= YES then return nil end
%s
end]]):format(body))
  return bench.run(CONFIG)
end

describe("ls.objects: the iterator's state", function()
  setup(bench.open)
  teardown(bench.close)

  it("iterates the objects of a kind", function()
    local r = run([[
  local n = 0
  for o in ls.objects("Namespace") do n = n + 1; assert(ls.str(o.name) == "default") end
  return ls.unschedulable("namespaces: " .. n)]])
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.are.equal(rejected("namespaces: 1"), r.pods.a)
    assert.are.equal("bound to node-1", r.pods.b)
  end)

  it("an index, kind or store changed by the plugin ends the loop", function()
    local r = run([[
  local extra = 0
  local f, st = ls.objects("Namespace")
  st.i = 1e9
  for _ in f, st do extra = extra + 1 end
  f, st = ls.objects("Namespace")
  st.kind = ls.intern("NoSuchKind")
  for _ in f, st do extra = extra + 1 end
  f, st = ls.objects("Namespace")
  st.store = nil
  for _ in f, st do extra = extra + 1 end
  return ls.unschedulable("after tampering: " .. extra)]])
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.are.equal(rejected("after tampering: 0"), r.pods.a)
    assert.are.equal("bound to node-1", r.pods.b)
  end)

  it("a store that is not a store is an error naming the plugin's line", function()
    local r = run([[
  local f, st = ls.objects("Namespace")
  st.store = pod
  for _ in f, st do end]])
    assert.are.equal(0, r.rc, r.err .. r.out)
    assert.matches("^pending: running \"Probe\" filter plugin: " .. probe_kit.plain(bench.file_of("probe"))
      .. ":8: .*cannot convert", r.pods.a)
    assert.are.equal("bound to node-1", r.pods.b)
  end)
end)
