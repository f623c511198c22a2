-- DefaultBinder: binds the pod to the selected node through the cluster
-- source (a v1.Binding POSTed to pods/<name>/binding against an API server, or
-- the embedded cluster in simulation).
--
-- Mirrors upstream pkg/scheduler/framework/plugins/defaultbinder/default_binder.go:
-- an API error becomes an Error status carrying the error text.
--
-- Deviations: the HTTP request itself is made asynchronously by the C core
-- (ls.bind hands it over); its failure text is what this plugin reports.
local ls = require("luasched")

local P = ls.plugin("DefaultBinder")

function P:bind(_, _, node_name)
  local err = ls.bind(node_name)
  if err ~= nil then return ls.error(err) end
  return nil
end

-- ---- events ---------------------------------------------------------------------

-- None: the Bind plugin rejects no pod, so upstream registers no event for it
-- (the runtime only asks PreEnqueue, PreFilter, Filter, Reserve and Permit
-- plugins for events tables).
P.events = {}

return P
