-- The extension-point table as Lua reads it from C (luasched.points): the
-- hooks of upstream's extension points in upstream's run order, the hooks
-- that extend a point, and the points whose plugins can reject a pod (their
-- plugins' events move the pod again: PreEnqueue, PreFilter, Filter, Reserve,
-- Permit, as upstream registers them).
local C = require("luasched.clib")
local points = require("luasched.points")

describe("luasched.points", function()
  it("lists the configured points' hooks in upstream's order", function()
    assert.are.same({
      "pre_enqueue", "sort_key", "pre_filter", "filter", "post_filter", "pre_score", "score",
      "reserve", "permit", "pre_bind", "bind", "post_bind",
    }, points.point_hooks)
  end)

  it("lists every hook a plugin may define, the extensions of a point included", function()
    local set = {}
    for _, h in ipairs(points.hooks) do set[h] = true end
    for _, h in ipairs({ "less", "add_pod", "remove_pod", "normalize_score", "unreserve",
                         "pre_bind_pre_flight", "clone_state", "filter", "post_bind" }) do
      assert.is_true(set[h], h)
    end
    assert.are.equal(19, #points.hooks)
  end)

  it("maps a hook to its row of the C enum", function()
    assert.are.equal(C.LS_EP_RESERVE, points.ep_of_hook.reserve)
    assert.are.equal(C.LS_EP_POST_BIND, points.ep_of_hook.post_bind)
    assert.are.equal(C.LS_EP_UNRESERVE, points.ep_of_hook.unreserve)
    assert.are.equal(C.LS_EP_COUNT, points.ep_of_hook.normalize_score)
  end)

  it("names the points whose plugins can reject a pod", function()
    assert.are.same({ "pre_enqueue", "pre_filter", "filter", "reserve", "permit" }, points.rejecting)
  end)
end)
