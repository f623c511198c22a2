-- luasched.handle: the framework handle plugins get as self.handle (Filter
-- with nominated pods, CycleState and NodeInfo clones, preemption, nominated
-- pods, extenders, a seeded random), and upstream's
-- RunFilterPluginsWithNominatedPods, which the handle and dispatch.lua's
-- Filter runner share. The handle is read-only to plugins and never exposes
-- its profile; dispatch.lua tells it the running cycle (attach, start_cycle,
-- prefilter_failed).
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local sandbox = require("luasched.sandbox")
local locate = require("luasched.profiles").locate_error
local name_of = require("luasched.profiles").name_of
local views = require("luasched.views")
local unwrap = views.unwrap
local state_guard = require("luasched.state_guard")
local loader = require("luasched.loader")
local unwrap_state = state_guard.unwrap

local SUCCESS, UNRESOLVABLE = 0, 3
local is_status = ls.is_status

local function ls_status_message(id)
  return ls.status_message(id)
end

local xpcall = xpcall
local function pcall(f, ...) return xpcall(f, locate, ...) end

local M = {}

local cycle                 -- ls_cycle* shared with C for the process lifetime
local running_hook          -- function: the hook dispatch.lua is running (a key of the plugin table)
local prefilter_failure     -- the code PreFilter failed with this cycle (every node's verdict)
local candidate_set         -- node index -> true, built on demand by Handle:node_code

--- The cycle record, and a function returning the hook being run.
function M.attach(cycle_ptr, hook_reader)
  cycle, running_hook = cycle_ptr, hook_reader
end

--- A new scheduling cycle starts (PreFilter).
function M.start_cycle()
  prefilter_failure = nil
  candidate_set = nil
end

--- PreFilter failed with `code`: every node's Filter verdict.
function M.prefilter_failed(code)
  prefilter_failure = code
end

-- ---- nominated pods (RunFilterPluginsWithNominatedPods) ------------------------

-- CycleState.Clone: a plugin may define clone_state(entry); plain tables are
-- copied deeply (cdata inside are shared: they are read-only views). A table
-- met twice is copied once (a plugin's entry that refers to itself overflowed
-- the stack, reported as the preempting plugin's error: found by the fuzzer,
-- seed 3721), and an entry nested deeper than MAX_DEPTH is refused naming it.
local MAX_DEPTH = 200
local real_metatable = debug.getmetatable

local function deep_copy(v, seen, depth, entry)
  if type(v) ~= "table" or sandbox.is_frozen(v) then return v end
  local c = seen[v]
  if c then return c end
  if depth > MAX_DEPTH then
    error(string.format("cloning the CycleState: entry %s is nested deeper than %d tables", entry, MAX_DEPTH), 0)
  end
  c = {}
  seen[v] = c
  for k, x in pairs(v) do c[k] = deep_copy(x, seen, depth + 1, entry) end
  return setmetatable(c, real_metatable(v))
end

-- A plugin's clone_state hook, run as its own (a cut-off or an error names
-- the plugin and its clone_state's file:line, not the plugin cloning the
-- state: DefaultPreemption's dry run). It is run over the PreFilter list.
local function plugin_clone(prof, inst, v)
  local k = 0
  for i, x in ipairs(prof.points.pre_filter or {}) do if x == inst then k = i break end end
  local caller, caller_ep = cycle.running_plugin, cycle.handle_ep
  cycle.running_plugin, cycle.handle_ep = k - 1, C.LS_EP_CLONE_STATE + 1
  local held = not loader.is_builtin(inst) and collectgarbage("count") * 1024
  local ok, copy = pcall(inst.clone_state, inst, v)
  if held then ls._within_share(held) end   -- held to its share, as its hooks are (still named as CloneState)
  cycle.running_plugin, cycle.handle_ep = caller, caller_ep
  if not ok then error(copy, 0) end
  return copy
end

-- The entries of `t` copied into `c`: a plugin's own clone_state hook copies
-- its entry (keyed by its name), a built-in's in the state itself, another
-- plugin's in the plugins' side (state_guard.lua): a plugin's hook never
-- sees a built-in's entry.
local function clone_entries(prof, t, c, seen, on_side)
  for k, v in pairs(t) do
    local inst = prof.instances[k]
    if inst and loader.is_builtin(inst) == on_side then inst = nil end
    if k == state_guard.SIDE then
      if not on_side then state_guard.adopt(c, clone_entries(prof, v, {}, seen, true)) end
    elseif inst and type(inst.clone_state) == "function" then
      c[k] = plugin_clone(prof, inst, v)
    else
      -- raised again from here: the plugin's frame is then near enough for
      -- its error to carry the plugin's file:line
      local ok, copy = pcall(deep_copy, v, seen, 1,
        type(k) == "string" and string.format("%q", k) or "(a " .. type(k) .. " key)")
      if not ok then error(copy, 0) end
      c[k] = copy
    end
  end
  return c
end

local function clone_state(prof, st)
  return state_guard.clone_of(st, clone_entries(prof, st, {}, {}, false))
end

-- PreFilterExtensions: AddPod / RemovePod of every PreFilter plugin not skipped.
local function run_extension(prof, hook, st, pod, other, ni)
  for k, inst in ipairs(prof.points.pre_filter or {}) do
    local fk = prof.filter_index[name_of[inst]]
    cycle.running_plugin = k - 1   -- a cut-off names it (as_caller)
    if type(inst[hook]) == "function" and not (fk and prof.skip[fk]) then
      local r = inst[hook](inst, st, pod, other, ni)
      if r ~= nil and is_status(r) and r.code ~= SUCCESS then
        error(string.format("running %s on PreFilter plugin %q: %s", hook, name_of[inst], r.message), 0)
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

-- Whether a trace row is that of the node a Filter plugin k raised on: no
-- rejection in it and no verdict of plugin k yet.
local function raised_on(row, npl, k)
  for j = 0, npl - 1 do
    if row[j] > 1 then return false end
  end
  return row[k] == 0
end

-- Explain's trace row of the node on which Filter plugin k (0-based) raised,
-- its Error being status `status_id`: a raise leaves the loop before the
-- node's row is written, and the loop does not say which node it was on (it
-- pays nothing per node for this). The node is found from the rows: in the
-- order the loop examined the candidates, the first whose row has no
-- rejection and no verdict of plugin k (a node that passed has one, a node
-- rejected earlier has its rejection); `ni` when the caller knows it (one
-- node filtered). Only on a traced cycle's error.
local function trace_raised(cyc, prof, k, status_id, ni)
  local npl, ncand = cyc.num_filter_plugins, cyc.num_candidates
  if cyc.trace == 0 or cyc.filter_trace == nil or k < 0 or k >= npl or (ni == nil and ncand == 0) then return end
  local cand, start = cyc.candidates, ncand > 0 and cyc.start % ncand or 0
  for i = 0, ni and 0 or ncand - 1 do
    local row = cyc.filter_trace + (ni or cand[(start + i) % ncand][0]).index * npl
    if ni or raised_on(row, npl, k) then
      for j = 0, k - 1 do   -- the plugins before it ran and passed (unless PreFilter skipped them)
        row[j] = prof.skip[j + 1] and 0 or 1
      end
      row[k] = status_id + 1
      return
    end
  end
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
M.filter_with_nominated = filter_with_nominated
M.nominated_filter_loop = nominated_filter_loop
M.trace_one = trace_one
M.trace_raised = trace_raised

