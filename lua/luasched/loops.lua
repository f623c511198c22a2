-- luasched.loops: the per-node loops, generated per profile and per plugin.
--
-- Why generated: a loop that calls `plugins[k]:filter(...)` for k = 1..n has
-- one call site that sees n different functions, so LuaJIT's trace for it
-- keeps side-exiting and boxing cdata (allocation per node). Generating the
-- filter chain as straight-line code, with one call site per plugin, and one
-- score loop per plugin (each load() gives a fresh prototype, hence its own
-- traces), lets the JIT inline every hook into the node loop.
--
-- The generator uses only functions captured here, when the runtime loads
-- (before any plugin), and loads its code with an empty environment.
local band = require("bit").band
local SUCCESS = require("luasched.clib").LS_SUCCESS
local format, concat, load, assert, type = string.format, table.concat, load, assert, type

local M = {}

local FILTER_HEAD = [[
local checked, insts, now, observe, band = ...
local SUCCESS = %d
%s
local cyc, npl

local function node(state, pod, ni, st_out, sk, trace, idx)
  local st, code
%s
  st_out.code = SUCCESS
  return true
end

-- The candidates from `start` on, wrapping: two ranges with an integer loop
-- variable each (a wrapping counter cost a float add, compare and
-- conversion per node). `npl` is read only when tracing.
local function loop(c, state, pod, sk)
  cyc = c
  local cand, ncand = cyc.candidates, cyc.num_candidates
  local want = cyc.num_to_find
  local feasible, statuses = cyc.feasible, cyc.node_status
  local trace = nil
  npl = cyc.num_filter_plugins
  if cyc.trace ~= 0 then trace = cyc.filter_trace end
  local start = ncand > 0 and cyc.start %% ncand or 0
  local nf, processed = 0, ncand
  for at = start, ncand - 1 do
    local ni = cand[at][0]
    local idx = ni.index
    if node(state, pod, ni, statuses[idx], sk, trace, idx) then
      feasible[nf] = ni
      nf = nf + 1
      if nf >= want then processed = at - start + 1; break end
    end
  end
  if processed == ncand then   -- no break in the first range
    for at = 0, start - 1 do
      local ni = cand[at][0]
      local idx = ni.index
      if node(state, pod, ni, statuses[idx], sk, trace, idx) then
        feasible[nf] = ni
        nf = nf + 1
        if nf >= want then processed = ncand - start + at + 1; break end
      end
    end
  end
  cyc.num_feasible = nf
  cyc.num_processed = processed
end

local function one(c, state, pod, ni, st_out, sk)
  cyc = c
  return node(state, pod, ni, st_out, sk, nil, ni.index)
end

return loop, one
]]

local FILTER_STEP = [[
  if not sk[%d] then
    cyc.running_plugin = %d
    %s
    st = p%d:filter(state, pod, ni)
    %s
    if st ~= nil then
      code = checked(st)
      if code ~= SUCCESS then
        if trace then trace[idx * npl + %d] = st.id + 1 end
        st_out.status = st.id
        st_out.code = code
        st_out.plugin = %d
        return false
      end
    end
    if trace then trace[idx * npl + %d] = 1 end
  end
]]

-- The timed variant (sampled cycles, for metrics) observes the calls on one
-- node in 16: the clock read and the bucket count would otherwise cost more
-- than most filters.
local TIME_START = "local t0 = band(ni.index, 15) == 0 and now()"
local TIME_END = "if t0 then observe(%d, %d, st ~= nil and checked(st) or SUCCESS, now() - t0) end"

--- Builds the filter loop for one profile's filter plugins. Returns
--- loop(cycle, state, pod, skip) and one(cycle, state, pod, ni, st_out, skip)
--- for a single node; both keep cycle.running_plugin (0-based) current.
--- `skip[k]` true skips plugin k (PreFilter returned Skip). With `timing`
--- ({now, observe, ep}) every call is timed into timing.observe.
function M.filter(instances, checked, chunkname, timing)
  local locals, steps = {}, {}
  for k = 1, #instances do
    locals[k] = format("local p%d = insts[%d]", k, k)
    local before = timing and TIME_START or ""
    local after = timing and format(TIME_END, timing.ep, k - 1) or ""
    steps[k] = format(FILTER_STEP, k, k - 1, before, k, after, k - 1, k - 1, k - 1)
  end
  local src = format(FILTER_HEAD, SUCCESS, concat(locals, "\n"), concat(steps))
  local chunk = assert(load(src, "=" .. chunkname, "t", {}))
  return chunk(checked, instances, timing and timing.now, timing and timing.observe, band)
