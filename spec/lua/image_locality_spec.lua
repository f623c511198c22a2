-- ImageLocality (upstream imagelocality/image_locality.go): per container
-- (init + regular) whose image the node has, sum += int64(size * spread),
-- spread = nodes having the image / nodes in the snapshot; the sum is clamped
-- to [23 MiB, 1000 MiB x containers] and
-- score = 100 * (sum - 23 MiB) / (maxThreshold - 23 MiB), int64 division.
-- Sizes are in MiB below; the 2^20 factor cancels in the division, so e.g.
-- 100 * (250 - 23) MiB / 977 MiB = 22700 / 977.
local T = require("luasched.testing")

local MiB = 1024 * 1024

local function image(size, ...) return { names = { ... }, sizeBytes = size } end

-- A pod object with these container images (init containers optional).
local function image_pod(images, init_images)
  local spec = { containers = {} }
  for i, img in ipairs(images) do spec.containers[i] = { name = "c" .. i, image = img } end
  if init_images then
    spec.initContainers = {}
    for i, img in ipairs(init_images) do spec.initContainers[i] = { name = "i" .. i, image = img } end
  end
  return T.pod(T.pod_object { name = "p", spec = spec })
end

describe("ImageLocality", function()
  local cluster, plugin
  setup(function()
    cluster = T.cluster {
      nodes = {
        { name = "n1", images = { image(500 * MiB, "big:1"), image(200 * MiB, "small:1"), image(40 * MiB, "tiny:1") } },
        { name = "n2", images = { image(500 * MiB, "big:1") } },
        { name = "n3", images = { image(8000 * MiB, "huge:1") } },
        { name = "n4", images = {
          -- node names are kept as reported (upstream normalizes only the pod's side)
          image(400 * MiB, "nginx:latest", "docker.io/library/nginx:1.27"),
          image(400 * MiB, "registry:5000/app:latest"),
          image(89695191, "trunc-a:1"), image(89695195, "trunc-b:1"), image(89695199, "trunc-c:1"),
          image(179390384, "boundary:1"), image(-3, "negative:1"),
        } },
      },
    }
    plugin = T.plugin("ImageLocality")
  end)
  teardown(function() cluster:close() end)

  local function scores(pod)
    local r = T.cycle(plugin, cluster, pod)
    assert.are.same(r.raw, r.scores)   -- no NormalizeScore
    return r.scores
  end

  it("has no NormalizeScore", function()
    assert.is_nil(plugin.normalize_score)
    assert.is_function(plugin.score)
  end)

  it("scales an image's size by its spread over the cluster", function()
    -- big:1 is on 2 of 4 nodes: 500 MiB * 2/4 = 250 MiB on n1 and n2;
    -- 100 * (250 - 23) / (1000 - 23) = 22700 / 977 = 23 (23.2)
    -- n3, n4: sum 0 -> clamped to 23 MiB -> 0
    assert.are.same({ n1 = 23, n2 = 23, n3 = 0, n4 = 0 }, scores(image_pod { "big:1" }))
  end)

  it("sums the containers' images against a threshold per container", function()
    -- max = 2 x 1000 MiB; n1: 250 + 200 * 1/4 = 300 MiB -> 100 * 277 / 1977 = 27700 / 1977 = 14 (14.01)
    -- n2: 250 MiB -> 22700 / 1977 = 11 (11.48)
    assert.are.same({ n1 = 14, n2 = 11, n3 = 0, n4 = 0 }, scores(image_pod { "big:1", "small:1" }))
  end)

  it("counts init containers' images and containers", function()
    -- same images as above, big:1 in an init container: 2 containers, same sums
    assert.are.same({ n1 = 14, n2 = 11, n3 = 0, n4 = 0 }, scores(image_pod({ "small:1" }, { "big:1" })))
    -- an init container whose image no node has still raises the maximum:
    -- max 2000 MiB, n1 and n2: 250 MiB -> 22700 / 1977 = 11
    assert.are.same({ n1 = 11, n2 = 11, n3 = 0, n4 = 0 }, scores(image_pod({ "big:1" }, { "busybox:1" })))
  end)

  it("counts an image once per container using it", function()
    -- n1, n2: 250 + 250 = 500 MiB of 2000: 100 * 477 / 1977 = 47700 / 1977 = 24 (24.13)
    assert.are.same({ n1 = 24, n2 = 24, n3 = 0, n4 = 0 }, scores(image_pod { "big:1", "big:1" }))
  end)

  it("counts every container, past the fourth", function()
    -- six containers, only the last image on n1 and n2: max 6000 MiB;
    -- 250 MiB -> 100 * 227 / 5977 = 22700 / 5977 = 3 (3.8)
    local pod = image_pod { "none:1", "none:2", "none:3", "none:4", "none:5", "big:1" }
    assert.are.same({ n1 = 3, n2 = 3, n3 = 0, n4 = 0 }, scores(pod))
  end)

  it("clamps to the thresholds", function()
    -- huge:1 on 1 of 4 nodes: 8000 / 4 = 2000 MiB > 1000 MiB -> 100 * 977 / 977 = 100
    assert.are.same({ n1 = 0, n2 = 0, n3 = 100, n4 = 0 }, scores(image_pod { "huge:1" }))
    -- tiny:1: 40 / 4 = 10 MiB < 23 MiB -> 0
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 0 }, scores(image_pod { "tiny:1" }))
    -- small:1: 200 / 4 = 50 MiB -> 100 * 27 / 977 = 2700 / 977 = 2 (2.76)
    assert.are.same({ n1 = 2, n2 = 0, n3 = 0, n4 = 0 }, scores(image_pod { "small:1" }))
  end)

  it("matches the pod's normalized image names against the names nodes report", function()
    -- 400 / 4 = 100 MiB -> 100 * 77 / 977 = 7700 / 977 = 7 (7.88)
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 7 }, scores(image_pod { "nginx" }))
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 7 }, scores(image_pod { "nginx:latest" }))
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 7 }, scores(image_pod { "docker.io/library/nginx:1.27" }))
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 7 }, scores(image_pod { "registry:5000/app" }))
    -- another tag is another image
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 0 }, scores(image_pod { "nginx:1.26" }))
    -- the pod's "registry:5000/app" becomes "registry:5000/app:latest" (a port is no tag)
  end)

  it("truncates each scaled image size before summing", function()
    -- two containers, max 2000 MiB: score 1 needs sum >= 23 MiB + 1977 MiB / 100
    --   = 24117248 + 20730347.52, i.e. sum >= 44847596 bytes.
    -- trunc-a: 89695191 / 4 = 22423797.75 -> 22423797; trunc-b: 89695195 / 4 =
    -- 22423798.75 -> 22423798; sum 44847595: 100 * (44847595 - 24117248) =
    -- 2073034700 < 1977 MiB = 2073034752 -> 0 (the untruncated 44847596.5 would give 1)
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 0 }, scores(image_pod { "trunc-a:1", "trunc-b:1" }))
    -- trunc-c: 89695199 / 4 = 22423799.75 -> 22423799; with trunc-a the sum is
    -- 44847596: 100 * 20730348 = 2073034800 >= 2073034752 -> 1
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 1 }, scores(image_pod { "trunc-a:1", "trunc-c:1" }))
  end)

  it("truncates toward zero, as Go's int64 conversion does", function()
    -- boundary: 179390384 / 4 = 44847596, exactly the sum that scores 1 with two
    -- containers (above); negative: -3 / 4 = -0.75 -> 0 (a floor would give -1,
    -- the sum 44847595 and the score 0)
    assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 1 }, scores(image_pod { "boundary:1", "negative:1" }))
  end)

  it("divides the spread by the number of nodes in the snapshot", function()
    local c = T.cluster {
      nodes = {
        { name = "a", images = { image(500 * MiB, "big:1") } },
        { name = "b", images = { image(500 * MiB, "big:1") } },
        { name = "c" }, { name = "d" }, { name = "e" },
      },
    }
    -- 2 of 5 nodes: 500 MiB * 0.4 = 200 MiB -> 100 * 177 / 977 = 17700 / 977 = 18 (18.1)
    assert.are.equal(18, T.score(plugin, c, image_pod { "big:1" }, "a"))
    c:add_node { name = "f" }
    -- 2 of 6: 524288000 * (2/6) = 174762666.67 -> 174762666;
    -- 100 * (174762666 - 24117248) / 1024458752 = 15064541800 / 1024458752 = 14 (14.7)
    assert.are.equal(14, T.score(plugin, c, image_pod { "big:1" }, "a"))
    c:close()
  end)
end)
