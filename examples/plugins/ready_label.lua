-- ReadyLabel: an example plugin with an events table. It keeps pods off
-- nodes that lack the label ready=true, and says that only a change of a
-- node's labels can make such a pod schedulable, so the queue does not retry
-- its pods when a node is added: they wait for the periodic flush.
local ls = require("luasched")

local P = ls.plugin("ReadyLabel", { defaults = { key = "ready", value = "true" } })

P.events = {
  { resource = "Node", action = "UpdateNodeLabel" },
}

function P:init(args)
  self.key, self.value = ls.intern(args.key), ls.intern(args.value)
  self.not_ready = ls.unschedulable("node(s) didn't have label " .. args.key .. "=" .. args.value)
  self.opt_in = ls.intern("needs-ready")
end

function P:filter(_, pod, node)
  if ls.label(pod.labels, self.opt_in) == 0 then return nil end
  if ls.label(node.node.labels, self.key) ~= self.value then return self.not_ready end
end

return P
