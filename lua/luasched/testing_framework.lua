-- luasched.testing_framework: the half of the plugin author's kit
-- (luasched.testing) that runs plugins. Every hook runs through the
-- runtime's own runners (lua/luasched/dispatch.lua) on an ls_cycle the kit
-- owns, and the rules C applies between them (which nodes Filter examines,
-- whether Score runs, weights and totals, the chosen host, the FitError
-- message) are libluasched's own (framework.h, through the FFI): the kit
-- writes none of them again. Installed into the kit's table by testing.lua.
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local json = require("luasched.json")
local dispatch = require("luasched.dispatch")
local assembly = require("luasched.profiles")
local points = require("luasched.points")
local table_clear = require("table.clear")
local bit = require("bit")
local events = require("luasched.events")

local SUCCESS = { code = ls.SUCCESS, code_name = "Success", message = "", reasons = {} }
local NODE_HOOKS = { reserve = true, unreserve = true, permit = true, pre_bind = true, bind = true, post_bind = true }

return function(T)
  -- ---- running the framework ----------------------------------------------------------
  --
  -- Every hook runs through the runtime's own runners (lua/luasched/dispatch.lua)
  -- on an ls_cycle the kit owns, and the rules C applies between them (which
  -- nodes Filter examines, whether Score runs, weights and totals, the chosen
  -- host, the FitError message) are libluasched's own (framework.h, through
  -- the FFI): the kit writes none of them again.

  local kit = { cycle = ffi.new("ls_cycle"), cap = 0, score_cap = 0, rng = ffi.new("uint64_t[1]") }
  dispatch.attach(kit.cycle)
  kit.cycle.running_plugin = -1

  -- The cycle's arrays, for n nodes and `np` score plugins (zeroed: a skipped
  -- plugin's row reads 0).
  local function buffers(n, np)
    local c = kit.cycle
    n = math.max(n, 1)
    if n > kit.cap then
      kit.cap = n
      kit.candidates = ffi.new("const ls_node_info *[?]", n)
      kit.feasible = ffi.new("const ls_node_info *[?]", n)
      kit.node_status = ffi.new("ls_node_status[?]", n)
      kit.totals = ffi.new("int64_t[?]", n)
    end
    local need = n * math.max(np, 1)
    if need > kit.score_cap then
      kit.score_cap = need
      kit.scores = ffi.new("int64_t[?]", need)
      kit.raw = ffi.new("int64_t[?]", need)
    end
    kit.skipped = ffi.new("uint8_t[?]", np + 1)
    ffi.fill(kit.scores, need * 8)
    ffi.fill(kit.raw, need * 8)
    ffi.fill(kit.node_status, n * ffi.sizeof("ls_node_status"))
    c.feasible, c.node_status = kit.feasible, kit.node_status
    c.scores, c.raw_scores, c.score_skipped = kit.scores, kit.raw, kit.skipped
    c.keep_raw_scores = 1
    c.num_score_plugins = np
    c.trace, c.filter_trace, c.sample_plugins = 0, nil, 0
  end

  -- What each hook of a plugin returned in the running call: the kit shows the
  -- plugin's own PreFilter, PreScore and node-hook statuses beside the
  -- framework's verdicts.
  local returned = {}

  -- A stand-in for `inst` in the kit's profile: each hook calls the
  -- instance's own (self is the instance) and notes what it returned.
  local function recorder(inst)
    local r = setmetatable({}, { __index = inst })
    for _, hook in ipairs(points.hooks) do
      local fn = inst[hook]
      if type(fn) == "function" then
        local f = function(_, ...)
          local st, extra = fn(inst, ...)
          returned[hook] = { st, extra, (select(3, ...)) }   -- the third: Filter's node
          return st, extra
        end
        -- the plugin's own hook (behind the guard the runtime wrapped it in),
        -- so a bad return names its file and line, not profiles.lua's guard
        assembly.hook_source[f] = assembly.hook_source[fn] or fn
        r[hook] = f
      end
    end
    assembly.stand_in(r, inst)
    return r
  end

  -- Builds the kit's one profile (see profiles.lua) with `insts` (a list),
  -- each at every extension point it has a hook for. Returns the score
  -- plugins' refs (name, weight) and their count.
  local function use_profile(insts, weights)
    -- the same plugins (held, so never another object at their address) and
    -- weights as the last call: the profile is kept (its loops compiled once)
    local key = {}
    for name, w in pairs(weights or {}) do key[#key + 1] = name .. "=" .. tostring(w) end
    table.sort(key)
    key = table.concat(key, " ")
    local last = kit.insts
    local same = last ~= nil and #last == #insts and kit.weights_key == key
    for i = 1, #insts do same = same and last[i] == insts[i] end
    if same then return kit.refs, kit.np end
    local spec = { name = "test", points = {}, instances = {} }
    local score_refs = {}
    for _, inst in ipairs(insts) do
      local name = assembly.name_of[inst]
      spec.instances[name] = recorder(inst)
      for _, hook in ipairs(points.point_hooks) do
        if type(inst[hook]) == "function" then
          spec.points[hook] = spec.points[hook] or {}
          table.insert(spec.points[hook], name)
          if hook == "score" then
            score_refs[#score_refs + 1] = { name = ls.intern(name), weight = weights and weights[name] or 1 }
          end
        end
      end
    end
    local ok, err = dispatch.build({ spec })
    if not ok then error(err, 3) end
    for _, inst in ipairs(insts) do
      inst.handle = spec.instances[assembly.name_of[inst]].handle
    end
    local refs = ffi.new("ls_plugin_ref[?]", math.max(#score_refs, 1), score_refs)
    kit.insts, kit.weights_key, kit.refs, kit.np = { unpack(insts) }, key, refs, #score_refs
    return refs, #score_refs
  end

  local function insts_of(inst)
    if getmetatable(inst) == nil and inst[1] ~= nil then return inst end
    return { inst }
  end

  -- A registered status (an id C keeps) as a result table.
  local function registered(code, id)
    if code == ls.SUCCESS and id == 0 then return SUCCESS end
    local reasons = {}
    if id ~= 0 then
      local info = C.ls_status_get(id)
      for i = 0, info.n_reasons - 1 do reasons[i + 1] = ffi.string(info.reasons[i]) end
    end
    -- the status object itself: statuses are made once per code and reasons
    local st = #reasons > 0 and ls.status(code, unpack(reasons)) or nil
    return { code = code, code_name = ls.code_names[code], message = ls.status_message(id), reasons = reasons,
             status = st }
  end

  -- The framework's status of the cycle's last point as a result table.
  local function cycle_result()
    return registered(kit.cycle.status_code, kit.cycle.status)
  end

  -- A runner that ended in an Error status raises it as the framework words it
  -- (naming the plugin, its file and line).
  -- The error is raised at the spec's line that called the kit (the first
  -- frame outside lua/luasched/), as error(msg, 2) would from a one-level
  -- function: "spec/x_spec.lua:9: running Score plugin ...", never a line of
  -- the kit's own (busted names a message without a position by where it was
  -- raised).
  local kit_dir = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
  local function raise_error()
    if kit.cycle.status_code ~= ls.ERROR then return end
    local msg, level = ls.status_message(kit.cycle.status), 2
    while true do
      local info = debug.getinfo(level, "S")
      if not info then level = 0; break end
      if info.what ~= "C" and info.source:sub(2, #kit_dir + 1) ~= kit_dir then break end
      level = level + 1
    end
    error(msg, level)
  end

  -- After the runner of `hook`: true when the cycle ended in an Error status
  -- the plugin returned itself (r.status is then the framework's Error); a
  -- plugin that raised, or returned what the point does not take, raises the
  -- framework's message (naming the plugin, its file and line).
  local function ended_in_error(r, hook)
    if kit.cycle.status_code ~= ls.ERROR then return false end
    local got = returned[hook]
    if got and ls.is_status(got[1]) and got[1].code == ls.ERROR then
      if hook == "filter" then r.filter[ls.str(got[3].node.name)] = T.result(got[1]) end
      r.status = cycle_result()
      r.message = r.status.message
      return true
    end
    raise_error()
  end

  local function plugin_result(hook)
    local got = returned[hook]
    if got == nil then return nil end
    return T.result(got[1]), got[2]
  end

  --- A hook's status as a plain table: code, code_name, message, reasons and the
  --- status object itself (nil for Success).
  function T.result(st)
    if st == nil then return SUCCESS end
    if not ls.is_status(st) then
      error("expected a status (ls.unschedulable(...), ...) or nil, got a " .. type(st), 2)
    end
    return { code = st.code, code_name = ls.code_names[st.code], message = st.message,
             reasons = st.reasons, status = st }
  end

  local function ni_of(cluster, node)
    if type(node) == "string" then return cluster:node_info(node) end
    return node
  end

  -- Points the kit's cycle at the cluster and pod, with its buffers.
  local function begin(cluster, pod, np)
    cluster:attach(pod)
    local c = kit.cycle
    c.pod, c.snapshot, c.objects = pod, cluster.res.snapshot, cluster.res.store
    c.all_nodes, c.num_all_nodes, c.profile = cluster.list, cluster.num_nodes, 0
    c.selected_node, c.nominated_node = 0, 0
    buffers(cluster.num_nodes, np)
    table_clear(returned)
    return c
  end

  --- PreFilter (the runtime's runner, with `state` as the cycle's state):
  --- the plugin's own result and node names (or nil). An Error status (the
  --- plugin raised or returned something PreFilter may not) is raised.
  function T.pre_filter(inst, cluster, pod, state)
    use_profile({ inst })
    begin(cluster, pod, 0)
    dispatch.pre_filter(state or {})
    -- an Error status the plugin returned is its result (as for T.filter)
    local got = returned.pre_filter
    if kit.cycle.status_code == ls.ERROR and not (got and ls.is_status(got[1])) then raise_error() end
    return plugin_result("pre_filter")
  end

  --- Filter of one node (a name or a NodeInfo) with the given (or an empty)
  --- state, through the runtime's Filter of one node; runs no PreFilter (use
  --- T.cycle, or T.pre_filter with the same state).
  function T.filter(inst, cluster, pod, node, state)
    use_profile({ inst })
    begin(cluster, pod, 0)
    dispatch.begin_cycle(state or {})
    local ni = ni_of(cluster, node)
    dispatch.filter_one(ni)
    -- an Error status the plugin returned is its result; what it raised or
    -- returned that is no status raises the framework's Error
    local got = returned.filter
    if kit.cycle.status_code == ls.ERROR and got and ls.is_status(got[1]) then return T.result(got[1]) end
    raise_error()
    local st = kit.cycle.node_status[ni.index]
    return registered(st.code, st.code == ls.SUCCESS and 0 or st.status)
  end

  --- Score of one node (raw, before NormalizeScore), through the runtime's
  --- Score runner over that one node.
  function T.score(inst, cluster, pod, node, state)
    use_profile({ inst })
    local c = begin(cluster, pod, 1)
    dispatch.begin_cycle(state or {})
    c.feasible[0] = ni_of(cluster, node)
    c.num_feasible = 1
    dispatch.score()
    raise_error()
    return tonumber(c.raw_scores[0])
  end

  --- One of the hooks that take (state, pod, node_name): reserve, unreserve,
  --- permit, pre_bind, bind, post_bind, through the runtime's runner for it.
  --- Returns the plugin's own result; an Error status is raised. `cluster`
  --- may be nil.
  function T.node_hook(inst, hook, cluster, pod, node_name, state)
    if not NODE_HOOKS[hook] then error("T.node_hook: no node hook " .. tostring(hook), 2) end
    use_profile({ inst })
    if cluster then
      begin(cluster, pod, 0)
    else
      kit.cycle.pod = pod
      table_clear(returned)
    end
    kit.cycle.selected_node = ls.intern(node_name)
    dispatch.begin_cycle(state or {})
    kit.cycle.status, kit.cycle.status_code = 0, ls.SUCCESS
    dispatch[hook](0)
    -- the plugin's own status (an Error it returned too); the framework's
    -- Error is raised when the plugin raised or returned something else
    local got = returned[hook]
    if got and (got[1] == nil or ls.is_status(got[1])) then return T.result(got[1]) end
    raise_error()
    return SUCCESS
  end

  -- The per-node results of Filter, the feasible nodes and the scores of a
  -- cycle into r.
  local function filter_results(r, cluster, c)
    for i = 0, c.num_processed - 1 do
      local ni = c.candidates[(c.start + i) % c.num_candidates]
      local st = c.node_status[ni.index]
      r.filter[ls.str(ni.node.name)] = registered(st.code, st.code == ls.SUCCESS and 0 or st.status)
    end
    for i = 0, c.num_feasible - 1 do r.feasible[i + 1] = ls.str(c.feasible[i].node.name) end
    r.nodes = c.feasible
    local _ = cluster
  end

  local function score_results(r, c, np)
    local n = c.num_feasible
    r.skipped_score = np > 0 and c.score_skipped[0] ~= 0 or nil
    for i = 0, n - 1 do
      local name = r.feasible[i + 1]
      if np == 1 then
        r.raw[name] = tonumber(c.raw_scores[i])
        r.scores[name] = tonumber(c.scores[i])
      end
      r.totals[name] = tonumber(kit.totals[i])
    end
  end

  --- A whole scheduling cycle over the cluster's nodes, run by the framework
  --- itself: PreFilter, Filter (the candidates PreFilter's node names keep,
  --- the nodes examined as percentageOfNodesToScore says), then, when more
  --- than one node is feasible, PreScore, Score, NormalizeScore, the weighted
  --- totals and the host. `inst` is one plugin instance or a list of them (a
  --- profile of those plugins, in that order); opts.weights = { Plugin = w }.
  --- Returns { state, pre_filter (the plugin's own result), pre_filter_nodes,
  ---   filter = { [node] = result }, feasible = { names }, pre_score,
  ---   skipped_score, scored (false when one node was feasible),
  ---   raw = { [node] = n }, scores = { [node] = n } (one score plugin),
  ---   totals = { [node] = n }, status (the cycle's end: Success, or the
  ---   rejection), message (upstream's FitError text when rejected),
  ---   node (the host chosen) }. opts.percentage is percentageOfNodesToScore;
  --- opts.scoring = false examines nodes as a profile without Score plugins does;
  --- opts.start is where Filter's round-robin starts (0; r.next_start is the
  --- next cycle's) and opts.rng the tie-break generator's state (r.rng after).
  --- A plugin that raised, or returned what its point does not take, raises
  --- the framework's Error message (naming the plugin, its file and line); an
  --- Error status the plugin returned ends the cycle with r.status (the
  --- framework's Error) and r.message.
  local run_cycle

  function T.cycle(inst, cluster, pod, opts)
    local r = { filter = {}, feasible = {}, raw = {}, scores = {}, totals = {}, scored = false }
    return run_cycle(r, inst, cluster, pod, opts or {})
  end

  run_cycle = function(r, inst, cluster, pod, opts)
    local insts = insts_of(inst)
    local refs, np = use_profile(insts, opts.weights)
    local c = begin(cluster, pod, np)
    local state = {}
    r.state = state
    local code = dispatch.pre_filter(state)
    r.pre_filter, r.pre_filter_nodes = plugin_result("pre_filter")
    if ended_in_error(r, "pre_filter") then return r end
    if code ~= ls.SUCCESS then
      r.status = cycle_result()
      local msg = C.ls_fit_error_prefilter(c, r.status.message)
      r.message = ffi.string(msg)
      C.ls_text_free(msg)
      return r
    end
    c.num_filter_plugins = 0
    -- Nodes are examined as in a profile with Score plugins (every profile
    -- built from the defaults has some): opts.scoring = false for one without,
    -- where Filter stops at the first feasible node.
    local scoring = np > 0 or opts.scoring ~= false
    local start = opts.start or 0
    C.ls_cycle_prepare_filter(c, kit.candidates, opts.percentage or 0, scoring, start)
    if c.num_candidates > 0 then dispatch.filter() end
    if ended_in_error(r, "filter") then return r end
    r.next_start = C.ls_cycle_advance_start(c, start)
    filter_results(r, cluster, c)
    if c.num_feasible == 0 then
      r.status = { code = ls.UNSCHEDULABLE, code_name = "Unschedulable", message = "", reasons = {} }
      local msg = C.ls_fit_error_filter(c)
      r.message = ffi.string(msg)
      C.ls_text_free(msg)
      return r
    end
    r.status = SUCCESS
    if not C.ls_cycle_wants_scores(c) then
      r.node = r.feasible[1]
      return r
    end
    r.scored = true
    dispatch.pre_score()
    r.pre_score = plugin_result("pre_score")
    if ended_in_error(r, "pre_score") then return r end
    dispatch.score()
    if ended_in_error(r, returned.normalize_score and "normalize_score" or "score") then return r end
    if not C.ls_cycle_total_scores(c, refs, np, false, kit.totals) then raise_error() end
    score_results(r, c, np)
    kit.rng[0] = opts.rng or 0
    r.node = ls.str(C.ls_cycle_select_host(c, kit.totals, kit.rng).node.name)
    r.rng = kit.rng[0]
    return r
  end

  -- The pod as bound to `node`: the same object with spec.nodeName set (what
  -- the cluster holds once the binding is made).
  local function bound_copy(pod, node)
    local text = C.ls_pod_json(pod)
    if text == nil then error("T.schedule: the pod's JSON was not kept", 3) end
    local obj = json.decode(ffi.string(text))
    obj.spec.nodeName = node
    return T.pod(json.encode(obj))
  end

  --- Schedules pods one after the other as a scheduler does on its first
  --- attempt at each, through T.cycle: `pods` (default: cluster.pending, the
  --- cluster file's pods without a nodeName, in file order) over the cluster,
  --- each pod the cycle places joining it (bound: spec.nodeName set) before the
  --- next attempt; Filter's round-robin start and the tie-breaking generator
  --- (opts.seed, as `luasched simulate --seed`) carry over from one attempt to
  --- the next. `inst` is a plugin instance or a list (T.cycle). Returns the
  --- attempts in order: { pod = "ns/name", node = the node or nil, result =
  --- "bound", "unschedulable" or "error", message (the FitError text or the
  --- framework's Error), cycle = T.cycle's result }.
  function T.schedule(inst, cluster, opts)
    opts = opts or {}
    local pods = opts.pods or cluster.pending
    local attempts, start, rng = {}, 0, opts.seed or 0
    for i, pod in ipairs(pods) do
      local r = { filter = {}, feasible = {}, raw = {}, scores = {}, totals = {}, scored = false }
      local ok, err = pcall(run_cycle, r, inst, cluster, pod,
        { weights = opts.weights, percentage = opts.percentage, start = start, rng = rng })
      start, rng = r.next_start or start, r.rng or rng
      local a = { pod = ls.str(pod.ns) .. "/" .. ls.str(pod.name), cycle = r }
      if not ok then   -- the framework's message, without the position raise_error gave it
        a.result = "error"
        a.message = kit.cycle.status_code == ls.ERROR and ls.status_message(kit.cycle.status) or tostring(err)
      elseif r.status.code == ls.ERROR then
        a.result, a.message = "error", r.message
      elseif r.node then
        a.result, a.node = "bound", r.node
        cluster:add_pod(bound_copy(pod, r.node))
      else
        a.result, a.message = "unschedulable", r.message
      end
      attempts[i] = a
    end
    return attempts
  end

  -- ---- queueing hints ----------------------------------------------------------------

  local OBJECT_TYPES = { { "const ls_pod *", C.LS_OBJ_POD }, { "const ls_node *", C.LS_OBJ_NODE } }
  local function object_type(o)
    if o == nil then return nil end
    for _, t in ipairs(OBJECT_TYPES) do
      if ffi.istype(t[1], o) then return t[2] end
    end
    return C.LS_OBJ_OTHER
  end

  local function action_mask(names)
    local mask = 0
    for _, a in ipairs(names) do mask = bit.bor(mask, C.ls_action_from_name(a)) end
    return mask
  end

  --- What the queue decides for `inst`'s rejected pod on an event, as the
  --- scheduling queue asks it (queue/scheduling_queue.c): the plugin's
  --- registrations matched by libluasched's own rule (ls_event_matches:
  --- "Pod" takes the three pod resources, "*", fine-grained actions), each
  --- matching entry's hint run by the runtime's hint runner (an error or a
  --- value other than ls.QUEUE / ls.QUEUE_SKIP counts as QUEUE, logged);
  --- ls.QUEUE when one says QUEUE, ls.QUEUE_SKIP when every one says skip, nil
  --- when no entry matches (the event does not concern the plugin). `old` /
  --- `new` are the event's objects (T.pod / T.node results or nil).
  function T.hint(inst, resource, action, pod, old, new)
    local ok, err = events.check(getmetatable(inst) or inst)
    if not ok then error(err, 2) end
    if pod == nil then error("T.hint: the pod the plugin rejected is needed", 2) end
    use_profile({ inst })
    local name = assembly.name_of[inst]
    local ev = ffi.new("ls_cluster_event[1]")
    ev[0].resource = ls.intern(resource)
    ev[0].actions = C.ls_action_from_name(action)
    ev[0].object_type = object_type(new) or object_type(old) or C.LS_OBJ_NONE
    ev[0].old_obj, ev[0].new_obj = old, new
    kit.event_refs = { old, new }
    local concerned = false
    for _, r in ipairs(assembly.registrations()) do
      if r.plugin == name and C.ls_event_matches(ls.intern(r.resource), action_mask(r.actions), ev) then
        concerned = true
        if r.hint == 0 or dispatch.hint(r.hint, pod, ev) ~= ls.QUEUE_SKIP then return ls.QUEUE end
      end
    end
    if concerned then return ls.QUEUE_SKIP end
    return nil
  end
end
