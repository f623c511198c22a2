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
-- extension-point table), the handlers of the points whose plugins return a
-- result, and the per-node loops' entry points share this module's cycle,
-- state, current plugin and status helpers as upvalues the JIT keeps; split
-- apart, each would take them through every call.
local bit = require("bit")
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local loader = require("luasched.loader")
local state_guard = require("luasched.state_guard")
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
local run_chain      -- the one plugin-chain runner (below)

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
  assembly.attach_running(M.running_plugin)
  views.attach(M.running_plugin, M.running_instance)
end

--- Starts a cycle's state as PreFilter does, without running PreFilter:
--- `given` is the CycleState (the test kit's, for a hook run alone).
function M.begin_cycle(given)
  state = given
  cycle.state_lost = 0
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
-- The file is the loader's record, never the plugin's own `file` field.
local function attributed(msg)
  local inst = current
  local file = inst and assembly.file_of(inst)
  if type(file) ~= "string" or file == "" or msg:find(file, 1, true) or assembly.is_blamed(msg) then return msg end
  local fn = current_hook and (assembly.hook_at_build(inst, current_hook) or inst[current_hook])
  fn = assembly.hook_source[fn] or fn   -- the plugin's own hook behind the test kit's recorder
  if type(fn) ~= "function" then return msg .. " (in " .. file .. ")" end
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

-- A plugin raised, returned a wrong value, or broke a rule: the message
-- names its file and line (and the traceback of a raise is the status' detail).
local function fail_located(fmt, ...)
  local msg = attributed(string.format(fmt, ...))
  local st = ls._runtime_error(shortened(msg))
  local trace = assembly.traceback_for(msg)
  if trace then C.ls_status_set_detail(st.id, trace) end
  cycle.status = st.id
  cycle.status_code = ERROR
  return ERROR
end

-- A plugin returned an Error status: its own message, as upstream words it.
local function fail(fmt, ...)
  local msg = shortened(string.format(fmt, ...))
  local st = ls._runtime_error(msg)
  cycle.status = st.id
  cycle.status_code = ERROR
  return ERROR
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

function M.pre_enqueue(pod_ptr)
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
function M.less(a_ptr, b_ptr)
  local inst = profiles[1].points.sort_key[1]
  current, current_hook = inst, "less"
  note_text(inst, "less")
  local ok, r = pcall(inst.less, inst, ffi.cast("const ls_pod *", a_ptr)[0], ffi.cast("const ls_pod *", b_ptr)[0])
  if not ok then sort_error(inst, "less", r) end
  return ok and r == true
end

--- Numeric sort key of a pod for the queue-sort plugin (higher first).
function M.sort_key(pod_ptr)
  local list = profiles[1].points.sort_key
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


-- ---- the plugin-chain runner ---------------------------------------------

-- The one plugin-chain runner, driven by the row of the extension-point
-- table (core/include/luasched/extension_points.h, read by points.lua): every
-- point and hook of a plugin list but the per-node loops generated by
-- loops.lua (Filter, Score) and the queue sort's single plugin. It runs the
-- row's hook of each plugin of its point's list (last to first for a reverse
-- row; a hook run over another point's list is optional), times it in a
-- sampled cycle, and answers with the framework's one error idiom:
--   running <Point> plugin "<name>": <file:line>: <message>
-- (a raise or a value that is not a status is located; an Error status keeps
-- the plugin's own message, as upstream's fmt.Errorf("running %s plugin %q:
-- %w"), located too on an error-located row). A code outside the row's
-- allowed ones is an Error "returned <code>". An allowed code other than
-- Success ends a stopping chain as the point's status; a first-success chain
-- (Bind) ends at the first Success and passes a Skip on. Rows that log their
-- plugins' failures leave the cycle's status as it was (Unreserve runs after
-- the failure it undoes).
--
-- A point whose plugins return a result (a result row: PreFilter's node
-- names, PostFilter's nomination, PreScore's Skip set, NormalizeScore's
-- slots, PreBindPreFlight's "has work") gives the runner its handler, a
-- table of its own words, each optional:
--   name: the point its errors name (NormalizeScore's are Score's, upstream)
--   on_success(st, k, inst, extra) / on_status(st, k, inst, extra): its word
--     on a Success (or nil) and, first, on an allowed code or an Error: nil
--     leaves it to the row, true goes on, a code ends the chain with it (run
--     protected: a raise is the plugin's failure)
--   outcome(ok, st, k, inst): the whole word on a call (PreBindPreFlight)
--   without_hook: the chain's code when a plugin lacks the optional hook
--   skips(k): whether plugin k is passed over in this cycle
--   empty, finish(): the code with no plugin list, at the end of the list
-- Permit passes one for its Wait.

-- A plugin's call: its hook with the point's arguments.
local function call_hook(fn, inst, _, a1, a2, a3, a4)
  return pcall(fn, inst, a1, a2, a3, a4)
end

-- Bind: the cluster decides. A pod the plugin bound is bound, whatever it did
-- next (before, an error after ls.bind requeued a bound pod); a success
-- without a binding would leave the pod assumed and never bound.
local function call_bind(fn, inst, _, a1, a2, a3)
  ls._allow_bind(true)
  local ok, st = pcall(fn, inst, a1, a2, a3)
  ls._allow_bind(false)
  if ls._bound() then return true, nil end
  if ok and (st == nil or (is_status(st) and st.code == SUCCESS)) then
    return false, "bind returned success, but the pod was not bound (ls.bind(node_name) binds it)"
  end
  return ok, st
end

-- NormalizeScore: plugin k's row of score slots (the cycle's scores, one row
-- of n per Score plugin).
local function call_normalize(fn, inst, k, st, pod, nodes, n)
  return pcall(fn, inst, st, pod, score_list(cycle.scores + (k - 1) * n, n), nodes, n)
end
local CALLS = { bind = call_bind, normalize_score = call_normalize }

-- A hook's lookup may run the plugin's own code (an __index on its plugin
-- table): it runs protected, once the plugin is the one named (attacker round 3).
local function hook_of(inst, hook)
  return inst[hook]
end

local function point_name(row, spec)
  return spec and spec.name or row.name
end

-- A failure the runtime logs rather than returns, with the plugin's file:line.
local function log_failure(point, inst, msg)
  io.stderr:write(string.format("luasched: running %s plugin %q: %s\n", point, name_of[inst],
    one_line(shortened(attributed(msg)))))
end

-- A plugin's failure (a raise, or a value that is not a status): the chain's
-- code, or nil when the row goes on.
local function chain_failure(row, spec, inst, k, ok, st)
  local msg = ok and string.format("%s returned a %s, expected a status or nil", row.hook, type(st)) or describe(st)
  if row.logs_errors then
    log_failure(point_name(row, spec), inst, msg)
    return nil
  end
  fail_located("running %s plugin %q: %s", point_name(row, spec), name_of[inst], msg)
  -- a queue-side plugin's error gates the pod under that plugin, as upstream files it
  if row.queue_side then cycle.status_plugin = k - 1 end
  return ERROR
end

-- The point's handler's word (run protected): the chain's code, or nil to
-- go on, or false to leave it to the row.
local function handler_word(row, spec, word, inst, k, st, extra)
  if not word then return false end
  local ok, taken = pcall(word, st, k, inst, extra)
  if not ok then return chain_failure(row, spec, inst, k, false, taken) end
  if taken == true then return nil end
  if taken == nil then return false end
  return taken
end

-- A plugin's status other than Success: the chain's code, or nil to go on.
local function chain_status(row, spec, inst, k, st, extra)
  local code = st.code
  if code ~= ERROR and not row.allowed[code] then
    return fail_located("running %s plugin %q: returned %s: %s", point_name(row, spec), name_of[inst],
      ls.code_names[code], st.message)
  end
  local taken = handler_word(row, spec, spec and spec.on_status, inst, k, st, extra)
  if taken ~= false then return taken end
  if code == ERROR then
    if row.error_located then
      return fail_located("running %s plugin %q: %s", point_name(row, spec), name_of[inst], describe(st.message))
    end
    fail("running %s plugin %q: %s", point_name(row, spec), name_of[inst], st.message)
    if row.queue_side then cycle.status_plugin = k - 1 end
    return ERROR
  end
  if row.first_success and code == SKIP then return nil end
  if row.stops then return set_status(st, k - 1) end
  return nil
end

-- A plugin's Success (or nil): the chain's code, or nil to go on.
local function chain_success(row, spec, inst, k, st, extra)
  local taken = handler_word(row, spec, spec and spec.on_success, inst, k, st, extra)
  if taken ~= false then return taken end
  if row.first_success then return SUCCESS end
  return nil
end

-- A cut-off rebuilt the Lua state during this cycle: the CycleState went with
-- the old state (`state` is nil in the new one) and cycle.status holds the
-- cut-off's Error, which names the plugin whose code ran. The cycle's later
-- points are not run: their plugins would be handed no state and blamed (a
-- Filter cut off on the nominated node, then every node's Filter ran and the
-- pod's Error named NodeResourcesFit, "attempt to index local 'state'":
-- attacker round 5). Queue-side rows have no CycleState and are not cycles.
local function cycle_lost()
  return cycle.state_lost ~= 0 and state == nil
end

run_chain = function(row, spec, a1, a2, a3, a4)
  if not row.queue_side and cycle_lost() then return ERROR end
  local quiet = row.logs_errors
  if not quiet then clear_status() end
  current_hook = row.hook
  local list = profiles[1].points[row.list]
  if not list then return spec and spec.empty or SUCCESS end
  local timed = false
  if not row.queue_side and not row.untimed then
    sampling = cycle.sample_plugins ~= 0
    timed = sampling
  end
  local hook, call = row.hook, CALLS[row.hook] or call_hook
  local outcome, skips = spec and spec.outcome, spec and spec.skips
  local first, last, step = 1, #list, 1
  if row.reverse then first, last, step = #list, 1, -1 end
  for k = first, last, step do
    local inst = list[k]
    current = inst
    cycle.running_plugin = k - 1   -- a cut-off names it (in its hook's lookup too)
    local found, fn = pcall(hook_of, inst, hook)
    local code
    if not found then
      code = chain_failure(row, spec, inst, k, false, fn)
    elseif fn == nil and row.hook_optional then
      code = spec and spec.without_hook
    elseif not (skips and skips(k)) then
      if row.queue_side then note_text(inst, hook) end   -- outside a cycle: a cut-off is attributed by the note
      local t0 = timed and timing.now()
      local ok, st, extra = call(fn, inst, k, a1, a2, a3, a4)
      if timed then   -- a quiet row's durations are filed as Success (PostBind has no status)
        local observed = quiet and SUCCESS or not ok and ERROR or is_status(st) and st.code or SUCCESS
        timing.observe(row.ep, k - 1, observed, timing.now() - t0)
        timing.flush(cycle)
      end
      if outcome then
        code = outcome(ok, st, k, inst)
      elseif not ok or (not quiet and st ~= nil and not is_status(st)) then
        code = chain_failure(row, spec, inst, k, ok, st)
      elseif not quiet and st ~= nil and st.code ~= SUCCESS then
        code = chain_status(row, spec, inst, k, st, extra)
      elseif not quiet then
        code = chain_success(row, spec, inst, k, st, extra)
      end
    end
    if code ~= nil then return code end
  end
  if spec and spec.finish then return spec.finish() end
  if row.first_success then return set_status(ls.skip, -1) end
  return SUCCESS
end

local function node_name()
  return ls.str(cycle.selected_node)
end

local function run_point(row, spec)
  return run_chain(row, spec, state, cycle.pod[0], node_name())
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


-- PreFilter's word on its plugins' results (run_chain's handler): a Skip
-- passes the plugin's filter over for this pod, the first Unschedulable or
-- Pending is kept while the later plugins run (Unresolvable stops the
-- chain: the row's), node names restrict the nodes to filter.
local pre_filter_rejected, pre_filter_rejected_at
local PRE_FILTER = {
  on_success = function(_, k, inst, names)
    if names == nil then return nil end
    if type(names) ~= "table" then
      error("pre_filter returned node names as a " .. type(names) .. ", expected a list", 0)
    end
    local restricting = restricting_names
    restricting[#restricting + 1] = name_of[inst]
    cycle.prefilter_restricting = bit.bor(cycle.prefilter_restricting, bit.lshift(1, k - 1))
    restrict(names)
    -- upstream returns at once on an empty intersection: later plugins do
    -- not run, and this wins over an earlier plugin's Unschedulable
    if cycle.num_prefilter_nodes == 0 then return set_status(unsatisfied(restricting), -1) end
    return nil
  end,
  on_status = function(st, k, inst)
    local code = st.code
    if code == SKIP then
      local fk = cycle_profile.filter_index[name_of[inst]]
      if fk then cycle_profile.skip[fk] = true end
      return true
    elseif code == UNSCHED or code == PENDING then
      if not pre_filter_rejected then pre_filter_rejected, pre_filter_rejected_at = st, k - 1 end
      return true
    end
    return nil
  end,
  finish = function()
    if pre_filter_rejected then return set_status(pre_filter_rejected, pre_filter_rejected_at) end
    return SUCCESS
  end,
}

--- Starts the cycle's state (a new table, or `given_state`: the test kit's)
--- and runs PreFilter. The node-name restriction is left in
--- cycle.prefilter_*; an empty intersection is Unresolvable.
function M.pre_filter(given_state)
  state = given_state or state_guard.new_state()   -- plugins not built-in get a side of it
  cycle.state_lost = 0
  table_clear(skip_score)   -- the runtime's own: kept, not made anew per pod
  local prof = profiles[1]
  table_clear(prof.skip)
  cycle_profile = prof
  handle.start_cycle()
  cycle.prefilter_restricts = 0
  cycle.num_prefilter_nodes = 0
  cycle.prefilter_restricting = 0
  table_clear(restricting_names)
  pre_filter_rejected = nil
  local code = run_chain(ROW.pre_filter, PRE_FILTER, state, cycle.pod[0])
  if code ~= SUCCESS then
    if code ~= ERROR then handle.prefilter_failed(code) end
    return code
  end
  if cycle.prefilter_restricts ~= 0 then
    cycle.prefilter_absent_status = ls.unresolvable(
      "node(s) didn't satisfy plugin(s) " .. plugin_list(restricting_names)).id
  end
  return SUCCESS
end

-- ---- Filter -----------------------------------------------------------------

-- A Filter plugin's status as the generated loops check it (per node: they
-- raise, and M.filter names the plugin).
local FILTER_ALLOWED = ROW.filter.allowed
checked_filter_status = function(st)
  if not is_status(st) then
    error("filter returned a " .. type(st) .. ", expected a status (ls.unschedulable(...), ...) or nil", 0)
  end
  local code = st.code
  if code ~= SUCCESS and not FILTER_ALLOWED[code] then
    error("filter returned status " .. ls.code_names[code] .. ": " .. st.message, 0)
  end
  return code
end

local function filter_failure(prof, err, ni)
  local inst = (prof.points.filter or {})[cycle.running_plugin + 1]
  current, current_hook = inst, "filter"
  local code = fail_located("running %q filter plugin: %s", inst and name_of[inst] or "?", describe(err))
  handle.trace_raised(cycle, prof, cycle.running_plugin, cycle.status, ni)   -- explain's row of that node
  return code
end

--- Runs the Filter plugins over the cycle's candidates (see ls_cycle).
function M.filter()
  if cycle_lost() then return ERROR end
  clear_status()
  current_hook = "filter"
  local prof = profiles[1]
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
function M.filter_one(ni_ptr)
  if cycle_lost() then return ERROR end
  clear_status()
  current_hook = "filter"
  local prof = profiles[1]
  local ni = ffi.cast("const ls_node_info *", ni_ptr)[0]
  local st_out = cycle.node_status[ni.index]
  local ok, fits = pcall(handle.filter_with_nominated, prof, state, cycle.pod[0], ni, st_out)
  if not ok then return filter_failure(prof, fits, ni) end
  if cycle.trace ~= 0 and cycle.filter_trace ~= nil then handle.trace_one(cycle, prof, ni, st_out, fits) end
  return fits and SUCCESS or UNSCHED
end

-- ---- Sign (OpportunisticBatching) ------------------------------------------------

--- The running cycle's pod's signature, nil when the pod is
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

function M.sign()
  local sig, _, every_pod = signing.sign(profiles[1], cycle.pod[0], sign_pcall)
  if sig == nil and every_pod then return false end
  return sig
end

-- ---- PostFilter -------------------------------------------------------------

-- upstream's RunPostFilterPlugins: Success or UnschedulableAndUnresolvable
-- ends the chain with that plugin's status (and its nomination), an Error
-- ends it with the plugin's own message (AsStatus(s.AsError()), no
-- wrapping), and the Unschedulable reasons of every plugin are joined in
-- profile order into one status attributed to the first plugin that gave
-- one. The FitError then appends that message after the nodes' one (" <msg>").
local post_reasons, post_contributors, post_first = {}, {}, nil

local function nominate(nominated)
  if nominated ~= nil and type(nominated) ~= "string" then
    error("post_filter returned a " .. type(nominated) .. " as the nominated node, expected a node name " ..
      "(a string) or nil", 0)
  end
  if nominated then
    local ok, id = pcall(ls.intern, nominated)
    if not ok then error("its nominated node: " .. describe(id), 0) end
    cycle.nominated_node = id
  end
end

local POST_FILTER = {
  empty = UNSCHED,
  on_success = function(st, k, _, nominated)
    nominate(nominated)
    if st then set_status(st, k - 1) end
    return SUCCESS
  end,
  on_status = function(st, k, _, nominated)
    local code = st.code
    if code == UNRESOLVABLE then
      nominate(nominated)
      return set_status(st, k - 1)
    elseif code == ERROR then
      if st.message == "" then error("returned Error", 0) end
      return set_status(st, k - 1)
    end
    post_first = post_first or k - 1   -- Unschedulable: this plugin could not help
    if #st.reasons > 0 then
      post_contributors[#post_contributors + 1] = st
      for _, r in ipairs(st.reasons) do post_reasons[#post_reasons + 1] = r end
    end
    return true
  end,
  finish = function()
    local joined = #post_contributors == 1 and post_contributors[1] or ls.status(UNSCHED, unpack(post_reasons))
    set_status(joined, post_first)
    return UNSCHED
  end,
}

function M.post_filter()
  cycle.nominated_node = 0
  table_clear(post_reasons)
  table_clear(post_contributors)
  post_first = nil
  return run_chain(ROW.post_filter, POST_FILTER, state, cycle.pod[0])
end

-- ---- PreScore, Score, NormalizeScore ----------------------------------------

-- PreScore's Skip: the plugin's score (and normalize_score) is not run for this pod.
local PRE_SCORE = {
  on_status = function(st, _, inst)
    if st.code == SKIP then
      skip_score[name_of[inst]] = true
      return true
    end
    return nil
  end,
}

function M.pre_score()
  local n = cycle.num_feasible
  return run_chain(ROW.pre_score, PRE_SCORE, state, cycle.pod[0], node_list(cycle.feasible, n), n)
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
-- place).
local function run_scores(prof, chain, cyc, pod, from)
  local list = prof.points.score
  local nodes, n = cyc.feasible, cyc.num_feasible
  local scores = cyc.scores
  current, current_hook = nil, "score"   -- the plugin: list[cycle.running_plugin + 1] if one fails
  chain(state, pod, cyc, nodes, n, scores, cyc.score_skipped, skip_score, from or 0)
  if cyc.trace ~= 0 or cyc.keep_raw_scores ~= 0 then ffi.copy(cyc.raw_scores, scores, #list * n * 8) end
end

-- NormalizeScore runs over the Score plugins that have it and were not
-- skipped; its errors are Score's (upstream's wording).
local NORMALIZE_SCORE = {
  name = "Score",
  skips = function(k) return cycle.score_skipped[k - 1] ~= 0 end,
}

-- Score from node `from` on, then NormalizeScore over every feasible node.
local function score_and_normalize(chain, from)
  local prof = profiles[1]
  local list = prof.points.score
  if not list then return SUCCESS end
  local ok, err = pcall(run_scores, prof, chain, cycle, cycle.pod[0], from)
  if sampling then timing.flush(cycle) end
  if not ok then
    if current == nil then current = list[cycle.running_plugin + 1] end
    return fail_located("running Score plugin %q: %s", name_of[current], describe(err))
  end
  local n = cycle.num_feasible
  return run_chain(ROW.normalize_score, NORMALIZE_SCORE, state, cycle.pod[0], node_list(cycle.feasible, n), n)
end

--- Score and NormalizeScore for every score plugin; C weights and sums.
function M.score()
  if cycle_lost() then return ERROR end
  clear_status()
  local prof = profiles[1]
  sampling = cycle.sample_plugins ~= 0
  return score_and_normalize(sampling and prof.score_chain_timed or prof.score_chain, 0)
end

--- OpportunisticBatching's re-scoring (v1.37, upstream's rescoreHintedNode):
--- PreScore and Score for the last feasible node alone, the others' raw scores
--- put in cycle.scores by C, then NormalizeScore over all of them.
function M.rescore_last()
  if cycle_lost() then return ERROR end
  local n = cycle.num_feasible
  if run_chain(ROW.pre_score, PRE_SCORE, state, cycle.pod[0], node_list(cycle.feasible + (n - 1), 1), 1) == ERROR then
    return PENDING   -- told apart from a Score failure (batch flush reason)
  end
  clear_status()
  return score_and_normalize(profiles[1].score_chain, n - 1)
end

--- PreBindPreFlight (upstream v1.35+): SUCCESS when some PreBind plugin has
--- work for this pod (then status.nominatedNodeName is set for the binding),
--- SKIP when every one's `pre_bind_pre_flight` says ls.skip. A plugin without
--- the hook counts as having work; an error in it too (the binding goes on;
--- the error is logged with the plugin and file:line).
local PRE_BIND_PRE_FLIGHT = {
  empty = SKIP,
  without_hook = SUCCESS,
  outcome = function(ok, st, _, inst)
    if not ok then log_failure(ROW.pre_bind_pre_flight.name, inst, describe(st)) end
    if ok and is_status(st) and st.code == SKIP then return nil end
    return SUCCESS
  end,
  finish = function() return SKIP end,
}

function M.pre_bind_pre_flight()
  return run_point(ROW.pre_bind_pre_flight, PRE_BIND_PRE_FLIGHT)
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

local PERMIT = { on_status = permit_wait }

function M.permit()
  cycle.num_waiting_plugins = 0
  local code = run_point(ROW.permit, PERMIT)
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
  cycle.state_lost = 0
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
  local refs = not loader.is_builtin(h.inst)   -- the loader's word, never the instance's own `builtin` field
  if refs then pod = views.pod_ref(pod) end   -- a reference that lives for this call only
  local ev = ffi.cast("const ls_cluster_event *", ev_ptr)
  -- (a plugin setting self.builtin = true in init got the event's objects
  -- themselves and read a kept one after its call: attacker round 5)
  local old, new = events.objects(ev, refs)
  local share = refs and ls._memory_share()   -- a hint is held to its plugin's share as a hook is (profiles.lua)
  local before = share and collectgarbage("count") * 1024
  local ok, r = pcall(fn, pod, old, new, h.inst)
  if share then ls._within_share(before) end
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
