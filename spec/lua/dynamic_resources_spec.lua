-- DynamicResources through the test kit: claims, PreEnqueue messages, the
-- allocator's choices (class and request selectors, taints, complete pools,
-- devices already allocated, backtracking), the allocation result it would
-- write, Reserve keeping devices in flight, queueing hints and args.
-- Objects use the kinds the embedded cluster and the API client give DRA's
-- resources (plural.version.group).
local T = require("luasched.testing")
local ls = require("luasched")
local A = T.plugin("DynamicResources").allocator   -- the allocator module the plugin uses

local CLAIM = "resourceclaims.v1.resource.k8s.io"
local SLICE = "resourceslices.v1.resource.k8s.io"
local CLASS = "deviceclasses.v1.resource.k8s.io"
local DRIVER = "gpu.example.com"

local function class(name, expr)
  return { kind = CLASS, metadata = { name = name },
           spec = { selectors = T.array { { cel = { expression = expr or 'device.driver == "gpu.example.com"' } } } } }
end

local function slice(node, devices, pool)
  pool = pool or { name = node, generation = 1, resourceSliceCount = 1 }
  local devs = {}
  for i, d in ipairs(devices) do
    devs[i] = type(d) == "string" and { name = d } or d
  end
  return { kind = SLICE, metadata = { name = node .. "-" .. pool.name .. "-slice" },
           spec = { driver = DRIVER, nodeName = node, pool = pool, devices = T.array(devs) } }
end

local function claim(name, requests, status)
  return { kind = CLAIM, metadata = { name = name, namespace = "default", uid = "uid-" .. name },
           spec = { devices = { requests = T.array(requests) } }, status = status }
end

local function request(name, extra)
  local r = { name = name, exactly = { deviceClassName = DRIVER } }
  for k, v in pairs(extra or {}) do r.exactly[k] = v end
  return r
end

local function pod_with(claims, name)
  local rc = {}
  for i, c in ipairs(claims) do rc[i] = { name = "c" .. i, resourceClaimName = c } end
  return T.pod(T.pod_object { name = name or "trainer", uid = "uid-" .. (name or "trainer"),
                             spec = { resourceClaims = T.array(rc) } })
end

local function nodes() return { { name = "node-a" }, { name = "node-b" } } end

