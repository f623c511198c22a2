-- OpportunisticBatching signatures (KEP-5598, upstream v1.37 SignPod of each
-- default plugin, luasched.sign for a profile). The property upstream defines:
-- two pods get the same fragment exactly when the upstream signer's value is
-- the same; some pods are unsignable (false).
local T = require("luasched.testing")
local sign = require("luasched.sign")

local function frag(plugin_name, desc, args)
  local inst = T.plugin(plugin_name, args)
  return inst:sign(T.pod(T.pod_object(desc)))
end

local function pod(extra)
  local o = { name = "p", requests = { cpu = "1", memory = "1Gi" } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

local AFFINITY = { nodeAffinity = { preferredDuringSchedulingIgnoredDuringExecution = {
  { weight = 2, preference = { matchExpressions = { { key = "tier", operator = "In", values = { "a", "b" } } } } },
  { weight = 1, preference = { matchExpressions = { { key = "zone", operator = "Exists" } } } },
} } }
local AFFINITY_REORDERED = { nodeAffinity = { preferredDuringSchedulingIgnoredDuringExecution = {
  { weight = 1, preference = { matchExpressions = { { key = "zone", operator = "Exists" } } } },
  { weight = 2, preference = { matchExpressions = { { key = "tier", operator = "In", values = { "b", "a" } } } } },
} } }

describe("sign hooks of the default plugins", function()
  it("NodeResourcesFit and BalancedAllocation sign the pod's requests (ResourcesSignerName)", function()
    for _, name in ipairs({ "NodeResourcesFit", "NodeResourcesBalancedAllocation" }) do
      local a = frag(name, pod())
      assert.are.equal(a, frag(name, pod({ name = "other" })))
      assert.are_not.equal(a, frag(name, pod({ requests = { cpu = "2", memory = "1Gi" } })))
      -- PodRequests: two containers of 500m are the one of 1 cpu
      assert.are.equal(a, frag(name, { name = "q", containers = {
        { cpu = "500m", memory = "512Mi" }, { cpu = "500m", memory = "512Mi" } } }))
    end
  end)

  it("TaintToleration and NodeUnschedulable sign the tolerations in any order", function()
    local t1 = { key = "a", operator = "Exists", effect = "NoSchedule" }
    local t2 = { key = "b", operator = "Equal", value = "x", effect = "NoExecute" }
    for _, name in ipairs({ "TaintToleration", "NodeUnschedulable" }) do
      local a = frag(name, pod({ tolerations = { t1, t2 } }))
      assert.are.equal(a, frag(name, pod({ tolerations = { t2, t1 } })))
      assert.are_not.equal(a, frag(name, pod({ tolerations = { t1 } })))
      assert.are_not.equal(a, frag(name, pod()))
    end
  end)

  it("NodeAffinity signs the terms (sorted, values sorted) and the nodeSelector", function()
    local a = frag("NodeAffinity", pod({ affinity = AFFINITY }))
    assert.are.equal(a, frag("NodeAffinity", pod({ affinity = AFFINITY_REORDERED })))
    assert.are_not.equal(a, frag("NodeAffinity", pod()))
    assert.are_not.equal(a, frag("NodeAffinity", pod({ affinity = AFFINITY, node_selector = { os = "linux" } })))
  end)

  it("NodePorts signs the set of host port numbers only", function()
    local a = frag("NodePorts", pod({ ports = { { containerPort = 80, hostPort = 8080 } } }))
    local udp = { { containerPort = 81, hostPort = 8080, protocol = "UDP" } }
    assert.are.equal(a, frag("NodePorts", pod({ ports = udp })))
    assert.are_not.equal(a, frag("NodePorts", pod({ ports = { { containerPort = 80, hostPort = 8081 } } })))
    assert.are_not.equal(a, frag("NodePorts", pod()))
  end)

  it("NodeName signs spec.nodeName", function()
    assert.are.equal(frag("NodeName", pod({ node_name = "n1" })), frag("NodeName", pod({ node_name = "n1" })))
    assert.are_not.equal(frag("NodeName", pod({ node_name = "n1" })), frag("NodeName", pod({ node_name = "n2" })))
  end)

  it("ImageLocality signs the containers' normalized images, not image volumes", function()
    local function img(image, volumes)
      return frag("ImageLocality", { name = "p", containers = { { image = image, requests = { cpu = "1" } } },
        spec = { volumes = volumes } })
    end
    local with_tag = img("app:latest")
    assert.are.equal(with_tag, img("app"))
    assert.are_not.equal(with_tag, img("app:2"))
    assert.are.equal(with_tag, img("app", { { name = "m", image = { reference = "model:1" } } }))
  end)

  it("InterPodAffinity: pod (anti-)affinity is unsignable, otherwise the labels", function()
    local anti = { podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = {
      { labelSelector = { matchLabels = { app = "x" } }, topologyKey = "kubernetes.io/hostname" } } } }
    local f, why = frag("InterPodAffinity", pod({ affinity = anti }))
    assert.is_false(f)
    assert.are.equal("pods with pod affinity or anti-affinity are not signable", why)
    assert.are.equal(frag("InterPodAffinity", pod({ labels = { app = "x" } })),
      frag("InterPodAffinity", pod({ name = "q", labels = { app = "x" } })))
    assert.are_not.equal(frag("InterPodAffinity", pod({ labels = { app = "x" } })),
      frag("InterPodAffinity", pod({ labels = { app = "y" } })))
    -- upstream's SignPod (KEP-5598, #134916) does not read the plugin's args:
    -- with ignorePreferredTermsOfExistingPods the labels are still signed
    -- (existing pods' required anti-affinity still matches them at Filter),
    -- and pod (anti-)affinity is still unsignable
    local ignoring = { ignorePreferredTermsOfExistingPods = true }
    assert.are.equal(frag("InterPodAffinity", pod({ labels = { app = "x" } })),
      frag("InterPodAffinity", pod({ labels = { app = "x" } }), ignoring))
    assert.are_not.equal(frag("InterPodAffinity", pod({ labels = { app = "x" } }), ignoring),
      frag("InterPodAffinity", pod({ labels = { app = "y" } }), ignoring))
    assert.is_false((frag("InterPodAffinity", pod({ affinity = anti }), ignoring)))
  end)

  it("PodTopologySpread: unsignable with constraints or default constraints, else no fragment", function()
    local f, why, every_pod = frag("PodTopologySpread", pod())
    assert.is_false(f)
    assert.are.equal("pods with default topology constraints are not signable", why)
    assert.is_true(every_pod)   -- the same for every pod: the profile is not asked again
    local list = { defaultingType = "List", defaultConstraints = {} }
    assert.is_nil(frag("PodTopologySpread", pod(), list))
    local spread = { { maxSkew = 1, topologyKey = "zone", whenUnsatisfiable = "ScheduleAnyway",
      labelSelector = { matchLabels = { app = "x" } } } }
    f, why, every_pod = frag("PodTopologySpread", pod({ spec = { topologySpreadConstraints = spread } }), list)
    assert.is_false(f)
    assert.are.equal("pods with topology constraints are not signable", why)
    assert.is_nil(every_pod)
  end)

  it("DynamicResources: a pod with resource claims is unsignable, else no fragment", function()
    assert.is_nil(frag("DynamicResources", pod()))
    local f, why = frag("DynamicResources", pod({ spec = { resourceClaims = { { name = "gpu",
      resourceClaimName = "c1" } } } }))
    assert.is_false(f)
    assert.are.equal("pods with dra resource claims are not signable", why)
  end)

  it("the volume plugins sign the non-synthetic volumes", function()
    local pvc = { { name = "data", persistentVolumeClaim = { claimName = "c1" } } }
    for _, name in ipairs({ "VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits" }) do
      local a = frag(name, pod({ spec = { volumes = pvc } }))
      assert.are.equal(a, frag(name, pod({ name = "q", spec = { volumes = pvc } })))
      assert.are_not.equal(a, frag(name, pod({ spec = { volumes = {
        { name = "data", persistentVolumeClaim = { claimName = "c2" } } } } })))
      assert.are_not.equal(a, frag(name, pod()))
    end
  end)
end)

describe("luasched.sign", function()
  local function profile(names, args)
    local prof = { points = { filter = {}, score = {} } }
    for _, n in ipairs(names) do
      local inst = T.plugin(n, args and args[n])
      if inst.filter then prof.points.filter[#prof.points.filter + 1] = inst end
      if inst.score then prof.points.score[#prof.points.score + 1] = inst end
    end
    return prof
  end

  it("joins the fragments: equal pods share the signature, a different field does not", function()
    local prof = profile({ "NodeResourcesFit", "NodeAffinity", "TaintToleration" })
    local a = sign.sign(prof, T.pod(T.pod_object(pod())), pcall)
    assert.are.equal(a, sign.sign(prof, T.pod(T.pod_object(pod({ name = "q" }))), pcall))
    assert.are_not.equal(a, sign.sign(prof, T.pod(T.pod_object(pod({ node_selector = { os = "linux" } }))), pcall))
  end)

  it("a plugin without a sign hook turns batching off for the profile", function()
    local prof = profile({ "NodeResourcesFit" })
    prof.points.filter[#prof.points.filter + 1] = { name = "Custom", filter = function() end }
    local sig, why, every_pod = sign.sign(prof, T.pod(T.pod_object(pod())), pcall)
    assert.is_nil(sig)
    assert.are.equal("plugin Custom does not sign pods", why)
    assert.is_true(every_pod)
  end)

  it("one unsignable fragment makes the pod unsignable", function()
    local prof = profile({ "NodeResourcesFit", "PodTopologySpread" })
    local sig, why = sign.sign(prof, T.pod(T.pod_object(pod())), pcall)
    assert.is_nil(sig)
    assert.are.equal("PodTopologySpread: pods with default topology constraints are not signable", why)
  end)
end)
