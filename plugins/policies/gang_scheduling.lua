-- GangScheduling: all-or-nothing scheduling for the pods of a Workload API
-- PodGroup with a gang policy (upstream Kubernetes, KEP-4671; plugin
-- pkg/scheduler/framework/plugins/gangscheduling/; v1.37 behind the
-- GenericWorkload gate, beta, off by default).
--
-- A pod names its group with spec.schedulingGroup.podGroupName (v1.36+,
-- `pod.pod_group_name`); the PodGroup (scheduling.k8s.io v1beta1, or the
-- older v1alpha3) has spec.schedulingPolicy.gang.minCount, or `basic: {}`
-- for no gang. v1.35's pods name a Workload (scheduling.k8s.io/v1alpha1)
-- with spec.workloadRef {name, podGroup}; its spec.podGroups[] entry of that
-- name carries policy.gang.minCount: read too when the cluster file has it.
--
-- What it does, as upstream:
-- * PreEnqueue: a member whose PodGroup does not exist waits ("waiting for
--   pods's pod group %q to appear in scheduling queue", sic, v1.36/v1.37);
--   while the group has fewer members than minCount (pending, waiting at
--   Permit, assumed or bound) every member waits ("waiting for minCount pods
--   from a gang to appear in scheduling queue"), UnschedulableAndUnresolvable.
-- * Permit: with fewer than minCount members scheduled (assumed or bound,
--   this one included) the pod waits, 5 minutes (permitTimeoutDuration), and
--   the group's pending members are activated; the member that completes the
--   quorum allows every waiting member.
-- * Events: UnscheduledPod/Add and AssignedPod/Add of a member of the same
--   group, PodGroup/Add of the pod's group, PodGroup/Update lowering minCount.
--   luasched's queue emits no UnscheduledPod events about other pending
--   pods: the member whose PreEnqueue completes the quorum activates the
--   members PreEnqueue held instead.
--
-- Deviations (luasched has no PodGroup scheduling cycle, no PodGroup queue
-- entity and no workload manager):
-- * The v1.36+ PodGroup cycle places all members in one cycle and admits the
--   group only if minCount of them fit. Here members are scheduled one by one
--   and held at Permit (the v1.35 mechanism), and PostFilter keeps the
--   all-or-nothing outcome: a member that finds no node rejects the group's
--   pods waiting at Permit ("pod group %q rejected: pod %q is unschedulable"),
--   so they release their nodes at once instead of after the timeout, and two
--   gangs competing for the same nodes cannot hold each other's nodes until
--   the timeout (the deadlock v1.35 had). Run it after DefaultPreemption
--   (multiPoint order), so that preemption is tried first. `rejectOnFailure:
--   false` turns this off (v1.35's behaviour: only the timeout ends the wait).
--   A rejected group is not activated again by its own members at Permit
--   until a new member arrives, its group object changes or it reaches its
--   quorum (else a group that cannot fit is retried without end); its
--   members come back on their events, AssignedPod/Delete (room freed)
--   registered for that.
-- * The Permit timeout is upstream's constant 5 minutes, configurable here as
--   `permitWaitingTimeSeconds` (default 300).
-- * Members pending in the queue are the ones this plugin's PreEnqueue saw
--   (kept by pod id, checked against the queue): a pod held by an earlier
--   PreEnqueue plugin (SchedulingGates) is not counted, where upstream's
--   workload manager counts every pod. Bound members are counted from the
--   last scheduling cycle's snapshot (PreEnqueue runs between cycles). A hot
--   reload starts with no pending members known: they are counted again as
--   they pass PreEnqueue (a retry, an activation).
-- * v1.37 backs off a whole PodGroup (its maximum scaled by the square root of
--   the group size, UNVERIFIED in code); here each member backs off as a pod.
-- * CompositePodGroups (alpha, off) and the PlacementFeasible/PodGroupPostFilter
--   points are not implemented.
-- * In `run`, only v1beta1 PodGroups are watched (what a v1.37 API server
--   serves with GenericWorkload on); v1alpha3 PodGroups and v1alpha1
--   Workloads are read from cluster files (`simulate`) only.
local ls = require("luasched")
local gang = require("gang_common")

local fmt = string.format

local P = ls.plugin("GangScheduling", {
  defaults = { permitWaitingTimeSeconds = 300, rejectOnFailure = true },
})

local PODGROUPS = "podgroups.v1beta1.scheduling.k8s.io"
local PODGROUPS_ALPHA = "podgroups.v1alpha3.scheduling.k8s.io"
local WORKLOADS = "workloads.v1alpha1.scheduling.k8s.io"

function P.validate(args)
  local t = args.permitWaitingTimeSeconds
  if t ~= math.floor(t) or t < 1 or t > 900 then
    return fmt("permitWaitingTimeSeconds must be a whole number of seconds from 1 to 900 "
      .. "(Permit's 15-minute maximum), got %s", tostring(t))
  end
end

-- ---- a pod's group -----------------------------------------------------------------

-- "ns/podGroupName" (v1.36+) or "ns/workload/podGroup" (v1.35), or nil.
local function key_of(pod)
  if pod.pod_group_name ~= 0 then return ls.str(pod.ns) .. "/" .. ls.str(pod.pod_group_name) end
  if pod.workload_name ~= 0 then
    return ls.str(pod.ns) .. "/" .. ls.str(pod.workload_name) .. "/" .. ls.str(pod.workload_pod_group)
  end
  return nil
end

-- The name messages show: the PodGroup's, or the Workload's pod group.
local function group_name(pod)
  if pod.pod_group_name ~= 0 then return ls.str(pod.pod_group_name) end
  return ls.str(pod.workload_pod_group)
end

local function gang_min(policy)
  local g = type(policy) == "table" and policy.gang or nil
  if type(g) ~= "table" then return nil end
  return tonumber(g.minCount) or 0
end

-- The group's minCount: a number for a gang, nil when the group's policy is
-- not a gang (basic), false when the group object is missing.
local function lookup_min(pod)
  if pod.pod_group_name ~= 0 then
    local o = ls.find_object(PODGROUPS, pod.ns, pod.pod_group_name)
      or ls.find_object(PODGROUPS_ALPHA, pod.ns, pod.pod_group_name)
    if o == nil then return false end
    local spec = ls.object_data(o).spec or {}
    return gang_min(spec.schedulingPolicy)
  end
  local o = ls.find_object(WORKLOADS, pod.ns, pod.workload_name)
  if o == nil then return false end
  local spec = ls.object_data(o).spec or {}
  local want = ls.str(pod.workload_pod_group)
  for _, g in ipairs(spec.podGroups or {}) do
    if g.name == want then return gang_min(g.policy) end
  end
  return false
end

-- minCount, cached per group until any object changes.
function P:min_count(pod, key)
  local gen = ls.objects_generation()
  if self.min_gen ~= gen then
    self.mins, self.min_gen = {}, gen
    gang.clear_rejections(self.members)
  end
  return ls.memo(self.mins, key, lookup_min, pod)
end

function P:init(args)
  self.timeout = args.permitWaitingTimeSeconds
  self.reject_on_failure = args.rejectOnFailure
  self.members = gang.tracker(key_of)
  self.mins, self.min_gen = {}, nil
  self.no_quorum = ls.unresolvable("waiting for minCount pods from a gang to appear in scheduling queue")
end

-- ---- PreEnqueue ------------------------------------------------------------------

-- Members known outside the queue: waiting at Permit (assumed) and bound.
local function placed(self, key)
  local _, bound = gang.on_nodes(self.members, key)
  return #gang.waiting(self.members, key) + bound
end

function P:pre_enqueue(pod)
  local key = key_of(pod)
  if key == nil then return nil end
  gang.note_pending(self.members, key, pod)
  local min = self:min_count(pod, key)
  if min == false then
    return ls.unresolvable(fmt("waiting for pods's pod group %q to appear in scheduling queue", group_name(pod)))
  end
  if min == nil then return nil end
  local all = gang.each_pending(self.members, key, pod.id) + 1 + placed(self, key)
  if all < min then return self.no_quorum end
  -- With the quorum there, the members held here go back through PreEnqueue
  -- (upstream: the completing member's UnscheduledPod/Add event and hint;
  -- luasched's queue emits no events about other pending pods). Activating
  -- one already active does nothing; a rejected group is not activated.
  gang.activate_pending(self.members, key, pod.id)
  return nil
end

-- ---- PostFilter: the group fails together ------------------------------------------

-- Unschedulable with no reason: it never makes the pod schedulable, and the
-- pod's message stays the nodes' and preemption's.
local NOT_HELPED = ls.unschedulable()

function P:post_filter(_, pod)
  local key = key_of(pod)
  if key == nil or not self.reject_on_failure then return NOT_HELPED end
  if not self:min_count(pod, key) then return NOT_HELPED end
  gang.reject_all(self.members, key, self.name,
    fmt("pod group %q rejected: pod %q is unschedulable", group_name(pod), ls.str(pod.name)))
  return NOT_HELPED
end

-- ---- Permit ------------------------------------------------------------------------

function P:permit(_, pod)
  local key = key_of(pod)
  if key == nil then return nil end
  local min = self:min_count(pod, key)
  if min == false then
    return ls.error(fmt("failed to get podGroup %s/%s from snapshot: not found", ls.str(pod.ns), group_name(pod)))
  end
  if min == nil then return nil end
  gang.refresh(self.members)
  local scheduled = gang.on_nodes(self.members, key) + 1   -- this pod is assumed after the snapshot
  if scheduled < min then
    gang.activate_pending(self.members, key, pod.id)
    return ls.wait(self.timeout)
  end
  gang.allow_all(self.members, key, self.name)
  return nil
end

-- ---- events and hints ----------------------------------------------------------------

-- Compares ids (no string is built: the hint runs for every pod held by this
-- plugin on every pod added).
local function same_group_pod(pod, _, new)
  if new == nil then return ls.QUEUE end
  if pod.ns ~= new.ns then return ls.QUEUE_SKIP end
  if pod.pod_group_name ~= 0 then
    return pod.pod_group_name == new.pod_group_name and ls.QUEUE or ls.QUEUE_SKIP
  end
  if pod.workload_name ~= 0 and pod.workload_name == new.workload_name
      and pod.workload_pod_group == new.workload_pod_group then
    return ls.QUEUE
  end
  return ls.QUEUE_SKIP
end

local function group_key(o)
  return ls.str(o.ns) .. "/" .. ls.str(o.name)
end

local function group_added(pod, _, new)
  if new == nil then return ls.QUEUE end
  if pod.pod_group_name ~= 0 and group_key(new) == key_of(pod) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function group_updated(pod, old, new)
  if old == nil or new == nil then return ls.QUEUE end
  if pod.pod_group_name == 0 or group_key(new) ~= key_of(pod) then return ls.QUEUE_SKIP end
  local before = gang_min((ls.object_data(old).spec or {}).schedulingPolicy)
  local after = gang_min((ls.object_data(new).spec or {}).schedulingPolicy)
  if before == nil or after == nil or after >= before then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

P.events = {
  { resource = "UnscheduledPod", action = { "Add" }, hint = same_group_pod },
  { resource = "AssignedPod", action = { "Add" }, hint = same_group_pod },
  { resource = PODGROUPS, action = { "Add" }, hint = group_added },
  { resource = PODGROUPS, action = { "Update" }, hint = group_updated },
  { resource = "AssignedPod", action = { "Delete" } },
}

return P
