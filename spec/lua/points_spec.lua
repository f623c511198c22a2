-- The extension-point table as Lua reads it from C (luasched.points): the
-- hooks of upstream's extension points in upstream's run order, the hooks
-- that extend a point, and the points whose plugins can reject a pod (their
-- plugins' events move the pod again: PreEnqueue, PreFilter, Filter, Reserve,
-- Permit, as upstream registers them).
local C = require("luasched.clib")
local points = require("luasched.points")

describe("luasched.points", function()
  -- upstream's points in its run order (a point added to the table keeps
  -- them in this order, wherever it goes)
  local UPSTREAM = {
    "pre_enqueue", "sort_key", "pre_filter", "filter", "post_filter", "pre_score", "score",
    "reserve", "permit", "pre_bind", "bind", "post_bind",
  }
  local function position(list, x)
    for i, v in ipairs(list) do if v == x then return i end end
    return nil
  end

  it("lists the configured points' hooks in upstream's order", function()
    assert.are.equal(C.LS_EP_COUNT, #points.point_hooks)
    local last = 0
    for _, hook in ipairs(UPSTREAM) do
      local at = position(points.point_hooks, hook)
      assert.is_not_nil(at, hook)
      assert.is_true(at > last, hook .. " after the point before it")
      last = at
    end
  end)

  it("lists every hook a plugin may define, the extensions of a point included", function()
    local set = {}
    for _, h in ipairs(points.hooks) do set[h] = true end
    for _, h in ipairs({ "less", "add_pod", "remove_pod", "normalize_score", "unreserve",
                         "pre_bind_pre_flight", "clone_state", "filter", "post_bind" }) do
      assert.is_true(set[h], h)
    end
    assert.are.equal(C.LS_EP_HOOK_COUNT, #points.hooks)
  end)

  it("maps a hook to its row of the C enum", function()
    assert.are.equal(C.LS_EP_RESERVE, points.ep_of_hook.reserve)
    assert.are.equal(C.LS_EP_POST_BIND, points.ep_of_hook.post_bind)
    assert.are.equal(C.LS_EP_UNRESERVE, points.ep_of_hook.unreserve)
    assert.are.equal(C.LS_EP_COUNT, points.ep_of_hook.normalize_score)
  end)

  it("names the points whose plugins can reject a pod", function()
    local rejecting = {}
    for _, hook in ipairs(points.rejecting) do rejecting[hook] = true end
    for _, hook in ipairs(UPSTREAM) do
      local upstream_rejects = hook == "pre_enqueue" or hook == "pre_filter" or hook == "filter" or
        hook == "reserve" or hook == "permit"
      assert.are.equal(upstream_rejects, rejecting[hook] == true, hook)
    end
  end)
end)