-- ---- the framework handle plugins get (self.handle) ---------------------------

local Handle = {}
Handle.__index = Handle
Handle.__newindex = function(_, k) error("self.handle is read-only (assigning " .. tostring(k) .. ")", 2) end
Handle.__metatable = false
local prof_of = setmetatable({}, { __mode = "k" })   -- handle -> its profile (not reachable by plugins)

local scratch_status = ffi.new("ls_node_status")
local error_buf = ffi.new("char[512]")

-- The handle's methods that run other plugins' code (Filter, AddPod,
-- RemovePod) move cycle.running_plugin through those plugins' lists: the
-- caller's index is given back, also when they raise, so that an error of the
-- caller's own code afterwards names the caller (found by the fuzzer: a Score
-- plugin's error named NodeAffinity, the last Filter its handle ran).
-- `ep` (LS_EP_*) is the point whose plugins f runs: a cut-off while one of
-- them runs names it, not the caller (a Filter plugin looping in
-- DefaultPreemption's dry run was `running PostFilter plugin "?"`).
local function as_caller(ep, f, ...)
  local caller, caller_ep = cycle.running_plugin, cycle.handle_ep
  cycle.handle_ep = ep + 1
  local ok, a, b = pcall(f, ...)
  cycle.running_plugin, cycle.handle_ep = caller, caller_ep
  if not ok then error(a, 0) end
  return a, b
end

local function filter_nominated(prof, st, pod, ni)
  local fits = filter_with_nominated(prof, st, pod, ni, scratch_status)
  if fits then return true end
  return false, scratch_status.code
end

--- Filter with nominated pods on any NodeInfo (a clone during preemption).
--- Returns true, or false and the failing status code and message.
-- A CycleState a plugin passes is taken back from its side (state_guard).
function Handle:run_filter_with_nominated(st, pod, ni)
  local fits, code = as_caller(C.LS_EP_FILTER, filter_nominated, prof_of[self], unwrap_state(st), pod, ni)
  if fits then return true end
  return false, code, ls_status_message(scratch_status.status)
end

function Handle:run_add_pod(st, pod, pod_to_add, ni)
  as_caller(C.LS_EP_ADD_POD, run_extension, prof_of[self], "add_pod", unwrap_state(st), pod, pod_to_add, ni)
end

function Handle:run_remove_pod(st, pod, pod_to_remove, ni)
  as_caller(C.LS_EP_REMOVE_POD, run_extension, prof_of[self], "remove_pod", unwrap_state(st), pod, pod_to_remove, ni)
end

function Handle:clone_state(st)
  return state_guard.as_seen_by(st, clone_state(prof_of[self], unwrap_state(st)))
end

--- A changeable copy of a NodeInfo (freed by the garbage collector).
-- The changeable NodeInfo behind each clone a plugin holds (read-only to it).
local clones = setmetatable({}, { __mode = "k" })

local function need(v, what)
  if v == nil then error("self.handle: " .. what .. " is nil", 3) end
  return unwrap(v)   -- a plugin's reference to a pod or NodeInfo: the struct, for C (a tail call)
end

-- The clones a plugin that is not built-in made in the running call: kept
-- until its call ends (the next clone of a later call drops them), so that
-- what it reads through them (clone.pods, a reference of the call) never
-- reads a clone the collector freed; after the call those references raise.
local call_clones, call_clones_gen = {}, nil

function Handle:clone_node_info(ni)
  local as_ref = views.is_ref(ni) or views.wants_refs()   -- asked by a plugin that is not built-in
  local copy = ffi.gc(C.ls_node_info_clone(need(ni, "clone_node_info: the node info")), C.ls_node_info_free)
  local view = copy[0]
  if as_ref then
    local gen = views.generation()
    if call_clones_gen ~= gen then call_clones, call_clones_gen = {}, gen end
    call_clones[#call_clones + 1] = copy
    view = views.node_info_ref(copy)
  end
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
  return C.ls_cycle_preempting(cycle, unwrap(pod))
end

--- Evicts `victim` to make room on `node_name` for the cycle's pod: its
--- deletion is issued after the scheduling cycle (async preemption).
function Handle:preempt(victim, node_name)
  victim = need(victim, "preempt: the victim")
  if type(node_name) ~= "string" then error("self.handle: preempt: the node name must be a string", 2) end
  if running_hook() ~= "post_filter" then error("self.handle: preempt is only allowed in PostFilter", 2) end
  -- A plugin that is not built-in evicts as DefaultPreemption does: a pod on
  -- the node it names, of lower priority than the pod it makes room for (a
  -- priority-0 pod's PostFilter evicted a system-critical pod on another
  -- node, "to accommodate a higher priority pod": attacker round 4).
  if views.wants_refs() then
    local p = cycle.pod
    if victim.node_name ~= ls.intern(node_name) then
      return string.format("self.handle: preempt: pod %s/%s is not on node %s", ls.str(victim.ns),
        ls.str(victim.name), node_name)
    end
    if victim.priority >= p.priority then
      return string.format("self.handle: preempt: pod %s/%s has priority %d, not lower than %d of pod %s/%s",
        ls.str(victim.ns), ls.str(victim.name), victim.priority, p.priority, ls.str(p.ns), ls.str(p.name))
    end
  end
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
    if i < n then return views.pod_for_plugin(C.ls_cycle_nominated_pod(cycle, id, i)[0]) end
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
        out[#out + 1] = views.pod_for_plugin(C.ls_cycle_nominated_pod(cycle, id, k)[0])
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
    for _, p in ipairs(c.pods) do C.ls_cycle_extender_victim_add(cycle, unwrap(p)) end
  end
  local n = C.ls_cycle_extenders_process_preemption(cycle, error_buf, 512)
  if n < 0 then return nil, ffi.string(error_buf) end
  local out = {}
  for i = 0, n - 1 do
    local node = C.ls_cycle_extender_candidate(cycle, i, extender_violations, extender_victims)
    local pods = {}
    for k = 0, extender_victims[0] - 1 do
      pods[k + 1] = views.pod_for_plugin(C.ls_cycle_extender_victim(cycle, i, k))
    end
    out[i + 1] = { node = node, violations = tonumber(extender_violations[0]), pods = pods }
  end
  return out
end

--- The handle of profile `prof`, read-only to plugins.
function M.new(prof)
  local handle = setmetatable({}, Handle)
  prof_of[handle] = prof
  sandbox.mark_frozen(handle, "self.handle")
  return handle
end

return M
