-- DefaultPreemption: when no node fits a pod, find the node where evicting
-- the fewest, least important lower-priority pods makes it fit, evict them and
-- nominate the pod to that node.
--
-- Mirrors upstream pkg/scheduler/framework/plugins/defaultpreemption/
-- default_preemption.go and pkg/scheduler/framework/preemption/preemption.go
-- (Evaluator.Preempt, findCandidates, DryRunPreemption, SelectCandidate,
-- pickOneNodeForPreemption, prepareCandidate) and pkg/scheduler/util
-- (MoreImportantPod, GetEarliestPodStartTime), v1.30-v1.34, with v1.37's
-- asynchronous preemption (SchedulerAsyncPreemption, on by default):
-- * Args: minCandidateNodesPercentage (10, 0-100), minCandidateNodesAbsolute
--   (100, >= 0), not both 0; errors in ValidateDefaultPreemptionArgs' wording
--   (field.Invalid, several aggregated as "[a, b]").
-- * Eligibility: preemptionPolicy Never -> Unschedulable "not eligible due to
--   preemptionPolicy=Never."; a pod nominated to a node whose verdict is not
--   UnschedulableAndUnresolvable and that runs a lower-priority pod terminating
--   because of preemption -> "not eligible due to a terminating pod on the
--   nominated node." (nomination unchanged in both cases).
-- * Potential nodes: those whose Filter verdict was Unschedulable (a PreFilter
--   failure gives every node its code; nodes outside a PreFilter restriction
--   are UnschedulableAndUnresolvable). None -> the nomination is cleared and
--   the FitError "0/N nodes are available: N Preemption is not helpful for
--   scheduling." is returned.
-- * numCandidates = max(potential * pct / 100, abs) capped at potential (so
--   pct > 0, abs 0 and fewer than 100/pct potential nodes gives 0 candidates
--   and no preemption, as upstream); dry runs start at a random offset and stop
--   once there is a non-violating candidate and numCandidates in all (each
--   list holds at most numCandidates, as upstream's candidateList).
-- * SelectVictimsOnNode on a clone of the NodeInfo and of CycleState: remove
--   every pod of strictly lower priority (with the PreFilter extensions),
--   none -> UnschedulableAndUnresolvable "No preemption victims found for
--   incoming pod"; Filter with nominated pods must pass, else that status;
--   potential victims sorted by MoreImportantPod, split by PDB violation,
--   reprieved violating first then non-violating (highest importance first);
--   victims re-sorted only when both groups were non-empty.
-- * No candidate -> FitError over the dry-run statuses, the other nodes
--   counting as "Preemption is not helpful for scheduling" (Unresolvable);
--   the nomination is cleared. A dry-run Error with no candidate -> Error.
-- * pickOneNodeForPreemption: fewest PDB violations, lowest highest-victim
--   priority, smallest sum of (priority + 2^31), fewest victims, latest
--   earliest start time among the highest-priority victims, first in list.
-- * prepareCandidateAsync: every victim not already being deleted is handed
--   to the framework, which issues its deletion (DisruptionTarget condition,
--   then delete, through the cluster) after the scheduling cycle; lower
--   priority pods nominated to the node lose their nomination; Success with
--   the node as nomination. Every message is prefixed "preemption: ".
-- * Async preemption: while the deletions are being issued the pod is
--   "preempting": PreEnqueue rejects it with UnschedulableAndUnresolvable
--   "waiting for the preemption for this pod to be finished", and a PostFilter
--   that finds it preempting returns Success with its current nomination
--   (v1.37: no second preemption). A failed deletion clears the nomination and
--   activates the pod (core/src/scheduler/preemption.c).
-- * Events (EventsToRegister with async preemption): AssignedPod Delete with a
--   hint that always says Skip: a pod this plugin held back is let go when the
--   deletions are issued, and the plugins that rejected it in its cycle decide
--   on the deletion events.
--
-- Deviations:
-- * Terminating pods: luasched keeps no pod conditions, and preempted pods are
--   deleted at once (no graceful termination), so "terminating because of
--   scheduler preemption" is read as "has metadata.deletionTimestamp"
--   (pod.deletion_ns ~= 0); the DisruptionTarget=True/PreemptionByScheduler
--   condition is not checked.
-- * "First in list" among equal candidates is the candidate order (non
--   violating then violating, each in dry-run order from the random offset);
--   upstream iterates a Go map, i.e. in random order.
-- * A pod without status.startTime counts as started "now" (upstream calls
--   time.Now()): later than every pod with a start time; two such pods tie.
-- * The dry-run Filter reasons of a node are recovered from its status
--   message split at ", " (the plugin API returns the joined message); no
--   shipped Filter reason contains ", ".
-- * HTTP extenders (callExtenders) get the candidates before the choice; the
--   candidates they leave come in the order of their answer (upstream
--   iterates a Go map). None left -> "no candidate node for preemption".
-- * The deletions are issued one after the other right after the cycle (in
--   the single scheduling thread; in `run` they are queued to the API writer,
--   so they do not wait for the API server), not by a goroutine in parallel.
--   In `run`, a deletion the API server refuses later is not fed back: only a
--   deletion the writer cannot take fails the preemption.
local ls = require("luasched")

local P = ls.plugin("DefaultPreemption", {
  defaults = { minCandidateNodesPercentage = 10, minCandidateNodesAbsolute = 100 },
})

local UNSCHED, UNRESOLVABLE = ls.UNSCHEDULABLE, ls.UNSCHEDULABLE_AND_UNRESOLVABLE
local PREEMPT_NEVER = ls.PREEMPT_NEVER
local NOT_STARTED = 2 ^ 62       -- no status.startTime: "now", after any real start
local PRIORITY_OFFSET = 2 ^ 31   -- math.MaxInt32 + 1

local MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
local MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"

local floor = math.floor
local sort, concat = table.sort, table.concat

-- ---- args -------------------------------------------------------------------

local function is_int32(v)
  return type(v) == "number" and v == floor(v) and v >= -2 ^ 31 and v < 2 ^ 31
end

-- field.Invalid(path, value, detail).Error()
local function invalid(field, value, detail)
  return string.format("%s: Invalid value: %s: %s", field, tostring(value), detail)
end

function P:init(args)
  local pct, abs = args.minCandidateNodesPercentage, args.minCandidateNodesAbsolute
  if not is_int32(pct) then
    error(invalid("minCandidateNodesPercentage", pct, "must be an integer"), 0)
  end
  if not is_int32(abs) then
    error(invalid("minCandidateNodesAbsolute", abs, "must be an integer"), 0)
  end
  local errs = {}
  if pct < 0 or pct > 100 then
    errs[#errs + 1] = invalid("minCandidateNodesPercentage", pct, "not in valid range [0, 100]")
  end
  if abs < 0 then
    errs[#errs + 1] = invalid("minCandidateNodesAbsolute", abs, "not in valid range [0, inf)")
  end
  if pct == 0 and abs == 0 then
    errs[#errs + 1] = invalid("minCandidateNodesPercentage", pct,
      "cannot be zero at the same time as minCandidateNodesAbsolute")
    errs[#errs + 1] = invalid("minCandidateNodesAbsolute", abs,
      "cannot be zero at the same time as minCandidateNodesPercentage")
  end
  -- utilerrors.NewAggregate(...).Error(): one error alone, several in brackets
  if #errs == 1 then error(errs[1], 0) end
  if #errs > 1 then error("[" .. concat(errs, ", ") .. "]", 0) end
  self.pct, self.abs = pct, abs
  self.never = ls.unschedulable("preemption: not eligible due to preemptionPolicy=Never.")
  self.in_flight = ls.unresolvable("waiting for the preemption for this pod to be finished")
  self.terminating = ls.unschedulable("preemption: not eligible due to a terminating pod on the nominated node.")
  self.kind_pdb = ls.intern("PodDisruptionBudget")
end

-- calculateNumCandidates (int32 arithmetic, the division truncates)
function P:num_candidates(n)
  local c = floor(n * self.pct / 100)
  if c < self.abs then c = self.abs end
  if c > n then c = n end
  return c
end

-- GetOffsetAndNumCandidates: a random offset and numCandidates.
function P:offset_and_num_candidates(n)
  return self.handle:random(n), self:num_candidates(n)
end

-- ---- helpers ----------------------------------------------------------------

local function start_of(p)
  local t = p.start_ns
  if t == 0 then return NOT_STARTED end
  return tonumber(t)
end

-- util.MoreImportantPod: higher priority, then earlier start time. `order`
-- keeps equal pods in node order (sort.Slice is not stable either).
local function more_important(a, b)
  local pa, pb = a.pod.priority, b.pod.priority
  if pa ~= pb then return pa > pb end
  if a.start ~= b.start then return a.start < b.start end
  return a.order < b.order
end

--- The cluster's PDBs, with their disruptedPods as a set of name ids, grouped
--- by namespace id: { [ns] = { {obj=, allowed=, disrupted={}} ... } }, or nil.
function P:pdbs()
  local by_ns
  for o in ls.objects(self.kind_pdb) do
    -- a PDB with a nil or empty selector matches nothing (selector.Empty())
    if o.has_selector ~= 0 and o.selector.n ~= 0 then
      local disrupted = {}
      for i = 0, o.n_disrupted_pods - 1 do disrupted[tonumber(o.disrupted_pods[i])] = true end
      by_ns = by_ns or {}
      local ns = tonumber(o.ns)
      local list = by_ns[ns]
      if not list then list = {}; by_ns[ns] = list end
      list[#list + 1] = { obj = o, allowed = o.disruptions_allowed, disrupted = disrupted }
    end
  end
  return by_ns
end

-- reprievePod over the victims that would violate a PDB, then the others;
-- returns how many of the violating ones reprieve(v) could not take back.
local function reprieve_in_order(violating, fine, reprieve)
  local violations = 0
  for _, v in ipairs(violating) do
    if not reprieve(v) then violations = violations + 1 end
  end
  for _, v in ipairs(fine) do reprieve(v) end
  return violations
end

-- filterPodsWithPDBViolation: a stable split of the (sorted) potential victims.
local function split_by_pdb(victims, pdbs)
  if not pdbs then return {}, victims end
  local allowed = {}   -- pdb entry -> remaining disruptions on this node
  local violating, fine = {}, {}
  for _, v in ipairs(victims) do
    local p = v.pod
    local violated = false
    local list = p.labels.n ~= 0 and pdbs[tonumber(p.ns)]
    if list then
      for _, pdb in ipairs(list) do
        if ls.selector_matches(pdb.obj.selector, p.labels) and not pdb.disrupted[tonumber(p.name)] then
          local left = (allowed[pdb] or pdb.allowed) - 1
          allowed[pdb] = left
          if left < 0 then violated = true end
        end
      end
    end
    if violated then violating[#violating + 1] = v else fine[#fine + 1] = v end
  end
  return violating, fine
end

-- A Filter status's reasons (the message's reasons joined with ", ").
local function reasons_of(message)
  local out = {}
  for r in (message .. ", "):gmatch("(.-), ") do out[#out + 1] = r end
  return out
end

-- ---- SelectVictimsOnNode -----------------------------------------------------

--- Victims on one node. Returns a list of { pod=, start=, order= } (most
--- important first) and the number of PDB violations, or nil and a failure
--- { code=, reasons= } (code Error with reasons = { message } for errors).
function P:select_victims(state, pod, ni, pdbs)
  local h = self.handle
  local node = h:clone_node_info(ni)
  local st = h:clone_state(state)
  local prio = pod.priority
  local potential = {}
  local pods = ni.pods
  for i = 0, ni.num_pods - 1 do
    local p = pods[i]
    if p.priority < prio then
      potential[#potential + 1] = { pod = p, start = start_of(p), order = i }
    end
  end
  local function remove(p)
    if not h:remove_pod_from(node, p) then
      error(string.format("no corresponding pod %s in pods of node %s", ls.str(p.name), ls.str(ni.node.name)), 0)
    end
    h:run_remove_pod(st, pod, p, node)
  end
  for _, v in ipairs(potential) do remove(v.pod) end
  if #potential == 0 then
    return nil, { code = UNRESOLVABLE, reasons = { MSG_NO_VICTIMS } }
  end
  local fits, code, message = h:run_filter_with_nominated(st, pod, node)
  if not fits then
    return nil, { code = code, reasons = reasons_of(message) }
  end
  sort(potential, more_important)
  local violating, fine = split_by_pdb(potential, pdbs)
  local victims = {}
  local function reprieve(v)
    h:add_pod_to(node, v.pod)
    h:run_add_pod(st, pod, v.pod, node)
    if h:run_filter_with_nominated(st, pod, node) then return true end
    remove(v.pod)
    victims[#victims + 1] = v
    return false
  end
  local violations = reprieve_in_order(violating, fine, reprieve)
  if #violating ~= 0 and #fine ~= 0 then sort(victims, more_important) end
  return victims, violations
end

-- ---- pickOneNodeForPreemption ---------------------------------------------

-- The ordered score functions (higher is better).
local SCORES = {
  function(c) return -c.violations end,
  function(c) return -c.victims[1].pod.priority end,
  function(c)
    local sum = 0
    for _, v in ipairs(c.victims) do sum = sum + v.pod.priority + PRIORITY_OFFSET end
    return -sum
  end,
  function(c) return -#c.victims end,
  -- util.GetEarliestPodStartTime: the earliest start among the victims of
  -- the highest priority
  function(c)
    local victims = c.victims
    local max_prio, earliest = victims[1].pod.priority, victims[1].start
    for _, v in ipairs(victims) do
      local p = v.pod.priority
      if p == max_prio then
        if v.start < earliest then earliest = v.start end
      elseif p > max_prio then
        max_prio, earliest = p, v.start
      end
    end
    return earliest
  end,
}

local function pick_one(candidates)
  local all = candidates
  for _, score in ipairs(SCORES) do
    local best, selected = -math.huge, {}
    for _, c in ipairs(all) do
      local s = score(c)
      if s > best then
        best, selected = s, { c }
      elseif s == best then
        selected[#selected + 1] = c
      end
    end
    if #selected == 1 then return selected[1] end
    all = selected
  end
  return all[1]
end

-- ---- the HTTP extenders' say (Evaluator.callExtenders) -------------------------

function P:call_extenders(candidates)
  local given = {}
  for i, c in ipairs(candidates) do
    local pods = {}
    for k, v in ipairs(c.victims) do pods[k] = v.pod end
    given[i] = { node = c.ni.node.name, violations = c.violations, pods = pods }
  end
  local kept, err = self.handle:preempt_extenders(given)
  if not kept then return nil, err end
  local infos = {}
  local all, num_all = ls.all_nodes()
  for i = 0, num_all - 1 do infos[all[i].node.name] = all[i] end
  local out = {}
  for i, k in ipairs(kept) do
    local victims = {}
    for j, p in ipairs(k.pods) do victims[j] = { pod = p, start = start_of(p), order = j } end
    out[i] = { ni = infos[k.node], victims = victims, violations = k.violations }
  end
  return out
end

-- ---- the evaluator's parts other preemption plugins reuse ---------------------
-- A plugin with its own victim selection (upstream's preemption.Interface)
-- requires this module and makes an evaluator whose metatable indexes P,
-- overriding select_victims(state, pod, ni, pdbs), waiting_for_victims(pod,
-- state) and offset_and_num_candidates(n); P.post_filter(evaluator, state,
-- pod) then runs the shared steps (potential nodes, dry runs, extenders,
-- pickOneNodeForPreemption, the deletions and nominations).
P.start_of, P.more_important, P.split_by_pdb, P.reasons_of = start_of, more_important, split_by_pdb, reasons_of
P.reprieve_in_order = reprieve_in_order

-- ---- FitError of a failed preemption ----------------------------------------

-- framework.FitError.Error() over the dry-run statuses, other nodes counting
-- as MSG_NOT_HELPFUL.
local function fit_error(num_all, failures, num_failed)
  local counts, keys = {}, {}
  for _, f in ipairs(failures) do
    for _, r in ipairs(f.reasons) do
      if not counts[r] then keys[#keys + 1] = r; counts[r] = 0 end
      counts[r] = counts[r] + 1
    end
  end
  local absent = num_all - num_failed
  if absent > 0 then
    if not counts[MSG_NOT_HELPFUL] then keys[#keys + 1] = MSG_NOT_HELPFUL; counts[MSG_NOT_HELPFUL] = 0 end
    counts[MSG_NOT_HELPFUL] = counts[MSG_NOT_HELPFUL] + absent
  end
  local entries = {}
  for i, r in ipairs(keys) do entries[i] = counts[r] .. " " .. r end
  sort(entries)   -- sort.Strings: "10 x" before "2 y"
  local msg = "0/" .. num_all .. " nodes are available:"
  if #entries > 0 then msg = msg .. " " .. concat(entries, ", ") .. "." end
  return msg
end

-- ---- PostFilter ---------------------------------------------------------------

-- PodEligibleToPreemptOthers' second rule: victims of an earlier preemption
-- still terminating on the nominated node.
function P:waiting_for_victims(pod)
  local h = self.handle
  local nominated = h:nominated_node_of(pod)
  if not nominated then return false end
  local id = ls.intern(nominated)
  local all, n = ls.all_nodes()
  for i = 0, n - 1 do
    local ni = all[i]
    if ni.node.name == id then
      if h:node_code(ni) == UNRESOLVABLE then return false end
      for k = 0, ni.num_pods - 1 do
        local p = ni.pods[k]
        if p.priority < pod.priority and p.deletion_ns ~= 0 then return true end
      end
      return false
    end
  end
  return false
end

function P:post_filter(state, pod)
  local h = self.handle
  if h:preempting(pod) then return nil, h:nominated_node_of(pod) end
  if pod.preemption_policy == PREEMPT_NEVER then return self.never end
  if self:waiting_for_victims(pod, state) then return self.terminating end

  local all, num_all = ls.all_nodes()
  local potential = {}
  for i = 0, num_all - 1 do
    local ni = all[i]
    if h:node_code(ni) == UNSCHED then potential[#potential + 1] = ni end
  end
  local np = #potential
  if np == 0 then
    h:clear_nomination(pod)
    return ls.unschedulable("preemption: " .. fit_error(num_all, {}, 0))
  end

  local pdbs = self:pdbs()
  local offset, want = self:offset_and_num_candidates(np)
  local fine, violating = {}, {}
  local failures, errors = {}, {}
  for i = 0, np - 1 do
    local ni = potential[(offset + i) % np + 1]
    local ok, victims, violations = pcall(self.select_victims, self, state, pod, ni, pdbs)
    local failure
    if not ok then
      failure = { code = ls.ERROR, reasons = { tostring(victims) } }
    elseif victims == nil then
      failure = violations
    elseif #victims == 0 then
      failure = { code = ls.ERROR, reasons = {
        string.format("expected at least one victim pod on node %q", ls.str(ni.node.name)) } }
    end
    if failure then
      failures[#failures + 1] = failure
      if failure.code == ls.ERROR then errors[#errors + 1] = failure.reasons[1] end
    else
      local c = { ni = ni, victims = victims, violations = violations }
      local list = violations == 0 and fine or violating
      if #list < want then list[#list + 1] = c end
      if #fine > 0 and #fine + #violating >= want then break end
    end
  end

  local candidates = fine
  for _, c in ipairs(violating) do candidates[#candidates + 1] = c end
  if #candidates == 0 then
    if #errors > 0 then
      local msg = #errors == 1 and errors[1] or "[" .. concat(errors, ", ") .. "]"
      return ls.error("preemption: " .. msg)
    end
    h:clear_nomination(pod)
    return ls.unschedulable("preemption: " .. fit_error(num_all, failures, #failures))
  end

  if h:preempt_extenders_wanted() then
    local err
    candidates, err = self:call_extenders(candidates)
    if not candidates then return ls.error("preemption: " .. err) end
    if #candidates == 0 then return ls.unschedulable("preemption: no candidate node for preemption") end
  end

  local best = #candidates == 1 and candidates[1] or pick_one(candidates)
  local node_name = ls.str(best.ni.node.name)
  for _, v in ipairs(best.victims) do
    -- a victim already being deleted needs no second call
    if v.pod.deletion_ns == 0 then
      local err = h:preempt(v.pod, node_name)
      if err then return ls.error("preemption: " .. err) end
    end
  end
  -- lower-priority pods nominated to the node may no longer fit there
  local lower = {}
  for p in h:nominated_pods(node_name) do
    if p.priority < pod.priority then lower[#lower + 1] = p end
  end
  for _, p in ipairs(lower) do h:clear_nomination(p) end
  return nil, node_name
end


-- ---- async preemption: PreEnqueue, events and queueing hint ---------------------

function P:pre_enqueue(pod)
  if self.handle:preempting(pod) then return self.in_flight end
  return nil
end

local function skip_assigned_pod_deleted()
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "AssignedPod", action = "Delete", hint = skip_assigned_pod_deleted },
}

return P
