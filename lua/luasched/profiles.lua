-- luasched.profiles: profile assembly. Loads the plugins each profile lists,
-- makes their instances (args checked and completed, validate and init run),
-- compiles each profile's per-node loops (loops.lua), registers the plugins'
-- events and queueing hints, and checks whole configurations for
-- `luasched check`. It also names the plugin code that runs (note, describe,
-- locate), which every caller of plugin code uses for attribution.
-- dispatch.lua re-exports the entry points C calls (build, check, hooks,
-- completed_args); the handle plugins get is made by handle.lua.
local C = require("luasched.clib")
local ls = require("luasched")
local loader = require("luasched.loader")
local loops = require("luasched.loops")
local timing = require("luasched.timing")
local events = require("luasched.events")
local args_check = require("luasched.args")
local points = require("luasched.points")   -- the extension-point table, from C
local views = require("luasched.views")
local state_guard = require("luasched.state_guard")

local M = {}

--- A stand-in's or a guard's hook -> the plugin's own hook it calls (errors
--- and logs name the latter).
M.hook_source = setmetatable({}, { __mode = "k" })

-- instance -> the name it was registered under (the configuration's): errors
-- and the runtime's tables use it, so a plugin that changes its own `name`
-- (self.name, P.name) is still reported as itself. An instance the runtime
-- did not build (the test kit's) is named by its own field.
local name_of = setmetatable({}, { __mode = "k", __index = function(_, inst) return inst.name end })
M.name_of = name_of

-- What plugin code runs outside a cycle (loading, init, hints...): C keeps
-- the text so a call its watchdog cuts off can still be attributed.
local last_note
local function note(fmt, ...)
  local text = string.format(fmt, ...)
  if text ~= last_note then   -- the queue calls sort_key for every pod: one C call per change
    last_note = text
    C.ls_lua_note(text)
  end
end
M.note = note
loader.set_note(note)

-- note() for a hook of an instance: 'plugin "X" (hook at file:line)', made
-- once per instance and hook (when the profile is built: not under a call's
-- budget).
local note_texts = setmetatable({}, { __mode = "k" })
local function note_text_of(inst, hook)
  local t = note_texts[inst]
  if t == nil then t = {}; note_texts[inst] = t end
  local text = t[hook]
  if text == nil then
    local fn = inst[hook]
    fn = M.hook_source[fn] or fn   -- the plugin's own hook behind a guard or the test kit's recorder
    local info = type(fn) == "function" and debug.getinfo(fn, "S")
    if info and info.what == "Lua" then
      text = string.format("plugin %q (%s at %s:%d)", tostring(name_of[inst]), hook, info.short_src, info.linedefined)
    else
      text = string.format("plugin %q (%s)", tostring(name_of[inst]), hook)
    end
    t[hook] = text
  end
  return text
end

local function note_text(inst, hook)
  local text = note_text_of(inst, hook)
  if text ~= last_note then
    last_note = text
    C.ls_lua_note(text)
  end
end

-- The hooks noted by the runners (queue side and sign).
local NOTED_HOOKS = { "pre_enqueue", "sort_key", "less", "sign" }

-- The text of an error value a plugin raised: never runs plugin code (a
-- table's __tostring), whatever was raised.
local function describe(err)
  local t = type(err)
  if t == "string" then return err end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(err) end
  return "(a " .. t .. " was raised as the error)"
end
M.describe_error = describe

-- A plugin's message as a load error shows it: at most 300 characters (a
-- validate returning a megabyte string printed it whole).
local function shortened(text)
  if #text <= 300 then return text end
  return text:sub(1, 300) .. "... (" .. #text .. " characters)"
end

-- xpcall's handler for plugin calls: an error raised below a plugin's frame
-- (inside a luasched function it called, or by the FFI) is prefixed with the
-- plugin's own file:line, the innermost plugin frame on the stack.
-- The plugin frames of the stack an error was raised on, innermost first:
-- explain shows them with the Error (see dispatch's fail_with).
local last_trace = { msg = nil, text = nil }

-- A guarded hook's own function -> its hook name: the guard calls it through
-- P[hook], so the frame carries no name of its own; the traceback names it
-- as the plugin wrote it ("in function 'filter'").
local hook_name_of = setmetatable({}, { __mode = "k" })

local function plugin_frames(from)
  local out = {}
  for level = from, 60 do
    local info = debug.getinfo(level, "Slnf")
    if not info then break end
    if loader.is_plugin_source(info.source) then
      local name = info.name or hook_name_of[info.func]
      local fn = name and ("function '" .. name .. "'")
        or string.format("function <%s:%d>", info.short_src, info.linedefined)
      out[#out + 1] = string.format("%s:%d: in %s", info.short_src, info.currentline, fn)
      if #out == 20 then break end
    end
  end
  return table.concat(out, "\n")
end

--- The plugin frames of the last located error, if `msg` (the Error's text)
--- carries that error's message.
function M.traceback_for(msg)
  local t = last_trace
  if t.msg and t.text ~= "" and msg:find(t.msg, 1, true) then return t.text end
  return nil
end

-- This file's own place in a message: a plugin's hook is called by the
-- guard below (guarded_hook, not a tail call: it checks the memory share
-- after the hook), so an ls.* function a hook tail-called and that raised at
-- its caller's level named the guard's line. That is no place of the
-- plugin's: it is left out (the plugin's hook is named instead).
local OWN_PLACE = "^" .. debug.getinfo(1, "S").short_src:gsub("%p", "%%%0") .. ":%d+: "

-- The plugin whose hook the runtime called (dispatch.lua's running_plugin).
local running_plugin = function() return nil end

--- Tells locate which plugin's hook runs (dispatch.lua, when it attaches).
function M.attach_running(fn) running_plugin = fn end

-- 'plugin "Probe" (FILE:LINE, its code run in Other's call): ' starts the
-- message of an error raised by one plugin's code that another plugin's
-- call ran (a metamethod or a function Probe left where Other reads it):
-- it names the plugin whose code ran, the pod's Error the called one's
-- point. The same words as C's cut-offs (runtime_blame.c). Only the text
-- locate made is taken for one (a plugin raising those words itself names
-- no other plugin: its own file:line comes first, as for any message).
local last_blamed
local function blamed(msg, info, owner)
  local called = running_plugin()
  if owner == nil or called == nil or owner == called then return msg end
  local place = info.short_src .. ":" .. info.currentline
  if msg:sub(1, #place + 2) == place .. ": " then msg = msg:sub(#place + 3) end
  last_blamed = string.format("plugin %q (%s, its code run in %s's call): %s", owner, place, called, msg)
  return last_blamed
end

--- Whether `msg` holds the text locate made naming the plugin whose code
--- ran in another's call.
function M.is_blamed(msg) return last_blamed ~= nil and msg:find(last_blamed, 1, true) ~= nil end

local function locate(err)
  local msg = describe(err):gsub(OWN_PLACE, "", 1)
  if msg == last_blamed then return msg end   -- located already, raised again on the way out
  last_trace.msg, last_trace.text = nil, nil
  for level = 2, 50 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if loader.is_plugin_source(info.source) then
      if msg:sub(1, #info.short_src + 1) ~= info.short_src .. ":" then
        msg = info.short_src .. ":" .. info.currentline .. ": " .. msg
      end
      -- (a module two plugins require names no one: its position only)
      msg = blamed(msg, info, loader.plugin_of_source(info.source))
      -- the frames after the message: a handler that fails (a stack overflow
      -- leaves it little room) must not cost the message its position
      if not msg:find("stack overflow", 1, true) then
        local ok, frames = pcall(plugin_frames, level)
        if ok then last_trace.msg, last_trace.text = msg, frames end
      end
      return msg
    end
  end
  return msg
end
M.locate_error = locate
M.note_text = note_text

local plain_pcall = pcall

local HOOKS = points.hooks

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

-- instance -> its plugin's hooks as the profile was built: an error names
-- where the hook is from these, not from what the plugin assigned since
-- (self.filter = other reported other's line).
local hooks_at_build = setmetatable({}, { __mode = "k" })

--- The hook `hook` of an instance as its profile was built (nil when the
--- runtime did not build it).
function M.hook_at_build(inst, hook)
  local own = hooks_at_build[inst]
  return own and own[hook]
end

--- The file of an instance's plugin, as the loader recorded it (an instance
--- the runtime did not build, the test kit's, by its own field).
function M.file_of(inst)
  local P = plugin_of[inst]
  local file = P and loader.file_of(P)
  if file then return file end
  return rawget(inst, "file") or (P and rawget(P, "file"))
end

-- "file:line: path: " of a plugin's args in the configuration (`where`, from
-- the config loader: source, line, path, lines = { field -> line }) for a
-- message `why`: the line of the field the message starts with
-- ("scoringStrategy.type: ...") when the loader saw it, else the args' line.
local function where_of(where, why)
  if not where then return "" end
  local field = type(why) == "string" and why:match("^([%w_%.]+)[%[:]")
  local line = field and where.lines and where.lines[field] or where.line
  if line and line > 0 then return string.format("%s:%d: %s: ", where.source, line, where.path) end
  return string.format("%s: %s: ", where.source, where.path)
end

-- The pods (p), NodeInfos (n) and lists of NodeInfos (N) among each hook's
-- arguments after self, by position ("-": another value; add_pod's NodeInfo is a clone the handle
-- keeps alive while the plugin holds it, and finds again by identity). A plugin that is not built-in gets them as
-- references that carry the generation of the call (views.lua): one kept past
-- its call raises an error naming the plugin when read, instead of reading
-- memory the cache freed or reused. Built-in plugins get the structs.
local REF_ARGS = {
  pre_enqueue = "p", sort_key = "p", less = "pp", sign = "p", pre_filter = "-p", filter = "-pn", post_filter = "-p",
  pre_score = "-pN", score = "-pn", normalize_score = "-p-N", add_pod = "-pp", remove_pod = "-pp", reserve = "-p",
  unreserve = "-p", permit = "-p", pre_bind_pre_flight = "-p", pre_bind = "-p", bind = "-p", post_bind = "-p",
}

-- A hook of P that hands its pods and NodeInfos on as references (a tail
-- call: the plugin's frames are the only ones its errors show).
-- A "-" first is the CycleState: the plugin gets its own side of it
-- (state_guard.lua), never a built-in's entries.
-- After a hook's call: ls._within_share holds a plugin that is not
-- built-in to its share of the memory limit (the built-ins keep the last
-- eighth for their own work).
local gc, within_share = collectgarbage, ls._within_share

-- After a plugin's load and init that grew the state (by `grown` bytes):
-- the bytes the state holds when that left it past the share (its garbage
-- collected), else nil. Checked when the profile is built: a plugin holding
-- memory from its top-level code or init was never checked by its hooks (a
-- hook that does not grow the state is not cut off).
local function over_share(grown)
  local share = ls._memory_share()
  if share == nil or grown <= 0 or gc("count") * 1024 <= share then return nil end
  gc("collect")
  local held = gc("count") * 1024
  return held > share and held or nil
end

local function guarded_hook(P, hook, kinds)
  local maker = { p = views.pod_ref, n = views.node_info_ref, N = views.ref_node_list }
  local w1, w2, w3, w4 = maker[kinds:sub(1, 1)], maker[kinds:sub(2, 2)], maker[kinds:sub(3, 3)], maker[kinds:sub(4, 4)]
  local with_state, for_plugin = kinds:sub(1, 1) == "-", state_guard.for_plugin
  local share = ls._memory_share()
  return function(self, a1, a2, a3, a4, a5, a6)
    if with_state then a1 = for_plugin(a1) end
    if w1 then a1 = w1(a1) end
    if w2 then a2 = w2(a2) end
    if w3 then a3 = w3(a3) end
    if w4 then a4 = w4(a4) end
    if not share then return P[hook](self, a1, a2, a3, a4, a5, a6) end
    return within_share(gc("count") * 1024, P[hook](self, a1, a2, a3, a4, a5, a6))
  end
end

local function guard_hooks(inst, P)
  if loader.is_builtin(P) then return end
  for hook, kinds in pairs(REF_ARGS) do
    local fn = P[hook]
    if type(fn) == "function" then
      local g = guarded_hook(P, hook, kinds)
      M.hook_source[g] = fn   -- errors and logs name the plugin's own hook
      hook_name_of[fn] = hook
      rawset(inst, hook, g)
    end
  end
end

-- `where` (optional) is the config's file:line of the plugin's args.
local function instantiate(P, name, args, profile_name, where)
  note("plugin %q (%s: checking its args)", P.name, tostring(P.file))
  local ok, aerr = args_check.check(P, args, where)
  if not ok then return nil, aerr, aerr end
  local inst = setmetatable({
    name = P.name,
    args = ls.merge_args(P.defaults, args),
    profile = profile_name,
  }, P)
  plugin_of[inst] = P
  name_of[inst] = name
  loader.adopt(inst, P)
  guard_hooks(inst, P)
  local own = {}
  for _, h in ipairs(HOOKS) do
    local fn = rawget(P, h)
    if type(fn) == "function" then own[h] = fn end
  end
  hooks_at_build[inst] = own
  if type(P.validate) == "function" then
    local vok, verr = plain_pcall(P.validate, inst.args)
    if not vok or (verr ~= nil and verr ~= true) then
      local why = describe(verr)
      local at = where_of(where, why)
      if vok and type(verr) ~= "string" then   -- returned, not raised: say so, by its type
        why = "validate returned a " .. type(verr) .. ", expected nil, true or a message"
      end
      return nil, string.format("%sargs of plugin %q are not valid: %s", at, P.name, shortened(why)), why
    end
  end
  local before_init = gc("count") * 1024
  if type(P.init) == "function" then
    note("plugin %q (%s: init)", P.name, tostring(P.file))
    local iok, err = plain_pcall(P.init, inst, inst.args)
    if not iok then
      local why = describe(err)
      return nil, string.format("%sinitializing plugin %q: %s", where_of(where, why), P.name, shortened(why)), why
    end
  end
  local held = not loader.is_builtin(P) and over_share(loader.load_growth(P) + gc("count") * 1024 - before_init)
  if held then
    local why = string.format("its top-level code and init left its Lua state holding %d bytes, past the %d its " ..
      "plugins may hold of the Lua memory limit (the last eighth is kept for the built-in plugins)", held,
      ls._memory_share())
    return nil, string.format("%splugin %q (%s): %s", where_of(where, why), name, tostring(M.file_of(inst)), why), why
  end
  return inst
end

-- The runners' checks of a Filter status and a Score value (dispatch.lua),
-- given to M.build for the compiled loops.
local checked_filter_status, to_score

local function compile_loops(prof, i)
  local filters = prof.points.filter or {}
  prof.filter_index = {}
  for k, inst in ipairs(filters) do prof.filter_index[name_of[inst]] = k end
  prof.filter_loop, prof.filter_one =
    loops.filter(filters, checked_filter_status, "filter loop of profile " .. i)
  -- the same loops, timing every call, for the sampled cycles (metrics)
  local timed = { now = timing.now, observe = timing.observe, ep = C.LS_EP_FILTER }
  prof.filter_loop_timed = loops.filter(filters, checked_filter_status, "timed filter loop of profile " .. i, timed)
  prof.score_loops, prof.score_loops_timed = {}, {}
  for k, inst in ipairs(prof.points.score or {}) do
    prof.score_loops[k] = loops.score(inst, to_score, "score loop of " .. name_of[inst])
    prof.score_loops_timed[k] = loops.score(inst, to_score, "timed score loop of " .. name_of[inst],
      { now = timing.now, observe = timing.observe, ep = C.LS_EP_SCORE, index = k - 1 })
  end
  local scores, score_names = prof.points.score or {}, {}
  for k, inst in ipairs(scores) do score_names[k] = name_of[inst] end
  prof.score_chain = loops.score_chain(score_names, prof.score_loops, "score chain of profile " .. i)
  prof.score_chain_timed = loops.score_chain(score_names, prof.score_loops_timed, "timed score chain of profile " .. i)
  -- the indices of the Score plugins that have a NormalizeScore
  prof.normalizers = {}
  for k, inst in ipairs(scores) do
    if inst.normalize_score then prof.normalizers[#prof.normalizers + 1] = k end
  end
  prof.skip = {}
end

--- An instance of plugin table P as a profile makes it (args checked and
--- merged over its defaults, validate and init run), registered as `name`.
--- Returns it, or nil, a message naming the plugin and the plugin's own text.
M.instantiate = instantiate


--- `stand_in` runs in a profile for `inst` (the test kit's recorder around an
--- instance): it is named, and its events read, as `inst`.
local stood_for = setmetatable({}, { __mode = "k" })   -- stand-in -> the instance
function M.stand_in(stand_in, inst)
  plugin_of[stand_in] = plugin_of[inst]
  name_of[stand_in] = name_of[inst]
  stood_for[stand_in] = inst
end

-- Extension points whose plugins can reject a pod, so their events matter.
local REJECTING = points.rejecting

local registrations, hints = {}, {}

local function register_events(prof, profile_index, seen)
  for _, hook in ipairs(REJECTING) do
    for _, inst in ipairs(prof.points[hook] or {}) do
      if not seen[name_of[inst]] then
        seen[name_of[inst]] = true
        local regs, err = events.check(plugin_of[inst])
        if not regs then return nil, err end
        for _, r in ipairs(regs) do
          local hint_id = 0
          if r.hint then
            hints[#hints + 1] = { fn = r.hint, inst = stood_for[inst] or inst }
            hint_id = #hints
          end
          registrations[#registrations + 1] = {
            profile = profile_index, plugin = name_of[inst], resource = r.resource,
            actions = r.actions, hint = hint_id,
          }
        end
      end
    end
  end
  return true
end

-- A file on the plugin path named as a built-in replaces it only in a
-- profile that opts in (luasched: {overrideBuiltins: [Name]}): otherwise a
-- node_resources_fit.lua left on the path silently replaced NodeResourcesFit.
local function shadow_problem(spec, name, P)
  if not loader.shadows(P) or (spec.override_builtins or {})[name] then return nil end
  return string.format("plugin %q: %s on the plugin path has the name of the built-in plugin %s and would " ..
    "replace it; to replace the built-in, list it in the profile's luasched: {overrideBuiltins: [%s]}, " ..
    "otherwise rename the plugin (and its file)", name, tostring(P.file), loader.shadows(P), name)
end

--- Builds every profile's plugin instances. `specs[i]` = { name=, points =
--- { hook = { plugin names in run order } }, args = { Plugin = {...} },
--- instances = { Plugin = an instance M.instantiate made } (optional: the
--- test kit's, used as they are) }.
--- `with` = { new_handle = handle.new, filter_status =, to_score = } (the
--- runners' checks of what Filter and Score return, for the compiled loops).
--- Returns the list of profiles, or nil and a message.
function M.build(specs, with)
  checked_filter_status, to_score = with.filter_status, with.to_score
  local built = {}
  registrations, hints = {}, {}
  for i, spec in ipairs(specs) do
    local prof = { name = spec.name, points = {}, instances = {}, given_args = spec.args or {} }
    for hook, names in pairs(spec.points) do
      local list = {}
      for _, name in ipairs(names) do
        local inst = prof.instances[name] or (spec.instances and spec.instances[name])
        if inst then
          prof.instances[name] = inst
        else
          note("plugin %q (loading its file)", name)
          local P, err = loader.load(name)
          if not P then return nil, err end
          local shadowed = shadow_problem(spec, name, P)
          if shadowed then return nil, shadowed end
          inst, err = instantiate(P, name, spec.args and spec.args[name], spec.name,
            spec.args_at and spec.args_at[name])
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
    for _, inst in pairs(prof.instances) do
      for _, hook in ipairs(NOTED_HOOKS) do note_text_of(inst, hook) end
    end
    prof.handle = with.new_handle(prof)
    for _, inst in pairs(prof.instances) do inst.handle = prof.handle end
    local ok, err = register_events(prof, i - 1, {})
    if not ok then return nil, err end
    built[i] = prof
  end
  return built
end

--- Per profile (a list in profile order), plugin name -> its args completed
--- with the plugin's declared defaults (ls.merge_args), for --write-config-to:
--- every plugin of the profile, and every plugin its pluginConfig names (as
--- given when the plugin cannot be loaded), and the plugins of `always` (a list of
--- names: upstream's typed-args plugins). `profiles` is what M.build made.
function M.completed_args(profiles, always)
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
    -- plugins enabled where no point runs them (a multiPoint plugin disabled
    -- at each of its points) still have their args written, as upstream's
    for _, name in ipairs(always or {}) do
      if t[name] == nil then
        local P = loader.load(name)
        if P then t[name] = ls.merge_args(P.defaults, nil) end
      end
    end
    -- a plugin's own defaulting beyond its declared defaults (upstream's
    -- SetDefaults_<Name>Args: a weight of 0 becomes 1, ...)
    for name, args in pairs(t) do
      local P = loader.load(name)
      if P and type(P.complete_args) == "function" and type(args) == "table" then
        local ok, completed = pcall(P.complete_args, args)
        if ok and type(completed) == "table" then t[name] = completed end
      end
    end
    out[i] = t
  end
  return out
end

-- Extension point hooks in run order (the order C lists them in a spec).
local POINT_HOOKS = points.point_hooks

-- Every problem of one plugin of a profile: loading, init with the
-- profile's args, its events table, a hook missing at a point it is listed at.
local function check_plugin(spec, label, name, problems)
  local function add(msg) problems[#problems + 1] = "profile " .. label .. ": " .. msg end
  note("plugin %q (loading its file)", name)
  local P, err = loader.load(name)
  if not P then return add(err) end
  local shadowed = shadow_problem(spec, name, P)
  if shadowed then add(shadowed) end
  local inst, ierr = instantiate(P, name, spec.args and spec.args[name], spec.name, spec.args_at and spec.args_at[name])
  if not inst then add(ierr) end
  local regs, eerr = events.check(P)
  if not regs then add(eerr) end
  for _, hook in ipairs(POINT_HOOKS) do
    for _, listed in ipairs(spec.points[hook] or {}) do
      if listed == name and type(P[hook]) ~= "function" and not (hook == "sort_key" and type(P.less) == "function") then
        add(string.format("plugin %q does not extend %s (no %s hook in %s)", name, hook, hook, tostring(P.file)))
      end
    end
  end
end

--- `luasched check`: the specs M.build takes, but every plugin of every
--- profile is checked and the result is the list of problems (strings, each
--- naming its profile), empty when all is well. Nothing is kept.
--- The second result: per enabled plugin, the file it resolves to
--- ("profile P: plugin N: FILE (built-in)", "(plugin path)" or "(plugin
--- path, replaces the built-in FILE)"), in the order the plugins are enabled.
function M.check(specs)
  local problems, resolved = {}, {}
  for i, spec in ipairs(specs) do
    -- a profile without a name (already a problem of the file) goes by its index
    local label = spec.name ~= "" and spec.name or string.format("profiles[%d]", i - 1)
    for name in pairs(spec.override_builtins or {}) do
      if not loader.builtin_file(name) then
        problems[#problems + 1] = string.format("profile %s: luasched.overrideBuiltins: %q is not a built-in " ..
          "plugin (nothing to replace)", label, name)
      end
    end
    local seen = {}
    for _, hook in ipairs(POINT_HOOKS) do
      for _, name in ipairs(spec.points[hook] or {}) do
        if not seen[name] then
          seen[name] = true
          check_plugin(spec, label, name, problems)
          local P = loader.load(name)
          if P then
            local where = loader.is_builtin(P) and "built-in" or (loader.shadows(P) and
              "plugin path, replaces the built-in " .. loader.shadows(P) or "plugin path")
            resolved[#resolved + 1] = string.format("profile %s: plugin %s: %s (%s)", label, name, P.file, where)
          end
        end
      end
    end
  end
  return problems, resolved
end

--- Every profile's event registrations (see dispatch.registrations).
function M.registrations()
  return registrations
end

--- Queueing hint `id`: { fn =, inst = }, or nil.
function M.hint(id)
  return hints[id]
end

return M
