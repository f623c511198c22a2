-- luasched.fields: the constants and helpers that go with the pod and node
-- fields policy plugins read (containers, resource lists, conditions, QoS
-- class). install(ls) adds them to the luasched module; every helper checks
-- its arguments, reads through the memory-safe views and allocates nothing
-- except ls.resource_table (a new table, for set-up code, not per node).
local C = require("luasched.clib")
local ffi = require("ffi")

local error, type, tonumber, tostring = error, type, tonumber, tostring
local istype = ffi.istype
local bit = require("bit")

local M = {}

-- object_data declarations: kind -> the C want bit.
local WANT = {
  Pod = C.LS_WANT_POD_JSON, Node = C.LS_WANT_NODE_JSON,
  NodeMetrics = C.LS_WANT_NODE_METRICS, PodMetrics = C.LS_WANT_POD_METRICS,
}

--- Checks a loaded plugin's `object_data` list (the kinds whose whole objects
--- it reads) and tells C: the decoder keeps the JSON of pods / nodes from now
--- on, `luasched run` polls the metrics API. Events registered for
--- NodeMetrics / PodMetrics count as a declaration. nil and a message naming
--- the plugin and the entry when the list is wrong.
function M.declare(P)
  local list = rawget(P, "object_data")
  local bits = 0
  if list ~= nil then
    if type(list) ~= "table" then
      return nil, string.format("plugin %q (%s): object_data: expected a list of kinds, got %s", P.name,
        tostring(P.file), type(list))
    end
    for i, kind in ipairs(list) do
      if not WANT[kind] then
        return nil, string.format("plugin %q (%s): object_data[%d]: unknown kind %q (expected Pod, Node, "
          .. "NodeMetrics or PodMetrics)", P.name, tostring(P.file), i, tostring(kind))
      end
      bits = bit.bor(bits, WANT[kind])
    end
  end
  local events = rawget(P, "events")
  if type(events) == "table" then
    for _, e in ipairs(events) do
      if type(e) == "table" and (e.resource == "NodeMetrics" or e.resource == "PodMetrics") then
        bits = bit.bor(bits, WANT[e.resource])
      end
    end
  end
  if bits ~= 0 then C.ls_model_want(bits) end
  return true
end

local QOS_NAMES = { [0] = "BestEffort", "Burstable", "Guaranteed" }
local CONTAINER_KINDS = { [0] = "regular", "sidecar", "init" }

local function slot_of(res, where)
  if type(res) == "number" then return res end
  if type(res) ~= "string" then error(where .. ": expected a resource name or index, got a " .. type(res), 3) end
  return tonumber(C.ls_resource_index(res))   -- -1 when no object ever named it
end

