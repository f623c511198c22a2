-- luasched.dispatch: the extension-point runners, the Lua side of the
-- framework. C calls one function here per extension point per pod; the
-- loops over nodes run here, call each plugin's hook, and write statuses and
-- scores into the ls_cycle arrays. It is also the one module C loads: the
-- profile assembly (profiles.lua) and the framework handle (handle.lua) are
-- reached through it.
--
-- Every entry point returns an upstream status code. A plugin error (raise,
-- wrong return type, budget overrun) becomes an Error status in the one idiom
-- `running <Point> plugin "<name>": <file:line>: <message>` (Filter's, as
-- upstream words it, `running "<name>" filter plugin: ...`).
-- The sandbox (sandbox.lua), the views (views.lua), args (args.lua), the
-- loops (loops.lua), profile assembly (profiles.lua) and the handle
-- (handle.lua) are apart.
-- Over 800 lines: the one plugin-chain runner (run_chain, driven by the
-- extension-point table) and the points whose plugins return a result of
-- their own share this module's cycle, state, current plugin and status
-- helpers as upvalues the JIT keeps; split apart, each would take them
-- through every call.
local bit = require("bit")
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local loader = require("luasched.loader")
local timing = require("luasched.timing")
-- true while an extension point of a sampled cycle runs (plugin durations, metrics)
local sampling = false
local points = require("luasched.points")   -- the extension-point table, from C
local events = require("luasched.events")
local sandbox = require("luasched.sandbox")
local views = require("luasched.views")
local assembly = require("luasched.profiles")
local handle = require("luasched.handle")
local signing = require("luasched.sign")

local CODES = points.codes   -- the status codes, from framework.h through the table
local SUCCESS, ERROR, UNSCHED, UNRESOLVABLE = CODES.SUCCESS, CODES.ERROR, CODES.UNSCHEDULABLE, CODES.UNRESOLVABLE
local WAIT, SKIP, PENDING = CODES.WAIT, CODES.SKIP, CODES.PENDING
local ROW = points.rows     -- hook -> its row of the table (what run_chain needs to know)
local HINT_FAILED = C.LS_HINT_FAILED   -- a hint that failed: Queue, counted by the runtime
local is_status = ls.is_status
local table_clear = require("table.clear")

local M = {}

local note, note_text = assembly.note, assembly.note_text
local describe, locate = assembly.describe_error, assembly.locate_error
local name_of = assembly.name_of
M.note, M.describe_error, M.locate_error = note, describe, locate

local xpcall = xpcall
local function pcall(f, ...) return xpcall(f, locate, ...) end

local cycle          -- ls_cycle* shared with C for the process lifetime
local profiles = {}  -- [1-based] { name=, points = { hook = { inst... } }, weights = {} }
local state          -- the running cycle's CycleState table
local cycle_profile               -- the profile of the running cycle
local skip_score = {}   -- PreScore's Skip set of the running cycle
local restricting_names = {}   -- the PreFilter plugins that restricted the node names
local current        -- plugin instance running, for error attribution
local current_hook   -- the hook it runs (a key of the plugin table)

function M.init(cycle_ptr, plugin_dirs, builtin_dirs)
  -- A JIT trace log for performance work: LUASCHED_JIT_LOG=/tmp/jit.txt
  local jit_log = os.getenv("LUASCHED_JIT_LOG")
  if jit_log and jit_log ~= "" then require("jit.v").start(jit_log) end
  -- The traces' bytecode, IR and machine code: LUASCHED_JIT_DUMP=/tmp/dump.txt
  -- (LUASCHED_JIT_DUMP_MODE sets jit.dump's mode, default "tbirs": no machine code)
  local jit_dump = os.getenv("LUASCHED_JIT_DUMP")
  if jit_dump and jit_dump ~= "" then
    local mode = os.getenv("LUASCHED_JIT_DUMP_MODE")
    require("jit.dump").start((mode and mode ~= "") and mode or "tbirs", jit_dump)
  end
  -- A sampling profile (VM states and lines): LUASCHED_JIT_PROFILE=/tmp/prof.txt;
  -- LUASCHED_JIT_PROFILE_MODE sets jit.p's mode (default "vl2"; e.g. "F3" for
  -- functions with two callers)
  local jit_prof = os.getenv("LUASCHED_JIT_PROFILE")
  if jit_prof and jit_prof ~= "" then
    local mode = os.getenv("LUASCHED_JIT_PROFILE_MODE")
    require("jit.p").start((mode and mode ~= "") and mode or "vl2", jit_prof)
  end
  M.attach(cycle_ptr)
  loader.set_path(plugin_dirs, builtin_dirs)
  sandbox.lock_strings()
