-- PrioritySort: the default QueueSort plugin. Pods with a higher priority are
-- scheduled first; among equal priorities the one that came first goes first.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/queuesort/priority_sort.go
-- (Less = p1 > p2 || (p1 == p2 && t1.Before(t2)); priority = spec.priority, nil -> 0).
--
-- Deviations:
-- * Upstream compares QueuedPodInfo.Timestamp (when the pod was added to the
--   queue); we compare the pod's creation timestamp, then its arrival sequence
--   number (pod.seq), which gives the same order for pods that are queued as
--   they are created and is deterministic in simulation.
-- * sort_key returns the priority alone; the C queue orders equal keys by
--   creation time and arrival order, so it need not call `less` per comparison.
local ls = require("luasched")

local P = ls.plugin("PrioritySort")

local function priority(pod)
  if pod.has_priority ~= 0 then return pod.priority end
  return 0
end

function P:sort_key(pod)
  return priority(pod)
end

function P:less(a, b)
  local pa, pb = priority(a), priority(b)
  if pa ~= pb then return pa > pb end
  if a.creation_ns ~= b.creation_ns then return a.creation_ns < b.creation_ns end
  return a.seq < b.seq
end

-- ---- events ---------------------------------------------------------------------

-- None: the QueueSort plugin rejects no pod, so upstream registers no event for it
-- (the runtime only asks PreEnqueue, PreFilter, Filter, Reserve and Permit
-- plugins for events tables).
P.events = {}

return P
