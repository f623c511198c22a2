-- PodTopologySpread: spreads pods that match a selector evenly over topology
-- domains (zones, hosts, ...) - a hard limit on the skew (DoNotSchedule) and a
-- preference for the emptier domains (ScheduleAnyway).
-- Over 800 lines: the constraint compilation, the counts kept between cycles,
-- Filter, Score and the hints share one set of per-domain tables; split, they
-- would share them through a module of their own.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/podtopologyspread/
-- {plugin.go,common.go,filtering.go,scoring.go} and helper/spread.go:
-- * Constraints: the pod's topologySpreadConstraints of the wanted
--   whenUnsatisfiable (the decoder has merged matchLabelKeys into the selector,
--   and defaulted minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy
--   Ignore). A pod without any constraint gets the default constraints (args
--   defaultingType System: hostname maxSkew 3 and zone maxSkew 5, both
--   ScheduleAnyway; List: args.defaultConstraints), all with the pod's
--   DefaultSelector: the AND of the selectors of the Services in its namespace
--   that select it and of its controller (ReplicationController, ReplicaSet or
--   StatefulSet, by ownerReference); none when that selector is empty. The AND
--   is kept as a list of compiled selectors that must all match.
-- * Eligible nodes (counting): carry every constraint's topology key; per
--   constraint, nodeAffinityPolicy Honor -> the pod's nodeSelector and required
--   node affinity match, nodeTaintsPolicy Honor -> no untolerated
--   NoSchedule/NoExecute taint. Counted pods: same namespace as the pod, not
--   terminating, matching the selector (an empty selector counts nothing).
-- * PreFilter (Skip without DoNotSchedule constraints): matching pods per
--   (constraint, domain) over eligible nodes; Filter: a node without the key ->
--   UnschedulableAndUnresolvable "... (missing required label)"; count + self
--   match - global minimum (0 while fewer domains than minDomains) > maxSkew ->
--   Unschedulable "node(s) didn't match pod topology spread constraints".
-- * AddPod/RemovePod (add_pod/remove_pod): +-1 on the pod's domain when it is
--   in the namespace, matches the selector and the node is eligible.
-- * PreScore (Skip without ScheduleAnyway constraints or without nodes):
--   requireAllTopologies unless the pod has no constraints of its own and the
--   defaults are the System ones; feasible nodes missing a key are ignored
--   then (score 0). Counts for non-hostname keys are summed over all eligible
--   nodes, for the domains present among the feasible nodes (a missing label is
--   the domain "", as upstream's map lookup gives). Weight ln(size + 2).
-- * Score: round(sum over constraints whose key the node has of
--   count * weight + maxSkew - 1), hostname counts taken from the node itself
--   (counted in PreScore, so that Score only looks numbers up);
--   NormalizeScore: ignored -> 0, max == 0 -> 100, else 100*(max+min-s)/max.
--
-- Deviations:
-- * The global minimum is the exact minimum over the domains, kept exactly
--   through add_pod/remove_pod with a histogram of counts. Upstream tracks only
--   the two smallest domains (criticalPaths), which can overestimate the
--   minimum after several additions with ties (and then depends on Go's map
--   order); right after PreFilter both agree.
-- * ownerReferences carry no apiVersion here: the controller is looked up by
--   kind alone (upstream also requires v1 / apps/v1).
-- * Args are validated in init (upstream's ValidatePodTopologySpreadArgs, with
--   a shorter message for an invalid topologyKey).
-- * Hostname counts are taken in PreScore for the scored nodes (upstream
--   counts them in Score; same snapshot, same numbers), so Score and Filter
--   only look numbers up and allocate nothing.
-- * A PreFilter Skip still leaves an empty state, so add_pod/remove_pod are
--   no-ops then (upstream never calls them for a skipped plugin).
-- Events (upstream v1.37 plugin guide; hint logic as in the v1.32-v1.34
-- code), over the pod's DoNotSchedule constraints (its own or the defaults):
-- * AssignedPod Add|UpdatePodLabel|Delete: Skip unless the other pod is bound
--   in the pod's namespace; an update queues when some constraint's selector
--   matched the old labels and not the new or the reverse; an added or deleted
--   pod queues when some selector matches its labels.
-- * TargetPod UpdatePodLabel|UpdatePodToleration: queues when the pod's own
--   labels change whether a selector matches it, or its tolerations change and
--   a constraint has nodeTaintsPolicy Honor (v1.37's split of the pod's own
--   updates; its exact hint was not read in upstream's code).
-- * Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint: a node "matches" when it
--   has every topology key; an update queues when that changes, or when it
--   matches and a topology key's value or its taints changed; an added or
--   deleted node queues when it matches.
--
-- Over 800 lines: one plugin per file, and this one carries Filter, Score,
-- the counts kept between cycles and its queueing hints.
local ls = require("luasched")
local MAX_AGGS = 32   -- cached entries kept (each holds a few per-node arrays)

local P = ls.plugin("PodTopologySpread", {
  defaults = { defaultingType = "System", defaultConstraints = {} },
})


local label, selector_matches = ls.label, ls.selector_matches
local pod_matches_node_affinity, find_untolerated_taint = ls.pod_matches_node_affinity, ls.find_untolerated_taint
local floor, log = math.floor, math.log

local DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = ls.DO_NOT_SCHEDULE, ls.SCHEDULE_ANYWAY
local HONOR = ls.POLICY_HONOR
local TAINT_MASK = bit.bor(bit.lshift(1, ls.EFFECT_NO_SCHEDULE), bit.lshift(1, ls.EFFECT_NO_EXECUTE))
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE
local MAX_INT32 = 2147483647

local HOSTNAME_KEY, ZONE_KEY = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
local HOSTNAME = ls.intern(HOSTNAME_KEY)
local EMPTY = ls.intern("")            -- the value upstream reads for a missing label
local SERVICE = ls.intern("Service")
local CONTROLLER_KINDS = {
  [ls.intern("ReplicationController")] = true,
  [ls.intern("ReplicaSet")] = true,
  [ls.intern("StatefulSet")] = true,
}

local SYSTEM_DEFAULTS = {
  { topologyKey = HOSTNAME_KEY, maxSkew = 3, whenUnsatisfiable = "ScheduleAnyway" },
  { topologyKey = ZONE_KEY, maxSkew = 5, whenUnsatisfiable = "ScheduleAnyway" },
}

local ERR_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
local ERR_MISSING_LABEL = ERR_CONSTRAINTS .. " (missing required label)"

-- ---- args -------------------------------------------------------------------

local function quoted(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- metav1validation.ValidateLabelName (IsQualifiedName), message shortened.
local label_name_error = ls.qualified_name_error

local function validate(args, constraints)
  local errs = {}
  local function add(fmt, ...) errs[#errs + 1] = string.format(fmt, ...) end
  local dt = args.defaultingType
  if dt ~= "System" and dt ~= "List" then
    add('defaultingType: Unsupported value: %s: supported values: "System", "List"', quoted(dt))
  elseif dt == "System" and #constraints > 0 then
    add('defaultingType: Invalid value: "System": when .defaultConstraints are not empty')
  end
  for i, c in ipairs(constraints) do
    local p = string.format("defaultConstraints[%d]", i - 1)
    if type(c) ~= "table" then
      add("%s: Invalid value: %s: expected a constraint object", p, quoted(c))
    else
      if type(c.maxSkew) ~= "number" or c.maxSkew <= 0 or c.maxSkew ~= floor(c.maxSkew) then
        add("%s.maxSkew: Invalid value: %s: not in valid range", p, quoted(c.maxSkew))
      end
      local key = c.topologyKey
      if key == nil or key == "" then
        add("%s.topologyKey: Required value: can not be empty", p)
      elseif type(key) ~= "string" then
        add("%s.topologyKey: Invalid value: %s: expected a string", p, quoted(key))
      else
        local why = label_name_error(key)
        if why then add("%s.topologyKey: Invalid value: %s: %s", p, quoted(key), why) end
      end
      local wu = c.whenUnsatisfiable
      if wu == nil or wu == "" then
        add("%s.whenUnsatisfiable: Required value: can not be empty", p)
      elseif wu ~= "DoNotSchedule" and wu ~= "ScheduleAnyway" then
        add('%s.whenUnsatisfiable: Unsupported value: %s: supported values: "DoNotSchedule", "ScheduleAnyway"',
          p, quoted(wu))
      end
      if c.labelSelector ~= nil then
        add("%s.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod", p)
      end
      for j = 1, i - 1 do
        local o = constraints[j]
        if type(o) == "table" and o.topologyKey == key and o.whenUnsatisfiable == wu then
          add('defaultConstraints[%d]: Duplicate value: "{%s, %s}"', i - 1, tostring(key), tostring(wu))
          break
        end
      end
      for _, f in ipairs({ "nodeAffinityPolicy", "nodeTaintsPolicy" }) do
        local v = c[f]
        if v ~= nil and v ~= "Honor" and v ~= "Ignore" then
          add('%s.%s: Unsupported value: %s: supported values: "Honor", "Ignore"', p, f, quoted(v))
        end
      end
      if c.minDomains ~= nil and (type(c.minDomains) ~= "number" or c.minDomains <= 0) then
        add("%s.minDomains: Invalid value: %s: must be greater than zero", p, quoted(c.minDomains))
      end
    end
  end
  if #errs == 1 then error(errs[1], 0) end
  if #errs > 1 then error("[" .. table.concat(errs, ", ") .. "]", 0) end
end

-- A default constraint as the template the per-pod records are made from.
local function default_template(c)
  return {
    key = ls.intern(c.topologyKey),
    max_skew = c.maxSkew,
    min_domains = c.minDomains or 1,
    aff_honor = c.nodeAffinityPolicy == nil or c.nodeAffinityPolicy == "Honor",
    taints_honor = c.nodeTaintsPolicy == "Honor",
  }
end

function P:init(args)
  local list = args.defaultConstraints or {}
  validate(args, list)
  self.system = args.defaultingType == "System"
  if self.system then list = SYSTEM_DEFAULTS end
  self.defaults = { [DO_NOT_SCHEDULE] = {}, [SCHEDULE_ANYWAY] = {} }
  for _, c in ipairs(list) do
    local by = self.defaults[c.whenUnsatisfiable == "DoNotSchedule" and DO_NOT_SCHEDULE or SCHEDULE_ANYWAY]
    by[#by + 1] = default_template(c)
  end
  self.missing_label = ls.unresolvable(ERR_MISSING_LABEL)
  self.violated = ls.unschedulable(ERR_CONSTRAINTS)
  self.no_prefilter_state = ls.error(string.format('reading "PreFilter%s" from cycleState: not found', self.name))
  self.no_prescore_state = string.format('error reading "PreScore%s" from cycleState: not found', self.name)
  self.aggs = ls.bounded_cache(MAX_AGGS)
end

-- ---- constraints ------------------------------------------------------------

-- Does every selector of the list match the labels? (The AND of selectors.)
-- One selector, the usual case, takes no loop: the JIT keeps it in the caller's trace.
local function matches(sels, nsel, labels)
  if nsel == 1 then return selector_matches(sels[1], labels) end
  for k = 1, nsel do
    if not selector_matches(sels[k], labels) then return false end
  end
  return true
end

-- upstream countPodsMatchSelector: pods in namespace ns, not terminating,
-- matching the constraint's selector; an empty selector counts none.
local function count_matching(ni, c, ns)
  if c.empty then return 0 end
  local pods, count = ni.pods, 0
  if c.nsel == 1 then
    local sel = c.sels[1]
    for j = 0, ni.num_pods - 1 do
      local p = pods[j]
      if p.ns == ns and p.deletion_ns == 0 and selector_matches(sel, p.labels) then count = count + 1 end
    end
  else
    local sels, nsel = c.sels, c.nsel
    for j = 0, ni.num_pods - 1 do
      local p = pods[j]
      if p.ns == ns and p.deletion_ns == 0 and matches(sels, nsel, p.labels) then count = count + 1 end
    end
  end
  return count
end

-- count_matching for every node j of nodes[0..num-1] with want[j], into a new
-- table (nil for the others). One flat loop over (node, pod): LuaJIT compiles
-- it as one trace, where a pod loop nested in a node loop keeps falling back
-- to the interpreter on short pod lists of varying length.
local function count_nodes(nodes, num, want, c, ns)
  local out = {}
  if c.empty then
    for j = 0, num - 1 do
      if want[j] then out[j] = 0 end
    end
    return out
  end
  local sels, nsel = c.sels, c.nsel
  local j, k, np, count = -1, 0, 0, 0
  local pods
  while true do
    if k < np then
      local p = pods[k]
      k = k + 1
      if p.ns == ns and p.deletion_ns == 0 and matches(sels, nsel, p.labels) then count = count + 1 end
    else
      if j >= 0 and want[j] then out[j] = count end
      j = j + 1
      if j >= num then break end
      count, k, np = 0, 0, 0
      if want[j] then
        local ni = nodes[j]
        pods, np = ni.pods, ni.num_pods
      end
    end
  end
  return out
end

-- upstream helper.DefaultSelector as a list of selectors to AND: the Services
-- of the pod's namespace whose (non-nil) selector matches the pod, then the
-- selector of its controller. Selectors without requirements add nothing and
-- are left out, so an empty list is the empty selector.
local function default_selector(pod)
  local sels = {}
  local ns, labels = pod.ns, pod.labels
  for svc in ls.objects(SERVICE) do
    local sel = svc.selector
    if svc.ns == ns and svc.has_selector ~= 0 and selector_matches(sel, labels) and sel.n > 0 then
      sels[#sels + 1] = sel
    end
  end
  local refs = pod.owner_refs
  for i = 0, pod.n_owner_refs - 1 do
    local ref = refs[i]
    if ref.controller ~= 0 then    -- metav1.GetControllerOfNoCopy: the first controller
      if CONTROLLER_KINDS[ref.kind] then
        local o = ls.find_object(ref.kind, ns, ref.name)
        if o ~= nil and o.has_selector ~= 0 and o.selector.match_nothing == 0 and o.selector.n > 0 then
          sels[#sels + 1] = o.selector
        end
      end
      break
    end
  end
  return sels
end

local function my_state(self, state)
  local s = state[self.name]
  if s == nil then
    s = {}
    state[self.name] = s
  end
  return s
end

-- The pod's constraints with whenUnsatisfiable == want, as fresh records
-- { key, max_skew, min_domains, aff_honor, taints_honor, sels, nsel, empty,
-- self_match (1 when the pod matches the selector, else 0) }; nil when none.
local function constraints_of(self, state, pod, want)
  local out = {}
  local n = pod.n_spread_constraints
  if n > 0 then
    local scs = pod.spread_constraints
    for i = 0, n - 1 do
      local sc = scs[i]
      if sc.when_unsatisfiable == want then
        local sel = sc.selector
        out[#out + 1] = {
          key = sc.topology_key,
          max_skew = sc.max_skew,
          min_domains = sc.min_domains,
          aff_honor = sc.node_affinity_policy == HONOR,
          taints_honor = sc.node_taints_policy == HONOR,
          sels = { sel }, nsel = 1,
          empty = sel.match_nothing == 0 and sel.n == 0,
        }
      end
    end
  else
    local templates = self.defaults[want]
    if #templates == 0 then return nil end
    local s = my_state(self, state)
    if s.default_selector == nil then s.default_selector = default_selector(pod) end
    local sels = s.default_selector
    if #sels == 0 then return nil end
    for i, t in ipairs(templates) do
      out[i] = {
        key = t.key, max_skew = t.max_skew, min_domains = t.min_domains,
        aff_honor = t.aff_honor, taints_honor = t.taints_honor,
        sels = sels, nsel = #sels, empty = false,
      }
    end
  end
  if #out == 0 then return nil end
  for _, c in ipairs(out) do c.self_match = matches(c.sels, c.nsel, pod.labels) and 1 or 0 end
  return out
end

-- upstream nodeLabelsMatchSpreadConstraints: the node has every topology key.
local function has_all_keys(labels, cs, n)
  for i = 1, n do
    if label(labels, cs[i].key) == 0 then return false end
  end
  return true
end

-- upstream matchNodeInclusionPolicies, with the node-level answers memoized
-- by the caller in `memo` (1 = yes, 2 = no; reset per node).
local function included(c, pod, node, memo)
  if c.aff_honor then
    local m = memo[1]
    if m == 0 then
      m = pod_matches_node_affinity(pod, node) and 1 or 2
      memo[1] = m
    end
    if m == 2 then return false end
  end
  if c.taints_honor then
    local m = memo[2]
    if m == 0 then
      m = find_untolerated_taint(node.taints, node.n_taints, pod.tolerations, pod.n_tolerations, TAINT_MASK) < 0
        and 1 or 2
      memo[2] = m
    end
    if m == 2 then return false end
  end
  return true
end

-- ---- counts cached between cycles -------------------------------------------
--
-- Counting matching pods over the whole cluster in every cycle is O(all pods)
-- per pod. Instead, per (namespace, selectors, topology key, keys a node must
-- have, missing-key rule) the plugin keeps, per node of the snapshot list,
-- the node's domain, its matching-pod count and the NodeInfo generation they
-- were taken at, plus the per-domain sums (only domains with at least one
-- eligible node), a histogram of those sums and the number of domains. A
-- cycle recounts only the positions the snapshot reports changed since the
-- entry's last refresh (ls.changed_nodes); when the node list itself changed,
-- it compares every node's generation (process-wide and unique, so an equal
-- generation at a list position means the same node with the same pods and
-- labels) and recounts those that differ. Used when the node
-- inclusion policies pass every node (no nodeAffinityPolicy Honor with a pod
-- nodeSelector / required node affinity, no nodeTaintsPolicy Honor); other
-- pods take the full count. Generation 0 (NodeInfos not made by the cache) is
-- never trusted.


local function new_agg()
  return { gen = {}, cnt = {}, dom = {}, num = 0, counts = {}, nodes_in = {}, hist = {}, ndomains = 0 }
end

-- A domain's sum moves by dcount and its number of eligible nodes by dnodes.
local function dom_add(A, d, dcount, dnodes)
  local counts, hist, nodes_in = A.counts, A.hist, A.nodes_in
  local old = counts[d]
  if old ~= nil then
    local h = hist[old] - 1
    hist[old] = h > 0 and h or nil
  end
  local nin = (nodes_in[d] or 0) + dnodes
  if nin == 0 then
    counts[d], nodes_in[d] = nil, nil
    A.ndomains = A.ndomains - 1
    return
  end
  if old == nil then
    old = 0
    A.ndomains = A.ndomains + 1
  end
  local new = old + dcount
  counts[d], nodes_in[d] = new, nin
  hist[new] = (hist[new] or 0) + 1
end

-- Drops what list position j contributed.
local function agg_drop(A, j)
  local d = A.dom[j]
  if d then dom_add(A, d, -A.cnt[j], -1) end
  A.dom[j], A.cnt[j], A.gen[j] = nil, nil, nil
end

-- Recounts list position j (node ni, generation g) of entry A for
-- constraint c (its selectors, namespace ns), nodes needing every key of
-- cs[1..n] when require_all, else a missing key read as the domain "".
local function agg_node(A, j, ni, g, c, ns, cs, n, require_all)
  local dom, cnt = A.dom, A.cnt
  local d = dom[j]
  if d then dom_add(A, d, -cnt[j], -1) end
  local labels = ni.node.labels
  local k = 0
  d = false
  if not require_all or has_all_keys(labels, cs, n) then
    d = label(labels, c.key)
    if d == 0 then d = EMPTY end
    k = count_matching(ni, c, ns)
    dom_add(A, d, k, 1)
  end
  dom[j], cnt[j], A.gen[j] = d, k, g
end

-- Brings entry A up to date with the snapshot list (see ls.refresh_nodes).
local function agg_refresh(A, nodes, num, c, ns, cs, n, require_all)
  ls.refresh_nodes(A, nodes, num, agg_node, agg_drop, c, ns, cs, n, require_all)
end

local selector_key = ls.selector_signature

-- The cached entry for constraint c, up to date.
local function agg_for(self, c, cs, n, ns, require_all, nodes, num)
  local parts = { ns, require_all and 1 or 0, c.key, "|" }
  for i = 1, n do parts[#parts + 1] = cs[i].key end
  parts[#parts + 1] = "|"
  for k = 1, c.nsel do selector_key(parts, c.sels[k]) end
  local id = table.concat(parts, ",")
  local A = ls.cache_get(self.aggs, id, new_agg)
  agg_refresh(A, nodes, num, c, ns, cs, n, require_all)
  return A
end

-- Whether the inclusion policies of cs[1..n] pass every node for pod.
local function includes_all(pod, cs, n)
  local node_aff = pod.node_selector.n > 0 or pod.has_required_node_affinity ~= 0
  for i = 1, n do
    local c = cs[i]
    if c.taints_honor or (c.aff_honor and node_aff) then return false end
  end
  return true
end

local function hist_min(hist)
  local min = MAX_INT32
  for cnt in pairs(hist) do
    if cnt < min then min = cnt end
  end
  return min
end

local copy_table = ls.copy_table

-- ---- PreFilter / Filter -----------------------------------------------------

-- The global minimum Filter uses: 0 while there are fewer domains than minDomains.
local function refresh_min_match(c)
  c.min_match = c.ndomains < c.min_domains and 0 or c.min
end

function P:pre_filter(state, pod)
  local cs = constraints_of(self, state, pod, DO_NOT_SCHEDULE)
  local s = my_state(self, state)
  if cs == nil then
    s.filter = { n = 0, cs = {} }   -- an empty state tolerates every pod (upstream's rule)
    return ls.skip
  end
  local n = #cs
  local nodes, num = ls.all_nodes()
  if includes_all(pod, cs, n) then
    for i = 1, n do
      local c = cs[i]
      local A = agg_for(self, c, cs, n, pod.ns, true, nodes, num)
      -- shared with the cache: update_count copies them before a change
      c.counts, c.hist, c.ndomains, c.shared = A.counts, A.hist, A.ndomains, true
      c.min = hist_min(A.hist)
      refresh_min_match(c)
    end
    s.filter = { n = n, cs = cs }
    return nil
  end
  for i = 1, n do cs[i].counts = {} end
  -- which nodes each constraint counts: all keys present, policies passed
  local want, memo = {}, { 0, 0 }
  for i = 1, n do cs[i].on = {} end
  for j = 0, num - 1 do
    local node = nodes[j].node
    if has_all_keys(node.labels, cs, n) then
      memo[1], memo[2] = 0, 0
      for i = 1, n do
        local c = cs[i]
        if included(c, pod, node, memo) then
          c.on[j] = true
          want[j] = true
        end
      end
    end
  end
  -- matching pods per node, once per distinct selector (the defaults share one)
  local by_sels = {}
  for i = 1, n do
    local c = cs[i]
    if by_sels[c.sels] == nil then by_sels[c.sels] = count_nodes(nodes, num, want, c, pod.ns) end
  end
  for i = 1, n do
    local c = cs[i]
    local on, per_node, counts, key = c.on, by_sels[c.sels], c.counts, c.key
    for j = 0, num - 1 do
      if on[j] then
        local v = label(nodes[j].node.labels, key)
        counts[v] = (counts[v] or 0) + per_node[j]
      end
    end
    c.on = nil
  end
  for i = 1, n do
    local c = cs[i]
    local hist, ndomains, min = {}, 0, MAX_INT32
    for _, cnt in pairs(c.counts) do
      ndomains = ndomains + 1
      hist[cnt] = (hist[cnt] or 0) + 1
      if cnt < min then min = cnt end
    end
    c.hist, c.ndomains, c.min = hist, ndomains, min
    refresh_min_match(c)
  end
  s.filter = { n = n, cs = cs }
  return nil
end

-- CycleState.Clone (nominated pods, preemption's dry runs): fresh constraint
-- records whose count tables are shared, copied by update_count before a
-- change (both sides are marked shared); the rest is never changed.
function P:clone_state(s)
  local c = {}
  for k, v in pairs(s) do c[k] = v end
  local f = s.filter
  if f ~= nil then
    local cs = {}
    for i = 1, f.n do
      local r = {}
      for k, v in pairs(f.cs[i]) do r[k] = v end
      r.shared, f.cs[i].shared = true, true
      cs[i] = r
    end
    c.filter = { n = f.n, cs = cs }
  end
  return c
end

function P:filter(state, _, ni)
  local s = state[self.name]
  local f = s and s.filter
  if f == nil then return self.no_prefilter_state end
  local cs = f.cs
  local labels = ni.node.labels
  for i = 1, f.n do
    local c = cs[i]
    local v = label(labels, c.key)
    if v == 0 then return self.missing_label end
    -- existing matching pods + self match - global minimum <= maxSkew
    if (c.counts[v] or 0) + c.self_match - c.min_match > c.max_skew then return self.violated end
  end
  return nil
end

-- One domain's count changes by delta; the histogram keeps the minimum exact.
local function update_count(c, v, delta)
  if c.shared then
    c.counts, c.hist, c.shared = copy_table(c.counts), copy_table(c.hist), false
  end
  local counts, hist = c.counts, c.hist
  local old = counts[v]
  local new
  if old == nil then
    new = delta     -- a domain PreFilter did not see (upstream: counted, domains not)
  else
    hist[old] = hist[old] - 1
    new = old + delta
  end
  counts[v] = new
  hist[new] = (hist[new] or 0) + 1
  if new < c.min then
    c.min = new
  elseif old == c.min and hist[old] == 0 then
    -- the last domain at the minimum went up
    local min = MAX_INT32
    if delta == 1 then
      min = new
    else
      for _, cnt in pairs(counts) do
        if cnt < min then min = cnt end
      end
    end
    c.min = min
  end
  refresh_min_match(c)
end

-- upstream updateWithPod: the pod's own namespace, an eligible node, and per
-- constraint the selector (Matches, not the counting rule) and the policies.
local function update_with_pod(self, state, pod, other, ni, delta)
  local s = state[self.name]
  local f = s and s.filter
  if f == nil then return self.no_prefilter_state end
  if ni == nil or other.ns ~= pod.ns then return nil end
  local cs, n = f.cs, f.n
  local node = ni.node
  local labels = node.labels
  if not has_all_keys(labels, cs, n) then return nil end
  local memo = { 0, 0 }
  for i = 1, n do
    local c = cs[i]
    if matches(c.sels, c.nsel, other.labels) and included(c, pod, node, memo) then
      update_count(c, label(labels, c.key), delta)
    end
  end
  return nil
end

function P:add_pod(state, pod, pod_to_add, ni)
  return update_with_pod(self, state, pod, pod_to_add, ni, 1)
end

function P:remove_pod(state, pod, pod_to_remove, ni)
  return update_with_pod(self, state, pod, pod_to_remove, ni, -1)
end

-- ---- PreScore / Score / NormalizeScore --------------------------------------

function P:pre_score(state, pod, feasible, nf)
  local nodes, num = ls.all_nodes()
  if nf == 0 or num == 0 then return ls.skip end
  local cs = constraints_of(self, state, pod, SCHEDULE_ANYWAY)
  if cs == nil then return ls.skip end
  local n = #cs
  -- nodes missing a key are ignored only with the pod's own or List defaults
  local require_all = pod.n_spread_constraints > 0 or not self.system
  for i = 1, n do
    local c = cs[i]
    c.counts, c.size, c.hostname = {}, 0, c.key == HOSTNAME
  end
  local ignored, nignored, feasible_set = {}, 0, {}
  for j = 0, nf - 1 do
    local ni = feasible[j]
    local labels = ni.node.labels
    feasible_set[ni.index] = true
    if require_all and not has_all_keys(labels, cs, n) then
      ignored[ni.index] = true
      nignored = nignored + 1
    else
      for i = 1, n do
        local c = cs[i]
        if not c.hostname then   -- hostname counts are per node, below
          local v = label(labels, c.key)
          if v == 0 then v = EMPTY end
          if c.counts[v] == nil then
            c.counts[v] = 0
            c.size = c.size + 1
          end
        end
      end
    end
  end
  for i = 1, n do
    local c = cs[i]
    local size = c.hostname and nf - nignored or c.size
    c.weight = log(size + 2)   -- topologyNormalizingWeight
  end
  if includes_all(pod, cs, n) then
    for i = 1, n do
      local c = cs[i]
      local A = agg_for(self, c, cs, n, pod.ns, require_all, nodes, num)
      if c.hostname then
        c.on_node = A.cnt    -- per list position = NodeInfo index
      else
        local counts, sums = c.counts, A.counts
        for v in pairs(counts) do counts[v] = sums[v] or 0 end
      end
    end
    my_state(self, state).score = { n = n, cs = cs, ignored = ignored }
    return nil
  end
  -- Which nodes each constraint counts. Zone-like keys: eligible nodes whose
  -- domain is one of the feasible nodes'. Hostname: the scored nodes' own pods
  -- (upstream counts them in Score; counting them here, on the same snapshot,
  -- keeps the pod loop out of the per-node hook).
  local want, memo = {}, { 0, 0 }
  for i = 1, n do cs[i].on = {} end
  for j = 0, num - 1 do
    local ni = nodes[j]
    local node = ni.node
    local labels = node.labels
    if not require_all or has_all_keys(labels, cs, n) then
      local idx = ni.index
      local scored = feasible_set[idx] and not ignored[idx]
      memo[1], memo[2] = 0, 0
      for i = 1, n do
        local c = cs[i]
        if c.hostname then
          if scored then
            c.on[j] = true
            want[j] = true
          end
        elseif included(c, pod, node, memo) then
          local v = label(labels, c.key)
          if c.counts[v == 0 and EMPTY or v] ~= nil then
            c.on[j] = true
            want[j] = true
          end
        end
      end
    end
  end
  local by_sels = {}
  for i = 1, n do
    local c = cs[i]
    if by_sels[c.sels] == nil then by_sels[c.sels] = count_nodes(nodes, num, want, c, pod.ns) end
  end
  for i = 1, n do
    local c = cs[i]
    local on, per_node, key = c.on, by_sels[c.sels], c.key
    if c.hostname then
      local on_node = {}
      for j = 0, num - 1 do
        if on[j] then on_node[nodes[j].index] = per_node[j] end
      end
      c.on_node = on_node
    else
      local counts = c.counts
      for j = 0, num - 1 do
        if on[j] then
          local v = label(nodes[j].node.labels, key)
          if v == 0 then v = EMPTY end
          counts[v] = counts[v] + per_node[j]
        end
      end
    end
    c.on = nil
  end
  my_state(self, state).score = { n = n, cs = cs, ignored = ignored }
  return nil
end

local round = ls.round   -- Go's math.Round

function P:score(state, pod, ni)
  local s = state[self.name]
  local sc = s and s.score
  if sc == nil then error(self.no_prescore_state, 0) end
  if sc.ignored[ni.index] then return 0 end
  local cs = sc.cs
  local labels = ni.node.labels
  local score = 0
  for i = 1, sc.n do
    local c = cs[i]
    local v = label(labels, c.key)
    if v ~= 0 then
      local cnt
      if c.hostname then
        cnt = c.on_node[ni.index] or count_matching(ni, c, pod.ns)
      else
        cnt = c.counts[v] or 0
      end
      score = score + (cnt * c.weight + (c.max_skew - 1))   -- scoreForCount
    end
  end
  return round(score)
end

function P:normalize_score(state, _, scores, nodes, n)
  local s = state[self.name]
  local sc = s and s.score
  if sc == nil then return nil end
  local ignored = sc.ignored
  local min, max = math.huge, 0
  for i = 0, n - 1 do
    if not ignored[nodes[i].index] then
      local v = tonumber(scores[i])
      if v < min then min = v end
      if v > max then max = v end
    end
  end
  for i = 0, n - 1 do
    if ignored[nodes[i].index] then
      scores[i] = 0
    elseif max == 0 then
      scores[i] = MAX_NODE_SCORE
    else
      -- MaxNodeScore * (max + min - s) / max, int64 division (operands >= 0)
      local a = MAX_NODE_SCORE * (max + min - tonumber(scores[i]))
      local q = floor(a / max)
      if q * max > a then q = q - 1 end
      scores[i] = q
    end
  end
  return nil
end


-- ---- events and queueing hints ------------------------------------------------

local EMPTY_NAME = ls.intern("")

local function hard_constraints(self, pod)
  return constraints_of(self, {}, pod, DO_NOT_SCHEDULE)
end

local function labels_equal(a, b)
  if a.n ~= b.n then return false end
  for i = 0, a.n - 1 do
    local x, y = a.items[i], b.items[i]
    if x.key ~= y.key or x.value ~= y.value then return false end
  end
  return true
end

local function any_selector_matches(cs, labels)
  for _, c in ipairs(cs) do
    if matches(c.sels, c.nsel, labels) then return true end
  end
  return false
end

local function match_changed(cs, old_labels, new_labels)
  for _, c in ipairs(cs) do
    if matches(c.sels, c.nsel, old_labels) ~= matches(c.sels, c.nsel, new_labels) then return true end
  end
  return false
end

-- upstream involvedInTopologySpreading
local function involved(other, pod)
  if other.uid == pod.uid then return true end
  return other.node_name ~= 0 and other.node_name ~= EMPTY_NAME and other.ns == pod.ns
end

local function after_pod_change(pod, old, new, self)
  if (new ~= nil and not involved(new, pod)) or (old ~= nil and not involved(old, pod)) then
    return ls.QUEUE_SKIP
  end
  local cs = hard_constraints(self, pod)
  if cs == nil then return ls.QUEUE_SKIP end
  if old ~= nil and new ~= nil then
    if labels_equal(old.labels, new.labels) then return ls.QUEUE_SKIP end
    return match_changed(cs, old.labels, new.labels) and ls.QUEUE or ls.QUEUE_SKIP
  end
  return any_selector_matches(cs, (new or old).labels) and ls.QUEUE or ls.QUEUE_SKIP
end

local function tolerations_equal(a, b)
  if a.n_tolerations ~= b.n_tolerations then return false end
  for i = 0, a.n_tolerations - 1 do
    local x, y = a.tolerations[i], b.tolerations[i]
    if x.key ~= y.key or x.value ~= y.value or x.op ~= y.op or x.effect ~= y.effect then return false end
  end
  return true
end

local function after_own_change(pod, old, new, self)
  local cs = hard_constraints(self, pod)
  if cs == nil then return ls.QUEUE_SKIP end
  if not tolerations_equal(old, new) then
    for _, c in ipairs(cs) do
      if c.taints_honor then return ls.QUEUE end
    end
  end
  if match_changed(cs, old.labels, new.labels) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function taints_equal(a, b)
  if a.n_taints ~= b.n_taints then return false end
  for i = 0, a.n_taints - 1 do
    local x, y = a.taints[i], b.taints[i]
    if x.key ~= y.key or x.value ~= y.value or x.effect ~= y.effect then return false end
  end
  return true
end

local function key_values_changed(cs, a, b)
  for _, c in ipairs(cs) do
    if label(a, c.key) ~= label(b, c.key) then return true end
  end
  return false
end

local function after_node_change(pod, old, new, self)
  local cs = hard_constraints(self, pod)
  if cs == nil then return ls.QUEUE_SKIP end
  local n = #cs
  local old_match = old ~= nil and has_all_keys(old.labels, cs, n)
  local new_match = new ~= nil and has_all_keys(new.labels, cs, n)
  if old ~= nil and new ~= nil then
    if old_match ~= new_match then return ls.QUEUE end
    if new_match and (key_values_changed(cs, old.labels, new.labels) or not taints_equal(old, new)) then
      return ls.QUEUE
    end
    return ls.QUEUE_SKIP
  end
  return (new_match or old_match) and ls.QUEUE or ls.QUEUE_SKIP
end

P.events = {
  { resource = "AssignedPod", action = { "Add", "UpdatePodLabel", "Delete" }, hint = after_pod_change },
  { resource = "TargetPod", action = { "UpdatePodLabel", "UpdatePodToleration" }, hint = after_own_change },
  { resource = "Node", action = { "Add", "Delete", "UpdateNodeLabel", "UpdateNodeTaint" }, hint = after_node_change },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- PodTopologySpread: spreading is not local to a pod and a node, so a pod with
-- constraints, or any pod when the profile has default constraints (System
-- defaulting, or a non-empty List), is unsignable; otherwise no fragment.
function P:sign(pod)
  if pod.n_spread_constraints > 0 then return false, "pods with topology constraints are not signable" end
  if #self.defaults[DO_NOT_SCHEDULE] + #self.defaults[SCHEDULE_ANYWAY] > 0 then
    return false, "pods with default topology constraints are not signable", true   -- true: every pod
  end
  return nil
end

return P
