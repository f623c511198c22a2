-- SchedulingGates: a pod with scheduling gates stays out of the active queue
-- until every gate is removed.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go
-- (v1.30-v1.34): PreEnqueue returns UnschedulableAndUnresolvable
-- "waiting for scheduling gates: [g1 g2]" (the gate names in the pod's order,
-- printed as Go's %v prints a []string) when spec.schedulingGates is non-empty.
--
-- Deviations:
-- * Statuses are memoized by message (ls.status): each distinct list of gates
--   registers one status, kept for the life of the process; a single gate is
--   looked up by id without building the text again.
-- Events (upstream v1.37): TargetPod UpdatePodSchedulingGatesEliminated,
-- queued when the updated pod is the gated pod itself. (The queue also runs
-- PreEnqueue again on every update of a gated pod.)
local ls = require("luasched")

local P = ls.plugin("SchedulingGates")

P.events = {
  { resource = "Pod", action = { "UpdatePodSchedulingGatesEliminated" } },
}

function P:init()
  self.one = {}   -- gate id -> status, for the usual single gate
end

local function gates_status(pod)
  local names = {}
  for i = 0, pod.n_scheduling_gates - 1 do names[i + 1] = ls.str(pod.scheduling_gates[i]) end
  return ls.unresolvable("waiting for scheduling gates: [" .. table.concat(names, " ") .. "]")
end

function P:pre_enqueue(pod)
  local n = pod.n_scheduling_gates
  if n == 0 then return nil end
  if n == 1 then
    return ls.memo(self.one, pod.scheduling_gates[0], gates_status, pod)
  end
  -- ls.status memoizes by message: several gates build the text, not a new status
  return gates_status(pod)
end

-- ---- events and queueing hints ------------------------------------------------

P.events = {
  { resource = "TargetPod", action = "UpdatePodSchedulingGatesEliminated", hint = ls.hint_own_pod },
}

return P
