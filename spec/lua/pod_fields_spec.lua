-- The pod and node fields policy plugins read (annotations, containers one by
-- one, ports, spec.resources, overhead, conditions, allocated resources, QoS
-- class), from YAML and from the test kit's shorthand. Expected values are
-- worked by hand from the manifests below (cpu in millicores, memory in bytes).
local T = require("luasched.testing")
local ls = require("luasched")

local POD_YAML = [[
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
  annotations:
    example.com/critical: "true"
    scheduling.x-k8s.io/pod-group: team-a
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: train, uid: u-1, controller: true}
spec:
  schedulerName: gang-scheduler
  priority: 100
  preemptionPolicy: Never
  initContainers:
  - name: fetch
    image: busybox
    resources: {requests: {cpu: 200m}}
  - name: proxy
    image: envoy:1.30
    restartPolicy: Always
    resources: {limits: {cpu: 100m, memory: 64Mi}}
    ports: [{name: admin, containerPort: 9901}]
  containers:
  - name: main
    image: trainer:v2
    resources:
      requests: {cpu: "2", memory: 4Gi, example.com/gpu: "1"}
      limits: {memory: 8Gi, example.com/gpu: "1"}
    ports:
    - {name: http, containerPort: 8080}
    - {containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 10.0.0.1}
  overhead: {cpu: 50m}
status:
  phase: Running
  nominatedNodeName: n2
  conditions:
  - {type: PodScheduled, status: "False", reason: Unschedulable}
  - {type: Ready, status: "True"}
  containerStatuses:
  - name: main
    allocatedResources: {cpu: "2", memory: 4Gi}
    resources:
      requests: {cpu: "2", memory: 4Gi}
      limits: {memory: 8Gi}
  allocatedResources: {cpu: 2250m}
]]

