-- VolumeRestrictions: a pod cannot share a ReadWriteOncePod claim with a pod
-- already placed, nor mount an in-tree disk (GCE PD, AWS EBS, RBD, iSCSI) that
-- a pod on the node already mounts in a conflicting way.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/volumerestrictions/
-- volume_restrictions.go (v1.37, unchanged since v1.30):
-- * PreFilter: Skip unless the pod has a GCE PD, AWS EBS, RBD, iSCSI or
--   persistentVolumeClaim volume. Each claim is read: a missing one is
--   UnschedulableAndUnresolvable `persistentvolumeclaim "<name>" not found`.
--   The claims with the ReadWriteOncePod access mode are kept, and the cycle
--   state counts those already used by a pod placed on any node
--   (StorageInfos().IsPVCUsedByPods, one per claim).
-- * AddPod/RemovePod (preemption, nominated pods): the count moves by the
--   pod's persistentVolumeClaim volumes naming one of those claims.
-- * Filter: a disk conflict with a pod on the node -> Unschedulable
--   "node(s) had no available disk" (same GCE pdName unless both read-only;
--   same EBS volumeID; same iSCSI IQN unless both read-only; RBD sharing a
--   monitor, the pool and the image unless both read-only); then a count
--   above 0 -> Unschedulable "node has pod using PersistentVolumeClaim with
--   the same name and ReadWriteOncePod access mode". Both are Unschedulable:
--   preemption may remove the pod holding the disk or the claim.
-- * Events (with queueing hints, as upstream registers them): Pod Delete
--   (Queue when the deleted pod, same namespace, had a conflicting disk or a
--   claim of the pod), Node Add, PersistentVolumeClaim Add (Queue when the
--   pod uses it).
-- Deviation: the claims in use are counted by walking the placed pods in
-- PreFilter (upstream keeps a set in its snapshot), only for pods that have a
-- ReadWriteOncePod claim.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("VolumeRestrictions")

local ERR_DISK_CONFLICT = "node(s) had no available disk"
local ERR_RWOP_CONFLICT =
  "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

local VOL_PVC, VOL_GCE_PD, VOL_AWS_EBS = ls.VOL_PVC, ls.VOL_GCE_PD, ls.VOL_AWS_EBS
local VOL_ISCSI, VOL_RBD = ls.VOL_ISCSI, ls.VOL_RBD

local function needs_check(v)
  local s = v.source
  return s == VOL_PVC or s == VOL_GCE_PD or s == VOL_AWS_EBS or s == VOL_ISCSI or s == VOL_RBD
end

local function monitors_overlap(a, b)
  for i = 0, a.n_monitors - 1 do
    for j = 0, b.n_monitors - 1 do
      if a.monitors[i] == b.monitors[j] then return true end
    end
  end
  return false
end

-- isVolumeConflict for one volume of the pod against one volume of another pod.
local function conflicts(v, e)
  local s = v.source
  if s ~= e.source then return false end
  local both_ro = v.read_only ~= 0 and e.read_only ~= 0
  if s == VOL_GCE_PD or s == VOL_ISCSI then return v.handle == e.handle and not both_ro end
  if s == VOL_AWS_EBS then return v.handle == e.handle end
  if s == VOL_RBD then
    return v.handle == e.handle and v.pool == e.pool and not both_ro and monitors_overlap(v, e)
  end
  return false
end

local function disk_conflict(pod, other)
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    local s = v.source
    if s == VOL_GCE_PD or s == VOL_AWS_EBS or s == VOL_ISCSI or s == VOL_RBD then
      for j = 0, other.n_volumes - 1 do
        if conflicts(v, other.volumes[j]) then return true end
      end
    end
  end
  return false
end

local function has_mode(pvc, mode)
  for _, m in ipairs(pvc.spec and pvc.spec.accessModes or {}) do
    if m == mode then return true end
  end
  return false
end

function P:init()
  self.disk_conflict = ls.unschedulable(ERR_DISK_CONFLICT)
  self.rwop_conflict = ls.unschedulable(ERR_RWOP_CONFLICT)
  self.not_found = {}
