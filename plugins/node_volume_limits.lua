-- NodeVolumeLimits: a node takes at most as many volumes of a CSI driver as
-- the driver can attach there (CSINode spec.drivers[].allocatable.count).
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodevolumelimits/csi.go
-- (v1.37: VolumeAttachments counted, VolumeLimitScaling beta and on):
-- * PreFilter: Skip unless the pod has a persistentVolumeClaim, an ephemeral
--   or an in-tree volume migrated to CSI (GCE PD, AWS EBS, Azure Disk,
--   Cinder, Portworx).
-- * Filter: the pod's volumes as "<driver>/<handle>": a bound claim's CSI
--   volume (an in-tree volume translated when the node's CSINode says the
--   plugin is migrated), an unbound claim's class provisioner with a handle
--   made from the claim's name, an inline migrated volume. A missing claim ->
--   UnschedulableAndUnresolvable `looking up PVC <ns>/<name>: persistentvolumeclaim
--   "<name>" not found`; an ephemeral claim not owned by the pod -> Error
--   `PVC <ns>/<claim> was not created for pod <ns>/<pod> (pod is not owner)`.
--   No new volume, or no limit on the node -> pass. A driver whose CSIDriver
--   sets preventPodSchedulingIfMissing and that the node's CSINode does not
--   list -> Unschedulable "<driver> CSI driver is not installed on the node".
--   Otherwise the unique volumes of the pods on the node and of the node's
--   VolumeAttachments are counted per driver (a volume the pod shares with
--   them counts once); attached + new above the limit -> Unschedulable
--   "node(s) exceed max volume count" (preemption may free slots).
-- * Limits: CSINode allocatable counts, and the node's allocatable
--   "attachable-volumes-csi-<driver>" resources.
-- * Events (with hints): CSINode Add; CSINode Update (Queue when a driver's
--   count grew); Pod Delete (Queue when the deleted pod had a node and a
--   claim, ephemeral or migrated volume); PersistentVolumeClaim Add (Queue
--   when the pod uses it); VolumeAttachment Delete (Queue when its
--   persistentVolumeName is the volumeName of a claim of the pod, or its inline
--   volume's CSI driver is the one an inline migrated volume of the pod
--   translates to; as upstream's csi_test.go cases, the function itself unread).
-- Deviations: the handle of an unbound claim is "unbound-<ns>/<name>"
-- (upstream prefixes 32 random characters); GCE PD handles use the volume's
-- zone label as csi-translation-lib does, "UNSPECIFIED" without one; limits
-- are keyed by driver name (upstream's attach-limit key hashes names longer
-- than 63 characters). The message for a missing driver follows upstream's
-- package guide (the string itself could not be read in v1.37's source).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeVolumeLimits")

local ERR_MAX_COUNT = "node(s) exceed max volume count"
local VOL_PVC, VOL_EPHEMERAL, VOL_GCE_PD, VOL_AWS_EBS = ls.VOL_PVC, ls.VOL_EPHEMERAL, ls.VOL_GCE_PD, ls.VOL_AWS_EBS
local VOL_AZURE_DISK, VOL_CINDER, VOL_PORTWORX = ls.VOL_AZURE_DISK, ls.VOL_CINDER, ls.VOL_PORTWORX
local MIGRATED_PLUGINS_ANN = "storage.alpha.kubernetes.io/migrated-plugins"
local LIMIT_PREFIX = "attachable-volumes-csi-"

-- In-tree plugins migrated to CSI: plugin name -> CSI driver.
local DRIVER_OF = {
  ["kubernetes.io/gce-pd"] = "pd.csi.storage.gke.io",
  ["kubernetes.io/aws-ebs"] = "ebs.csi.aws.com",
  ["kubernetes.io/azure-disk"] = "disk.csi.azure.com",
  ["kubernetes.io/cinder"] = "cinder.csi.openstack.org",
  ["kubernetes.io/portworx-volume"] = "pxd.portworx.com",
}
local PLUGIN_OF_SOURCE = {
  [VOL_GCE_PD] = "kubernetes.io/gce-pd", [VOL_AWS_EBS] = "kubernetes.io/aws-ebs",
  [VOL_AZURE_DISK] = "kubernetes.io/azure-disk", [VOL_CINDER] = "kubernetes.io/cinder",
  [VOL_PORTWORX] = "kubernetes.io/portworx-volume",
}

local KIND_PVC, KIND_PV, KIND_SC = ls.intern("PersistentVolumeClaim"), ls.intern("PersistentVolume"),
  ls.intern("StorageClass")
local KIND_CSINODE, KIND_CSIDRIVER = ls.intern("CSINode"), ls.intern("CSIDriver")

function P:init()
  self.max_count = ls.unschedulable(ERR_MAX_COUNT)
  self.messages = {}
  self.gen = -1
end

function P:status(code_fn, msg)
  return ls.memo(self.messages, msg, code_fn)
end

-- Everything derived from objects is kept until an object changes.
function P:caches()
  local gen = ls.objects_generation()
  if gen ~= self.gen then
    self.gen = gen
    self.volumes_by_pod = {}   -- pod uid -> csinode key -> { unique = driver }
    self.node_limits = {}      -- node name id -> limits table or false
    self.node_attached = {}    -- node name id -> attached volumes (P:attached)
    self.csinodes = {}         -- node name id -> { data, seq } (P:csinode_of)
    self.prevent = {}          -- driver -> its CSIDriver's preventPodSchedulingIfMissing
    self.attachments = nil     -- node name -> list of VolumeAttachments
  end
end

-- isCSIMigrationOn: a CSINode exists, and for Portworx it lists the plugin.
-- Set when a resolution asked about migration: its result then depends on the node.
local asked_migration = false

local function migration_on(csinode, plugin)
  asked_migration = true
  if csinode == nil or DRIVER_OF[plugin] == nil then return false end
  if plugin ~= "kubernetes.io/portworx-volume" then return true end
  local ann = csinode.metadata.annotations
  local list = ann and ann[MIGRATED_PLUGINS_ANN] or ""
  for name in (list .. ","):gmatch("(.-),") do
    if name == plugin then return true end
  end
  return false
end

local function ebs_volume_id(id)
  if id:sub(1, 6) == "aws://" then return id:match("([^/]*)$") end
  return id
end

local function gce_handle(pd, labels)
  local zone = labels and (labels["topology.kubernetes.io/zone"] or labels["failure-domain.beta.kubernetes.io/zone"])
  if zone and zone:find("__", 1, true) then
    local region = labels["topology.kubernetes.io/region"] or labels["failure-domain.beta.kubernetes.io/region"]
      or "UNSPECIFIED"
    return "projects/UNSPECIFIED/regions/" .. region .. "/disks/" .. pd
  end
  return "projects/UNSPECIFIED/zones/" .. (zone or "UNSPECIFIED") .. "/disks/" .. pd
end

-- A PersistentVolume's CSI driver and handle (in-tree ones translated when migrated).
local function pv_csi(pv, csinode)
  local spec = pv.spec or {}
  if spec.csi then return spec.csi.driver, spec.csi.volumeHandle end
  local labels = pv.metadata and pv.metadata.labels
  local plugin, handle
  if spec.gcePersistentDisk then
    plugin, handle = "kubernetes.io/gce-pd", gce_handle(spec.gcePersistentDisk.pdName or "", labels)
  elseif spec.awsElasticBlockStore then
    plugin, handle = "kubernetes.io/aws-ebs", ebs_volume_id(spec.awsElasticBlockStore.volumeID or "")
  elseif spec.azureDisk then
    plugin, handle = "kubernetes.io/azure-disk", spec.azureDisk.diskURI
  elseif spec.cinder then
    plugin, handle = "kubernetes.io/cinder", spec.cinder.volumeID
  elseif spec.portworxVolume then
    plugin, handle = "kubernetes.io/portworx-volume", spec.portworxVolume.volumeID
  end
  if plugin == nil or not migration_on(csinode, plugin) then return nil end
  return DRIVER_OF[plugin], handle
end

local function claim_class(pvc)
  local ann = pvc.metadata and pvc.metadata.annotations
  return ann and ann["volume.beta.kubernetes.io/storage-class"] or (pvc.spec and pvc.spec.storageClassName) or ""
end

-- getCSIDriverInfoFromSC: an unbound claim counts for its class's driver.
local function class_csi(pvc, csinode)
  local class_name = claim_class(pvc)
  if class_name == "" then return nil end
  local o = ls.find_object(KIND_SC, 0, class_name)
  if o == nil then return nil end
  local provisioner = ls.object_data(o).provisioner or ""
  local handle = "unbound-" .. (pvc.metadata.namespace or "default") .. "/" .. pvc.metadata.name
  if DRIVER_OF[provisioner] then
    if not migration_on(csinode, provisioner) then return nil end
    return DRIVER_OF[provisioner], handle
  end
  return provisioner, handle
end

local function claim_csi(pvc, csinode)
  local pv_name = pvc.spec and pvc.spec.volumeName or ""
  if pv_name == "" then return class_csi(pvc, csinode) end
  local o = ls.find_object(KIND_PV, 0, pv_name)
  if o == nil then return class_csi(pvc, csinode) end
  return pv_csi(ls.object_data(o), csinode)
end

local function inline_csi(v, csinode)
  local plugin = PLUGIN_OF_SOURCE[v.source]
  if plugin == nil or not migration_on(csinode, plugin) then return nil end
  local handle = ls.str(v.handle)
  if v.source == VOL_GCE_PD then handle = gce_handle(handle, nil) end
  if v.source == VOL_AWS_EBS then handle = ebs_volume_id(handle) end
  return DRIVER_OF[plugin], handle
end

local owned_by = ls.controlled_by_pod   -- ephemeral.VolumeIsForPod

-- filterAttachableVolumes: the pod's volumes into out (unique name -> driver).
-- For the pod being scheduled a problem is a status; for pods already on the
-- node, volumes that cannot be resolved are not counted.
function P:attachable(pod, csinode, out, new_pod)
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    local driver, handle
    if v.source == VOL_PVC or v.source == VOL_EPHEMERAL then
      local o = ls.find_object(KIND_PVC, pod.ns, v.claim)
      if o == nil then
        if new_pod then
          local ns, name = ls.str(pod.ns), ls.str(v.claim)
          return self:status(ls.unresolvable, string.format(
            'looking up PVC %s/%s: persistentvolumeclaim "%s" not found', ns, name, name))
        end
      else
        local pvc = ls.object_data(o)
        if v.source == VOL_EPHEMERAL and not owned_by(pvc, pod) then
          if new_pod then
            return self:status(ls.error, string.format("PVC %s/%s was not created for pod %s/%s (pod is not owner)",
              ls.str(pod.ns), ls.str(v.claim), ls.str(pod.ns), ls.str(pod.name)))
          end
        else
          driver, handle = claim_csi(pvc, csinode)
        end
      end
    else
      driver, handle = inline_csi(v, csinode)
    end
    if driver and driver ~= "" and handle and handle ~= "" then out[driver .. "/" .. handle] = driver end
  end
  return nil
end

-- A node's CSINode (decoded) and its version, kept until an object changes.
function P:csinode_of(node_name)
  local c = self.csinodes[node_name]
  if c == nil then
    local o = ls.find_object(KIND_CSINODE, 0, node_name)
    local data = o and ls.object_data(o)
    local ann = data and data.metadata.annotations
    -- nodes with the same key resolve a pod's volumes the same way (P:units_for)
    local key = data and ("+" .. (ann and ann[MIGRATED_PLUGINS_ANN] or "")) or "-"
    c = { data = data or false, seq = o and tonumber(o.seq) or 0, key = key }
    self.csinodes[node_name] = c
  end
  return c.data or nil, c.seq, c.key
end

-- The volumes of a pod already on a node, kept per CSINode version.
function P:pod_volumes(pod, csinode, csinode_seq)
  local per_pod = ls.subtable(self.volumes_by_pod, pod.uid)
  local vols = per_pod[csinode_seq]
  if vols == nil then
    vols = {}
    self:attachable(pod, csinode, vols, false)
    per_pod[csinode_seq] = vols
  end
  return vols
end

-- getVolumeLimits: driver -> count, or false when the node has none.
function P:limits(ni, csinode)
  local key = ni.node.name
  local limits = self.node_limits[key]
  if limits ~= nil and limits.gen == tonumber(ni.generation) then return limits.value end
  limits = {}
  local any = false
  for r = ls.RES_FIRST_SCALAR, ls.resource_count() - 1 do
    local name = ls.resource_name(r)
    local n = tonumber(ni.allocatable.v[r])
    if name:sub(1, #LIMIT_PREFIX) == LIMIT_PREFIX and n > 0 then
      limits[name:sub(#LIMIT_PREFIX + 1)], any = n, true
    end
  end
  for _, d in ipairs(csinode and csinode.spec and csinode.spec.drivers or {}) do
    if d.allocatable and d.allocatable.count ~= nil then limits[d.name], any = d.allocatable.count, true end
  end
  limits = any and limits
  self.node_limits[key] = { gen = tonumber(ni.generation), value = limits }
  return limits
end

-- VolumeAttachments by node name, rebuilt when objects change.
function P:attachments_on(node_name)
  if self.attachments == nil then
    local by_node = {}
    for o in ls.objects("VolumeAttachment") do
      local va = ls.object_data(o)
      local node = va.spec and va.spec.nodeName
      if node then
        by_node[node] = by_node[node] or {}
        table.insert(by_node[node], va)
      end
    end
    self.attachments = by_node
  end
  return self.attachments[node_name] or {}
end

local function attachment_volume(va, csinode)
  local pv_name = va.spec.source and va.spec.source.persistentVolumeName
  if pv_name == nil then return nil end
  local o = ls.find_object(KIND_PV, 0, pv_name)
  if o == nil then return nil end
  local driver, handle = pv_csi(ls.object_data(o), csinode)
  if driver == nil then return nil end
  return driver .. "/" .. handle, driver
end

local function driver_listed(csinode, driver)
  for _, d in ipairs(csinode and csinode.spec and csinode.spec.drivers or {}) do
    if d.name == driver then return true end
  end
  return false
end

-- VolumeLimitScaling: a driver that must be on the node and is not. With
-- --feature-gates VolumeLimitScaling=false (v1.36), preventPodSchedulingIfMissing
-- is not read: no node is rejected for it.
local LIMIT_SCALING = ls.feature_enabled("VolumeLimitScaling")
function P:missing_driver(drivers, csinode)
  if not LIMIT_SCALING then return nil end
  for i = 1, #drivers do
    local driver = drivers[i]
    local prevent = self.prevent[driver]
    if prevent == nil then
      local o = ls.find_object(KIND_CSIDRIVER, 0, driver)
      local spec = o and ls.object_data(o).spec
      prevent = spec ~= nil and spec.preventPodSchedulingIfMissing == true
      self.prevent[driver] = prevent
    end
    if prevent and not driver_listed(csinode, driver) then
      return self:status(ls.unschedulable, driver .. " CSI driver is not installed on the node")
    end
  end
  return nil
end

-- A unique-name -> driver map as two arrays (Filter loops over them: pairs()
-- would keep LuaJIT from compiling the per-node loop).
local function listed(map)
  local units, drivers = {}, {}
  for unique, driver in pairs(map) do
    units[#units + 1], drivers[#drivers + 1] = unique, driver
  end
  return units, drivers
end

-- PreFilter also resolves the pod's volumes once when no answer depends on
-- the node (no in-tree volume or provisioner whose migration the CSINode
-- decides): Filter then only counts.
function P:pre_filter(state, pod)
  local any = false
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_PVC or v.source == VOL_EPHEMERAL or PLUGIN_OF_SOURCE[v.source] then any = true; break end
  end
  if not any then return ls.skip end
  self:caches()
  asked_migration = false
  local new = {}
  local st = self:attachable(pod, nil, new, true)
  local entry = { status = st }
  if not asked_migration then entry.units, entry.drivers = listed(new) end
  state[self.name] = entry
  return nil
end

function P:clone_state(entry) return entry end   -- read-only after PreFilter

-- The unique volumes already attached to a node (its pods' and its
-- VolumeAttachments'), with a count per driver, kept per NodeInfo generation
-- and pod count: a clone of preemption or of nominated pods keeps the
-- generation, but only removes pods (a subset) or only adds them, so an equal
-- count there means the same pods.
function P:attached(ni, csinode, csinode_seq)
  local key = ni.node.name
  local gen, num = tonumber(ni.generation), ni.num_pods
  local entry = self.node_attached[key]
  if entry and entry.gen == gen and entry.num == num and entry.csinode_seq == csinode_seq then return entry end
  local set, counts = {}, {}
  for k = 0, ni.num_pods - 1 do
    for unique, driver in pairs(self:pod_volumes(ni.pods[k], csinode, csinode_seq)) do set[unique] = driver end
  end
  for _, va in ipairs(self:attachments_on(ls.str(key))) do
    local unique, driver = attachment_volume(va, csinode)
    if unique and set[unique] == nil then set[unique] = driver end
  end
  for _, driver in pairs(set) do counts[driver] = (counts[driver] or 0) + 1 end
  entry = { gen = gen, num = num, csinode_seq = csinode_seq, set = set, counts = counts }
  self.node_attached[key] = entry
  return entry
end

-- The pod's volumes where the answer depends on migration: the same for
-- every node whose CSINode (present or not) lists the same migrated plugins,
-- so resolved once per such group in a cycle.
function P:units_for(s, pod, csinode, key)
  s.by_migration = s.by_migration or {}
  local hit = s.by_migration[key]
  if hit == nil then
    local new = {}
    local st = self:attachable(pod, csinode, new, true)
    if st then
      hit = { units = st }
    else
      local units, drivers = listed(new)
      hit = { units = units, drivers = drivers }
    end
    s.by_migration[key] = hit
  end
  return hit.units, hit.drivers
end

function P:filter(state, pod, ni)
  local s = state[self.name]
  if s == nil then return nil end
  if s.status then return s.status end
  local csinode, csinode_seq, migration_key = self:csinode_of(ni.node.name)
  local units, drivers = s.units, s.drivers
  if units == nil then
    units, drivers = self:units_for(s, pod, csinode, migration_key)
    if ls.is_status(units) then return units end
  end
  if #units == 0 then return nil end
  local st = self:missing_driver(drivers, csinode)
  if st then return st end
  local limits = self:limits(ni, csinode)
  if not limits then return nil end
  local attached = self:attached(ni, csinode, csinode_seq)
  local set, counts = attached.set, attached.counts
  if #units > 1 then return self:over_limit(units, drivers, set, counts, limits) end
  -- one new volume (the common case), without a loop: a short loop per node
  -- would become LuaJIT's root trace and box the node pointers
  if set[units[1]] ~= nil then return nil end
  local driver = drivers[1]
  local limit = limits[driver]
  if limit and (counts[driver] or 0) + 1 > limit then return self.max_count end
  return nil
end

-- Several new volumes: per driver, those not already attached, against the limit.
function P:over_limit(units, drivers, set, counts, limits)
  local wanted = {}
  for i = 1, #units do
    local unique, driver = units[i], drivers[i]
    if set[unique] == nil then wanted[driver] = (wanted[driver] or 0) + 1 end
  end
  for driver, n in pairs(wanted) do
    local limit = limits[driver]
    if limit and (counts[driver] or 0) + n > limit then return self.max_count end
  end
  return nil
end

-- ---- queueing hints -------------------------------------------------------

local function counted(v)
  return v.source == VOL_PVC or v.source == VOL_EPHEMERAL or PLUGIN_OF_SOURCE[v.source] ~= nil
end

local function after_pod_deleted(_, old)
  if old == nil or old.n_volumes == 0 or old.node_name == 0 then return ls.QUEUE_SKIP end
  for i = 0, old.n_volumes - 1 do
    if counted(old.volumes[i]) then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

local function uses_claim(pod, ns, name)
  if ns ~= pod.ns then return false end
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if (v.source == VOL_PVC or v.source == VOL_EPHEMERAL) and v.claim == name then return true end
  end
  return false
end

local function after_claim_added(pod, _, new)
  if new ~= nil and uses_claim(pod, new.ns, new.name) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_csinode_updated(_, old, new)
  if old == nil or new == nil then return ls.QUEUE end
  local before = {}
  for _, d in ipairs(ls.object_data(old).spec.drivers or {}) do
    before[d.name] = d.allocatable and d.allocatable.count
  end
  for _, d in ipairs(ls.object_data(new).spec.drivers or {}) do
    local n, was = d.allocatable and d.allocatable.count, before[d.name]
    if n ~= nil and (was == nil or n > was) then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

-- Queue when the detached volume is the one a claim of the pod is bound to
-- (the claim's spec.volumeName), or an inline volume of the driver the pod's
-- inline migrated volumes translate to (upstream's test cases).
local function after_attachment_deleted(pod, old)
  if old == nil then return ls.QUEUE end
  local source = ls.object_data(old).spec.source or {}
  local pv_name = source.persistentVolumeName
  local inline_driver = source.inlineVolumeSpec and source.inlineVolumeSpec.csi and source.inlineVolumeSpec.csi.driver
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if pv_name and (v.source == VOL_PVC or v.source == VOL_EPHEMERAL) then
      local o = ls.find_object(KIND_PVC, pod.ns, v.claim)
      local spec = o and ls.object_data(o).spec
      if spec and spec.volumeName == pv_name then return ls.QUEUE end
    end
    local plugin = PLUGIN_OF_SOURCE[v.source]
    if inline_driver and plugin and DRIVER_OF[plugin] == inline_driver then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "CSINode", action = "Add" },
  { resource = "CSINode", action = "Update", hint = after_csinode_updated },
  { resource = "Pod", action = "Delete", hint = after_pod_deleted },
  { resource = "PersistentVolumeClaim", action = "Add", hint = after_claim_added },
  { resource = "VolumeAttachment", action = "Delete", hint = after_attachment_deleted },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeVolumeLimits: the non-synthetic volume sources (VolumesSignerName).
function P:sign(pod) return signers.volumes(pod) end

return P
