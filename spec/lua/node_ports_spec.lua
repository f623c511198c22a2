-- NodePorts (upstream nodeports/node_ports.go, framework/types.go
-- HostPortInfo.CheckConflict): PreFilter Skip without host ports; Filter:
-- a wanted 0.0.0.0 port conflicts with the same (protocol, port) on any IP,
-- another IP with the same (protocol, port) on that IP or on 0.0.0.0; the host
-- IP defaults to 0.0.0.0 and the protocol to TCP.
local T = require("luasched.testing")
local ls = require("luasched")

local MSG = "node(s) didn't have free ports for the requested pod ports"

local function port(host_port, protocol, host_ip)
  return { containerPort = 80, hostPort = host_port, protocol = protocol, hostIP = host_ip }
end

-- A pod object whose one container has these ports; extra spec fields merged
-- in (T.pod_object: a shorthand with `spec` would be taken as a full object).
local function ports_pod(name, ports, extra, node_name)
  local spec = { containers = { { name = "c", image = "app:1", ports = ports } } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return T.pod_object { name = name, spec = spec, node_name = node_name }
end

describe("NodePorts", function()
  local cluster, plugin
  setup(function()
    local running = ports_pod("running", {
      port(8080),                          -- TCP on 0.0.0.0 (both defaulted)
      port(53, "UDP", "10.0.0.1"),
      port(9000, "TCP", "10.0.0.2"),
    }, nil, "busy")
    cluster = T.cluster {
      nodes = { { name = "free" }, { name = "busy" } },
      pods = { running },
    }
    plugin = T.plugin("NodePorts")
  end)
  teardown(function() cluster:close() end)

  -- Filter of a pod wanting `ports` on node `node`, after its PreFilter.
  local function filter(node, ports, extra)
    local pod = T.pod(ports_pod("p", ports, extra))
    local state = {}
    local pre = T.pre_filter(plugin, cluster, pod, state)
    assert.are.equal(ls.SUCCESS, pre.code)
    return T.filter(plugin, cluster, pod, node, state)
  end

  local function conflict(r)
    assert.are.equal(ls.UNSCHEDULABLE, r.code)
    assert.are.equal(MSG, r.message)
  end

  describe("pre_filter", function()
    it("skips a pod without host ports", function()
      assert.are.equal(ls.SKIP, T.pre_filter(plugin, cluster, T.pod { name = "p" }).code)
      -- a containerPort alone (hostPort 0) is no host port
      assert.are.equal(ls.SKIP, T.pre_filter(plugin, cluster, T.pod(ports_pod("p", { port(0) }))).code)
    end)

    it("runs Filter for a pod with a host port", function()
      assert.are.equal(ls.SUCCESS, T.pre_filter(plugin, cluster, T.pod(ports_pod("p", { port(8080) }))).code)
    end)

    it("counts sidecar ports, not those of ordinary init containers", function()
      local sidecar = { initContainers = { { name = "s", image = "proxy:1", restartPolicy = "Always",
                                             ports = { port(15001) } } } }
      local pod = T.pod(ports_pod("p", nil, sidecar))
      assert.are.equal(ls.SUCCESS, T.pre_filter(plugin, cluster, pod).code)
      local init = { initContainers = { { name = "i", image = "setup:1", ports = { port(15001) } } } }
      assert.are.equal(ls.SKIP, T.pre_filter(plugin, cluster, T.pod(ports_pod("p", nil, init))).code)
    end)
  end)

  describe("filter", function()
    it("passes a node with no used ports", function()
      assert.are.equal(ls.SUCCESS, filter("free", { port(8080), port(53, "UDP", "10.0.0.1") }).code)
    end)

    it("wanted 0.0.0.0: conflicts with the same protocol and port on any IP", function()
      conflict(filter("busy", { port(8080) }))                    -- used on 0.0.0.0
      conflict(filter("busy", { port(53, "UDP") }))               -- used on 10.0.0.1
      conflict(filter("busy", { port(9000, "TCP", "0.0.0.0") }))  -- used on 10.0.0.2
    end)

    it("wanted 0.0.0.0: no conflict with another protocol or port", function()
      assert.are.equal(ls.SUCCESS, filter("busy", { port(8080, "UDP") }).code)
      assert.are.equal(ls.SUCCESS, filter("busy", { port(8080, "SCTP") }).code)
      assert.are.equal(ls.SUCCESS, filter("busy", { port(53) }).code)       -- TCP vs UDP
      assert.are.equal(ls.SUCCESS, filter("busy", { port(8081) }).code)
    end)

    it("wanted IP: conflicts with the same IP or 0.0.0.0", function()
      conflict(filter("busy", { port(53, "UDP", "10.0.0.1") }))    -- same IP
      conflict(filter("busy", { port(8080, "TCP", "10.0.0.5") }))  -- used on 0.0.0.0
    end)

    it("wanted IP: no conflict with another IP, protocol or port", function()
      assert.are.equal(ls.SUCCESS, filter("busy", { port(53, "UDP", "10.0.0.9") }).code)
      assert.are.equal(ls.SUCCESS, filter("busy", { port(53, "TCP", "10.0.0.1") }).code)
      assert.are.equal(ls.SUCCESS, filter("busy", { port(9000, "TCP", "10.0.0.3") }).code)
      assert.are.equal(ls.SUCCESS, filter("busy", { port(9001, "TCP", "10.0.0.2") }).code)
    end)

    it("treats an empty hostIP as 0.0.0.0", function()
      conflict(filter("busy", { port(53, "UDP", "") }))
      assert.are.equal(ls.SUCCESS, filter("busy", { port(8081, "TCP", "") }).code)
    end)

    it("fails when any one wanted port conflicts", function()
      conflict(filter("busy", { port(7000), port(7001, "UDP"), port(9000, "TCP", "10.0.0.2") }))
    end)

    it("checks sidecar ports too", function()
      local sidecar = { initContainers = { { name = "s", image = "proxy:1", restartPolicy = "Always",
                                             ports = { port(8080) } } } }
      conflict(filter("busy", { port(7000) }, sidecar))
    end)

    it("checks every wanted and every used port, past the fourth", function()
      local running = {}
      for j = 1, 6 do running[j] = port(7000 + j) end   -- 7001..7006 TCP on 0.0.0.0
      local c = T.cluster { nodes = { { name = "many" } }, pods = { ports_pod("six", running, nil, "many") } }
      local function want(ports)
        return T.filter(plugin, c, T.pod(ports_pod("p", ports)), "many")
      end
      -- the sixth wanted port hits the sixth used one
      conflict(want { port(8001), port(8002), port(8003), port(8004), port(8005), port(7006) })
      -- the first wanted port hits the fifth used one
      conflict(want { port(7005) })
      assert.are.equal(ls.SUCCESS, want({ port(8001), port(8002), port(8003), port(8004), port(8005),
                                          port(7006, "UDP") }).code)
      c:close()
    end)

    it("passes a pod without host ports when PreFilter did not run", function()
      assert.are.equal(ls.SUCCESS, T.filter(plugin, cluster, T.pod { name = "p" }, "busy").code)
    end)

    it("runs a whole cycle with one status object", function()
      local r = T.cycle(plugin, cluster, T.pod(ports_pod("p", { port(8080) })))
      assert.are.same({ "free" }, r.feasible)
      conflict(r.filter.busy)
      assert.are.equal(plugin.status, r.filter.busy.status)
    end)

    it("sees ports of pods added to a node later", function()
      local c = T.cluster { nodes = { { name = "n" } } }
      local want = T.pod(ports_pod("p", { port(443, "TCP", "192.168.1.1") }))
      assert.are.equal(ls.SUCCESS, T.filter(plugin, c, want, "n").code)
      c:add_pod(ports_pod("other", { port(443) }, nil, "n"))
      conflict(T.filter(plugin, c, want, "n"))
      c:close()
    end)
  end)
  describe("end to end (luasched simulate, built-in default profile)", function()
    local sim = require("sim_helper")

    local function simulate(yaml)
      local path = sim.write(os.tmpname(), yaml)
      local out = sim.run({ "simulate", path }, { merge = true }).out
      os.remove(path)
      return out
    end

    local NODE = [[
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
]]

    it("keeps a second pod wanting the same host port off the node", function()
      local pod = [[
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, creationTimestamp: "%s"}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080%s}]}]}
---
]]
      local out = simulate(NODE .. pod:format("first", "2024-01-01T00:00:00Z", "")
        .. pod:format("second", "2024-01-01T00:00:01Z", "")
        .. pod:format("udp", "2024-01-01T00:00:02Z", ", protocol: UDP"))
      assert.matches("default/first: bound to n1\n", out, 1, true)
      assert.matches("default/second: pending: 0/1 nodes are available: 1 node(s) didn't have free ports "
        .. "for the requested pod ports. " ..
          "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found "
        .. "for incoming pod.\n", out, 1, true)   -- first has the same priority: no victim
      assert.matches("default/udp: bound to n1\n", out, 1, true)
    end)
  end)
end)
