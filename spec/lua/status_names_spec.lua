-- The status codes plugins name: upstream's long name and the short one
-- (ls.UNRESOLVABLE) are the same code, distinct from Unschedulable.
local ls = require("luasched")

describe("status code names", function()
  it("ls.UNRESOLVABLE is UnschedulableAndUnresolvable", function()
    assert.is_not_nil(ls.UNRESOLVABLE)
    assert.are.equal(ls.UNSCHEDULABLE_AND_UNRESOLVABLE, ls.UNRESOLVABLE)
    assert.are_not.equal(ls.UNSCHEDULABLE, ls.UNRESOLVABLE)
    assert.are.equal("UnschedulableAndUnresolvable", ls.code_names[ls.UNRESOLVABLE])
  end)
end)
