-- NodePorts: a pod asking for host ports fits only nodes where no pod already
-- holds a conflicting (host IP, protocol, port).
--
-- Mirrors upstream pkg/scheduler/framework/plugins/nodeports/node_ports.go and
-- framework/types.go HostPortInfo.CheckConflict (v1.30-v1.34):
-- * PreFilter: Skip when the pod wants no host port (containers' and sidecars'
--   ports with hostPort > 0, util.GetHostPorts).
-- * Filter: for each wanted port, with the host IP defaulting to 0.0.0.0 and
--   the protocol to TCP: a wanted 0.0.0.0 conflicts with the same (protocol,
--   port) on any IP of the node; another IP conflicts with the same (protocol,
--   port) on that IP or on 0.0.0.0. A conflict -> Unschedulable
--   "node(s) didn't have free ports for the requested pod ports".
--
-- Deviations:
-- * The wanted ports are read from the pod (pod.host_ports, collected by the
--   C decoder, which also sanitizes: an unset or empty hostIP is 0.0.0.0, an
--   unset protocol TCP) rather than from CycleState, so Filter also
--   works when PreFilter did not run (upstream returns an Error then).
-- Events (upstream v1.37 plugin guide; hint as in the v1.32-v1.34 code):
-- AssignedPod Delete, queued when the deleted pod was bound or nominated and
-- held a host port that conflicts with one the pod wants; Node Add (no hint).
local ls = require("luasched")
local signers = require("luasched.signers")

local P = ls.plugin("NodePorts")

local ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
local ANY_IP = ls.intern("0.0.0.0")   -- DefaultBindAllHostIP

function P:init()
  self.status = ls.unschedulable(ERR_REASON)
end

function P:pre_filter(_, pod)
  if pod.n_host_ports == 0 then return ls.skip end
  return nil
end

-- Whether used port u conflicts with the wanted (ip, proto, port): the same
-- protocol and port, and a wanted 0.0.0.0, or the same IP, or a used 0.0.0.0.
local function conflicts_with(u, ip, proto, port)
  if u.port ~= port or u.protocol ~= proto then return false end
  if ip == ANY_IP then return true end
  local uip = u.host_ip
  return uip == ip or uip == ANY_IP
end

-- HostPortInfo.CheckConflict over the node's n_used >= 1 used ports (its
-- `port <= 0` case cannot arise: the decoder collects only hostPort > 0).
-- Here and in Filter the first four items are written out rather than looped
-- over: a short inner loop that runs two or more times per node tends to
-- become LuaJIT's root trace, and the node loop then runs as side traces that
-- box the node pointers (an allocation per node).
local function conflicts(want, used, n_used)
  local ip, proto, port = want.host_ip, want.protocol, want.port
  if conflicts_with(used[0], ip, proto, port)
    or (n_used >= 2 and conflicts_with(used[1], ip, proto, port))
    or (n_used >= 3 and conflicts_with(used[2], ip, proto, port))
    or (n_used >= 4 and conflicts_with(used[3], ip, proto, port)) then
    return true
  end
  for j = 4, n_used - 1 do
    if conflicts_with(used[j], ip, proto, port) then return true end
  end
  return false
end

function P:filter(_, pod, ni)
  local n_used, n = ni.n_used_ports, pod.n_host_ports
  if n_used == 0 or n == 0 then return nil end
  local used, wanted = ni.used_ports, pod.host_ports
  if conflicts(wanted[0], used, n_used)
    or (n >= 2 and conflicts(wanted[1], used, n_used))
    or (n >= 3 and conflicts(wanted[2], used, n_used))
    or (n >= 4 and conflicts(wanted[3], used, n_used)) then
    return self.status
  end
  for i = 4, n - 1 do
    if conflicts(wanted[i], used, n_used) then return self.status end
  end
  return nil
end


-- ---- events and queueing hints ------------------------------------------------

local EMPTY = ls.intern("")

local function after_pod_deleted(pod, old, _)
  local bound = old.node_name ~= 0 and old.node_name ~= EMPTY
  local nominated = old.nominated_node_name ~= 0 and old.nominated_node_name ~= EMPTY
  if not bound and not nominated then return ls.QUEUE_SKIP end
  local n_used = old.n_host_ports
  if n_used == 0 then return ls.QUEUE_SKIP end
  local used, wanted = old.host_ports, pod.host_ports
  for i = 0, pod.n_host_ports - 1 do
    if conflicts(wanted[i], used, n_used) then return ls.QUEUE end
  end
  return ls.QUEUE_SKIP
end

P.events = {
  { resource = "AssignedPod", action = "Delete", hint = after_pod_deleted },
  { resource = "Node", action = "Add" },
}

-- ---- signature (OpportunisticBatching) ----------------------------------------

-- NodePorts: the host ports (HostPortsSignerName).
function P:sign(pod) return signers.host_ports(pod) end

return P
