-- NodeAffinity: a pod runs only on nodes matching its nodeSelector and its
-- required node affinity (and the profile's addedAffinity); among those it
-- prefers nodes matching its preferred terms.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
-- and component-helpers/scheduling/corev1/nodeaffinity (v1.30-v1.34):
-- * PreFilter: Skip when the pod has no nodeSelector, no required node affinity
--   and the plugin no addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.
--   When every required term has matchFields "metadata.name In [...]", the
--   result restricts the cycle to the union over terms of the intersection of
--   those names within each term; an empty union is UnschedulableAndUnresolvable
--   "pod affinity terms conflict" (upstream's errReasonConflict).
-- * Filter: addedAffinity's required selector not matching ->
--   UnschedulableAndUnresolvable "node(s) didn't match scheduler-enforced node
--   affinity"; the pod's nodeSelector (every label equal) and required terms
--   (ORed; expressions within a term ANDed) not matching ->
--   UnschedulableAndUnresolvable "node(s) didn't match Pod's node affinity/selector".
-- * PreScore: Skip when neither the pod nor addedAffinity has preferred terms.
-- * Score: the sum of the weights of the matching preferred terms (the pod's
--   and addedAffinity's). NormalizeScore: DefaultNormalizeScore(100, not reversed).
-- * addedAffinity (pluginConfig args, the JSON shape of a v1 NodeAffinity) is
--   validated and compiled at init (ls.new_node_selector /
--   ls.new_preferred_terms) into the C selectors the pod's own affinity
--   compiles to, and matched by the same C code: In, NotIn (an absent label
--   matches), Exists, DoesNotExist, Gt, Lt (the label value parsed as a
--   base-10 int64; no match when it does not parse), matchFields
--   metadata.name In / NotIn. Empty terms match no node; preferred terms of
--   weight 0 are dropped.
--
-- Deviations:
-- * The pod's selectors come compiled by the C decoder, which rejects a pod the
--   API server would reject; upstream's "ignore parsing errors" path for
--   pods never arises. An empty nodeSelector map counts as absent (Skip rather
--   than a Filter that passes every node: same outcome). Filter and Score read
--   the pod's compiled selectors directly, so nothing goes through CycleState.
-- * addedAffinity is validated at init (operators, value counts, Gt/Lt
--   integers, matchFields metadata.name only); label key and value syntax is
--   not checked. upstream would accept a matchFields key other than
--   metadata.name (it then compares against ""); here it is an error.
--
-- Events (upstream v1.37 plugin guide; hint as in the v1.32-v1.34 code): Node
-- Add|UpdateNodeLabel. Skip when the node does not match addedAffinity's
-- required selector or the pod's nodeSelector/required affinity; Queue for an
-- added node; for an update, Queue only when the old node did not match the
-- pod's selector/affinity (unmatched -> matched).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodeAffinity", { optional = { addedAffinity = "object" } })

local ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
local ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
local ERR_REASON_CONFLICT = "pod affinity terms conflict"

local OP_IN, OP_NOT_IN, OP_EXISTS = ls.OP_IN, ls.OP_NOT_IN, ls.OP_EXISTS
local OP_DOES_NOT_EXIST, OP_GT, OP_LT = ls.OP_DOES_NOT_EXIST, ls.OP_GT, ls.OP_LT
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE
local term_matches, selector_matches = ls.node_selector_term_matches, ls.node_selector_matches

local OPS = {
  In = OP_IN, NotIn = OP_NOT_IN, Exists = OP_EXISTS, DoesNotExist = OP_DOES_NOT_EXIST,
  Gt = OP_GT, Lt = OP_LT,
}
local LABEL_OPS = '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
local FIELD_OPS = '"In", "NotIn"'
local NAME_FIELD = "metadata.name"
local NAME_FIELD_ID = ls.intern(NAME_FIELD)

-- ---- addedAffinity: validating and compiling ----------------------------------------

local function fail(path, fmt, ...)
  error(path .. ": " .. string.format(fmt, ...), 0)
end

local function list_of(v, path)
  if v == nil then return {} end
  if type(v) ~= "table" then fail(path, "expected a list") end
  return v
end

local function strings_of(v, path)
  local out = list_of(v, path)
  for i, s in ipairs(out) do
    if type(s) ~= "string" then fail(path .. "[" .. (i - 1) .. "]", "expected a string") end
  end
  return out
end

local function ids_of(strings)
  local ids = {}
  for i, s in ipairs(strings) do ids[i] = ls.intern(s) end
  return ids
end

-- strconv.ParseInt(s, 10, 64): whether s is an int64 in decimal.
local INT64_MAX, INT64_MIN_ABS = "9223372036854775807", "9223372036854775808"
local function is_int64(s)
  local sign, digits = s:match("^([+-]?)(%d+)$")
  if not digits then return false end
  digits = digits:gsub("^0+", "")
  local limit = sign == "-" and INT64_MIN_ABS or INT64_MAX
  return #digits < 19 or (#digits == 19 and digits <= limit)
end

local function compile_label_requirement(expr, path)
  if type(expr) ~= "table" then fail(path, "expected an object") end
  if type(expr.key) ~= "string" or expr.key == "" then fail(path .. ".key", "Required value") end
  local op = OPS[expr.operator]
  if op == nil then
    fail(path .. ".operator", 'Unsupported value: "%s": supported values: %s', tostring(expr.operator), LABEL_OPS)
  end
  local values = strings_of(expr.values, path .. ".values")
  local r = { key = ls.intern(expr.key), op = op, values = ids_of(values) }
  if op == OP_IN or op == OP_NOT_IN then
    if #values == 0 then fail(path .. ".values", "for 'in', 'notin' operators, values set can't be empty") end
  elseif op == OP_EXISTS or op == OP_DOES_NOT_EXIST then
    if #values ~= 0 then fail(path .. ".values", "values set must be empty for exists and does not exist") end
  else
    if #values ~= 1 then fail(path .. ".values", "for 'Gt', 'Lt' operators, exactly one value is required") end
    if not is_int64(values[1]) then
      fail(path .. ".values[0]", "for 'Gt', 'Lt' operators, the value must be an integer")
    end
    r.number = values[1]
  end
  return r
end

local function compile_field_requirement(expr, path)
  if type(expr) ~= "table" then fail(path, "expected an object") end
  if expr.key ~= NAME_FIELD then
    fail(path .. ".key", 'Unsupported value: "%s": supported values: "%s"', tostring(expr.key), NAME_FIELD)
  end
  local op = OPS[expr.operator]
  if op ~= OP_IN and op ~= OP_NOT_IN then
    fail(path .. ".operator", 'Unsupported value: "%s": supported values: %s', tostring(expr.operator), FIELD_OPS)
  end
  local values = strings_of(expr.values, path .. ".values")
  if #values ~= 1 then fail(path .. ".values", "must have one element") end
  return { key = NAME_FIELD_ID, op = op, values = ids_of(values) }
end

-- A NodeSelectorTerm table -> { exprs, fields } for ls.new_node_selector, or
-- nil for an empty term (which selects no node).
local function compile_term(term, path)
  if term == nil then return nil end
  if type(term) ~= "table" then fail(path, "expected an object") end
  local exprs = list_of(term.matchExpressions, path .. ".matchExpressions")
  local fields = list_of(term.matchFields, path .. ".matchFields")
  if #exprs == 0 and #fields == 0 then return nil end
  local t = { exprs = {}, fields = {} }
  for i, expr in ipairs(exprs) do
    t.exprs[i] = compile_label_requirement(expr, string.format("%s.matchExpressions[%d]", path, i - 1))
  end
  for i, expr in ipairs(fields) do
    t.fields[i] = compile_field_requirement(expr, string.format("%s.matchFields[%d]", path, i - 1))
  end
  return t
end

local function compile_required(ns, path)
  if type(ns) ~= "table" then fail(path, "expected an object") end
  local terms = {}
  for i, term in ipairs(list_of(ns.nodeSelectorTerms, path .. ".nodeSelectorTerms")) do
    local t = compile_term(term, string.format("%s.nodeSelectorTerms[%d]", path, i - 1))
    if t then terms[#terms + 1] = t end
  end
  return ls.new_node_selector(terms)
end

local function compile_preferred(list, path)
  local terms = {}
  for i, pt in ipairs(list) do
    local p = string.format("%s[%d]", path, i - 1)
    if type(pt) ~= "table" then fail(p, "expected an object") end
    local w = pt.weight or 0
    if type(w) ~= "number" or w ~= math.floor(w) or w < -2 ^ 31 or w >= 2 ^ 31 then
      fail(p .. ".weight", "expected an int32")
    end
    local t = compile_term(pt.preference, p .. ".preference")
    if w ~= 0 and t then terms[#terms + 1] = { weight = w, term = t } end
  end
  return ls.new_preferred_terms(terms)
end

-- ---- init -------------------------------------------------------------------------

function P:init(args)
  self.pod_status = ls.unresolvable(ERR_REASON_POD)
  self.enforced_status = ls.unresolvable(ERR_REASON_ENFORCED)
  self.conflict_status = ls.unresolvable(ERR_REASON_CONFLICT)
  local added = args.addedAffinity
  if added == nil then return end
  if type(added) ~= "table" then fail("addedAffinity", "expected an object") end
  local req = added.requiredDuringSchedulingIgnoredDuringExecution
  if req ~= nil then
    self.added_required = compile_required(req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
  end
  local path = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
  local pref = list_of(added.preferredDuringSchedulingIgnoredDuringExecution, path)
  if #pref ~= 0 then
    self.added_preferred, self.n_added_preferred = compile_preferred(pref, path)
  end
end

-- ---- PreFilter / Filter -------------------------------------------------------------

-- The metadata.name In names of one required term, intersected; nil when the
-- term has none. Term fields hold exactly one value each (API validation).
local function term_names(term)
  local names
  local fields = term.fields
  for j = 0, fields.n - 1 do
    local r = fields.reqs[j]
    if r.key == NAME_FIELD_ID and r.op == OP_IN then
      local set = {}
      for v = 0, r.n_values - 1 do set[r.values[v]] = true end
      if names == nil then
        names = set
      else
        for id in pairs(names) do
          if not set[id] then names[id] = nil end
        end
      end
    end
  end
  return names
end

function P:pre_filter(_, pod)
  if pod.has_required_node_affinity == 0 then
    if self.added_required == nil and pod.node_selector.n == 0 then return ls.skip end
    return nil
  end
  local ns = pod.required_node_affinity
  if ns.n_terms == 0 then return nil end
  local union, list = {}, {}
  for i = 0, ns.n_terms - 1 do
    local names = term_names(ns.terms[i])
    -- a term without a node-name requirement lets every node through (terms are ORed)
    if names == nil then return nil end
    -- in the pod's order, so the result is deterministic
    local fields = ns.terms[i].fields
    for j = 0, fields.n - 1 do
      local r = fields.reqs[j]
      for v = 0, r.n_values - 1 do
        local id = r.values[v]
        if names[id] and not union[id] then
          union[id] = true
          list[#list + 1] = id
        end
      end
    end
  end
  if #list == 0 then return self.conflict_status end
  return nil, list
end

function P:filter(_, pod, ni)
  local node = ni.node
  local added = self.added_required
  if added ~= nil and not selector_matches(added, node) then return self.enforced_status end
  if not ls.pod_matches_node_affinity(pod, node) then return self.pod_status end
  return nil
end

-- ---- PreScore / Score -----------------------------------------------------------------

function P:pre_score(_, pod)
  if pod.n_preferred_node_affinity == 0 and self.added_preferred == nil then return ls.skip end
  return nil
end

local function weight_if_matches(p, node)
  if term_matches(p.term, node) then return p.weight end
  return 0
end

-- Sum of the weights of the preferred terms (0-based array of n) matching
-- node. The first four terms are written out rather than looped over: a short
-- inner loop that runs two or more times per node tends to become LuaJIT's
-- root trace, and the node loop then runs as side traces that box the node
-- pointers (an allocation per node).
local function preferred_score(prefs, n, node)
  if n == 0 then return 0 end
  local count = weight_if_matches(prefs[0], node)
  if n >= 2 then count = count + weight_if_matches(prefs[1], node) end
  if n >= 3 then count = count + weight_if_matches(prefs[2], node) end
  if n >= 4 then count = count + weight_if_matches(prefs[3], node) end
  for i = 4, n - 1 do count = count + weight_if_matches(prefs[i], node) end
  return count
end

function P:score(_, pod, ni)
  local node = ni.node
  local count = preferred_score(pod.preferred_node_affinity, pod.n_preferred_node_affinity, node)
  local added = self.added_preferred
  if added ~= nil then count = count + preferred_score(added, self.n_added_preferred, node) end
  return count
end

function P:normalize_score(_, _, scores, _, n)
  ls.default_normalize_score(scores, n, MAX_NODE_SCORE, false)
  return nil
end


-- ---- events and queueing hints ------------------------------------------------

local pod_matches_node_affinity = ls.pod_matches_node_affinity

local function after_node_change(pod, old, new, self)
  local added = self.added_required
  if added ~= nil and not selector_matches(added, new) then return ls.QUEUE_SKIP end
  if not pod_matches_node_affinity(pod, new) then return ls.QUEUE_SKIP end
  if old == nil then return ls.QUEUE end
  if pod_matches_node_affinity(pod, old) then return ls.QUEUE_SKIP end
  return ls.QUEUE
end

P.events = {
  { resource = "Node", action = { "Add", "UpdateNodeLabel" }, hint = after_node_change },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodeAffinity: required and preferred node affinity and the nodeSelector
-- (NodeAffinitySignerName, NodeSelectorSignerName); the args' addedAffinity
-- is the same for every pod of the profile.
function P:sign(pod) return signers.node_affinity(pod) end

return P
