-- NeedsReady: a test plugin for the queue timelines. Pods labelled
-- needs-ready=yes fit only nodes labelled ready=true; only a change of a
-- node's labels can help them (its events table).
local ls = require("luasched")

local P = ls.plugin("NeedsReady")

P.events = {
  { resource = "Node", action = "UpdateNodeLabel" },
}

function P:init()
  self.opt_in, self.yes = ls.intern("needs-ready"), ls.intern("yes")
  self.ready, self.true_ = ls.intern("ready"), ls.intern("true")
  self.not_ready = ls.unschedulable("node(s) didn't have label ready=true")
end

function P:filter(_, pod, node)
  if ls.label(pod.labels, self.opt_in) ~= self.yes then return nil end
  if ls.label(node.node.labels, self.ready) ~= self.true_ then return self.not_ready end
end

return P
