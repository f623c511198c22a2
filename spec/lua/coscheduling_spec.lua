-- Coscheduling (plugins/policies/coscheduling.lua): scheduler-plugins'
-- PodGroup gang scheduling. Expected texts and numbers are upstream's
-- (pkg/coscheduling: PreFilter's and PostFilter's messages, Permit's
-- minMember rule, the 10 % PostFilter gap, CoschedulingArgs' defaults and
-- validation); whole-cluster behaviour is in spec/scenarios/coscheduling-*.yaml.
local T = require("luasched.testing")
local ls = require("luasched")

local PODGROUPS = "podgroups.v1alpha1.scheduling.x-k8s.io"
local LABEL = "scheduling.x-k8s.io/pod-group"

local function member(name, group, node, extra)
  local d = { name = name, node_name = node, labels = { [LABEL] = group } }
  for k, v in pairs(extra or {}) do d[k] = v end
  return T.pod(d)
end

local function pod_group(name, spec, created)
  return { apiVersion = "scheduling.x-k8s.io/v1alpha1", kind = "PodGroup",
           metadata = { name = name, namespace = "default", creationTimestamp = created }, spec = spec }
end

local function one_node(spec)
  spec.nodes = { { name = "n1", allocatable = { cpu = "4", memory = "8Gi" } } }
  return T.cluster(spec)
end

