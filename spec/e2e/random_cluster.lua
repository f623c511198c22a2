-- Writes a random cluster (seeded) for the randomized runs of the real-cluster
-- path: nodes in zones with labels, taints and varied capacity, a few running
-- pods, PriorityClasses, and pending pods with requests, priorities, node
-- selectors, tolerations, required anti-affinity, topology spreading and
-- scheduling gates.
--
-- usage: luajit spec/e2e/random_cluster.lua SEED [NODES] [PODS] > cluster.json
local seed = tonumber(arg[1]) or 1
local n_nodes = tonumber(arg[2]) or 12
local n_pods = tonumber(arg[3]) or 80

-- A small LCG, so a seed gives the same file on every machine.
local state = seed * 2654435761 % 4294967296
local function rand(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 65536) % n + 1   -- the high bits: an LCG's low bits cycle
end
local function pick(list) return list[rand(#list)] end

local items = {}
local function emit(s) items[#items + 1] = s end

emit('{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}')
emit('{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"low"},"value":10}')

local zones = { "zone-a", "zone-b", "zone-c" }
for i = 1, n_nodes do
  local name = string.format("node-%02d", i)
  local node_spec = {}
  if rand(6) == 1 then
    node_spec[#node_spec + 1] = '"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]'
  end
  if rand(15) == 1 then node_spec[#node_spec + 1] = '"unschedulable":true' end
  emit(string.format('{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":'
    .. '{"kubernetes.io/hostname":"%s","topology.kubernetes.io/zone":"%s","disk":"%s"}},'
    .. '"spec":{%s},"status":{"allocatable":{"cpu":"%d","memory":"%dGi","pods":"20"}}}',
    name, name, zones[(i - 1) % 3 + 1], pick({ "ssd", "hdd" }), table.concat(node_spec, ","),
    pick({ 2, 4, 8 }), pick({ 4, 8, 16 })))
end

local apps = { "web", "db", "cache", "batch" }
for i = 1, n_pods do
  local app = pick(apps)
  local spec = {}
  spec[#spec + 1] = string.format('"containers":[{"name":"c","image":"%s:1","resources":{"requests":'
    .. '{"cpu":"%dm","memory":"%dMi"}}}]', app, pick({ 100, 250, 500, 1000, 1500 }), pick({ 128, 512, 1024, 2048 }))
  local r = rand(10)
  if r == 1 then spec[#spec + 1] = '"priorityClassName":"high"' elseif r == 2 then
    spec[#spec + 1] = '"priorityClassName":"low"' end
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
  if rand(12) == 1 then spec[#spec + 1] = '"schedulingGates":[{"name":"example.com/hold"}]' end
  if i <= math.floor(n_nodes / 2) then spec[#spec + 1] = string.format('"nodeName":"node-%02d"', i) end
  emit(string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s-%03d","namespace":"default",'
    .. '"labels":{"app":"%s"}},"spec":{%s}}', app, i, app, table.concat(spec, ",")))
end

io.write('{"apiVersion":"v1","kind":"List","items":[\n', table.concat(items, ",\n"), "\n]}\n")
