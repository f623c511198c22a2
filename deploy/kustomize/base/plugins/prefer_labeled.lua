-- PreferLabeled: the plugin of the README's tutorial. Filters out nodes that
-- lack a label key, and prefers nodes whose label has the wanted value.
local ls = require("luasched")

local P = ls.plugin("PreferLabeled", { defaults = { key = "tier", value = "gold" } })

-- Nodes gain the label through label updates or arrive with it.
P.events = {
  { resource = "Node", action = { "Add", "UpdateNodeLabel" } },
}

function P:init(args)                       -- once per profile, args merged over defaults
  self.key, self.value = ls.intern(args.key), ls.intern(args.value)
  self.missing = ls.unschedulable("node(s) didn't have the " .. args.key .. " label")
end

function P:filter(_, _, node)               -- nil means Success
  if ls.label(node.node.labels, self.key) == 0 then return self.missing end
end

function P:score(_, _, node)                -- 0..100
  return ls.label(node.node.labels, self.key) == self.value and 100 or 0
end

return P
