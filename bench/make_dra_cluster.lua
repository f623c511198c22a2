-- Writes a synthetic DRA cluster file for `luasched simulate`: N nodes (as
-- bench/make_cluster.lua's), one ResourceSlice per node with D devices of
-- driver gpu.example.com (attribute model, capacity memory), one DeviceClass
-- selecting the driver, and P pending pods, each with its own ResourceClaim
-- for one device whose memory is at least 16Gi (a class and a request
-- selector to evaluate per device). With N*D >= P every pod fits.
--
-- usage: luajit bench/make_dra_cluster.lua NODES DEVICES_PER_NODE PODS > cluster.json
local nodes, devices, pods = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])
if not nodes or not devices or not pods then
  io.stderr:write("usage: luajit bench/make_dra_cluster.lua NODES DEVICES_PER_NODE PODS > cluster.json\n")
  os.exit(2)
end

local out = {}
local function emit(s) out[#out + 1] = s end

emit('{"apiVersion":"v1","kind":"List","items":[\n')
emit('{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.example.com"},'
  .. '"spec":{"selectors":[{"cel":{"expression":"device.driver == \\"gpu.example.com\\""}}]}},\n')
for i = 1, nodes do
  local name = string.format("node-%05d", i)
  emit(string.format('{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":'
    .. '{"kubernetes.io/hostname":"%s"}},"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},'
    .. '"conditions":[{"type":"Ready","status":"True"}]}},\n', name, name))
  local devs = {}
  for d = 1, devices do
    devs[d] = string.format('{"name":"gpu-%d","attributes":{"model":{"string":"%s"}},'
      .. '"capacity":{"memory":{"value":"%dGi"}}}', d - 1, d % 2 == 0 and "A100" or "L4", d % 2 == 0 and 40 or 24)
  end
  emit(string.format('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"%s-gpus"},'
    .. '"spec":{"driver":"gpu.example.com","nodeName":"%s","pool":{"name":"%s","generation":1,'
    .. '"resourceSliceCount":1},"devices":[%s]}},\n', name, name, name, table.concat(devs, ",")))
end
for i = 1, pods do
  local name = string.format("pod-%06d", i)
  emit(string.format('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"%s-gpu",'
    .. '"namespace":"default","uid":"claim-%d"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":'
    .. '{"deviceClassName":"gpu.example.com","selectors":[{"cel":{"expression":'
    .. '"device.capacity[\\"gpu.example.com\\"].memory.compareTo(quantity(\\"16Gi\\")) >= 0"}}]}}]}}},\n', name, i))
  emit(string.format('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","uid":"pod-%d"},'
    .. '"spec":{"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.9","resources":'
    .. '{"requests":{"cpu":"100m","memory":"500Mi"}}}],"resourceClaims":[{"name":"gpu","resourceClaimName":"%s-gpu"}]}}%s\n',
    name, i, name, i == pods and "" or ","))
end
emit("]}\n")
io.write(table.concat(out))
