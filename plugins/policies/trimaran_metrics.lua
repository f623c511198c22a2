-- trimaran_metrics: the node utilization the load-aware policies score on
-- (TargetLoadPacking, LoadVariationRiskBalancing), in the form upstream's
-- load-watcher gives them: per node, CPU and memory utilization as a percent
-- of the node's capacity, an average and a standard deviation.
--
-- Sources, per resource, the first that has a value:
-- 1. node annotations (what a metrics pipeline writes; the metrics API has no
--    standard deviation), each a decimal number, percent of capacity:
--      trimaran.luasched.io/cpu-average      trimaran.luasched.io/cpu-stddev
--      trimaran.luasched.io/memory-average   trimaran.luasched.io/memory-stddev
--    (a missing stddev is 0; an average that is not a number is no value);
-- 2. the metrics API's NodeMetrics objects (metrics.k8s.io/v1beta1,
--    `ls.objects("NodeMetrics")`: metadata.name is the node, usage.cpu and
--    usage.memory quantities over [timestamp - window, timestamp]); the usage
--    is the average as a percent of the node's status.capacity (load-watcher's
--    metrics-server provider measures against capacity), the deviation 0.
--
-- The NodeMetrics table is rebuilt only when a NodeMetrics object changes
-- (ls.objects_generation); annotation values are parsed once per distinct
-- text (interned ids). Reading a node returns numbers: nothing is allocated
-- per node once the values have been seen.
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

M.ANNOTATIONS = {
  cpu_average = "trimaran.luasched.io/cpu-average", cpu_stddev = "trimaran.luasched.io/cpu-stddev",
  memory_average = "trimaran.luasched.io/memory-average", memory_stddev = "trimaran.luasched.io/memory-stddev",
}
local CPU_AVG, CPU_STD = ls.intern(M.ANNOTATIONS.cpu_average), ls.intern(M.ANNOTATIONS.cpu_stddev)
local MEM_AVG, MEM_STD = ls.intern(M.ANNOTATIONS.memory_average), ls.intern(M.ANNOTATIONS.memory_stddev)

local parsed = {}   -- annotation value id -> number, or false when not a finite number
local function number_of(id)
  if id == 0 then return nil end
  local v = parsed[id]
  if v == nil then
    v = tonumber(ls.str(id))
    if v == nil or v ~= v or v == math.huge or v == -math.huge then v = false end
    parsed[id] = v
  end
  return v or nil
end

-- A resource's average and deviation from the node's annotations, and the
-- average's text id (its version), or nil.
local function annotated(annotations, avg_key, std_key)
  local id = ls.label(annotations, avg_key)
  local avg = number_of(id)
  if avg == nil then return nil end
  return avg, number_of(ls.label(annotations, std_key)) or 0, id
end

--- A node's utilization (ni: ls_node_info): cpu_avg, cpu_std, mem_avg,
--- mem_std (percent of capacity; nil for a resource without a measure),
--- window_end_ms (0 without NodeMetrics), version (a number that changes
--- whenever the node's measures are reported again); or nil when the node
--- has no measure at all.
function M.node(ni)
  local node = ni.node
  local cpu, cpu_std, cpu_ver = annotated(node.annotations, CPU_AVG, CPU_STD)
  local mem, mem_std = annotated(node.annotations, MEM_AVG, MEM_STD)
  local m = by_node[node.name]
  if m ~= nil then
    if cpu == nil then cpu = percent(m.cpu, node.capacity.milli_cpu); cpu_std = cpu and 0 end
    if mem == nil then mem = percent(m.memory, node.capacity.memory); mem_std = mem and 0 end
  end
  if cpu == nil and mem == nil then return nil end
  local version = cpu_ver and -cpu_ver or (m and m.seq) or 0
  return cpu, cpu_std, mem, mem_std, m and m.end_ms or 0, version
end

return M
