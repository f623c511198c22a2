-- NodeDeclaredFeatures: a pod whose spec needs a node feature (one that a
-- kubelet of an older version, or with the feature off, would not honour) only
-- goes to nodes that declare it in status.declaredFeatures.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodedeclaredfeatures/
-- nodedeclaredfeatures.go (in the v1.37 default profile: the NodeDeclaredFeatures
-- gate is GA and locked on):
-- * PreFilter: the features inferred from the pod's spec (k8s.io/component-helpers
--   nodedeclaredfeatures, InferForPodScheduling); Skip when there are none.
-- * Filter: UnschedulableAndUnresolvable "node(s) didn't match Pod's required
--   features" unless every required feature is among the node's declared ones.
--
-- Deviations:
-- * The inference is the C decoder's (pod.required_features). It knows the two
--   features of upstream's registry that infer anything at scheduling time as
--   of v1.36: RestartAllContainersOnContainerExits (a container or init
--   container with a restartPolicyRules entry whose action is
--   RestartAllContainers) and UserNamespacesHostNetworkSupport (hostNetwork
--   with hostUsers false). Whether v1.37's registry adds a feature inferred at
--   scheduling time could not be verified in upstream's code; this follows v1.36.
-- * Features whose MaxVersion is below the scheduler's version are dropped
--   upstream; neither feature above has one.
-- * The in-place-resize preemption Skip (InPlacePodVerticalScalingSchedulerPreemption,
--   alpha and off in v1.37) is not modelled.
-- * No EventsToRegister table yet: registered for every cluster event.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeDeclaredFeatures")

function P:init()
  self.status = ls.unresolvable("node(s) didn't match Pod's required features")
end

function P:pre_filter(_, pod)
  if pod.n_required_features == 0 then return ls.skip end
  return nil
end

-- Whether the node declares feature f (a short list, read in place).
local function declares(node, f)
  local list = node.declared_features
  for i = 0, node.n_declared_features - 1 do
    if list[i] == f then return true end
  end
  return false
end

function P:filter(_, pod, ni)
  local req, node = pod.required_features, ni.node
  for i = 0, pod.n_required_features - 1 do
    if not declares(node, req[i]) then return self.status end
  end
  return nil
end

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeDeclaredFeatures: the inferred required features (FeaturesSignerName).
function P:sign(pod) return signers.features(pod) end

return P
