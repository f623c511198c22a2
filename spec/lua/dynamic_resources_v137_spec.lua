-- DynamicResources at the v1.37 defaults, through the test kit: what the
-- scenarios (spec/scenarios/dynamic_resources-*.yaml) cannot show, the
-- allocation results: consumable capacity (consumedCapacity rounded by the
-- request policy, shareID, the capacity left to later claims), shared
-- counters, matchAttribute / distinctAttribute constraints, binding
-- conditions copied into the result, allocationTimestamp. Expected values
-- worked by hand from upstream's structured allocator (incubating/
-- consumable_capacity.go, constraint.go, allocator_incubating.go).
local T = require("luasched.testing")
local ls = require("luasched")
local A = T.plugin("DynamicResources").allocator
local CAP = A.capacity

local CLAIM = "resourceclaims.v1.resource.k8s.io"
local SLICE = "resourceslices.v1.resource.k8s.io"
local CLASS = "deviceclasses.v1.resource.k8s.io"
local DRIVER = "gpu.example.com"

local function class()
  return { kind = CLASS, metadata = { name = DRIVER },
           spec = { selectors = T.array { { cel = { expression = 'device.driver == "gpu.example.com"' } } } } }
end

local function slice(devices, extra)
  local spec = { driver = DRIVER, nodeName = "node-a", devices = T.array(devices),
                 pool = { name = "node-a", generation = 1, resourceSliceCount = 1 } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return { kind = SLICE, metadata = { name = "node-a-slice" }, spec = spec }
end

local function claim(name, requests, constraints, status)
  return { kind = CLAIM, metadata = { name = name, namespace = "default", uid = "uid-" .. name },
           spec = { devices = { requests = T.array(requests), constraints = constraints and T.array(constraints) } },
           status = status }
end

local function request(name, extra)
  local r = { name = name, exactly = { deviceClassName = DRIVER } }
  for k, v in pairs(extra or {}) do r.exactly[k] = v end
  return r
end

local function pod_with(c, name)
  return T.pod(T.pod_object { name = name or "p", uid = "uid-" .. (name or "p"),
                             spec = { resourceClaims = T.array { { name = "c", resourceClaimName = c } } } })
end

-- The allocation results on node-a: list of API-form results.
local function results(r)
  local s = r.state.dynamic_resources
  local found = s.node_allocations[ls.intern("node-a")]
  if not found then return nil end
  return A.result(s.to_allocate[1], found[1], "node-a").devices.results
end

local function devices(r)
  local out = {}
  for _, x in ipairs(results(r) or {}) do out[#out + 1] = x.request .. "=" .. x.device end
  return table.concat(out, ",")
end

describe("DynamicResources v1.37", function()
  local p
  before_each(function() p = T.plugin("DynamicResources") end)

  it("rounds capacity requests by the request policy and records consumedCapacity and a shareID", function()
    local shared = { name = "gpu-0", allowMultipleAllocations = true, capacity = {
      memory = { value = "16Gi",
                 requestPolicy = { default = "4Gi", validRange = { min = "2Gi", step = "2Gi", max = "8Gi" } } },
      cores = { value = "8", requestPolicy = { validValues = T.array { "1", "2", "4" } } } } }
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(), slice { shared },
      claim("c", { request("gpu", { capacity = { requests = { memory = "3Gi", cores = "3" } } }) }),
      claim("d", { request("gpu") }),
    } }
    local res = results(T.cycle(p, cluster, pod_with "c"))
    -- memory 3Gi -> 2Gi + 2Gi * ceil(1Gi / 2Gi) = 4Gi; cores 3 -> the first valid value >= 3: 4
    assert.are.same({ memory = "4Gi", cores = "4" }, res[1].consumedCapacity)
    assert.is_string(res[1].shareID)
    -- no request: the default (memory 4Gi); cores has no default: the whole value, 8, which
    -- validValues (1, 2, 4) does not allow -> the device cannot serve claim d
    assert.is_nil(results(T.cycle(p, cluster, pod_with("d", "q"))))
  end)

  it("leaves to later claims only the capacity earlier shares did not consume", function()
    local shared = { name = "gpu-0", allowMultipleAllocations = true, capacity = { memory = { value = "10Gi" } } }
    local held = claim("held", { request("gpu") }, nil, { allocation = { devices = { results = T.array {
      { request = "gpu", driver = DRIVER, pool = "node-a", device = "gpu-0", shareID = "a1",
        consumedCapacity = { memory = "6Gi" } } } } } })
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(), slice { shared }, held,
      claim("fits", { request("gpu", { capacity = { requests = { memory = "4Gi" } } }) }),
      claim("over", { request("gpu", { capacity = { requests = { memory = "5Gi" } } }) }),
    } }
    assert.are.equal("gpu=gpu-0", devices(T.cycle(p, cluster, pod_with "fits")))
    assert.is_nil(results(T.cycle(p, cluster, pod_with("over", "o"))))
  end)

  it("takes the first device that fits unless deviceSelection (luasched's) names BestFit or WorstFit", function()
    -- three shared GPUs of 1000 milli; allocated shares leave gpu-0 600, gpu-1 400, gpu-2 1000
    local function gpu(i) return { name = "gpu-" .. i, allowMultipleAllocations = true,
                                   capacity = { milli = { value = "1000" } } } end
    local function share(dev, milli)
      return { request = "gpu", driver = DRIVER, pool = "node-a", device = dev, shareID = dev .. milli,
               consumedCapacity = { milli = tostring(milli) } }
    end
    local held = claim("held", { request("gpu") }, nil, { allocation = { devices = { results = T.array {
      share("gpu-0", 400), share("gpu-1", 600) } } } })
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(), slice { gpu(0), gpu(1), gpu(2) }, held,
      claim("c", { request("gpu", { capacity = { requests = { milli = "300" } } }) }),
      claim("big", { request("gpu", { capacity = { requests = { milli = "500" } } }) }),
    } }
    -- 300 fits all three: first fit gpu-0 (upstream); best fit the least left, gpu-1 (400);
    -- worst fit the most, gpu-2 (1000)
    assert.are.equal("gpu=gpu-0", devices(T.cycle(p, cluster, pod_with "c")))
    local best = T.plugin("DynamicResources", { deviceSelection = { rule = "BestFit", capacity = "milli" } })
    assert.are.equal("gpu=gpu-1", devices(T.cycle(best, cluster, pod_with "c")))
    local worst = T.plugin("DynamicResources", { deviceSelection = { rule = "WorstFit", capacity = "milli" } })
    assert.are.equal("gpu=gpu-2", devices(T.cycle(worst, cluster, pod_with "c")))
    -- 500 does not fit gpu-1 (400 left): best fit among gpu-0 (600) and gpu-2 (1000) is gpu-0,
    -- and the result consumes 500 of it
    local res = results(T.cycle(best, cluster, pod_with("big", "b")))
    assert.are.equal("gpu-0", res[1].device)
    assert.are.same({ milli = "500" }, res[1].consumedCapacity)
    -- FirstFit is upstream's choice, named
    local first = T.plugin("DynamicResources", { deviceSelection = { rule = "FirstFit" } })
    assert.are.equal("gpu=gpu-0", devices(T.cycle(first, cluster, pod_with "c")))
    assert.has_error(function() T.plugin("DynamicResources", { deviceSelection = { rule = "Tightest" } }) end,
      'deviceSelection.rule: Unsupported value: "Tightest": supported values: "FirstFit", "BestFit", "WorstFit"')
    assert.has_error(function() T.plugin("DynamicResources", { deviceSelection = { rule = "BestFit" } }) end,
      'deviceSelection.capacity: Required value: the device capacity BestFit compares (e.g. "milli")')
  end)

  it("refuses a capacity request for a capacity the device does not have", function()
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(), slice { { name = "gpu-0", capacity = { memory = { value = "8Gi" } } } },
      claim("c", { request("gpu", { capacity = { requests = { bandwidth = "1" } } }) }),
    } }
    local r = T.cycle(p, cluster, pod_with "c")
    assert.are.equal("cannot allocate all claims", r.filter["node-a"].message)
  end)

  it("keeps a pool's shared counters: partitions are allocated while their counters fit", function()
    local function part(name, mem) return { name = name, consumesCounters = T.array {
      { counterSet = "gpu-0", counters = { memory = { value = mem } } } } } end
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(),
      slice({ part("p-30", "30Gi"), part("p-20a", "20Gi"), part("p-20b", "20Gi") },
        { sharedCounters = T.array { { name = "gpu-0", counters = { memory = { value = "40Gi" } } } } }),
      claim("two", { request("gpu", { count = 2 }) }),
    } }
    -- p-30 + p-20a = 50Gi > 40Gi, p-30 + p-20b too: the search moves on to p-20a + p-20b = 40Gi
    assert.are.equal("gpu=p-20a,gpu=p-20b", devices(T.cycle(p, cluster, pod_with "two")))
  end)

  it("applies matchAttribute and distinctAttribute constraints, with or without the driver's domain", function()
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(),
      slice { { name = "g0", attributes = { numa = { int = 0 }, pcie = { string = "x" } } },
              { name = "g1", attributes = { numa = { int = 1 }, pcie = { string = "x" } } },
              { name = "g2", attributes = { ["gpu.example.com/numa"] = { int = 1 }, pcie = { string = "y" } } } },
      claim("same", { request("gpu", { count = 2 }) }, { { matchAttribute = "gpu.example.com/numa" } }),
      claim("apart", { request("a"), request("b") }, { { requests = T.array { "a", "b" },
        distinctAttribute = "gpu.example.com/pcie" } }),
    } }
    assert.are.equal("gpu=g1,gpu=g2", devices(T.cycle(p, cluster, pod_with "same")))
    -- a takes g0 (pcie x); b cannot take g1 (x again) -> g2 (y)
    assert.are.equal("a=g0,b=g2", devices(T.cycle(p, cluster, pod_with("apart", "q"))))
  end)

  it("copies binding conditions into the result and pins a bindsToNode device to the node", function()
    local cluster = T.cluster { nodes = { { name = "node-a" } }, objects = {
      class(),
      { kind = SLICE, metadata = { name = "fabric" }, spec = { driver = DRIVER, allNodes = true,
        pool = { name = "fabric", generation = 1, resourceSliceCount = 1 }, devices = T.array {
          { name = "f0", bindsToNode = true, bindingConditions = T.array { "Ready" },
            bindingFailureConditions = T.array { "Failed" } } } } },
      claim("c", { request("link") }),
    } }
    local r = T.cycle(p, cluster, pod_with "c")
    local res = results(r)
    assert.are.same({ "Ready" }, res[1].bindingConditions)
    assert.are.same({ "Failed" }, res[1].bindingFailureConditions)
    local s = r.state.dynamic_resources
    local a = A.result(s.to_allocate[1], s.node_allocations[ls.intern("node-a")][1], "node-a")
    assert.are.equal("node-a", a.nodeSelector.nodeSelectorTerms[1].matchFields[1].values[1])
  end)

  it("formats quantities as resource.Quantity does", function()
    assert.are.equal("4Gi", CAP.format(CAP.milli("4Gi"), true))
    assert.are.equal("1500Mi", CAP.format(CAP.milli("1500Mi"), true))
    assert.are.equal("1k", CAP.format(CAP.milli("1000"), false))
    assert.are.equal("500m", CAP.format(CAP.milli("0.5"), false))
  end)

  it("makes the special claim of DRA-backed extended resources only on nodes that do not advertise them", function()
    local cl = { kind = CLASS, metadata = { name = DRIVER }, spec = { extendedResourceName = "example.com/gpu",
      selectors = T.array { { cel = { expression = 'device.driver == "gpu.example.com"' } } } } }
    local cluster = T.cluster { nodes = { { name = "node-a" }, { name = "plugin", allocatable = {
      cpu = "4", memory = "8Gi", ["example.com/gpu"] = "2" } } },
      objects = { cl, slice { { name = "gpu-0" }, { name = "gpu-1" } } } }
    -- init container 0 asks 1 GPU; app container 1 asks cpu, example.com/gpu 2 and memory
    local pod = T.pod(T.pod_object { name = "x", init_containers = { { ["example.com/gpu"] = "1" } },
      containers = { { cpu = "100m", ["example.com/gpu"] = "2", memory = "1Gi" } } })
    local r = T.cycle(p, cluster, pod)
    local s = r.state.dynamic_resources
    -- node "plugin" advertises example.com/gpu: no claim there, nothing allocated
    assert.is_nil(s.node_lists[ls.intern("plugin")])
    local sig, prep = next(s.ext.preps)   -- one set of requests: node-a's
    assert.is_nil(next(s.ext.preps, sig))
    local names = {}
    for _, req in ipairs(prep.requests_api) do
      names[#names + 1] = req.name .. ":" .. req.exactly.deviceClassName .. "x" .. req.exactly.count
    end
    -- container 0's names: example.com/gpu (index 0); container 1's sorted: cpu, example.com/gpu, memory -> 1
    assert.are.equal("container-0-request-0:gpu.example.comx1,container-1-request-1:gpu.example.comx2",
      table.concat(names, ","))
    -- the test kit names the app containers c0, c1, ...
    assert.are.equal("c0", prep.mappings[2].containerName)
    assert.are.equal("example.com/gpu", prep.mappings[2].resourceName)
    -- the search runs the init container's request and the app container's on distinct devices:
    -- three devices asked, two on node-a
    assert.are.equal("cannot allocate all claims", r.filter["node-a"].message)
  end)
end)