end

local function not_found_status(name)
  return ls.unresolvable(string.format('persistentvolumeclaim "%s" not found', ls.str(name)))
end

function P:claim_not_found(name)
  return ls.memo(self.not_found, name, not_found_status)
end

-- How many of the pod's persistentVolumeClaim volumes name a claim of the set.
local function uses(set, other)
  local n = 0
  for j = 0, other.n_volumes - 1 do
    local v = other.volumes[j]
    if v.source == VOL_PVC and set[v.claim] then n = n + 1 end
  end
  return n
end

-- Claims of the set used by pods placed on any node, one per claim.
local function claims_in_use(ns, set)
  local used = {}
  local nodes, n = ls.all_nodes()
  for i = 0, n - 1 do
    local ni = nodes[i]
    for k = 0, ni.num_pods - 1 do
      local other = ni.pods[k]
      if other.ns == ns and other.n_volumes > 0 then
        for j = 0, other.n_volumes - 1 do
          local v = other.volumes[j]
          if v.source == VOL_PVC and set[v.claim] then used[v.claim] = true end
        end
      end
    end
  end
  local count = 0
  for _ in pairs(used) do count = count + 1 end
  return count
end

function P:pre_filter(state, pod)
  local check = false
  for i = 0, pod.n_volumes - 1 do
    if needs_check(pod.volumes[i]) then check = true; break end
  end
  if not check then return ls.skip end
  local rwop, any, disks = {}, false, false
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    disks = disks or v.source ~= VOL_PVC
    if v.source == VOL_PVC then
      local o = ls.find_object("PersistentVolumeClaim", pod.ns, v.claim)
      if o == nil then return self:claim_not_found(v.claim) end
      if has_mode(ls.object_data(o), "ReadWriteOncePod") then rwop[v.claim], any = true, true end
    end
  end
  state[self.name] = { rwop = rwop, conflicts = any and claims_in_use(pod.ns, rwop) or 0, disks = disks }
  return nil
end

function P:add_pod(state, _, other)
  local s = state[self.name]
  if s then s.conflicts = s.conflicts + uses(s.rwop, other) end
end

function P:remove_pod(state, _, other)
  local s = state[self.name]
  if s then s.conflicts = s.conflicts - uses(s.rwop, other) end
end

function P:clone_state(entry)
  return { rwop = entry.rwop, conflicts = entry.conflicts, disks = entry.disks }
end

function P:filter(state, pod, ni)
  local s = state[self.name]
  if s == nil or s.disks then   -- only a pod with an in-tree disk can conflict on one
    for k = 0, ni.num_pods - 1 do
      if disk_conflict(pod, ni.pods[k]) then return self.disk_conflict end
    end
  end
  if s and s.conflicts > 0 then return self.rwop_conflict end
  return nil
end

-- ---- queueing hints -------------------------------------------------------

local function shares_claim(pod, other)
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_PVC then
      for j = 0, other.n_volumes - 1 do
        local e = other.volumes[j]
        if e.source == VOL_PVC and e.claim == v.claim then return true end
      end
    end
  end
  return false
end

local function after_pod_deleted(pod, old)
  if old == nil or old.ns ~= pod.ns then return ls.QUEUE_SKIP end
  if disk_conflict(pod, old) or shares_claim(pod, old) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_claim_added(pod, _, new)
  if new == nil or new.ns ~= pod.ns then return ls.QUEUE_SKIP end
  return ls.pod_uses_claim(pod, new.name) and ls.QUEUE or ls.QUEUE_SKIP
end

P.events = {
  { resource = "Pod", action = "Delete", hint = after_pod_deleted },
  { resource = "Node", action = "Add" },
  { resource = "PersistentVolumeClaim", action = "Add", hint = after_claim_added },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- VolumeRestrictions: the non-synthetic volume sources (VolumesSignerName).
function P:sign(pod) return signers.volumes(pod) end

return P
