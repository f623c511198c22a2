-- The CEL subset of DRA device selectors (luasched.cel): what it evaluates,
-- CEL's runtime errors, and the compile errors for what it does not support.
-- Expected values follow the CEL language definition and the Kubernetes DRA
-- environment (device.driver, device.attributes / device.capacity by domain,
-- names without a domain in the driver's domain, quantity() and semver()).
local cel = require("luasched.cel")
local json = require("luasched.json")

local DRIVER = "gpu.example.com"

local function device()
  return cel.device(DRIVER, {
    name = "gpu-0",
    attributes = {
      model = { string = "A100" },
      cores = { int = 108 },
      mig = { bool = false },
      driverVersion = { version = "535.104.5" },
      ["numa.example.com/node"] = { int = 1 },
    },
    capacity = { memory = { value = "40Gi" }, ["power.example.com/watts"] = { value = "400" } },
  })
end

local function eval(expr)
  local fn, err = cel.compile(expr)
  assert(fn, "compile failed: " .. tostring(err))
  return cel.eval(fn, device())
end

describe("DRA CEL subset", function()
  it("reads the driver and attributes by domain (short names are the driver's)", function()
    assert.is_true(eval('device.driver == "gpu.example.com"'))
    assert.is_false(eval('device.driver != "gpu.example.com"'))
    assert.is_true(eval('device.attributes["gpu.example.com"].model == "A100"'))
    assert.is_true(eval('device.attributes["numa.example.com"].node == 1'))
    assert.is_true(eval('device.attributes["gpu.example.com"].mig == false'))
  end)

  it("orders ints, strings and bools as CEL does", function()
    assert.is_true(eval('device.attributes["gpu.example.com"].cores > 100'))
    assert.is_true(eval('device.attributes["gpu.example.com"].cores <= 108'))
    assert.is_false(eval('device.attributes["gpu.example.com"].cores < 108'))
    assert.is_true(eval('device.attributes["gpu.example.com"].model >= "A"'))
    assert.is_true(eval('"A100" < "H100"'))
    assert.is_true(eval("false < true"))
  end)

  it("combines with && || ! and parentheses, and tests membership with in", function()
    assert.is_true(eval('device.attributes["gpu.example.com"].model in ["A100", "H100"] && ' ..
      '!(device.attributes["gpu.example.com"].cores < 100)'))
    assert.is_false(eval('device.attributes["gpu.example.com"].model in ["T4"] || device.driver == "x"'))
    assert.is_true(eval('(1 == 2 || 2 == 2) && true'))
    assert.is_true(eval('"model" in device.attributes["gpu.example.com"]'))
    assert.is_false(eval('"model" in device.attributes["other.example.com"]'))
  end)

  it("compares capacity as quantities through their methods", function()
    -- 40Gi = 42949672960 bytes; 32Gi below, 40Gi equal, 41Gi above
    assert.is_true(eval('device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) == 1'))
    assert.is_true(eval('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0'))
    assert.is_true(eval('device.capacity["gpu.example.com"].memory.isLessThan(quantity("41Gi"))'))
    assert.is_true(eval('device.capacity["gpu.example.com"].memory == quantity("42949672960")'))
    assert.is_true(eval('device.capacity["power.example.com"].watts.isGreaterThan(quantity("399500m"))'))
    assert.is_true(eval('device.capacity["power.example.com"].watts.asInteger() == 400'))
  end)

  it("compares version attributes as semantic versions", function()
    assert.is_true(eval('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("535.54.3"))'))
    assert.is_true(eval('device.attributes["gpu.example.com"].driverVersion == semver("535.104.5")'))
    assert.is_true(eval('semver("1.2.3-rc.1").isLessThan(semver("1.2.3"))'))
    assert.is_true(eval('semver("1.2.3").compareTo(semver("1.2.3-rc.1")) == 1'))
    assert.is_true(eval('semver("1.10.0").compareTo(semver("1.9.9")) == 1'))
  end)

  it("gives CEL's runtime errors: a missing key, mixed types", function()
    local v, err = eval('device.attributes["gpu.example.com"].vendor == "nvidia"')
    assert.is_nil(v)
    assert.are.equal("no such key: vendor", err)
    v, err = eval('device.attributes["gpu.example.com"].cores == "108"')
    assert.is_nil(v)
    assert.are.equal("no such overload: int == string", err)
    v, err = eval('device.attributes["gpu.example.com"].driverVersion < semver("1.0.0")')
    assert.is_nil(v)
    assert.are.equal("no such overload: version < version", err)
    v, err = eval('device.attributes["gpu.example.com"].cores')
    assert.is_nil(v)
    assert.are.equal("expression evaluated to int, not bool", err)
  end)

  it("lets has() and a deciding side of && / || absorb a missing key", function()
    assert.is_false(eval('has(device.attributes["gpu.example.com"].vendor)'))
    assert.is_true(eval('has(device.attributes["gpu.example.com"].model)'))
    assert.is_true(eval('device.attributes["gpu.example.com"].vendor == "x" || true'))
    assert.is_false(eval('device.attributes["gpu.example.com"].vendor == "x" && false'))
    assert.is_false(eval('has(device.attributes["gpu.example.com"].vendor) && ' ..
      'device.attributes["gpu.example.com"].vendor == "x"'))
  end)

  it("refuses what it does not support with a message naming what is", function()
    local cases = {
      { 'device.attributes["gpu.example.com"].model.matches("A.*")', "method matches() is not supported" },
      { 'size(device.attributes["gpu.example.com"]) > 0', "function size() is not supported" },
      { 'device.attributes["gpu.example.com"].cores > 1.5', "only decimal integer literals are supported" },
      { 'device.driver == "a" ? true : false', "unsupported character '?'" },
      { "request.name == 'x'", "unknown identifier request" },
      { 'device.driver == "a" == true', "chained comparisons need parentheses" },
      { 'quantity("lots") == quantity("1")', "quantity(lots): not a valid quantity" },
      { 'device.driver == ', "unexpected end of expression" },
    }
    for _, c in ipairs(cases) do
      local fn, err = cel.compile(c[1])
      assert.is_nil(fn, c[1])
      assert.is_truthy(err:find(c[2], 1, true), c[1] .. " -> " .. tostring(err))
    end
    local _, err = cel.compile('device.attributes["d"].x.matches("y")')
    assert.is_truthy(err:find(cel.SUPPORTED, 1, true))
  end)

  it("parses Kubernetes quantities", function()
    assert.are.equal(40 * 2 ^ 30, cel.parse_quantity("40Gi"))
    assert.are.equal(0.5, cel.parse_quantity("500m"))
    assert.are.equal(1500, cel.parse_quantity("1.5k"))
    assert.are.equal(1000, cel.parse_quantity("1e3"))
    assert.is_nil(cel.parse_quantity("1X"))
  end)
end)

describe("luasched.json", function()
  it("decodes and encodes objects, arrays (also empty) and null", function()
    local v = json.decode('{"a":[1,2,{"b":null}],"c":"x\\"y\\u00e9","d":[],"e":true,"f":-1.5e2}')
    assert.are.equal(2, v.a[2])
    assert.are.equal(json.null, v.a[3].b)
    assert.are.equal('x"y\195\169', v.c)
    assert.are.equal(-150, v.f)
    assert.are.equal('{"a":[1,2,{"b":null}],"c":"x\\"y\195\169","d":[],"e":true,"f":-150}', json.encode(v))
  end)

  it("reports where bad input is", function()
    local ok, err = pcall(json.decode, '{"a": tru}')
    assert.is_false(ok)
    assert.are.equal('JSON at byte 7: unexpected character (near "tru}")', err)
  end)
end)
