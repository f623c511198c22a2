-- Writes a seeded cluster for the what-if tests (spec/e2e/whatif_served.sh,
-- bench/whatif.sh): nodes in three zones with labels, a few tainted or
-- cordoned, every existing pod already bound (no pending pod that a later
-- binding could move), and, with QUESTIONS > 0, that many pending pods to ask
-- about, one JSON object per line on standard error (requests, node
-- selectors, tolerations, required anti-affinity, topology spreading).
--
-- With PENDING > 0, the cluster also holds that many pending pods shaped like
-- scheduler_perf's basic pod (requests cpu 100m, memory 500Mi) for a
-- throughput measurement (bench/whatif.sh).
--
-- usage: luajit spec/e2e/whatif_cluster.lua SEED NODES BOUND_PODS [QUESTIONS] [PENDING] > cluster.json 2> pods.jsonl
local seed = tonumber(arg[1]) or 1
local n_nodes = tonumber(arg[2]) or 40
local n_bound = tonumber(arg[3]) or 200
local n_questions = tonumber(arg[4]) or 0
local n_pending = tonumber(arg[5]) or 0

local state = seed * 2654435761 % 4294967296
local function rand(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 65536) % n + 1
end
local function pick(list) return list[rand(#list)] end

local zones = { "zone-a", "zone-b", "zone-c" }
local items = {}
local cpu_of = {}
for i = 1, n_nodes do
  local name = string.format("node-%04d", i)
  local spec = {}
  if rand(10) == 1 then spec[#spec + 1] = '"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]' end
  if rand(25) == 1 then spec[#spec + 1] = '"unschedulable":true' end
  cpu_of[i] = pick({ 4, 8, 16 })
  items[#items + 1] = string.format('{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":'
    .. '{"kubernetes.io/hostname":"%s","topology.kubernetes.io/zone":"%s","disk":"%s"}},"spec":{%s},'
    .. '"status":{"allocatable":{"cpu":"%d","memory":"%dGi","pods":"110"}}}',
    name, name, zones[(i - 1) % 3 + 1], pick({ "ssd", "hdd" }), table.concat(spec, ","), cpu_of[i],
    cpu_of[i] * 4)
end

local apps = { "web", "db", "cache", "batch" }
local function pod_spec(app)
  local spec = {}
  spec[#spec + 1] = string.format('"containers":[{"name":"c","image":"%s:1","resources":{"requests":'
    .. '{"cpu":"%dm","memory":"%dMi"}}}]', app, pick({ 100, 250, 500, 1000, 2000 }), pick({ 128, 512, 1024, 4096 }))
  if rand(5) == 1 then spec[#spec + 1] = string.format('"nodeSelector":{"disk":"%s"}', pick({ "ssd", "hdd" })) end
  if rand(6) == 1 then
    spec[#spec + 1] = '"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}]'
  end
  if app == "db" and rand(2) == 1 then
    spec[#spec + 1] = '"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":'
      .. '[{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"kubernetes.io/hostname"}]}}'
  end
  if app == "web" and rand(2) == 1 then
    spec[#spec + 1] = string.format('"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":'
      .. '"topology.kubernetes.io/zone","whenUnsatisfiable":"%s","labelSelector":{"matchLabels":{"app":"web"}}}]',
      pick({ "DoNotSchedule", "ScheduleAnyway" }))
  end
  return spec
end

for i = 1, n_bound do
  local app = pick(apps)
  local spec = { string.format('"containers":[{"name":"c","image":"%s:1","resources":{"requests":'
    .. '{"cpu":"%dm","memory":"%dMi"}}}]', app, pick({ 100, 250, 500 }), pick({ 128, 512, 1024 })) }
  spec[#spec + 1] = string.format('"nodeName":"node-%04d"', rand(n_nodes))
  items[#items + 1] = string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s-%05d",'
    .. '"namespace":"default","labels":{"app":"%s"}},"spec":{%s},"status":{"phase":"Running"}}',
    app, i, app, table.concat(spec, ","))
end
for i = 1, n_pending do
  items[#items + 1] = string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending-%05d",'
    .. '"namespace":"default"},"spec":{"containers":[{"name":"c","image":"pause","resources":{"requests":'
    .. '{"cpu":"100m","memory":"500Mi"}}}]}}', i)
end
io.write('{"apiVersion":"v1","kind":"List","items":[\n', table.concat(items, ",\n"), "\n]}\n")

for i = 1, n_questions do
  local app = pick(apps)
  io.stderr:write(string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ask-%04d",'
    .. '"namespace":"default","labels":{"app":"%s"}},"spec":{%s}}\n', i, app, table.concat(pod_spec(app), ",")))
end
