-- VolumeBinding's args (upstream ValidateVolumeBindingArgsWithOptions and
-- validateFunctionShape, defaults.go with StorageCapacityScoring on) and its
-- scoring function (helper.BuildBrokenLinearFunction over the shape, scores
-- times MaxNodeScore / MaxCustomPriorityScore = 10), values worked by hand; and
-- luasched.json, which hands plugins the objects' JSON as tables.
local T = require("luasched.testing")
local json = require("luasched.json")

local function init_error(args)
  local ok, err = pcall(T.plugin, "VolumeBinding", args)
  assert.is_false(ok)
  return err
end

describe("VolumeBinding args", function()
  it("default to bindTimeoutSeconds 600 and the capacity-scoring shape", function()
    local p = T.plugin("VolumeBinding")
    assert.are.equal(600000, p.bind_timeout_ms)
    assert.are.same({ 0, 100 }, p.shape_u)
    assert.are.same({ 100, 0 }, p.shape_s)
  end)

  it("take an empty shape as the default one, as defaults.go does", function()
    local p = T.plugin("VolumeBinding", { shape = {} })
    assert.are.same({ 100, 0 }, p.shape_s)
  end)

  it("are validated with upstream's messages", function()
    assert.are.equal(
      "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
      init_error({ bindTimeoutSeconds = -1 }))
    assert.are.equal("shape[1].utilization: Invalid value: 50: utilization values must be sorted in increasing order",
      init_error({ shape = { { utilization = 50, score = 1 }, { utilization = 50, score = 2 } } }))
    assert.are.equal("shape[0].score: Invalid value: 11: not in valid range [0, 10]",
      init_error({ shape = { { utilization = 0, score = 11 } } }))
    assert.are.equal("[shape[0].utilization: Invalid value: -1: not in valid range [0, 100], " ..
      "shape[0].score: Invalid value: -2: not in valid range [0, 10]]",
      init_error({ shape = { { utilization = -1, score = -2 } } }))
  end)

  it("score utilization along the shape's broken line", function()
    local p = T.plugin("VolumeBinding")
    -- default {0,10},{100,0} scaled x10: 100 at 0%, 100 - 100*p/100 in between, 0 at 100%
    assert.are.equal(100, p:shape_score(0))
    assert.are.equal(90, p:shape_score(10))
    assert.are.equal(50, p:shape_score(50))
    assert.are.equal(0, p:shape_score(100))
    -- {20,2},{60,8} scaled: 20 up to 20%, then 20 + 60*(p-20)/40 (integer division), 80 after 60%
    p = T.plugin("VolumeBinding", { shape = { { utilization = 20, score = 2 }, { utilization = 60, score = 8 } } })
    assert.are.equal(20, p:shape_score(0))
    assert.are.equal(20, p:shape_score(20))
    assert.are.equal(35, p:shape_score(30))   -- 20 + floor(60*10/40) = 20 + 15
    assert.are.equal(36, p:shape_score(31))   -- 20 + floor(660/40) = 20 + 16
    assert.are.equal(80, p:shape_score(60))
    assert.are.equal(80, p:shape_score(100))
  end)
end)

describe("luasched.json", function()
  it("decodes objects, arrays, numbers, literals and escapes", function()
    local v = json.decode('{"a":[1,-2.5,3e2],"b":{"c":true,"d":false,"e":null},' ..
      '"s":"x\\"y\\\\z\\n\\u00e9\\ud83d\\ude00"}', true)   -- plain tables, as ls.object_data
    assert.are.same({ 1, -2.5, 300 }, v.a)
    assert.is_true(v.b.c)
    assert.is_false(v.b.d)
    assert.is_nil(v.b.e)
    assert.are.equal('x"y\\z\n\195\169\240\159\152\128', v.s)
    assert.are.same({}, json.decode("[]", true))
    assert.are.same({}, json.decode("{}", true))
  end)

  it("quotes strings for patches", function()
    assert.are.equal('"a\\"b\\\\c\\n"', json.quote('a"b\\c\n'))
    assert.are.equal('x', json.decode(json.quote("x")))
  end)
end)
