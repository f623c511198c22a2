-- trimaran_metrics: the node utilization the load-aware policies score on
-- (TargetLoadPacking, LoadVariationRiskBalancing), in the form upstream's
-- load-watcher gives them: per node, CPU and memory utilization as a percent
-- of the node's capacity, an average and a standard deviation, and the end of
-- the window they were measured over.
--
-- Source: the metrics API's NodeMetrics objects (metrics.k8s.io/v1beta1,
-- `ls.objects("NodeMetrics")`: metadata.name is the node, usage.cpu and
-- usage.memory quantities, timestamp the end of the window [timestamp -
-- window, timestamp]). The metrics API has no standard deviation: it is 0, and
-- the average is the usage over the window. A NodeMetrics usage is turned into
-- a percent of the node's status.capacity (load-watcher's metrics-server
-- provider measures against capacity).
--
-- The table is rebuilt only when a NodeMetrics object changes
-- (ls.objects_generation); reading a node costs one table lookup and returns
-- numbers (nothing is allocated per node).
local ls = require("luasched")
local cel = require("luasched.cel")

local M = {}

M.KIND = "NodeMetrics"

local floor, tonumber = math.floor, tonumber

-- "2026-01-02T03:04:05Z" (fraction and offset allowed) -> unix milliseconds; nil if not RFC 3339.
local function days_from_civil(y, m, d)
  y = m <= 2 and y - 1 or y
  local era = floor(y / 400)
  local yoe = y - era * 400
  local doy = floor((153 * (m + (m > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

function M.parse_time_ms(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec, frac, zone =
    s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(%.?%d*)(.*)$")
  if not y then return nil end
  local t = days_from_civil(tonumber(y), tonumber(mo), tonumber(d)) * 86400
    + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
  if zone ~= "Z" and zone ~= "z" then
    local sign, oh, om = zone:match("^([+-])(%d%d):(%d%d)$")
    if not sign then return nil end
    local off = tonumber(oh) * 3600 + tonumber(om) * 60
    t = sign == "+" and t - off or t + off
  end
  local ms = t * 1000
  if frac ~= "" and frac ~= "." then ms = ms + floor(tonumber("0" .. frac) * 1000) end
  return ms
end

-- Per node name id: { cpu = milli-cores used or nil, memory = bytes used or
-- nil, end_ms = window end, seq = the object version's unique number }.
local by_node = {}
local built_at = -1

local function usage_of(usage, key, scale)
  local q = usage and usage[key]
  local v = q ~= nil and cel.parse_quantity(tostring(q)) or nil
  return v and v * scale or nil
end

local function rebuild()
  by_node = {}
  for o in ls.objects(M.KIND) do
    local d = ls.object_data(o)
    local name = d.metadata and d.metadata.name
    if type(name) == "string" then
      by_node[ls.intern(name)] = {
        cpu = usage_of(d.usage, "cpu", 1000),
        memory = usage_of(d.usage, "memory", 1),
        end_ms = M.parse_time_ms(d.timestamp) or 0,
        seq = tonumber(o.seq),
      }
    end
  end
end

--- Brings the table up to date with the cluster's NodeMetrics (call once per
--- cycle, in PreScore).
function M.refresh()
  local gen = ls.objects_generation(M.KIND)
  if gen ~= built_at then
    rebuild()
    built_at = gen
  end
end

local function percent(used, capacity)
  if used == nil then return nil end
  capacity = tonumber(capacity)
  if capacity <= 0 then return 0 end
  return 100 * used / capacity
end

--- A node's utilization (ni: ls_node_info): cpu_avg, cpu_std, mem_avg,
--- mem_std (percent of capacity; nil for a resource without a measure),
--- window_end_ms, version (changes whenever the node's metrics are
--- reported again); or nil when the node has no metrics.
function M.node(ni)
  local node = ni.node
  local m = by_node[node.name]
  if m == nil then return nil end
  local cpu = percent(m.cpu, node.capacity.milli_cpu)
  local mem = percent(m.memory, node.capacity.memory)
  return cpu, cpu and 0, mem, mem and 0, m.end_ms, m.seq
end

return M
