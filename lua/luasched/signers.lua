-- luasched.signers: the pod signature fragments of OpportunisticBatching
-- (KEP-5598), shared by the default plugins' `sign` hooks.
--
-- Mirrors upstream's signers (k8s.io/kube-scheduler/framework signers.go,
-- v1.37): each returns one fragment, a string that two pods share when the
-- upstream signer's value (marshalled to JSON) is the same for both. A
-- fragment starts with the upstream signer name's short form so that two
-- plugins' fragments never collide. Strings are the interned ids (equal
-- strings, equal ids), lists are put in a canonical order (upstream sorts
-- them too), so equal specs give equal fragments.
--
-- Deviations (said): a volume whose source the volume plugins do not model
-- (emptyDir, hostPath, image, configMap, secret, ...) decodes to "other" and
-- is signed by its name, where upstream signs its source and leaves out
-- configMap and secret ones; an ephemeral volume is signed by its name
-- (upstream: its claim template). Pods of one template have the same names,
-- so they still share a signature.
local M = {}

local concat, sort, tostring = table.concat, table.sort, tostring

local function id(s) return tostring(tonumber(s)) end

-- ResourcesSignerName: computePodResourceRequest (the PodRequests vector,
-- pod-level resources included), every slot.
function M.resources(pod)
  local r = pod.requests
  local out = "res:" .. tostring(tonumber(r.milli_cpu)) .. "," .. tostring(tonumber(r.memory)) .. ","
    .. tostring(tonumber(r.ephemeral_storage))
  for i = 4, 15 do   -- the scalar slots (extended resources, hugepages): the set ones
    local v = r.v[i]
    if v ~= 0 then out = out .. "," .. i .. "=" .. tostring(tonumber(v)) end
  end
  return out
end

-- TolerationsSignerName: the tolerations, sorted by key then value.
function M.tolerations(pod)
  local n = pod.n_tolerations
  if n == 0 then return "tol:" end
  local items = {}
  for i = 0, n - 1 do
    local t = pod.tolerations[i]
    items[i + 1] = id(t.key) .. "=" .. id(t.value) .. ":" .. t.op .. ":" .. t.effect
  end
  sort(items)
  return "tol:" .. concat(items, ";")
end

local function requirement(req)
  local vals = {}
  for k = 0, req.n_values - 1 do vals[k + 1] = id(req.values[k]) end
  return id(req.key) .. " " .. req.op .. " " .. concat(vals, ",") .. " " .. tostring(tonumber(req.number))
end

local function selector(sel)
  local reqs = {}
  for k = 0, sel.n - 1 do reqs[k + 1] = requirement(sel.reqs[k]) end
  sort(reqs)
  return concat(reqs, "&")
end

local function term(t)
  return "{" .. selector(t.exprs) .. "|" .. selector(t.fields) .. "}"
end

-- NodeAffinitySignerName and NodeSelectorSignerName: required terms and
-- preferred (weight, term) pairs, each list sorted; the nodeSelector labels.
function M.node_affinity(pod)
  if pod.has_required_node_affinity == 0 and pod.n_preferred_node_affinity == 0 and pod.node_selector.n == 0 then
    return "aff:"
  end
  local req, pref = {}, {}
  if pod.has_required_node_affinity ~= 0 then
    local ns = pod.required_node_affinity
    for k = 0, ns.n_terms - 1 do req[k + 1] = term(ns.terms[k]) end
    sort(req)
  end
  for k = 0, pod.n_preferred_node_affinity - 1 do
    local p = pod.preferred_node_affinity[k]
    pref[k + 1] = p.weight .. term(p.term)
  end
  sort(pref)
  local sel = {}
  for k = 0, pod.node_selector.n - 1 do
    local l = pod.node_selector.items[k]
    sel[k + 1] = id(l.key) .. "=" .. id(l.value)
  end
  return "aff:" .. pod.has_required_node_affinity .. concat(req, ",") .. "/" .. concat(pref, ",")
    .. " sel:" .. concat(sel, ",")
end

-- HostPortsSignerName: the set of hostPort numbers of every container
-- (init ones too), sorted.
function M.host_ports(pod)
  local any = false
  for k = 0, pod.n_ports - 1 do any = any or pod.ports[k].host_port ~= 0 end
  if not any then return "ports:" end
  local seen, ports = {}, {}
  for k = 0, pod.n_ports - 1 do
    local hp = pod.ports[k].host_port
    if hp ~= 0 and not seen[hp] then
      seen[hp] = true
      ports[#ports + 1] = hp
    end
  end
  sort(ports)
  return "ports:" .. concat(ports, ",")
end

-- ImageNamesSignerName: the canonical (normalized) image names of the init and
-- regular containers (not the image volumes), sorted. pod.images lists the
-- containers' images first, one per container, then the image volumes'.
function M.images(pod)
  local n = math.min(pod.n_containers, pod.n_images)
  if n == 1 then return "img:" .. id(pod.images[0]) end
  local names = {}
  for k = 0, n - 1 do names[k + 1] = id(pod.images[k]) end
  sort(names)
  return "img:" .. concat(names, ",")
end

-- VolumesSignerName: the volume sources other than configMap and secret.
local SOURCE_OTHER, SOURCE_EPHEMERAL = 0, 2
function M.volumes(pod)
  if pod.n_volumes == 0 then return "vol:" end
  local vols = {}
  for k = 0, pod.n_volumes - 1 do
    local v = pod.volumes[k]
    do
      local what = (v.source == SOURCE_EPHEMERAL or v.source == SOURCE_OTHER) and id(v.name) or id(v.claim)
      local mons = {}
      for m = 0, v.n_monitors - 1 do mons[m + 1] = id(v.monitors[m]) end
      vols[#vols + 1] = v.source .. ":" .. what .. ":" .. id(v.handle) .. ":" .. id(v.pool) .. ":"
        .. v.read_only .. ":" .. concat(mons, ",")
    end
  end
  sort(vols)
  return "vol:" .. concat(vols, ";")
end

-- NodeNameSignerName: spec.nodeName.
function M.node_name(pod) return "nn:" .. id(pod.node_name) end

-- FeaturesSignerName: the inferred required features (already sorted).
function M.features(pod)
  if pod.n_required_features == 0 then return "feat:" end
  local f = {}
  for k = 0, pod.n_required_features - 1 do f[k + 1] = id(pod.required_features[k]) end
  return "feat:" .. concat(f, ",")
end

-- LabelsSignerName: the pod's labels (sorted by key id in the model).
function M.labels(pod)
  if pod.labels.n == 0 then return "lab:" end
  local l = {}
  for k = 0, pod.labels.n - 1 do
    local it = pod.labels.items[k]
    l[k + 1] = id(it.key) .. "=" .. id(it.value)
  end
  return "lab:" .. concat(l, ",")
end

return M