describe("Coscheduling", function()
  it("has CoschedulingArgs' defaults and validation", function()
    assert.are.same({ permitWaitingTimeSeconds = 60, podGroupBackoffSeconds = 0, podGroupRejectPercentage = 10 },
      T.plugin("Coscheduling").args)
    local P = require("luasched.loader").load("Coscheduling")
    local ok = { permitWaitingTimeSeconds = 60, podGroupBackoffSeconds = 0, podGroupRejectPercentage = 10 }
    assert.is_nil(P.validate(ok))
    local function with(k, v)
      local a = {}
      for kk, vv in pairs(ok) do a[kk] = vv end
      a[k] = v
      return P.validate(a)
    end
    assert.are.equal("permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0",
      with("permitWaitingTimeSeconds", -1))
    assert.are.equal("podGroupBackoffSeconds: Invalid value: -5: must be greater than 0",
      with("podGroupBackoffSeconds", -5))
    assert.are.equal("podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100",
      with("podGroupRejectPercentage", 101))
  end)

  it("sorts by priority, then the PodGroup's creation, keeping a group together", function()
    local c = one_node { objects = {
      pod_group("early", { minMember = 2 }, "2026-01-01T00:00:00Z"),
      pod_group("late", { minMember = 2 }, "2026-01-01T00:00:10Z") } }
    local p = T.plugin("Coscheduling")
    local e1, e2 = member("e1", "early"), member("e2", "early")
    local l1 = member("l1", "late", nil, { created = "2025-01-01T00:00:00Z" })
    local high = member("h", "late", nil, { priority = 10 })
    local solo = T.pod { name = "solo", created = "2026-01-01T00:00:05Z" }
    c:attach(e1)
    assert.is_true(p:less(high, e1))                 -- priority first
    assert.is_true(p:less(e2, l1))                   -- the group's time, not the pod's
    assert.is_true(p:less(e1, e2))                   -- then namespace/name
    assert.is_false(p:less(e2, e1))
    assert.is_true(p:less(e1, solo))                 -- 00:00:00 before 00:00:05
    assert.is_true(p:less(solo, l1))                 -- 00:00:05 before 00:00:10
    assert.is_true(p:less(member("p10", "early"), member("p2", "early")))   -- names compare as text
  end)

  describe("PreFilter", function()
    it("needs minMember pods of the group", function()
      local c = one_node { objects = { pod_group("job", { minMember = 3 }) },
                           pods = { member("p1", "job", "n1") } }
      local st = T.pre_filter(T.plugin("Coscheduling"), c, member("p2", "job"))
      assert.are.equal(ls.UNRESOLVABLE, st.code)
      assert.are.equal("pre-filter pod p2 cannot find enough sibling pods, current pods number: 2, "
        .. "minMember of group: 3", st.message)
      local c3 = one_node { objects = { pod_group("job", { minMember = 3 }) },
                            pods = { member("p1", "job", "n1"), member("p2", "job", "n1") } }
      assert.are.equal(ls.SUCCESS, T.pre_filter(T.plugin("Coscheduling"), c3, member("p3", "job")).code)
    end)

    it("lets pods without a group, or without a PodGroup, through", function()
      local c = one_node {}
      local p = T.plugin("Coscheduling")
      assert.are.equal(ls.SUCCESS, T.pre_filter(p, c, T.pod { name = "solo" }).code)
      assert.are.equal(ls.SUCCESS, T.pre_filter(p, c, member("x", "missing")).code)
    end)

    it("checks minResources against the cluster's free resources", function()
      local c = one_node { objects = { pod_group("big", { minMember = 1, minResources = { cpu = "6" } }),
                                       pod_group("fits", { minMember = 1, minResources = { cpu = "3500m" } }) } }
      local p = T.plugin("Coscheduling")
      local st = T.pre_filter(p, c, member("b", "big"))
      assert.are.equal(ls.UNRESOLVABLE, st.code)
      assert.are.equal("resource gap: cpu=2000", st.message)   -- 6000m wanted, 4000m free
      assert.are.equal(ls.SUCCESS, T.pre_filter(p, c, member("f", "fits")).code)
    end)
  end)

  describe("PostFilter", function()
    it("rejects the group and backs it off for podGroupBackoffSeconds", function()
      local c = one_node { objects = { pod_group("job", { minMember = 2 }) }, pods = { member("p1", "job", "n1") } }
      local p = T.plugin("Coscheduling", { podGroupBackoffSeconds = 10 })
      local pod = member("p2", "job")
      c:attach(pod)
      local st = T.result(p:post_filter({}, pod))
      assert.are.equal(ls.UNSCHEDULABLE, st.code)
      -- 1 assigned of 2: (2 - 1) / 2 = 50 % missing, more than 10 %
      assert.are.equal("PodGroup default/job gets rejected due to Pod p2 is unschedulable even after PostFilter",
        st.message)
      st = T.pre_filter(p, c, pod)
      assert.are.equal(ls.UNRESOLVABLE, st.code)
      assert.are.equal("podGroup default/job failed recently", st.message)
    end)

    it("leaves the group alone when at most podGroupRejectPercentage of it is missing", function()
      local pods = {}
      for i = 1, 9 do pods[i] = member("p" .. i, "job", "n1") end
      local c = T.cluster { nodes = { { name = "n1", allocatable = { cpu = "40" } } },
                            objects = { pod_group("job", { minMember = 10 }) }, pods = pods }
      local pod = member("p10", "job")
      c:attach(pod)
      local st = T.result(T.plugin("Coscheduling"):post_filter({}, pod))
      assert.are.equal(ls.UNSCHEDULABLE, st.code)
      assert.are.equal("", st.message)                  -- (10 - 9) / 10 = 10 %: not more than 10
      st = T.result(T.plugin("Coscheduling", { podGroupRejectPercentage = 5 }):post_filter({}, pod))
      assert.are.equal("PodGroup default/job gets rejected due to Pod p10 is unschedulable even after PostFilter",
        st.message)
    end)

    it("says so for a pod without PodGroup", function()
      local c = one_node {}
      local pod = member("x", "missing")
      c:attach(pod)
      assert.are.equal("can not find pod group", T.result(T.plugin("Coscheduling"):post_filter({}, pod)).message)
    end)
  end)

  describe("Permit", function()
    it("waits permitWaitingTimeSeconds, or the PodGroup's scheduleTimeoutSeconds", function()
      local c = one_node { objects = { pod_group("job", { minMember = 3 }),
                                       pod_group("quick", { minMember = 3, scheduleTimeoutSeconds = 5 }) } }
      local p = T.plugin("Coscheduling")
      local st = T.node_hook(p, "permit", c, member("p1", "job"), "n1")
      assert.are.equal(ls.WAIT, st.code)
      assert.are.equal(60, st.status.timeout)
      assert.are.equal(5, T.node_hook(p, "permit", c, member("q1", "quick"), "n1").status.timeout)
    end)

    it("allows the pod completing minMember (assigned + 1)", function()
      local c = one_node { objects = { pod_group("job", { minMember = 3 }) },
                           pods = { member("p1", "job", "n1"), member("p2", "job", "n1") } }
      assert.are.equal(ls.SUCCESS, T.node_hook(T.plugin("Coscheduling"), "permit", c, member("p3", "job"), "n1").code)
    end)

    it("refuses a member whose PodGroup is missing", function()
      local st = T.node_hook(T.plugin("Coscheduling"), "permit", one_node {}, member("x", "missing"), "n1")
      assert.are.equal(ls.UNSCHEDULABLE, st.code)
      assert.are.equal("PodGroup not found", st.message)
    end)
  end)

  describe("events", function()
    local p
    setup(function() p = T.plugin("Coscheduling") end)

    it("registers Pod/Add and PodGroup Add/Update, and AssignedPod/Delete for rejected groups", function()
      assert.are.same({ "Pod:Add", "AssignedPod:Delete", PODGROUPS .. ":Add|Update" }, T.events(p))
    end)

    it("queues on a pod or PodGroup of the same group only", function()
      local pod = member("p1", "job")
      assert.are.equal(ls.QUEUE, T.hint(p, "Pod", "Add", pod, nil, member("p2", "job")))
      assert.are.equal(ls.QUEUE_SKIP, T.hint(p, "Pod", "Add", pod, nil, member("q", "other")))
      local c = one_node {}
      local job = c:add_object(pod_group("job", { minMember = 1 }))
      assert.are.equal(ls.QUEUE, T.hint(p, PODGROUPS, "Add", pod, nil, job))
      assert.are.equal(ls.QUEUE_SKIP,
        T.hint(p, PODGROUPS, "Update", pod, nil, c:add_object(pod_group("other", { minMember = 1 }))))
    end)
  end)
end)
