-- luasched.testing: the plugin author's kit. Builds pods and nodes from Lua
-- tables or YAML/JSON text through libluasched's own decoder, puts them in a
-- real scheduler cache and snapshot (so NodeInfos carry the requested sums the
-- scheduler would see), loads a plugin the way a profile does (sandboxed,
-- args checked and merged over its defaults, validate and init run), and runs
-- one hook, a whole scheduling cycle or a queue of pods through the
-- framework itself (testing_framework.lua: dispatch.lua's runners and C's
-- cycle rules; no rule is written again here). docs/plugins/testing.md.
--
--   local T = require("luasched.testing")
--   local cluster = T.cluster {
--     nodes = { { name = "n1", allocatable = { cpu = "2", memory = "4Gi" } } },
--     pods  = { { name = "running", nodeName = "n1", requests = { cpu = "1" } } },
--   }
--   local fit = T.plugin("NodeResourcesFit", { ignoredResources = { "example.com/gpu" } })
--   local pod = T.pod { name = "p", requests = { cpu = "1500m" } }
--   local r = T.cycle(fit, cluster, pod)
--   -- r.filter.n1.code == ls.UNSCHEDULABLE, r.filter.n1.message == "Insufficient cpu"
--   cluster:close()
--
-- Objects: a table with `metadata`, `spec`, `kind` or `apiVersion` is a full
-- Kubernetes object and is encoded to JSON as is; any other table is the
-- shorthand documented at T.pod_object / T.node_object; a string is YAML or
-- JSON text. C objects are freed by cluster:close() (or when collected).
-- Other API objects (Services, ReplicaSets, ...; full objects or JSON text)
-- go in spec.objects / cluster:add_object and reach plugins through
-- ls.objects / ls.find_object.
local ffi = require("ffi")
local C = require("luasched.clib")
local ls = require("luasched")
local loader = require("luasched.loader")
local events = require("luasched.events")
local json = require("luasched.json")
local bit = require("bit")
local assembly = require("luasched.profiles")

local T = {}

-- The kit reads whole pods and nodes too (ls.pod_data / ls.node_data work
-- whichever plugin is loaded, and before it is).
C.ls_model_want(bit.bor(C.LS_WANT_POD_JSON, C.LS_WANT_NODE_JSON))

-- ---- JSON -------------------------------------------------------------------

--- Marks a table as a JSON array (needed only for empty arrays).
T.array_mt = json.array_mt
T.array = json.array
--- JSON null.
T.null = json.null

--- Lua value -> JSON text (object keys sorted, so the text is deterministic);
--- strict: a table with keys other than 1..n is an object, whose keys must be
--- strings, and errors name the value's path.
function T.json(v)
  return json.encode(v, "T.json")
end

-- ---- objects ------------------------------------------------------------------

local function is_full_object(t)
  return t.metadata ~= nil or t.spec ~= nil or t.kind ~= nil or t.apiVersion ~= nil
end

