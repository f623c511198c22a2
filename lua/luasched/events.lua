-- luasched.events: a plugin's `events` table (EventsToRegister) checked when
-- the plugin loads, and turned into registrations for the C queue.
--
--   P.events = {
--     { resource = "AssignedPod", action = "Delete" },
--     { resource = "Node", action = { "Add", "UpdateNodeAllocatable" },
--       hint = function(pod, old, new, self) return ls.QUEUE end },
--   }
--
-- Pod resources as upstream v1.37 names them: "AssignedPod" (a pod on a node,
-- or a deleted nominated pod), "UnscheduledPod" (another pending pod),
-- "TargetPod" (the rejected pod itself was updated); "Pod" takes all three.
-- A hint gets the pod, the event's old and new objects (nil when absent;
-- read-only cdata) and the plugin instance of the pod's profile.
--
-- No table: the plugin is registered for every event (upstream's default for
-- a plugin without EnqueueExtensions). An empty table: for none.
local ffi = require("ffi")
local C = require("luasched.clib")

local M = {}

local ACTIONS = "Add, Delete, Update, All, UpdateNodeAllocatable, UpdateNodeLabel, UpdateNodeTaint, "
  .. "UpdateNodeCondition, UpdateNodeAnnotation, UpdatePodLabel, UpdatePodScaleDown, UpdatePodToleration, "
  .. "UpdatePodSchedulingGatesEliminated or UpdatePodGeneratedResourceClaim"
local RESOURCES = "AssignedPod, UnscheduledPod, TargetPod, Pod, Node, PersistentVolume, PersistentVolumeClaim, "
  .. "StorageClass, CSINode, CSIDriver, "
  .. "CSIStorageCapacity, NodeMetrics, PodMetrics, \"*\", or a custom resource written plural.version.group"

-- A value as a message shows it: a string quoted (shortened past 64
-- characters), a table or a function by its type (its __tostring is not run).
local function shown(v)
  local t = type(v)
  if t == "table" or t == "function" or t == "userdata" or t == "thread" or t == "cdata" then return "a " .. t end
  v = tostring(v)
  return #v > 64 and string.format("%q...", v:sub(1, 64)) or string.format("%q", v)
end

-- " (did you mean X?)" for a misspelt resource, action or entry field: the
-- closest of the names in `expected` (a message's list: "A, B or C").
local function near(word, expected)
  local names = {}
  for name in expected:gsub(", or a custom resource.*$", ""):gmatch("[%w*]+") do
    if name ~= "or" then names[#names + 1] = name end
  end
  local hint = require("luasched.suggest").did_you_mean(word, names)
  return hint and string.format("; did you mean %s?", hint) or ""
end

local ENTRY_FIELDS = "resource, action or hint"

local function entry_error(plugin, i, field, what)
  return string.format("plugin %q (%s): events[%d].%s: %s", plugin.name, tostring(plugin.file), i, field, what)
end

-- A plugin registers a handful of events (upstream's EventsToRegister); four
-- million entries took the profiles' build past its budget, naming no plugin,
-- and 800 MB (attacker round 4).
local MAX_EVENTS, MAX_ACTIONS = 1024, 64

local function actions_of(plugin, i, action)
  local list = type(action) == "table" and action or { action }
  if type(action) ~= "string" and type(action) ~= "table" then
    return nil, entry_error(plugin, i, "action", "expected an action name or a list of them, got " .. type(action))
  end
  local names = {}
  for k, a in ipairs(list) do
    if k > MAX_ACTIONS then
      return nil, entry_error(plugin, i, "action", string.format("more than %d actions", MAX_ACTIONS))
    end
    if type(a) ~= "string" or C.ls_action_from_name(a) == 0 then
      return nil, entry_error(plugin, i, "action" .. (type(action) == "table" and "[" .. k .. "]" or ""),
        string.format("unknown action %s (expected %s)%s", shown(a), ACTIONS, near(a, ACTIONS)))
    end
    names[#names + 1] = a
  end
  if #names == 0 then
    return nil, entry_error(plugin, i, "action", "expected at least one action")
  end
  return names
end

--- The registrations of a plugin: a list of { resource = , actions = { names },
--- hint = fn or nil }, or nil and a message naming the plugin, the entry and
--- what was expected.
function M.check(plugin)
  local events = rawget(plugin, "events")
  if events == nil then
    return { { resource = "*", actions = { "All" } } }
  end
  if type(events) ~= "table" then
    return nil, string.format("plugin %q (%s): events: expected a list of {resource, action, hint}, got %s",
      plugin.name, tostring(plugin.file), type(events))
  end
  local out = {}
  for i, e in ipairs(events) do
    if i > MAX_EVENTS then
      return nil, string.format("plugin %q (%s): events: more than %d entries", plugin.name, tostring(plugin.file),
        MAX_EVENTS)
    end
    if type(e) ~= "table" then
      return nil, entry_error(plugin, i, "", "expected a table {resource, action, hint}"):gsub("%.: ", ": ")
    end
    for k in pairs(e) do   -- { resource = "Node", actions = "Add" } read no action
      if k ~= "resource" and k ~= "action" and k ~= "hint" then
        return nil, entry_error(plugin, i, tostring(k),
          string.format("unknown field (expected %s)%s", ENTRY_FIELDS, near(k, ENTRY_FIELDS)))
      end
    end
    if type(e.resource) ~= "string" or not C.ls_resource_name_valid(e.resource) then
      return nil, entry_error(plugin, i, "resource",
        string.format("unknown resource %s (expected %s)%s", shown(e.resource), RESOURCES, near(e.resource, RESOURCES)))
    end
    local names, err = actions_of(plugin, i, e.action)
    if not names then return nil, err end
    if e.hint ~= nil and type(e.hint) ~= "function" then
      return nil, entry_error(plugin, i, "hint", "expected a function(pod, old, new, self), got " .. type(e.hint))
    end
    out[#out + 1] = { resource = e.resource, actions = names, hint = e.hint }
  end
  return out
end

local casts = {
  [C.LS_OBJ_POD] = "const ls_pod *",
  [C.LS_OBJ_NODE] = "const ls_node *",
  [C.LS_OBJ_OTHER] = "const ls_object *",
}

local refs   -- object type -> a maker of references (views.lua), made on first use
local function ref_of(object_type)
  if not refs then
    local views = require("luasched.views")
    refs = { [C.LS_OBJ_POD] = views.ref("ls_pod"), [C.LS_OBJ_NODE] = views.ref("ls_node"),
      [C.LS_OBJ_OTHER] = views.ref("ls_object") }
  end
  return refs[object_type]
end

--- The old and new objects of an event as typed cdata (nil when absent);
--- with `as_refs` (a plugin that is not built-in), as references that live
--- for the running call only (views.lua).
function M.objects(ev, as_refs)
  local ct = casts[ev.object_type]
  if not ct then return nil, nil end
  local old = ev.old_obj ~= nil and ffi.cast(ct, ev.old_obj)[0] or nil
  local new = ev.new_obj ~= nil and ffi.cast(ct, ev.new_obj)[0] or nil
  if as_refs then
    local ref = ref_of(ev.object_type)
    return ref(old), ref(new)
  end
  return old, new
end

return M
