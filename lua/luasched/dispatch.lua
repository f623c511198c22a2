-- luasched.dispatch: the Lua side of the framework. C calls one function here
-- per extension point per pod; the loops over nodes run here, call each
-- plugin's hook, and write statuses and scores into the ls_cycle arrays.
--
-- Every entry point returns an upstream status code. A plugin error (raise,
-- wrong return type, budget overrun) becomes an Error status whose message
-- names the plugin and, through Lua's error position, its file:line.
-- Over 800 lines: the entry points share the running cycle's state (the
-- profile, the CycleState, the plugin running); the sandbox (sandbox.lua),
-- the views (views.lua), args (args.lua) and the loops (loops.lua) are apart.
local bit = require("bit")
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local loader = require("luasched.loader")
local loops = require("luasched.loops")
local timing = require("luasched.timing")
-- true while an extension point of a sampled cycle runs (plugin durations, metrics)
local sampling = false
local EP_OF_HOOK = {
  reserve = C.LS_EP_RESERVE, pre_bind = C.LS_EP_PRE_BIND, bind = C.LS_EP_BIND, post_bind = C.LS_EP_POST_BIND,
}
local events = require("luasched.events")
local sandbox = require("luasched.sandbox")
local views = require("luasched.views")
local args_check = require("luasched.args")

local SUCCESS, ERROR, UNSCHED, UNRESOLVABLE = 0, 1, 2, 3
local WAIT, SKIP, PENDING = 4, 5, 6
local is_status = ls.is_status

local function ls_status_message(id)
  return ls.status_message(id)
end

local M = {}

-- What plugin code runs outside a cycle (loading, init, hints...): C keeps
-- the text so a call its watchdog cuts off can still be attributed.
pcall(ffi.cdef, "void ls_lua_note(const char *what);")
local last_note
local function note(fmt, ...)
  local text = string.format(fmt, ...)
  if text ~= last_note then   -- the queue calls sort_key for every pod: one C call per change
    last_note = text
    C.ls_lua_note(text)
  end
end
M.note = note

-- note() for a hook of an instance, the text made once per instance and hook.
local note_texts = setmetatable({}, { __mode = "k" })
local function note_text(inst, hook)
  local t = note_texts[inst]
  if t == nil then t = {}; note_texts[inst] = t end
  local text = t[hook]
  if text == nil then
    text = string.format("plugin %q (%s)", tostring(inst.name), hook)
    t[hook] = text
  end
  if text ~= last_note then
    last_note = text
    C.ls_lua_note(text)
  end
end