end

--- Makes `cycle_ptr` (an ls_cycle *) the cycle every runner reads and writes
--- (init does this; the test kit, lua/luasched/testing.lua, too, with its own).
function M.attach(cycle_ptr)
  cycle = ffi.cast("ls_cycle *", cycle_ptr)
  ls._attach(cycle)
  handle.attach(cycle, function() return current_hook end)
  ls._attach_running_plugin(M.running_plugin)
  views.attach(M.running_plugin, M.running_instance)
end

--- Starts a cycle's state as PreFilter does, without running PreFilter:
--- `given` is the CycleState (the test kit's, for a hook run alone).
function M.begin_cycle(given)
  state = given
  table_clear(skip_score)
  if profiles[1] then table_clear(profiles[1].skip) end
  handle.start_cycle()
end

M.hooks = assembly.hooks

local checked_filter_status   -- defined with the Filter code below
local to_score, score_value
local node_list, score_list   -- views of PreScore's nodes and NormalizeScore's scores

--- Builds every profile's plugin instances (see profiles.lua's build).
--- Returns true, or nil and a message.
function M.build(specs)
  local first = specs[1] or {}
  ls._set_profile(first.name, first.memory_limit)
  local built, err = assembly.build(specs, {
    new_handle = handle.new, filter_status = checked_filter_status, to_score = to_score,
  })
  if not built then return nil, err end
  profiles = built
  return true
end

--- Per profile, plugin name -> its completed args (see profiles.lua).
function M.completed_args(always)
  return assembly.completed_args(profiles, always)
end

M.check = assembly.check

-- ---- errors -------------------------------------------------------------

-- The hooks the generated loops run: the plugin is the list's entry at
-- cycle.running_plugin (the loops keep it current).
local LOOP_HOOKS = { filter = true, score = true }

