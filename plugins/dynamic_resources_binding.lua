-- dynamic_resources_binding: the binding conditions of DynamicResources
-- (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus, both on in
-- v1.37; see plugins/dynamic_resources.lua): whether a claim's allocated
-- devices have binding conditions, whether the driver reported them all True
-- in status.devices (or a binding failure condition True), and the RFC 3339
-- allocationTimestamp from which bindingTimeout runs. Mirrors upstream
-- dynamicresources.go's hasBindingConditions, getAllocatedDeviceStatus and
-- isClaimReadyForBinding.
local json = require("luasched.json")

local M = {}
local fmt = string.format

local function allocated(t)
  local a = (t.status or {}).allocation
  return a ~= nil and a ~= json.null
end

-- Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
local function days_from_civil(y, m, d)
  y = m <= 2 and y - 1 or y
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * (m + (m > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

-- An RFC 3339 time ("2026-01-01T00:00:05Z") in ms since the epoch, or nil.
function M.time_ms(text)
  local y, mo, d, h, mi, sec = tostring(text):match("^(%d+)%-(%d+)%-(%d+)T(%d+):(%d+):(%d+)")
  if not y then return nil end
  local days = days_from_civil(tonumber(y), tonumber(mo), tonumber(d))
  return ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(sec) * 1000
end

function M.time_text(ms) return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(ms / 1000)) end

function M.has_binding_conditions(t)
  if not allocated(t) then return false end
  for _, r in ipairs(((t.status.allocation.devices or {}).results) or {}) do
    if r.bindingConditions ~= nil and r.bindingConditions ~= json.null and #r.bindingConditions > 0 then
      return true
    end
  end
  return false
end

-- The claim's status.devices entry of an allocated device (getAllocatedDeviceStatus).
local function device_status(t, r)
  for _, d in ipairs((t.status or {}).devices or {}) do
    if d.device == r.device and d.driver == r.driver and d.pool == r.pool then return d end
  end
  return nil
end

local function condition(d, ctype)
  for _, c in ipairs(d.conditions or {}) do
    if c.type == ctype then return c end
  end
  return nil
end

--- upstream's isClaimReadyForBinding: true when every binding condition of
--- every allocated device is True in status.devices; nil and the error when
--- a binding failure condition is True; false otherwise.
function M.ready_for_binding(t, name)
  if not allocated(t) then return false end
  for _, r in ipairs(((t.status.allocation.devices or {}).results) or {}) do
    if r.bindingConditions ~= nil and r.bindingConditions ~= json.null and #r.bindingConditions > 0 then
      local d = device_status(t, r)
      if d == nil then return false end
      for _, ctype in ipairs(r.bindingFailureConditions or {}) do
        local c = condition(d, ctype)
        if c and c.status == "True" then
          return nil, fmt("claim %s binding failed: reason=%s, message=%s", name, tostring(c.reason or ""),
            json.quote(c.message or ""))
        end
      end
      for _, ctype in ipairs(r.bindingConditions) do
        local c = condition(d, ctype)
        if not (c and c.status == "True") then return false end
      end
    end
  end
  return true
end


return M
