-- HoldAtPreBind: a test plugin for the preemption timelines. Pods labelled
-- prebind=hold stay in PreBind (it asks to be called again every second, as
-- VolumeBinding does while claims are being bound), so that they are not
-- bound yet while other pods are scheduled.
local ls = require("luasched")

local P = ls.plugin("HoldAtPreBind")

P.events = {}

function P:init()
  self.key, self.hold = ls.intern("prebind"), ls.intern("hold")
  self.poll = ls.wait(1)
end

function P:pre_bind(_, pod)
  if ls.label(pod.labels, self.key) ~= self.hold then return nil end
  return self.poll
end

return P
