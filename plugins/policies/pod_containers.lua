-- pod_containers: a pod's per-container resources in the form the NUMA and
-- load policies compute with (made once per pod and cycle, in PreFilter or
-- PreScore, never per node).
--
-- A request is { slots = { slot, ... }, [slot] = amount } over the resources
-- the container (or pod) lists with a non-zero amount; cpu in millicores,
-- every other resource in units or bytes (as ls_pod's resource lists).
local ls = require("luasched")

local M = {}

local INIT, SIDECAR = ls.CONTAINER_INIT, ls.CONTAINER_SIDECAR
local QOS = { [tonumber(ls.QOS_BEST_EFFORT)] = "BestEffort", [tonumber(ls.QOS_BURSTABLE)] = "Burstable",
              [tonumber(ls.QOS_GUARANTEED)] = "Guaranteed" }

--- A resource list (cdata { n, items[i].slot, .value }) as a request table.
function M.request(list)
  local r = { slots = {} }
  for i = 0, list.n - 1 do
    local q = list.items[i]
    local v = tonumber(q.value)
    if v ~= 0 then
      local slot = tonumber(q.slot)
      if r[slot] == nil then r.slots[#r.slots + 1] = slot end
      r[slot] = v
    end
  end
  return r
end

local function is_native(slot)
  local name = ls.resource_name(slot)
  return name:find("/", 1, true) == nil or name:find("kubernetes.io/", 1, true) ~= nil
end

--- Upstream's effective request (scheduler-plugins util.GetPodEffectiveRequest):
--- per resource, the larger of the app containers' sum and the largest init
--- container's request.
function M.effective(init, app)
  local r = { slots = {} }
  local function put(slot, v)
    if r[slot] == nil then r.slots[#r.slots + 1] = slot end
    r[slot] = v
  end
  for _, c in ipairs(app) do
    for _, slot in ipairs(c.slots) do put(slot, (r[slot] or 0) + c[slot]) end
  end
  local init_max = {}
  for _, c in ipairs(init) do
    for _, slot in ipairs(c.slots) do
      if c[slot] > (init_max[slot] or 0) then init_max[slot] = c[slot] end
    end
  end
  for slot, v in pairs(init_max) do
    if v > (r[slot] or 0) then put(slot, v) end
  end
  table.sort(r.slots)
  return r
end

--- The pod's shape: qos ("BestEffort", "Burstable", "Guaranteed"), init (init
--- and sidecar containers' requests, spec order), app (regular containers'),
--- effective (M.effective), non_native (a container requests an extended
--- resource).
function M.shape(pod)
  local s = { qos = QOS[tonumber(pod.qos_class)], init = {}, app = {}, non_native = false }
  for i = 0, pod.n_containers - 1 do
    local c = pod.containers[i]
    local r = M.request(c.requests)
    for _, slot in ipairs(r.slots) do
      if not is_native(slot) then s.non_native = true end
    end
    if c.kind == INIT or c.kind == SIDECAR then s.init[#s.init + 1] = r else s.app[#s.app + 1] = r end
  end
  s.effective = M.effective(s.init, s.app)
  return s
end

return M
