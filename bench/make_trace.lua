-- Writes a synthetic trace for `luasched compare` / `luasched simulate`: N
-- nodes in Z zones (scheduler_perf's default node: cpu 4, memory 32Gi, pods
-- 110) and a Timeline of P pods arriving evenly over SECONDS, in five shapes
-- (100m/500Mi up to 500m/4Gi), of which one in four leaves again 10 minutes after
-- it arrived (a deletion step), so the cluster fills and drains as a real one
-- does. JSON, one List with the Timeline among its items.
--
-- usage: luajit bench/make_trace.lua NODES PODS SECONDS [ZONES] > trace.json
local nodes, pods, seconds = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])
local zones = tonumber(arg[4] or "3")
if not nodes or not pods or not seconds then
  io.stderr:write("usage: luajit bench/make_trace.lua NODES PODS SECONDS [ZONES] > trace.json\n")
  os.exit(2)
end

local shapes = {
  { "100m", "500Mi" }, { "200m", "1Gi" }, { "250m", "1Gi" }, { "500m", "2Gi" }, { "500m", "4Gi" },
}
local out = {}
local function emit(s) out[#out + 1] = s end

emit('{"apiVersion":"v1","kind":"List","items":[\n')
for i = 1, nodes do
  local name = string.format("node-%05d", i)
  emit(string.format('{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{'
    .. '"kubernetes.io/hostname":"%s","topology.kubernetes.io/zone":"zone%d"}},'
    .. '"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},'
    .. '"conditions":[{"type":"Ready","status":"True"}]}},\n', name, name, (i - 1) % zones + 1))
end

-- Steps in time order: arrivals, and the departures they schedule.
local steps = {}
for i = 1, pods do
  local at = math.floor((i - 1) * seconds * 1000 / pods)
  local shape = shapes[(i - 1) % #shapes + 1]
  steps[#steps + 1] = { at = at, text = string.format(
    '{"at":"%dms","create":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%06d","namespace":"default",'
    .. '"labels":{"app":"app%d"}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",'
    .. '"resources":{"requests":{"cpu":"%s","memory":"%s"}}}]}}}', at, i, i % 50, shape[1], shape[2]) }
  if i % 4 == 0 and at + 600000 < seconds * 1000 then
    steps[#steps + 1] = { at = at + 600000, text = string.format(
      '{"at":"%dms","delete":{"kind":"Pod","metadata":{"namespace":"default","name":"pod-%06d"}}}', at + 600000, i) }
  end
end
table.sort(steps, function(a, b) return a.at < b.at end)
emit('{"apiVersion":"luasched.io/v1alpha1","kind":"Timeline","steps":[\n')
for i, st in ipairs(steps) do
  emit(st.text)
  emit(i < #steps and ",\n" or "\n")
end
emit(']}]}\n')
io.write(table.concat(out))
