-- The README's plugin, kept true: the plugin it shows
-- (examples/plugins/prefer_labeled.lua), tested the way it tells readers to.
local T = require("luasched.testing")
local ls = require("luasched")

T.set_plugin_path { (os.getenv("LUASCHED_SOURCE_DIR") or ".") .. "/examples/plugins" }

describe("PreferLabeled (the tutorial plugin)", function()
  local cluster

  before_each(function()
    cluster = T.cluster {
      nodes = {
        { name = "gold", labels = { tier = "gold" } },
        { name = "silver", labels = { tier = "silver" } },
        { name = "plain" },
      },
    }
  end)

  it("filters out nodes without the label", function()
    local p = T.plugin("PreferLabeled")
    local r = T.filter(p, cluster, T.pod { name = "web" }, "plain")
    assert.are.equal(ls.UNSCHEDULABLE, r.code)
    assert.are.equal("node(s) didn't have the tier label", r.message)
    assert.are.equal(ls.SUCCESS, T.filter(p, cluster, T.pod { name = "web" }, "silver").code)
  end)

  it("prefers the wanted value, and takes args from the profile", function()
    local r = T.cycle(T.plugin("PreferLabeled"), cluster, T.pod { name = "web" })
    assert.are.same({ gold = 100, silver = 0 }, r.scores)
    r = T.cycle(T.plugin("PreferLabeled", { value = "silver" }), cluster, T.pod { name = "web" })
    assert.are.same({ gold = 0, silver = 100 }, r.scores)
  end)
end)
