-- TaintToleration: a node's NoSchedule/NoExecute taints keep out pods that do
-- not tolerate them; its PreferNoSchedule taints make it less attractive.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go:
-- * Filter: the first taint with effect NoSchedule or NoExecute that the pod's
--   tolerations do not tolerate -> UnschedulableAndUnresolvable
--   "node(s) had untolerated taint {<key>: <value>}".
-- * PreScore: keeps the tolerations with effect PreferNoSchedule or empty.
-- * Score: the number of PreferNoSchedule taints not tolerated by those.
-- * NormalizeScore: DefaultNormalizeScore(100, reverse) (helper/normalize_score.go).
--
-- Deviations:
-- * PreScore records only whether the pod has any PreferNoSchedule/empty-effect
--   toleration; Score then matches each PreferNoSchedule taint against all the
--   pod's tolerations. A toleration with another effect never tolerates a
--   PreferNoSchedule taint, so the count is the same as upstream's.
-- * No EventsToRegister table yet: registered for every cluster event.
local ls = require("luasched")

local P = ls.plugin("TaintToleration")

local EFFECT_ALL, PREFER = ls.EFFECT_ALL, ls.EFFECT_PREFER_NO_SCHEDULE
-- effect mask for ls.find_untolerated_taint: 1 << NoSchedule | 1 << NoExecute
local FILTER_MASK = bit.bor(bit.lshift(1, ls.EFFECT_NO_SCHEDULE), bit.lshift(1, ls.EFFECT_NO_EXECUTE))
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE

function P:init()
  -- status per (key id, value id) of the untolerated taint; built on first sight
  self.statuses = {}
end

local function untolerated_status(self, key, value)
  local by_value = self.statuses[key]
  if by_value == nil then
    by_value = {}
    self.statuses[key] = by_value
  end
  local st = by_value[value]
  if st == nil then
    st = ls.unresolvable(string.format("node(s) had untolerated taint {%s: %s}",
      ls.str(key), ls.str(value)))
    by_value[value] = st
  end
  return st
end

function P:filter(_, pod, ni)
  local node = ni.node
  local n = node.n_taints
  if n == 0 then return nil end
  local taints = node.taints
  local i = ls.find_untolerated_taint(taints, n, pod.tolerations, pod.n_tolerations, FILTER_MASK)
  if i < 0 then return nil end
  local t = taints[i]
  local by_value = self.statuses[t.key]
  local st = by_value and by_value[t.value]
  if st == nil then st = untolerated_status(self, t.key, t.value) end
  return st
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

return P
