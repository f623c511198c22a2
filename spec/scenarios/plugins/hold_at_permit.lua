-- HoldAtPermit: a test plugin for the queue timelines. Pods labelled
-- hold=yes wait at Permit for 10 s and are then rejected (the timeout), so
-- that they are in flight while the timeline changes the cluster. Only a
-- change of a node's labels can help them (its events table).
local ls = require("luasched")

local P = ls.plugin("HoldAtPermit")

P.events = {
  { resource = "Node", action = "UpdateNodeLabel" },
}

function P:init()
  self.key, self.yes = ls.intern("hold"), ls.intern("yes")
end

function P:permit(_, pod)
  if ls.label(pod.labels, self.key) ~= self.yes then return nil end
  return ls.wait(10)
end

return P
