-- PrioritySort (upstream queuesort/priority_sort.go): Less(a, b) = priority(a)
-- > priority(b), or equal priorities and a queued first; priority nil -> 0.
-- Here "queued first" is the earlier creation timestamp, then the lower
-- arrival sequence number.
local T = require("luasched.testing")

describe("PrioritySort", function()
  local plugin
  setup(function() plugin = T.plugin("PrioritySort") end)

  local function pod(name, priority, created, seq)
    return T.pod { name = name, priority = priority, created = created or "2024-01-01T00:00:00Z", seq = seq }
  end

  it("uses the priority as the sort key, 0 when the pod has none", function()
    assert.are.equal(1000, plugin:sort_key(pod("high", 1000)))
    assert.are.equal(-5, plugin:sort_key(pod("negative", -5)))
    assert.are.equal(0, plugin:sort_key(pod("none")))
  end)

  it("orders a higher priority first", function()
    local high, low = pod("high", 10), pod("low", 5)
    assert.is_true(plugin:less(high, low))
    assert.is_false(plugin:less(low, high))
  end)

  it("orders by priority before time", function()
    local old_low = pod("old-low", 1, "2020-01-01T00:00:00Z")
    local new_high = pod("new-high", 2, "2024-06-01T00:00:00Z")
    assert.is_true(plugin:less(new_high, old_low))
    assert.is_false(plugin:less(old_low, new_high))
  end)

  it("treats a missing priority as 0", function()
    local none = pod("none", nil, "2024-01-01T00:00:00Z")
    local zero = pod("zero", 0, "2024-01-01T00:00:01Z")
    local minus = pod("minus", -1, "2020-01-01T00:00:00Z")
    assert.is_true(plugin:less(none, zero))     -- equal priority 0, none is older
    assert.is_false(plugin:less(zero, none))
    assert.is_true(plugin:less(none, minus))    -- 0 > -1
  end)

  it("orders equal priorities by creation time, earlier first", function()
    local first = pod("first", 7, "2024-01-01T00:00:00Z")
    local second = pod("second", 7, "2024-01-01T00:00:00.5Z")
    assert.is_true(plugin:less(first, second))
    assert.is_false(plugin:less(second, first))
  end)

  it("orders equal priorities and times by arrival sequence", function()
    local a = pod("a", 3, "2024-01-01T00:00:00Z", 10)
    local b = pod("b", 3, "2024-01-01T00:00:00Z", 11)
    assert.is_true(plugin:less(a, b))
    assert.is_false(plugin:less(b, a))
    assert.is_false(plugin:less(a, a))          -- strict: never less than itself
  end)

  it("sorts a list the way the queue pops it", function()
    local pods = {
      pod("p-low-old", 1, "2024-01-01T00:00:00Z", 1),
      pod("p-high-new", 100, "2024-01-03T00:00:00Z", 2),
      pod("p-low-new", 1, "2024-01-02T00:00:00Z", 3),
      pod("p-high-old", 100, "2024-01-01T00:00:00Z", 4),
      pod("p-none", nil, "2023-01-01T00:00:00Z", 5),
    }
    table.sort(pods, function(x, y) return plugin:less(x, y) end)
    local names = {}
    for i, p in ipairs(pods) do names[i] = require("luasched").str(p.name) end
    assert.are.same({ "p-high-old", "p-high-new", "p-low-old", "p-low-new", "p-none" }, names)
  end)
end)
