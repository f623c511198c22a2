-- The scenario suite: every spec/scenarios/*.yaml is a cluster (Nodes, Pods,
-- other objects, maybe a Timeline) whose comments state what must happen,
-- worked out by hand from the reference:
--
--   # config: profile-file.yaml            (optional, relative to spec/scenarios)
--   # expect: default/web -> node-a        (bound there)
--   # expect: default/db -> pending: 0/3 nodes are available: ...   (exact message)
--   # expect: default/old -> preempted     (evicted by preemption)
--   # expect-score: default/web node-a NodeResourcesFit 81   (finalScore: normalized x weight)
--   # expect-raw: default/web node-a TaintToleration 1       (raw score before normalize)
--   # expect-attempts: default/web unschedulable@0s | bound@40s victims=default/a,default/b
--                                          (every attempt in order: result@virtual time,
--                                           and the pods it preempted)
--   # expect-line: default/web: gated: ...  (a whole line of the text output)
--   # fault: provision=never                (optional: the embedded provisioner's fault)
--   # expect-claim: default/data -> Bound pv-1 on node-a   (phase [volume] [on selected node])
--   # expect-attempt: default/web 2 -> node-a   (attempt 2 bound there; or the exact message)
--   # expect-filter: default/web node-b VolumeBinding -> node(s) had volume node affinity conflict
--   # expect-batch: default/web hint   (placed from OpportunisticBatching's hint; "scored": not)
--
-- Each runs `luasched simulate --output json` and is checked against them.
local json = require("json")

local BIN = os.getenv("LUASCHED_BIN")
local DIR = (os.getenv("LUASCHED_SOURCE_DIR") or ".") .. "/spec/scenarios"

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("*a")
  f:close()
  return s
end

local function scenario_files()
  local p = assert(io.popen("ls " .. DIR .. "/*.yaml 2>/dev/null"))
  local files = {}
  for line in p:lines() do
    if not line:match("/profile[^/]*%.yaml$") then files[#files + 1] = line end
  end
  p:close()
  return files
end

local function expectations(text)
  local e = { config = nil, pods = {}, scores = {}, raws = {}, attempts = {}, lines = {}, claims = {},
    attempt_n = {}, filters = {}, batch = {} }
  for line in text:gmatch("[^\n]+") do
    local config = line:match("^#%s*config:%s*(%S+)")
    if config then e.config = config end
    local pod, want = line:match("^#%s*expect:%s*(%S+)%s*%->%s*(.-)%s*$")
    if pod then e.pods[#e.pods + 1] = { pod = pod, want = want } end
    local spod, node, plugin, value = line:match("^#%s*expect%-score:%s*(%S+)%s+(%S+)%s+(%S+)%s+(%-?%d+)")
    if spod then e.scores[#e.scores + 1] = { spod, node, plugin, tonumber(value) } end
    local rpod, rnode, rplugin, rvalue = line:match("^#%s*expect%-raw:%s*(%S+)%s+(%S+)%s+(%S+)%s+(%-?%d+)")
    if rpod then e.raws[#e.raws + 1] = { rpod, rnode, rplugin, tonumber(rvalue) } end
    local apod, alist = line:match("^#%s*expect%-attempts:%s*(%S+)%s+(.-)%s*$")
    if apod then e.attempts[#e.attempts + 1] = { pod = apod, want = alist } end
    local text_line = line:match("^#%s*expect%-line:%s*(.-)%s*$")
    if text_line then e.lines[#e.lines + 1] = text_line end
    local fault = line:match("^#%s*fault:%s*(%S+)")
    if fault then e.fault = fault end
    local claim, cwant = line:match("^#%s*expect%-claim:%s*(%S+)%s*%->%s*(.-)%s*$")
    if claim then e.claims[#e.claims + 1] = { claim = claim, want = cwant } end
    local npod, an, awant = line:match("^#%s*expect%-attempt:%s*(%S+)%s+(%d+)%s*%->%s*(.-)%s*$")
    if npod then e.attempt_n[#e.attempt_n + 1] = { pod = npod, n = tonumber(an), want = awant } end
    local fpod, fnode, fplugin, fwant = line:match("^#%s*expect%-filter:%s*(%S+)%s+(%S+)%s+(%S+)%s*%->%s*(.-)%s*$")
    if fpod then e.filters[#e.filters + 1] = { fpod, fnode, fplugin, fwant } end
    local bpod, bwant = line:match("^#%s*expect%-batch:%s*(%S+)%s+(%a+)%s*$")
    if bpod then e.batch[#e.batch + 1] = { pod = bpod, want = bwant } end
  end
  return e
end

local function run(file, e, text)
  local cmd = string.format("'%s' simulate '%s' --output %s", BIN, file, text and "text" or "json")
  if e.config then cmd = cmd .. string.format(" --config '%s/%s'", DIR, e.config) end
  if e.fault then cmd = cmd .. string.format(" --fault '%s'", e.fault) end
  local p = assert(io.popen(cmd .. " 2>/dev/null"))
  local out = p:read("*a")
  local ok = p:close()
  assert(ok, "luasched simulate failed on " .. file)
  if text then return out end
  return json.decode(out)
end

-- A pod's attempts as "result@Ns [victims=a,b]" joined by " | ".
local function history(rec)
  local out = {}
  for _, a in ipairs(rec.attempts or {}) do
    local item = string.format("%s@%gs", a.result, a.time)
    if a.victims and #a.victims > 0 then item = item .. " victims=" .. table.concat(a.victims, ",") end
    out[#out + 1] = item
  end
  return table.concat(out, " | ")
end

local function outcome(rec, preempted)
  if preempted then return "preempted" end
  if type(rec.node) == "string" then return rec.node end
  return "pending: " .. tostring(rec.message)
end

describe("scenario", function()
  for _, file in ipairs(scenario_files()) do
    local name = file:match("([^/]+)%.yaml$")
    it(name, function()
      local e = expectations(read(file))
      assert.is_true(#e.pods + #e.scores + #e.raws + #e.attempts + #e.lines + #e.claims > 0,
        name .. " states no expectation")
      local result = run(file, e)
      local by_pod, victims = {}, {}
      for _, rec in ipairs(result.pods) do
        by_pod[rec.namespace .. "/" .. rec.name] = rec
        for _, a in ipairs(rec.attempts or {}) do
          for _, v in ipairs(a.victims or {}) do victims[v] = true end
        end
      end
      for _, x in ipairs(e.pods) do
        local rec = by_pod[x.pod]
        assert.is_truthy(rec or victims[x.pod], name .. ": no record for " .. x.pod)
        local got = rec and outcome(rec, victims[x.pod] and x.want == "preempted") or "preempted"
        assert.are.equal(x.want, got, name .. ": " .. x.pod)
      end
      for _, s in ipairs(e.scores) do
        local rec = assert(by_pod[s[1]], name .. ": no record for " .. s[1])
        local node = rec.finalScore and rec.finalScore[s[2]]
        assert.are.equal(s[4], node and node[s[3]], name .. ": final " .. table.concat(s, " ", 1, 3))
      end
      for _, x in ipairs(e.batch) do
        local rec = assert(by_pod[x.pod], name .. ": no record for " .. x.pod)
        assert.are.equal(x.want, rec.batchHintOnly and "hint" or "scored", name .. ": batch hint of " .. x.pod)
      end
      for _, x in ipairs(e.attempts) do
        local rec = assert(by_pod[x.pod], name .. ": no record for " .. x.pod)
        assert.are.equal(x.want, history(rec), name .. ": attempts of " .. x.pod)
      end
      if #e.lines > 0 then
        local lines = {}
        for l in run(file, e, true):gmatch("[^\n]+") do lines[l] = true end
        for _, want in ipairs(e.lines) do
          assert.is_true(lines[want] == true, name .. ": no output line " .. want)
        end
      end
      local claims = {}
      for _, c in ipairs(result.claims or {}) do
        claims[c.namespace .. "/" .. c.name] = c.phase .. (c.volumeName and (" " .. c.volumeName) or "")
          .. (c.selectedNode and (" on " .. c.selectedNode) or "")
      end
      for _, c in ipairs(e.claims) do
        assert.are.equal(c.want, claims[c.claim] or "absent", name .. ": claim " .. c.claim)
      end
      for _, a in ipairs(e.attempt_n) do
        local rec = assert(by_pod[a.pod], name .. ": no record for " .. a.pod)
        local at = rec.attempts and rec.attempts[a.n]
        local got = at and (at.node or at.message) or "no attempt " .. a.n
        assert.are.equal(a.want, got, name .. ": attempt " .. a.n .. " of " .. a.pod)
      end
      for _, f in ipairs(e.filters) do
        local rec = assert(by_pod[f[1]], name .. ": no record for " .. f[1])
        local verdicts = rec.filter and rec.filter[f[2]]
        assert.are.equal(f[4], verdicts and verdicts[f[3]], name .. ": filter " .. table.concat(f, " ", 1, 3))
      end
      for _, s in ipairs(e.raws) do
        local rec = assert(by_pod[s[1]], name .. ": no record for " .. s[1])
        local node = rec.score and rec.score[s[2]]
        assert.are.equal(s[4], node and node[s[3]], name .. ": raw " .. table.concat(s, " ", 1, 3))
      end
    end)
  end
end)
