-- VolumeZone: a pod whose bound PersistentVolumes carry zone or region labels
-- fits only nodes in those zones and regions.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/volumezone/volume_zone.go
-- (v1.37; unchanged in substance since v1.30):
-- * PreFilter: for each persistentVolumeClaim volume of the pod: an empty
--   claim name -> UnschedulableAndUnresolvable "PersistentVolumeClaim had no
--   name"; a missing claim -> `persistentvolumeclaim "<name>" not found`. An
--   unbound claim (no spec.volumeName) is skipped when its class binds
--   WaitForFirstConsumer; without a class name -> "PersistentVolumeClaim had
--   no pv name and storageClass name"; a missing class ->
--   `storageclass.storage.k8s.io "<name>" not found`; a class without
--   volumeBindingMode -> `VolumeBindingMode not set for StorageClass "<name>"`;
--   an Immediate one -> "PersistentVolume had no name". A missing volume ->
--   `persistentvolume "<name>" not found`. All UnschedulableAndUnresolvable.
--   The volume's labels failure-domain.beta.kubernetes.io/zone, .../region,
--   topology.kubernetes.io/zone, .../region (values split on "__") are kept;
--   none -> Skip.
-- * Filter: a node with none of the four labels passes (a single-zone
--   cluster); otherwise each kept label must be on the node (a beta key
--   also matches the node's GA key) with one of the values, else
--   UnschedulableAndUnresolvable "node(s) had no available volume zone".
-- * Events: StorageClass Add; Node Add, UpdateNodeLabel, UpdateNodeTaint;
--   PersistentVolumeClaim Add/Update (Queue when the pod uses the claim);
--   PersistentVolume Add/Update.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("VolumeZone")

local ERR_CONFLICT = "node(s) had no available volume zone"
local VOL_PVC = ls.VOL_PVC

local BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
local ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
local TOPOLOGY_LABELS = { BETA_ZONE, BETA_REGION, ZONE, REGION }
local GA_OF = { [BETA_ZONE] = ZONE, [BETA_REGION] = REGION }
local TOPOLOGY_IDS = {}
for i, key in ipairs(TOPOLOGY_LABELS) do TOPOLOGY_IDS[i] = ls.intern(key) end

function P:init()
  self.conflict = ls.unresolvable(ERR_CONFLICT)
  self.messages = {}
end

-- An UnschedulableAndUnresolvable status per distinct message, built once.
function P:unresolvable(msg)
  return ls.memo(self.messages, msg, ls.unresolvable)
end

local function claim_class(pvc)
  local ann = pvc.metadata and pvc.metadata.annotations
  local beta = ann and ann["volume.beta.kubernetes.io/storage-class"]
  if beta then return beta end
  return pvc.spec and pvc.spec.storageClassName or ""
end

-- LabelZonesToSet: the values of a zone label ("a__b" is two zones), as ids.
local function zone_set(value)
  local set = {}
  for zone in (value .. "__"):gmatch("(.-)__") do
    if zone ~= "" then set[ls.intern(zone)] = true end
  end
  return set
end

-- The topology terms of a bound claim's volume, or a status.
function P:volume_topologies(pv_name, out)
  local o = ls.find_object("PersistentVolume", nil, pv_name)
  if o == nil then return self:unresolvable(string.format('persistentvolume "%s" not found', pv_name)) end
  local labels = ls.object_data(o).metadata.labels or {}
  for i, key in ipairs(TOPOLOGY_LABELS) do
    local value = labels[key]
    if value then
      out[#out + 1] = { key = TOPOLOGY_IDS[i], ga = ls.intern(GA_OF[key] or key), values = zone_set(value) }
    end
  end
  return nil
end

-- Whether an unbound claim is skipped (WaitForFirstConsumer), or its status.
function P:unbound_claim(pvc)
  local class_name = claim_class(pvc)
  if class_name == "" then
    return false, self:unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
  end
  local o = ls.find_object("StorageClass", nil, class_name)
  if o == nil then
    return false, self:unresolvable(string.format('storageclass.storage.k8s.io "%s" not found', class_name))
  end
  local mode = ls.object_data(o).volumeBindingMode
  if mode == nil then
    return false, self:unresolvable(string.format('VolumeBindingMode not set for StorageClass "%s"', class_name))
  end
  if mode == "WaitForFirstConsumer" then return true end
  return false, self:unresolvable("PersistentVolume had no name")
end

function P:pre_filter(state, pod)
  local any = false
  for i = 0, pod.n_volumes - 1 do
    if pod.volumes[i].source == VOL_PVC then any = true; break end
  end
  if not any then return ls.skip end
  local topologies = {}
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_PVC then
      local name = ls.str(v.claim)
      if name == "" then return self:unresolvable("PersistentVolumeClaim had no name") end
      local o = ls.find_object("PersistentVolumeClaim", pod.ns, v.claim)
      if o == nil then return self:unresolvable(string.format('persistentvolumeclaim "%s" not found', name)) end
      local pvc = ls.object_data(o)
      local pv_name = pvc.spec and pvc.spec.volumeName or ""
      if pv_name == "" then
        local skip, st = self:unbound_claim(pvc)
        if not skip then return st end
      else
        local st = self:volume_topologies(pv_name, topologies)
        if st then return st end
      end
    end
  end
  if #topologies == 0 then return ls.skip end
  state[self.name] = topologies
  return nil
end

function P:filter(state, _, ni)
  local topologies = state[self.name]
  if topologies == nil then return nil end
  local labels = ni.node.labels
  local constrained = false
  for i = 1, #TOPOLOGY_IDS do
    if ls.has_label(labels, TOPOLOGY_IDS[i]) then constrained = true; break end
  end
  if not constrained then return nil end
  for i = 1, #topologies do
    local t = topologies[i]
    local v = ls.label(labels, t.key)
    if v == 0 then v = ls.label(labels, t.ga) end
    if v == 0 or not t.values[v] then return self.conflict end
  end
  return nil
end

function P:clone_state(entry) return entry end   -- read-only after PreFilter

local function after_claim_change(pod, _, new)
  if new == nil or new.ns ~= pod.ns then return ls.QUEUE_SKIP end
  return ls.pod_uses_claim(pod, new.name) and ls.QUEUE or ls.QUEUE_SKIP
end

P.events = {
  { resource = "StorageClass", action = "Add" },
  { resource = "Node", action = { "Add", "UpdateNodeLabel", "UpdateNodeTaint" } },
  { resource = "PersistentVolumeClaim", action = { "Add", "Update" }, hint = after_claim_change },
  { resource = "PersistentVolume", action = { "Add", "Update" } },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- VolumeZone: the non-synthetic volume sources (VolumesSignerName).
function P:sign(pod) return signers.volumes(pod) end

return P
