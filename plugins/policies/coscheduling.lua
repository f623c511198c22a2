-- Coscheduling: gang scheduling with scheduler-plugins' PodGroup
-- (kubernetes-sigs/scheduler-plugins, pkg/coscheduling/, KEP 42 "Coscheduling
-- based on PodGroup CRD"; PodGroup scheduling.x-k8s.io/v1alpha1).
--
-- Pods join a group with the label `scheduling.x-k8s.io/pod-group: NAME`; the
-- PodGroup NAME in the pod's namespace has spec.minMember, optional
-- spec.scheduleTimeoutSeconds and spec.minResources. Enable it at multiPoint
-- and as the only queueSort plugin (scheduler-plugins' own example):
--   plugins: {multiPoint: {enabled: [{name: Coscheduling}]},
--             queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}}
--
-- What it does, as upstream:
-- * QueueSort (Less): higher priority first; then the earlier of the
--   PodGroup's creationTimestamp (a member) or the pod's own time; so a
--   group's members are popped one after the other.
-- * PreFilter, UnschedulableAndUnresolvable (no preemption for it):
--   "podGroup NS/NAME failed recently" while the group is backed off;
--   "pre-filter pod %s cannot find enough sibling pods, current pods number:
--   %d, minMember of group: %d"; with minResources, the cluster's free
--   resources (the group's own pods not counted) must hold them and
--   `pods: minMember`, else "resource gap: ..." (checked once per
--   permitWaitingTimeSeconds while it passes, upstream's permittedPG cache).
-- * PostFilter: when a member finds no node, unless minMember members are
--   already assigned or the missing share is at most podGroupRejectPercentage
--   (10 %), the group's pods waiting at Permit are rejected ("optimistic
--   rejection in PostFilter"), the group is backed off for
--   podGroupBackoffSeconds when it has minMember pods, and the status says
--   "PodGroup NS/NAME gets rejected due to Pod NAME is unschedulable even after
--   PostFilter". A pod without PodGroup: "can not find pod group".
-- * Permit: with `assigned + 1 >= minMember` (assumed or bound members, this
--   one added) every waiting member is allowed; else the pod waits
--   spec.scheduleTimeoutSeconds (when set and not 0) or
--   permitWaitingTimeSeconds, and the first member to wait (none assigned)
--   activates its pending siblings. A missing PodGroup: "PodGroup not found".
-- * Unreserve (a waiting member timed out or was rejected): every other
--   waiting member is rejected ("rejection in Unreserve"), so the whole group
--   goes back to the queue together.
-- * Events: Pod/Add and PodGroup Add/Update (no hints upstream).
-- * Args (CoschedulingArgs, defaults and validation of apis/config):
--   permitWaitingTimeSeconds 60, podGroupBackoffSeconds 0 (off),
--   podGroupRejectPercentage 10.
--
-- Deviations:
-- * Sibling pods are counted where luasched sees them: pending ones that
--   passed this plugin's PreEnqueue (which only notes them and never rejects;
--   a pod held by SchedulingGates is not counted until its gates are
--   removed; upstream lists pods by label), those waiting at Permit, and
--   those on nodes. A hot reload forgets pending pods until they pass
--   PreEnqueue again.
-- * Less breaks a tie of time by the group's key (namespace/name; a group's
--   members before a pod without group) before the pod's namespace/name, so
--   two groups created in the same second do not interleave; pods without a
--   group use their creation time and arrival order (upstream:
--   InitialAttemptTimestamp).
-- * "resource gap: ..." lists the missing amounts as `name=quantity` in
--   resource order (upstream prints a Go map of Quantities).
-- * The backoff and permitted-group caches are kept on the scheduler's clock
--   (virtual in a simulation).
-- * The hints (same group only) are ours: upstream registers no hints.
-- * A group PostFilter or Unreserve rejected is not activated again by its
--   own members at Permit until a new member arrives, its PodGroup changes or
--   it reaches its quorum: upstream activates the siblings again at once, and
--   a group that cannot fit (podGroupBackoffSeconds 0, the default) is then
--   retried without end. Its members come back on their events instead, and
--   AssignedPod/Delete (room freed) is registered for that.
local ls = require("luasched")
local gang = require("gang_common")
local cel = require("luasched.cel")

local fmt = string.format

local P = ls.plugin("Coscheduling", {
  defaults = { permitWaitingTimeSeconds = 60, podGroupBackoffSeconds = 0, podGroupRejectPercentage = 10 },
})

local PODGROUPS = "podgroups.v1alpha1.scheduling.x-k8s.io"
local LABEL = "scheduling.x-k8s.io/pod-group"

-- upstream's ValidateCoschedulingArgs (field.Invalid's text).
function P.validate(args)
  local function invalid(field, v, what)
    return fmt("%s: Invalid value: %s: %s", field, tostring(v), what)
  end
  for _, f in ipairs({ "permitWaitingTimeSeconds", "podGroupBackoffSeconds" }) do
    local v = args[f]
    if v < 0 then return invalid(f, v, "must be greater than 0") end
    if v ~= math.floor(v) then return invalid(f, v, "must be a whole number of seconds") end
  end
  if args.permitWaitingTimeSeconds > 900 then
    return invalid("permitWaitingTimeSeconds", args.permitWaitingTimeSeconds,
      "must be at most 900 (Permit's 15-minute maximum)")
  end
  local pct = args.podGroupRejectPercentage
  if pct < 0 or pct > 100 then return invalid("podGroupRejectPercentage", pct, "must be between 0 and 100") end