-- The devices the allocator chose for the pod's claims on `node`.
local function chosen(r, node)
  local s = r.state.dynamic_resources
  local out = {}
  for i, found in ipairs(s.node_allocations[ls.intern(node)] or {}) do
    local a = A.result(s.to_allocate[i], found, node)
    for _, res in ipairs(a.devices.results) do
      out[#out + 1] = res.request .. "=" .. res.pool .. "/" .. res.device
    end
  end
  return table.concat(out, ",")
end

describe("DynamicResources", function()
  local p
  before_each(function() p = T.plugin("DynamicResources") end)

  it("skips pods without claims at PreEnqueue and PreFilter", function()
    local cluster = T.cluster { nodes = nodes() }
    local pod = T.pod { name = "plain" }
    cluster:attach(pod)
    assert.is_nil(p:pre_enqueue(pod))
    assert.are.equal(ls.SKIP, T.pre_filter(p, cluster, pod).code)
  end)

  it("holds a pod whose claim is missing with the claim lookup's error", function()
    local cluster = T.cluster { nodes = nodes() }
    local pod = pod_with { "nope" }
    cluster:attach(pod)
    local st = T.result(p:pre_enqueue(pod))
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, st.code)
    assert.are.equal('could not find ResourceClaim "default/nope"', st.message)
  end)

  it("refuses a claim being deleted", function()
    local c = claim("gone", { request("gpu") })
    c.metadata.deletionTimestamp = "2026-01-01T00:00:00Z"
    local cluster = T.cluster { nodes = nodes(), objects = { class(DRIVER), c } }
    local pod = pod_with { "gone" }
    cluster:attach(pod)
    assert.are.equal('resourceclaim "gone" is being deleted', T.result(p:pre_enqueue(pod)).message)
  end)

  it("checks that a claim made from a template is owned by the pod (IsForPod)", function()
    local generated = claim("p-gpu-x")
    generated.spec = { devices = { requests = T.array { request("gpu") } } }
    local cluster = T.cluster { nodes = nodes(), objects = { class(DRIVER), generated } }
    local entry = { name = "gpu", resourceClaimTemplateName = "t" }
    local obj = T.pod_object { name = "p", uid = "uid-p", spec = { resourceClaims = T.array { entry } } }
    obj.status = { resourceClaimStatuses = T.array { { name = "gpu", resourceClaimName = "p-gpu-x" } } }
    local pod = T.pod(obj)
    cluster:attach(pod)
    assert.are.equal("ResourceClaim default/p-gpu-x was not created for pod default/p (pod is not owner)",
      T.result(p:pre_enqueue(pod)).message)
    generated.metadata.ownerReferences = T.array { { apiVersion = "v1", kind = "Pod", name = "p", uid = "uid-p",
                                                      controller = true } }
    cluster:add_object(generated)
    assert.is_nil(p:pre_enqueue(pod))
  end)

  it("allocates on the node whose slice has a matching device", function()
    local cluster = T.cluster { nodes = nodes(), objects = {
      class(DRIVER),
      slice("node-a", { { name = "gpu-0", attributes = { model = { string = "T4" } } } }),
      slice("node-b", { { name = "gpu-0", attributes = { model = { string = "A100" } } } }),
      claim("a100", { request("gpu", { selectors = T.array {
        { cel = { expression = 'device.attributes["gpu.example.com"].model == "A100"' } } } }) }),
    } }
    local r = T.cycle(p, cluster, pod_with { "a100" })
    assert.are.equal("cannot allocate all claims", r.filter["node-a"].message)
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.filter["node-a"].code)
    assert.are.same({ "node-b" }, r.feasible)
    assert.are.equal("gpu=node-b/gpu-0", chosen(r, "node-b"))
    local s = r.state.dynamic_resources
    local a = A.result(s.to_allocate[1], s.node_allocations[ls.intern("node-b")][1], "node-b")
    assert.are.same({ nodeSelectorTerms = { { matchFields = { { key = "metadata.name", operator = "In",
      values = { "node-b" } } } } } }, a.nodeSelector)
  end)

  it("reports a missing device class as upstream does", function()
    local cluster = T.cluster { nodes = nodes(), objects = { claim("c", { request("gpu") }) } }
    local r = T.cycle(p, cluster, pod_with { "c" })
    assert.are.equal("request gpu: device class gpu.example.com does not exist", r.pre_filter.message)
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, r.pre_filter.code)
  end)

  it("backtracks so that a later request still gets the one device it can use", function()
    -- "any" could take gpu-0 first; "only0" needs gpu-0: the search gives any=gpu-1
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(DRIVER),
      slice("node-a", { { name = "gpu-0", attributes = { idx = { int = 0 } } },
                        { name = "gpu-1", attributes = { idx = { int = 1 } } } }),
      claim("two", { request("any"), request("only0", { selectors = T.array {
        { cel = { expression = 'device.attributes["gpu.example.com"].idx == 0' } } } }) }),
    } }
    local r = T.cycle(p, cluster, pod_with { "two" })
    assert.are.equal("any=node-a/gpu-1,only0=node-a/gpu-0", chosen(r, "node-a"))
  end)

  it("never takes a device another claim holds or a Reserve keeps in flight", function()
    local held = claim("held", { request("gpu") }, { allocation = { devices = { results = T.array {
      { request = "gpu", driver = DRIVER, pool = "node-a", device = "gpu-0" } } } } })
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(DRIVER), slice("node-a", { "gpu-0", "gpu-1" }), held,
      claim("first", { request("gpu") }), claim("second", { request("gpu") }),
    } }
    local first = pod_with({ "first" }, "first")
    local r = T.cycle(p, cluster, first)
    assert.are.equal("gpu=node-a/gpu-1", chosen(r, "node-a"))
    assert.are.equal(ls.SUCCESS, T.node_hook(p, "reserve", cluster, first, "node-a", r.state).code)
    -- gpu-0 is allocated to "held", gpu-1 in flight for "first"
    local r2 = T.cycle(p, cluster, pod_with({ "second" }, "second"))
    assert.are.equal("cannot allocate all claims", r2.filter["node-a"].message)
    -- and "first"'s claim itself waits while its allocation is in flight
    local r3 = T.cycle(p, cluster, pod_with({ "first" }, "again"))
    assert.are.equal("resource claim default/first is in the process of being allocated", r3.pre_filter.message)
    p:unreserve(r.state, first)
    assert.are.equal("gpu=node-a/gpu-1", chosen(T.cycle(p, cluster, pod_with({ "second" }, "second")), "node-a"))
  end)

  it("skips incomplete pools and devices with untolerated NoSchedule/NoExecute taints", function()
    local taint = function(effect) return T.array { { key = "broken", value = "true", effect = effect } } end
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(DRIVER),
      slice("node-a", { "split-0" }, { name = "split", generation = 1, resourceSliceCount = 2 }),
      slice("node-a", { { name = "t-0", taints = taint("NoSchedule") }, { name = "t-1", taints = taint("NoExecute") },
                        { name = "t-2", taints = taint("None") } }),
      claim("c", { request("gpu") }),
      claim("tolerant", { request("gpu", { count = 2, tolerations = T.array {
        { key = "broken", operator = "Exists", effect = "NoSchedule" } } }) }),
    } }
    assert.are.equal("gpu=node-a/t-2", chosen(T.cycle(p, cluster, pod_with { "c" }), "node-a"))
    assert.are.equal("gpu=node-a/t-0,gpu=node-a/t-2", chosen(T.cycle(p, cluster, pod_with { "tolerant" }), "node-a"))
  end)

  it("pins pods of an allocated claim to its node selector", function()
    local allocated = claim("shared", { request("gpu") }, { allocation = {
      devices = { results = T.array { { request = "gpu", driver = DRIVER, pool = "node-b", device = "gpu-0" } } },
      nodeSelector = { nodeSelectorTerms = T.array { { matchFields = T.array {
        { key = "metadata.name", operator = "In", values = T.array { "node-b" } } } } } },
    } })
    local cluster = T.cluster { nodes = nodes(), objects = { class(DRIVER), allocated } }
    local r = T.cycle(p, cluster, pod_with { "shared" })
    assert.are.equal("resourceclaim not available on the node", r.filter["node-a"].message)
    assert.are.same({ "node-b" }, r.feasible)
  end)

  it("queues a pod on its own claim's creation and status change, not on others", function()
    local cluster = T.cluster { nodes = nodes(), objects = { class(DRIVER) } }
    local pod = pod_with { "mine" }
    cluster:attach(pod)
    p:pre_enqueue(pod)   -- the instance the hints consult
    local claim_event
    for _, e in ipairs(p.events) do if e.resource == CLAIM then claim_event = e end end
    local other = cluster:add_object(claim("other", { request("gpu") }))
    assert.are.equal(ls.QUEUE_SKIP, claim_event.hint(pod, nil, other))   -- the pod's claim is missing
    local mine = cluster:add_object(claim("mine", { request("gpu") }))
    assert.are.equal(ls.QUEUE, claim_event.hint(pod, nil, mine))
    local relabelled = claim("mine", { request("gpu") })
    relabelled.metadata.labels = { a = "b" }
    assert.are.equal(ls.QUEUE_SKIP, claim_event.hint(pod, mine, cluster:add_object(relabelled)))
    assert.are.equal(ls.QUEUE_SKIP, claim_event.hint(pod, other, cluster:add_object(claim("other", { request("x") }))))
  end)

  it("makes a search that outlives filterTimeout an Error (v1.36); 0 turns the limit off", function()
    -- 12 devices, 13 wanted: the search tries every increasing choice before failing
    local devs = {}
    for i = 1, 12 do devs[i] = "gpu-" .. i end
    local objects = { class(DRIVER), slice("node-a", devs), claim("greedy", { request("gpu", { count = 13 }) }) }
    local quick = T.plugin("DynamicResources", { filterTimeout = "1ns" })
    local r = T.cycle(quick, T.cluster { nodes = { { name = "node-a" } }, objects = objects }, pod_with { "greedy" })
    assert.are.equal(ls.ERROR, r.filter["node-a"].code)
    assert.are.equal("timed out trying to allocate devices", r.filter["node-a"].message)
    local patient = T.plugin("DynamicResources", { filterTimeout = "0" })
    r = T.cycle(patient, T.cluster { nodes = { { name = "node-a" } }, objects = objects }, pod_with { "greedy" })
    assert.are.equal("cannot allocate all claims", r.filter["node-a"].message)
  end)

  it("reads filterTimeout and bindingTimeout as durations and refuses anything else", function()
    assert.are.equal(10, p.filter_timeout)
    assert.are.equal(90, T.plugin("DynamicResources", { filterTimeout = "1m30s" }).filter_timeout)
    assert.are.equal(0, T.plugin("DynamicResources", { filterTimeout = "0s" }).filter_timeout)
    local ok, err = pcall(T.plugin, "DynamicResources", { filterTimeout = "soon" })
    assert.is_false(ok)
    assert.are.equal('filterTimeout: Invalid value: "soon": expected a duration such as "10s"', err)
    assert.are.equal(600, p.binding_timeout)
    ok, err = pcall(T.plugin, "DynamicResources", { bindingTimeout = "0s" })
    assert.is_false(ok)
    -- ValidateDynamicResourcesArgs: bindingTimeout at least 1 s, filterTimeout not negative
    assert.are.equal('bindingTimeout: Invalid value: "0s": must be at least 1 second', err)
    ok, err = pcall(T.plugin, "DynamicResources", { filterTimeout = "-1s" })
    assert.is_false(ok)
    assert.are.equal('filterTimeout: Invalid value: "-1s": must be zero or positive', err)
  end)
end)
