-- DefaultBinder (upstream defaultbinder/default_binder.go): binds through the
-- cluster; a binding error becomes an Error status with the error's text.
-- Real binding is tested end to end; here no cluster is attached to the cycle.
local T = require("luasched.testing")
local ls = require("luasched")

describe("DefaultBinder", function()
  local cluster, plugin
  setup(function()
    cluster = T.cluster { nodes = { { name = "n1" } } }
    plugin = T.plugin("DefaultBinder")
  end)
  teardown(function() cluster:close() end)

  it("gets an error from ls.bind when no cluster is attached", function()
    local pod = T.pod { name = "web", namespace = "shop" }
    cluster:attach(pod)
    ls._allow_bind(true)   -- as inside a Bind hook (ls.bind refuses elsewhere)
    local err = ls.bind("n1")
    ls._allow_bind(false)
    assert.is_string(err)
    assert.is_truthy(err:find("shop/web", 1, true))
  end)

  it("turns the binding error into an Error status", function()
    local pod = T.pod { name = "web", namespace = "shop" }
    cluster:attach(pod)
    ls._allow_bind(true)
    local expected = ls.bind("n1")
    ls._allow_bind(false)
    local r = T.node_hook(plugin, "bind", cluster, pod, "n1")
    assert.are.equal(ls.ERROR, r.code)
    assert.are.equal("Error", r.code_name)
    assert.are.equal(expected, r.message)
  end)
end)
