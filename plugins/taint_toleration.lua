-- TaintToleration: a node's NoSchedule/NoExecute taints keep out pods that do
-- not tolerate them; its PreferNoSchedule taints make it less attractive.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go
-- (v1.37):
-- * Filter: a taint with effect NoSchedule or NoExecute that the pod's
--   tolerations do not tolerate -> UnschedulableAndUnresolvable
--   "node(s) had untolerated taint(s)" (since v1.35; before, the message named
--   the first such taint's key and value). The alpha toleration operators Gt
--   and Lt (TaintTolerationComparisonOperators, off in v1.37) are not supported.
-- * PreScore: keeps the tolerations with effect PreferNoSchedule or empty.
-- * Score: the number of PreferNoSchedule taints not tolerated by those.
-- * NormalizeScore: DefaultNormalizeScore(100, reverse) (helper/normalize_score.go).
--
-- Deviations:
-- * PreScore records only whether the pod has any PreferNoSchedule/empty-effect
--   toleration; Score then matches each PreferNoSchedule taint against all the
--   pod's tolerations. A toleration with another effect never tolerates a
--   PreferNoSchedule taint, so the count is the same as upstream's.
-- Events (upstream v1.37 as its plugin guide describes them, hint logic as in
-- the v1.32-v1.34 code): Node Add|UpdateNodeTaint, queued only when the node
-- had a NoSchedule/NoExecute taint the pod does not tolerate (an added node
-- counts as having had one) and has none now; TargetPod UpdatePodToleration,
-- queued (the pod's own tolerations changed).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("TaintToleration")

local EFFECT_ALL, PREFER = ls.EFFECT_ALL, ls.EFFECT_PREFER_NO_SCHEDULE
-- effect mask for ls.find_untolerated_taint: 1 << NoSchedule | 1 << NoExecute
local FILTER_MASK = bit.bor(bit.lshift(1, ls.EFFECT_NO_SCHEDULE), bit.lshift(1, ls.EFFECT_NO_EXECUTE))
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE

function P:init()
  self.untolerated = ls.unresolvable("node(s) had untolerated taint(s)")
end

function P:filter(_, pod, ni)
  local node = ni.node
  local n = node.n_taints
  if n == 0 then return nil end
  if ls.find_untolerated_taint(node.taints, n, pod.tolerations, pod.n_tolerations, FILTER_MASK) < 0 then
    return nil
  end
  return self.untolerated
end

-- Whether the pod has a toleration that can tolerate a PreferNoSchedule taint.
local function prefer_tolerations(pod)
  local tols = pod.tolerations
  for i = 0, pod.n_tolerations - 1 do
    local e = tols[i].effect
    if e == EFFECT_ALL or e == PREFER then return true end
  end
  return false
end

function P:pre_score(state, pod)
  state[self.name] = { tolerates_some = prefer_tolerations(pod) }
  return nil
end

function P:score(state, pod, ni)
  local s = state[self.name]
  if s == nil then
    s = { tolerates_some = prefer_tolerations(pod) }
    state[self.name] = s
  end
  local node = ni.node
  local taints = node.taints
  local count = 0
  if s.tolerates_some then
    local tols, ntols = pod.tolerations, pod.n_tolerations
    for i = 0, node.n_taints - 1 do
      if taints[i].effect == PREFER and not ls.tolerates(tols, ntols, taints[i]) then
        count = count + 1
      end
    end
  else
    for i = 0, node.n_taints - 1 do
      if taints[i].effect == PREFER then count = count + 1 end
    end
  end
  return count
end

function P:normalize_score(_, _, scores, _, n)
  ls.default_normalize_score(scores, n, MAX_NODE_SCORE, true)
  return nil
end


-- ---- events and queueing hints ------------------------------------------------

local find_untolerated_taint = ls.find_untolerated_taint

local function untolerated(node, pod)
  return find_untolerated_taint(node.taints, node.n_taints, pod.tolerations, pod.n_tolerations, FILTER_MASK) >= 0
end

local function after_node_change(pod, old, new)
  local was = old == nil or untolerated(old, pod)
  if was and not untolerated(new, pod) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "Node", action = { "Add", "UpdateNodeTaint" }, hint = after_node_change },
  { resource = "TargetPod", action = "UpdatePodToleration", hint = ls.hint_own_pod },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- TaintToleration: the tolerations (TolerationsSignerName).
function P:sign(pod) return signers.tolerations(pod) end

return P