end

-- ---- a pod's group -----------------------------------------------------------------

local label_id = ls.intern(LABEL)

local function key_of(pod)
  local name = ls.label(pod.labels, label_id)
  if name == 0 then return nil end
  return ls.str(pod.ns) .. "/" .. ls.str(name)
end

-- The PodGroup as { min, timeout, created, min_resources, name } (cached until
-- a PodGroup changes), or nil when it does not exist.
function P:group(pod, key)
  local gen = ls.objects_generation(PODGROUPS)
  if self.group_gen ~= gen then
    self.groups, self.group_gen = {}, gen
    gang.clear_rejections(self.members)
  end
  local g = self.groups[key]
  if g == nil then
    g = false
    local o = ls.find_object(PODGROUPS, pod.ns, ls.label(pod.labels, label_id))
    if o ~= nil then
      local t = ls.object_data(o)
      local spec = t.spec or {}
      g = { min = tonumber(spec.minMember) or 0, timeout = tonumber(spec.scheduleTimeoutSeconds),
            created = gang.parse_time((t.metadata or {}).creationTimestamp),
            min_resources = spec.minResources, name = ls.str(o.name) }
    end
    self.groups[key] = g
  end
  return g or nil
end

function P:init(args)
  self.args = args
  self.members = gang.tracker(key_of)
  self.groups, self.group_gen = {}, nil
  self.backed_off = {}   -- key -> until (ms, the scheduler's clock)
  self.permitted = {}    -- key -> until: minResources checked and held
  self.not_helped = ls.unschedulable()
  self.times, self.time_gen = {}, nil
  self.texts, self.n_texts = {}, 0
end

-- ---- QueueSort -----------------------------------------------------------------------

local function priority(pod)
  return pod.has_priority ~= 0 and pod.priority or 0
end

-- A pod's place in time: its PodGroup's creation (cached per namespace and
-- group id until a PodGroup changes), or its own; and its group id (0: none).
-- Less runs for every comparison the queue makes: ids only, no strings.
function P:sort_time(pod)
  local group = ls.label(pod.labels, label_id)
  if group == 0 then return tonumber(pod.creation_ns), 0 end
  local gen = ls.objects_generation(PODGROUPS)
  if self.time_gen ~= gen then self.times, self.time_gen = {}, gen end
  local by_ns = ls.subtable(self.times, pod.ns)
  local t = by_ns[group]
  if t == nil then
    local o = ls.find_object(PODGROUPS, pod.ns, group)
    t = o ~= nil and gang.parse_time((ls.object_data(o).metadata or {}).creationTimestamp) or false
    by_ns[group] = t
  end
  if t then return t, group end
  return tonumber(pod.creation_ns), group
end

-- An id's text, memoized (bounded: it starts over past 65536 ids).
function P:text(id)
  local t = self.texts[id]
  if t == nil then
    if self.n_texts >= 65536 then self.texts, self.n_texts = {}, 0 end
    t = ls.str(id)
    self.texts[id], self.n_texts = t, self.n_texts + 1
  end
  return t
end

-- "namespace/name" order of two (namespace, name) id pairs.
function P:name_less(ns_a, a, ns_b, b)
  if ns_a == ns_b then return self:text(a) < self:text(b) end
  return self:text(ns_a) .. "/" .. self:text(a) < self:text(ns_b) .. "/" .. self:text(b)
end

function P:less(a, b)
  local pa, pb = priority(a), priority(b)
  if pa ~= pb then return pa > pb end
  local ta, ga = self:sort_time(a)
  local tb, gb = self:sort_time(b)
  if ta ~= tb then return ta < tb end
  if ga ~= gb or a.ns ~= b.ns then
    if ga == 0 or gb == 0 then return ga ~= 0 end      -- a group's members before a lone pod
    return self:name_less(a.ns, ga, b.ns, gb)
  end
  if a.name ~= b.name then return self:name_less(a.ns, a.name, b.ns, b.name) end
  return a.seq < b.seq
end

-- ---- PreEnqueue: note the member ----------------------------------------------------

function P:pre_enqueue(pod)
  local key = key_of(pod)
  if key ~= nil then gang.note_pending(self.members, key, pod) end
  return nil
end

-- ---- PreFilter -----------------------------------------------------------------------

-- Pods of the group luasched knows: pending, waiting at Permit, on nodes.
function P:siblings(key, pod)
  gang.refresh(self.members)
  local on_nodes = gang.on_nodes(self.members, key)
  return gang.each_pending(self.members, key, pod.id) + 1 + on_nodes
end

-- Free resources per node, the group's own pods given back (upstream's
-- getNodeResource), taken off `need` until nothing is missing.
local function resource_gap(self, key, need)
  local nodes, num = ls.all_nodes()
  local key_of_pod = self.members.key_of
  for j = 0, num - 1 do
    local ni = nodes[j]
    local mine = {}
    local own_pods = 0
    for i = 0, ni.num_pods - 1 do
      local p = ni.pods[i]
      if key_of_pod(p) == key then
        own_pods = own_pods + 1
        for r = 0, ls.resource_count() - 1 do mine[r] = (mine[r] or 0) + tonumber(p.requests.v[r]) end
      end
    end
    local left = false
    for r, amount in pairs(need) do
      local free
      if r == 3 then   -- pods: allowed pod number minus the pods there
        free = tonumber(ni.allocatable.v[3]) - (ni.num_pods - own_pods)
      else
        free = tonumber(ni.allocatable.v[r]) - (tonumber(ni.requested.v[r]) - (mine[r] or 0))
      end
      local rest = amount - free
      if rest <= 0 then need[r] = nil else need[r] = rest left = true end
    end
    if not left then return nil end
  end
  local parts = {}
  for r = 0, ls.resource_count() - 1 do
    if need[r] then parts[#parts + 1] = fmt("%s=%d", ls.resource_name(r), need[r]) end
  end
  return "resource gap: " .. table.concat(parts, ", ")
end

-- minResources (+ pods: minMember) as amounts per resource index.
local function wanted_resources(g)
  local need = {}
  for name, q in pairs(g.min_resources) do
    local r = ls.resource_index(name)
    local v = cel.parse_quantity(q)
    if r >= 0 and v ~= nil then
      if r == 0 then v = v * 1000 end   -- cpu in millicores
      need[r] = math.ceil(v)
    end
  end
  need[3] = g.min
  return need
end

function P:pre_filter(_, pod)
  local key = key_of(pod)
  if key == nil then return nil end
  local g = self:group(pod, key)
  if g == nil then return nil end
  local now = ls.now_ms()
  local until_ms = self.backed_off[key]
  if until_ms ~= nil then
    if now < until_ms then return ls.unresolvable(fmt("podGroup %s failed recently", key)) end
    self.backed_off[key] = nil
  end
  local total = self:siblings(key, pod)
  if total < g.min then
    return ls.unresolvable(fmt("pre-filter pod %s cannot find enough sibling pods, "
      .. "current pods number: %d, minMember of group: %d", ls.str(pod.name), total, g.min))
  end
  if type(g.min_resources) ~= "table" then return nil end
  local permitted = self.permitted[key]
  if permitted ~= nil and now < permitted then return nil end
  local gap = resource_gap(self, key, wanted_resources(g))
  if gap ~= nil then return ls.unresolvable(gap) end
  self.permitted[key] = now + self.args.permitWaitingTimeSeconds * 1000
  return nil
end

-- ---- PostFilter ----------------------------------------------------------------------

function P:post_filter(_, pod)
  local key = key_of(pod)
  local g = key and self:group(pod, key)
  if g == nil then return ls.unschedulable("can not find pod group") end
  gang.refresh(self.members)
  local assigned = gang.on_nodes(self.members, key)
  if assigned >= g.min then return self.not_helped end
  local not_assigned = (g.min - assigned) / g.min
  if not_assigned <= self.args.podGroupRejectPercentage / 100 then return self.not_helped end
  gang.reject_all(self.members, key, self.name, "optimistic rejection in PostFilter")
  local backoff = self.args.podGroupBackoffSeconds
  if backoff > 0 and self:siblings(key, pod) >= g.min then
    self.backed_off[key] = ls.now_ms() + backoff * 1000
  end
  self.permitted[key] = nil
  return ls.unschedulable(fmt("PodGroup %s gets rejected due to Pod %s is unschedulable even after PostFilter",
    key, ls.str(pod.name)))
end

-- ---- Permit, Unreserve -------------------------------------------------------------

function P:permit(_, pod)
  local key = key_of(pod)
  if key == nil then return nil end
  local g = self:group(pod, key)
  if g == nil then return ls.unschedulable("PodGroup not found") end
  gang.refresh(self.members)
  local assigned = gang.on_nodes(self.members, key)   -- this pod is assumed after the snapshot
  if assigned + 1 >= g.min then
    gang.allow_all(self.members, key, self.name)
    return nil
  end
  if assigned == 0 then gang.activate_pending(self.members, key, pod.id) end
  local wait = self.args.permitWaitingTimeSeconds
  if g.timeout ~= nil and g.timeout ~= 0 then wait = g.timeout end
  return ls.wait(wait)
end

function P:reserve()
  return nil
end

function P:unreserve(_, pod)
  local key = key_of(pod)
  if key == nil or self:group(pod, key) == nil then return end
  gang.reject_all(self.members, key, self.name, "rejection in Unreserve")
  self.permitted[key] = nil
end

-- ---- events and hints ----------------------------------------------------------------

-- Compares ids (no string is built: the hint may run for many held pods).
local function same_group_pod(pod, _, new)
  if new == nil then return ls.QUEUE end
  local group = ls.label(pod.labels, label_id)
  if group ~= 0 and pod.ns == new.ns and group == ls.label(new.labels, label_id) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

local function same_group(pod, _, new)
  if new == nil then return ls.QUEUE end
  local key = key_of(pod)
  if key ~= nil and key == ls.str(new.ns) .. "/" .. ls.str(new.name) then return ls.QUEUE end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "Pod", action = { "Add" }, hint = same_group_pod },
  { resource = "AssignedPod", action = { "Delete" } },
  { resource = PODGROUPS, action = { "Add", "Update" }, hint = same_group },
}

return P
