-- VolumeBinding: a pod's PersistentVolumeClaims decide where it can run. Bound
-- claims pin it to nodes their volumes reach; unbound WaitForFirstConsumer
-- claims are matched to available volumes or provisioned on the chosen node,
-- and the scheduler writes that choice to the API before binding the pod.
-- Over 800 lines: PreFilter, Filter, Score, the assume cache and PreBind all
-- work on the same claim/volume matching state as upstream's one binder.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/volumebinding/
-- {volume_binding.go, binder.go, scorer.go} and component-helpers/storage/volume
-- (v1.37: StorageCapacityScoring beta and on, so `shape` has a default and
-- Score runs for every pod with claims):
-- * PreFilter result (GetEligibleNodes): the bound claims' volumes with
--   required node affinity `kubernetes.io/hostname In [...]` restrict the
--   nodes to the intersection of their hostnames (per volume: the union over
--   its terms of each term's intersection); nodes outside are not filtered and
--   count as UnschedulableAndUnresolvable "node(s) didn't satisfy plugin(s)
--   [VolumeBinding]" (so preemption skips them); an empty intersection, alone
--   or with another plugin's result, fails PreFilter (dispatch.lua). A bound
--   volume that is missing restricts nothing.
-- * PreFilter: Skip without claims (persistentVolumeClaim or ephemeral
--   volumes). Per claim, UnschedulableAndUnresolvable with the lister's or
--   upstream's text: `persistentvolumeclaim "<n>" not found`, `waiting for
--   ephemeral volume controller to create the persistentvolumeclaim "<n>"`,
--   `persistentvolumeclaim "<n>" bound to non-existent persistentvolume "<v>"`
--   (phase Lost), `persistentvolumeclaim "<n>" is being deleted`, `PVC <ns>/<n>
--   was not created for pod <ns>/<pod> (pod is not owner)`. A claim is bound
--   when it names its volume and has pv.kubernetes.io/bind-completed; an
--   unbound claim of a WaitForFirstConsumer class without spec.volumeName is
--   delayed, any other unbound one Immediate -> UnschedulableAndUnresolvable
--   "pod has unbound immediate PersistentVolumeClaims". A class without
--   volumeBindingMode is an Error `VolumeBindingMode not set for StorageClass "<c>"`.
-- * Filter (FindPodVolumes), UnschedulableAndUnresolvable with the reasons,
--   in this order: "node(s) had volume node affinity conflict" (a bound
--   volume's nodeAffinity does not match the node), "node(s) didn't find
--   available persistent volumes to bind" (no volume and no provisioning
--   for a delayed claim, or a claim provisioned for another node), "node(s)
--   did not have enough free storage" (no CSIStorageCapacity of the class,
--   reachable from the node, with capacity, or maximumVolumeSize when set, at
--   least the request, for a driver whose CSIDriver has storageCapacity: true),
--   "node(s) unavailable due to one or more pvc(s) bound to non-existent
--   pv(s)". Delayed claims, smallest request first, take the smallest
--   available volume of their class (phase Available, capacity, access
--   modes, volume mode, selector, node affinity, not chosen by an earlier
--   claim; a volume pre-bound to the claim wins); the rest are provisioned:
--   `no class for claim "<ns>/<n>"` and `failed to find storage class "<c>"`
--   are Errors; no provisioner (or kubernetes.io/no-provisioner) or the
--   class's allowedTopologies not matching the node is a bind conflict.
-- * PreScore/Score: with static bindings, per class requested over volume
--   capacity; otherwise per class the claims' requests over the
--   CSIStorageCapacity found for them; each class scored by the shape (a
--   broken line over utilization 0..100, scores 0..10 times 10) and the mean
--   rounded. Nothing to score -> 0.
-- * Reserve: unless every claim is bound, the chosen node's volumes are
--   assumed in the plugin's assume cache (a volume with the claim's claimRef,
--   a claim with volume.kubernetes.io/selected-node); Unreserve reverts them.
-- * PreBind: writes the pre-binding through the API (the volume's claimRef,
--   the claim's selected-node annotation), then waits, re-checking on every
--   object change and each second, until every claim is fully bound, up to
--   bindTimeoutSeconds: then Error "binding volumes: context deadline
--   exceeded"; a provisioner that gave up (annotation gone or changed) is
--   "binding volumes: provisioning failed for PVC \"<n>\"", a reset claimRef
--   `binding volumes: ClaimRef got reset for pv "<v>"`. The pod is retried.
-- * Args: bindTimeoutSeconds (600, >= 0), shape (default
--   [{0, 10}, {100, 0}]: most free capacity first), validated as upstream.
-- * Events and hints as upstream registers them with queueing hints on.
-- This file is longer than 800 lines: it is upstream's volume_binding.go, binder.go
-- (with the assume cache) and scorer.go in one plugin file, as plugins are one file each.
-- Deviations: in-tree volumes are not translated to CSI for node affinity
-- (their nodeAffinity is read as written); the assume cache drops an assumed
-- object as soon as the API object changes (upstream compares resource
-- versions); the API writes are merge patches rather than whole updates. The
-- assume cache's "could not find v1.PersistentVolumeClaim \"ns/name\"" texts
-- follow pkg/scheduler/util/assumecache (NotFoundError).
local ls = require("luasched")
local signers = require("luasched.signers")
local unpack = unpack   -- LuaJIT (Lua 5.1)

-- StorageCapacityScoring (beta, on in v1.37). With --feature-gates
-- StorageCapacityScoring=false, as upstream: `shape` has no default and is
-- refused when given, and PreScore skips (no scorer: every node scores 0).
local CAPACITY_SCORING = ls.feature_enabled("StorageCapacityScoring")
local P = ls.plugin("VolumeBinding", {
  defaults = {
    bindTimeoutSeconds = 600,
    shape = CAPACITY_SCORING and { { utilization = 0, score = 10 }, { utilization = 100, score = 0 } } or nil,
  },
  optional = not CAPACITY_SCORING and { shape = "any" } or nil,
})

local ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
local ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict"
local ERR_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
local ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
local ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
local ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
local ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
local ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
local NO_PROVISIONER = "kubernetes.io/no-provisioner"
local VOL_PVC, VOL_EPHEMERAL, VOL_CSI = ls.VOL_PVC, ls.VOL_EPHEMERAL, ls.VOL_CSI
local MAX_UTILIZATION, MAX_CUSTOM_PRIORITY_SCORE = 100, 10
local round = ls.round   -- Go's math.Round

local KIND_PVC, KIND_PV, KIND_SC = ls.intern("PersistentVolumeClaim"), ls.intern("PersistentVolume"),
  ls.intern("StorageClass")
local KIND_CSIDRIVER = ls.intern("CSIDriver")

-- ---- args -------------------------------------------------------------------

local function invalid(field, value, detail)
  return string.format("%s: Invalid value: %s: %s", field, tostring(value), detail)
end

local function is_int(v) return type(v) == "number" and v == math.floor(v) end

function P:init(args)
  local timeout = args.bindTimeoutSeconds
  if not is_int(timeout) then error(invalid("bindTimeoutSeconds", timeout, "must be an integer"), 0) end
  if timeout < 0 then
    error(invalid("bindTimeoutSeconds", timeout, "invalid BindTimeoutSeconds, should not be a negative value"), 0)
  end
  local shape = args.shape
  self.scoring = CAPACITY_SCORING
  if not CAPACITY_SCORING then
    if shape ~= nil then   -- the value as JSON, as field.Invalid shows a list
      local pts = {}
      for i, pt in ipairs(type(shape) == "table" and shape or {}) do
        pts[i] = string.format('{"utilization":%s,"score":%s}', tostring(pt.utilization or 0), tostring(pt.score or 0))
      end
      error(invalid("shape", "[" .. table.concat(pts, ",") .. "]",
        "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"), 0)
    end
    shape = {}
  elseif type(shape) ~= "table" or #shape == 0 then
    shape = P.defaults.shape
  end
  local errs = {}
  for i = 2, #shape do
    if (shape[i - 1].utilization or 0) >= (shape[i].utilization or 0) then
      errs[#errs + 1] = invalid(string.format("shape[%d].utilization", i - 1), shape[i].utilization,
        "utilization values must be sorted in increasing order")
      break
    end
  end
  self.shape_u, self.shape_s = {}, {}
  for i, pt in ipairs(shape) do
    local u, s = pt.utilization or 0, pt.score or 0
    if not is_int(u) or u < 0 or u > MAX_UTILIZATION then
      errs[#errs + 1] = invalid(string.format("shape[%d].utilization", i - 1), u, "not in valid range [0, 100]")
    end
    if not is_int(s) or s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE then
      errs[#errs + 1] = invalid(string.format("shape[%d].score", i - 1), s, "not in valid range [0, 10]")
    end
    self.shape_u[i], self.shape_s[i] = u, s * (ls.MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE)
  end
  if #errs == 1 then error(errs[1], 0) end   -- an ErrorList: one error as is, several in brackets
  if #errs > 1 then error("[" .. table.concat(errs, ", ") .. "]", 0) end
  self.bind_timeout_ms = timeout * 1000
  self.messages = {}
  self.poll = ls.wait(1)      -- PreBind re-checks each second (and on every object change)
  self.assumed_pvs, self.assumed_pvcs = {}, {}
end

-- One status per (code, reasons), built once.
function P:status(make, ...)
  local key = tostring(make) .. table.concat({ ... }, "\n")
  local st = self.messages[key]
  if st == nil then
    st = make(...)
    self.messages[key] = st
  end
  return st
end

-- ---- reading objects, through the assume cache -------------------------------

local function quantity(q)
  if type(q) == "number" then return q end
  if type(q) ~= "string" then return 0 end
  local plain = tonumber(q)   -- "5", "1e9" (the loader has checked every quantity)
  if plain then return math.ceil(plain) end
  local num, suffix = q:match("^([%d%.]+)(%a*)$")
  local mult = ({ [""] = 1, k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15, E = 1e18, Ki = 2 ^ 10, Mi = 2 ^ 20,
    Gi = 2 ^ 30, Ti = 2 ^ 40, Pi = 2 ^ 50, Ei = 2 ^ 60, m = 1e-3 })[suffix]
  if num == nil or mult == nil then return 0 end
  return math.ceil(tonumber(num) * mult)
end

local function request_of(pvc)
  local r = pvc.spec and pvc.spec.resources and pvc.spec.resources.requests
  return r and r.storage and quantity(r.storage) or 0
end

local function capacity_of(pv)
  local c = pv.spec and pv.spec.capacity
  return c and quantity(c.storage) or 0
end

local function annotations(obj) return obj.metadata and obj.metadata.annotations or {} end

local function claim_class(pvc)
  return annotations(pvc)["volume.beta.kubernetes.io/storage-class"] or (pvc.spec and pvc.spec.storageClassName) or ""
end

local function volume_class(pv)
  return annotations(pv)["volume.beta.kubernetes.io/storage-class"] or (pv.spec and pv.spec.storageClassName) or ""
end

local function claim_key(pvc) return (pvc.metadata.namespace or "default") .. "/" .. pvc.metadata.name end

-- An assumed version stands while the API object is the one it was made from.
local function through_cache(cache, key, o)
  local a = cache[key]
  if a == nil then return o and ls.object_data(o) end
  if o ~= nil and tonumber(o.seq) == a.base then return a.obj end
  cache[key] = nil
  return o and ls.object_data(o)
end

function P:get_pvc(ns, name)
  local o = ls.find_object(KIND_PVC, ns, name)
  return through_cache(self.assumed_pvcs, ls.str(ns) .. "/" .. ls.str(name), o)
end

function P:get_pv(name)
  return through_cache(self.assumed_pvs, name, ls.find_object(KIND_PV, 0, name))
end

local function api_seq(kind, ns, name)
  local o = ls.find_object(kind, ns or 0, name)
  return o and tonumber(o.seq)
end

-- ---- claims of the pod (PreFilter) ----------------------------------------------

local owned_by = ls.controlled_by_pod   -- ephemeral.VolumeIsForPod

local function fully_bound(pvc)
  return (pvc.spec and pvc.spec.volumeName or "") ~= "" and annotations(pvc)[ANN_BIND_COMPLETED] ~= nil
end

-- IsDelayBindingMode: true, false, or nil and an error message.
local function delay_binding(pvc)
  local name = claim_class(pvc)
  if name == "" then return false end
  local o = ls.find_object(KIND_SC, 0, name)
  if o == nil then return false end
  local mode = ls.object_data(o).volumeBindingMode
  if mode == nil then return nil, string.format('VolumeBindingMode not set for StorageClass "%s"', name) end
  return mode == "WaitForFirstConsumer"
end

-- podHasPVCs and GetPodVolumeClaims: the claims sorted out, or a status.
function P:pod_claims(pod)
  local claims = { bound = {}, delayed = {}, immediate = 0, any = false }
  local ns = ls.str(pod.ns)
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_PVC or v.source == VOL_EPHEMERAL then
      claims.any = true
      local name = ls.str(v.claim)
      local pvc = self:get_pvc(pod.ns, v.claim)
      if pvc == nil then
        if v.source == VOL_EPHEMERAL then
          return self:status(ls.unresolvable, string.format(
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "%s"', name))
        end
        return self:status(ls.unresolvable, string.format('persistentvolumeclaim "%s" not found', name))
      end
      if pvc.status and pvc.status.phase == "Lost" then
        return self:status(ls.unresolvable, string.format(
          'persistentvolumeclaim "%s" bound to non-existent persistentvolume "%s"', name, pvc.spec.volumeName or ""))
      end
      if pvc.metadata.deletionTimestamp then
        return self:status(ls.unresolvable, string.format('persistentvolumeclaim "%s" is being deleted', name))
      end
      if v.source == VOL_EPHEMERAL and not owned_by(pvc, pod) then
        return self:status(ls.unresolvable, string.format("PVC %s/%s was not created for pod %s/%s (pod is not owner)",
          ns, name, ns, ls.str(pod.name)))
      end
      if fully_bound(pvc) then
        claims.bound[#claims.bound + 1] = pvc
      else
        local delayed, err = delay_binding(pvc)
        if delayed == nil then return self:status(ls.error, err) end
        if delayed and (pvc.spec.volumeName or "") == "" then
          claims.delayed[#claims.delayed + 1] = pvc
        else
          claims.immediate = claims.immediate + 1
        end
      end
    end
  end
  return claims
end

-- The volumes of a class, for the delayed claims (the assume cache's ListPVs).
function P:volumes_of_class(class)
  local list = {}
  for o in ls.objects(KIND_PV) do
    local pv = through_cache(self.assumed_pvs, ls.str(o.name), o)
    if volume_class(pv) == class then list[#list + 1] = pv end
  end
  return list
end

local NO_CLAIMS = { by_node = {}, all_bound = true }   -- a pod without claims (shared, never written)

local LABEL_HOSTNAME = "kubernetes.io/hostname"

-- GetLocalPersistentVolumeNodeNames: the union over the volume's required
-- node selector terms of each term's intersection of its `kubernetes.io/
-- hostname In` values (a term without one adds nothing); nil when empty.
local function local_volume_node_names(pv)
  local affinity = pv.spec and pv.spec.nodeAffinity
  local required = affinity and affinity.required
  if not required then return nil end
  local union, any = {}, false
  for _, term in ipairs(required.nodeSelectorTerms or {}) do
    local nodes
    for _, e in ipairs(term.matchExpressions or {}) do
      if e.key == LABEL_HOSTNAME and e.operator == "In" then
        local kept = {}
        for _, v in ipairs(e.values or {}) do
          if nodes == nil or nodes[v] then kept[v] = true end
        end
        nodes = kept
      end
    end
    for name in pairs(nodes or {}) do union[name] = true; any = true end
  end
  return any and union or nil
end

-- GetEligibleNodes: the nodes every bound claim's volume allows by hostname
-- (the intersection of their local node names), as PreFilter's node names;
-- nil (every node) without such a volume or when a bound volume is missing.
-- An empty list makes PreFilter UnschedulableAndUnresolvable "node(s) didn't
-- satisfy plugin VolumeBinding" (the framework's merge, dispatch.lua).
local function eligible_nodes(bound_pvs)
  local eligible
  for i = 1, #bound_pvs do
    local pv = bound_pvs[i]
    if not pv then return nil end
    local names = local_volume_node_names(pv)
    if names and eligible == nil then
      eligible = names
    elseif names then
      for name in pairs(eligible) do
        if not names[name] then eligible[name] = nil end
      end
    end
  end
  if eligible == nil then return nil end
  local list = {}
  for name in pairs(eligible) do list[#list + 1] = name end
  table.sort(list)
  return list
end

-- The delayed claims in order of their requested size. A function of its own:
-- a closure inside pre_filter kept LuaJIT from compiling its returns (UCLO).
local function by_request(a, b) return request_of(a) < request_of(b) end

local function has_claims(pod)
  for i = 0, pod.n_volumes - 1 do
    local source = pod.volumes[i].source
    if source == VOL_PVC or source == VOL_EPHEMERAL then return true end
  end
  return false
end

function P:pre_filter(state, pod)
  if not has_claims(pod) then
    state[self.name] = NO_CLAIMS
    return ls.skip
  end
  local claims = self:pod_claims(pod)
  if ls.is_status(claims) then return claims end
  if not claims.any then
    state[self.name] = { by_node = {}, all_bound = true }
    return ls.skip
  end
  if claims.immediate > 0 then return self:status(ls.unresolvable, ERR_UNBOUND_IMMEDIATE) end
  table.sort(claims.delayed, by_request)
  claims.bound_pvs = {}   -- the bound claims' volumes, read once (false: not found)
  for i, pvc in ipairs(claims.bound) do claims.bound_pvs[i] = self:get_pv(pvc.spec.volumeName) or false end
  -- Every claim bound to a volume that exists and reaches every node: Filter
  -- passes every node with nothing to bind (checked once, not per node).
  local everywhere = #claims.delayed == 0
  for i = 1, #claims.bound_pvs do
    local pv = claims.bound_pvs[i]
    everywhere = everywhere and pv and not (pv.spec and pv.spec.nodeAffinity and pv.spec.nodeAffinity.required)
  end
  claims.everywhere = everywhere
  claims.pvs = {}
  for _, pvc in ipairs(claims.delayed) do
    local class = claim_class(pvc)
    if claims.pvs[class] == nil then claims.pvs[class] = self:volumes_of_class(class) end
  end
  state[self.name] = { claims = claims, by_node = {}, static = false }
  return nil, eligible_nodes(claims.bound_pvs)
end

function P:clone_state(entry) return entry end   -- Filter writes per node only

-- ---- node checks ---------------------------------------------------------------

local OPS = { In = ls.OP_IN, NotIn = ls.OP_NOT_IN, Exists = ls.OP_EXISTS, DoesNotExist = ls.OP_DOES_NOT_EXIST,
  Gt = ls.OP_GT, Lt = ls.OP_LT }
local NAME_FIELD = ls.intern("metadata.name")

local function requirements(list)
  local out = {}
  for _, e in ipairs(list or {}) do
    local values = {}
    for k, v in ipairs(e.values or {}) do values[k] = ls.intern(v) end
    local op = OPS[e.operator] or ls.OP_IN
    out[#out + 1] = { key = e.key == "metadata.name" and NAME_FIELD or ls.intern(e.key or ""), op = op,
      values = values, number = (op == ls.OP_GT or op == ls.OP_LT) and (e.values or {})[1] or nil }
  end
  return out
end

-- A volume's required node affinity compiled once per object version (false: none).
local affinity_cache = ls.bounded_cache(8192)
local function volume_affinity(pv)
  local hit = affinity_cache.items[pv]
  if hit ~= nil then return hit end
  return ls.cache_get(affinity_cache, pv, function()
    local terms = pv.spec and pv.spec.nodeAffinity and pv.spec.nodeAffinity.required
      and pv.spec.nodeAffinity.required.nodeSelectorTerms
    if terms == nil then return false end
    local compiled = {}
    for i, t in ipairs(terms) do
      local num_ok = true
      for _, e in ipairs(t.matchExpressions or {}) do
        if (e.operator == "Gt" or e.operator == "Lt") and not tostring((e.values or {})[1]):match("^%-?%d+$") then
          num_ok = false
        end
      end
      compiled[i] = num_ok and { exprs = requirements(t.matchExpressions), fields = requirements(t.matchFields) }
        or { exprs = {}, fields = {} }
    end
    return ls.new_node_selector(compiled)
  end)
end

-- volume.CheckNodeAffinity
local function affinity_matches(pv, node)
  local sel = volume_affinity(pv)
  return not sel or ls.node_selector_matches(sel, node)
end

-- MatchTopologySelectorTerms over the node's labels (no terms: any node).
local function topology_matches(class, labels)
  local terms = class.allowedTopologies
  if terms == nil or #terms == 0 then return true end
  for _, term in ipairs(terms) do
    local ok = true
    for _, e in ipairs(term.matchLabelExpressions or {}) do
      local v = ls.label(labels, ls.intern(e.key or ""))
      local found = false
      for _, want in ipairs(e.values or {}) do
        if v ~= 0 and ls.str(v) == want then found = true; break end
      end
      if not found then ok = false; break end
    end
    if ok then return true end
  end
  return false
end

-- A node's label value as text, or nil.
local function node_label(labels, key)
  local v = ls.label(labels, ls.intern(key))
  return v ~= 0 and ls.str(v) or nil
end

local function table_label(labels, key) return labels[key] end

-- A metav1.LabelSelector (as a table) on labels read through get(labels, key).
local function label_selector_matches(sel, labels, get)
  for k, want in pairs(sel.matchLabels or {}) do
    if get(labels, k) ~= want then return false end
  end
  for _, e in ipairs(sel.matchExpressions or {}) do
    local text = get(labels, e.key or "")
    local in_values = false
    for _, x in ipairs(e.values or {}) do
      if x == text then in_values = true; break end
    end
    local op = e.operator
    if (op == "In" and not in_values) or (op == "NotIn" and in_values) or (op == "Exists" and not text)
      or (op == "DoesNotExist" and text) then
      return false
    end
  end
  return true
end

local function has_all_modes(pv, pvc)
  local have = {}
  for _, m in ipairs(pv.spec and pv.spec.accessModes or {}) do have[m] = true end
  for _, m in ipairs(pvc.spec and pvc.spec.accessModes or {}) do
    if not have[m] then return false end
  end
  return true
end

-- A claim's uid; "ns/name" for a hand-written claim without one (as for pods).
local function claim_uid(pvc) return pvc.metadata.uid or claim_key(pvc) end

local function bound_to(pv, pvc)
  local ref = pv.spec and pv.spec.claimRef
  return ref ~= nil and ref.name == pvc.metadata.name and (ref.namespace or "default") ==
    (pvc.metadata.namespace or "default") and (ref.uid == nil or ref.uid == "" or ref.uid == claim_uid(pvc))
end

-- volume.FindMatchingVolume for the scheduler's path (a node, delayed binding).
local function find_matching_volume(pvc, pvs, node, chosen)
  local want, class = request_of(pvc), claim_class(pvc)
  local mode = pvc.spec and pvc.spec.volumeMode or "Filesystem"
  local best, best_size
  for _, pv in ipairs(pvs) do
    local name, size = pv.metadata.name, capacity_of(pv)
    local ref = pv.spec and pv.spec.claimRef
    if not chosen[name] and (ref == nil or bound_to(pv, pvc)) and size >= want
      and (pv.spec.volumeMode or "Filesystem") == mode and not pv.metadata.deletionTimestamp then
      local affinity_ok = affinity_matches(pv, node)
      if bound_to(pv, pvc) then
        if not affinity_ok then return nil end
        return pv
      end
      local sel = pvc.spec and pvc.spec.selector
      local selected = sel == nil or label_selector_matches(sel, pv.metadata.labels or {}, table_label)
      if pv.status and pv.status.phase == "Available" and selected and volume_class(pv) == class and affinity_ok
        and has_all_modes(pv, pvc) and (best == nil or size < best_size) then
        best, best_size = pv, size
      end
    end
  end
  return best
end

-- hasEnoughCapacity: true (and the capacity object used, if any) or false, or nil and an error.
local function enough_capacity(provisioner, pvc, class, labels)
  local r = pvc.spec and pvc.spec.resources and pvc.spec.resources.requests
  if r == nil or r.storage == nil then return true end
  local d = ls.find_object(KIND_CSIDRIVER, 0, provisioner)
  local spec = d and ls.object_data(d).spec
  if spec == nil or spec.storageCapacity ~= true then return true end
  local size = quantity(r.storage)
  for o in ls.objects("CSIStorageCapacity") do
    local cap = ls.object_data(o)
    local limit = cap.maximumVolumeSize or cap.capacity
    if cap.storageClassName == class.metadata.name and limit ~= nil and quantity(limit) >= size
      and cap.nodeTopology ~= nil and label_selector_matches(cap.nodeTopology, labels, node_label) then
      return true, cap
    end
  end
  return false
end

-- checkVolumeProvisions: satisfied, sufficient storage, provisions, or a status.
function P:check_provisions(claims, node)
  local provisions = {}
  for _, pvc in ipairs(claims) do
    local class_name = claim_class(pvc)
    if class_name == "" then return self:status(ls.error, string.format('no class for claim "%s"', claim_key(pvc))) end
    local o = ls.find_object(KIND_SC, 0, class_name)
    if o == nil then
      return self:status(ls.error, string.format('failed to find storage class "%s"', class_name))
    end
    local class = ls.object_data(o)
    local provisioner = class.provisioner or ""
    if provisioner == "" or provisioner == NO_PROVISIONER then return false, true end
    if not topology_matches(class, node.labels) then return false, true end
    local ok, cap = enough_capacity(provisioner, pvc, class, node.labels)
    if not ok then return true, false end
    provisions[#provisions + 1] = { pvc = pvc, capacity = cap }
  end
  return true, true, provisions
end

local NO_VOLUMES = { static = {}, dynamic = {} }   -- every claim bound: nothing to bind (shared, never written)

-- FindPodVolumes for one node: the node's volumes, or a status.
function P:find_pod_volumes(claims, node)
  local bound_ok, pvs_found, unbound_ok, enough = true, true, true, true
  local bound_pvs = claims.bound_pvs
  for i = 1, #bound_pvs do
    local pv = bound_pvs[i]
    if not pv then pvs_found = false; break end
    if not affinity_matches(pv, node) then bound_ok = false; break end
  end
  local volumes = NO_VOLUMES
  if #claims.delayed > 0 then
    volumes = { static = {}, dynamic = {} }
    local to_match, to_provision = {}, {}
    local node_name = ls.str(node.name)
    for _, pvc in ipairs(claims.delayed) do
      local selected = annotations(pvc)[ANN_SELECTED_NODE]
      if selected ~= nil then
        if selected ~= node_name then unbound_ok = false; goto reasons end
        to_provision[#to_provision + 1] = pvc
      else
        to_match[#to_match + 1] = pvc
      end
    end
    local chosen = {}
    for _, pvc in ipairs(to_match) do
      local pv = find_matching_volume(pvc, claims.pvs[claim_class(pvc)] or {}, node, chosen)
      if pv == nil then
        to_provision[#to_provision + 1] = pvc
        unbound_ok = false
      else
        chosen[pv.metadata.name] = true
        volumes.static[#volumes.static + 1] = { pv = pv, pvc = pvc }
      end
    end
    if #to_provision > 0 then
      local sat, suff, provisions = self:check_provisions(to_provision, node)
      if ls.is_status(sat) then return sat end
      unbound_ok, enough = sat, suff
      volumes.dynamic = provisions or {}
    end
  end
  ::reasons::
  if bound_ok and unbound_ok and enough and pvs_found then return volumes end
  local reasons = {}
  if not bound_ok then reasons[#reasons + 1] = ERR_NODE_CONFLICT end
  if not unbound_ok then reasons[#reasons + 1] = ERR_BIND_CONFLICT end
  if not enough then reasons[#reasons + 1] = ERR_NOT_ENOUGH_SPACE end
  if not pvs_found then reasons[#reasons + 1] = ERR_PV_NOT_EXIST end
  if #reasons > 0 then return self:status(ls.unresolvable, unpack(reasons)) end
  return volumes
end

function P:filter(state, _, ni)
  local s = state[self.name]
  if s == nil or s.claims == nil or s.claims.everywhere then return nil end
  local volumes = self:find_pod_volumes(s.claims, ni.node)
  if ls.is_status(volumes) then return volumes end
  s.by_node[ni.node.name] = volumes
  s.static = s.static or #volumes.static > 0
  return nil
end

-- ---- scoring -------------------------------------------------------------------

-- helper.BuildBrokenLinearFunction over the scaled shape.
function P:shape_score(p)
  local u, sc = self.shape_u, self.shape_s
  for i = 1, #u do
    if p <= u[i] then
      if i == 1 then return sc[1] end
      return sc[i - 1] + math.floor((sc[i] - sc[i - 1]) * (p - u[i - 1]) / (u[i] - u[i - 1]))
    end
  end
  return sc[#u]
end

function P:pre_score(state)
  if not self.scoring then return ls.skip end
  local s = state[self.name]
  if s == nil or s.claims == nil then return ls.skip end
  return nil
end

function P:score(state, _, ni)
  local s = state[self.name]
  local volumes = s and s.by_node[ni.node.name]
  if volumes == nil or (#volumes.static == 0 and #volumes.dynamic == 0) then return 0 end   -- nothing to score
  return self:score_volumes(volumes)
end

-- The per-class utilization score of a node's bindings or provisions.
function P:score_volumes(volumes)
  local classes, n = {}, 0
  local function add(class, requested, capacity, sum_capacity)
    local c = classes[class]
    if c == nil then
      c = { requested = 0, capacity = 0 }
      classes[class], n = c, n + 1
    end
    c.requested = c.requested + requested
    c.capacity = sum_capacity and c.capacity + capacity or capacity
  end
  if #volumes.static > 0 then
    for _, b in ipairs(volumes.static) do add(volume_class(b.pv), request_of(b.pvc), capacity_of(b.pv), true) end
  else
    for _, p in ipairs(volumes.dynamic) do
      if p.capacity then add(claim_class(p.pvc), request_of(p.pvc), quantity(p.capacity.capacity), false) end
    end
  end
  if n == 0 then return 0 end
  local total = 0
  for _, c in pairs(classes) do
    if c.capacity == 0 or c.requested > c.capacity then
      total = total + self:shape_score(MAX_UTILIZATION)
    else
      total = total + self:shape_score(math.floor(c.requested * MAX_UTILIZATION / c.capacity))
    end
  end
  return round(total / n)
end

-- ---- Reserve, Unreserve, PreBind ----------------------------------------------

-- volume.GetBindVolumeToClaim: the volume with the claim's claimRef.
local function bind_volume_to_claim(pv, pvc)
  if bound_to(pv, pvc) and (pv.spec.claimRef.uid or "") ~= "" then return pv, false end
  local copy = ls.merge_args(pv, { spec = ls.merge_args(pv.spec, { claimRef = {
    kind = "PersistentVolumeClaim", apiVersion = "v1", namespace = pvc.metadata.namespace or "default",
    name = pvc.metadata.name, uid = claim_uid(pvc) } }) })
  if pv.spec.claimRef == nil then
    copy.metadata = ls.merge_args(pv.metadata, { annotations = ls.merge_args(annotations(pv),
      { [ANN_BOUND_BY_CONTROLLER] = "yes" }) })
  end
  return copy, true
end

function P:pod_volumes_bound(pod)
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_PVC or v.source == VOL_EPHEMERAL then
      local pvc = self:get_pvc(pod.ns, v.claim)
      if pvc == nil or not fully_bound(pvc) then return false end
    end
  end
  return true
end

function P:revert(volumes)
  for _, b in ipairs(volumes.static) do self.assumed_pvs[b.pv.metadata.name] = nil end
  for _, p in ipairs(volumes.dynamic) do self.assumed_pvcs[claim_key(p.pvc)] = nil end
end

function P:reserve(state, pod, node_name)
  local s = state[self.name]
  if s == nil or s.claims == nil then return nil end   -- no claims: nothing to bind
  local volumes = s and s.by_node[ls.intern(node_name)]
  if volumes == nil or self:pod_volumes_bound(pod) then
    if s then s.all_bound = true end
    return nil
  end
  local static, dynamic = {}, {}
  for _, b in ipairs(volumes.static) do
    local pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
    if dirty then
      self.assumed_pvs[pv.metadata.name] = { obj = pv, base = api_seq(KIND_PV, nil, pv.metadata.name) }
    end
    static[#static + 1] = { pv = pv, pvc = b.pvc, dirty = dirty }
  end
  for _, p in ipairs(volumes.dynamic) do
    local pvc = ls.merge_args(p.pvc, { metadata = ls.merge_args(p.pvc.metadata, {
      annotations = ls.merge_args(annotations(p.pvc), { [ANN_SELECTED_NODE] = node_name }) }) })
    local ns = pvc.metadata.namespace or "default"
    self.assumed_pvcs[claim_key(pvc)] = { obj = pvc, base = api_seq(KIND_PVC, ns, pvc.metadata.name) }
    dynamic[#dynamic + 1] = { pvc = pvc, capacity = p.capacity }
  end
  s.reserved = { static = static, dynamic = dynamic }
  s.all_bound = false
  return nil
end

function P:unreserve(state)
  local s = state[self.name]
  if s and s.claims and s.reserved then self:revert(s.reserved) end
end

local q = ls.json_quote

-- bindAPIUpdate: the volumes' claimRef, the claims' selected node. Each
-- binding remembers the version of the API object it was written against:
-- checkBindings waits until a newer one arrives (upstream compares resource
-- versions; the embedded cluster answers at once, a real one through the informers).
function P:write_bindings(r)
  for _, b in ipairs(r.static) do
    b.base = api_seq(KIND_PV, nil, b.pv.metadata.name)
    local ref = b.pv.spec.claimRef
    local patch = string.format('{"metadata":{"annotations":{%s:"yes"}},"spec":{"claimRef":{"kind":'
      .. '"PersistentVolumeClaim","apiVersion":"v1","namespace":%s,"name":%s%s}}}', q(ANN_BOUND_BY_CONTROLLER),
      q(ref.namespace), q(ref.name), ref.uid and (',"uid":' .. q(ref.uid)) or "")
    local err = ls.patch_object(KIND_PV, nil, b.pv.metadata.name, patch)
    if err then return err end
  end
  for _, p in ipairs(r.dynamic) do
    p.base = api_seq(KIND_PVC, p.pvc.metadata.namespace or "default", p.pvc.metadata.name)
    local patch = string.format('{"metadata":{"annotations":{%s:%s}}}', q(ANN_SELECTED_NODE),
      q(annotations(p.pvc)[ANN_SELECTED_NODE]))
    local err = ls.patch_object(KIND_PVC, p.pvc.metadata.namespace or "default", p.pvc.metadata.name, patch)
    if err then return err end
  end
  return nil
end

-- The API object and whether it is still the version the write was made against.
local function api_pvc(pvc, base)
  local o = ls.find_object(KIND_PVC, pvc.metadata.namespace or "default", pvc.metadata.name)
  return o and ls.object_data(o), o ~= nil and tonumber(o.seq) == base
end

local function api_pv(name, base)
  local o = ls.find_object(KIND_PV, 0, name)
  return o and ls.object_data(o), o ~= nil and tonumber(o.seq) == base
end

-- checkBindings on the API objects: true when done, false to wait, or an error text.
local function check_bindings(r, node)
  local node_name = ls.str(node.name)
  for _, b in ipairs(r.static) do
    local pv, stale = api_pv(b.pv.metadata.name, b.base)
    local pvc = api_pvc(b.pvc)
    if pv == nil then
      return string.format('failed to check binding: could not find v1.PersistentVolume "%s"', b.pv.metadata.name)
    end
    if pvc == nil then
      return string.format('failed to check binding: could not find v1.PersistentVolumeClaim "%s"', claim_key(b.pvc))
    end
    if stale then return false end
    if not affinity_matches(pv, node) then
      return string.format('pv "%s" node affinity doesn\'t match node "%s": no matching NodeSelectorTerms',
        pv.metadata.name, node_name)
    end
    local ref = pv.spec.claimRef
    if ref == nil or (ref.uid or "") == "" then
      return string.format('ClaimRef got reset for pv "%s"', pv.metadata.name)
    end
    if not fully_bound(pvc) then return false end
  end
  for _, p in ipairs(r.dynamic) do
    local pvc, stale = api_pvc(p.pvc, p.base)
    if pvc == nil then
      return string.format('failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "%s"',
        claim_key(p.pvc))
    end
    if stale then return false end
    local selected = pvc.metadata.annotations and pvc.metadata.annotations[ANN_SELECTED_NODE]
    if pvc.metadata.annotations == nil then
      return string.format('selectedNode annotation reset for PVC "%s"', pvc.metadata.name)
    end
    if selected ~= node_name then return string.format('provisioning failed for PVC "%s"', pvc.metadata.name) end
    local pv_name = pvc.spec.volumeName or ""
    if pv_name ~= "" then
      local pv = api_pv(pv_name)
      if pv == nil then return false end
      if not affinity_matches(pv, node) then
        return string.format('pv "%s" node affinity doesn\'t match node "%s": no matching NodeSelectorTerms',
          pv_name, node_name)
      end
    end
    if not fully_bound(pvc) then return false end
  end
  return true
end

-- PreBindPreFlight: Skip when every claim of the pod is already bound
-- (upstream: nothing to bind).
function P:pre_bind_pre_flight(state)
  local s = state[self.name]
  if s == nil or s.all_bound then return ls.skip end
  return nil
end

function P:pre_bind(state, _, node_name)
  local s = state[self.name]
  if s == nil or s.all_bound then return nil end
  local r = s.reserved
  if r == nil then return self:status(ls.error, string.format('no pod volumes found for node "%s"', node_name)) end
  local now = ls.now_ms()
  if s.deadline == nil then
    local err = self:write_bindings(r)
    if err then return ls.error(err) end
    s.deadline = now + self.bind_timeout_ms
  end
  local ni = ls.find_node(node_name)
  if ni == nil then return ls.error(string.format('binding volumes: failed to get node "%s": node "%s" not found',
    node_name, node_name)) end
  local done = check_bindings(r, ni.node)
  if type(done) == "string" then return ls.error("binding volumes: " .. done) end
  if done then return nil end
  if now >= s.deadline then return self:status(ls.error, "binding volumes: context deadline exceeded") end
  return self.poll
end

-- ---- events and queueing hints -----------------------------------------------

local function uses_claim(pod, name) return ls.pod_uses_claim(pod, name, true) end

local function after_claim_change(pod, _, new)
  if new == nil or new.ns ~= pod.ns then return ls.QUEUE_SKIP end
  return uses_claim(pod, new.name) and ls.QUEUE or ls.QUEUE_SKIP
end

local function same_topologies(a, b)
  local ja, jb = a.allowedTopologies, b.allowedTopologies
  if (ja == nil or #ja == 0) and (jb == nil or #jb == 0) then return true end
  if ja == nil or jb == nil or #ja ~= #jb then return false end
  for i = 1, #ja do
    local ea, eb = ja[i].matchLabelExpressions or {}, jb[i].matchLabelExpressions or {}
    if #ea ~= #eb then return false end
    for k = 1, #ea do
      local va, vb = ea[k].values or {}, eb[k].values or {}
      if ea[k].key ~= eb[k].key or #va ~= #vb then return false end
      for m = 1, #va do if va[m] ~= vb[m] then return false end end
    end
  end
  return true
end

local function after_class_change(_, old, new)
  if old == nil then return ls.QUEUE end
  return same_topologies(ls.object_data(old), ls.object_data(new)) and ls.QUEUE_SKIP or ls.QUEUE
end

local function after_csinode_change(_, old, new)
  if old == nil then return ls.QUEUE end
  local key = "storage.alpha.kubernetes.io/migrated-plugins"
  return annotations(ls.object_data(old))[key] ~= annotations(ls.object_data(new))[key] and ls.QUEUE
    or ls.QUEUE_SKIP
end

local function after_capacity_change(_, old, new)
  if old == nil then return ls.QUEUE end
  local function limit(o)
    local c = ls.object_data(o)
    local l = c.maximumVolumeSize or c.capacity
    return l and quantity(l)
  end
  local before, after = limit(old), limit(new)
  if after ~= nil and (before == nil or after > before) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_driver_change(pod, old, new)
  if old == nil or new == nil then return ls.QUEUE_SKIP end
  local was, now = ls.object_data(old).spec or {}, ls.object_data(new).spec or {}
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.source == VOL_CSI and v.handle == new.name and was.storageCapacity == true
      and now.storageCapacity ~= true then
      return ls.QUEUE
    end
  end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "StorageClass", action = { "Add", "Update" }, hint = after_class_change },
  { resource = "PersistentVolumeClaim", action = { "Add", "Update" }, hint = after_claim_change },
  { resource = "PersistentVolume", action = { "Add", "Update" } },
  { resource = "Node", action = { "Add", "UpdateNodeLabel" } },
  { resource = "CSINode", action = { "Add", "Update" }, hint = after_csinode_change },
  { resource = "CSIDriver", action = "Update", hint = after_driver_change },
  { resource = "CSIStorageCapacity", action = { "Add", "Update" }, hint = after_capacity_change },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- VolumeBinding: the non-synthetic volume sources (VolumesSignerName).
function P:sign(pod) return signers.volumes(pod) end

return P
