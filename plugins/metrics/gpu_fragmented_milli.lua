-- Built-in metric gpuFragmentedMilli: the cluster's fragmented GPU milli,
-- the FGD paper's measure (gpu_fragmentation.lua).
local measure = require("gpu_fragmentation").measure

return function(cluster)
  local fragmented = measure(cluster)
  return fragmented
end
