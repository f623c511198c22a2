-- dynamic_resources_extended: extended resources backed by DRA
-- (DRAExtendedResource, GA and locked in v1.37; see plugins/dynamic_resources.lua):
-- a pod's request of an extended resource that a DeviceClass names
-- (spec.extendedResourceName, or the implicit
-- deviceclass.resource.kubernetes.io/<class>) is served, on a node that
-- does not advertise the resource in its allocatable, by a claim the
-- scheduler makes: one request per container asking for it, named
-- container-<i>-request-<j> (i: the container's index among init then
-- regular containers, j: the resource's index among the container's sorted
-- request names), ExactCount of the quantity, of the class.
-- Mirrors upstream dynamicresources.go (preFilterExtendedResources,
-- filterExtendedResources, createDeviceRequests, createRequestMappings,
-- bindClaim) and extended/util.go (DeviceClassMapping).
local ls = require("luasched")
local json = require("luasched.json")
local B = require("dynamic_resources_binding")

local fmt = string.format
local CLAIMS = "resourceclaims.v1.resource.k8s.io"

local M = {}

local CLASSES = "deviceclasses.v1.resource.k8s.io"
local IMPLICIT = "deviceclass.resource.kubernetes.io/"
M.ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
local FIRST_SCALAR = ls.RES_FIRST_SCALAR

local mapping = { gen = -1 }

--- Extended resource name -> DeviceClass name. Several classes naming one
--- resource: the first by name (upstream makes the choice deterministic).
function M.class_mapping()
  local gen = ls.objects_generation(CLASSES)
  if mapping.gen == gen then return mapping.map end
  local map = {}
  for o in ls.objects(CLASSES) do
    local t = ls.object_table(o)
    local name = (t.metadata or {}).name
    if type(name) == "string" then
      local function put(r)
        if map[r] == nil or name < map[r] then map[r] = name end
      end
      put(IMPLICIT .. name)
      local e = (t.spec or {}).extendedResourceName
      if type(e) == "string" and e ~= "" then put(e) end
    end
  end
  mapping.gen, mapping.map = gen, map
  return map
end

