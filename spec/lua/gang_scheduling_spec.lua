-- GangScheduling (plugins/policies/gang_scheduling.lua): the Workload API's
-- gang policy. Expected texts are upstream's (pkg/scheduler/framework/plugins/
-- gangscheduling, v1.36/v1.37: PreEnqueue's two messages, Permit's 5-minute
-- wait); whole-cluster behaviour is in spec/scenarios/gang_scheduling-*.yaml.
local T = require("luasched.testing")
local ls = require("luasched")

local PODGROUPS = "podgroups.v1beta1.scheduling.k8s.io"

-- A pod with extra spec fields (T.pod takes a table with `spec` as a whole object).
local function pod_with(name, spec, node)
  return T.pod(T.pod_object { name = name, node_name = node, spec = spec })
end

local function member(name, group, node)
  return pod_with(name, { schedulingGroup = { podGroupName = group } }, node)
end

local function pod_group(name, policy)
  return { apiVersion = "scheduling.k8s.io/v1beta1", kind = "PodGroup",
           metadata = { name = name, namespace = "default" }, spec = { schedulingPolicy = policy } }
end

local function gang_of(n) return { gang = { minCount = n } } end

describe("GangScheduling", function()
  it("decodes spec.schedulingGroup and v1.35's spec.workloadRef into the pod", function()
    local p = member("p", "job")
    assert.are.equal(ls.intern("job"), p.pod_group_name)
    assert.are.equal(0, p.workload_name)
    local q = pod_with("q", { workloadRef = { name = "train", podGroup = "workers" } })
    assert.are.equal(ls.intern("train"), q.workload_name)
    assert.are.equal(ls.intern("workers"), q.workload_pod_group)
    assert.are.equal(0, q.pod_group_name)
    assert.has_error(function() pod_with("bad", { schedulingGroup = "job" }) end)
  end)

  it("validates its args", function()
    local P = require("luasched.loader").load("GangScheduling")
    assert.is_nil(P.validate({ permitWaitingTimeSeconds = 300, rejectOnFailure = true }))
    assert.are.equal("permitWaitingTimeSeconds must be a whole number of seconds from 1 to 900 "
      .. "(Permit's 15-minute maximum), got 0", P.validate({ permitWaitingTimeSeconds = 0 }))
    assert.is_truthy(P.validate({ permitWaitingTimeSeconds = 901 }))
    assert.is_truthy(P.validate({ permitWaitingTimeSeconds = 1.5 }))
    assert.are.same({ permitWaitingTimeSeconds = 300, rejectOnFailure = true }, T.plugin("GangScheduling").args)
  end)

  describe("PreEnqueue", function()
    local p
    before_each(function() p = T.plugin("GangScheduling") end)

    it("lets a pod without a group through", function()
      local c = T.cluster {}
      local pod = T.pod { name = "solo" }
      c:attach(pod)
      assert.is_nil(p:pre_enqueue(pod))
    end)

    it("holds a member whose PodGroup does not exist (upstream's text, sic)", function()
      local c = T.cluster {}
      local pod = member("p1", "job")
      c:attach(pod)
      local st = T.result(p:pre_enqueue(pod))
      assert.are.equal(ls.UNRESOLVABLE, st.code)
      assert.are.equal('waiting for pods\'s pod group "job" to appear in scheduling queue', st.message)
    end)

    it("holds the members until minCount of them exist", function()
      local c = T.cluster { objects = { pod_group("job", gang_of(2)) } }
      local pod = member("p1", "job")
      c:attach(pod)
      local st = T.result(p:pre_enqueue(pod))
      assert.are.equal(ls.UNRESOLVABLE, st.code)
      assert.are.equal("waiting for minCount pods from a gang to appear in scheduling queue", st.message)
    end)

    it("lets a gang of one, and a basic (non-gang) policy, through", function()
      local c = T.cluster { objects = { pod_group("one", gang_of(1)), pod_group("plain", { basic = {} }) } }
      local a, b = member("a", "one"), member("b", "plain")
      c:attach(a)
      assert.is_nil(p:pre_enqueue(a))
      assert.is_nil(p:pre_enqueue(b))
    end)

    it("reads v1.35's Workload pod groups", function()
      local workload = { apiVersion = "scheduling.k8s.io/v1alpha1", kind = "Workload",
        metadata = { name = "train", namespace = "default" },
        spec = { podGroups = { { name = "workers", policy = { gang = { minCount = 4 } } } } } }
      local c = T.cluster { objects = { workload } }
      local pod = pod_with("w0", { workloadRef = { name = "train", podGroup = "workers" } })
      c:attach(pod)
      assert.are.equal("waiting for minCount pods from a gang to appear in scheduling queue",
        T.result(p:pre_enqueue(pod)).message)
      local other = pod_with("x0", { workloadRef = { name = "train", podGroup = "other" } })
      assert.are.equal('waiting for pods\'s pod group "other" to appear in scheduling queue',
        T.result(p:pre_enqueue(other)).message)
    end)
  end)

  describe("Permit", function()
    it("waits 5 minutes while fewer than minCount members are scheduled", function()
      local c = T.cluster { nodes = { { name = "n1", allocatable = { cpu = "4" } } },
                            objects = { pod_group("job", gang_of(3)) } }
      local p = T.plugin("GangScheduling")
      local st = T.node_hook(p, "permit", c, member("p1", "job"), "n1")
      assert.are.equal(ls.WAIT, st.code)
      assert.are.equal(300, st.status.timeout)
    end)

    it("counts the members already on nodes, and lets the one completing the quorum go", function()
      local c = T.cluster { nodes = { { name = "n1", allocatable = { cpu = "4" } } },
                            pods = { member("p1", "job", "n1"), member("p2", "job", "n1"), member("x", "other", "n1") },
                            objects = { pod_group("job", gang_of(3)) } }
      local p = T.plugin("GangScheduling")
      assert.are.equal(ls.SUCCESS, T.node_hook(p, "permit", c, member("p3", "job"), "n1").code)
      local q = T.plugin("GangScheduling", { permitWaitingTimeSeconds = 20 })
      local c4 = T.cluster { nodes = { { name = "n1", allocatable = { cpu = "4" } } },
                             pods = { member("p1", "job", "n1") }, objects = { pod_group("job", gang_of(3)) } }
      local st = T.node_hook(q, "permit", c4, member("p2", "job"), "n1")
      assert.are.equal(ls.WAIT, st.code)
      assert.are.equal(20, st.status.timeout)
    end)

    it("is an error when the PodGroup is gone (upstream's text)", function()
      local c = T.cluster { nodes = { { name = "n1" } } }
      local st = T.node_hook(T.plugin("GangScheduling"), "permit", c, member("p1", "job"), "n1")
      assert.are.equal(ls.ERROR, st.code)
      assert.are.equal("failed to get podGroup default/job from snapshot: not found", st.message)
    end)
  end)

  it("PostFilter never makes the pod schedulable and adds nothing to its message", function()
    local c = T.cluster { objects = { pod_group("job", gang_of(2)) } }
    local pod = member("p1", "job")
    c:attach(pod)
    local p = T.plugin("GangScheduling")
    local st = T.result(p:post_filter({}, pod))
    assert.are.equal(ls.UNSCHEDULABLE, st.code)
    assert.are.equal("", st.message)
    assert.are.equal(ls.UNSCHEDULABLE, T.result(p:post_filter({}, T.pod { name = "solo" })).code)
  end)

  describe("events", function()
    local p
    setup(function() p = T.plugin("GangScheduling") end)

    it("registers upstream's events, and AssignedPod/Delete for rejected gangs", function()
      assert.are.same({ "UnscheduledPod:Add", "AssignedPod:Add", PODGROUPS .. ":Add", PODGROUPS .. ":Update",
                        "AssignedPod:Delete" }, T.events(p))
    end)

    it("queues on a pod of the same group only", function()
      local pod = member("p1", "job")
      assert.are.equal(ls.QUEUE, T.hint(p, "UnscheduledPod", "Add", pod, nil, member("p2", "job")))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "AssignedPod", "Add", pod, nil, member("q", "other", "n1")))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "UnscheduledPod", "Add", pod, nil, T.pod { name = "solo" }))
    end)

    it("queues on its PodGroup's creation, and on an update lowering minCount", function()
      local c = T.cluster {}
      local before = c:add_object(pod_group("job", gang_of(3)))
      local lower = c:add_object(pod_group("job", gang_of(2)))
      local other = c:add_object(pod_group("other", gang_of(2)))
      local pod = member("p1", "job")
      assert.are.equal(ls.QUEUE, T.hint(p, PODGROUPS, "Add", pod, nil, before))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, PODGROUPS, "Add", pod, nil, other))
      assert.are.equal(ls.QUEUE, T.hint(p, PODGROUPS, "Update", pod, before, lower))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, PODGROUPS, "Update", pod, lower, before))
    end)
  end)
end)
