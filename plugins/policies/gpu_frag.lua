-- gpu_frag: the FGD paper's fragmentation measure of one node (Weng et al.,
-- USENIX ATC '23, section 3; utils/frag.go's NodeGpuShareFragAmountScore of
-- hkust-adsl/kubernetes-scheduler-simulator: facts, not code), shared by the
-- FGD policy (plugins/policies/fgd.lua) and the lab's fragmentation metric
-- (plugins/metrics/gpu_fragmentation.lua). Plain Lua: no luasched API, so a
-- metric's state can load it too.
--
-- A node's fragmentation F = sum over the typical pods t (weight w_t, the
-- share of the workload's pods of that shape) of w_t x
-- * the node's free GPU milli, when t asks for no GPU, when the node's model
--   is not one t allows, or when the node cannot host t (fewer GPUs with t's
--   milli free than t asks for, or less free cpu than t asks for);
-- * else the free milli of the GPUs each too small for t's milli per GPU.
local M = {}

--- The typical pods from a list of {milliCpu, milliGpu, gpus, model, weight}
--- (a TypicalPodSet's spec.pods); `key(model_name)` gives the key the
--- node's model is compared by (an interned id for the plugin, the name
--- itself for a metric). `where` names the list in errors.
function M.typical(list, where, key)
  local t = { n = 0, cpu = {}, milli = {}, gpus = {}, models = {}, w = {} }
  for i, p in ipairs(list) do
    if type(p) ~= "table" or type(p.weight) ~= "number" then
      error(where .. ": typical pod " .. i .. ": expected {milliCpu, milliGpu, gpus, model, weight}", 0)
    end
    t.n = i
    t.cpu[i], t.milli[i], t.gpus[i], t.w[i] = p.milliCpu or 0, p.milliGpu or 0, p.gpus or 0, p.weight
    local ms = false
    if type(p.model) == "string" and p.model ~= "" then
      ms = {}
      for name in p.model:gmatch("[^|]+") do ms[key(name)] = true end
    end
    t.models[i] = ms
  end
  return t
end

--- F of a node state over the typical pods `t`: free milli per GPU (1..n),
--- cpu left (milli), the node's model key (false or 0 when it has none).
function M.fragmentation(t, free, n, cpu_left, model)
  local total = 0
  for i = 1, n do total = total + free[i] end
  if total == 0 then return 0 end
  local f = 0
  for k = 1, t.n do
    local tm, w = t.milli[k], t.w[k]
    local ms = t.models[k]
    if tm == 0 or (ms and not (model and model ~= 0 and ms[model])) then
      f = f + w * total
    else
      local want, small = t.gpus[k], 0
      for i = 1, n do
        local x = free[i]
        if x >= tm then want = want - 1 else small = small + x end
      end
      if want <= 0 and cpu_left >= t.cpu[k] then f = f + w * small else f = f + w * total end
    end
  end
  return f
end

return M
