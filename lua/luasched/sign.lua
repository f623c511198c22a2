-- luasched.sign: a pod's scheduling signature for OpportunisticBatching
-- (KEP-5598), from the `sign` hooks of a profile's plugins.
--
-- As upstream's framework SignPod (v1.37): every plugin at PreFilter, Filter,
-- PreScore or Score must define `sign`, or no pod of the profile is signable
-- (batching is off for it); a plugin's `sign(pod)` returns a string fragment,
-- nil (nothing to add) or false (this pod is unsignable, the second result
-- saying why, a third `true` when no pod of the profile is signable: the
-- caller stops asking). The signature is the profile's fragments in plugin order (a
-- plugin without one adds an empty line), so two pods of one profile share it
-- when every fragment is the same. A `sign`
-- that raises makes the pod unsignable (upstream: a non-success status).
local M = {}

local name_of = require("luasched.profiles").name_of   -- an instance's registered name
local concat = table.concat
local SIGNED_POINTS = { "pre_filter", "filter", "pre_score", "score" }

-- The profile's signing plugins, each once, in point order; false when one of
-- them has no `sign` hook (the name of the first such plugin second).
local function signers_of(prof)
  if prof.signers ~= nil then return prof.signers, prof.unsigned_plugin end
  local list, seen = {}, {}
  for _, hook in ipairs(SIGNED_POINTS) do
    for _, inst in ipairs(prof.points[hook] or {}) do
      if not seen[inst] then
        seen[inst] = true
        if type(inst.sign) ~= "function" then
          prof.signers, prof.unsigned_plugin = false, name_of[inst]
          return false, name_of[inst]
        end
        list[#list + 1] = inst
      end
    end
  end
  prof.signers = list
  return list
end

-- The order the hooks are asked in: a plugin that found a pod unsignable moves
-- to the front, so that in a profile where every pod is unsignable (default
-- spread constraints) one cheap call answers. The fragments keep the plugin
-- order (`slot`), so the signature does not depend on this order.
local function ask_order(prof, list)
  if not prof.sign_order then
    prof.sign_order = {}
    for i, inst in ipairs(list) do prof.sign_order[i] = { inst = inst, slot = i } end
  end
  return prof.sign_order
end

local function to_front(order, k)
  local e = table.remove(order, k)
  table.insert(order, 1, e)
end

--- The pod's signature in profile `prof`, or nil, the reason it has none and
--- true when that holds for every pod of the profile.
function M.sign(prof, pod, pcall)
  local list, missing = signers_of(prof)
  if not list then return nil, "plugin " .. missing .. " does not sign pods", true end
  local order = ask_order(prof, list)
  local parts   -- made at the first fragment: an unsignable pod allocates nothing
  for k, e in ipairs(order) do
    local inst = e.inst
    local ok, frag, why, every_pod = pcall(inst.sign, inst, pod)
    if not ok then return nil, "plugin " .. name_of[inst] .. ": " .. tostring(frag) end
    if frag == false then
      if k > 1 then to_front(order, k) end
      return nil, name_of[inst] .. ": " .. tostring(why or "unsignable"), every_pod == true
    end
    if type(frag) == "string" then
      if not parts then
        parts = {}
        for i = 1, #list do parts[i] = "" end
      end
      parts[e.slot] = frag
    elseif frag ~= nil then
      return nil, "plugin " .. name_of[inst] .. ": sign returned a " .. type(frag) ..
        ", expected a string, nil or false"
    end
  end
  return parts and concat(parts, "\n") or ""
end

return M
