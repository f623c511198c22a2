-- Writes a synthetic cluster file for `luasched simulate`: N nodes shaped like
-- scheduler_perf's default node (cpu 4, memory 32Gi, pods 110, Ready, a
-- kubernetes.io/hostname label) and P pending pods shaped like its basic pod
-- (one pause container, port 80, requests = limits cpu 100m / memory 500Mi).
-- Optional zones are assigned round-robin, as labelNodePrepareStrategy does.
--
-- usage: luajit bench/make_cluster.lua NODES PODS [ZONES] > cluster.json
local nodes = tonumber(arg[1])
local pods = tonumber(arg[2])
local zones = tonumber(arg[3] or "0")
if not nodes or not pods then
  io.stderr:write("usage: luajit bench/make_cluster.lua NODES PODS [ZONES] > cluster.json\n")
  os.exit(2)
end

local out = {}
local function emit(s) out[#out + 1] = s end

emit('{"apiVersion":"v1","kind":"List","items":[\n')
for i = 1, nodes do
  local name = string.format("node-%05d", i)
  local labels = string.format('"kubernetes.io/hostname":"%s"', name)
  if zones > 0 then
    labels = labels .. string.format(',"topology.kubernetes.io/zone":"zone%d"', (i - 1) % zones + 1)
  end
  emit(string.format('{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{%s}},'
    .. '"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},'
    .. '"conditions":[{"type":"Ready","status":"True"}]}},\n', name, labels))
end
for i = 1, pods do
  emit(string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%06d","namespace":"default"},'
    .. '"spec":{"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10",'
    .. '"ports":[{"containerPort":80}],'
    .. '"resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}}%s\n',
    i, i < pods and "," or ""))
end
emit(']}\n')
io.write(table.concat(out))