end

-- A score must be an integer within int64: anything else (another type,
-- NaN, an infinity, 3.7, 1e300; `s % 1` is NaN for the infinities) goes to
-- to_score, which converts an int64 cdata or raises naming the value.
local SCORE_LOOP = [[
local inst, to_score = ...
return function(state, pod, nodes, n, scores, base)
  for i = 0, n - 1 do
    local s = inst:score(state, pod, nodes[i][0])
    if type(s) ~= "number" or s %% 1 ~= 0 or s >= 0x1p63 or s < -0x1p63 then s = to_score(s) end
    scores[base + i] = s
  end
end
]]

local SCORE_LOOP_TIMED = [[
local inst, to_score, now, observe, ep, index, band = ...
return function(state, pod, nodes, n, scores, base)
  for i = 0, n - 1 do
    local t0 = band(i, 15) == 0 and now()
    local s = inst:score(state, pod, nodes[i][0])
    if t0 then observe(ep, index, %d, now() - t0) end
    if type(s) ~= "number" or s %% 1 ~= 0 or s >= 0x1p63 or s < -0x1p63 then s = to_score(s) end
    scores[base + i] = s
  end
end
]]

--- One scoring loop per plugin instance, so each gets its own traces.
--- `to_score` converts a non-number result (int64 cdata) or raises. With
--- `timing` ({now, observe, ep, index}) every call is timed.
function M.score(instance, to_score, chunkname, timing)
  local src = format(timing and SCORE_LOOP_TIMED or SCORE_LOOP, SUCCESS)   -- %% -> %, the code Success
  -- `type` as a global of its own environment, not an upvalue: the JIT then
  -- compiles the check as the builtin (through an upvalue it was 3x slower)
  local chunk = assert(load(src, "=" .. chunkname, "t", { type = type }))
  if timing then
    return chunk(instance, to_score, timing.now, timing.observe, timing.ep, timing.index, band)
  end
  return chunk(instance, to_score)
end

-- The Score plugins of a profile in a row, one call site each: a loop over
-- the plugins has one or few iterations per pod, so LuaJIT's trace starting
-- at it left the loop, aborted until the loop was blacklisted, and the whole
-- Score runner stayed interpreted (allocating a cdata per field it read).
local SCORE_CHAIN = [[
local loops, names = ...
%s
return function(state, pod, cyc, nodes, n, scores, skipped, skip_score, from)
  local first, count = nodes, n
  if from ~= 0 then first, count = nodes + from, n - from end
%s
end
]]

local SCORE_CHAIN_STEP = [[
  cyc.running_plugin = %d
  if skip_score[n%d] then
    skipped[%d] = 1   -- its row is not read (C totals the rows not skipped)
  else
    skipped[%d] = 0
    l%d(state, pod, first, count, scores, %d * n + from)
  end
]]

--- Runs every Score plugin's loop (`score_loops`, from M.score; `names` their
--- registered names) in order:
--- chain(state, pod, cycle, nodes, n, scores, skipped, skip_score, from), over
--- the nodes from index `from` on (0: all of them; OpportunisticBatching's
--- re-scoring scores the last one alone, the others' rows already in place). A plugin
--- named in `skip_score` (PreScore said Skip) is not run and gets
--- skipped[k] = 1 (its row of scores is left as it was: C skips it when it
--- totals, the attempt records show no scores for it); cycle.running_plugin
--- (0-based) names the plugin running.
function M.score_chain(names, score_loops, chunkname)
  local locals, steps = {}, {}
  for k = 1, #names do
    locals[k] = format("local l%d, n%d = loops[%d], names[%d]", k, k, k, k)
    steps[k] = format(SCORE_CHAIN_STEP, k - 1, k, k - 1, k - 1, k, k - 1)
  end
  local src = format(SCORE_CHAIN, concat(locals, "\n"), concat(steps))
  local chunk = assert(load(src, "=" .. chunkname, "t", {}))
  return chunk(score_loops, names)
end

return M
