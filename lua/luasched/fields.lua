-- luasched.fields: the constants and helpers that go with the pod and node
-- fields policy plugins read (containers, resource lists, conditions, QoS
-- class). install(ls) adds them to the luasched module; every helper checks
-- its arguments, reads through the memory-safe views and allocates nothing
-- except ls.resource_table (a new table, for set-up code, not per node).
local C = require("luasched.clib")
local ffi = require("ffi")

local error, type, tonumber, tostring = error, type, tonumber, tostring
local istype = ffi.istype

local M = {}

local QOS_NAMES = { [0] = "BestEffort", "Burstable", "Guaranteed" }
local CONTAINER_KINDS = { [0] = "regular", "sidecar", "init" }

local function slot_of(res, where)
  if type(res) == "number" then return res end
  if type(res) ~= "string" then error(where .. ": expected a resource name or index, got a " .. type(res), 3) end
  return tonumber(C.ls_resource_index(res))   -- -1 when no object ever named it
end

function M.install(ls)
  local pod_condition = ffi.typeof("ls_pod_condition")
  ls.QOS_BEST_EFFORT, ls.QOS_BURSTABLE, ls.QOS_GUARANTEED = C.LS_QOS_BEST_EFFORT, C.LS_QOS_BURSTABLE,
    C.LS_QOS_GUARANTEED
  ls.CONTAINER_REGULAR, ls.CONTAINER_SIDECAR, ls.CONTAINER_INIT = C.LS_CONTAINER_REGULAR,
    C.LS_CONTAINER_SIDECAR, C.LS_CONTAINER_INIT
  ls.PROTO_TCP, ls.PROTO_UDP, ls.PROTO_SCTP = C.LS_PROTO_TCP, C.LS_PROTO_UDP, C.LS_PROTO_SCTP

  --- "BestEffort", "Burstable" or "Guaranteed" for pod.qos_class.
  function ls.qos_name(class)
    return QOS_NAMES[tonumber(class)] or error("ls.qos_name: expected a QoS class (0..2), got " .. tostring(class), 2)
  end

  --- "regular", "sidecar" or "init" for container.kind.
  function ls.container_kind_name(kind)
    return CONTAINER_KINDS[tonumber(kind)]
      or error("ls.container_kind_name: expected a container kind (0..2), got " .. tostring(kind), 2)
  end

  --- The value of resource `res` (a name or an index) in a resource list
  --- (container.requests, pod.overhead, ...): cpu in millicores, the rest in
  --- units; nil when the list does not name it.
  function ls.quantity(list, res)
    if list == nil then error("ls.quantity: the resource list is nil", 2) end
    local slot = slot_of(res, "ls.quantity")
    for i = 0, list.n - 1 do
      local q = list.items[i]
      if q.slot == slot then return tonumber(q.value) end
    end
    return nil
  end

  --- A resource list as a new table: name -> number (cpu in millicores).
  function ls.resource_table(list)
    if list == nil then error("ls.resource_table: the resource list is nil", 2) end
    local t = {}
    for i = 0, list.n - 1 do
      local q = list.items[i]
      t[ffi.string(C.ls_resource_name(q.slot))] = tonumber(q.value)
    end
    return t
  end

  --- The condition of type `type_id` (an interned id or a string) of a pod or
  --- a node: its status and reason ids (pod conditions only have a reason;
  --- a node's is 0), or nil when there is none.
  function ls.condition(obj, type_id)
    if obj == nil then error("ls.condition: the pod or node is nil", 2) end
    if type(type_id) == "string" then type_id = ls.intern(type_id) end
    local conds = obj.conditions
    for i = 0, obj.n_conditions - 1 do
      local c = conds[i]
      if c.type == type_id then
        return c.status, istype(pod_condition, c) and c.reason or 0
      end
    end
    return nil
  end
end

return M
