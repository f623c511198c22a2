-- NodeUnschedulable: a node marked spec.unschedulable (cordoned) takes no new
-- pods, unless the pod tolerates the taint
-- {key: node.kubernetes.io/unschedulable, effect: NoSchedule}.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go:
-- Filter fails with UnschedulableAndUnresolvable "node(s) were unschedulable".
--
-- Events (EventsToRegister, upstream v1.37 as its plugin guide describes it;
-- the hint logic read in the v1.32-v1.34 code): Node Add|UpdateNodeTaint,
-- queued when the node is added schedulable or goes from unschedulable to
-- schedulable; TargetPod UpdatePodToleration, queued when the pod now
-- tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeUnschedulable")

local ERR_REASON = "node(s) were unschedulable"
local TAINT_KEY = "node.kubernetes.io/unschedulable"

function P:init()
  self.status = ls.unresolvable(ERR_REASON)
  -- The taint a cordoned node implies; built once, kept alive by the instance.
  self.taint = ls.new_taint(TAINT_KEY, nil, ls.EFFECT_NO_SCHEDULE)
end

function P:filter(_, pod, ni)
  if ni.node.unschedulable == 0 then return nil end
  if pod.n_tolerations > 0 and ls.pod_tolerates(pod, self.taint) then return nil end
  return self.status
end

-- ---- events and queueing hints ------------------------------------------------

local function after_node_change(_, old, new)
  if new.unschedulable ~= 0 then return ls.QUEUE_SKIP end
  if old == nil or old.unschedulable ~= 0 then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_toleration_change(_, _, new, self)
  if ls.pod_tolerates(new, self.taint) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "Node", action = { "Add", "UpdateNodeTaint" }, hint = after_node_change },
  { resource = "TargetPod", action = "UpdatePodToleration", hint = after_toleration_change },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeUnschedulable: the tolerations (TolerationsSignerName).
function P:sign(pod) return signers.tolerations(pod) end

return P
