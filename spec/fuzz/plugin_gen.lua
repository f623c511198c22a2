-- spec/fuzz/plugin_gen.lua: random plugin code against the plugin API, for
-- spec/fuzz/fuzz_plugins.c. gen(seed, programs) returns the source of one
-- plugin, "FuzzGen", holding `programs` random programs; pod k of the batch
-- (label fuzz=<k>) runs program k in every hook, so one scheduling cycle of
-- that pod is one execution of one random program. A pod without the label
-- runs nothing (it must bind whatever the programs do).
--
-- Each program mixes: reads of random fields of pod, node and NodeInfo,
-- indices out of range (negative, the length, huge, fractional, NaN, strings),
-- arithmetic on the views, calls of every ls.* function and self.handle
-- method with random values of every type, returns of random values (NaN,
-- inf, 3.7, 1e300, strings, tables, forged statuses), and the sandbox escapes
-- (string metatable, luasched module, statuses, handle, rawset, setmetatable,
-- debug, load, string.dump, io, os.execute, ffi, jit, coroutine, collectgarbage,
-- newproxy, getfenv, writes into nested scheduler data and runtime-made
-- structs, luasched.cel's metatables), each followed by `error("ESCAPED: ...")`
-- when it worked. Values with metamethods that loop or raise are passed
-- everywhere.
-- Every program first checks that nothing shared was changed by an earlier
-- one ("ESCAPED: shared state changed"). Rarely, an endless loop, one that
-- catches the budget's error, a backtracking pattern or an allocation without
-- bound (the budgets must stop them).
--
-- The isolation classes (issue 24): views kept in a module table and used
-- from a later call must raise ("ESCAPED: a view outlived its call"); the
-- text of pods, NodeInfos, views, tables and functions must hold no address
-- ("ESCAPED: an address reached plugin code"); loops of ls.activate, status
-- messages of many newlines and interning in bulk (C memory, bounded); the
-- batch runs two profiles of FuzzGen: a waiting pod of the other profile
-- seen, an allow as another plugin, or the other profile's secret string read
-- by walking ids is an escape. Attacker round 4's classes: a built-in's
-- CycleState entry seen, a pod kept past its call readable after the plugin
-- claimed to be built-in (rawset or a metatable on its table), a Node, Pod,
-- Namespace or PriorityClass created. Attacker round 5's: the plugin's own
-- `file` and `builtin` fields rewritten, memory held near the limit of the
-- profile "other" (64 MiB) for a built-in to fail, ResourceClaims named past
-- 253 characters. fuzz_plugins.c also fails a pod whose message blames a
-- plugin other than FuzzGen ("WRONG NAME").
local M = {}

local rng_state = 1
local function rnd(n)   -- 1..n, a 32-bit LCG (the same sequence on every machine)
  rng_state = (rng_state * 1103515245 + 12345) % 2147483648
  return math.floor(rng_state / 65536) % n + 1
end
local function pick(list) return list[rnd(#list)] end

local VALUES = {
  "nil", "0", "1", "-1", "2^31", "-2^31", "2^53", "2^63", "1/0", "-1/0", "0/0", "3.7", "1e300", "-5",
  "900", "901", "0.5", '""', '"x"', '"kubernetes.io/hostname"', '"zone"', "{}", "{1, 2}", "{ code = 2, id = 1 }",
  "true", "false", "function() end", "ls.skip", "ls.unschedulable('u')", "pod", "node", "ni", "ni.node",
  "pod.labels", "ni.node.labels", "state", "self", "self.handle", "ls", "string", "n",
  -- values whose metamethods raise or allocate (the runtime must never run
  -- them outside the call; a looping one is a rare statement below, as each
  -- costs a whole time budget), nested scheduler data, runtime-made structs, objects
  "setmetatable({}, { __tostring = function() error('tostring') end, __index = function() error({}) end })",
  "setmetatable({}, { __tostring = function() return ('x'):rep(1e6) end, __lt = function() return {} end })",
  "setmetatable({}, { __eq = function() error('eq') end, __concat = function() return {} end,"
    .. " __len = function() return -1 end })",
  "ni.requested", "pod.requests", "ls.namespace_labels('none')", "ls.find_object('Namespace', 0, 'default')",
  '"a\\0b"', "('k'):rep(70000)",
}

local ARRAYS = {
  { "pod.tolerations", "pod.n_tolerations" }, { "pod.images", "pod.n_images" },
  { "pod.host_ports", "pod.n_host_ports" }, { "pod.affinity", "pod.n_affinity" },
  { "pod.anti_affinity", "pod.n_anti_affinity" }, { "pod.spread_constraints", "pod.n_spread_constraints" },
  { "pod.owner_refs", "pod.n_owner_refs" }, { "pod.scheduling_gates", "pod.n_scheduling_gates" },
  { "pod.labels.items", "pod.labels.n" }, { "pod.preferred_node_affinity", "pod.n_preferred_node_affinity" },
  { "ni.pods", "ni.num_pods" }, { "ni.pods_with_affinity", "ni.num_pods_with_affinity" },
  { "ni.pods_with_required_anti_affinity", "ni.num_pods_with_required_anti_affinity" },
  { "ni.used_ports", "ni.n_used_ports" }, { "ni.node.taints", "ni.node.n_taints" },
  { "ni.node.images", "ni.node.n_images" }, { "ni.node.conditions", "ni.node.n_conditions" },
  { "ni.node.labels.items", "ni.node.labels.n" }, { "nodes", "n" },
}

local INDICES = { "0", "-1", "LEN", "LEN - 1", "LEN + 1", "2^31", "-2^31", "1e10", "0.5", "0/0", '"a"', "nil", "true" }

local FIELDS = {
  "pod.name", "pod.uid", "pod.ns", "pod.priority", "pod.requests.milli_cpu", "pod.requests.memory",
  "pod.node_name", "pod.labels.n", "pod.seq", "pod.creation_ns", "ni.index", "ni.generation",
  "ni.requested.milli_cpu", "ni.allocatable.memory", "ni.node.name", "ni.node.unschedulable",
  "ni.node.capacity.pods", "pod.nosuchfield", "ni.nosuchfield", "pod.required_node_affinity.n_terms",
}

local CALLS = {
  "ls.str(@)", "ls.intern(@)", "ls.label(@, @)", "ls.has_label(@, @)", "ls.wait(@)", "ls.unschedulable(@)",
  "ls.unresolvable(@, @)", "ls.error(@)", "ls.status(@, @)", "ls.pending(@)", "ls.selector_matches(@, @)",
  "ls.pod_matches_node_affinity(@, @)", "ls.node_selector_term_matches(@, @)", "ls.tolerates(@, @, @)",
  "ls.find_untolerated_taint(@, @, @, @, @)", "ls.new_taint(@, @, @)", "ls.pod_tolerates(@, @)",
  "ls.new_node_selector(@)", "ls.node_selector_matches(@, @)", "ls.new_preferred_terms(@)",
  "ls.resource_name(@)", "ls.resource_index(@)", "ls.resource_count()", "ls.all_nodes()",
  "ls.snapshot_version()", "ls.changed_nodes(@)", "ls.image_state(@, @)", "ls.objects(@)",
  "ls.find_object(@, @, @)", "ls.namespace_labels(@)", "ls.activate(@)", "ls.waiting_pods()",
  "ls.allow(@, @)", "ls.reject(@, @, @)", "ls.default_normalize_score(@, @, @, @)", "ls.merge_args(@, @)",
  "ls.bounded_cache(@)", "ls.cache_get(@, @, @)", "ls.selector_signature(@, @)", "ls.status_message(@)",
  "ls.is_status(@)", "ls.NO_SUCH_CONSTANT", "ls.UNRESOLVABLE", "ls.refresh_nodes(@, @, @, @, @)",
  "self.handle:random(@)", "self.handle:nominated_node_of(@)", "self.handle:clone_state(@)",
  "self.handle:node_code(@)", "self.handle:run_filter_with_nominated(@, @, @)",
  "self.handle:clone_node_info(@)", "self.handle:nominated_pods(@)", "ls.plugin(@, @)",
  "tostring(@)", "tonumber(@)", "select(@, @)", "unpack(@)", "string.rep(@, @)", "string.format(@, @)",
  "ls.object_table(@)", "ls.object_data(@)", "ls.patch_status(@, @)", "ls.patch_object(@, @, @, @)",
  "ls.pod_uses_claim(@, @, @)", "ls.controlled_by_pod(@, @)", "ls.objects_generation(@)", "ls.find_node(@)",
  "ls.queued_pod(@)", "ls.json_quote(@)", "ls.status(@, @, @)", "self.handle:run_add_pod(@, @, @, @)",
  "self.handle:run_remove_pod(@, @, @, @)", "table.sort({ 3, 1, 2 }, @)", "string.find(@, @)",
}

-- Each escape: code that must fail; when it does not, the program raises
-- "ESCAPED: <name>".
local ESCAPES = {
  { "string metatable", 'getmetatable("").__index.upper = function() return "hijacked" end' },
  { "string metatable set", 'setmetatable(getmetatable(""), {})' },
  { "luasched module write", 'ls.str = function() return "hijacked" end' },
  { "luasched rawset", 'rawset(ls, "str", function() return "hijacked" end)' },
  { "luasched setmetatable", 'setmetatable(ls, {})' },
  { "luasched constant", 'ls.UNSCHEDULABLE = 0' },
  { "status write", 'ls.skip.code = 0' },
  { "status rawset", 'rawset(ls.skip, "code", 0)' },
  { "status metatable", 'setmetatable(ls.skip, {})' },
  { "handle write", 'self.handle.random = function() return 0 end' },
  { "handle metatable", 'getmetatable(self.handle).random = function() return 0 end' },
  { "code names", 'ls.code_names[2] = "x"' },
  { "debug", 'debug.getinfo(1)' },
  { "load", 'load("return 1")()' },
  { "loadstring", 'loadstring("return 1")()' },
  { "dofile", 'dofile("/dev/null")' },
  { "string.dump", 'string.dump(function() end)' },
  { "string method dump", '("").dump(function() end)' },
  { "io", 'io.open("/etc/hostname")' },
  { "os.execute", 'os.execute("true")' },
  { "os.exit", 'os.exit(0)' },
  { "os.getenv", 'os.getenv("HOME")' },
  { "ffi", 'require("ffi").C.abort()' },
  { "jit", 'require("jit").off()' },
  { "jit global", 'jit.off()' },
  { "clib", 'require("luasched.clib")' },
  { "dispatch", 'require("luasched.dispatch")' },
  { "coroutine", 'coroutine.create(function() end)' },
  { "collectgarbage", 'collectgarbage("stop")' },
  { "newproxy", 'newproxy(true)' },
  { "getfenv", 'getfenv(1).x = 1' },
  { "setfenv", 'setfenv(1, {})' },
  { "package", 'package.loaded.luasched.str = nil' },
  { "_G of runtime", 'rawget(_G, "io").open("/etc/hostname")' },
  { "pointer arithmetic pod", 'local _ = pod + 1' },
  { "pointer arithmetic node", 'local _ = ni - 1' },
  { "pointer arithmetic view", 'local _ = ni.pods + 1' },
  { "pod index", 'local _ = pod[1]' },
  { "node write", 'ni.node.unschedulable = 1' },
  { "pod write", 'pod.priority = 7' },
  -- nested data (LuaJIT drops a const struct's qualifier for them) and
  -- structs the runtime makes
  { "nested union write", 'ni.requested.pods = 1' },
  { "nested array write", 'ni.requested.v[0] = 1' },
  { "nested struct write", 'pod.labels.n = 0' },
  { "node nested write", 'ni.node.allocatable.memory = 1' },
  { "pod requests write", 'pod.requests.milli_cpu = 1' },
  { "empty labels write", 'ls.namespace_labels("none").n = 5' },
  { "selector nested write",
    'ls.new_node_selector({ { exprs = { { key = 1, op = ls.OP_EXISTS } } } }).terms[0].exprs.n = 9' },
  { "cel metatable", 'getmetatable(require("luasched.cel").quantity("1")).__index = 1' },
  { "format %p", 'local _ = ("%p"):format({})' },
  { "library format %p", 'local _ = string.format("%8p", pod)' },
  { "view address arithmetic", 'local _ = ls.all_nodes().addr_ + 1' },
}

-- The views a program can keep (nil-safe), and what it keeps them in.
local VIEWS = { "scores", "nodes", "(ls.all_nodes())", "(ls.changed_nodes(0))" }
-- Things whose text must hold no address.
local SHOWN = { "pod", "ni", "ni and ni.node", "nodes", "scores", "{}", "print", "pod.tolerations", "pod.labels",
  "nodes and nodes.addr_", "state", "self.handle", "ls", "function() end" }

-- The isolation statements (see the header).
local function isolation_statement()
  local r = rnd(18)
  if r == 1 then
    return string.format("kept[#kept %% 8 + 1] = { v = %s, call = calls }", pick(VIEWS))
  elseif r == 2 then
    local use = pick({ "local _ = k.v[0]", "k.v[0] = 1", "local _ = #k.v" })
    return "for _, k in ipairs(kept) do if k.v ~= nil and k.call ~= calls and pcall(function() " .. use ..
      ' end) then error("ESCAPED: a view outlived its call") end end'
  elseif r == 3 then
    local what = pick(SHOWN)
    return string.format('do local s = tostring(%s) .. ("%%s"):format(%s) if s:find("0x%%x%%x%%x%%x") then ' ..
      'error("ESCAPED: an address reached plugin code: " .. s) end end', what, what)
  elseif r == 4 then
    return "for p in ls.waiting_pods() do if ls.str(p.scheduler_name) ~= self.profile then " ..
      'error("ESCAPED: another profile\'s waiting pod") end end'
  elseif r == 5 then
    return 'for p in ls.waiting_pods() do if pcall(ls.allow, p, "NotFuzzGen") then ' ..
      'error("ESCAPED: allowed as another plugin") end end'
  elseif r == 6 then
    return "secret(self) for id = 1, " .. rnd(20000) .. ' do local ok, t = pcall(ls.str, id) ' ..
      'if ok and t:find("^secret%-") and not mine[t] then error("ESCAPED: read another profile\'s string") end end'
  elseif r == 7 and rnd(50) == 1 then
    return "for _ = 1, 2e5 do ls.activate(pod) end"
  elseif r == 8 and rnd(50) == 1 then
    return "local _ = ls.unschedulable(('n\\n'):rep(" .. rnd(200000) .. ") .. 'x')"
  elseif r == 9 and rnd(50) == 1 then
    return "for i = 1, " .. rnd(20000) .. " do ls.intern(('z'):rep(256) .. i) end"
  elseif r == 10 then
    -- attacker round 4: a built-in's CycleState entry is not the plugin's to see
    return 'if state ~= nil and (type(state.NodeResourcesFit) == "table" or state.VolumeBinding ~= nil ' ..
      'or state.dynamic_resources_prefiltered ~= nil) then error("ESCAPED: a built-in\'s CycleState entry") end'
  elseif r == 11 then
    -- passing as built-in: the runtime must not believe the plugin's table
    return pick({ 'pcall(rawset, P, "builtin", true)', 'pcall(rawset, P, "shadows", nil)',
      'pcall(setmetatable, P, { __index = function(_, k) if k == "builtin" then return true end end })' })
  elseif r == 12 then
    return "kept_pods[#kept_pods % 8 + 1] = { v = pod, call = calls }"
  elseif r == 13 then
    return "for _, k in ipairs(kept_pods) do if k.call ~= calls and pcall(function() return k.v.name end) then " ..
      'error("ESCAPED: a pod outlived its call") end end'
  elseif r == 14 then
    local kind = pick({ "Node", "Pod", "Namespace", "PriorityClass" })
    return string.format("if ls.create_object('{\"apiVersion\":\"v1\",\"kind\":\"%s\",\"metadata\":" ..
      "{\"generateName\":\"fz\",\"namespace\":\"default\"}}') then error(\"ESCAPED: a plugin created a %s\") end",
      kind, kind)
  elseif r == 15 then
    -- attacker round 5: what the runtime knows of a plugin is the loader's,
    -- never the plugin's fields (its file, whether it is built-in)
    return pick({ 'pcall(rawset, P, "file", "")', 'self.file = "filter"', "self.builtin = true",
      'pcall(rawset, P, "file", "luasched")' })
  elseif r == 16 and rnd(20) == 1 then
    -- memory held at the edge of the limit for the next plugin to fail (the
    -- profile "other" has 64 MiB: a built-in blamed for it is a WRONG NAME)
    return "for i = 1, " .. rnd(62000) .. " do hoard[#hoard % 62000 + 1] = ('h'):rep(1000) .. i end"
  elseif r == 17 then
    -- a name past the API server's 253 characters (it was cut short and the
    -- pod retried for ever: a hang)
    return "ls.create_object('{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":" ..
      "{\"name\":\"' .. ('n'):rep(" .. (200 + rnd(200)) .. ") .. '\",\"namespace\":\"default\"}}')"
  elseif r == 18 then
    return "hoard = {}"
  end
  return "local _ = #kept"
end

local INTEGRITY = [[
  if ("x"):upper() ~= "X" or ("%d"):format(7) ~= "7" or ls.UNSCHEDULABLE ~= 2 or ls.skip.code ~= 5
      or not ls.is_status(ls.skip) or ls.code_names[2] ~= "Unschedulable" or ls.namespace_labels("none").n ~= 0 then
    error("ESCAPED: shared state changed")
  end
]]

local function value()
  return pick(VALUES)
end

local function call_expr()
  return (pick(CALLS):gsub("@", value))
end

local function index_expr()
  local a = pick(ARRAYS)
  local idx = pick(INDICES):gsub("LEN", "(" .. a[2] .. ")")
  return a[1] .. "[" .. idx .. "]"
end

local function statement(depth)
  local r = rnd(20)
  if r <= 4 then
    return "local _ = " .. index_expr()
  elseif r <= 6 then
    local a = pick(ARRAYS)
    return string.format("for i = 0, (%s) do local _ = %s[i] end", a[2], a[1])
  elseif r <= 8 then
    return "local _ = " .. pick(FIELDS)
  elseif r <= 13 then
    return "local _ = " .. call_expr()
  elseif r <= 15 then
    return "pcall(function() " .. statement(depth + 1) .. " end)"
  elseif r <= 16 then
    return "state[" .. value() .. "] = " .. value()
  elseif r <= 17 and rnd(2) == 1 then
    return isolation_statement()
  elseif r <= 17 then
    local e = pick(ESCAPES)
    return string.format("if pcall(function() %s end) then error(%q) end", e[2], "ESCAPED: " .. e[1])
  elseif r <= 18 and depth == 0 then
    return "local x = " .. value() .. "; local _ = x + 1"
  elseif r <= 19 then
    local n = rnd(5)
    if n == 1 and rnd(4000) == 1 then return "while true do end" end
    if n == 2 and rnd(4000) == 1 then return "local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(100) .. i end" end
    -- the budget's error caught and the loop going on; a pattern that
    -- backtracks for ever in C (only the watchdog's signal stops them)
    if n == 3 and rnd(4000) == 1 then return "while true do pcall(function() while true do end end) end" end
    if n == 4 and rnd(4000) == 1 then return "local _ = ('a'):rep(40):find(('a*'):rep(40) .. 'b')" end
    if n == 5 and rnd(4000) == 1 then
      return "error(setmetatable({}, { __tostring = function() while true do end end }))"
    end
    return "for i = 1, " .. rnd(200) .. " do local _ = ls.label(pod.labels, i) end"
  else
    return "error(" .. value() .. ")"
  end
end

local RETURNS = {
  "nil", "nil", "nil", "0", "50", "100", "101", "-1", "0/0", "1/0", "-1/0", "3.7", "1e300", "2^63",
  '"str"', "{}", "true", "ls.skip", "ls.unschedulable('fuzz says no')", "ls.unresolvable('fuzz')",
  "ls.error('fuzz error')", "ls.wait(0.01)", "ls.status(ls.PENDING, 'p')", "ls.status(ls.WAIT, 'w')",
  "ls.status(ls.SUCCESS, 's')", "setmetatable({ code = 2, id = 1 }, {})", "pod", "ni",
  "ls.status(ls.ERROR, 'e')", "self.handle",
}

local HOOKS = {
  { "pre_enqueue", "self, pod" }, { "pre_filter", "self, state, pod" },
  { "filter", "self, state, pod, ni" }, { "post_filter", "self, state, pod" },
  { "pre_score", "self, state, pod, nodes, n" }, { "score", "self, state, pod, ni" },
  { "normalize_score", "self, state, pod, scores, nodes, n" }, { "reserve", "self, state, pod, node" },
  { "unreserve", "self, state, pod, node" }, { "permit", "self, state, pod, node" },
  { "pre_bind", "self, state, pod, node" }, { "post_bind", "self, state, pod, node" },
}

-- Locals for the names a hook does not take, so every program can use them.
local function prelude(args)
  local have, lines = {}, {}
  for name in args:gmatch("[%w_]+") do have[name] = true end
  for _, name in ipairs({ "state", "ni", "nodes", "n", "scores", "node" }) do
    if not have[name] then lines[#lines + 1] = "local " .. name end
  end
  lines[#lines + 1] = "if ni == nil then local all, cnt = ls.all_nodes(); if cnt > 0 then ni = all[0] end end"
  lines[#lines + 1] = "if nodes == nil then nodes, n = ls.all_nodes() end"
  return table.concat(lines, "\n") .. "\n"
end

local function body(hook)
  local lines = { INTEGRITY }
  for _ = 1, rnd(6) do lines[#lines + 1] = "  " .. statement(0) end
  if hook == "normalize_score" and rnd(3) == 1 then
    lines[#lines + 1] = "  for i = -1, n do scores[i] = " .. pick(RETURNS) .. " end"
  end
  lines[#lines + 1] = "  return " .. pick(RETURNS)
  return table.concat(lines, "\n")
end

local HEADER = [[
local ls = require("luasched")
local P = ls.plugin("FuzzGen", { defaults = { seed = 0 } })
P.events = { { resource = "Node", action = { "Add" } } }
local key = ls.intern("fuzz")
local programs = {}
-- views kept between calls, the calls made (hooks that are one call from C
-- each: filter, score and normalize_score run inside one), this state's secrets
local kept, calls, mine, kept_pods, hoard = {}, 0, {}, {}, {}
local function secret(self)
  local s = "secret-" .. tostring(self.profile)
  if not mine[s] then ls.intern(s); mine[s] = true end
end
local ONE_CALL = { pre_enqueue = true, pre_filter = true, post_filter = true, pre_score = true, reserve = true,
  unreserve = true, permit = true, pre_bind = true, post_bind = true }
local function program(pod)
  local v = ls.label(pod.labels, key)
  if v == 0 then return nil end
  return programs[tonumber(ls.str(v))]
end
]]

--- The source of plugin FuzzGen with `count` programs from `seed`.
function M.gen(seed, count)
  rng_state = seed % 2147483648
  local out = { HEADER }
  for k = 1, count do
    out[#out + 1] = string.format("programs[%d] = {}", k)
    for _, h in ipairs(HOOKS) do
      local args = h[2]
      local node_arg = prelude(args)
      if rnd(3) == 1 then
        out[#out + 1] = string.format("programs[%d].%s = function(%s)\n%s%s\nend", k, h[1], args, node_arg, body(h[1]))
      end
    end
  end
  for _, h in ipairs(HOOKS) do
    local args = h[2]
    out[#out + 1] = string.format([[
function P.%s(%s)
  if ONE_CALL.%s then calls = calls + 1 end
  local prog = program(pod)
  local f = prog and prog.%s
  if f then return f(%s) end
  %s
end]], h[1], args, h[1], h[1], args, h[1] == "score" and "return 0" or "return nil")
  end
  out[#out + 1] = "return P"
  return table.concat(out, "\n")
end

return M
