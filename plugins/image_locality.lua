-- ImageLocality: favours nodes that already have the pod's container images,
-- scaled down for images present on few nodes of the cluster.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/imagelocality/image_locality.go
-- (v1.37), Score only, no NormalizeScore:
-- * For each image source, init containers, regular containers and (since
--   v1.36, kubernetes#130231) image volumes (volumes[].image.reference), whose
--   (normalized) image the node has: sum += int64(float64(size) * spread),
--   spread = float64(numNodes) / float64(totalNodes), numNodes the nodes having
--   the image and totalNodes the nodes of the snapshot (scaledImageScore).
-- * maxThreshold = 1000 MiB x number of image sources (since v1.37,
--   kubernetes#138951, image volumes count here too, so that they cannot score
--   above the same image in a container); the sum is clamped to
--   [23 MiB, maxThreshold] and
--   score = 100 * (sum - 23 MiB) / (maxThreshold - 23 MiB), int64 division.
--
-- Deviations:
-- * Image names are normalized (":latest" appended when untagged) by the C
--   decoder for pods and nodes alike; pod.images lists init containers',
--   regular containers' and image volumes' images, so pod.n_images is the
--   number of image sources.
-- * Arithmetic in Lua numbers (doubles): the spread product is the same
--   float64 operation as upstream's; sums stay exact below 2^53 bytes.
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("ImageLocality")

local floor, ceil, tonumber = math.floor, math.ceil, tonumber
local image_state, num_all_nodes = ls.image_state, ls.num_all_nodes
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE
local MB = 1024 * 1024
local MIN_THRESHOLD = 23 * MB
local MAX_CONTAINER_THRESHOLD = 1000 * MB

-- int64(float64(size) * (float64(numNodes) / float64(totalNodes))), truncated,
-- for an image the node has; 0 otherwise.
local function scaled_image_score(ni, image, total)
  local size, num_nodes = image_state(ni, image)
  if size == nil then return 0 end
  local scaled = tonumber(size) * (num_nodes / total)
  return scaled >= 0 and floor(scaled) or ceil(scaled)
end

function P:score(_, pod, ni)
  local total = num_all_nodes()
  local images = pod.images
  local n = pod.n_images
  -- The first four containers are written out rather than looped over: a
  -- short inner loop that runs two or more times per node tends to become
  -- LuaJIT's root trace, and the node loop then runs as side traces that box
  -- the node pointers (an allocation per node).
  local sum = 0
  if n >= 1 then sum = scaled_image_score(ni, images[0], total) end
  if n >= 2 then sum = sum + scaled_image_score(ni, images[1], total) end
  if n >= 3 then sum = sum + scaled_image_score(ni, images[2], total) end
  if n >= 4 then sum = sum + scaled_image_score(ni, images[3], total) end
  for i = 4, n - 1 do sum = sum + scaled_image_score(ni, images[i], total) end
  local max_threshold = MAX_CONTAINER_THRESHOLD * n
  if sum < MIN_THRESHOLD then
    sum = MIN_THRESHOLD
  elseif sum > max_threshold then
    sum = max_threshold
  end
  -- both operands are whole numbers well below 2^53 and the divisor is > 0
  -- for n >= 1, so floor of the quotient is Go's int64 division
  return floor(MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD))
end

-- ---- events ---------------------------------------------------------------------

-- None: a Score plugin rejects no pod, so upstream registers no event for it
-- (the runtime only asks PreEnqueue, PreFilter, Filter, Reserve and Permit
-- plugins for events tables).
P.events = {}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- ImageLocality: the canonical image names (ImageNamesSignerName).
function P:sign(pod) return signers.images(pod) end

return P
