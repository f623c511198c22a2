-- NodeUnschedulable: a node marked spec.unschedulable (cordoned) takes no new
-- pods, unless the pod tolerates the taint
-- {key: node.kubernetes.io/unschedulable, effect: NoSchedule}.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go:
-- Filter fails with UnschedulableAndUnresolvable "node(s) were unschedulable".
--
-- Deviations: no EventsToRegister table yet, so the plugin is registered for
-- every cluster event (upstream registers Node/Add|UpdateNodeTaint with a hint).
local ls = require("luasched")

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

return P
