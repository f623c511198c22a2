-- gang_common: what the two gang policies (GangScheduling, Coscheduling)
-- share, as a module on the plugin path (`require("gang_common")`; each plugin
-- gets its own copy). A group is named by a key string "namespace/name"; the
-- plugin gives the function that reads a pod's key (a label, a spec field).
--
-- * Members counted where they are: pending in the scheduling queue (noted at
--   PreEnqueue, checked with ls.queued_pod), waiting at Permit
--   (ls.waiting_pods), and on nodes (assumed or bound; counted per node and
--   refreshed only for the nodes the snapshot reports changed, so a cycle
--   costs one node's pods, not the cluster's).
-- * The group's waiting pods allowed or rejected together, its pending
--   members activated (upstream's pods-to-activate).
-- * RFC 3339 timestamps (object metadata) as Unix nanoseconds, for ordering.
local ls = require("luasched")

local M = {}

-- ---- members pending in the queue -------------------------------------------------

--- A member tracker: `key_of(pod)` gives a pod's group key or nil.
function M.tracker(key_of)
  return {
    key_of = key_of,
    pending = {},                                   -- key -> { [pod id] = { name, ns } }
    rejected = {},                                  -- key -> true: rejected, not to be activated
    nodes = { gen = {}, num = 0, per = {}, totals = {}, bound = {} },
  }
end

--- Notes a pending member (PreEnqueue sees every pod that enters the queue).
--- A member not seen before lifts the group's rejection (see reject_all).
function M.note_pending(t, key, pod)
  local g = t.pending[key]
  if g == nil then
    g = {}
    t.pending[key] = g
  end
  local id = pod.id
  local e = g[id]
  if e == nil or e[1] ~= pod.name or e[2] ~= pod.ns then
    g[id] = { pod.name, pod.ns }
    t.rejected[key] = nil
  end
end

--- Calls fn(pod) for every member still pending in the queue (forgetting the
--- ones that left it) except the pod `except` (a pod id, or nil); returns
--- their number.
function M.each_pending(t, key, except, fn)
  local g = t.pending[key]
  if g == nil then return 0 end
  local n = 0
  for id, e in pairs(g) do
    local q = ls.queued_pod(id)
    if q == nil or q.name ~= e[1] or q.ns ~= e[2] then
      g[id] = nil
    elseif id ~= except then
      n = n + 1
      if fn then fn(q) end
    end
  end
  if next(g) == nil then t.pending[key] = nil end
  return n
end

-- ---- members on nodes (assumed or bound) ----------------------------------------

local function drop_node(entry, j)
  local old = entry.per[j]
  if old then
    local totals, bound = entry.totals, entry.bound
    for k, c in pairs(old) do
      totals[k] = totals[k] - c[1]
      bound[k] = bound[k] - c[2]
    end
  end
  entry.per[j], entry.gen[j] = nil, nil
end

local function count_node(entry, j, ni, g, key_of)
  drop_node(entry, j)
  local per
  local pods = ni.pods
  for i = 0, ni.num_pods - 1 do
    local p = pods[i]
    local k = key_of(p)
    if k ~= nil then
      per = per or {}
      local c = per[k]
      if c == nil then
        c = { 0, 0 }
        per[k] = c
      end
      c[1] = c[1] + 1
      if p.node_name ~= 0 then c[2] = c[2] + 1 end   -- an assumed pod has no nodeName yet
    end
  end
  if per then
    local totals, bound = entry.totals, entry.bound
    for k, c in pairs(per) do
      totals[k] = (totals[k] or 0) + c[1]
      bound[k] = (bound[k] or 0) + c[2]
    end
  end
  entry.per[j], entry.gen[j] = per, g
end

--- Brings the per-node member counts up to date with the cycle's snapshot
--- (call it from a scheduling cycle's hook, never from PreEnqueue).
function M.refresh(t)
  local nodes, num = ls.all_nodes()
  ls.refresh_nodes(t.nodes, nodes, num, count_node, drop_node, t.key_of)
end

--- Members on nodes (assumed or bound) as of the last refresh, and of them
--- the bound ones.
function M.on_nodes(t, key)
  local n = t.nodes
  return n.totals[key] or 0, n.bound[key] or 0
end

-- ---- the group's waiting pods ----------------------------------------------------

--- The group's pods waiting at Permit (a list of pods) except `except` (an id).
function M.waiting(t, key, except)
  local out = {}
  local key_of = t.key_of
  for p in ls.waiting_pods() do
    if p.id ~= except and key_of(p) == key then out[#out + 1] = p end
  end
  return out
end

--- Allows every waiting pod of the group (as plugin `name`); returns how many.
function M.allow_all(t, key, name)
  t.rejected[key] = nil
  local list = M.waiting(t, key)
  for _, p in ipairs(list) do ls.allow(p, name) end
  return #list
end

--- Rejects every waiting pod of the group with `msg`; returns how many. The
--- group stays rejected (its members are not activated by a member that
--- waits: that would undo the rejection at once, and a group that cannot fit
--- would be retried without end) until a new member arrives, the group
--- reaches its quorum, or the plugin clears it (its group object changed).
function M.reject_all(t, key, name, msg)
  t.rejected[key] = true
  local list = M.waiting(t, key)
  for _, p in ipairs(list) do ls.reject(p, name, msg) end
  return #list
end

--- Moves the group's pending members (but `except`) to activeQ, unless the
--- group was rejected; returns how many were considered.
function M.activate_pending(t, key, except)
  if t.rejected[key] then return 0 end
  return M.each_pending(t, key, except, ls.activate)
end

--- Forgets every group's rejection (the group objects changed).
function M.clear_rejections(t)
  t.rejected = {}
end

-- ---- timestamps -------------------------------------------------------------------

-- Days from 1970-01-01 to a civil date (proleptic Gregorian).
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

--- An RFC 3339 time ("2026-11-24T10:00:00Z", "...T10:00:00.5+01:00") as Unix
--- nanoseconds; nil when absent or not a time.
function M.parse_time(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec, rest = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$")
  if not y then return nil end
  local frac, zone = rest:match("^%.(%d+)(.*)$")
  if not frac then frac, zone = "0", rest end
  local offset = 0
  if zone ~= "Z" and zone ~= "z" then
    local sign, zh, zm = zone:match("^([+-])(%d%d):(%d%d)$")
    if not sign then return nil end
    offset = (tonumber(zh) * 60 + tonumber(zm)) * 60 * (sign == "-" and -1 or 1)
  end
  local secs = days_from_civil(tonumber(y), tonumber(mo), tonumber(d)) * 86400
    + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec) - offset
  local ns = tonumber((frac .. "000000000"):sub(1, 9))
  return secs * 1000000000 + ns
end

return M