describe("pod fields", function()
  local pod = T.pod(POD_YAML)

  it("reads annotations as labels", function()
    assert.are.equal("true", ls.str(ls.label(pod.annotations, ls.intern("example.com/critical"))))
    assert.are.equal("team-a", ls.str(ls.label(pod.annotations, ls.intern("scheduling.x-k8s.io/pod-group"))))
    assert.are.equal(0, ls.label(pod.annotations, ls.intern("absent")))
    assert.are.equal(2, #pod.annotations.items)
  end)

  it("keeps the fields that existed before", function()
    assert.are.equal("gang-scheduler", ls.str(pod.scheduler_name))
    assert.are.equal(100, pod.priority)
    assert.are.equal(1, pod.preemption_policy)   -- LS_PREEMPT_NEVER
    assert.are.equal(1, pod.phase)   -- Running
    assert.are.equal("n2", ls.str(pod.nominated_node_name))
    assert.are.equal("Job", ls.str(pod.owner_refs[0].kind))
    assert.are.equal(1, pod.owner_refs[0].controller)
  end)

  it("lists the containers, init ones first, with their kind", function()
    assert.are.equal(3, pod.n_containers)
    local fetch, proxy, main = pod.containers[0], pod.containers[1], pod.containers[2]
    assert.are.equal("fetch", ls.str(fetch.name))
    assert.are.equal(ls.CONTAINER_INIT, fetch.kind)
    assert.are.equal("proxy", ls.str(proxy.name))
    assert.are.equal(ls.CONTAINER_SIDECAR, proxy.kind)
    assert.are.equal("envoy:1.30", ls.str(proxy.image))
    assert.are.equal("main", ls.str(main.name))
    assert.are.equal(ls.CONTAINER_REGULAR, main.kind)
    assert.are.equal("sidecar", ls.container_kind_name(proxy.kind))
  end)

  it("gives requests (limits copied in where unset) and limits per container", function()
    local proxy, main = pod.containers[1], pod.containers[2]
    -- proxy: only limits, so requests default to them
    assert.are.same({ cpu = 100, memory = 64 * 1024 ^ 2 }, ls.resource_table(proxy.requests))
    assert.are.same({ cpu = 100, memory = 64 * 1024 ^ 2 }, ls.resource_table(proxy.limits))
    assert.are.same({ cpu = 2000, memory = 4 * 1024 ^ 3, ["example.com/gpu"] = 1 }, ls.resource_table(main.requests))
    assert.are.equal(8 * 1024 ^ 3, ls.quantity(main.limits, "memory"))
    assert.is_nil(ls.quantity(main.limits, "cpu"))
    assert.are.equal(1, ls.quantity(main.limits, "example.com/gpu"))
    assert.are.equal(200, ls.quantity(pod.containers[0].requests, ls.RES_CPU))
  end)

  it("lists every port with its container", function()
    assert.are.equal(3, pod.n_ports)
    local admin, http, dns = pod.ports[0], pod.ports[1], pod.ports[2]
    assert.are.equal("admin", ls.str(admin.name))
    assert.are.equal(9901, admin.container_port)
    assert.are.equal(1, admin.container)
    assert.are.equal(8080, http.container_port)
    assert.are.equal(0, http.host_port)
    assert.are.equal(2, http.container)
    assert.are.equal(5353, dns.host_port)
    assert.are.equal(ls.PROTO_UDP, dns.protocol)
    assert.are.equal("10.0.0.1", ls.str(dns.host_ip))
    assert.are.equal(2, #pod.containers[2].ports)
    assert.are.equal(53, pod.containers[2].ports[1].container_port)
    -- host ports stay what NodePorts reads: the one port with a hostPort
    assert.are.equal(1, pod.n_host_ports)
  end)

  it("reads overhead, conditions and allocated resources", function()
    assert.are.equal(0, pod.has_resources)
    assert.are.equal(50, ls.quantity(pod.overhead, "cpu"))
    assert.are.equal(2, pod.n_conditions)
    local st, reason = ls.condition(pod, "PodScheduled")
    assert.are.equal("False", ls.str(st))
    assert.are.equal("Unschedulable", ls.str(reason))
    assert.are.equal("True", ls.str((ls.condition(pod, "Ready"))))
    assert.is_nil(ls.condition(pod, "Initialized"))
    assert.are.equal(1, pod.n_container_statuses)
    local cs = pod.container_statuses[0]
    assert.are.equal("main", ls.str(cs.name))
    assert.are.equal(1, cs.has_allocated)
    assert.are.equal(2000, ls.quantity(cs.allocated, "cpu"))
    assert.are.equal(8 * 1024 ^ 3, ls.quantity(cs.limits, "memory"))
    assert.are.equal(1, pod.has_allocated_resources)
    assert.are.equal(2250, ls.quantity(pod.allocated_resources, "cpu"))
  end)

  it("computes the QoS class: Burstable when cpu requests and limits differ", function()
    assert.are.equal(ls.QOS_BURSTABLE, pod.qos_class)
    assert.are.equal("Burstable", ls.qos_name(pod.qos_class))
  end)
end)

describe("QoS class", function()
  local function qos(desc) return ls.qos_name(T.pod(desc).qos_class) end

  it("is BestEffort with no requests or limits anywhere", function()
    assert.are.equal("BestEffort", qos { containers = { false, false } })
  end)

  it("is Guaranteed when every container's cpu and memory limits equal requests", function()
    local g = { requests = { cpu = "1", memory = "1Gi" }, limits = { cpu = "1", memory = "1Gi" } }
    -- limits alone default the requests to them
    assert.are.equal("Guaranteed", qos { containers = { g, { limits = { cpu = "500m", memory = "1Gi" } } } })
  end)

  it("is Burstable when one container is Guaranteed and another BestEffort", function()
    assert.are.equal("Burstable", qos { containers = { { limits = { cpu = "1", memory = "1Gi" } }, false } })
  end)

  it("is Burstable when only cpu is limited", function()
    assert.are.equal("Burstable", qos { limits = { cpu = "1" } })
  end)

  it("ignores resources other than cpu and memory (BestEffort with only a GPU request)", function()
    assert.are.equal("BestEffort", qos { requests = { ["example.com/gpu"] = "1" } })
  end)

  it("follows pod-level resources when given (requests defaulted from limits)", function()
    local pod = T.pod { requests = { cpu = "100m" },
      resources = { limits = { cpu = "1", memory = "2Gi" } } }
    assert.are.equal(1, pod.has_resources)
    -- cpu: the containers' aggregate request (100m); memory: the limit (no container asks)
    assert.are.same({ cpu = 100, memory = 2 * 1024 ^ 3 }, ls.resource_table(pod.resources_requests))
    assert.are.equal("Burstable", ls.qos_name(pod.qos_class))
    local g = T.pod { containers = { false }, resources = { limits = { cpu = "1", memory = "2Gi" } } }
    assert.are.equal("Guaranteed", ls.qos_name(g.qos_class))
  end)

  it("takes status.qosClass when the pod reports it", function()
    assert.are.equal("Guaranteed", qos { qos_class = "Guaranteed" })
  end)

  it("names the field of a wrong status.qosClass", function()
    local ok, err = pcall(T.pod, { name = "q", qos_class = "Gold" })
    assert.is_false(ok)
    assert.matches("pod default/q: status.qosClass: expected one of BestEffort, Burstable, Guaranteed", err, 1, true)
  end)
end)

describe("node fields", function()
  local node = T.node [[
apiVersion: v1
kind: Node
metadata:
  name: n1
  annotations: {example.com/cpu-util: "37", node.alpha.kubernetes.io/ttl: "0"}
status:
  allocatable: {cpu: "4"}
  conditions:
  - {type: Ready, status: "True"}
  - {type: MemoryPressure, status: "False"}
]]

  it("reads annotations and conditions", function()
    assert.are.equal("37", ls.str(ls.label(node.annotations, ls.intern("example.com/cpu-util"))))
    assert.are.equal(2, node.annotations.n)
    assert.are.equal("False", ls.str((ls.condition(node, "MemoryPressure"))))
    local _, reason = ls.condition(node, "Ready")
    assert.are.equal(0, reason)
  end)

  it("names the line and field of a bad annotation", function()
    local ok, err = pcall(T.node, "metadata:\n  name: n2\n  annotations:\n    a: [1]\n")
    assert.is_false(ok)
    assert.matches("node n2: metadata.annotations: a: expected a string", err, 1, true)
  end)

  it("builds the status and spec scalars from the shorthand", function()
    local p = T.pod { name = "s", phase = "Running", nominated_node_name = "n7", preemption_policy = "Never",
      priority = 5, owner_references = { { apiVersion = "apps/v1", kind = "ReplicaSet", name = "rs", uid = "u",
      controller = true } }, resources = { requests = { cpu = "1" }, limits = { cpu = "2" } },
      overhead = { memory = "1Mi" }, status = { allocatedResources = { cpu = "1" } } }
    assert.are.equal(1, p.phase)
    assert.are.equal("n7", ls.str(p.nominated_node_name))
    assert.are.equal(1, p.preemption_policy)
    assert.are.equal("ReplicaSet", ls.str(p.owner_refs[0].kind))
    assert.are.equal(2000, ls.quantity(p.resources_limits, "cpu"))
    assert.are.equal(1000, ls.quantity(p.resources_requests, "cpu"))
    assert.are.equal(1024 * 1024, ls.quantity(p.overhead, "memory"))
    assert.are.equal(1000, ls.quantity(p.allocated_resources, "cpu"))
  end)

  it("builds annotations and conditions from the shorthand", function()
    local n = T.node { name = "n3", annotations = { x = "1" }, conditions = { { type = "Ready" } } }
    assert.are.equal("1", ls.str(ls.label(n.annotations, ls.intern("x"))))
    assert.are.equal("True", ls.str((ls.condition(n, "Ready"))))
    local p = T.pod { name = "p", annotations = { y = "2" }, ports = { { containerPort = 80 } },
      conditions = { { type = "PodScheduled", status = "False", reason = "Unschedulable" } } }
    assert.are.equal("2", ls.str(ls.label(p.annotations, ls.intern("y"))))
    assert.are.equal(80, p.ports[0].container_port)
    assert.are.equal("Unschedulable", ls.str(select(2, ls.condition(p, "PodScheduled"))))
  end)
end)
