-- InterPodAffinity: required pod affinity / anti-affinity (Filter) and
-- preferred ones, plus existing pods' terms, as topology scores (Score).
-- Over 800 lines: Filter, Score, the events and hints and the counts kept
-- between cycles all read the same per-node term tables; split, they would
-- share them through a module of their own.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go,
-- scoring.go,plugin.go} and framework.AffinityTerm (v1.30-v1.34):
-- * Term matching (AffinityTerm.Matches): the pod's namespace is in the term's
--   namespaces, or the term has a namespaceSelector that matches the labels of
--   the namespace, and the labelSelector matches the pod's labels. The decoder
--   already defaulted `namespaces` to the owner's namespace (when both
--   namespaces and namespaceSelector are absent) and merged matchLabelKeys /
--   mismatchLabelKeys into the labelSelector.
-- * The incoming pod's terms (mergeAffinityTermNamespacesIfNotEmpty): a
--   non-empty namespaceSelector is unrolled, once per cycle, into the namespaces
--   of the Namespace objects whose labels it matches (a namespace without an
--   object is never selected); an empty one ({}) matches every namespace.
-- * Existing pods' terms are matched against the incoming pod with the labels
--   of the incoming pod's Namespace object (none: an empty label set).
-- * PreFilter counts, per (topologyKey, node value): existing pods' required
--   anti-affinity terms matching the incoming pod (only pods in
--   pods_with_required_anti_affinity), existing pods matching all of the
--   incoming pod's required affinity terms (+1 per term), and existing pods
--   matching each incoming required anti-affinity term. Skip when the first
--   count is empty and the pod has no required terms. add_pod / remove_pod
--   move the three counts by +1 / -1 (an entry that reaches 0 is deleted, so
--   "no pod matches" stays exact for the first-pod rule).
-- * Filter, in upstream's order: affinity (every term's topology key on the
--   node and a count > 0 there; else, unless no pod matches anywhere and the
--   pod matches its own terms) -> UnschedulableAndUnresolvable "node(s) didn't
--   match pod affinity rules"; anti-affinity -> Unschedulable "node(s) didn't
--   match pod anti-affinity rules"; existing pods' anti-affinity ->
--   Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules".
-- * PreScore: over all nodes and all their pods when the incoming pod has
--   preferred terms, else over the pods with affinity only; per existing pod on
--   a node with the term's topology key: + incoming preferred affinity weight,
--   - incoming preferred anti-affinity weight, + hardPodAffinityWeight per
--   existing required affinity term (when > 0), + / - existing preferred
--   (anti-)affinity weights. Skip when nothing was counted, when there are no
--   feasible nodes, or with ignorePreferredTermsOfExistingPods and no
--   preferred terms on the pod. Score sums the node's values per topology key
--   (may be negative); NormalizeScore maps [min, max] to [0, 100] as
--   int64(100 * (float64(s - min) / float64(max - min))), all 0 when max == min.
--
-- Representation: a (topologyKey, value) pair is the Lua number
-- key_id * 2^32 + value_id (exact while key ids stay below 2^21: asserted where
-- a key is counted). Filter and Score read only numbers and these maps: they
-- allocate nothing per node.
--
-- Deviations:
-- * Queueing hints match a term's namespaceSelector against the other pod's
--   Namespace labels (upstream passes no labels there, so only an empty
--   selector matches).
--
-- Events (upstream v1.37 plugin guide, which lists v1.36's fixes for deleted
-- pods, the pod's own label changes and nominated pods; hint logic otherwise
-- as in the v1.32-v1.34 code):
-- * AssignedPod Add|UpdatePodLabel|Delete, Skip unless the other pod is bound
--   or nominated. Added: Queue when it matches all of the pod's required
--   affinity terms. Updated: Queue when it now matches all affinity terms and
--   did not, or matched some anti-affinity term and matches none now.
--   Deleted: Queue when it matched an anti-affinity term of the pod, or one of
--   its own required anti-affinity terms matched the pod.
-- * TargetPod UpdatePodLabel: Queue (existing pods' terms may no longer match it).
-- * Node Add|UpdateNodeLabel: Queue when an added node has an affinity term's
--   topology key, or an updated one gained it or changed its value; for
--   anti-affinity terms, when a node is added, or an updated one lost the key
--   or changed its value.
-- * A missing PreFilter / PreScore state gives an Error status (Filter,
--   add_pod, remove_pod, NormalizeScore) or raises (Score), as upstream's
--   "error reading ... from cycleState" does.
--
-- Over 800 lines: one plugin per file, and this one carries Filter, Score,
-- the counts kept between cycles and its queueing hints.
local ls = require("luasched")
local signers = require("luasched.signers")
local MAX_MAPS = 32

local P = ls.plugin("InterPodAffinity", {
  defaults = {
    hardPodAffinityWeight = 1,
    ignorePreferredTermsOfExistingPods = false,
  },
})

local floor, tonumber, error = math.floor, tonumber, error
local label, has_label, matches = ls.label, ls.has_label, ls.selector_matches

local SHIFT = 2 ^ 32      -- pair = key_id * SHIFT + value_id
local MAX_KEY_ID = 2 ^ 21 -- key_id * 2^32 + value_id < 2^53
local MAX_NODE_SCORE = ls.MAX_NODE_SCORE

local MSG_AFFINITY = "node(s) didn't match pod affinity rules"
local MSG_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
local MSG_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

function P:init(args)
  local w = args.hardPodAffinityWeight
  if w == nil then w = 1 end
  if type(w) ~= "number" or w ~= floor(w) or w < 0 or w > 100 then
    error(string.format("hardPodAffinityWeight: Invalid value: %s: not in valid range [0, 100]", tostring(w)), 0)
  end
  local ignore = args.ignorePreferredTermsOfExistingPods
  if ignore == nil then ignore = false end
  if type(ignore) ~= "boolean" then
    error("ignorePreferredTermsOfExistingPods: Invalid value: must be a boolean", 0)
  end
  self.hard_weight = w
  self.ignore_preferred = ignore
  self.affinity_fail = ls.unresolvable(MSG_AFFINITY)
  self.anti_affinity_fail = ls.unschedulable(MSG_ANTI_AFFINITY)
  self.existing_fail = ls.unschedulable(MSG_EXISTING_ANTI_AFFINITY)
  self.filter_key = self.name
  self.score_key = self.name .. "/PreScore"
  self.no_filter_state = ls.error(string.format('error reading "PreFilter%s" from cycleState: not found', self.name))
  self.no_score_state = ls.error(string.format('failed to read "PreScore%s" from cycleState: not found', self.name))
  self.maps = ls.bounded_cache(MAX_MAPS)
end

-- ---- terms -------------------------------------------------------------------

local function check_key(key)
  if key >= MAX_KEY_ID then
    error(string.format("topology key id %d is too large to count (ids must stay below 2^21)", key), 0)
  end
  return key
end

-- The value id of `key` on a node, or nil when the node lacks the label.
local function node_value(labels, key)
  local v = label(labels, key)
  if v ~= 0 or has_label(labels, key) then return v end
  return nil
end

-- An incoming pod's term, its namespaceSelector unrolled into a namespace set
-- (or `all` for an empty selector).
local function incoming_term(t, weight)
  local ns = {}
  for j = 0, t.n_namespaces - 1 do ns[tonumber(t.namespaces[j])] = true end
  local all = false
  if t.has_ns_selector ~= 0 then
    local sel = t.ns_selector
    if sel.match_nothing == 0 and sel.n == 0 then
      all = true
    else
      for o in ls.objects("Namespace") do
        if matches(sel, o.labels) then ns[tonumber(o.name)] = true end
      end
    end
  end
  return { key = check_key(tonumber(t.topology_key)), selector = t.selector, ns = ns, all = all, weight = weight }
end

local function incoming_terms(arr, n)
  local out = {}
  for i = 0, n - 1 do out[i + 1] = incoming_term(arr[i]) end
  return out
end

local function incoming_weighted_terms(arr, n)
  local out = {}
  for i = 0, n - 1 do out[i + 1] = incoming_term(arr[i].term, arr[i].weight) end
  return out
end

-- An incoming pod's (merged) term against pod p.
local function incoming_matches(ct, p)
  return (ct.all or ct.ns[p.ns] == true) and matches(ct.selector, p.labels)
end

local function matches_all(terms, p)
  local n = #terms
  if n == 0 then return false end
  for i = 1, n do
    if not incoming_matches(terms[i], p) then return false end
  end
  return true
end

-- An existing pod's term against the incoming pod (namespace `ns`, its
-- namespace's labels `ns_labels`).
local function existing_matches(t, pod, ns, ns_labels)
  local hit = false
  for j = 0, t.n_namespaces - 1 do
    if t.namespaces[j] == ns then hit = true break end
  end
  if not hit and t.has_ns_selector ~= 0 then hit = matches(t.ns_selector, ns_labels) end
  return hit and matches(t.selector, pod.labels)
end

-- ---- counts per (topologyKey, value) ---------------------------------------------

-- { n = entries, m = { [pair] = count }, keys = { key ids seen }, nk, kset }
local function new_counts()
  return { n = 0, m = {}, keys = {}, nk = 0, kset = {} }
end

-- topologyToMatchedTermCount.update: moves the count of (key, node's value)
-- by delta when the node has the key; an entry reaching 0 is deleted.
local function bump(c, labels, key, delta)
  local v = node_value(labels, key)
  if v == nil then return end
  check_key(key)
  if not c.kset[key] then
    c.kset[key] = true
    c.nk = c.nk + 1
    c.keys[c.nk] = key
  end
  local p = key * SHIFT + v
  local m = c.m
  local old = m[p] or 0
  local new = old + delta
  if new == 0 then
    if old ~= 0 then
      m[p] = nil
      c.n = c.n - 1
    end
  else
    if old == 0 then c.n = c.n + 1 end
    m[p] = new
  end
end

-- Existing pod p's required anti-affinity terms that match the incoming pod.
local function count_existing_anti(s, p, labels, delta)
  local pod, ns, nsl = s.pod, s.ns, s.ns_labels
  for t = 0, p.n_anti_affinity - 1 do
    local term = p.anti_affinity[t]
    if existing_matches(term, pod, ns, nsl) then
      bump(s.existing, labels, tonumber(term.topology_key), delta)
    end
  end
end

-- Existing pod p against the incoming pod's required terms.
local function count_incoming(s, p, labels, delta)
  local aff = s.affinity_terms
  if s.n_affinity > 0 and matches_all(aff, p) then
    for i = 1, s.n_affinity do bump(s.affinity, labels, aff[i].key, delta) end
  end
  local anti = s.anti_terms
  for i = 1, s.n_anti do
    local ct = anti[i]
    if incoming_matches(ct, p) then bump(s.anti, labels, ct.key, delta) end
  end
end

-- ---- per-node contributions cached between cycles -----------------------------
--
-- PreFilter's three counts and PreScore's score map are sums over nodes of
-- what each node's pods contribute, and a node's contribution depends only on
-- its pods and labels and on the incoming pod's side of the computation
-- (terms, namespace, namespace labels, labels): its signature, a string. Per
-- signature the plugin keeps, per position of the snapshot's node list, the
-- NodeInfo generation and the node's contribution (a flat list of pair,
-- value), and the totals; a cycle recomputes only the positions the snapshot
-- reports changed since the map's last refresh (ls.changed_nodes), or, when
-- the node list itself changed, those whose generation differs (process-wide
-- and unique: the same generation at a position is the same node with the
-- same pods and labels), so a cycle no longer walks every pod of the cluster.
-- Generation 0 (NodeInfos not made by the cache) is never trusted.


local function new_map()
  return { gen = {}, contrib = {}, num = 0, m = {}, n = 0, kref = {} }
end

-- Adds (sign 1) or takes away (sign -1) a node's contribution: totals that
-- reach 0 are deleted (n counts the others); kref counts the entries per key.
local function apply(M, list, sign)
  local m, kref = M.m, M.kref
  for i = 1, list.n, 2 do
    local p = list[i]
    local old = m[p] or 0
    local new = old + list[i + 1] * sign
    if new == 0 then
      if old ~= 0 then
        m[p] = nil
        M.n = M.n - 1
      end
    else
      if old == 0 then M.n = M.n + 1 end
      m[p] = new
    end
    local key = floor(p / SHIFT)
    local r = (kref[key] or 0) + sign
    kref[key] = r ~= 0 and r or nil
  end
end

-- Recomputes list position j (node ni, generation g); compute(ctx, ni, list)
-- appends the node's contribution to list (collect, node_totals), counting it
-- in list.n. The count is kept, never read with #: with LuaJIT 2.1.0-beta3's
-- compiler, `#` of this reused table after its stores was now and then stale
-- (a node's contribution came out empty, and the kept totals drifted from a
-- fresh instance's: lua/cached_counts_spec, 1 run in 20 to 60; none with the
-- compiler or its load forwarding off).
local scratch = { n = 0 }   -- a node's contribution is built here; kept only when not empty

local function update_node(M, j, ni, g, compute, ctx)
  local contrib = M.contrib
  local old = contrib[j]
  if old then apply(M, old, -1) end
  scratch.n = 0   -- a count left over only by an error
  compute(ctx, ni, scratch)
  local n, list = scratch.n, false
  if n > 0 then
    list = { n = n }
    for i = 1, n do list[i] = scratch[i] end
    apply(M, list, 1)
  end
  contrib[j], M.gen[j] = list, g
end

-- A position past the end of the snapshot list: its contribution goes.
local function drop_node(M, j)
  local old = M.contrib[j]
  if old then apply(M, old, -1) end
  M.contrib[j], M.gen[j] = nil, nil
end

-- Brings map M up to date with the snapshot list (see ls.refresh_nodes).
local function refresh(M, nodes, num, compute, ctx)
  ls.refresh_nodes(M, nodes, num, update_node, drop_node, compute, ctx)
end

-- The map for signature `sig`, up to date.
local function cached_map(self, sig, compute, ctx)
  local M = ls.cache_get(self.maps, sig, new_map)
  local nodes, num = ls.all_nodes()
  refresh(M, nodes, num, compute, ctx)
  return M
end

-- The counts / score map view of M ({ n, m, keys, nk, kset }), sharing M's
-- tables (shared = true: bump copies them before a change).
local function view(M)
  local keys, nk = {}, 0
  for key in pairs(M.kref) do
    nk = nk + 1
    keys[nk] = key
  end
  return { n = M.n, m = M.m, keys = keys, nk = nk, kset = M.kref, shared = true }
end

local copy_table = ls.copy_table

local function own(c)
  if c.shared then
    c.m, c.keys, c.kset, c.shared = copy_table(c.m), copy_table(c.keys), copy_table(c.kset), false
  end
end

-- Node value of key on a node with `labels` -> (pair, w) appended to list.
local function collect(list, labels, key, w)
  local v = node_value(labels, key)
  if v == nil then return end
  check_key(key)
  local n = list.n
  list[n + 1], list[n + 2] = key * SHIFT + v, w
  list.n = n + 2
end

-- ---- signatures ----------------------------------------------------------------

local function labels_sig(parts, labels)
  local items = labels.items
  for i = 0, labels.n - 1 do
    local n = #parts
    parts[n + 1], parts[n + 2] = items[i].key, items[i].value
  end
  parts[#parts + 1] = "|"
end

local selector_sig = ls.selector_signature

-- Incoming (merged) terms: key, weight, namespaces, selector.
local function terms_sig(parts, terms)
  for i = 1, #terms do
    local t = terms[i]
    local ids = {}
    for id in pairs(t.ns) do ids[#ids + 1] = id end
    table.sort(ids)
    parts[#parts + 1] = t.key
    parts[#parts + 1] = t.weight or "-"
    parts[#parts + 1] = t.all and "all" or "ns"
    for k = 1, #ids do parts[#parts + 1] = ids[k] end
    parts[#parts + 1] = ";"
    selector_sig(parts, t.selector)
  end
  parts[#parts + 1] = "#"
end

-- The incoming pod's side of existing pods' terms: namespace, its labels, the pod's labels.
local function pod_sig(parts, s)
  parts[#parts + 1] = s.ns
  labels_sig(parts, s.ns_labels)
  labels_sig(parts, s.pod.labels)
end

-- ---- node contributions -------------------------------------------------------------

-- existingAntiAffinityCounts of one node.
local function node_existing_anti(s, ni, list)
  local m = ni.num_pods_with_required_anti_affinity
  if m == 0 then return end
  local labels = ni.node.labels
  local arr = ni.pods_with_required_anti_affinity
  local pod, ns, nsl = s.pod, s.ns, s.ns_labels
  for j = 0, m - 1 do
    local p = arr[j]
    for t = 0, p.n_anti_affinity - 1 do
      local term = p.anti_affinity[t]
      if existing_matches(term, pod, ns, nsl) then collect(list, labels, tonumber(term.topology_key), 1) end
    end
  end
end

-- affinityCounts of one node: pods matching all the incoming required affinity terms.
local function node_affinity(s, ni, list)
  local m = ni.num_pods
  if m == 0 then return end
  local labels, arr = ni.node.labels, ni.pods
  local aff, n_aff = s.affinity_terms, s.n_affinity
  for j = 0, m - 1 do
    if matches_all(aff, arr[j]) then
      for i = 1, n_aff do collect(list, labels, aff[i].key, 1) end
    end
  end
end

-- antiAffinityCounts of one node.
local function node_anti(s, ni, list)
  local m = ni.num_pods
  if m == 0 then return end
  local labels, arr = ni.node.labels, ni.pods
  local anti = s.anti_terms
  for j = 0, m - 1 do
    local p = arr[j]
    for i = 1, s.n_anti do
      local ct = anti[i]
      if incoming_matches(ct, p) then collect(list, labels, ct.key, 1) end
    end
  end
end

-- How many pods with required anti-affinity (pair 1) and with any affinity
-- (pair 2) the cluster runs: when there are none, the signature maps that
-- only such pods feed (existing pods' anti-affinity; PreScore without
-- preferred terms) are known to be empty, whatever the incoming pod.
local TOTAL_ANTI, TOTAL_AFFINITY = 1, 2

local function node_totals(_, ni, list)
  local n = list.n
  if ni.num_pods_with_required_anti_affinity > 0 then
    list[n + 1], list[n + 2] = TOTAL_ANTI, ni.num_pods_with_required_anti_affinity
    n = n + 2
  end
  if ni.num_pods_with_affinity > 0 then
    list[n + 1], list[n + 2] = TOTAL_AFFINITY, ni.num_pods_with_affinity
    n = n + 2
  end
  list.n = n
end

local function totals(self)
  return cached_map(self, "totals", node_totals, nil).m
end

-- ---- PreFilter / Filter ------------------------------------------------------

function P:pre_filter(state, pod)
  local ns = tonumber(pod.ns)
  local s = { pod = pod, ns = ns, ns_labels = ls.namespace_labels(ns) }
  local n_aff, n_anti = pod.n_affinity, pod.n_anti_affinity
  if totals(self)[TOTAL_ANTI] == nil then
    if n_aff == 0 and n_anti == 0 then return ls.skip end
    s.existing = new_counts()
  else
    local parts = { "existing" }
    pod_sig(parts, s)
    local existing = cached_map(self, table.concat(parts, ","), node_existing_anti, s)
    if existing.n == 0 and n_aff == 0 and n_anti == 0 then
      return ls.skip
    end
    s.existing = view(existing)
  end
  s.affinity_terms = incoming_terms(pod.affinity, n_aff)
  s.anti_terms = incoming_terms(pod.anti_affinity, n_anti)
  s.n_affinity, s.n_anti = n_aff, n_anti
  -- "first pod of a group": the pod matches all its own affinity terms
  s.self_match = matches_all(s.affinity_terms, pod)

  -- affinityCounts and antiAffinityCounts over every pod of every node
  local parts
  if n_aff > 0 then
    parts = { "affinity" }
    terms_sig(parts, s.affinity_terms)
    s.affinity = view(cached_map(self, table.concat(parts, ","), node_affinity, s))
  else
    s.affinity = new_counts()
  end
  if n_anti > 0 then
    parts = { "anti" }
    terms_sig(parts, s.anti_terms)
    s.anti = view(cached_map(self, table.concat(parts, ","), node_anti, s))
  else
    s.anti = new_counts()
  end

  state[self.filter_key] = s
  return nil
end

-- PreFilterExtensions: pod `p` is (hypothetically) added to / removed from
-- node `ni` (nominated pods, preemption dry runs).
local function update_with_pod(self, state, p, ni, delta)
  local s = state[self.filter_key]
  if s == nil then return self.no_filter_state end
  local labels = ni.node.labels
  own(s.existing)
  own(s.affinity)
  own(s.anti)
  count_existing_anti(s, p, labels, delta)
  count_incoming(s, p, labels, delta)
  return nil
end

function P:add_pod(state, _, pod_to_add, ni)
  return update_with_pod(self, state, pod_to_add, ni, 1)
end

function P:remove_pod(state, _, pod_to_remove, ni)
  return update_with_pod(self, state, pod_to_remove, ni, -1)
end

-- CycleState.Clone (nominated pods, preemption's dry runs): the three count
-- tables are shared, copied by `own` before a change (both sides are marked
-- shared); the rest of the state is never changed.
local function share(counts)
  local c = {}
  for k, v in pairs(counts) do c[k] = v end
  c.shared, counts.shared = true, true
  return c
end

function P:clone_state(s)
  local c = {}
  for k, v in pairs(s) do c[k] = v end
  c.existing, c.affinity, c.anti = share(s.existing), share(s.affinity), share(s.anti)
  return c
end

function P:filter(state, _, ni)
  local s = state[self.filter_key]
  if s == nil then return self.no_filter_state end
  local labels = ni.node.labels

  -- the incoming pod's required affinity
  local n_aff = s.n_affinity
  if n_aff > 0 then
    local terms, counts = s.affinity_terms, s.affinity.m
    local pods_exist = true
    for i = 1, n_aff do
      local key = terms[i].key
      local v = label(labels, key)
      if v == 0 and not has_label(labels, key) then return self.affinity_fail end
      local c = counts[key * SHIFT + v]
      if c == nil or c <= 0 then pods_exist = false end
    end
    if not pods_exist and not (s.affinity.n == 0 and s.self_match) then
      return self.affinity_fail
    end
  end

  -- the incoming pod's required anti-affinity
  local anti = s.anti
  if anti.n > 0 then
    local terms, counts = s.anti_terms, anti.m
    for i = 1, s.n_anti do
      local key = terms[i].key
      local v = label(labels, key)
      if v ~= 0 or has_label(labels, key) then
        local c = counts[key * SHIFT + v]
        if c ~= nil and c > 0 then return self.anti_affinity_fail end
      end
    end
  end

  -- existing pods' required anti-affinity: any node label (k, v) with a count
  -- (only keys that were ever counted can have one)
  local ex = s.existing
  if ex.n > 0 then
    local keys, counts = ex.keys, ex.m
    for i = 1, ex.nk do
      local key = keys[i]
      local v = label(labels, key)
      if v ~= 0 or has_label(labels, key) then
        local c = counts[key * SHIFT + v]
        if c ~= nil and c > 0 then return self.existing_fail end
      end
    end
  end
  return nil
end

-- ---- PreScore / Score / NormalizeScore ----------------------------------------

-- processExistingPod for existing pod p on a node with `labels`.
local function process_existing(self, ps, p, labels)
  local pod = ps.pod
  -- the incoming pod's preferred terms against p
  local pa = ps.affinity
  for i = 1, #pa do
    local ct = pa[i]
    if incoming_matches(ct, p) then collect(ps.list, labels, ct.key, ct.weight) end
  end
  local pn = ps.anti
  for i = 1, #pn do
    local ct = pn[i]
    if incoming_matches(ct, p) then collect(ps.list, labels, ct.key, -ct.weight) end
  end
  -- p's terms against the incoming pod
  if p.n_affinity == 0 and p.n_preferred_affinity == 0 and p.n_preferred_anti_affinity == 0 then
    return
  end
  local ns, nsl = ps.ns, ps.ns_labels
  if nsl == nil then
    nsl = ls.namespace_labels(ns)
    ps.ns_labels = nsl
  end
  local hw = self.hard_weight
  if hw > 0 then
    for t = 0, p.n_affinity - 1 do
      local term = p.affinity[t]
      if existing_matches(term, pod, ns, nsl) then
        collect(ps.list, labels, tonumber(term.topology_key), hw)
      end
    end
  end
  for t = 0, p.n_preferred_affinity - 1 do
    local wt = p.preferred_affinity[t]
    local term = wt.term
    if existing_matches(term, pod, ns, nsl) then
      collect(ps.list, labels, tonumber(term.topology_key), wt.weight)
    end
  end
  for t = 0, p.n_preferred_anti_affinity - 1 do
    local wt = p.preferred_anti_affinity[t]
    local term = wt.term
    if existing_matches(term, pod, ns, nsl) then
      collect(ps.list, labels, tonumber(term.topology_key), -wt.weight)
    end
  end
end

-- PreScore's contribution of one node: processExistingPod for its pods (all
-- of them when the incoming pod has preferred terms, else those with affinity).
local function node_score(ps, ni, list)
  local m, arr
  if ps.has_constraints then
    m, arr = ni.num_pods, ni.pods
  else
    m, arr = ni.num_pods_with_affinity, ni.pods_with_affinity
  end
  if m == 0 then return end
  local labels = ni.node.labels
  if labels.n == 0 then return end
  ps.list = list
  for j = 0, m - 1 do process_existing(ps.self, ps, arr[j], labels) end
  ps.list = nil
end

function P:pre_score(state, pod, _, n)
  if n == 0 then return ls.skip end
  local has_constraints = pod.n_preferred_affinity > 0 or pod.n_preferred_anti_affinity > 0
  if self.ignore_preferred and not has_constraints then return ls.skip end
  -- without preferred terms only pods with affinity count: none, nothing to score
  if not has_constraints and totals(self)[TOTAL_AFFINITY] == nil then return ls.skip end

  local ns = tonumber(pod.ns)
  local ps = { self = self, pod = pod, ns = ns, ns_labels = ls.namespace_labels(ns), affinity = {}, anti = {},
               has_constraints = has_constraints }
  if has_constraints then
    ps.affinity = incoming_weighted_terms(pod.preferred_affinity, pod.n_preferred_affinity)
    ps.anti = incoming_weighted_terms(pod.preferred_anti_affinity, pod.n_preferred_anti_affinity)
  end
  local parts = { "score", has_constraints and 1 or 0, self.hard_weight }
  pod_sig(parts, ps)
  terms_sig(parts, ps.affinity)
  terms_sig(parts, ps.anti)
  local M = cached_map(self, table.concat(parts, ","), node_score, ps)
  local ts = view(M)
  if ts.nk == 0 then return ls.skip end
  state[self.score_key] = ts
  return nil
end

function P:score(state, _, ni)
  local ts = state[self.score_key]
  if ts == nil then error(self.no_score_state.message, 0) end
  local labels = ni.node.labels
  local keys, m = ts.keys, ts.m
  local score = 0
  for i = 1, ts.nk do
    local key = keys[i]
    local v = label(labels, key)
    if v ~= 0 or has_label(labels, key) then
      local x = m[key * SHIFT + v]
      if x ~= nil then score = score + x end
    end
  end
  return score
end

function P:normalize_score(state, _, scores, _, n)
  local ts = state[self.score_key]
  if ts == nil then return self.no_score_state end
  if ts.nk == 0 then return nil end
  local lo, hi = math.huge, -math.huge
  for i = 0, n - 1 do
    local s = tonumber(scores[i])
    if s > hi then hi = s end
    if s < lo then lo = s end
  end
  local diff = hi - lo
  for i = 0, n - 1 do
    local f = 0
    if diff > 0 then
      -- float64(MaxNodeScore) * (float64(s-min) / float64(max-min)), then int64()
      f = floor(MAX_NODE_SCORE * ((tonumber(scores[i]) - lo) / diff))
    end
    scores[i] = f
  end
  return nil
end


-- ---- events and queueing hints ------------------------------------------------

local EMPTY_NAME = ls.intern("")

local function set_name(id) return id ~= 0 and id ~= EMPTY_NAME end

-- The pod's own term t (C) against another pod p (upstream AffinityTerm.Matches).
local function term_matches(t, p)
  return existing_matches(t, p, p.ns, ls.namespace_labels(p.ns))
end

local function matches_all_terms(terms, n, p)
  if n == 0 then return false end
  for i = 0, n - 1 do
    if not term_matches(terms[i], p) then return false end
  end
  return true
end

local function matches_any_term(terms, n, p)
  for i = 0, n - 1 do
    if term_matches(terms[i], p) then return true end
  end
  return false
end

-- Does one of p's required anti-affinity terms match the pod?
local function hates(p, pod)
  local nsl = ls.namespace_labels(pod.ns)
  for i = 0, p.n_anti_affinity - 1 do
    if existing_matches(p.anti_affinity[i], pod, pod.ns, nsl) then return true end
  end
  return false
end

local function after_pod_change(pod, old, new)
  local other = new or old
  if not set_name(other.node_name) and not set_name(other.nominated_node_name) then return ls.QUEUE_SKIP end
  local aff, n_aff = pod.affinity, pod.n_affinity
  local anti, n_anti = pod.anti_affinity, pod.n_anti_affinity
  if old ~= nil and new ~= nil then
    if not matches_all_terms(aff, n_aff, old) and matches_all_terms(aff, n_aff, new) then return ls.QUEUE end
    if matches_any_term(anti, n_anti, old) and not matches_any_term(anti, n_anti, new) then return ls.QUEUE end
    return ls.QUEUE_SKIP
  end
  if new ~= nil then
    return matches_all_terms(aff, n_aff, new) and ls.QUEUE or ls.QUEUE_SKIP
  end
  if matches_any_term(anti, n_anti, old) or hates(old, pod) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function after_node_change(pod, old, new)
  for i = 0, pod.n_affinity - 1 do
    local key = pod.affinity[i].topology_key
    local now = node_value(new.labels, key)
    if old == nil then
      if now ~= nil then return ls.QUEUE end
    else
      local before = node_value(old.labels, key)
      if now ~= nil and before ~= now then return ls.QUEUE end
    end
  end
  for i = 0, pod.n_anti_affinity - 1 do
    if old == nil then return ls.QUEUE end
    local key = pod.anti_affinity[i].topology_key
    local before = node_value(old.labels, key)
    if before ~= nil and before ~= node_value(new.labels, key) then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "AssignedPod", action = { "Add", "UpdatePodLabel", "Delete" }, hint = after_pod_change },
  { resource = "TargetPod", action = "UpdatePodLabel", hint = ls.hint_own_pod },
  { resource = "Node", action = { "Add", "UpdateNodeLabel" }, hint = after_node_change },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- InterPodAffinity: a pod with pod affinity or anti-affinity is unsignable
-- (its placement depends on other pods); otherwise its labels
-- (LabelsSignerName), which existing pods' terms match.
function P:sign(pod)
  if pod.has_affinity ~= 0 then return false, "pods with pod affinity or anti-affinity are not signable" end
  return signers.labels(pod)
end

return P
