-- luasched: the module plugins require. It binds libluasched through the FFI
-- (cdefs generated from the public headers), checks the ABI version, and gives
-- plugins statuses, plugin declaration, interned strings and the C helpers.
--
-- Statuses are registered with C once and then passed by id: the hot loops in
-- dispatch.lua move integers, and a plugin returning a cached status object
-- allocates nothing per node.
--
-- Over 800 lines: it is the whole API plugins see (one `require`), and each C
-- helper is a plain local function with its argument checks so the JIT inlines
-- the FFI call; the sandbox, views, args and events are apart.
local ffi = require("ffi")
local C = require("luasched.clib")
local sandbox = require("luasched.sandbox")
local views = require("luasched.views")
local unwrap = views.unwrap
local labels_of, selector_of = views.unwrap_as("ls_labels"), views.unwrap_as("ls_selector")

-- C helpers take pointers, and the FFI passes nil as NULL: every helper
-- checks its arguments first, so a plugin gets an error, never a crash.
local preferred_list = views.maker("const ls_preferred_term *")
local position_list = views.maker("const uint32_t *")

local function need(v, what, level)
  if v == nil then error("luasched: " .. what .. " is nil", (level or 2) + 1) end
  return v
end
-- A plugin's value in a message: numbers, booleans and nil as they print,
-- strings quoted (at most 64 characters), anything else by its type (its
-- __tostring is the plugin's code: not run for a message).
local function shown(v)
  local t = type(v)
  if t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  if t == "string" then return #v > 64 and string.format("%q...", v:sub(1, 64)) or string.format("%q", v) end
  return "a " .. t
end

local function need_number(v, what)
  if type(v) ~= "number" or v ~= v then
    error("luasched: " .. what .. " must be a number, got " .. shown(v), 3)
  end
  return v
end

-- Every public name below carries its doc comment (`---`): core/gen_docs.lua
-- makes docs/plugins/api.md and the LuaLS annotations from them, and fails
-- the build's docs test on a public name without one.

---@section Status codes and constants
local ls = {
  SUCCESS = C.LS_SUCCESS,               --- Status code (`st.code`) of Success: the hook passed the pod or node.
  --- Status code of Error: the attempt fails and the pod backs off (no plugin is its rejector).
  ERROR = C.LS_ERROR,
  UNSCHEDULABLE = C.LS_UNSCHEDULABLE,   --- Status code of Unschedulable: rejected; preemption may help.
  UNSCHEDULABLE_AND_UNRESOLVABLE = C.LS_UNRESOLVABLE, --- Same as ls.UNRESOLVABLE (upstream's name).
  --- Status code of UnschedulableAndUnresolvable: rejected; preemption cannot help on that node.
  UNRESOLVABLE = C.LS_UNRESOLVABLE,
  WAIT = C.LS_WAIT,                     --- Status code of Wait (Permit, PreBind): the pod waits (see ls.wait).
  --- Status code of Skip: the plugin has nothing to do for this pod (PreFilter, PreScore, Bind, PreBindPreFlight).
  SKIP = C.LS_SKIP,
  --- Status code of Pending: rejected, waiting for something outside the scheduler (counts as Unschedulable).
  PENDING = C.LS_PENDING,
  MAX_NODE_SCORE = C.LS_MAX_NODE_SCORE, --- Highest score a node may end with after NormalizeScore (100).
  MIN_NODE_SCORE = C.LS_MIN_NODE_SCORE, --- Lowest score a node may end with after NormalizeScore (0).
  QUEUE = C.LS_HINT_QUEUE,              --- A queueing hint's answer: the event may make the pod schedulable, retry it.
  QUEUE_SKIP = C.LS_HINT_SKIP,          --- A queueing hint's answer: the event does not help the pod, leave it waiting.
  OP_IN = C.LS_OP_IN,                   --- Selector requirement operator (`requirement.op`): In.
  OP_NOT_IN = C.LS_OP_NOT_IN,           --- Selector requirement operator: NotIn.
  OP_EXISTS = C.LS_OP_EXISTS,           --- Selector requirement operator: Exists.
  OP_DOES_NOT_EXIST = C.LS_OP_DOES_NOT_EXIST, --- Selector requirement operator: DoesNotExist.
  OP_GT = C.LS_OP_GT,                   --- Selector requirement operator: Gt (`requirement.number`).
  OP_LT = C.LS_OP_LT,                   --- Selector requirement operator: Lt (`requirement.number`).
}

-- The values of the enum fields plugins read (model.h), from C by name:
-- ls.RES_CPU is LS_RES_CPU, ls.VOL_PVC is LS_VOL_PVC (ls_volume.source), ...
---@section Enum values of view fields
for _, name in ipairs({
  "RES_CPU",            --- Resource slot of cpu in a Resources vector (`v[ls.RES_CPU]`, millicores).
  "RES_MEMORY",         --- Resource slot of memory (bytes).
  "RES_EPHEMERAL",      --- Resource slot of ephemeral-storage (bytes).
  "RES_PODS",           --- Resource slot of the pod count (node side: allocatable pods).
  "RES_FIRST_SCALAR",   --- First slot of extended resources and hugepages (ls.resource_name(i) names them).
  "EFFECT_ALL",         --- Taint effect value meaning every effect (a toleration without effect).
  "EFFECT_NO_SCHEDULE", --- Taint effect NoSchedule (`taint.effect`).
  "EFFECT_PREFER_NO_SCHEDULE", --- Taint effect PreferNoSchedule.
  "EFFECT_NO_EXECUTE",  --- Taint effect NoExecute.
  "TOL_EQUAL",          --- Toleration operator Equal (`toleration.op`).
  "TOL_EXISTS",         --- Toleration operator Exists.
  "DO_NOT_SCHEDULE",    --- Spread constraint whenUnsatisfiable DoNotSchedule.
  "SCHEDULE_ANYWAY",    --- Spread constraint whenUnsatisfiable ScheduleAnyway.
  "POLICY_HONOR",       --- Spread constraint nodeAffinityPolicy / nodeTaintsPolicy Honor.
  "POLICY_IGNORE",      --- Spread constraint nodeAffinityPolicy / nodeTaintsPolicy Ignore.
  "PROTO_TCP",          --- Port protocol TCP (`port.protocol`).
  "PROTO_UDP",          --- Port protocol UDP.
  "PROTO_SCTP",         --- Port protocol SCTP.
  "VOL_OTHER",          --- Volume source (`volume.source`): any source the volume plugins do not read.
  "VOL_PVC",            --- Volume source persistentVolumeClaim (`volume.claim` is claimName).
  "VOL_EPHEMERAL",      --- Volume source ephemeral (`volume.claim` is "<pod>-<volume>").
  "VOL_GCE_PD",         --- Volume source gcePersistentDisk.
  "VOL_AWS_EBS",        --- Volume source awsElasticBlockStore.
  "VOL_ISCSI",          --- Volume source iscsi.
  "VOL_RBD",            --- Volume source rbd.
  "VOL_AZURE_DISK",     --- Volume source azureDisk.
  "VOL_CINDER",         --- Volume source cinder.
  "VOL_CSI",            --- Volume source csi (inline; `volume.handle` is the driver).
  "VOL_PORTWORX",       --- Volume source portworxVolume.
  "PHASE_PENDING",      --- Pod phase Pending (`pod.phase`).
  "PHASE_RUNNING",      --- Pod phase Running.
  "PHASE_SUCCEEDED",    --- Pod phase Succeeded.
  "PHASE_FAILED",       --- Pod phase Failed.
  "PHASE_UNKNOWN",      --- Pod phase Unknown.
  "PREEMPT_LOWER_PRIORITY", --- Pod preemptionPolicy PreemptLowerPriority (`pod.preemption_policy`).
  "PREEMPT_NEVER",      --- Pod preemptionPolicy Never.
  "CLAIM_NAMED",        --- Resource claim state (`claim.state`): resourceClaimName given.
  "CLAIM_TEMPLATE_PENDING", --- Resource claim state: from a template, not created yet.
  "CLAIM_TEMPLATE_CREATED", --- Resource claim state: from a template, created (`claim.claim_name` set).
  "CLAIM_TEMPLATE_NONE", --- Resource claim state: from a template, none needed (a null name in status).
  "CLAIM_UNSUPPORTED",  --- Resource claim state: a form luasched does not read.
}) do
  ls[name] = C["LS_" .. name]
end

local code_names = {
  [0] = "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable",
  "Wait", "Skip", "Pending",
}
--- Status code -> its name ("Success", "Error", "Unschedulable", ...), for messages.
---@return table<integer, string>
ls.code_names = code_names

-- ---- helpers plugins share (one copy, in luasched.helpers) ----------------

local helpers = require("luasched.helpers")
---@section Helpers plugins share
--- A shallow copy of table `t`.
---@param t table
---@return table
ls.copy_table = helpers.copy_table
--- Go's math.Round: half away from zero.
---@param x number
---@return number
ls.round = helpers.round
--- Go's integer division: truncated toward zero.
---@param a number
---@param b number
---@return number
ls.idiv = helpers.idiv
--- nil when `key` is a qualified name (upstream's IsQualifiedName), else why it is not.
---@param key string
---@return string?
ls.qualified_name_error = helpers.qualified_name_error
--- Whether `key` is a qualified name (a label key's form).
---@param key string
---@return boolean
ls.is_qualified_name = helpers.is_qualified_name
--- `t[key]`, made by `make(arg or key)` the first time (e.g. one status per distinct message).
---@param t table
---@param key any
---@param make fun(arg: any): any
---@param arg? any
---@return any
ls.memo = helpers.memo
--- `t[key]`, an empty table made the first time.
---@param t table
---@param key any
---@return table
ls.subtable = helpers.subtable

-- ---- strings ------------------------------------------------------------
---@section Strings and labels

-- The plugin whose code is running and its hook (dispatch.lua tells): a plugin
-- allows or rejects a waiting pod as itself only; errors name it.
local running_plugin = function() return nil end
function ls._attach_running_plugin(fn) running_plugin = fn end

-- A profile reads the strings the runtime interned (cluster data, names,
-- its configuration) and those its own plugins made; a string another
-- profile's plugins made (ls.intern, a status message) is not readable here,
-- even by walking ids. One state holds one profile: `made` is per profile.
local str_cache = {}
local made = {}   -- id -> true: interned by this state's plugins (charged to its memory)

-- The profile this state runs (its schedulerName) and what its plugins may
-- intern: C keeps interned strings for good, so they are counted per
-- profile against the profile's Lua memory limit (1 GiB when unlimited).
local DEFAULT_STRINGS_CAP = 2 ^ 30
local account, strings_cap, account_name = 0, DEFAULT_STRINGS_CAP, ""
-- What plugins that are not built-in may hold of the state's memory limit:
-- all but its last eighth, kept for the built-in plugins. A plugin holding
-- the state at the limit's edge had the next built-in to allocate cut off
-- and blamed (InterPodAffinity's PreScore, for a pod of its own: attacker
-- round 5). nil when the state has no limit.
local memory_share
local gc_count = collectgarbage

--- Sets the profile this state's plugins intern for (dispatch.build).
function ls._set_profile(name, memory_limit)
  account_name = name or ""
  account = C.ls_intern(account_name, #account_name)
  strings_cap = (memory_limit and memory_limit > 0) and memory_limit or DEFAULT_STRINGS_CAP
  memory_share = (memory_limit and memory_limit > 0) and memory_limit - math.floor(memory_limit / 8) or nil
end
--- The bytes a state's plugins that are not built-in may hold after their
--- calls (nil: no limit); profiles.lua checks it after each of their hooks.
function ls._memory_share() return memory_share end

--- After a call of plugin code that is not built-in (a hook, a queueing hint,
--- a clone_state), its results passed through: a call that grew the state
--- (from `before` bytes) past the share, its garbage collected, is cut off as
--- one past the memory limit and the state rebuilt, naming that plugin.
function ls._within_share(before, ...)
  local share = memory_share
  if share ~= nil then
    local after = gc_count("count") * 1024
    if after > share and after > before then
      gc_count("collect")
      after = gc_count("count") * 1024
      if after > share then C.ls_lua_memory_share_exceeded(after) end
    end
  end
  return ...
end
--- The running profile's schedulerName id (the waiting pods it may see).
function ls._profile_id() return account end

--- The Lua string of an interned id ("" for 0). Cached: ids never change.
---@param id integer an interned string id (pod.name, a label value, ...)
---@return string
function ls.str(id)
  local n = tonumber(id)
  if n == nil then error("ls.str: expected an interned string id (a number), got a " .. type(id), 2) end
  -- NaN raised "table index is NaN" at this file's line, not the plugin's
  -- (attacker round 4); a fraction or a number past 32 bits is no id either
  if n ~= n or n % 1 ~= 0 or n < 0 or n >= 2 ^ 32 then
    error("ls.str: expected an interned string id (a whole number from 0), got " .. tostring(n), 2)
  end
  id = n
  local s = str_cache[id]
  if s == nil then
    if C.ls_str_plugin_made(id) and not made[id] then
      error(string.format("ls.str: string id %d was made by another profile's plugins: profile %q reads only " ..
        "the strings it made and those the scheduler gave it", id, account_name), 2)
    end
    s = ffi.string(C.ls_str_get(id), C.ls_str_len(id))
    str_cache[id] = s
  end
  return s
end

local function strings_full()
  local within = ""
  if memory_share ~= nil and views.wants_refs() then   -- a plugin that is not built-in: its share
    within = string.format("the %d bytes its plugins may hold of ", memory_share)
  end
  return string.format("luasched: the plugins of profile %q have interned %d bytes of distinct strings " ..
    "(ls.intern, status messages), which with its Lua heap reach %sthe profile's memory limit of %d bytes; they " ..
    "are never freed, no more are taken", account_name, tonumber(C.ls_intern_plugin_bytes(account)), within,
    strings_cap)
end

-- A new string is taken while the profile's strings and its Lua heap stay
-- within its memory limit.
-- `reserve`: bytes past the limit the runtime may still take (the text of an
-- error that reports the cap).
local function intern_charged(s, reserve)
  -- a plugin that is not built-in interns within its share (the built-ins keep the rest)
  local cap = memory_share ~= nil and views.wants_refs() and memory_share or strings_cap
  local room = cap + (reserve or 0) - gc_count("count") * 1024
  local id = C.ls_intern_plugin(s, #s, account, room > 0 and room or 0)
  if id ~= 0 then made[id] = true end
  return id
end

--- The id of a string, interning it. Do this at load time (init), not per node.
---@param s string
---@return integer
function ls.intern(s)
  if type(s) ~= "string" then error("ls.intern: expected a string, got a " .. type(s), 2) end
  local id = intern_charged(s)
  if id == 0 then error(strings_full(), 2) end
  return id
end

-- A key given as text (ls.label(labels, "tier")): the FFI said "cannot
-- convert 'string' to 'unsigned int'"; this says what to pass instead.
local function key_as_text(fn, key)
  error(string.format('%s: the key is an interned id, not the text %q: ls.intern(%q) once, in init', fn, key, key), 3)
end

--- The value id of label `key_id` in a label set (0 when absent); works for annotations too.
---@param labels ls.Labels pod.labels, node.labels, pod.annotations, ...
---@param key_id integer the key's interned id (ls.intern at init)
---@return integer
function ls.label(labels, key_id)
  if labels == nil then need(labels, "ls.label: the label set") end
  if type(key_id) == "string" then key_as_text("ls.label", key_id) end
  return C.ls_labels_get(labels_of(labels), key_id)
end

--- Whether a label set has label `key_id` (whatever its value).
---@param labels ls.Labels
---@param key_id integer
---@return boolean
function ls.has_label(labels, key_id)
  if labels == nil then need(labels, "ls.has_label: the label set") end
  if type(key_id) == "string" then key_as_text("ls.has_label", key_id) end
  return C.ls_labels_has(labels_of(labels), key_id)
end

-- ---- statuses -----------------------------------------------------------
---@section Statuses

-- A status is read-only (a plugin returns the same object for many nodes, and
-- the memo shares it between plugins): its fields live in a hidden table, its
-- metatable is hidden, and only the objects made here count as statuses.
local genuine = setmetatable({}, { __mode = "k" })

local function status_text(st)
  return code_names[st.code] .. ": " .. st.message
end

local function read_only_status(_, k)
  error("a status is read-only (assigning " .. tostring(k) .. ")", 2)
end

local memo = {}
for code = 0, 6 do memo[code] = {} end

local runtime_made = false   -- true while ls._runtime_error makes a status (not charged)

-- Reasons are strings (or numbers). Raised without a position: the plugin's
-- xpcall handler names the plugin's own line (the caller may be a tail call).
local function check_reasons(reasons)
  for i = 1, #reasons do
    local t = type(reasons[i])
    if t ~= "string" and t ~= "number" then
      error("luasched: a status reason must be a string, got a " .. t .. " (reason " .. i .. ")", 0)
    end
  end
end

local function make_status(code, reasons, extra)
  check_reasons(reasons)
  local message = table.concat(reasons, ", ")
  local joined = table.concat(reasons, "\n")
  -- charged as the plugin's strings: C keeps every status message for good
  if not runtime_made and intern_charged(joined) == 0 then error(strings_full(), 0) end
  local fields = setmetatable({
    code = code,
    message = message,
    id = C.ls_status_register(code, joined, #joined),
  }, { __index = function(_, k)   -- reasons: a fresh copy each time (a status does not change)
    if k == "reasons" then return { unpack(reasons) } end
  end })
  if extra then for k, v in pairs(extra) do fields[k] = v end end
  local st = setmetatable({}, {
    __index = fields, __newindex = read_only_status, __tostring = status_text, __metatable = false,
  })
  genuine[st] = true
  sandbox.mark_frozen(st, "a status")
  return st
end

--- A status with one or more reasons, cached by (code, reasons): calling this
--- with the same text again returns the same object and allocates nothing new
--- after the first call (apart from building the key for several reasons).
---@param code integer ls.SUCCESS .. ls.PENDING
---@param ... string the reasons (joined with ", " in the message)
---@return ls.Status
function ls.status(code, ...)
  if memo[code] == nil then
    error("luasched: ls.status: unknown status code " .. shown(code) .. " (expected ls.SUCCESS .. ls.PENDING)", 0)
  end
  local n = select("#", ...)
  local key
  if n == 1 then key = ... else
    local reasons = { ... }
    check_reasons(reasons)
    key = table.concat(reasons, "\n")
  end
  local st = memo[code][key]
  if st == nil then
    st = make_status(code, n == 1 and { key } or { ... })
    memo[code][key] = st
  end
  return st
end

local status = ls.status
--- An Unschedulable status with these reasons (cached: make it once, in init). The reasons are
--- counted in "0/N nodes are available: ..."; preemption may help.
---@param ... string
---@return ls.Status
function ls.unschedulable(...) return status(C.LS_UNSCHEDULABLE, ...) end
--- An UnschedulableAndUnresolvable status: rejected, and preemption cannot help on that node.
---@param ... string
---@return ls.Status
function ls.unresolvable(...) return status(C.LS_UNRESOLVABLE, ...) end
--- A Pending status: rejected while waiting for something outside the scheduler.
---@param ... string
---@return ls.Status
function ls.pending(...) return status(C.LS_PENDING, ...) end
--- An Error status: the attempt fails with `msg` (wrapped with the point and plugin name) and the pod backs off.
---@param msg string
---@return ls.Status
function ls.error(msg) return status(C.LS_ERROR, msg) end
--- The runtime's Error status for a failed plugin: not charged to the
--- plugins' strings (it must be made even when a plugin used them all up).
local ERROR_RESERVE = 65536
function ls._runtime_error(msg)
  -- kept for good too (the status registry): charged to the profile, with 64
  -- KiB of reserve past its cap for the errors that report it; past that, only
  -- the plugin's name and hook are kept (a bounded number of texts)
  if intern_charged(msg, ERROR_RESERVE) == 0 then
    local name, hook = running_plugin()
    msg = string.format("plugin %s failed%s; its message is not kept: profile %q reached its strings cap",
      name and string.format("%q", name) or "?", hook and (" in " .. hook) or "", account_name)
  end
  runtime_made = true
  local ok, st = pcall(status, C.LS_ERROR, msg)
  runtime_made = false
  if not ok then error(st, 0) end
  return st
end
--- Same as ls.unresolvable (upstream's name).
---@param ... string
---@return ls.Status
ls.unschedulable_and_unresolvable = ls.unresolvable
--- The Skip status: the plugin has nothing to do for this pod (PreFilter: its Filter is skipped;
--- PreScore: its Score; Bind: the next binder; PreBindPreFlight: no PreBind work).
---@return ls.Status
ls.skip = status(C.LS_SKIP, "")

local wait_memo = {}
local MAX_WAIT_SECONDS = 15 * 60   -- upstream's maxTimeout for a Permit wait

--- Permit's Wait with a timeout in seconds: a finite number from 0 to 900
--- (upstream's 15-minute maximum).
---@param timeout_seconds number
---@return ls.Status
function ls.wait(timeout_seconds)
  local st = wait_memo[timeout_seconds]
  if st == nil then
    if type(timeout_seconds) ~= "number" or timeout_seconds ~= timeout_seconds
        or timeout_seconds < 0 or timeout_seconds > MAX_WAIT_SECONDS then
      error(string.format("ls.wait: the timeout must be a number of seconds from 0 to %d, got %s",
        MAX_WAIT_SECONDS, tostring(timeout_seconds)), 2)
    end
    st = make_status(C.LS_WAIT, { "" }, { timeout = timeout_seconds })
    wait_memo[timeout_seconds] = st
  end
  return st
end

--- The message of a registered status id (as C keeps it).
---@param id integer a status's `id`
---@return string
function ls.status_message(id)
  if id == 0 then return "" end
  return ffi.string(C.ls_status_message(id))
end

--- Whether `v` is a status made by the ls.* constructors (anything else returned by a hook is an error).
---@param v any
---@return boolean
function ls.is_status(v)
  return genuine[v] == true
end

-- ---- plugins ------------------------------------------------------------
---@section Declaring a plugin

local function deep_merge(defaults, given)
  if type(defaults) ~= "table" or type(given) ~= "table" or given[1] ~= nil or defaults[1] ~= nil then
    if given == nil then return defaults end
    return given
  end
  local out = {}
  for k, v in pairs(defaults) do out[k] = v end
  for k, v in pairs(given) do out[k] = deep_merge(defaults[k], v) end
  return out
end
--- Deep-merges `given` over `defaults` (tables merged key by key; lists and other values replaced),
--- as the runtime merges a profile's pluginConfig args over a plugin's defaults.
---@param defaults table
---@param given table?
---@return table
ls.merge_args = deep_merge

local PLUGIN_SPEC = { "defaults", "optional" }   -- the fields of ls.plugin's spec

--- Declares a plugin. `name` is the Kubernetes-style registered name; `spec.defaults`
--- are merged under the profile's pluginConfig args (given values win) and
--- give the args their types (luasched.args); `spec.optional` names args
--- without a default (key -> "string" | "number" | "boolean" | "list" |
--- "object" | "table", or a table for nested optional keys). A plugin may
--- also define `P.complete_args(args)`, returning a new table: the defaulting
--- its declared defaults cannot express (upstream's SetDefaults_<Name>Args),
--- applied to what --write-config-to writes (never to the shared defaults).
--- Another field in `spec` is an error naming the one meant (spec.default: "did you mean defaults?").
---@param name string the registered name (its file is the snake_case name: PreferLabeled -> prefer_labeled.lua)
---@param spec? {defaults?: table, optional?: table}
---@return ls.Plugin
function ls.plugin(name, spec)
  if type(name) ~= "string" or name == "" then error("ls.plugin: a plugin name is required", 2) end
  spec = spec or {}
  if type(spec) ~= "table" then
    error(string.format("ls.plugin(%q, spec): spec must be a table, got %s", name, type(spec)), 2)
  end
  for k in pairs(spec) do
    if k ~= "defaults" and k ~= "optional" then
      local hint = require("luasched.suggest").did_you_mean(k, PLUGIN_SPEC)
      error(string.format("ls.plugin(%q, spec): spec.%s is no field (%s)", name, tostring(k),
        hint and string.format('did you mean "%s"?', hint) or "a spec has defaults and optional"), 2)
    end
  end
  if spec.defaults ~= nil and type(spec.defaults) ~= "table" then
    error(string.format("ls.plugin(%q, spec): spec.defaults must be a table, got %s", name, type(spec.defaults)), 2)
  end
  local P = { name = name, defaults = spec.defaults or {}, optional = spec.optional }
  P.__index = P
  return P
end

--- Whether the --feature-gates gate `name` is on (upstream v1.37's defaults
--- unless the command line changed it; false for a name that is no gate).
--- Gates are set before any plugin loads and never change after.
---@param name string a gate's name, e.g. "OpportunisticBatching"
---@return boolean
function ls.feature_enabled(name)
  if type(name) ~= "string" then error("ls.feature_enabled: a gate name is required", 2) end
  return C.ls_feature_enabled_name(name)
end

-- ---- C helpers, as plain functions so the JIT inlines the FFI call -------
---@section Selectors, affinity, taints

--- Whether a compiled label selector matches a label set (a null selector matches nothing, an empty one all).
---@param sel ls.Selector
---@param labels ls.Labels
---@return boolean
function ls.selector_matches(sel, labels)
  if sel == nil or labels == nil then need(nil, "ls.selector_matches: the selector or the label set") end
  return C.ls_selector_matches(selector_of(sel), labels_of(labels))
end
--- Whether the node satisfies the pod's nodeSelector and required node affinity (NodeAffinity's filter).
---@param pod ls.Pod
---@param node ls.Node the node (ni.node), not the NodeInfo
---@return boolean
function ls.pod_matches_node_affinity(pod, node)
  if pod == nil or node == nil then need(nil, "ls.pod_matches_node_affinity: the pod or the node") end
  return C.ls_pod_matches_node_affinity(unwrap(pod), unwrap(node))
end
--- Whether a compiled NodeSelectorTerm (e.g. pod.preferred_node_affinity[i].term)
--- matches a node (`const ls_node *`); a term with nothing in it matches no node.
---@param term ls.NodeSelectorTerm
---@param node ls.Node
---@return boolean
function ls.node_selector_term_matches(term, node)
  if term == nil or node == nil then need(nil, "ls.node_selector_term_matches: the term or the node") end
  return C.ls_node_selector_term_matches(unwrap(term), unwrap(node))
end

local tolerations_of, taints_of = views.accessor("ls_pod", "tolerations"), views.accessor("ls_node", "taints")

-- The pointer and a count of at most the view's length, for a C call.
local function checked_list(access, v, n, what)
  local p, len = access(v)
  if p == nil then error("luasched: " .. what .. " must be a list from the scheduler (pod.tolerations, ...)", 3) end
  n = need_number(n, what .. "'s count")
  if n < 0 or n > len then
    error(string.format("luasched: %s's count %s is out of range 0..%d", what, tostring(n), len), 3)
  end
  return p, n
end

--- Whether tolerations `tols` (pod.tolerations; its first n) tolerate `taint`.
---@param tols ls.Toleration[] pod.tolerations
---@param n integer how many of them (pod.n_tolerations)
---@param taint ls.Taint
---@return boolean
function ls.tolerates(tols, n, taint)
  local p
  p, n = checked_list(tolerations_of, tols, n, "ls.tolerates: tolerations")
  return C.ls_tolerations_tolerate(p, n, need(taint, "ls.tolerates: the taint"))
end
--- The 0-based index of the first taint whose effect is in `effect_mask` (bits 1 << ls.EFFECT_*)
--- that the tolerations do not tolerate; -1 when every one is tolerated.
---@param taints ls.Taint[] node.taints
---@param n_taints integer
---@param tols ls.Toleration[] pod.tolerations
---@param n_tols integer
---@param effect_mask integer
---@return integer
function ls.find_untolerated_taint(taints, n_taints, tols, n_tols, effect_mask)
  local tp, tl
  tp, n_taints = checked_list(taints_of, taints, n_taints, "ls.find_untolerated_taint: taints")
  tl, n_tols = checked_list(tolerations_of, tols, n_tols, "ls.find_untolerated_taint: tolerations")
  return C.ls_find_untolerated_taint(tp, n_taints, tl, n_tols, need_number(effect_mask, "effect mask"))
end
--- A taint built once (at init) for helpers like NodeUnschedulable's: `key`
--- and `value` are strings ("" or nil value = absent), `effect` an
--- ls.EFFECT_* number. Keep the returned cdata referenced while it is used.
---@param key string
---@param value? string
---@param effect? integer
---@return ls.Taint
function ls.new_taint(key, value, effect)
  local t = ffi.new("ls_taint")
  t.key = ls.intern(key)
  t.value = (value == nil or value == "") and 0 or ls.intern(value)
  t.effect = effect or ls.EFFECT_ALL
  return t
end
--- Whether the pod's tolerations tolerate `taint` (an ls_taint, e.g. from ls.new_taint).
---@param pod ls.Pod
---@param taint ls.Taint
---@return boolean
function ls.pod_tolerates(pod, taint)
  local p, n = tolerations_of(need(pod, "ls.pod_tolerates: the pod").tolerations)
  return C.ls_tolerations_tolerate(p, n, need(taint, "ls.pod_tolerates: the taint"))
end

-- Node selectors built once (at init) from ids, for selectors that come from
-- plugin args rather than from a decoded object (NodeAffinity's
-- addedAffinity): matched by the same C code as the pods' own. The arrays a
-- selector points to are kept alive as long as the selector is referenced.
local selector_memory = setmetatable({}, { __mode = "k" })

-- A validated decimal int64 (optional sign, digits) -> int64_t, exactly.
local function int64_of(s)
  local neg = s:sub(1, 1) == "-"
  local v = 0ULL
  for i = (s:find("%d")), #s do v = v * 10 + (s:byte(i) - 48) end
  return ffi.cast("int64_t", neg and 0ULL - v or v)
end

local writable_selector = ffi.typeof("ls_selector *")
local function fill_requirements(sel, list, keep)
  sel = ffi.cast(writable_selector, sel)   -- a term's nested selector is const (views.lua)
  local n = #list
  local reqs = ffi.new("ls_requirement[?]", math.max(n, 1))
  keep[#keep + 1] = reqs
  for i, r in ipairs(list) do
    local q = reqs[i - 1]
    q.key, q.op = r.key, r.op
    local values = {}
    for j, v in ipairs(r.values or {}) do values[j] = v end
    table.sort(values)                   -- the matcher binary-searches them
    local arr = ffi.new("ls_str[?]", math.max(#values, 1))
    for j, v in ipairs(values) do arr[j - 1] = v end
    keep[#keep + 1] = arr
    q.n_values = #values
    views.set(q, "ls_requirement", "values", arr)
    if r.number ~= nil then q.number = int64_of(r.number) end
  end
  sel.match_nothing, sel.n = 0, n
  views.set(sel, "ls_selector", "reqs", reqs)
end

local function fill_term(t, term, keep)
  fill_requirements(t.exprs, term.exprs or {}, keep)
  fill_requirements(t.fields, term.fields or {}, keep)
end

--- A NodeSelector (terms ORed) for ls.node_selector_matches. Each term is
--- { exprs = {...}, fields = {...} } (expressions ANDed; fields name
--- "metadata.name"), each requirement { key = id, op = ls.OP_*, values = { ids },
--- number = "int64 text" for Gt / Lt }, checked by the caller. A term with
--- nothing in it matches no node, nor does a selector without terms.
---@param terms table[]
---@return ls.NodeSelector
function ls.new_node_selector(terms)
  local keep = {}
  local arr = ffi.new("ls_node_selector_term[?]", math.max(#terms, 1))
  keep[1] = arr
  for i, term in ipairs(terms) do fill_term(arr[i - 1], term, keep) end
  local sel = ffi.new("ls_node_selector")
  sel.n_terms = #terms
  views.set(sel, "ls_node_selector", "terms", arr)
  -- plugins get it read-only (a count changed behind the C matcher's back
  -- would let it read past the arrays)
  local ro = ffi.cast("const ls_node_selector *", sel)[0]
  selector_memory[ro] = { sel, keep }
  return ro
end
--- Whether a NodeSelector (from ls.new_node_selector or a pod's required affinity) matches a node.
---@param sel ls.NodeSelector
---@param node ls.Node
---@return boolean
function ls.node_selector_matches(sel, node)
  if sel == nil or node == nil then need(nil, "ls.node_selector_matches: the selector or the node") end
  return C.ls_node_selector_matches(unwrap(sel), unwrap(node))
end

--- Preferred terms ({ weight = n, term = <as for ls.new_node_selector> })
--- -> a 0-based `ls_preferred_term` array and its length, the shape of
--- pod.preferred_node_affinity.
---@param list table[]
---@return ls.PreferredTerm[], integer
function ls.new_preferred_terms(list)
  local keep = {}
  local arr = ffi.new("ls_preferred_term[?]", math.max(#list, 1))
  for i, p in ipairs(list) do
    arr[i - 1].weight = p.weight
    fill_term(arr[i - 1].term, p.term, keep)
  end
  return preferred_list(arr, #list, { arr, keep }), #list
end
---@section Resources
--- The name of resource index i (nil when there is none).
---@param i integer
---@return string?
function ls.resource_name(i)
  local name = C.ls_resource_name(need_number(i, "ls.resource_name: the index"))
  if name == nil then return nil end
  return ffi.string(name)
end
--- The slot of a resource name in Resources vectors (-1 when no object named it yet).
---@param name string
---@return integer
function ls.resource_index(name) return C.ls_resource_index(name) end
--- How many resource slots are named so far (fixed ones included).
---@return integer
function ls.resource_count() return C.ls_resource_count() end

-- ---- the running cycle (set by the dispatcher) -----------------------------

local cycle_ref
function ls._attach(cycle) cycle_ref = cycle end

-- ls.bind binds the cycle's pod: only a Bind hook may (the dispatcher, or the
-- kit running a bind hook, opens the window).
local bind_open = false
local bound_to = 0   -- the node ls.bind bound the pod to in the running Bind hook (0: none)
function ls._allow_bind(open)
  bind_open = open
  if open then bound_to = 0 end
end
--- Whether ls.bind bound the pod in the Bind hook that just ran.
function ls._bound() return bound_to ~= 0 end

---@section The cycle and the cluster
--- All nodes of the cycle's snapshot: a 0-based cdata array of `const
--- ls_node_info *`, and its length.
---@return ls.NodeInfo[], integer
function ls.all_nodes()
  local n = cycle_ref.num_all_nodes
  return views.nodes_for_plugin(cycle_ref.all_nodes, n), n
end

--- The number of nodes of the cycle's snapshot (ls.all_nodes()'s length),
--- without building the list: for a per-node hook that needs only the count.
---@return integer
function ls.num_all_nodes()
  return cycle_ref.num_all_nodes
end

-- ---- results kept between cycles ---------------------------------------------

local CHANGED_CAP = 256
local changed_buf = ffi.new("uint32_t[?]", CHANGED_CAP)

---@section Results kept between cycles
--- A cache of at most `max` entries for a plugin's results between cycles:
--- when full it starts over, so it cannot grow without bound.
---@param max integer
---@return table
function ls.bounded_cache(max)
  return { max = max, n = 0, items = {} }
end

--- The entry for `key` of an ls.bounded_cache, made by `make()` when absent.
---@param cache table
---@param key any
---@param make fun(): any
---@return any
function ls.cache_get(cache, key, make)
  local v = cache.items[key]
  if v == nil then
    if cache.n >= cache.max then cache.items, cache.n = {}, 0 end
    v = make()
    cache.items[key] = v
    cache.n = cache.n + 1
  end
  return v
end

--- Appends a compiled selector's identity to `parts` (a list later joined
--- into a cache key): two selectors with the same parts match the same labels.
---@param parts table
---@param sel ls.Selector
function ls.selector_signature(parts, sel)
  if type(parts) ~= "table" then
    error("luasched: ls.selector_signature: parts must be a table (the list the signature is appended to), got "
      .. shown(parts), 2)
  end
  if type(sel) ~= "cdata" then
    error("luasched: ls.selector_signature: sel must be a compiled label selector (as in a pod's affinity terms), got "
      .. shown(sel), 2)
  end
  local np = #parts
  parts[np + 1], parts[np + 2] = sel.match_nothing, sel.n
  np = np + 2
  local reqs = sel.reqs
  for r = 0, sel.n - 1 do
    local q = reqs[r]
    parts[np + 1], parts[np + 2], parts[np + 3], parts[np + 4] = q.key, q.op, tostring(q.number), q.n_values
    np = np + 4
    for v = 0, q.n_values - 1 do
      np = np + 1
      parts[np] = q.values[v]
    end
  end
  parts[np + 1] = "|"
end

-- A snapshot's identity for plugins: a small number per snapshot address,
-- never the address itself (no address reaches plugin code).
local snapshot_ids, snapshot_count = {}, 0
local function snapshot_id(s)
  local addr = tonumber(ffi.cast("uintptr_t", s))
  local id = snapshot_ids[addr]
  if id == nil then
    snapshot_count = snapshot_count + 1
    id = snapshot_count
    snapshot_ids[addr] = id
  end
  return id
end

--- For a plugin keeping per-node results between cycles, indexed by position
--- in ls.all_nodes(): the snapshot's identity (a number), its generation and
--- its list generation (positions keep their node while it stays the same).
--- nil when the cycle has no snapshot (then compare every node's generation).
---@return number?, number, number
function ls.snapshot_version()
  if cycle_ref == nil then return nil end
  local s = cycle_ref.snapshot
  if s == nil then return nil end
  return snapshot_id(s), tonumber(C.ls_snapshot_generation(s)),
    tonumber(C.ls_snapshot_list_generation(s))
end

--- The positions (in ls.all_nodes()) of the nodes whose NodeInfo changed after
--- snapshot generation `since` (from ls.snapshot_version): a 0-based array of
--- numbers and its length, or nil when there are too many (then look at
--- every node). The array is reused by the next call.
---@param since number a generation from ls.snapshot_version
---@return integer[]?, integer
function ls.changed_nodes(since)
  if cycle_ref == nil or cycle_ref.snapshot == nil then return nil end
  local n = C.ls_snapshot_changed_since(cycle_ref.snapshot, need_number(since, "ls.changed_nodes: the generation"),
    changed_buf, CHANGED_CAP)
  if n > CHANGED_CAP then return nil end
  return position_list(changed_buf, n), n
end

--- Brings a per-node cache `entry` (fields gen, num, snap, sgen, lgen) up to
--- date with the snapshot list: `update(entry, j, ni, g, a, b, c, d, e)` runs for
--- every position whose NodeInfo generation moved since the entry last saw it,
--- only over the positions the snapshot reports changed when the list itself
--- did not change. `drop(entry, j)` runs for positions past the new end.
---@param entry table
---@param nodes ls.NodeInfo[]
---@param num integer
---@param update function
---@param drop function
function ls.refresh_nodes(entry, nodes, num, update, drop, a, b, c, d, e)
  local gen = entry.gen
  local snap, sgen, lgen = ls.snapshot_version()
  if snap ~= nil and entry.snap == snap and entry.lgen == lgen and entry.num == num then
    local idx, k = ls.changed_nodes(entry.sgen)
    if idx ~= nil then
      for i = 0, k - 1 do
        local j = idx[i]
        if j < num then
          local ni = nodes[j]
          local g = tonumber(ni.generation)
          if g == 0 or gen[j] ~= g then update(entry, j, ni, g, a, b, c, d, e) end
        end
      end
      entry.sgen = sgen
      return
    end
  end
  for j = 0, num - 1 do
    local ni = nodes[j]
    local g = tonumber(ni.generation)
    if g == 0 or gen[j] ~= g then update(entry, j, ni, g, a, b, c, d, e) end
  end
  for j = num, entry.num - 1 do drop(entry, j) end
  entry.num, entry.snap, entry.sgen, entry.lgen = num, snap, sgen, lgen
end

local size_out, count_out = ffi.new("int64_t[1]"), ffi.new("uint32_t[1]")
--- ImageLocality's image state on a node: size and number of nodes having it,
--- or nil when the node does not have the image.
---@param ni ls.NodeInfo
---@param image integer the normalized image name's id (pod.images[i])
---@return ls.int64?, integer?
function ls.image_state(ni, image)
  need(ni, "ls.image_state: the node info")
  if cycle_ref == nil or cycle_ref.snapshot == nil then return nil end
  if C.ls_snapshot_image_state(cycle_ref.snapshot, unwrap(ni), image, size_out, count_out) then
    return size_out[0], count_out[0]
  end
  return nil
end

local bind_err = ffi.new("char[512]")
--- Hands the binding of the cycle's pod to the cluster (embedded or API server).
--- Only a Bind hook may call it, for the node the pod was scheduled to. Returns nil, or an error message.
---@param node_name string
---@return string?
function ls.bind(node_name)
  if not bind_open then error("ls.bind: only a Bind hook may bind the pod", 2) end
  if cycle_ref == nil then return "no scheduling cycle is running" end
  if type(node_name) ~= "string" then error("ls.bind: the node name must be a string", 2) end
  local id = ls.intern(node_name)
  -- The pod is assumed on the selected node (its resources counted there): a
  -- binding elsewhere, or a second one, would leave the cluster and the
  -- scheduler's cache disagreeing about where the pod runs.
  local selected = cycle_ref.selected_node
  if selected ~= 0 and id ~= selected then
    error(string.format("ls.bind: the pod was scheduled to node %q, it cannot be bound to %q", ls.str(selected),
      #node_name > 64 and node_name:sub(1, 64) .. "..." or node_name), 2)
  end
  if bound_to ~= 0 then error("ls.bind: the pod is bound already (to " .. ls.str(bound_to) .. ")", 2) end
  if C.ls_cycle_bind(cycle_ref, id, bind_err, 512) ~= 0 then
    return ffi.string(bind_err)
  end
  bound_to = id
  return nil
end

--- The objects of a kind ("Namespace", "Service", "ReplicaSet", "StatefulSet",
--- "ReplicationController", "PodDisruptionBudget", or a custom resource):
--- an iterator of `const ls_object *`.
---
--- The iterator is one function over a small state table, not a closure made
--- per call: LuaJIT 2.1 cannot compile making a closure (FNEW), so every trace
--- through ls.objects was aborted and its caller ran interpreted. The state
--- is the plugin's to see: the C lookup checks the index, and a state it
--- changed only ends the loop (NULL) or raises (a value that is no store).
local function next_object(st)
  local i = st.i + 1
  st.i = i
  local o = C.ls_objects_at(st.store, st.kind, i)
  if o ~= nil then return views.object_for_plugin(o[0]) end
end

--- The objects of a kind ("Namespace", "Service", "ReplicaSet", "StatefulSet",
--- "ReplicationController", "PodDisruptionBudget", a storage or DRA kind, "NodeMetrics",
--- "PodMetrics", or a custom resource "plural.version.group"): an iterator of Object views
--- (`for o in ls.objects("Service") do ... end`).
---@param kind string|integer
---@return fun(): ls.Object
function ls.objects(kind)
  local kid = type(kind) == "string" and ls.intern(kind) or kind
  local store = cycle_ref and cycle_ref.objects
  if store ~= nil and C.ls_objects_count(store, kid) == 0 then store = nil end
  return next_object, { store = store, kind = kid, i = -1 }
end

--- A number that changes whenever an object of the kind is added, updated
--- or deleted (with the store the cycle sees): a key for results over all
--- objects of a kind kept between cycles; with no kind, any object of any kind.
---@param kind? string|integer
---@return number
function ls.objects_generation(kind)
  local kid = type(kind) == "string" and ls.intern(kind) or (kind or 0)
  local store = cycle_ref and cycle_ref.objects
  if store == nil then return 0 end
  return tonumber(C.ls_objects_generation(store, kid))
end

--- The cycle's NodeInfo of a node (a name or an id), or nil.
--- (A reference, as the hooks get NodeInfos: no pointer to index or move.)
---@param name string|integer
---@return ls.NodeInfo?
function ls.find_node(name)
  -- outside a cycle (PreEnqueue, a hint) there is no snapshot: C would read NULL
  if cycle_ref == nil or cycle_ref.snapshot == nil then return nil end
  local ni = C.ls_snapshot_find(cycle_ref.snapshot, type(name) == "string" and ls.intern(name) or name)
  if ni == nil then return nil end
  return views.node_info_for_plugin(ni[0])
end

local function id_of(v) return type(v) == "string" and ls.intern(v) or (v or 0) end

--- Whether the pod mounts the claim named `name` (an id) of its namespace
--- through a persistentVolumeClaim volume, or also through the claim a generic
--- ephemeral volume implies when `with_ephemeral`.
---@param pod ls.Pod
---@param name integer
---@param with_ephemeral? boolean
---@return boolean
function ls.pod_uses_claim(pod, name, with_ephemeral)
  local pvc, eph = C.LS_VOL_PVC, C.LS_VOL_EPHEMERAL
  for i = 0, pod.n_volumes - 1 do
    local v = pod.volumes[i]
    if v.claim == name and (v.source == pvc or (with_ephemeral and v.source == eph)) then return true end
  end
  return false
end

--- One object by kind, namespace and name (ids or strings); nil if absent.
---@param kind string|integer
---@param ns string|integer|nil nil for a cluster-scoped kind
---@param name string|integer
---@return ls.Object?
function ls.find_object(kind, ns, name)
  local store = cycle_ref and cycle_ref.objects
  if store == nil then return nil end
  local id = id_of
  local o = C.ls_objects_find(store, id(kind), id(ns), id(name))
  if o == nil then return nil end
  return views.object_for_plugin(o[0])
end

local json = require("luasched.json")
local json_of = views.accessor("ls_object", "json")
-- An object's JSON text (its `json` field is a checked view for plugins).
-- Anything but an object (a table, a pod, nil) is an error: ffi.string of
-- the NULL a missing field gives would read address 0.
local object_ct = ffi.typeof("const ls_object &")
local function object_json(o)
  local p, n = json_of(o.json)
  if p == nil then p, n = o.json, o.json_len end
  return ffi.string(p, n)
end
-- Objects decoded from their JSON once per version (the cache is keyed by the
-- object's seq, unique per decoded version), at most `max` kept; `plain` is
-- luasched.json's mode.
-- (No closure is made per call: plugins call these per node.)
local function decoded_objects(max, plain)
  local items, n = {}, 0
  return function(o)
    o = unwrap(o)   -- a plugin's reference to an object: the struct, its generation checked
    if not ffi.istype(object_ct, o) then
      error("luasched: expected an object (from ls.objects or ls.find_object), got a " .. type(o), 2)
    end
    local key = tonumber(o.seq)
    local t = items[key]
    if t == nil then
      if n >= max then items, n = {}, 0 end   -- bounded: old versions go
      t = json.decode(object_json(o), plain)
      items[key], n = t, n + 1
    end
    return t
  end
end

--- The whole object as Lua tables (luasched.json's form: arrays carry
--- json.array_mt, null is json.null), decoded once per version. Treat the
--- result as read-only.
---@param o ls.Object
---@return table
ls.object_table = decoded_objects(8192, false)

--- The whole object as plain Lua tables (null is nil, arrays unmarked),
--- decoded once per version and shared: do not modify it. For fields the C
--- model does not flatten: the volume plugins read PersistentVolumes, claims,
--- classes, CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments so.
---@param o ls.Object
---@return table
ls.object_data = decoded_objects(65536, true)

--- A fresh pair (object_table, object_data) with caches of their own: each
--- plugin gets its own (loader.lua), so a plugin that writes into a decoded
--- object changes only what it sees itself, never what another plugin reads.
function ls._object_readers()
  return decoded_objects(8192, false), decoded_objects(65536, true)
end

--- Whether the pod controls the object (upstream's metav1.IsControlledBy, as
--- ephemeral.VolumeIsForPod uses it): a controller ownerReference with the
--- pod's uid. `obj` is in ls.object_data's or ls.object_table's form.
---@param obj table
---@param pod ls.Pod
---@return boolean
function ls.controlled_by_pod(obj, pod)
  local meta = obj.metadata
  local refs = meta and meta.ownerReferences
  if refs == nil or refs == json.null then return false end
  local uid = ls.str(pod.uid)
  for _, ref in ipairs(refs) do
    if ref.controller == true and ref.uid == uid then return true end
  end
  return false
end

--- A queueing hint for events about pods: requeue the pod when the changed
--- pod is the pod itself (its own tolerations, gates, labels or resources
--- changed), skip it for any other pod. Use it as an event's `hint`.
---@param pod ls.Pod
---@param old ls.Pod?
---@param new ls.Pod
---@return integer
function ls.hint_own_pod(pod, _, new)
  if new.uid == pod.uid then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local patch_err = ffi.new("char[512]")
--- Writes a JSON merge patch (text) to the status subresource of object `o`
--- through the cluster (embedded or API server), as a PreBind does.
--- Returns nil, or an error message.
---@param o ls.Object
---@param merge_patch string JSON text
---@return string?
function ls.patch_status(o, merge_patch)
  o = unwrap(o)
  if not ffi.istype(object_ct, o) then
    error("luasched: ls.patch_status: expected an object (from ls.objects or ls.find_object), got a " .. type(o), 2)
  end
  if type(merge_patch) ~= "string" then
    error("luasched: ls.patch_status: the merge patch must be a string, got a " .. type(merge_patch), 2)
  end
  if cycle_ref == nil then return "no scheduling cycle is running" end
  cycle_ref.writer_not_builtin = views.wants_refs() and 1 or 0   -- own_writes.h
  if C.ls_cycle_patch_status(cycle_ref, o, merge_patch, patch_err, 512) ~= 0 then
    return ffi.string(patch_err)
  end
  return nil
end

--- A JSON string literal (for ls.patch_object's patches).
---@param s string
---@return string
ls.json_quote = json.quote

--- The scheduler's clock in milliseconds (virtual in a simulation).
---@return number
function ls.now_ms()
  return cycle_ref ~= nil and tonumber(C.ls_cycle_now_ms(cycle_ref)) or 0
end

--- An API write (VolumeBinding's PreBind): a JSON merge patch on one PersistentVolume
--- or PersistentVolumeClaim (kind, namespace or nil for cluster-scoped kinds, name);
--- other kinds are refused, in simulate as in run. nil, or an error message.
---@param kind string
---@param ns string|nil
---@param name string
---@param patch string JSON text
---@return string?
function ls.patch_object(kind, ns, name, patch)
  if type(patch) ~= "string" then
    error("luasched: ls.patch_object: the patch must be a string, got a " .. type(patch), 2)
  end
  if cycle_ref == nil then return "no scheduling cycle is running" end
  local function id(v) return type(v) == "string" and ls.intern(v) or (v or 0) end
  cycle_ref.writer_not_builtin = views.wants_refs() and 1 or 0   -- own_writes.h
  if C.ls_cycle_patch_object(cycle_ref, id(kind), id(ns), id(name), patch, patch_err, 512) ~= 0 then
    return ffi.string(patch_err)
  end
  return nil
end

local created_name = ffi.new("char[256]")
--- An API create (DynamicResources' PreBind: the claim of a pod's extended
--- resources): the object as JSON text, its metadata giving a name or a
--- generateName. Returns the created object's name, or nil and an error
--- message. In simulate's embedded cluster plugins create ResourceClaims only,
--- each within 3 MiB, 256 MiB in all per simulation; against an API server
--- (`luasched run`) only that claim is created, by the supervisor.
---@param json_text string
---@return string?, string?
function ls.create_object(json_text)
  if type(json_text) ~= "string" then
    error("luasched: ls.create_object: the object must be JSON text, got a " .. type(json_text), 2)
  end
  if cycle_ref == nil then return nil, "no scheduling cycle is running" end
  cycle_ref.writer_not_builtin = views.wants_refs() and 1 or 0   -- own_writes.h
  if C.ls_cycle_create_object(cycle_ref, json_text, created_name, 256, patch_err, 512) ~= 0 then
    return nil, ffi.string(patch_err)
  end
  return ffi.string(created_name)
end

-- read-only: a count written into it would send every later reader past NULL
-- (the reference does not keep its memory alive: selector_memory does)
local no_labels_memory = ffi.new("ls_labels")
local no_labels = ffi.cast("const ls_labels *", no_labels_memory)[0]
selector_memory[no_labels] = no_labels_memory
--- The labels of namespace `ns` (an id or a string), from its Namespace
--- object; an empty label set when the cycle has no such object (upstream's
--- GetNamespaceLabelsSnapshot). Pass the result to ls.selector_matches.
---@param ns string|integer
---@return ls.Labels
function ls.namespace_labels(ns)
  local o = ls.find_object("Namespace", 0, ns)
  if o == nil then return no_labels end
  return o.labels
end

---@section The queue and waiting pods
--- Moves a pending pod of this plugin's profile straight to activeQ
--- (upstream's pods-to-activate): e.g. a gang plugin activating the rest of
--- a group. False if the pod is not waiting in a queue or is another profile's.
---@param pod ls.Pod
---@return boolean
function ls.activate(pod)
  need(pod, "ls.activate: the pod")
  return cycle_ref ~= nil and C.ls_cycle_activate(cycle_ref, account, unwrap(pod))
end

--- The pending pod of this plugin's profile the scheduling queue holds under
--- pod id `id` (active, backoff, unschedulable, gated or in flight), or nil
--- (another profile's pending pods are not a plugin's to read). Ids are reused once a
--- pod is gone: a plugin that noted `pod.id` at PreEnqueue compares the name
--- and namespace of what it gets back (the gang policies count members so).
---@param id integer
---@return ls.Pod?
function ls.queued_pod(id)
  if cycle_ref == nil then return nil end
  local p = C.ls_cycle_queued_pod(cycle_ref, account, need_number(id, "ls.queued_pod: the pod id"))
  if p == nil then return nil end
  return views.pod_for_plugin(p[0])
end


local function caller(what, plugin_name)
  local me = running_plugin()
  if me == nil then error("luasched: " .. what .. ": only a plugin's hook may (no plugin is running)", 3) end
  if plugin_name ~= me then
    error(string.format("luasched: %s: plugin %q can act only as itself (upstream's WaitingPod.Allow(pluginName)), " ..
      "not as %s", what, me, shown(plugin_name)), 3)
  end
  return me
end

--- Pods that a Permit plugin of this profile made wait: an iterator of Pod views.
---@return fun(): ls.Pod
function ls.waiting_pods()
  local i, n = -1, cycle_ref and C.ls_cycle_num_waiting(cycle_ref, account) or 0
  return function()
    i = i + 1
    if i < n then
      local p = C.ls_cycle_waiting_pod(cycle_ref, account, i)
      if p ~= nil then return views.pod_for_plugin(p[0]) end
    end
  end
end

--- Lets a waiting pod of this profile go on as far as the calling plugin
--- `plugin_name` is concerned (upstream's WaitingPod.Allow(pluginName)): the
--- pod goes on once every plugin that made it wait allowed it. A plugin
--- allows as itself only. False if the pod does not wait in this profile.
---@param pod ls.Pod
---@param plugin_name string the calling plugin's own name
---@return boolean
function ls.allow(pod, plugin_name)
  need(pod, "ls.allow: the pod")
  caller("ls.allow", plugin_name)
  return cycle_ref ~= nil and C.ls_cycle_allow_waiting(cycle_ref, account, pod.id, ls.intern(plugin_name))
end

--- Rejects a waiting pod of this profile; it fails with `msg` (upstream's
--- WaitingPod.Reject(pluginName, msg)), as the calling plugin.
---@param pod ls.Pod
---@param plugin_name string the calling plugin's own name
---@param msg string
---@return boolean
function ls.reject(pod, plugin_name, msg)
  need(pod, "ls.reject: the pod")
  if type(msg) ~= "string" then error("luasched: ls.reject: the message must be a string", 2) end
  caller("ls.reject", plugin_name)
  return cycle_ref ~= nil and C.ls_cycle_reject_waiting(cycle_ref, account, pod.id, ls.intern(plugin_name), msg)
end

require("luasched.fields").install(ls)

--- The score slots NormalizeScore receives, the node list PreScore receives,
--- and the per-cycle state every hook of a cycle shares.
---@view ScoreList: NormalizeScore's `scores`: n int64 slots, 0-based, in the order of `nodes`.
--- Read a slot with tonumber(scores[i]) (it is an int64 cdata, not a table: `scores[i].score` fails),
--- write it with `scores[i] = v` (an integer number; ls.MIN_NODE_SCORE..ls.MAX_NODE_SCORE after
--- normalizing, else the attempt fails with "returns an invalid score").
---@field [integer] ls.int64 the score of nodes[i]
---@view NodeList: PreScore's and NormalizeScore's `nodes` and ls.all_nodes(): NodeInfo views, 0-based, n of them.
---@field [integer] ls.NodeInfo the i-th feasible node (PreScore, NormalizeScore) or snapshot node (ls.all_nodes)
---@view CycleState: `state`, a plain Lua table made empty for each scheduling cycle and
--- passed to every hook of that cycle (pre_filter .. post_bind), shared by the profile's
--- plugins: key it by your plugin's name. Preemption's dry runs clone it per node (deep copy of
--- plain tables, or the plugin's clone_state(entry)). A pod waiting at Permit keeps its state
--- until its binding cycle resumes.
---@field [string] any what PreFilter/PreScore computed for the later hooks
---@view Status: what ls.unschedulable, ls.error, ls.wait, ... return (read-only; build it once, in init).
---@field code integer ls.SUCCESS .. ls.PENDING
---@field message string the reasons joined with ", "
---@field reasons string[] the reasons (a fresh copy each read)
---@field id integer the status's id, as C keeps it (ls.status_message(id))
---@field timeout number? ls.wait's timeout in seconds

---@section Scores
--- Upstream's DefaultNormalizeScore over the n score slots of NormalizeScore: each score becomes
--- max_priority * score / highest (0 when every score is 0), reversed (max_priority - that) when
--- `reverse`. Call it from normalize_score: `ls.default_normalize_score(scores, n, ls.MAX_NODE_SCORE, false)`.
---@param scores ls.ScoreList
---@param n integer
---@param max_priority integer usually ls.MAX_NODE_SCORE
---@param reverse boolean
function ls.default_normalize_score(scores, n, max_priority, reverse)
  local max_count = 0
  for i = 0, n - 1 do
    if scores[i] > max_count then max_count = scores[i] end
  end
  if max_count == 0 then
    if reverse then
      for i = 0, n - 1 do scores[i] = max_priority end
    end
    return
  end
  for i = 0, n - 1 do
    local s = max_priority * scores[i] / max_count
    if reverse then s = max_priority - s end
    scores[i] = s
  end
end

return ls