--- The pod's requested resources a DeviceClass maps: list of { slot, name,
--- class }, or nil.
function M.pod_resources(pod, map)
  local out
  local req = pod.requests
  for slot = FIRST_SCALAR, ls.resource_count() - 1 do
    if tonumber(req.v[slot]) > 0 then
      local name = ls.resource_name(slot)
      local class = map[name]
      if class then
        out = out or {}
        out[#out + 1] = { slot = slot, name = name, class = class }
      end
    end
  end
  return out
end

--- The device requests for the resources the node does not advertise
--- (createDeviceRequests), with the request mappings (createRequestMappings):
--- requests (API form), mappings, and a signature of the set; nil when the
--- node's device plugins serve them all.
function M.node_requests(pod, wanted, node_allocatable)
  local need
  for _, w in ipairs(wanted) do
    if tonumber(node_allocatable.v[w.slot]) == 0 then
      need = need or {}
      need[w.slot] = w
    end
  end
  if need == nil then return nil end
  local requests, mappings, sig = json.array(), json.array(), {}
  for i = 0, pod.n_containers - 1 do
    local c = pod.containers[i]
    local names = {}
    for k = 0, c.requests.n - 1 do names[#names + 1] = ls.resource_name(c.requests.items[k].slot) end
    table.sort(names)
    for k = 0, c.requests.n - 1 do
      local q = c.requests.items[k]
      local w = need[tonumber(q.slot)]
      local count = tonumber(q.value)
      if w and count > 0 then
        local ridx = 0
        for j, n in ipairs(names) do
          if n == w.name then ridx = j - 1 break end
        end
        local rname = string.format("container-%d-request-%d", i, ridx)
        requests[#requests + 1] = { name = rname, exactly = { deviceClassName = w.class,
          allocationMode = "ExactCount", count = count } }
        mappings[#mappings + 1] = { containerName = ls.str(c.name), resourceName = w.name, requestName = rname }
        sig[#sig + 1] = rname .. "=" .. w.class .. "x" .. count
      end
    end
  end
  if #requests == 0 then return nil end
  return requests, mappings, table.concat(sig, ",")
end

--- The claim upstream creates in PreBind (without status): generateName
--- <pod>-extended-resources-, the pod as controller, the annotation.
function M.claim_object(pod, requests)
  local name, uid = ls.str(pod.name), ls.str(pod.uid)
  return { apiVersion = "resource.k8s.io/v1", kind = "ResourceClaim",
           metadata = { namespace = ls.str(pod.ns), generateName = name .. "-extended-resources-",
                        ownerReferences = json.array { { apiVersion = "v1", kind = "Pod", name = name, uid = uid,
                                                         controller = true, blockOwnerDeletion = true } },
                        annotations = { [M.ANNOTATION] = "true" } },
           spec = { devices = { requests = requests } } }
end

--- An existing claim made for the pod's extended resources in an earlier
--- cycle (findExtendedResourceClaim), or nil.
function M.find_claim(pod, claims_kind)
  local uid = ls.str(pod.uid)
  for o in ls.objects(claims_kind) do
    if o.ns == pod.ns then
      local t = ls.object_table(o)
      local m = t.metadata or {}
      if (m.annotations or {})[M.ANNOTATION] == "true" then
        for _, ref in ipairs(m.ownerReferences or {}) do
          if ref.controller == true and ref.uid == uid then return o, t end
        end
      end
    end
  end
  return nil
end

-- ---- the plugin's steps ------------------------------------------------------

-- preFilterExtendedResources: the pod's resources a DeviceClass maps, and a
-- claim made for them in an earlier cycle; nil when there are none.
function M.pre_filter(pod)
  -- most pods ask for no extended resource: nothing to look up for them
  local req, any = pod.requests, false
  for slot = FIRST_SCALAR, ls.resource_count() - 1 do
    if tonumber(req.v[slot]) > 0 then any = true break end
  end
  if not any then return nil end
  local map = M.class_mapping()
  if next(map) == nil then return nil end
  local wanted = M.pod_resources(pod, map)
  if wanted == nil then return nil end
  return { wanted = wanted, existing = M.find_claim(pod, CLAIMS), preps = {} }
end

-- The special claim's allocator form for the requests a node needs
-- (filterExtendedResources), one per set of requests; nil and a status on error.
local function extended_prep(self, s, pod, requests, mappings, sig)
  local prep = s.ext.preps[sig]
  if prep then return prep end
  local name = ls.str(pod.name) .. "-extended-resources"
  local c = { claim = { spec = { devices = { requests = requests } } }, ns = ls.str(pod.ns), name = name,
              uid = "extended-resources/" .. ls.str(pod.uid) }
  local st
  prep, st = self:prepare(c)
  if not prep then return nil, st end
  prep.requests_api, prep.mappings = requests, mappings
  s.ext.preps[sig] = prep
  return prep
end

-- Filter's part: the claims to allocate on this node (the pod's, and the
-- special claim when the node does not advertise a mapped resource); nil
-- and a status when the special claim cannot be.
function M.node_claims(self, s, pod, ni)
  if s.ext == nil then return s.to_allocate end
  if s.ext.existing then return nil, self.msg_ext_existing end
  local requests, mappings, sig = M.node_requests(pod, s.ext.wanted, ni.allocatable)
  if requests == nil then return s.to_allocate end
  local prep, st = extended_prep(self, s, pod, requests, mappings, sig)
  if not prep then return nil, st end
  local list = {}
  for i, p in ipairs(s.to_allocate) do list[i] = p end
  list[#list + 1] = prep
  return list
end

-- bindClaim for the special claim: created (generateName), then its
-- allocation and reservation written, then the pod's
-- status.extendedResourceClaimStatus (the request mappings and its name).
function M.bind(self, s, pod)
  local prep, allocation = s.ext_prep, s.ext_allocation
  self.in_flight[prep.claim.uid] = nil
  self.flight_version = self.flight_version + 1
  local ns, pname = ls.str(pod.ns), ls.str(pod.name)
  local name, err = ls.create_object(json.encode(M.claim_object(pod, prep.requests_api)))
  if not name then return fmt("create claim for extended resources %s/: %s", ns, err) end
  local o = ls.find_object(CLAIMS, pod.ns, ls.intern(name))
  if o == nil then return fmt("create claim for extended resources %s/%s: not found after its creation", ns, name) end
  local a = {}
  for k, v in pairs(allocation) do a[k] = v end
  if self.allocator.binding_conditions then a.allocationTimestamp = B.time_text(self.wall_anchor_ms + ls.now_ms()) end
  local reserved = json.array { { resource = "pods", name = pname, uid = ls.str(pod.uid) } }
  local status = { allocation = a, reservedFor = reserved }
  local t = ls.object_table(o)
  local rv = t.metadata and t.metadata.resourceVersion
  err = ls.patch_status(o, json.encode({ status = status }))
  if err then return fmt("add allocation and reservation to claim %s/%s: %s", ns, name, err) end
  -- the store may still hold the claim as created, without its allocation,
  -- until the write comes back: the next pod must not get the same device
  self:assume_written(t, status, rv)
  err = ls.patch_object("Pod", pod.ns, pod.name, json.encode({ status = { extendedResourceClaimStatus = {
    requestMappings = prep.mappings, resourceClaimName = name } } }))
  if err then return fmt("update pod %s/%s ExtendedResourceClaimStatus: %s", ns, pname, err) end
  return nil
end

return M
