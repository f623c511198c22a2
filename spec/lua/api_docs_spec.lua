-- The plugin API reference covers the module as it really is: every public
-- name the loaded `luasched` module has (not only those core/gen_docs.lua
-- finds by reading the sources) is documented, and every documented name exists.
local ls = require("luasched")

local function source_dir()
  local env = os.getenv("LUASCHED_SOURCE_DIR")
  if env and env ~= "" then return env end
  return "."
end

describe("docs/plugins/api.md", function()
  local gen = dofile(source_dir() .. "/core/gen_docs.lua")
  local api = gen.collect(source_dir())

  local documented = {}
  for _, s in ipairs(api.sections) do
    for _, item in ipairs(s.items) do documented[item.name] = item end
  end

  it("has no undocumented item in the sources", function()
    assert.are.same({}, api.problems)
  end)

  it("documents every public name of the loaded module", function()
    local missing = {}
    for k in pairs(ls) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and not documented[k] then missing[#missing + 1] = k end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("documents no name the module lacks", function()
    local extra = {}
    for k in pairs(documented) do
      if rawget(ls, k) == nil then extra[#extra + 1] = k end
    end
    table.sort(extra)
    assert.are.same({}, extra)
  end)

  it("documents every field of the Pod, Node and NodeInfo views the FFI knows", function()
    local ffi = require("ffi")
    local views = {}
    for _, v in ipairs(api.views) do views[v.cname] = v end
    for _, cname in ipairs({ "ls_pod", "ls_node", "ls_node_info", "ls_container", "ls_volume", "ls_object" }) do
      local v = assert(views[cname], cname .. " is not a documented view")
      local names = {}
      for _, f in ipairs(v.fields) do names[f.name] = true; assert.is_true(f.doc ~= "", cname .. "." .. f.name) end
      -- every member of the C type is in the view (ffi.offsetof is nil for a name the struct lacks)
      for name in pairs(names) do assert.is_not_nil(ffi.offsetof(cname, name), cname .. "." .. name) end
      local count = 0
      for _ in pairs(names) do count = count + 1 end
      assert.is_true(count > 3)
    end
  end)
end)