function M.install(ls)
  local pod_condition = ffi.typeof("ls_pod_condition")
  ---@section Pod and node fields
  ls.QOS_BEST_EFFORT = C.LS_QOS_BEST_EFFORT       --- QoS class BestEffort (`pod.qos_class`).
  ls.QOS_BURSTABLE = C.LS_QOS_BURSTABLE           --- QoS class Burstable.
  ls.QOS_GUARANTEED = C.LS_QOS_GUARANTEED         --- QoS class Guaranteed.
  ls.CONTAINER_REGULAR = C.LS_CONTAINER_REGULAR   --- Container kind (`container.kind`): a regular container.
  ls.CONTAINER_SIDECAR = C.LS_CONTAINER_SIDECAR   --- Container kind: an init container with restartPolicy Always.
  ls.CONTAINER_INIT = C.LS_CONTAINER_INIT         --- Container kind: an init container.
  ls.PROTO_TCP = C.LS_PROTO_TCP                   --- Port protocol TCP (also set by luasched.lua's list).
  ls.PROTO_UDP = C.LS_PROTO_UDP                   --- Port protocol UDP.
  ls.PROTO_SCTP = C.LS_PROTO_SCTP                 --- Port protocol SCTP.

  --- "BestEffort", "Burstable" or "Guaranteed" for pod.qos_class.
  ---@param class integer
  ---@return string
  function ls.qos_name(class)
    return QOS_NAMES[tonumber(class)] or error("ls.qos_name: expected a QoS class (0..2), got " .. tostring(class), 2)
  end

  --- "regular", "sidecar" or "init" for container.kind.
  ---@param kind integer
  ---@return string
  function ls.container_kind_name(kind)
    return CONTAINER_KINDS[tonumber(kind)]
      or error("ls.container_kind_name: expected a container kind (0..2), got " .. tostring(kind), 2)
  end

  --- The value of resource `res` (a name or an index) in a resource list
  --- (container.requests, pod.overhead, ...): cpu in millicores, the rest in
  --- units; nil when the list does not name it.
  ---@param list ls.ResourceList
  ---@param res string|integer
  ---@return number?
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
  ---@param list ls.ResourceList
  ---@return table<string, number>
  function ls.resource_table(list)
    if list == nil then error("ls.resource_table: the resource list is nil", 2) end
    local t = {}
    for i = 0, list.n - 1 do
      local q = list.items[i]
      t[ffi.string(C.ls_resource_name(q.slot))] = tonumber(q.value)
    end
    return t
  end

  local json = require("luasched.json")
  local unwrap = require("luasched.views").unwrap
  local caches = { pod = { max = 4096, n = 0, items = {} }, node = { max = 4096, n = 0, items = {} } }

  local function whole(kind, text_ptr, bit_wanted)
    if text_ptr == nil then
      if bit.band(C.ls_model_wanted(), bit_wanted) == 0 then
        error(string.format("ls.%s_data: no loaded plugin declared object_data = { \"%s\" }", kind,
          kind == "pod" and "Pod" or "Node"), 3)
      end
      return nil   -- decoded before the declaring plugin was loaded (a hot reload added it)
    end
    local text = ffi.string(text_ptr)
    local cache = caches[kind]
    local t = cache.items[text]
    if t == nil then
      t = ls.cache_get(cache, text, function() return json.decode(text, true) end)
    end
    return t
  end

  --- The whole pod as Lua tables (JSON as the API server sent it or the
  --- cluster file gave it; null is nil), decoded once per version and shared:
  --- read-only. The plugin declares P.object_data = { "Pod" }. nil for a pod
  --- decoded before the declaring plugin was loaded.
  ---@param pod ls.Pod
  ---@return table?
  function ls.pod_data(pod)
    if pod == nil then error("ls.pod_data: the pod is nil", 2) end
    return whole("pod", C.ls_pod_json(unwrap(pod)), C.LS_WANT_POD_JSON)
  end

  --- The whole node, as ls.pod_data (P.object_data = { "Node" }).
  ---@param node ls.Node
  ---@return table?
  function ls.node_data(node)
    if node == nil then error("ls.node_data: the node is nil", 2) end
    return whole("node", C.ls_node_json(unwrap(node)), C.LS_WANT_NODE_JSON)
  end

  local parsed = ffi.new("int64_t[1]")
  --- A Kubernetes quantity text ("1500m", "3Gi", "250000n") as a number:
  --- `scale` "cpu" or 3 for milli-units (millicores), a number 0..9 for
  --- value x 10^scale, nil for units; rounded up as upstream's ScaledValue.
  --- nil when the text is not a quantity.
  ---@param text string
  ---@param scale? "cpu"|integer
  ---@return number?
  function ls.parse_quantity(text, scale)
    if type(text) ~= "string" then return nil end
    local sc = scale == "cpu" and 3 or scale or 0
    -- (a scale of 1000 for "milli" gave nil, as if the text were no quantity)
    if type(sc) ~= "number" or sc < 0 or sc > 9 or sc % 1 ~= 0 then
      error("ls.parse_quantity: scale must be \"cpu\", nil or an integer 0..9 (3: milli-units), got "
        .. tostring(scale), 2)
    end
    if not C.ls_quantity_value(text, sc, parsed) then return nil end
    return tonumber(parsed[0])
  end

  --- The condition of type `type_id` (an interned id or a string) of a pod or
  --- a node: its status and reason ids (pod conditions only have a reason;
  --- a node's is 0), or nil when there is none.
  ---@param obj ls.Pod|ls.Node
  ---@param type_id integer|string
  ---@return integer?, integer?
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
