-- luasched.timing: sampled plugin durations for
-- scheduler_plugin_execution_duration_seconds. In about one cycle in ten (the
-- cycle's sample_plugins flag, set by C as upstream samples), every plugin call
-- is timed and counted into the metric's buckets here; each extension point
-- hands its counts to C once (ls_cycle_plugin_durations). Cycles that are not
-- sampled pay one flag test per extension point.
local ffi = require("ffi")
local C = require("luasched.clib")

local M = {}
local NB = C.LS_PLUGIN_DURATION_BUCKETS

-- Upper bounds 1e-5 * 1.5^i, as upstream's ExponentialBuckets(0.00001, 1.5, 20).
local bounds = {}
do
  local b = 0.00001
  for i = 1, NB do
    bounds[i] = b
    b = b * 1.5
  end
end

local log, ceil, min, max = math.log, math.ceil, math.min, math.max
local LOG_FACTOR = log(1.5)

-- The first bucket whose bound is at least `seconds` (NB: +Inf), computed
-- rather than searched: a loop with a data-dependent trip count spawns a side
-- trace per count and can exhaust the JIT's machine-code area.
local function bucket_of(seconds)
  if seconds <= bounds[1] then return 0 end
  local b = ceil(log(seconds / bounds[1]) / LOG_FACTOR)
  -- rounding at a bound: step back when the bound below holds it
  if b > 0 and b <= NB and seconds <= bounds[b] then b = b - 1 end
  return max(0, min(NB, b))
end
M.bucket_of = bucket_of

--- The monotonic clock in seconds.
function M.now()
  return C.ls_monotonic_seconds()
end

-- key = (ep * 1024 + plugin index) * 16 + code
local acc = {}
local dirty = {}

--- One call of plugin `index` (0-based) at extension point `ep` (LS_EP_*)
--- that returned `code` and took `seconds`.
function M.observe(ep, index, code, seconds)
  local key = (ep * 1024 + index) * 16 + code
  local a = acc[key]
  if not a then
    a = { count = 0, sum = 0, buckets = ffi.new("uint64_t[?]", NB + 1), ep = ep, index = index, code = code }
    acc[key] = a
  end
  if a.count == 0 then dirty[#dirty + 1] = a end
  a.count = a.count + 1
  a.sum = a.sum + seconds
  local b = bucket_of(seconds)
  a.buckets[b] = a.buckets[b] + 1
end

--- Hands what was counted since the last flush to C, and starts over.
function M.flush(cycle)
  for i = 1, #dirty do
    local a = dirty[i]
    C.ls_cycle_plugin_durations(cycle, a.ep, a.index, a.code, a.count, a.sum, a.buckets)
    a.count, a.sum = 0, 0
    ffi.fill(a.buckets, (NB + 1) * 8)
    dirty[i] = nil
  end
end

return M
