-- Built-in metric gpuFragmentationRatio: the fragmented GPU milli as a
-- percentage of the free GPU milli (gpu_fragmentation.lua); no value while
-- no GPU is free.
local measure = require("gpu_fragmentation").measure

return function(cluster)
  local fragmented, free = measure(cluster)
  if free == 0 then return nil end
  return 100 * fragmented / free
end
