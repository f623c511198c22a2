-- The mistakes a plugin author makes first, each named where it is (file,
-- line or field), with what was expected and the closest right name: a
-- misspelt hook, a plugin with no hook, a table not made by ls.plugin, a
-- misspelt ls.* function or view field, an unknown arg, a bad return seen
-- through the test kit. The expected messages are written by hand.
local T = require("luasched.testing")
local sim = require("sim_helper")

-- The plugin of the tutorial (docs/plugins/tutorial.md, as `luasched new
-- plugin PreferGold` writes it, comments left out), with `edit` applied.
local PREFER_GOLD = [[
local ls = require("luasched")
local P = ls.plugin("PreferGold", { defaults = { key = "tier", value = "gold" } })
function P:init(args)
  self.key, self.value = ls.intern(args.key), ls.intern(args.value)
end
function P:score(_, _, node)
  if ls.label(node.node.labels, self.key) == self.value then return ls.MAX_NODE_SCORE end
  return ls.MIN_NODE_SCORE
end
return P
]]

describe("a newcomer's mistakes", function()
  local dir
  setup(function()
    dir = sim.scratch("plugins")
    T.set_plugin_path({ dir .. "/plugins" })
  end)
  teardown(function()
    T.set_plugin_path()
    T.reload()
    sim.remove(dir)
  end)

  -- Writes prefer_gold.lua with `from` replaced by `to` (plain text) and
  -- loads it afresh through the kit. Returns pcall's results.
  local function load_edited(from, to)
    local text = PREFER_GOLD
    if from then
      local at = text:find(from, 1, true)
      assert(at, "the plugin has no " .. from)
      text = text:sub(1, at - 1) .. to .. text:sub(at + #from)
    end
    sim.write(dir .. "/plugins/prefer_gold.lua", text)
    T.reload()
    return pcall(T.plugin, "PreferGold")
  end

  local function file() return dir .. "/plugins/prefer_gold.lua" end

  local cluster
  before_each(function()
    cluster = T.cluster { nodes = { { name = "gold", labels = { tier = "gold" } }, { name = "plain" } } }
  end)

  describe("at load", function()
    it("a misspelt hook is an error at its line, naming the hook meant", function()
      local ok, err = load_edited("function P:score(", "function P:scor(")
      assert.is_false(ok)
      -- line 6 of the plugin: function P:scor(_, _, node)
      assert.matches(file():gsub("%p", "%%%0") .. ':6: plugin "PreferGold": P:scor is no hook; did you mean P:score%?$',
        tostring(err))
    end)

    it("a hook in camelCase or another case is named too", function()
      local _, err = load_edited("function P:score(", "function P:preScore(")
      assert.matches(':6: plugin "PreferGold": P:preScore is no hook; did you mean P:pre_score%?$', tostring(err))
      _, err = load_edited("function P:score(", "function P:Score(")
      assert.matches(':6: plugin "PreferGold": P:Score is no hook; did you mean P:score%?$', tostring(err))
      _, err = load_edited("function P:init(", "function P:inti(")
      assert.matches(':3: plugin "PreferGold": P:inti is no hook; did you mean P:init%?$', tostring(err))
    end)

    it("a helper named after a hook is no mistake", function()
      local ok, err = load_edited("return P\n", "function P:score_of(x) return x end\nreturn P\n")
      assert.is_true(ok, tostring(err))
    end)

    it("a plugin that defines no hook is refused, pointing at the reference", function()
      local ok, err = load_edited("function P:score(", "local function score(")
      assert.is_false(ok)
      assert.are.equal(file() .. ': plugin "PreferGold" defines no hook (function P:filter(state, pod, node), '
        .. "P:score(state, pod, node), ...: docs/plugins/api.md#extension-points)", tostring(err))
    end)

    it("a file that forgets to return its plugin says how to end it", function()
      local ok, err = load_edited("return P\n", "")
      assert.is_false(ok)
      assert.are.equal(file() .. ': plugin "PreferGold" must return a table (from ls.plugin), got nil: '
        .. "end the file with return P", tostring(err))
    end)

    it("a table not made by ls.plugin says how to make it", function()
      local ok, err = load_edited('ls.plugin("PreferGold", { defaults = { key = "tier", value = "gold" } })', "{}")
      assert.is_false(ok)
      assert.are.equal(file() .. ': the table it returns has no name: '
        .. 'make it with local P = ls.plugin("PreferGold", ...)', tostring(err))
    end)

    it("a misspelt P.events would register nothing: it is named", function()
      local ok, err = load_edited("return P\n", 'P.event = { { resource = "Node", action = "Add" } }\nreturn P\n')
      assert.is_false(ok)
      assert.are.equal(file() .. ': plugin "PreferGold": P.event is read by nobody; did you mean P.events?',
        tostring(err))
    end)

    it("a misspelt field of ls.plugin's spec is named at the plugin's line", function()
      local ok, err = load_edited("{ defaults = {", "{ default = {")
      assert.is_false(ok)
      assert.are.equal(file() .. ':2: ls.plugin("PreferGold", spec): '
        .. 'spec.default is no field (did you mean "defaults"?)', tostring(err))
    end)

    it("an unknown arg names the closest declared one, or lists them", function()
      assert(load_edited())
      local ok, err = pcall(T.plugin, "PreferGold", { valeu = "silver" })
      assert.is_false(ok)
      assert.matches('args of plugin "PreferGold": args%.valeu: unknown field %(did you mean "value"%?%)$',
        tostring(err))
      ok, err = pcall(T.plugin, "PreferGold", { colour = "gold" })
      assert.is_false(ok)
      assert.matches('args%.colour: unknown field %(expected key, value%)$', tostring(err))
    end)
  end)

  describe("an ls.* function given the wrong kind of argument", function()
    it("ls.parse_quantity with a scale that is no power of ten says what it takes", function()
      local ls = require("luasched")
      assert.are.equal(1500, ls.parse_quantity("1500m", 3))
      assert.are.equal(1500, ls.parse_quantity("1500m", "cpu"))
      local ok, err = pcall(ls.parse_quantity, "1500m", 1000)
      assert.is_false(ok)
      assert.matches('ls%.parse_quantity: scale must be "cpu", nil or an integer 0%.%.9 %(3: milli%-units%), got 1000$',
        tostring(err))
    end)

    it("ls.selector_signature given no list or no compiled selector says which and what it got", function()
      local ls = require("luasched")
      local ok, err = pcall(ls.selector_signature, "key", nil)
      assert.is_false(ok)
      assert.matches('ls%.selector_signature: parts must be a table '
        .. '%(the list the signature is appended to%), got "key"$', tostring(err))
      ok, err = pcall(ls.selector_signature, {}, { app = "web" })
      assert.is_false(ok)
      assert.matches("ls%.selector_signature: sel must be a compiled label selector "
        .. "%(as in a pod's affinity terms%), got a table$", tostring(err))
    end)
  end)

  describe("when a hook runs", function()
    it("a misspelt ls.* function names the one meant", function()
      assert(load_edited("ls.label(node.node.labels", "ls.lable(node.node.labels"))
      local ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches('running Score plugin "PreferGold": ' .. file():gsub("%p", "%%%0")
        .. ":7: luasched%.lable does not exist; did you mean luasched%.label%?$", tostring(err))
    end)

    it("a label key given as text says to intern it", function()
      assert(load_edited("ls.label(node.node.labels, self.key)", 'ls.label(node.node.labels, "tier")'))
      local ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches(file():gsub("%p", "%%%0") .. ':7: ls%.label: the key is an interned id, not the text "tier": '
        .. 'ls%.intern%("tier"%) once, in init$', tostring(err))
    end)

    it("a Resources vector given as a resource list is named at the plugin's line, not the runtime's", function()
      assert(load_edited("function P:score(_, _, node)\n",
        'function P:score(_, pod, node)\n  if ls.quantity(pod.requests, "cpu") then return 0 end\n'))
      local ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches(file():gsub("%p", "%%%0") .. ":7: 'struct ls_resources' has no member named 'n'; this is a "
        .. "Resources vector %(pod%.requests, ni%.allocatable%), not a resource list %(container%.requests%): "
        .. "read %.v%[ls%.resource_index%(name%)%]$", tostring(err))
    end)

    it("a misspelt view field names the field meant, at the plugin's line, not the runtime's", function()
      assert(load_edited("node.node.labels", "node.node.lables"))
      local ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      err = tostring(err)
      assert.matches(file():gsub("%p", "%%%0")
        .. ":7: 'struct ls_node' has no member named 'lables'; did you mean 'labels'%?$", err)
      assert.is_nil(err:find("views.lua", 1, true))
      assert(load_edited("node.node.labels", "node.nod.labels"))
      ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches(":7: 'struct ls_node_info' has no member named 'nod'; did you mean 'node'%?$", tostring(err))
    end)

    it("a NodeInfo read as its node, and a hook defined with a dot, are told apart from typos", function()
      assert(load_edited("node.node.labels", "node.labels"))
      local ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches(":7: 'struct ls_node_info' has no member named 'labels'; this is a NodeInfo: "
        .. "the node's own fields are under %.node %(%.node%.labels%)$", tostring(err))
      -- P.score(_, _, node): self is the state, node is the pod (not "did you mean 'node_name'")
      assert(load_edited("function P:score(_, _, node)", "function P.score(_, _, node)"))
      ok, err = pcall(T.cycle, T.plugin("PreferGold"), cluster, T.pod { name = "web" })
      assert.is_false(ok)
      assert.matches(":7: 'struct ls_pod' has no member named 'node'; this is a pod, not a NodeInfo: a hook defined "
        .. "as P%.hook%(%.%.%.%) instead of P:hook%(%.%.%.%) gets its arguments one place off$", tostring(err))
    end)

    it("a bad return names the plugin's file and line, raised at the spec's line", function()
      assert(load_edited("return ls.MAX_NODE_SCORE", 'return "high"'))
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() return T.cycle(T.plugin("PreferGold"), cluster, T.pod { name = "web" }) end)
      assert.is_false(ok)
      -- the score hook is defined on line 6; nothing of the kit's own files
      assert.are.equal(string.format('spec/lua/newcomer_mistakes_spec.lua:%d: running Score plugin "PreferGold": '
        .. 'score returned "high" (a string), expected an integer within int64 (%s:6)', line, file()),
        (tostring(err):gsub("^.*(spec/lua/newcomer_mistakes_spec%.lua)", "%1")))
    end)
  end)
end)
