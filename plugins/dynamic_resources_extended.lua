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

return M
