-- NodeName: a pod that names a node in spec.nodeName fits only that node.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodename/node_name.go:
-- Filter passes when spec.nodeName is empty or equals the node's name, else
-- UnschedulableAndUnresolvable "node(s) didn't match the requested node name".
--
-- Events (upstream v1.37, hint as in the v1.32-v1.34 code): Node Add, queued
-- when the new node is the one the pod names (or it names none).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeName")

local ERR_REASON = "node(s) didn't match the requested node name"

function P:init()
  self.status = ls.unresolvable(ERR_REASON)
  -- An explicitly empty nodeName may decode to the id of "" rather than 0.
  self.empty = ls.intern("")
end

function P:filter(_, pod, ni)
  local want = pod.node_name
  if want == 0 or want == self.empty or want == ni.node.name then return nil end
  return self.status
end

-- ---- events and queueing hints ------------------------------------------------

local function after_node_add(pod, _, new, self)
  local want = pod.node_name
  if want == 0 or want == self.empty or want == new.name then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "Node", action = "Add", hint = after_node_add },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeName: spec.nodeName (NodeNameSignerName).
function P:sign(pod) return signers.node_name(pod) end

return P