-- The text of an error value a plugin raised: never runs plugin code (a
-- table's __tostring), whatever was raised.
local function describe(err)
  local t = type(err)
  if t == "string" then return err end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(err) end
  return "(a " .. t .. " was raised as the error)"
end
M.describe_error = describe

-- xpcall's handler for plugin calls: an error raised below a plugin's frame
-- (inside a luasched function it called, or by the FFI) is prefixed with the
-- plugin's own file:line, the innermost plugin frame on the stack.
local function locate(err)
  local msg = describe(err)
  for level = 2, 50 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if loader.is_plugin_source(info.source) then
      if msg:sub(1, #info.short_src + 1) ~= info.short_src .. ":" then
        msg = info.short_src .. ":" .. info.currentline .. ": " .. msg
      end
      return msg
    end
  end
  return msg
end
M.locate_error = locate

local xpcall, plain_pcall = xpcall, pcall
local function pcall(f, ...) return xpcall(f, locate, ...) end

local cycle          -- ls_cycle* shared with C for the process lifetime
local profiles = {}  -- [1-based] { name=, points = { hook = { inst... } }, weights = {} }
local state          -- the running cycle's CycleState table
local cycle_profile               -- the profile of the running cycle
local prefilter_failure           -- the code PreFilter failed with this cycle (every node's verdict)
local candidate_set               -- node index -> true, built on demand by Handle:node_code
local skip_score = {}
local current        -- plugin instance running, for error attribution
local current_hook   -- the hook it runs (a key of the plugin table)

local HOOKS = {
  "pre_enqueue", "less", "sort_key", "pre_filter", "add_pod", "remove_pod", "filter",
  "post_filter", "pre_score", "score", "normalize_score", "reserve", "unreserve",
  "permit", "pre_bind", "bind", "post_bind",
}

function M.init(cycle_ptr, plugin_dirs)
  -- A JIT trace log for performance work: LUASCHED_JIT_LOG=/tmp/jit.txt
  local jit_log = os.getenv("LUASCHED_JIT_LOG")
  if jit_log and jit_log ~= "" then require("jit.v").start(jit_log) end
  -- A sampling profile (VM states and lines): LUASCHED_JIT_PROFILE=/tmp/prof.txt;
  -- LUASCHED_JIT_PROFILE_MODE sets jit.p's mode (default "vl2"; e.g. "F3" for
  -- functions with two callers)
  local jit_prof = os.getenv("LUASCHED_JIT_PROFILE")
  if jit_prof and jit_prof ~= "" then
    local mode = os.getenv("LUASCHED_JIT_PROFILE_MODE")
    require("jit.p").start((mode and mode ~= "") and mode or "vl2", jit_prof)
  end
  cycle = ffi.cast("ls_cycle *", cycle_ptr)
  ls._attach(cycle)
  loader.set_path(plugin_dirs)
  sandbox.lock_strings()
end

--- The hooks plugin `name` defines, loading it on first use (multiPoint
--- expansion in C asks this). Returns a list of hook names, or nil and an error.
function M.hooks(name)
  note("plugin %q (loading its file)", name)
  local P, err = loader.load(name)
  if not P then return nil, err end
  local out = {}
  for _, h in ipairs(HOOKS) do
    if type(P[h]) == "function" then out[#out + 1] = h end
  end
  return out
end

local plugin_of = setmetatable({}, { __mode = "k" })   -- instance -> its plugin table

-- `where` (optional) is the config's file:line of the plugin's args.
local function instantiate(P, args, profile_name, where)
  note("plugin %q (%s: checking its args)", P.name, tostring(P.file))
  local ok, aerr = args_check.check(P, args, where)
  if not ok then return nil, aerr end
  local inst = setmetatable({
    name = P.name,
    args = ls.merge_args(P.defaults, args),
    profile = profile_name,
  }, P)
  plugin_of[inst] = P
  if type(P.validate) == "function" then
    local vok, verr = plain_pcall(P.validate, inst.args)
    if not vok or (verr ~= nil and verr ~= true) then
      local at = ""
      if where then
        at = where.line and where.line > 0 and string.format("%s:%d: %s: ", where.source, where.line, where.path)
          or string.format("%s: %s: ", where.source, where.path)
      end
      return nil, string.format("%sargs of plugin %q are not valid: %s", at, P.name, describe(verr))
    end
  end
  if type(P.init) == "function" then
    note("plugin %q (%s: init)", P.name, tostring(P.file))
    local iok, err = plain_pcall(P.init, inst, inst.args)
    if not iok then
      return nil, string.format("initializing plugin %q: %s", P.name, describe(err))
    end
  end
  return inst
end

local checked_filter_status   -- defined with the Filter code below
local to_score, score_value
local node_list, score_list   -- views of PreScore's nodes and NormalizeScore's scores

local function compile_loops(prof, i)
  local filters = prof.points.filter or {}
  prof.filter_index = {}
  for k, inst in ipairs(filters) do prof.filter_index[inst.name] = k end
  prof.filter_loop, prof.filter_one =
    loops.filter(filters, checked_filter_status, "filter loop of profile " .. i)
  -- the same loops, timing every call, for the sampled cycles (metrics)
  local timed = { now = timing.now, observe = timing.observe, ep = C.LS_EP_FILTER }
  prof.filter_loop_timed = loops.filter(filters, checked_filter_status, "timed filter loop of profile " .. i, timed)
  prof.score_loops, prof.score_loops_timed = {}, {}
  for k, inst in ipairs(prof.points.score or {}) do
    prof.score_loops[k] = loops.score(inst, to_score, "score loop of " .. inst.name)
    prof.score_loops_timed[k] = loops.score(inst, to_score, "timed score loop of " .. inst.name,
      { now = timing.now, observe = timing.observe, ep = C.LS_EP_SCORE, index = k - 1 })
  end
  prof.skip = {}
end

-- ---- nominated pods (RunFilterPluginsWithNominatedPods) ------------------------

-- CycleState.Clone: a plugin may define clone_state(entry); plain tables are
-- copied deeply (cdata inside are shared: they are read-only views).
local function deep_copy(v)
  if type(v) ~= "table" or sandbox.is_frozen(v) then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = deep_copy(x) end
  return setmetatable(c, getmetatable(v))
end

local function clone_state(prof, st)
  local c = {}
  for k, v in pairs(st) do
    local inst = prof.instances[k]
    if inst and type(inst.clone_state) == "function" then
      c[k] = inst:clone_state(v)
    else
      c[k] = deep_copy(v)
    end
  end
  return c
end

-- PreFilterExtensions: AddPod / RemovePod of every PreFilter plugin not skipped.
local function run_extension(prof, hook, st, pod, other, ni)
  for _, inst in ipairs(prof.points.pre_filter or {}) do
    local fk = prof.filter_index[inst.name]
    if type(inst[hook]) == "function" and not (fk and prof.skip[fk]) then
      local r = inst[hook](inst, st, pod, other, ni)
      if r ~= nil and is_status(r) and r.code ~= SUCCESS then
        error(string.format("running %s on PreFilter plugin %q: %s", hook, inst.name, r.message), 0)
      end
    end
  end
end

-- Pods nominated to the node that count for `pod`: not lower priority, not itself.
local function nominated_for(pod, node_name)
  local n = C.ls_cycle_nominated_count(cycle, node_name)
  if n == 0 then return nil end
  local list
  for i = 0, n - 1 do
    local p = C.ls_cycle_nominated_pod(cycle, node_name, i)[0]
    if p.priority >= pod.priority and p.uid ~= pod.uid then
      list = list or {}
      list[#list + 1] = p
    end
  end
  return list
end

-- Filter on one node with the nominated pods added (pass one, on a clone of
-- the NodeInfo and the state) and without them (pass two): both must pass.
local function filter_with_nominated(prof, st, pod, ni, st_out)
  local add = nominated_for(pod, ni.node.name)
  if not add then return prof.filter_one(cycle, st, pod, ni, st_out, prof.skip) end
  local copy = C.ls_node_info_clone(ni)
  local ok, fits = pcall(function()
    local st2 = clone_state(prof, st)
    local view = copy[0]
    for _, p in ipairs(add) do
      C.ls_node_info_add_pod(copy, p)
      run_extension(prof, "add_pod", st2, pod, p, view)
    end
    return prof.filter_one(cycle, st2, pod, view, st_out, prof.skip)
  end)
  C.ls_node_info_free(copy)
  if not ok then error(fits, 0) end
  if not fits then return false end
  return prof.filter_one(cycle, st, pod, ni, st_out, prof.skip)
end

local NOMINATED_CAP = 64
local nominated_buf = ffi.new("ls_str[?]", NOMINATED_CAP)

-- The nodes where nominated pods count for `pod` (node id -> true; nodes
-- with nominated pods that do not count -> false), or nil when there are too
-- many nominated pods to list.
local function nominated_nodes_for(pod)
  local n = C.ls_cycle_nominated_nodes(cycle, nominated_buf, NOMINATED_CAP)
  if n > NOMINATED_CAP then return nil end
  local set, any = {}, false
  for i = 0, n - 1 do
    local id = nominated_buf[i]
    if set[id] == nil then
      local counts = nominated_for(pod, id) ~= nil
      set[id] = counts
      any = any or counts
    end
  end
  return set, any
end

-- Explain's trace row of the one node filtered (status id + 1, 1 = passed,
-- 0 = not run): the plugins before the one that rejected passed, PreFilter's
-- Skip leaves a plugin out.
local function trace_one(cyc, prof, ni, st_out, fits)
  local npl = cyc.num_filter_plugins
  local row = cyc.filter_trace + ni.index * npl
  local last = fits and npl or st_out.plugin
  for k = 0, last - 1 do
    row[k] = prof.skip[k + 1] and 0 or 1
  end
  if not fits and last >= 0 and last < npl then row[last] = st_out.status + 1 end
end

-- The Filter loop when some pods are nominated (after preemption): nodes
-- with nominated pods that count for the pod take filter_with_nominated, the
-- others the plain Filter (what filter_with_nominated does for them).
local function nominated_filter_loop(prof, cyc, st, pod)
  local set, any = nominated_nodes_for(pod)
  local sk = prof.skip
  if set ~= nil and not any then return prof.filter_loop(cyc, st, pod, sk) end
  local cand, ncand = cyc.candidates, cyc.num_candidates
  local start, want = cyc.start, cyc.num_to_find
  local statuses, filter_one = cyc.node_status, prof.filter_one
  local traced = cyc.trace ~= 0 and cyc.filter_trace ~= nil
  local nf, processed = 0, 0
  local at = start % ncand
  for _ = 0, ncand - 1 do
    local ni = cand[at][0]
    at = at + 1
    if at == ncand then at = 0 end
    processed = processed + 1
    local fits
    if set == nil or set[ni.node.name] then
      fits = filter_with_nominated(prof, st, pod, ni, statuses[ni.index])
    else
      fits = filter_one(cyc, st, pod, ni, statuses[ni.index], sk)
    end
    if traced then trace_one(cyc, prof, ni, statuses[ni.index], fits) end
    if fits then
      cyc.feasible[nf] = ni
      nf = nf + 1
      if nf >= want then break end
    end
  end
  cyc.num_feasible = nf
  cyc.num_processed = processed
end

-- ---- the framework handle plugins get (self.handle) ---------------------------

local Handle = {}
Handle.__index = Handle
Handle.__newindex = function(_, k) error("self.handle is read-only (assigning " .. tostring(k) .. ")", 2) end
Handle.__metatable = false
local prof_of = setmetatable({}, { __mode = "k" })   -- handle -> its profile (not reachable by plugins)

local scratch_status = ffi.new("ls_node_status")
local error_buf = ffi.new("char[512]")

--- Filter with nominated pods on any NodeInfo (a clone during preemption).
--- Returns true, or false and the failing status code and message.
function Handle:run_filter_with_nominated(st, pod, ni)
  local fits = filter_with_nominated(prof_of[self], st, pod, ni, scratch_status)
  if fits then return true end
  return false, scratch_status.code, ls_status_message(scratch_status.status)
end

function Handle:run_add_pod(st, pod, pod_to_add, ni)
  run_extension(prof_of[self], "add_pod", st, pod, pod_to_add, ni)
end

function Handle:run_remove_pod(st, pod, pod_to_remove, ni)
  run_extension(prof_of[self], "remove_pod", st, pod, pod_to_remove, ni)
end

function Handle:clone_state(st)
  return clone_state(prof_of[self], st)
end

--- A changeable copy of a NodeInfo (freed by the garbage collector).
-- The changeable NodeInfo behind each clone a plugin holds (read-only to it).
local clones = setmetatable({}, { __mode = "k" })

local function need(v, what)
  if v == nil then error("self.handle: " .. what .. " is nil", 3) end
  return v
end

function Handle:clone_node_info(ni)
  local copy = ffi.gc(C.ls_node_info_clone(need(ni, "clone_node_info: the node info")), C.ls_node_info_free)
  local view = copy[0]
  clones[view] = copy
  return view
end

local function clone_of(ni, what)
  local copy = clones[ni]
  if copy == nil then error("self.handle: " .. what .. ": the node info must come from clone_node_info", 3) end
  return copy
end

function Handle:add_pod_to(ni, pod)
  C.ls_node_info_add_pod(clone_of(ni, "add_pod_to"), need(pod, "add_pod_to: the pod"))
end
function Handle:remove_pod_from(ni, pod)
  return C.ls_node_info_remove_pod(clone_of(ni, "remove_pod_from"), need(pod, "remove_pod_from: the pod"))
end

--- The Filter verdict of a node in the failed cycle: its status code (nodes
--- outside a PreFilter restriction count as UnschedulableAndUnresolvable).
function Handle:node_code(ni)
  if prefilter_failure then return prefilter_failure end
  local idx = ni.index
  if candidate_set == nil then
    candidate_set = {}
    for i = 0, cycle.num_candidates - 1 do candidate_set[cycle.candidates[i].index] = true end
  end
  if not candidate_set[idx] then return UNRESOLVABLE end
  return cycle.node_status[idx].code
end

--- True while `pod`'s victims' deletions are being issued (async preemption).
function Handle:preempting(pod)
  return C.ls_cycle_preempting(cycle, pod)
end

--- Evicts `victim` to make room on `node_name` for the cycle's pod: its
--- deletion is issued after the scheduling cycle (async preemption).
function Handle:preempt(victim, node_name)
  need(victim, "preempt: the victim")
  if type(node_name) ~= "string" then error("self.handle: preempt: the node name must be a string", 2) end
  if current_hook ~= "post_filter" then error("self.handle: preempt is only allowed in PostFilter", 2) end
  if C.ls_cycle_preempt(cycle, victim, ls.intern(node_name), error_buf, 512) ~= 0 then
    return ffi.string(error_buf)
  end
  return nil
end

function Handle:nominated_pods(node_name)
  local id = type(node_name) == "string" and ls.intern(node_name) or node_name
  local i, n = -1, C.ls_cycle_nominated_count(cycle, id)
  return function()
    i = i + 1
    if i < n then return C.ls_cycle_nominated_pod(cycle, id, i)[0] end
  end
end

--- Every nominated pod (of every node) as a list, in node order then
--- nomination order; an empty list (shared, do not change it) when none.
local no_pods = setmetatable({}, {
  __newindex = function() error("self.handle: all_nominated_pods: the list is read-only", 2) end,
})
function Handle:all_nominated_pods()
  if C.ls_cycle_nominated_total(cycle) == 0 then return no_pods end
  local buf, n = nominated_buf, C.ls_cycle_nominated_nodes(cycle, nominated_buf, NOMINATED_CAP)
  if n > NOMINATED_CAP then
    buf = ffi.new("ls_str[?]", n)
    n = C.ls_cycle_nominated_nodes(cycle, buf, n)
  end
  local out, seen = {}, {}
  for i = 0, n - 1 do
    local id = buf[i]
    if not seen[id] then
      seen[id] = true
      for k = 0, C.ls_cycle_nominated_count(cycle, id) - 1 do
        out[#out + 1] = C.ls_cycle_nominated_pod(cycle, id, k)[0]
      end
    end
  end
  return out
end

function Handle:nominated_node_of(pod)
  local id = C.ls_cycle_nomination_of(cycle, need(pod, "nominated_node_of: the pod"))
  return id ~= 0 and ls.str(id) or nil
end

function Handle:clear_nomination(pod) C.ls_cycle_clear_nomination(cycle, need(pod, "clear_nomination: the pod")) end

--- A seeded random integer in [0, n).
function Handle:random(n)
  if type(n) ~= "number" or not (n >= 1 and n < 2 ^ 53) then
    error("self.handle: random: n must be a number from 1 to 2^53, got " .. tostring(n), 2)
  end
  return tonumber(C.ls_cycle_random(cycle) % math.floor(n))
end

local extender_violations = ffi.new("int64_t[1]")
local extender_victims = ffi.new("uint32_t[1]")

--- Whether an HTTP extender takes part in this pod's preemption.
function Handle:preempt_extenders_wanted()
  return C.ls_cycle_preempt_extenders(cycle) > 0
end

--- Preemption's extender step (upstream's callExtenders): `candidates` is a
--- list of { node = name id, violations = n, pods = { victim, ... } }; returns
--- the list the HTTP extenders left (same shape), or nil and the error.
function Handle:preempt_extenders(candidates)
  C.ls_cycle_extender_candidates_reset(cycle)
  for _, c in ipairs(candidates) do
    C.ls_cycle_extender_candidate_add(cycle, c.node, c.violations)
    for _, p in ipairs(c.pods) do C.ls_cycle_extender_victim_add(cycle, p) end
  end
  local n = C.ls_cycle_extenders_process_preemption(cycle, error_buf, 512)
  if n < 0 then return nil, ffi.string(error_buf) end
  local out = {}
  for i = 0, n - 1 do
    local node = C.ls_cycle_extender_candidate(cycle, i, extender_violations, extender_victims)
    local pods = {}
    for k = 0, extender_victims[0] - 1 do pods[k + 1] = C.ls_cycle_extender_victim(cycle, i, k) end
    out[i + 1] = { node = node, violations = tonumber(extender_violations[0]), pods = pods }
  end
  return out
end

-- Extension points whose plugins can reject a pod, so their events matter.
local REJECTING = { "pre_enqueue", "pre_filter", "filter", "reserve", "permit" }

local registrations, hints = {}, {}

local function register_events(prof, profile_index, seen)
  for _, hook in ipairs(REJECTING) do
    for _, inst in ipairs(prof.points[hook] or {}) do
      if not seen[inst.name] then
        seen[inst.name] = true
        local regs, err = events.check(plugin_of[inst])
        if not regs then return nil, err end
        for _, r in ipairs(regs) do
          local hint_id = 0
          if r.hint then
            hints[#hints + 1] = { fn = r.hint, inst = inst }
            hint_id = #hints
          end
          registrations[#registrations + 1] = {
            profile = profile_index, plugin = inst.name, resource = r.resource,
            actions = r.actions, hint = hint_id,
          }
        end
      end
    end
  end
  return true
end

--- Builds every profile's plugin instances. `specs[i]` = { name=, points =
--- { hook = { plugin names in run order } }, args = { Plugin = {...} } }.
--- Returns true, or nil and a message.
function M.build(specs)
  local built = {}
  registrations, hints = {}, {}
  for i, spec in ipairs(specs) do
    local prof = { name = spec.name, points = {}, instances = {}, given_args = spec.args or {} }
    for hook, names in pairs(spec.points) do
      local list = {}
      for _, name in ipairs(names) do
        local inst = prof.instances[name]
        if not inst then
          note("plugin %q (loading its file)", name)
          local P, err = loader.load(name)
          if not P then return nil, err end
          inst, err = instantiate(P, spec.args and spec.args[name], spec.name, spec.args_at and spec.args_at[name])
          if not inst then return nil, err end
          prof.instances[name] = inst
        end
        local implements = type(inst[hook]) == "function"
          or (hook == "sort_key" and type(inst.less) == "function")
        if not implements then
          return nil, string.format("plugin %q does not extend %s (no %s hook in %s)",
            name, hook, hook, tostring(inst.file))
        end
        list[#list + 1] = inst
      end
      prof.points[hook] = list
    end
    compile_loops(prof, i)
    prof.handle = setmetatable({}, Handle)
    prof_of[prof.handle] = prof
    sandbox.mark_frozen(prof.handle, "self.handle")
    for _, inst in pairs(prof.instances) do inst.handle = prof.handle end
    local ok, err = register_events(prof, i - 1, {})
    if not ok then return nil, err end
    built[i] = prof
  end
  profiles = built
  return true
end

--- Per profile (a list in profile order), plugin name -> its args completed
--- with the plugin's declared defaults (ls.merge_args), for --write-config-to:
--- every plugin of the profile, and every plugin its pluginConfig names (as
--- given when the plugin cannot be loaded). Call after M.build.
function M.completed_args()
  local out = {}
  for i, prof in ipairs(profiles) do
    local t, given = {}, prof.given_args
    for name, inst in pairs(prof.instances) do
      t[name] = ls.merge_args(plugin_of[inst].defaults, given[name])
    end
    for name, args in pairs(given) do
      if t[name] == nil then
        local P = loader.load(name)
        t[name] = P and ls.merge_args(P.defaults, args) or args
      end
    end
    out[i] = t
  end
  return out
end

-- Extension point hooks in run order (the order C lists them in a spec).
local POINT_HOOKS = {
  "pre_enqueue", "sort_key", "pre_filter", "filter", "post_filter", "pre_score", "score",
  "reserve", "permit", "pre_bind", "bind", "post_bind",
}

-- Every problem of one plugin of a profile: loading, init with the
-- profile's args, its events table, a hook missing at a point it is listed at.
local function check_plugin(spec, label, name, problems)
  local function add(msg) problems[#problems + 1] = "profile " .. label .. ": " .. msg end
  note("plugin %q (loading its file)", name)
  local P, err = loader.load(name)
  if not P then return add(err) end
  local inst, ierr = instantiate(P, spec.args and spec.args[name], spec.name, spec.args_at and spec.args_at[name])
  if not inst then add(ierr) end
  local regs, eerr = events.check(P)
  if not regs then add(eerr) end
  for _, hook in ipairs(POINT_HOOKS) do
    for _, listed in ipairs(spec.points[hook] or {}) do
      if listed == name and type(P[hook]) ~= "function" then
        add(string.format("plugin %q does not extend %s (no %s hook in %s)", name, hook, hook, tostring(P.file)))
      end
    end
  end
end

--- `luasched check`: the specs M.build takes, but every plugin of every
--- profile is checked and the result is the list of problems (strings, each
--- naming its profile), empty when all is well. Nothing is kept.
function M.check(specs)
  local problems = {}
  for i, spec in ipairs(specs) do
    -- a profile without a name (already a problem of the file) goes by its index
    local label = spec.name ~= "" and spec.name or string.format("profiles[%d]", i - 1)
    local seen = {}
    for _, hook in ipairs(POINT_HOOKS) do
      for _, name in ipairs(spec.points[hook] or {}) do
        if not seen[name] then
          seen[name] = true
          check_plugin(spec, label, name, problems)
        end
      end
    end
  end
  return problems
end

-- ---- errors -------------------------------------------------------------

-- A message that does not name the running plugin's file (a value the
-- runtime rejected after the hook returned) gets the hook's own file:line.
local function attributed(msg)
  local inst = current
  if not inst or not inst.file or msg:find(inst.file, 1, true) then return msg end
  local fn = current_hook and inst[current_hook]
  if type(fn) ~= "function" then return msg .. " (in " .. inst.file .. ")" end
  local info = debug.getinfo(fn, "S")
  return msg .. " (" .. info.short_src .. ":" .. info.linedefined .. ")"
end

local function fail_with(msg)
  local st = ls.error(msg)
  cycle.status = st.id
  cycle.status_code = ERROR
  return ERROR
end

-- A plugin raised, returned a wrong value, or broke a rule: the message
-- names its file and line.
local function fail_located(fmt, ...)
  return fail_with(attributed(string.format(fmt, ...)))
end

-- A plugin returned an Error status: its own message, as upstream words it.
local function fail(fmt, ...)
  local msg = string.format(fmt, ...)
  local st = ls.error(msg)
  cycle.status = st.id
  cycle.status_code = ERROR
  return ERROR
end

local function bad_return(hook, got)
  error(string.format("%s returned a %s, expected a status (ls.unschedulable(...), ...) or nil",
    hook, type(got)), 0)
end

local function set_status(st, plugin_index)
  cycle.status = st.id
  cycle.status_code = st.code
  cycle.status_plugin = plugin_index
  return st.code
end

local function clear_status()
  cycle.status = 0
  cycle.status_code = SUCCESS
  cycle.status_plugin = -1
end

-- ---- queue side -----------------------------------------------------------

function M.pre_enqueue(pi, pod_ptr)
  clear_status()
  current_hook = "pre_enqueue"
  local pod = ffi.cast("const ls_pod *", pod_ptr)[0]
  local list = profiles[pi + 1].points.pre_enqueue
  if not list then return SUCCESS end
  for k = 1, #list do
    current = list[k]
    cycle.running_plugin = k - 1
    local ok, st = pcall(current.pre_enqueue, current, pod)
    if not ok then return fail_located("running PreEnqueue plugin %q: %s", current.name, describe(st)) end
    if st ~= nil then
      if not is_status(st) then
        return fail_located("running PreEnqueue plugin %q: %s", current.name,
          "pre_enqueue returned a " .. type(st) .. ", expected a status or nil")
      end
      if st.code ~= SUCCESS then return set_status(st, k - 1) end
    end
  end
  return SUCCESS
end

--- Whether the queue-sort plugin orders with less(a, b) rather than a numeric key.
function M.sort_uses_less()
  local prof = profiles[1]
  local inst = prof and prof.points.sort_key and prof.points.sort_key[1]
  return inst ~= nil and type(inst.sort_key) ~= "function" and type(inst.less) == "function"
end

--- The queue-sort plugin's less(a, b).
function M.less(pi, a_ptr, b_ptr)
  local inst = profiles[pi + 1].points.sort_key[1]
  current, current_hook = inst, "less"
  note_text(inst, "less")
  local ok, r = pcall(inst.less, inst, ffi.cast("const ls_pod *", a_ptr)[0], ffi.cast("const ls_pod *", b_ptr)[0])
  return ok and r == true
end

--- Numeric sort key of a pod for the queue-sort plugin (higher first).
function M.sort_key(pi, pod_ptr)
  local list = profiles[pi + 1].points.sort_key
  if not list or not list[1] then return 0 end
  local pod = ffi.cast("const ls_pod *", pod_ptr)[0]
  if type(list[1].sort_key) ~= "function" then return 0 end
  note_text(list[1], "sort_key")
  local ok, v = pcall(list[1].sort_key, list[1], pod)
  v = ok and tonumber(v) or 0
  if v ~= v or v == math.huge or v == -math.huge then return 0 end
  return v
end

-- ---- PreFilter --------------------------------------------------------------

local function restrict(names)
  -- Intersect the cycle's node-name restriction with this plugin's names.
  local ids = {}
  for _, n in ipairs(names) do
    local id = type(n) == "string" and ls.intern(n) or tonumber(n)
    if id == nil or id ~= id or id < 1 or id % 1 ~= 0 or id >= 2 ^ 32 then
      error("pre_filter returned a node name that is neither a string nor a string id: " .. describe(n), 0)
    end
    ids[id] = true
  end
  if cycle.prefilter_restricts == 0 then
    local count = 0
    for _ in pairs(ids) do count = count + 1 end
    C.ls_cycle_prefilter_reserve(cycle, count)
    local out = cycle.prefilter_nodes
    local j = 0
    for id in pairs(ids) do out[j] = id; j = j + 1 end
    cycle.num_prefilter_nodes = j
    cycle.prefilter_restricts = 1
  else
    local out, j = cycle.prefilter_nodes, 0
    for i = 0, cycle.num_prefilter_nodes - 1 do
      if ids[tonumber(out[i])] then out[j] = out[i]; j = j + 1 end
    end
    cycle.num_prefilter_nodes = j
  end
end

-- The plugins that restricted the node names, sorted (upstream lists a set:
-- sets.List), as "[A B]".
local function plugin_list(restricting)
  local names = {}
  for i = 1, #restricting do names[i] = restricting[i] end
  table.sort(names)
  return "[" .. table.concat(names, " ") .. "]"
end

-- The status of an empty intersection of PreFilter node names.
local function unsatisfied(restricting)
  if #restricting == 1 then
    return ls.unresolvable("node(s) didn't satisfy plugin " .. restricting[1])
  end
  return ls.unresolvable("node(s) didn't satisfy plugin(s) " .. plugin_list(restricting) .. " simultaneously")
end

local function run_pre_filter(list, pod, restricting)
  local rejected
  for k = 1, #list do
    local inst = list[k]
    current = inst
    cycle.running_plugin = k - 1
    local t0 = sampling and timing.now()
    local st, names = inst:pre_filter(state, pod)
    if st ~= nil and not is_status(st) then bad_return("pre_filter", st) end
    local code = st and st.code or SUCCESS
    if sampling then timing.observe(C.LS_EP_PRE_FILTER, k - 1, code, timing.now() - t0) end
    if code == SKIP then
      local fk = cycle_profile.filter_index[inst.name]
      if fk then cycle_profile.skip[fk] = true end
    elseif code == SUCCESS then
      if names ~= nil then
        if type(names) ~= "table" then
          error("pre_filter returned node names as a " .. type(names) .. ", expected a list", 0)
        end
        restricting[#restricting + 1] = inst.name
        cycle.prefilter_restricting = bit.bor(cycle.prefilter_restricting, bit.lshift(1, k - 1))
        restrict(names)
        if cycle.num_prefilter_nodes == 0 then
          -- upstream returns at once: later plugins do not run, and this
          -- wins over an earlier plugin's Unschedulable
          return unsatisfied(restricting), -1
        end
      end
    elseif code == UNRESOLVABLE then
      return st, k - 1
    elseif code == UNSCHED or code == PENDING then
      rejected = rejected or { st, k - 1 }
    elseif code == ERROR then
      error(st.message, 0)   -- upstream: "running PreFilter plugin %q: <the error>"
    else
      error("pre_filter returned status " .. ls.code_names[code] .. ", which PreFilter cannot return", 0)
    end
  end
  if rejected then return rejected[1], rejected[2] end
  return nil
end

--- Starts the cycle's state and runs PreFilter. The node-name restriction is
--- left in cycle.prefilter_*; an empty intersection is Unresolvable.
function M.pre_filter(pi)
  clear_status()
  current_hook = "pre_filter"
  state = {}
  skip_score = {}
  local prof = profiles[pi + 1]
  local sk = prof.skip
  for k in pairs(sk) do sk[k] = nil end
  cycle_profile = prof
  prefilter_failure = nil
  candidate_set = nil
  cycle.prefilter_restricts = 0
  cycle.num_prefilter_nodes = 0
  cycle.prefilter_restricting = 0
  local list = profiles[pi + 1].points.pre_filter
  if not list then return SUCCESS end
  local restricting = {}
  sampling = cycle.sample_plugins ~= 0
  local ok, st, idx = pcall(run_pre_filter, list, cycle.pod[0], restricting)
  if sampling then timing.flush(cycle) end
  if not ok then return fail_located("running PreFilter plugin %q: %s", current.name, describe(st)) end
  if st then
    prefilter_failure = st.code
    return set_status(st, idx)
  end
  if cycle.prefilter_restricts ~= 0 then
    cycle.prefilter_absent_status = ls.unresolvable(
      "node(s) didn't satisfy plugin(s) " .. plugin_list(restricting)).id
  end
  return SUCCESS
end

-- ---- Filter -----------------------------------------------------------------

checked_filter_status = function(st)
  if not is_status(st) then bad_return("filter", st) end
  local code = st.code
  if code ~= SUCCESS and code ~= UNSCHED and code ~= UNRESOLVABLE and code ~= PENDING then
    error("filter returned status " .. ls.code_names[code] .. ": " .. st.message, 0)
  end
  return code
end

local function filter_failure(prof, err)
  local inst = (prof.points.filter or {})[cycle.running_plugin + 1]
  current, current_hook = inst, "filter"
  return fail_located("running %q filter plugin: %s", inst and inst.name or "?", describe(err))
end

--- Runs the Filter plugins over the cycle's candidates (see ls_cycle).
function M.filter(pi)
  clear_status()
  local prof = profiles[pi + 1]
  local ok, err
  if C.ls_cycle_nominated_total(cycle) > 0 then
    ok, err = pcall(nominated_filter_loop, prof, cycle, state, cycle.pod[0])
  elseif cycle.sample_plugins ~= 0 then
    ok, err = pcall(prof.filter_loop_timed, cycle, state, cycle.pod[0], prof.skip)
    timing.flush(cycle)
  else
    ok, err = pcall(prof.filter_loop, cycle, state, cycle.pod[0], prof.skip)
  end
  if not ok then return filter_failure(prof, err) end
  return SUCCESS
end

--- Filter on one node: the nominated-node fast path (traced for explain).
function M.filter_one(pi, ni_ptr)
  clear_status()
  local prof = profiles[pi + 1]
  local ni = ffi.cast("const ls_node_info *", ni_ptr)[0]
  local st_out = cycle.node_status[ni.index]
  local ok, fits = pcall(filter_with_nominated, prof, state, cycle.pod[0], ni, st_out)
  if not ok then return filter_failure(prof, fits) end
  if cycle.trace ~= 0 and cycle.filter_trace ~= nil then trace_one(cycle, prof, ni, st_out, fits) end
  return fits and SUCCESS or UNSCHED
end

-- ---- PostFilter -------------------------------------------------------------

function M.post_filter(pi)
  clear_status()
  current_hook = "post_filter"
  cycle.nominated_node = 0
  local list = profiles[pi + 1].points.post_filter
  if not list then return UNSCHED end
  -- upstream: the Unschedulable reasons of every PostFilter plugin, in order
  -- (RunPostFilterPlugins); the status keeps the last plugin, as before.
  local reasons, contributors, last = {}, {}, nil
  for k = 1, #list do
    current = list[k]
    cycle.running_plugin = k - 1
    local t0 = cycle.sample_plugins ~= 0 and timing.now()
    local ok, st, nominated = pcall(current.post_filter, current, state, cycle.pod[0])
    if t0 then
      timing.observe(C.LS_EP_POST_FILTER, k - 1, ok and is_status(st) and st.code or (ok and UNSCHED or ERROR),
        timing.now() - t0)
      timing.flush(cycle)
    end
    if not ok then return fail_located("running PostFilter plugin %q: %s", current.name, describe(st)) end
    if st ~= nil and not is_status(st) then
      return fail_located("running PostFilter plugin %q: %s", current.name,
        "post_filter returned a " .. type(st) .. ", expected a status or nil")
    end
    local code = st and st.code or SUCCESS
    if code == SUCCESS or code == UNRESOLVABLE then
      if nominated then cycle.nominated_node = ls.intern(nominated) end
      if st then set_status(st, k - 1) end
      return code
    elseif code == ERROR and st.message ~= "" then
      -- upstream wraps the plugin's error: running PostFilter plugin "X": <its message>
      return fail("running PostFilter plugin %q: %s", current.name, st.message)
    elseif code ~= UNSCHED then
      return fail_located("running PostFilter plugin %q: returned %s", current.name, ls.code_names[code])
    end
    last = k - 1
    if #st.reasons > 0 then
      contributors[#contributors + 1] = st
      for _, r in ipairs(st.reasons) do reasons[#reasons + 1] = r end
    end
  end
  local joined = #contributors == 1 and contributors[1] or ls.status(UNSCHED, unpack(reasons))
  set_status(joined, last)
  return UNSCHED
end

-- ---- PreScore, Score, NormalizeScore ----------------------------------------

local function run_pre_score(list, pod, nodes, n)
  for k = 1, #list do
    local inst = list[k]
    current = inst
    cycle.running_plugin = k - 1
    local t0 = sampling and timing.now()
    local st = inst:pre_score(state, pod, nodes, n)
    if sampling then timing.observe(C.LS_EP_PRE_SCORE, k - 1, st and st.code or SUCCESS, timing.now() - t0) end
    if st ~= nil then
      if not is_status(st) then bad_return("pre_score", st) end
      if st.code == SKIP then
        skip_score[inst.name] = true
      elseif st.code ~= SUCCESS then
        error("pre_score returned " .. ls.code_names[st.code] .. ": " .. st.message, 0)
      end
    end
  end
end

function M.pre_score(pi)
  clear_status()
  current_hook = "pre_score"
  local list = profiles[pi + 1].points.pre_score
  if not list then return SUCCESS end
  sampling = cycle.sample_plugins ~= 0
  local n = cycle.num_feasible
  local nodes = node_list(cycle.feasible, n)
  local ok, err = pcall(run_pre_score, list, cycle.pod[0], nodes, n)
  if sampling then timing.flush(cycle) end
  if not ok then return fail_located("running PreScore plugin %q: %s", current.name, describe(err)) end
  return SUCCESS
end

local INT64_MAX = 0x7fffffffffffffffLL

-- A score that is not a plain integer number (see loops.lua): an int64 or a
-- uint64 cdata within int64 is taken, anything else raises naming the value.
-- A value NormalizeScore stores: an integer within int64 (as Score's).
score_value = function(s)
  if type(s) ~= "number" or s % 1 ~= 0 or s >= 0x1p63 or s < -0x1p63 then return to_score(s) end
  return s
end

node_list = views.maker("const ls_node_info *const *", true)
score_list = views.maker("int64_t *", false, score_value)

to_score = function(s)
  if ffi.istype("int64_t", s) then return s end
  if ffi.istype("uint64_t", s) and s <= INT64_MAX then return s end
  local t = type(s)
  local text = (t == "number" or t == "cdata" or t == "boolean") and tostring(s) or describe(s)
  if t == "string" then text = string.format("%q", s) end
  error("score returned " .. text .. " (a " .. t .. "), expected an integer within int64", 0)
end

local function run_scores(list, score_loops, cyc, pod)
  local nodes, n = cyc.feasible, cyc.num_feasible
  local scores, skipped = cyc.scores, cyc.score_skipped
  for p = 1, #list do
    local inst = list[p]
    current, current_hook = inst, "score"
    cyc.running_plugin = p - 1
    if skip_score[inst.name] then
      skipped[p - 1] = 1
      for i = 0, n - 1 do scores[(p - 1) * n + i] = 0 end
    else
      skipped[p - 1] = 0
      score_loops[p](state, pod, nodes, n, scores, (p - 1) * n)
    end
  end
  if cyc.trace ~= 0 then ffi.copy(cyc.raw_scores, scores, #list * n * 8) end
  for p = 1, #list do
    local inst = list[p]
    current, current_hook = inst, "normalize_score"
    cyc.running_plugin = p - 1
    if skipped[p - 1] == 0 and inst.normalize_score then
      local t0 = sampling and timing.now()
      local st = inst:normalize_score(state, pod, score_list(scores + (p - 1) * n, n), node_list(nodes, n), n)
      if sampling then timing.observe(C.LS_EP_COUNT, p - 1, st and st.code or SUCCESS, timing.now() - t0) end
      if st ~= nil then
        if not is_status(st) then bad_return("normalize_score", st) end
        if st.code ~= SUCCESS then
          error("normalize_score returned " .. ls.code_names[st.code] .. ": " .. st.message, 0)
        end
      end
    end
  end
end

--- Score and NormalizeScore for every score plugin; C weights and sums.
function M.score(pi)
  clear_status()
  local prof = profiles[pi + 1]
  local list = prof.points.score
  if not list then return SUCCESS end
  sampling = cycle.sample_plugins ~= 0
  local ok, err = pcall(run_scores, list, sampling and prof.score_loops_timed or prof.score_loops, cycle, cycle.pod[0])
  if sampling then timing.flush(cycle) end
  if not ok then return fail_located("running Score plugin %q: %s", current.name, describe(err)) end
  return SUCCESS
end

-- ---- Reserve, Permit, binding cycle -----------------------------------------

local function node_name()
  return ls.str(cycle.selected_node)
end

local function run_simple(pi, hook, label, allowed)
  clear_status()
  current_hook = hook
  local list = profiles[pi + 1].points[hook]
  if not list then return SUCCESS end
  local pod, node = cycle.pod[0], node_name()
  sampling = cycle.sample_plugins ~= 0
  for k = 1, #list do
    current = list[k]
    cycle.running_plugin = k - 1
    local t0 = sampling and timing.now()
    ls._allow_bind(hook == "bind")
    local ok, st = pcall(current[hook], current, state, pod, node)
    ls._allow_bind(false)
    if sampling then
      timing.observe(EP_OF_HOOK[hook], k - 1, ok and is_status(st) and st.code or (ok and SUCCESS or ERROR),
        timing.now() - t0)
      timing.flush(cycle)
    end
    if not ok then return fail_located("running %s plugin %q: %s", label, current.name, describe(st)) end
    if st ~= nil then
      if not is_status(st) then
        return fail_located("running %s plugin %q: %s returned a %s, expected a status or nil",
          label, current.name, hook, type(st))
      end
      if st.code ~= SUCCESS then
        if st.code == ERROR then
          -- upstream: fmt.Errorf("running %s plugin %q: %w", ...)
          return fail("running %s plugin %q: %s", label, current.name, st.message)
        end
        if not allowed[st.code] then
          return fail_located("running %s plugin %q: returned %s: %s", label, current.name,
            ls.code_names[st.code], st.message)
        end
        if hook ~= "bind" or st.code ~= SKIP then return set_status(st, k - 1) end
      elseif hook == "bind" then
        return SUCCESS
      end
    elseif hook == "bind" then
      return SUCCESS
    end
  end
  if hook == "bind" then return set_status(ls.skip, -1) end
  return SUCCESS
end

local rejections = { [UNSCHED] = true, [UNRESOLVABLE] = true, [PENDING] = true }

function M.reserve(pi) return run_simple(pi, "reserve", "Reserve", rejections) end
-- PreBind may also Wait (VolumeBinding waiting for its claims to be bound):
-- the binding cycle resumes at PreBind on the next object change or poll.
local pre_bind_results = { [UNSCHED] = true, [UNRESOLVABLE] = true, [PENDING] = true, [WAIT] = true }
function M.pre_bind(pi) return run_simple(pi, "pre_bind", "PreBind", pre_bind_results) end

--- PreBindPreFlight (upstream v1.35+): SUCCESS when some PreBind plugin has
--- work for this pod (then status.nominatedNodeName is set for the binding),
--- SKIP when every one's `pre_bind_pre_flight` says ls.skip. A plugin without
--- the hook counts as having work; an error in it too (the binding goes on).
function M.pre_bind_pre_flight(pi)
  clear_status()
  current_hook = "pre_bind_pre_flight"
  local list = profiles[pi + 1].points.pre_bind
  if not list then return SKIP end
  local pod, node = cycle.pod[0], node_name()
  for k = 1, #list do
    current = list[k]
    local fn = current.pre_bind_pre_flight
    if type(fn) ~= "function" then return SUCCESS end
    cycle.running_plugin = k - 1
    local ok, st = pcall(fn, current, state, pod, node)
    if not ok or not (is_status(st) and st.code == SKIP) then return SUCCESS end
  end
  return SKIP
end
function M.bind(pi) return run_simple(pi, "bind", "Bind", { [SKIP] = true }) end

--- Unreserve runs on every Reserve plugin, in reverse order, errors logged only.
function M.unreserve(pi)
  local list = profiles[pi + 1].points.reserve
  if not list then return SUCCESS end
  local pod, node = cycle.pod[0], node_name()
  for k = #list, 1, -1 do
    local inst = list[k]
    if inst.unreserve then pcall(inst.unreserve, inst, state, pod, node) end
  end
  return SUCCESS
end

function M.permit(pi)
  clear_status()
  current_hook = "permit"
  cycle.num_waiting_plugins = 0
  local list = profiles[pi + 1].points.permit
  if not list then return SUCCESS end
  local pod, node = cycle.pod[0], node_name()
  for k = 1, #list do
    current = list[k]
    cycle.running_plugin = k - 1
    local t0 = cycle.sample_plugins ~= 0 and timing.now()
    local ok, st = pcall(current.permit, current, state, pod, node)
    if t0 then
      timing.observe(C.LS_EP_PERMIT, k - 1, ok and is_status(st) and st.code or (ok and SUCCESS or ERROR),
        timing.now() - t0)
      timing.flush(cycle)
    end
    if not ok then return fail_located("running Permit plugin %q: %s", current.name, describe(st)) end
    if st ~= nil then
      if not is_status(st) then
        return fail_located("running Permit plugin %q: permit returned a %s", current.name, type(st))
      end
      if st.code == WAIT then
        local n = cycle.num_waiting_plugins
        if n >= C.LS_MAX_WAITING_PLUGINS then
          return fail("running Permit plugin %q: more than %d plugins made the pod wait", current.name, n)
        end
        -- upstream caps a Permit wait at 15 minutes
        cycle.waiting_plugins[n] = ls.intern(current.name)
        cycle.waiting_timeout_ms[n] = math.min((st.timeout or 0) * 1000, 15 * 60 * 1000)
        cycle.num_waiting_plugins = n + 1
      elseif rejections[st.code] then
        return set_status(st, k - 1)
      elseif st.code ~= SUCCESS then
        return fail_located("running Permit plugin %q: returned %s", current.name, ls.code_names[st.code])
      end
    end
  end
  if cycle.num_waiting_plugins > 0 then
    cycle.status_code = WAIT
    return WAIT
  end
  return SUCCESS
end

-- A waiting pod keeps its CycleState until its binding cycle resumes.
local parked = {}

function M.park(pod_id)
  parked[pod_id] = state
end

function M.resume(pod_id)
  state = parked[pod_id] or {}
  parked[pod_id] = nil
end

function M.post_bind(pi)
  local list = profiles[pi + 1].points.post_bind
  if not list then return SUCCESS end
  local pod, node = cycle.pod[0], node_name()
  local sampled = cycle.sample_plugins ~= 0
  for k = 1, #list do
    local inst = list[k]
    local t0 = sampled and timing.now()
    pcall(inst.post_bind, inst, state, pod, node)
    if sampled then timing.observe(C.LS_EP_POST_BIND, k - 1, SUCCESS, timing.now() - t0) end
  end
  if sampled then timing.flush(cycle) end
  return SUCCESS
end

--- Every profile's event registrations: a list of { profile (0-based),
--- plugin, resource, actions = { names }, hint (0 = none) }.
function M.registrations()
  return registrations
end

local hint_errors = 0

--- Runs queueing hint `id` for a pod and an event: 1 (Queue) or 0 (Skip).
--- An error, or a result that is neither ls.QUEUE nor ls.QUEUE_SKIP, counts as
--- Queue and is logged, as upstream treats a hint error.
function M.hint(id, pod_ptr, ev_ptr)
  local h = hints[id]
  if not h then return ls.QUEUE end
  local fn = h.fn
  note("queueing hint %d", id)
  local pod = ffi.cast("const ls_pod *", pod_ptr)[0]
  local ev = ffi.cast("const ls_cluster_event *", ev_ptr)
  local old, new = events.objects(ev)
  local ok, r = pcall(fn, pod, old, new, h.inst)
  if ok and (r == ls.QUEUE or r == ls.QUEUE_SKIP) then return r end
  hint_errors = hint_errors + 1
  local info = debug.getinfo(fn, "S")
  io.stderr:write(string.format("luasched: queueing hint at %s:%d failed (the pod is queued): %s\n",
    info.short_src, info.linedefined, ok and ("returned " .. describe(r) .. ", expected ls.QUEUE or ls.QUEUE_SKIP")
    or describe(r)))
  return 2   -- LS_HINT_FAILED: Queue, counted by the runtime
end

--- The files of the loaded plugins, for the hot-reload watcher.
function M.plugin_files()
  return loader.files()
end

function M.hint_errors()
  return hint_errors
end

--- Memory in use by this Lua state, in bytes (for metrics and budgets).
function M.memory()
  return collectgarbage("count") * 1024
end

return M