-- The shorthand's fields: the cluster files' names (a pod's nodeName, ...)
-- or the snake_case ones, each once; anything else is an error naming the
-- closest (C's ls_did_you_mean, the one rule of every misspelling message).
local POD_FIELDS = {
  nodeName = "node_name", nodeSelector = "node_selector", priorityClassName = "priority_class_name",
  preemptionPolicy = "preemption_policy", schedulerName = "scheduler_name",
  schedulingGates = "scheduling_gates", initContainers = "init_containers", ownerReferences = "owner_references",
  nominatedNodeName = "nominated_node_name", qosClass = "qos_class", creationTimestamp = "created",
  name = true, namespace = true, uid = true, labels = true, requests = true, containers = true, limits = true,
  ports = true, overhead = true, resources = true, priority = true, tolerations = true, affinity = true,
  annotations = true, phase = true, conditions = true, spec = true, status = true, seq = true,
}
local NODE_FIELDS = {
  name = true, uid = true, labels = true, allocatable = true, capacity = true, taints = true,
  unschedulable = true, images = true, annotations = true, conditions = true, status = true,
}
local CONTAINER_FIELDS = { name = true, image = true, requests = true, limits = true, ports = true,
  restart_policy = true, restartPolicy = "restart_policy" }

-- each snake_case name is a field too
for _, fields in ipairs({ POD_FIELDS, CONTAINER_FIELDS }) do
  local snake = {}
  for _, f in pairs(fields) do if type(f) == "string" then snake[#snake + 1] = f end end
  for _, f in ipairs(snake) do fields[f] = true end
end

local function sorted_keys(fields)
  local out = {}
  for k in pairs(fields) do out[#out + 1] = k end
  table.sort(out, function(a, b)   -- the cluster files' names first
    local ca, cb = type(fields[a]) == "string", type(fields[b]) == "string"
    if ca ~= cb then return ca end
    return a < b
  end)
  return out
end

--- The closest of `names` to `word` ("did you mean"), or nil.
function T.did_you_mean(word, names)
  return require("luasched.suggest").did_you_mean(tostring(word), names)
end

-- desc with its cluster-file names turned into the shorthand's; an unknown
-- field raises "T.<what>: unknown field ..." with the closest known one.
local function shorthand(what, desc, fields)
  local out = {}
  for k, v in pairs(desc) do
    local f = fields[k]
    if f == nil then
      local names = sorted_keys(fields)
      local hint = type(k) == "string" and T.did_you_mean(k, names)
      error(string.format("T.%s: unknown field %q%s (fields: %s)", what, tostring(k),
        hint and string.format(' (did you mean "%s"?)', hint) or "", table.concat(names, ", ")), 0)
    end
    local key = f == true and k or f
    if out[key] ~= nil then error(string.format("T.%s: field %s given twice (as %s)", what, key, k), 0) end
    out[key] = v
  end
  return out
end

local counter = 0


-- A container entry is a requests table, `false` (no requests), or a table
-- with any of name, image, requests, limits, ports (v1 ContainerPorts),
-- restart_policy ("Always": an init container that is a sidecar).
local function is_container_desc(d)
  if type(d) ~= "table" then return false end
  for k in pairs(d) do
    if CONTAINER_FIELDS[k] then return true end
  end
  return false
end

local function container(i, desc, prefix)
  local c = { name = prefix .. (i - 1), image = "registry.k8s.io/pause:3.9" }
  if not is_container_desc(desc) then
    if desc then c.resources = { requests = desc } end
    return c
  end
  desc = shorthand("pod: container", desc, CONTAINER_FIELDS)
  c.name, c.image = desc.name or c.name, desc.image or c.image
  if desc.requests or desc.limits then c.resources = { requests = desc.requests, limits = desc.limits } end
  c.ports, c.restartPolicy = desc.ports, desc.restart_policy
  return c
end

local function conditions_of(list, with_reason)
  if not list then return nil end
  local out = {}
  for i, c in ipairs(list) do
    out[i] = { type = c.type, status = c.status or "True", reason = with_reason and c.reason or nil }
  end
  return out
end

--- Shorthand -> a v1 Pod as a Lua table. Each field may be written as in a
--- cluster file (nodeName, nodeSelector, priorityClassName, preemptionPolicy,
--- schedulerName, schedulingGates, initContainers, ownerReferences,
--- nominatedNodeName, qosClass, creationTimestamp) or in snake_case
--- (node_name, ...); another field is an error that names the closest.
--- Fields: name, namespace ("default"),
--- uid (generated), labels, requests (one container's requests, e.g.
--- { cpu = "500m", memory = "1Gi" }; omit for a container without requests),
--- containers / init_containers (lists, one entry per container: a requests
--- table, `false` for a container without requests, or a table with any of
--- name, image, requests, limits, ports, restart_policy), limits and ports (the
--- single container's), overhead, resources (pod-level { requests, limits }),
--- node_name, priority, priority_class_name, preemption_policy, tolerations,
--- node_selector, affinity, scheduler_name, created (RFC 3339
--- creationTimestamp), scheduling_gates, annotations, owner_references (v1
--- OwnerReferences), phase, nominated_node_name, conditions (list of { type,
--- status ("True" when omitted), reason }), qos_class (status.qosClass),
--- spec and status (extra spec / status fields, merged last).
function T.pod_object(o)
  o = shorthand("pod", o, POD_FIELDS)
  counter = counter + 1
  local name = o.name or ("pod-" .. counter)
  local ns = o.namespace or "default"
  local spec = {}
  local containers = {}
  if o.containers then
    for i, req in ipairs(o.containers) do containers[i] = container(i, req or nil, "c") end
  else
    local one = (o.limits or o.ports) and { requests = o.requests, limits = o.limits, ports = o.ports } or o.requests
    containers[1] = container(1, one, "c")
  end
  spec.containers = containers
  if o.init_containers then
    spec.initContainers = {}
    for i, req in ipairs(o.init_containers) do spec.initContainers[i] = container(i, req or nil, "init") end
  end
  spec.overhead = o.overhead
  spec.resources = o.resources
  spec.preemptionPolicy = o.preemption_policy
  spec.nodeName = o.node_name
  spec.priority = o.priority
  spec.priorityClassName = o.priority_class_name
  spec.tolerations = o.tolerations
  spec.nodeSelector = o.node_selector
  spec.affinity = o.affinity
  spec.schedulerName = o.scheduler_name
  if o.scheduling_gates then
    spec.schedulingGates = {}
    for i, g in ipairs(o.scheduling_gates) do spec.schedulingGates[i] = { name = g } end
  end
  for k, v in pairs(o.spec or {}) do spec[k] = v end
  local status = {
    phase = o.phase, nominatedNodeName = o.nominated_node_name, qosClass = o.qos_class,
    conditions = conditions_of(o.conditions, true),
  }
  for k, v in pairs(o.status or {}) do status[k] = v end
  return {
    apiVersion = "v1", kind = "Pod",
    metadata = {
      name = name, namespace = ns, uid = o.uid or string.format("uid-%s-%s-%d", ns, name, counter),
      labels = o.labels, annotations = o.annotations, creationTimestamp = o.created,
      ownerReferences = o.owner_references,
    },
    spec = spec,
    status = next(status) and status or nil,
  }
end

--- Shorthand -> a v1 Node as a Lua table. Fields: name, uid (generated),
--- labels, allocatable (quantities; "pods" defaults to "110"), capacity
--- (defaults to allocatable), taints (v1 taints), unschedulable, images,
--- annotations, conditions (list of { type, status ("True" when omitted) }),
--- status (extra status fields, merged last).
function T.node_object(o)
  o = shorthand("node", o, NODE_FIELDS)
  counter = counter + 1
  local name = o.name or ("node-" .. counter)
  local allocatable = {}
  for k, v in pairs(o.allocatable or {}) do allocatable[k] = v end
  if allocatable.pods == nil then allocatable.pods = "110" end
  local status = {
    allocatable = allocatable, capacity = o.capacity or allocatable, images = o.images,
    conditions = conditions_of(o.conditions, false),
  }
  for k, v in pairs(o.status or {}) do status[k] = v end
  return {
    apiVersion = "v1", kind = "Node",
    metadata = {
      name = name, uid = o.uid or string.format("uid-node-%s-%d", name, counter), labels = o.labels,
      annotations = o.annotations,
    },
    spec = { taints = o.taints, unschedulable = o.unschedulable or nil },
    status = status,
  }
end

local function text_of(kind, desc)
  if type(desc) == "string" then return desc, "<" .. kind .. " text>" end
  if type(desc) ~= "table" then
    error(string.format("T.%s: expected a table or YAML/JSON text, got %s", kind, type(desc)), 3)
  end
  local obj = desc
  if not is_full_object(desc) then
    obj = kind == "pod" and T.pod_object(desc) or T.node_object(desc)
  end
  local name = obj.metadata and obj.metadata.name or "?"
  return T.json(obj), string.format("<%s %s>", kind, name)
end

local err_buf = ffi.new("ls_error")

-- Decodes without a finalizer; the caller owns the object. Errors point at
-- the caller's caller (or `level`).
local function parse_raw(kind, desc, seq, level)
  local text, source = text_of(kind, desc)
  local obj
  if kind == "pod" then
    obj = C.ls_pod_parse(text, #text, source, err_buf)
  else
    obj = C.ls_node_parse(text, #text, source, err_buf)
  end
  if obj == nil then
    error(string.format("T.%s: %s", kind, ffi.string(err_buf.msg)), level or 3)
  end
  if kind == "pod" and seq then ffi.cast("ls_pod *", obj).seq = seq end
  return obj
end

local function seq_of(desc)
  return type(desc) == "table" and not is_full_object(desc) and desc.seq or nil
end

--- A pod (`const ls_pod *`, released when collected). `desc.seq` (shorthand)
--- sets the arrival sequence number.
function T.pod(desc)
  return ffi.gc(parse_raw("pod", desc, seq_of(desc)), C.ls_pod_release)
end

--- A node (`const ls_node *`, released when collected).
function T.node(desc)
  return ffi.gc(parse_raw("node", desc), C.ls_node_release)
end

-- ---- cluster: cache + snapshot + cycle -------------------------------------------

local Cluster = {}
Cluster.__index = Cluster

local function is_cdata(v) return type(v) == "cdata" end

local function release_all(res)
  if res.closed then return end
  res.closed = true
  if res.snapshot ~= nil then C.ls_snapshot_free(res.snapshot) end
  if res.cache ~= nil then C.ls_cache_free(res.cache) end
  if res.store ~= nil then C.ls_object_store_free(res.store) end
  for i = #res.owned_pods, 1, -1 do C.ls_pod_release(res.owned_pods[i]) end
  for i = #res.owned_nodes, 1, -1 do C.ls_node_release(res.owned_nodes[i]) end
  for i = #res.owned_objects, 1, -1 do C.ls_object_release(res.owned_objects[i]) end
end

-- The documents of a cluster file (YAML or JSON text), each as JSON text.
local function cluster_documents(text, source)
  local lines = C.ls_documents_json(text, #text, source, err_buf)
  if lines == nil then error("T.cluster: " .. ffi.string(err_buf.msg), 3) end
  local out = {}
  for line in ffi.string(lines):gmatch("[^\n]+") do out[#out + 1] = line end
  C.ls_text_free(lines)
  return out
end

local function read_file(path)
  local f, err = io.open(path, "r")
  if not f then error("T.cluster: " .. tostring(err), 3) end
  local text = f:read("*a")
  f:close()
  return text
end

-- A cluster file's documents into the cluster: nodes, pods with a nodeName
-- (running), pods without one (c.pending, in file order), other objects.
local function load_documents(c, text, source)
  for i, doc in ipairs(cluster_documents(text, source)) do
    local kind = json.decode(doc, true).kind
    local ok, err = pcall(function()
      if kind == "Node" then
        c:add_node(doc, true)
      elseif kind == "Pod" then
        local pod = T.pod(doc)
        if pod.node_name ~= 0 then c:add_pod(pod, true) else c.pending[#c.pending + 1] = pod end
      else
        c:add_object(doc)
      end
    end)
    if not ok then error(string.format("T.cluster: %s: document %d (%s): %s", source, i, tostring(kind), err), 3) end
  end
end

--- A cluster: spec.nodes (node descriptions or T.node objects), spec.pods
--- (pods already on nodes: each needs spec.nodeName / node_name) and
--- spec.objects (Services, ReplicaSets, ...: see Cluster:add_object); or a
--- cluster file, spec.file (a path) or spec.yaml (its text): its nodes, its
--- pods with a nodeName, its other objects, and its pods without a nodeName
--- in `cluster.pending` (T.pod objects, file order). Its snapshot is up to
--- date on return.
function T.cluster(spec)
  spec = spec or {}
  -- Everything C owns lives in `res`; the anchor's finalizer frees it in order
  -- (snapshot, cache, then the pods and nodes they point to).
  local res = { owned_pods = {}, owned_nodes = {}, owned_objects = {}, refs = {} }
  res.cache = C.ls_cache_new()
  res.snapshot = C.ls_snapshot_new()
  local anchor = ffi.gc(ffi.new("char[1]"), function() release_all(res) end)
  local c = setmetatable({ res = res, anchor = anchor, node_infos = {}, names = {}, pending = {} }, Cluster)
  if spec.file then load_documents(c, read_file(spec.file), spec.file) end
  if spec.yaml then load_documents(c, spec.yaml, "<cluster yaml>") end
  for _, n in ipairs(spec.nodes or {}) do c:add_node(n, true) end
  for _, p in ipairs(spec.pods or {}) do c:add_pod(p, true) end
  for _, o in ipairs(spec.objects or {}) do c:add_object(o) end
  c:refresh()
  return c
end

--- Adds an API object other than a Pod or Node (a full object table with
--- kind and metadata, or JSON text), decoded by the library as the embedded
--- cluster decodes it (a custom resource's kind becomes plural.version.group,
--- e.g. podgroups.v1alpha1.scheduling.x-k8s.io); the same kind, namespace and
--- name again replaces it.
--- Returns the `const ls_object *`.
local custom_name = ffi.new("char[400]")

-- A custom resource's kind as the embedded cluster and the client name it
-- (plural.version.group), so plugins find it under the same name as in
-- simulate and run; other objects keep their kind.
local function with_custom_kind(text)
  local obj = json.decode(text)
  if type(obj) ~= "table" or type(obj.kind) ~= "string" or type(obj.apiVersion) ~= "string"
      or not C.ls_custom_resource_name(obj.kind, obj.apiVersion, custom_name, 400) then
    return text
  end
  obj.kind = ffi.string(custom_name)
  return json.encode(obj)
end

function Cluster:add_object(desc)
  local res = self.res
  local text = type(desc) == "table" and T.json(desc) or desc
  if type(text) ~= "string" then
    error("cluster:add_object: expected an object table or JSON text, got " .. type(desc), 2)
  end
  local ok_json, custom = pcall(with_custom_kind, text)
  if ok_json then text = custom end
  local obj = C.ls_object_parse(text, #text, nil, err_buf)
  if obj == nil then error("cluster:add_object: " .. ffi.string(err_buf.msg), 2) end
  res.owned_objects[#res.owned_objects + 1] = obj
  if res.store == nil then res.store = C.ls_object_store_new() end
  C.ls_object_store_put(res.store, obj)
  return obj
end

-- The C object of desc: a T.pod / T.node object is kept alive by the cluster;
-- a description is decoded, and owned (freed by close) through `owned`.
local function take(res, kind, desc, owned)
  if is_cdata(desc) then
    res.refs[#res.refs + 1] = desc
    return desc
  end
  local obj = parse_raw(kind, desc, kind == "pod" and seq_of(desc) or nil, 4)
  owned[#owned + 1] = obj
  return obj
end

--- Adds a node (description or T.node object) and refreshes the snapshot.
function Cluster:add_node(desc, no_refresh)
  local res = self.res
  local node = take(res, "node", desc, res.owned_nodes)
  C.ls_cache_add_node(res.cache, node)
  if not no_refresh then self:refresh() end
  return node
end

--- Adds a pod that is on a node (description or T.pod object) and refreshes
--- the snapshot.
function Cluster:add_pod(desc, no_refresh)
  local res = self.res
  local pod = take(res, "pod", desc, res.owned_pods)
  if pod.node_name == 0 then
    error("cluster:add_pod: pod " .. ls.str(pod.name) .. " has no nodeName: the cluster's pods run on a node "
      .. "(nodeName = \"n1\"); a pod to schedule is a T.pod given to T.cycle or T.schedule", 2)
  end
  if not C.ls_cache_add_pod(res.cache, pod, err_buf) then
    error("cluster:add_pod: " .. ffi.string(err_buf.msg), 2)
  end
  if not no_refresh then self:refresh() end
  return pod
end

--- Brings the snapshot up to date with the cache.
function Cluster:refresh()
  local res = self.res
  C.ls_cache_update_snapshot(res.cache, res.snapshot)
  self.num_nodes = C.ls_snapshot_num_nodes(res.snapshot)
  self.list = C.ls_snapshot_list(res.snapshot)
  self.node_infos, self.names = {}, {}
  for i = 0, self.num_nodes - 1 do
    local ni = self.list[i]
    self.node_infos[i + 1] = ni
    self.names[i + 1] = ls.str(ni.node.name)
  end
end

--- The snapshot's NodeInfo of a node (`const ls_node_info *`), or an error.
function Cluster:node_info(name)
  local ni = C.ls_snapshot_find(self.res.snapshot, ls.intern(name))
  if ni == nil then error("cluster: no node " .. tostring(name) .. " in the snapshot", 2) end
  return ni
end

--- Makes this cluster the running cycle's (ls.all_nodes, ls.image_state,
--- ls.bind) with `pod` as the cycle's pod. Returns the ls_cycle.
function Cluster:attach(pod)
  local cycle = ffi.new("ls_cycle")
  cycle.pod = pod
  cycle.snapshot = self.res.snapshot
  cycle.all_nodes = self.list
  cycle.num_all_nodes = self.num_nodes
  cycle.objects = self.res.store
  cycle.selected_node = 0
  self.cycle, self.cycle_pod = cycle, pod   -- keep them alive while attached
  ls._attach(cycle)
  return cycle
end

--- Frees the cache, the snapshot and the objects the cluster decoded.
function Cluster:close()
  if self.cycle then ls._attach(nil) end
  self.cycle, self.cycle_pod = nil, nil
  release_all(self.res)
  ffi.gc(self.anchor, nil)
end

-- ---- plugins ----------------------------------------------------------------------

local function source_dir()
  local env = os.getenv("LUASCHED_SOURCE_DIR")
  if env and env ~= "" then return env end
  local src = debug.getinfo(1, "S").source
  return src:match("^@(.*)/lua/luasched/testing%.lua$") or "."
end

-- The folder of the spec file running now (the first caller outside the kit), or nil.
local function spec_dir()
  for level = 3, 12 do
    local info = debug.getinfo(level, "S")
    if not info then return nil end
    local file = info.source:match("^@(.*)$")
    if file and not file:match("luasched/testing%.lua$") then
      return file:match("^(.*)/[^/]+$") or "."
    end
  end
  return nil
end

--- The plugin path the kit loads from. Default: the current folder (where
--- `luasched test` runs, beside the plugin `luasched new plugin` wrote), then
--- the built-in plugins/ and plugins/policies/; T.plugin also looks in the
--- spec's own folder and its parent when a name is not found there.
function T.set_plugin_path(dirs)
  local builtins = { source_dir() .. "/plugins", source_dir() .. "/plugins/policies" }
  loader.set_path(dirs or { ".", builtins[1], builtins[2] }, builtins)
end
if #loader.path() == 0 then T.set_plugin_path() end

-- loader.load, then the spec's folder and its parent (a spec in spec/ beside the plugin).
local function load_plugin(name)
  local P, err = loader.load(name)
  if P then return P end
  local dir = spec_dir()
  if not dir then return nil, err end
  local saved = loader.path()
  local extended = { dir, dir .. "/.." }
  for _, d in ipairs(saved) do extended[#extended + 1] = d end
  loader.set_path(extended)
  local ok, P2 = pcall(loader.load, name)
  loader.set_path(saved)
  if ok and P2 then return P2 end
  return nil, err
end

--- Forgets loaded plugin files, so the next T.plugin reads them again.
function T.reload() loader.reset() end

--- A plugin instance as a profile builds it (lua/luasched/profiles.lua):
--- `name` is the registered name (loaded from the plugin path, sandboxed) or
--- a plugin table from ls.plugin; `args` are checked against its declared
--- defaults and merged over them, then validate(args) and init(args) run.
--- An error raises the plugin's own message (the runtime prefixes it with
--- "initializing plugin ..." or "args of plugin ... are not valid").
function T.plugin(name, args)
  local P = name
  if type(name) == "string" then
    local err
    P, err = load_plugin(name)
    if not P then error(err, 2) end
  end
  local inst, _, why = assembly.instantiate(P, P.name, args, "test")
  if not inst then error(why, 2) end
  return inst
end

-- ---- running the framework (testing_framework.lua) ---------------------------------

require("luasched.testing_framework")(T)

-- ---- events tables and queueing hints ---------------------------------------------

--- A plugin's events table as the runtime checks it: a list of
--- "Resource:Action1|Action2" strings in table order (actions as written), or
--- an error naming the bad entry.
function T.events(inst)
  local regs, err = events.check(getmetatable(inst) or inst)
  if not regs then error(err, 2) end
  local out = {}
  for i, r in ipairs(regs) do out[i] = r.resource .. ":" .. table.concat(r.actions, "|") end
  return out
end

return T
