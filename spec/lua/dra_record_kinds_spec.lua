-- `luasched record` records every kind the scheduler reads
-- (core/src/client/read_kinds.c), and a replay gives the plugins exactly
-- those objects. This checks that every resource.k8s.io kind a plugin looks
-- up (the "plural.version.group" names of ls.find_object / ls.objects) is in
-- that list, so a DRA kind a plugin starts to read cannot be left out of
-- recordings unnoticed.
local DIR = os.getenv("LUASCHED_SOURCE_DIR") or "."

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("*a")
  f:close()
  return s
end

local function plugin_files()
  local p = assert(io.popen("ls " .. DIR .. "/plugins/*.lua " .. DIR .. "/plugins/policies/*.lua"))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

describe("record", function()
  it("records every DRA kind a plugin reads", function()
    local kinds = read(DIR .. "/core/src/client/read_kinds.c")
    local seen = {}
    for _, file in ipairs(plugin_files()) do
      for plural, version in read(file):gmatch('"(%l+)%.(v%w+)%.resource%.k8s%.io"') do
        seen[plural .. "." .. version] = { plural, version, file }
      end
    end
    local n = 0
    for _, k in pairs(seen) do
      n = n + 1
      local entry = string.format('{"resource.k8s.io", "%s", "%s"', k[2], k[1])
      assert.is_truthy(kinds:find(entry, 1, true),
        string.format("%s reads %s.%s.resource.k8s.io, which read_kinds.c (and so record) does not list",
          k[3], k[1], k[2]))
    end
    -- DynamicResources reads DeviceClasses, ResourceSlices and ResourceClaims, and record lists them
    assert.is_true(n >= 3)
    for _, k in ipairs({ { "deviceclasses", "DeviceClass" }, { "resourceslices", "ResourceSlice" },
                         { "resourceclaims", "ResourceClaim" } }) do
      assert.is_truthy(seen[k[1] .. ".v1"], "no plugin reads " .. k[1])
      assert.is_truthy(kinds:find(string.format('{"resource.k8s.io", "v1", "%s", "%s", "resource.k8s.io/v1"}',
        k[1], k[2]), 1, true), "read_kinds.c does not list " .. k[2])
    end
  end)

  it("leaves out only the DRA kinds no plugin reads: ResourceClaimTemplates and DeviceTaintRules", function()
    -- A template is read by kube-controller-manager's resourceclaim controller, which neither
    -- simulate nor run has: a trace holds the claims it made. DeviceTaintRules are not modelled
    -- (docs/upstream-parity/dra.md). Should a plugin start to read either, the case above fails.
    local kinds = read(DIR .. "/core/src/client/read_kinds.c")
    for _, plural in ipairs({ "resourceclaimtemplates", "devicetaintrules" }) do
      for _, file in ipairs(plugin_files()) do
        assert.is_falsy(read(file):find(plural .. ".", 1, true), file .. " reads " .. plural)
      end
      assert.is_falsy(kinds:find('"' .. plural .. '"', 1, true))
    end
  end)
end)