--- Where plugin `name`'s hook `hook` is defined ("file:line"), nil when it
--- has none (the runtime's log of a cut-off call names it).
function M.hook_location(name, hook)
  local prof = profiles[1]
  local inst = prof and prof.instances[name]
  local fn = inst and inst[hook]
  fn = assembly.hook_source[fn] or fn
  if type(fn) ~= "function" then return nil end
  local info = debug.getinfo(fn, "S")
  return info.short_src .. ":" .. info.linedefined
end

--- The name of the plugin whose code runs now (nil outside a plugin's hook):
--- what ls.allow acts as, and what a view used after its call names.
--- The instance whose code runs now (nil outside a plugin's hook).
-- LS_EP_* -> the hook whose plugin list that row runs over (a handle's dry run).
local list_of_ep = {}
for _, row in pairs(points.rows) do list_of_ep[row.ep] = row.list end

function M.running_instance()
  local inst = current
  local nested = cycle ~= nil and cycle.handle_ep or 0
  if nested > 0 then   -- a handle runs another plugin (handle.lua's as_caller): that one runs
    local prof = profiles[1]
    local list = prof and prof.points[list_of_ep[nested - 1]]
    return list and list[cycle.running_plugin + 1] or nil
  end
  if LOOP_HOOKS[current_hook] then
    local prof = profiles[1]
    local list = prof and prof.points[current_hook]
    inst = list and list[cycle.running_plugin + 1] or nil
  end
  return inst
end

function M.running_plugin()
  local inst = M.running_instance()
  return inst and name_of[inst], current_hook
end

-- A message that does not name the running plugin's file (a value the
-- runtime rejected after the hook returned) gets the hook's own file:line.
local function attributed(msg)
  local inst = current
  if not inst or not inst.file or msg:find(inst.file, 1, true) then return msg end
  local fn = current_hook and inst[current_hook]
  fn = assembly.hook_source[fn] or fn   -- the plugin's own hook behind the test kit's recorder
  if type(fn) ~= "function" then return msg .. " (in " .. inst.file .. ")" end
  local info = debug.getinfo(fn, "S")
  return msg .. " (" .. info.short_src .. ":" .. info.linedefined .. ")"
end

-- Error statuses are kept for good (C's status registry): a plugin raising a
-- new megabyte message per attempt grew the process by a megabyte each time.
local MAX_ERROR = 2048
local function shortened(msg)
  if #msg <= MAX_ERROR then return msg end
  return msg:sub(1, MAX_ERROR) .. "... (" .. #msg .. " characters)"
end

local function fail_with(msg)
  local st = ls._runtime_error(shortened(msg))
  local trace = assembly.traceback_for(msg)
  if trace then C.ls_status_set_detail(st.id, trace) end
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
  local msg = shortened(string.format(fmt, ...))
  local st = ls._runtime_error(msg)
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

-- run_chain and the points it serves are below (Reserve, Permit, binding cycle).
local run_chain

function M.pre_enqueue(_, pod_ptr)
  return run_chain(ROW.pre_enqueue, nil, ffi.cast("const ls_pod *", pod_ptr)[0])
end

--- Whether the queue-sort plugin orders with less(a, b) rather than a numeric key.
function M.sort_uses_less()
  local prof = profiles[1]
  local inst = prof and prof.points.sort_key and prof.points.sort_key[1]
  return inst ~= nil and type(inst.sort_key) ~= "function" and type(inst.less) == "function"
end

-- A plugin's text on one log line: its line breaks shown as \n, so that an
-- error message cannot forge the scheduler's own log lines (an Unreserve's
-- error of two lines printed a "Plugin call cut off" line naming another
-- plugin: attacker round 3).
local LINE_BREAKS = { ["\n"] = "\\n", ["\r"] = "\\r" }
local function one_line(text)
  return (text:gsub("[\r\n]", LINE_BREAKS))
end

-- A queue sort's error orders the pods as "not less" (0 for a key): logged
-- with the plugin and file:line, once while the same text repeats (the queue
-- compares often).
local last_sort_error
local function sort_error(inst, hook, err)
  local text = string.format("luasched: running QueueSort plugin %q (%s): %s\n", name_of[inst], hook,
    one_line(shortened(attributed(describe(err)))))
  if text ~= last_sort_error then
    last_sort_error = text
    io.stderr:write(text)
  end
end

--- The queue-sort plugin's less(a, b).
function M.less(pi, a_ptr, b_ptr)
  local inst = profiles[pi + 1].points.sort_key[1]
  current, current_hook = inst, "less"
  note_text(inst, "less")
  local ok, r = pcall(inst.less, inst, ffi.cast("const ls_pod *", a_ptr)[0], ffi.cast("const ls_pod *", b_ptr)[0])
  if not ok then sort_error(inst, "less", r) end
  return ok and r == true
end

--- Numeric sort key of a pod for the queue-sort plugin (higher first).
function M.sort_key(pi, pod_ptr)
  local list = profiles[pi + 1].points.sort_key
  if not list or not list[1] then return 0 end
  local pod = ffi.cast("const ls_pod *", pod_ptr)[0]
  if type(list[1].sort_key) ~= "function" then return 0 end
  note_text(list[1], "sort_key")
  current, current_hook = list[1], "sort_key"
  local ok, v = pcall(list[1].sort_key, list[1], pod)
  if not ok then sort_error(list[1], "sort_key", v) end
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
      local fk = cycle_profile.filter_index[name_of[inst]]
      if fk then cycle_profile.skip[fk] = true end
    elseif code == SUCCESS then
      if names ~= nil then
        if type(names) ~= "table" then
          error("pre_filter returned node names as a " .. type(names) .. ", expected a list", 0)
        end
        restricting[#restricting + 1] = name_of[inst]
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

--- Starts the cycle's state (a new table, or `given_state`: the test kit's)
--- and runs PreFilter. The node-name restriction is left in
--- cycle.prefilter_*; an empty intersection is Unresolvable.
function M.pre_filter(pi, given_state)
  clear_status()
  current_hook = "pre_filter"
  state = given_state or {}
  table_clear(skip_score)   -- the runtime's own: kept, not made anew per pod
  local prof = profiles[pi + 1]
  local sk = prof.skip
  table_clear(sk)   -- compiled, where a loop here kept M.pre_filter interpreted
  cycle_profile = prof
  handle.start_cycle()
  cycle.prefilter_restricts = 0
  cycle.num_prefilter_nodes = 0
  cycle.prefilter_restricting = 0
  local list = profiles[pi + 1].points.pre_filter
  if not list then return SUCCESS end
  local restricting = restricting_names
  table_clear(restricting)
  sampling = cycle.sample_plugins ~= 0
  local ok, st, idx = pcall(run_pre_filter, list, cycle.pod[0], restricting)
  if sampling then timing.flush(cycle) end
  if not ok then return fail_located("running PreFilter plugin %q: %s", name_of[current], describe(st)) end
  if st then
    handle.prefilter_failed(st.code)
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
  return fail_located("running %q filter plugin: %s", inst and name_of[inst] or "?", describe(err))
end

--- Runs the Filter plugins over the cycle's candidates (see ls_cycle).
function M.filter(pi)
  clear_status()
  current_hook = "filter"
  local prof = profiles[pi + 1]
  local ok, err
  if C.ls_cycle_nominated_total(cycle) > 0 then
    ok, err = pcall(handle.nominated_filter_loop, prof, cycle, state, cycle.pod[0])
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
  current_hook = "filter"
  local prof = profiles[pi + 1]
  local ni = ffi.cast("const ls_node_info *", ni_ptr)[0]
  local st_out = cycle.node_status[ni.index]
  local ok, fits = pcall(handle.filter_with_nominated, prof, state, cycle.pod[0], ni, st_out)
  if not ok then return filter_failure(prof, fits) end
  if cycle.trace ~= 0 and cycle.filter_trace ~= nil then handle.trace_one(cycle, prof, ni, st_out, fits) end
  return fits and SUCCESS or UNSCHED
end

-- ---- Sign (OpportunisticBatching) ------------------------------------------------

--- The running cycle's pod's signature in profile pi, nil when the pod is
--- unsignable, false when every pod of the profile is.
-- A sign hook runs noted (a cut-off names the plugin, "sign" and its file:line)
-- and as the running plugin.
local function sign_pcall(f, inst, ...)
  current, current_hook = inst, "sign"
  note_text(inst, "sign")
  local ok, frag, why, every_pod = pcall(f, inst, ...)
  if not ok then   -- the pod is scheduled unbatched; the error is logged with the plugin and file:line
    io.stderr:write(string.format("luasched: running Sign plugin %q: %s (the pod is not batched)\n", name_of[inst],
      one_line(shortened(attributed(describe(frag))))))
  end
  return ok, frag, why, every_pod
end

function M.sign(pi)
  local sig, _, every_pod = signing.sign(profiles[pi + 1], cycle.pod[0], sign_pcall)
  if sig == nil and every_pod then return false end
  return sig
end

-- ---- PostFilter -------------------------------------------------------------

function M.post_filter(pi)
  clear_status()
  current_hook = "post_filter"
  cycle.nominated_node = 0
  local list = profiles[pi + 1].points.post_filter
  if not list then return UNSCHED end
  -- upstream's RunPostFilterPlugins: Success or UnschedulableAndUnresolvable
  -- ends the loop with that plugin's status, an Error ends it with the
  -- plugin's own message (AsStatus(s.AsError()), no wrapping), and the
  -- Unschedulable reasons of every plugin are joined in profile order into
  -- one status attributed to the first plugin that gave one. The FitError
  -- then appends that message after the nodes' one (" <msg>").
  local reasons, contributors, first = {}, {}, nil
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
    if not ok then return fail_located("running PostFilter plugin %q: %s", name_of[current], describe(st)) end
    if st ~= nil and not is_status(st) then
      return fail_located("running PostFilter plugin %q: %s", name_of[current],
        "post_filter returned a " .. type(st) .. ", expected a status or nil")
    end
    local code = st and st.code or SUCCESS
    if code == SUCCESS or code == UNRESOLVABLE then
      if nominated ~= nil and type(nominated) ~= "string" then
        return fail_located("running PostFilter plugin %q: post_filter returned a %s as the nominated node, " ..
          "expected a node name (a string) or nil", name_of[current], type(nominated))
      end
      if nominated then
        local iok, id = pcall(ls.intern, nominated)
        if not iok then
          return fail_located("running PostFilter plugin %q: its nominated node: %s", name_of[current], describe(id))
        end
        cycle.nominated_node = id
      end
      if st then set_status(st, k - 1) end
      return code
    elseif code == ERROR and st.message ~= "" then
      set_status(st, k - 1)
      return ERROR
    elseif code ~= UNSCHED then
      return fail_located("running PostFilter plugin %q: returned %s", name_of[current], ls.code_names[code])
    end
    first = first or k - 1
    if #st.reasons > 0 then
      contributors[#contributors + 1] = st
      for _, r in ipairs(st.reasons) do reasons[#reasons + 1] = r end
    end
  end
  local joined = #contributors == 1 and contributors[1] or ls.status(UNSCHED, unpack(reasons))
  set_status(joined, first)
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
        skip_score[name_of[inst]] = true
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
  if not ok then return fail_located("running PreScore plugin %q: %s", name_of[current], describe(err)) end
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
  -- the value itself when it prints safely (a table's __tostring is plugin
  -- code: never run here); a long string shortened
  local text
  if t == "number" or t == "cdata" or t == "boolean" or t == "nil" then text = tostring(s) .. " (a " .. t .. ")"
  elseif t == "string" then
    text = (#s > 64 and string.format("%q...", s:sub(1, 64)) or string.format("%q", s)) .. " (a string)"
  else text = "a " .. t end
  error("score returned " .. text .. ", expected an integer within int64", 0)
end

-- The Score plugins' loops (a generated chain, loops.score_chain) over the
-- feasible nodes from index `from` (0: all; the others' raw scores are in
-- place), then NormalizeScore over all of them for the plugins that have one
-- and were not skipped.
local function run_scores(prof, chain, cyc, pod, from)
  local list = prof.points.score
  local nodes, n = cyc.feasible, cyc.num_feasible
  local scores, skipped = cyc.scores, cyc.score_skipped
  current, current_hook = nil, "score"   -- the plugin: list[cycle.running_plugin + 1] if one fails
  chain(state, pod, cyc, nodes, n, scores, skipped, skip_score, from or 0)
  if cyc.trace ~= 0 or cyc.keep_raw_scores ~= 0 then ffi.copy(cyc.raw_scores, scores, #list * n * 8) end
  local normalizers = prof.normalizers
  for j = 1, #normalizers do
    local p = normalizers[j]
    local inst = list[p]
    current, current_hook = inst, "normalize_score"
    cyc.running_plugin = p - 1
    if skipped[p - 1] == 0 then
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
  local ok, err = pcall(run_scores, prof, sampling and prof.score_chain_timed or prof.score_chain, cycle, cycle.pod[0])
  if sampling then timing.flush(cycle) end
  if not ok then
    if current == nil then current = list[cycle.running_plugin + 1] end
    return fail_located("running Score plugin %q: %s", name_of[current], describe(err))
  end
  return SUCCESS
end

--- OpportunisticBatching's re-scoring (v1.37, upstream's rescoreHintedNode):
--- PreScore and Score for the last feasible node alone, the others' raw scores
--- put in cycle.scores by C, then NormalizeScore over all of them.
function M.rescore_last(pi)
  clear_status()
  local prof = profiles[pi + 1]
  local n = cycle.num_feasible
  local pre = prof.points.pre_score
  if pre then
    current_hook = "pre_score"
    local ok, err = pcall(run_pre_score, pre, cycle.pod[0], node_list(cycle.feasible + (n - 1), 1), 1)
    if not ok then
      fail_located("running PreScore plugin %q: %s", name_of[current], describe(err))
      return PENDING   -- told apart from a Score failure (batch flush reason)
    end
  end
  local list = prof.points.score
  if not list then return SUCCESS end
  local ok, err = pcall(run_scores, prof, prof.score_chain, cycle, cycle.pod[0], n - 1)
  if not ok then
    if current == nil then current = list[cycle.running_plugin + 1] end
    return fail_located("running Score plugin %q: %s", name_of[current], describe(err))
  end
  return SUCCESS
end

-- ---- the plugin-chain runner; Reserve, Permit, binding cycle ---------------

-- The one plugin-chain runner, driven by the row of the extension-point
-- table (core/include/luasched/extension_points.h, read by points.lua) for
-- every point but those whose plugins return a result of their own
-- (PreFilter's node names, PostFilter's nomination, PreScore's Skip set,
-- QueueSort's key) and the per-node loops generated by loops.lua. It runs the
-- row's hook of each plugin of its point's list (last to first for a reverse
-- row; a hook run over another point's list is optional), times it in a
-- sampled cycle, and answers with the framework's one error idiom:
--   running <Point> plugin "<name>": <file:line>: <message>
-- (a raise or a value that is not a status is located; an Error status keeps
-- the plugin's own message, as upstream's fmt.Errorf("running %s plugin %q:
-- %w")). A code outside the row's allowed ones is an Error "returned <code>".
-- An allowed code other than Success ends a stopping chain as the point's
-- status; a first-success chain (Bind) ends at the first Success and passes a
-- Skip on. `on_status(st, k, inst)`, when given, is the point's own word on
-- an allowed code first: true goes on, a code ends the chain with it.
-- Rows that log or ignore their plugins' failures leave the cycle's status
-- as it was (Unreserve runs after the failure it undoes).

-- Bind: the cluster decides. A pod the plugin bound is bound, whatever it did
-- next (before, an error after ls.bind requeued a bound pod); a success
-- without a binding would leave the pod assumed and never bound.
local function call_bind(fn, inst, a1, a2, a3)
  ls._allow_bind(true)
  local ok, st = pcall(fn, inst, a1, a2, a3)
  ls._allow_bind(false)
  if ls._bound() then return true, nil end
  if ok and (st == nil or (is_status(st) and st.code == SUCCESS)) then
    return false, "bind returned success, but the pod was not bound (ls.bind(node_name) binds it)"
  end
  return ok, st
end
local CALLS = { bind = call_bind }

-- A hook's lookup may run the plugin's own code (an __index on its plugin
-- table): it runs protected, once the plugin is the one named (attacker round 3).
local function hook_of(inst, hook)
  return inst[hook]
end

-- A plugin's failure (a raise, or a value that is not a status): the chain's
-- code, or nil when the row goes on.
local function chain_failure(row, inst, k, ok, st)
  local msg = ok and string.format("%s returned a %s, expected a status or nil", row.hook, type(st)) or describe(st)
  if row.logs_errors then
    io.stderr:write(string.format("luasched: running %s plugin %q: %s\n", row.name, name_of[inst],
      one_line(shortened(attributed(msg)))))
    return nil
  end
  fail_located("running %s plugin %q: %s", row.name, name_of[inst], msg)
  -- a queue-side plugin's error gates the pod under that plugin, as upstream files it
  if row.queue_side then cycle.status_plugin = k - 1 end
  return ERROR
end

-- A plugin's status other than Success: the chain's code, or nil to go on.
local function chain_status(row, on_status, inst, k, st)
  local code = st.code
  if code == ERROR then
    fail("running %s plugin %q: %s", row.name, name_of[inst], st.message)
    if row.queue_side then cycle.status_plugin = k - 1 end
    return ERROR
  end
  if not row.allowed[code] then
    return fail_located("running %s plugin %q: returned %s: %s", row.name, name_of[inst], ls.code_names[code],
      st.message)
  end
  local taken = on_status and on_status(st, k, inst)
  if taken == true or (row.first_success and code == SKIP) then return nil end
  if taken ~= nil then return taken end
  if row.stops then return set_status(st, k - 1) end
  return nil
end

run_chain = function(row, on_status, a1, a2, a3)
  local quiet = row.logs_errors
  if not quiet then clear_status() end
  current_hook = row.hook
  local list = profiles[1].points[row.list]
  if not list then return SUCCESS end
  local timed = false
  if not row.queue_side and not row.untimed then
    sampling = cycle.sample_plugins ~= 0
    timed = sampling
  end
  local hook, call = row.hook, CALLS[row.hook] or pcall
  local first, last, step = 1, #list, 1
  if row.reverse then first, last, step = #list, 1, -1 end
  for k = first, last, step do
    local inst = list[k]
    current = inst
    cycle.running_plugin = k - 1   -- a cut-off names it (in its hook's lookup too)
    local found, fn = pcall(hook_of, inst, hook)
    if not found then
      local code = chain_failure(row, inst, k, false, fn)
      if code ~= nil then return code end
    elseif fn ~= nil or not row.hook_optional then
      if row.queue_side then note_text(inst, hook) end   -- outside a cycle: a cut-off is attributed by the note
      local t0 = timed and timing.now()
      local ok, st = call(fn, inst, a1, a2, a3)
      if timed then   -- a quiet row's durations are filed as Success (PostBind has no status)
        local observed = quiet and SUCCESS or not ok and ERROR or is_status(st) and st.code or SUCCESS
        timing.observe(row.ep, k - 1, observed, timing.now() - t0)
        timing.flush(cycle)
      end
      local code
      if not ok or (not quiet and st ~= nil and not is_status(st)) then
        code = chain_failure(row, inst, k, ok, st)
      elseif not quiet and st ~= nil and st.code ~= SUCCESS then
        code = chain_status(row, on_status, inst, k, st)
      elseif row.first_success and not quiet then
        code = SUCCESS
      end
      if code ~= nil then return code end
    end
  end
  if row.first_success then return set_status(ls.skip, -1) end
  return SUCCESS
end

local function node_name()
  return ls.str(cycle.selected_node)
end

local function run_point(row, on_status)
  return run_chain(row, on_status, state, cycle.pod[0], node_name())
end

-- Every chain point without a function of its own below (Reserve, PreBind,
-- which may also Wait, Bind, Unreserve, PostBind, and a row added to the
-- table) is served by run_chain under its hook's name: generated at the end
-- of this module from the table.

--- PreBindPreFlight (upstream v1.35+): SUCCESS when some PreBind plugin has
--- work for this pod (then status.nominatedNodeName is set for the binding),
--- SKIP when every one's `pre_bind_pre_flight` says ls.skip. A plugin without
--- the hook counts as having work; an error in it too (the binding goes on).
function M.pre_bind_pre_flight()
  clear_status()
  current_hook = "pre_bind_pre_flight"
  local list = profiles[1].points.pre_bind
  if not list then return SKIP end
  local pod, node = cycle.pod[0], node_name()
  for k = 1, #list do
    current = list[k]
    local fn = current.pre_bind_pre_flight
    if type(fn) ~= "function" then return SUCCESS end
    cycle.running_plugin = k - 1
    local ok, st = pcall(fn, current, state, pod, node)
    if not ok then   -- the binding goes on; the error is logged with the plugin and file:line
      io.stderr:write(string.format("luasched: running PreBindPreFlight plugin %q: %s\n", name_of[current],
        one_line(shortened(attributed(describe(st))))))
    end
    if not ok or not (is_status(st) and st.code == SKIP) then return SUCCESS end
  end
  return SKIP
end

-- Permit's Wait: the plugin joins the pod's waiting plugins (upstream caps a
-- wait at 15 minutes) and the next plugin runs.
local function permit_wait(st, _, inst)
  if st.code ~= WAIT then return nil end
  local n = cycle.num_waiting_plugins
  if n >= C.LS_MAX_WAITING_PLUGINS then
    return fail("running Permit plugin %q: more than %d plugins made the pod wait", name_of[inst], n)
  end
  cycle.waiting_plugins[n] = ls.intern(name_of[inst])
  cycle.waiting_timeout_ms[n] = math.min((st.timeout or 0) * 1000, 15 * 60 * 1000)
  cycle.num_waiting_plugins = n + 1
  return true
end

function M.permit()
  cycle.num_waiting_plugins = 0
  local code = run_point(ROW.permit, permit_wait)
  if code == SUCCESS and cycle.num_waiting_plugins > 0 then
    cycle.status_code = WAIT
    return WAIT
  end
  return code
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

--- Every profile's event registrations: a list of { profile (0-based),
--- plugin, resource, actions = { names }, hint (0 = none) }.
function M.registrations()
  return assembly.registrations()
end

--- Runs queueing hint `id` for a pod and an event: 1 (Queue) or 0 (Skip).
--- An error, or a result that is neither ls.QUEUE nor ls.QUEUE_SKIP, counts as
--- Queue and is logged, as upstream treats a hint error.
-- What a cut-off of hint `id` names: its plugin and the hint's file:line
-- (made once per hint; before, "queueing hint 34").
local hint_notes = {}
local function hint_note(id, h)
  local text = hint_notes[id]
  if text == nil then
    local info = debug.getinfo(h.fn, "S")
    text = string.format("plugin %q (queueing hint at %s:%d)", tostring(h.inst and name_of[h.inst]),
      info.short_src, info.linedefined)
    hint_notes[id] = text
  end
  return text
end

-- A value a hint returned, as its error shows it (a table's __tostring is not run).
local function returned(r)
  local t = type(r)
  if t == "string" then return string.format("%q", #r > 64 and r:sub(1, 64) .. "..." or r) end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(r) end
  return "a " .. t
end

function M.hint(id, pod_ptr, ev_ptr)
  local h = assembly.hint(id)
  if not h then return ls.QUEUE end
  local fn = h.fn
  current, current_hook = h.inst, "hint"
  note("%s", hint_note(id, h))
  local pod = ffi.cast("const ls_pod *", pod_ptr)[0]
  if not h.inst.builtin then pod = views.pod_ref(pod) end   -- a reference that lives for this call only
  local ev = ffi.cast("const ls_cluster_event *", ev_ptr)
  local old, new = events.objects(ev, not h.inst.builtin)
  local ok, r = pcall(fn, pod, old, new, h.inst)
  if ok and (r == ls.QUEUE or r == ls.QUEUE_SKIP) then return r end
  local info = debug.getinfo(fn, "S")
  io.stderr:write(string.format("luasched: queueing hint at %s:%d failed (the pod is queued): %s\n",
    info.short_src, info.linedefined, one_line(ok and ("returned " .. returned(r) .. ", expected ls.QUEUE or " ..
    "ls.QUEUE_SKIP") or describe(r))))
  return HINT_FAILED   -- Queue, counted by the runtime
end

--- The files of the loaded plugins, for the hot-reload watcher.
function M.plugin_files()
  return loader.files()
end

--- Unreserve runs on every Reserve plugin, in reverse order, errors logged only.
--- With no CycleState the Lua state was rebuilt during this cycle (a cut-off):
--- the rebuilt instances reserved nothing, so there is nothing to undo; run,
--- they were handed nil and raised (VolumeBinding's Unreserve was logged as
--- failing after another plugin's PreBind was cut off: attacker round 3).
function M.unreserve()
  if state == nil then return SUCCESS end
  return run_point(ROW.unreserve)
end

-- The chain points' entry points, from the table: a row that is neither a
-- result point nor per node, and has no function of its own, is run_chain.
for hook, row in pairs(ROW) do
  if M[hook] == nil and not row.result and not row.per_node and not row.queue_side then
    M[hook] = function() return run_point(row) end
  end
end

return M
