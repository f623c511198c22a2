-- luasched.testing: the plugin author's kit. Builds pods and nodes from Lua
-- tables or YAML/JSON text through libluasched's own decoder, puts them in a
-- real scheduler cache and snapshot (so NodeInfos carry the requested sums the
-- scheduler would see), loads a plugin the way the runtime does (sandboxed,
-- args merged over its defaults, init run), and runs one hook or a whole
-- scheduling cycle of that plugin.
--
--   local T = require("luasched.testing")
--   local cluster = T.cluster {
--     nodes = { { name = "n1", allocatable = { cpu = "2", memory = "4Gi" } } },
--     pods  = { { name = "running", node_name = "n1", requests = { cpu = "1" } } },
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
local dispatch = require("luasched.dispatch")
local assembly = require("luasched.profiles")
local points = require("luasched.points")
local table_clear = require("table.clear")

local SUCCESS = { code = ls.SUCCESS, code_name = "Success", message = "", reasons = {} }
local NODE_HOOKS = { reserve = true, unreserve = true, permit = true, pre_bind = true, bind = true, post_bind = true }

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
  local arr = ffi.new("const char *[?]", #names + 1, names)
  local hit = C.ls_did_you_mean(tostring(word), arr, #names)
  return hit ~= nil and ffi.string(hit) or nil
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

--- The plugin path the kit loads from (default: the repository's plugins/
--- and plugins/policies/, the built-in path).
function T.set_plugin_path(dirs)
  loader.set_path(dirs or { source_dir() .. "/plugins", source_dir() .. "/plugins/policies" })
end
if #loader.path() == 0 then T.set_plugin_path() end

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
    P, err = loader.load(name)
    if not P then error(err, 2) end
  end
  local inst, _, why = assembly.instantiate(P, P.name, args, "test")
  if not inst then error(why, 2) end
  return inst
end

-- ---- running the framework ----------------------------------------------------------
--
-- Every hook runs through the runtime's own runners (lua/luasched/dispatch.lua)
-- on an ls_cycle the kit owns, and the rules C applies between them (which
-- nodes Filter examines, whether Score runs, weights and totals, the chosen
-- host, the FitError message) are libluasched's own (framework.h, through
-- the FFI): the kit writes none of them again.

local kit = { cycle = ffi.new("ls_cycle"), cap = 0, score_cap = 0, rng = ffi.new("uint64_t[1]") }
dispatch.attach(kit.cycle)
kit.cycle.running_plugin = -1

-- The cycle's arrays, for n nodes and `np` score plugins (zeroed: a skipped
-- plugin's row reads 0).
local function buffers(n, np)
  local c = kit.cycle
  n = math.max(n, 1)
  if n > kit.cap then
    kit.cap = n
    kit.candidates = ffi.new("const ls_node_info *[?]", n)
    kit.feasible = ffi.new("const ls_node_info *[?]", n)
    kit.node_status = ffi.new("ls_node_status[?]", n)
    kit.totals = ffi.new("int64_t[?]", n)
  end
  local need = n * math.max(np, 1)
  if need > kit.score_cap then
    kit.score_cap = need
    kit.scores = ffi.new("int64_t[?]", need)
    kit.raw = ffi.new("int64_t[?]", need)
  end
  kit.skipped = ffi.new("uint8_t[?]", np + 1)
  ffi.fill(kit.scores, need * 8)
  ffi.fill(kit.raw, need * 8)
  ffi.fill(kit.node_status, n * ffi.sizeof("ls_node_status"))
  c.feasible, c.node_status = kit.feasible, kit.node_status
  c.scores, c.raw_scores, c.score_skipped = kit.scores, kit.raw, kit.skipped
  c.keep_raw_scores = 1
  c.num_score_plugins = np
  c.trace, c.filter_trace, c.sample_plugins = 0, nil, 0
end

-- What each hook of a plugin returned in the running call: the kit shows the
-- plugin's own PreFilter, PreScore and node-hook statuses beside the
-- framework's verdicts.
local returned = {}

-- A stand-in for `inst` in the kit's profile: each hook calls the
-- instance's own (self is the instance) and notes what it returned.
local function recorder(inst)
  local r = setmetatable({}, { __index = inst })
  for _, hook in ipairs(points.hooks) do
    local fn = inst[hook]
    if type(fn) == "function" then
      local f = function(_, ...)
        local st, extra = fn(inst, ...)
        returned[hook] = { st, extra, (select(3, ...)) }   -- the third: Filter's node
        return st, extra
      end
      assembly.hook_source[f] = fn
      r[hook] = f
    end
  end
  assembly.stand_in(r, inst)
  return r
end

-- Builds the kit's one profile (see profiles.lua) with `insts` (a list),
-- each at every extension point it has a hook for. Returns the score
-- plugins' refs (name, weight) and their count.
local function use_profile(insts, weights)
  -- the same plugins (held, so never another object at their address) and
  -- weights as the last call: the profile is kept (its loops compiled once)
  local key = {}
  for name, w in pairs(weights or {}) do key[#key + 1] = name .. "=" .. tostring(w) end
  table.sort(key)
  key = table.concat(key, " ")
  local last = kit.insts
  local same = last ~= nil and #last == #insts and kit.weights_key == key
  for i = 1, #insts do same = same and last[i] == insts[i] end
  if same then return kit.refs, kit.np end
  local spec = { name = "test", points = {}, instances = {} }
  local score_refs = {}
  for _, inst in ipairs(insts) do
    local name = assembly.name_of[inst]
    spec.instances[name] = recorder(inst)
    for _, hook in ipairs(points.point_hooks) do
      if type(inst[hook]) == "function" then
        spec.points[hook] = spec.points[hook] or {}
        table.insert(spec.points[hook], name)
        if hook == "score" then
          score_refs[#score_refs + 1] = { name = ls.intern(name), weight = weights and weights[name] or 1 }
        end
      end
    end
  end
  local ok, err = dispatch.build({ spec })
  if not ok then error(err, 3) end
  for _, inst in ipairs(insts) do
    inst.handle = spec.instances[assembly.name_of[inst]].handle
  end
  local refs = ffi.new("ls_plugin_ref[?]", math.max(#score_refs, 1), score_refs)
  kit.insts, kit.weights_key, kit.refs, kit.np = { unpack(insts) }, key, refs, #score_refs
  return refs, #score_refs
end

local function insts_of(inst)
  if getmetatable(inst) == nil and inst[1] ~= nil then return inst end
  return { inst }
end

-- A registered status (an id C keeps) as a result table.
local function registered(code, id)
  if code == ls.SUCCESS and id == 0 then return SUCCESS end
  local reasons = {}
  if id ~= 0 then
    local info = C.ls_status_get(id)
    for i = 0, info.n_reasons - 1 do reasons[i + 1] = ffi.string(info.reasons[i]) end
  end
  -- the status object itself: statuses are made once per code and reasons
  local st = #reasons > 0 and ls.status(code, unpack(reasons)) or nil
  return { code = code, code_name = ls.code_names[code], message = ls.status_message(id), reasons = reasons,
           status = st }
end

-- The framework's status of the cycle's last point as a result table.
local function cycle_result()
  return registered(kit.cycle.status_code, kit.cycle.status)
end

-- A runner that ended in an Error status raises it as the framework words it
-- (naming the plugin, its file and line).
local function raise_error()
  if kit.cycle.status_code == ls.ERROR then error(ls.status_message(kit.cycle.status), 0) end
end

-- After the runner of `hook`: true when the cycle ended in an Error status
-- the plugin returned itself (r.status is then the framework's Error); a
-- plugin that raised, or returned what the point does not take, raises the
-- framework's message (naming the plugin, its file and line).
local function ended_in_error(r, hook)
  if kit.cycle.status_code ~= ls.ERROR then return false end
  local got = returned[hook]
  if got and ls.is_status(got[1]) and got[1].code == ls.ERROR then
    if hook == "filter" then r.filter[ls.str(got[3].node.name)] = T.result(got[1]) end
    r.status = cycle_result()
    r.message = r.status.message
    return true
  end
  raise_error()
end

local function plugin_result(hook)
  local got = returned[hook]
  if got == nil then return nil end
  return T.result(got[1]), got[2]
end

--- A hook's status as a plain table: code, code_name, message, reasons and the
--- status object itself (nil for Success).
function T.result(st)
  if st == nil then return SUCCESS end
  if not ls.is_status(st) then
    error("expected a status (ls.unschedulable(...), ...) or nil, got a " .. type(st), 2)
  end
  return { code = st.code, code_name = ls.code_names[st.code], message = st.message,
           reasons = st.reasons, status = st }
end

local function ni_of(cluster, node)
  if type(node) == "string" then return cluster:node_info(node) end
  return node
end

-- Points the kit's cycle at the cluster and pod, with its buffers.
local function begin(cluster, pod, np)
  cluster:attach(pod)
  local c = kit.cycle
  c.pod, c.snapshot, c.objects = pod, cluster.res.snapshot, cluster.res.store
  c.all_nodes, c.num_all_nodes, c.profile = cluster.list, cluster.num_nodes, 0
  c.selected_node, c.nominated_node = 0, 0
  buffers(cluster.num_nodes, np)
  table_clear(returned)
  return c
end

--- PreFilter (the runtime's runner, with `state` as the cycle's state):
--- the plugin's own result and node names (or nil). An Error status (the
--- plugin raised or returned something PreFilter may not) is raised.
function T.pre_filter(inst, cluster, pod, state)
  use_profile({ inst })
  begin(cluster, pod, 0)
  dispatch.pre_filter(0, state or {})
  -- an Error status the plugin returned is its result (as for T.filter)
  local got = returned.pre_filter
  if kit.cycle.status_code == ls.ERROR and not (got and ls.is_status(got[1])) then raise_error() end
  return plugin_result("pre_filter")
end

--- Filter of one node (a name or a NodeInfo) with the given (or an empty)
--- state, through the runtime's Filter of one node; runs no PreFilter (use
--- T.cycle, or T.pre_filter with the same state).
function T.filter(inst, cluster, pod, node, state)
  use_profile({ inst })
  begin(cluster, pod, 0)
  dispatch.begin_cycle(state or {})
  local ni = ni_of(cluster, node)
  dispatch.filter_one(0, ni)
  -- an Error status the plugin returned is its result; what it raised or
  -- returned that is no status raises the framework's Error
  local got = returned.filter
  if kit.cycle.status_code == ls.ERROR and got and ls.is_status(got[1]) then return T.result(got[1]) end
  raise_error()
  local st = kit.cycle.node_status[ni.index]
  return registered(st.code, st.code == ls.SUCCESS and 0 or st.status)
end

--- Score of one node (raw, before NormalizeScore), through the runtime's
--- Score runner over that one node.
function T.score(inst, cluster, pod, node, state)
  use_profile({ inst })
  local c = begin(cluster, pod, 1)
  dispatch.begin_cycle(state or {})
  c.feasible[0] = ni_of(cluster, node)
  c.num_feasible = 1
  dispatch.score(0)
  raise_error()
  return tonumber(c.raw_scores[0])
end

--- One of the hooks that take (state, pod, node_name): reserve, unreserve,
--- permit, pre_bind, bind, post_bind, through the runtime's runner for it.
--- Returns the plugin's own result; an Error status is raised. `cluster`
--- may be nil.
function T.node_hook(inst, hook, cluster, pod, node_name, state)
  if not NODE_HOOKS[hook] then error("T.node_hook: no node hook " .. tostring(hook), 2) end
  use_profile({ inst })
  if cluster then
    begin(cluster, pod, 0)
  else
    kit.cycle.pod = pod
    table_clear(returned)
  end
  kit.cycle.selected_node = ls.intern(node_name)
  dispatch.begin_cycle(state or {})
  kit.cycle.status, kit.cycle.status_code = 0, ls.SUCCESS
  dispatch[hook](0)
  -- the plugin's own status (an Error it returned too); the framework's
  -- Error is raised when the plugin raised or returned something else
  local got = returned[hook]
  if got and (got[1] == nil or ls.is_status(got[1])) then return T.result(got[1]) end
  raise_error()
  return SUCCESS
end

-- The per-node results of Filter, the feasible nodes and the scores of a
-- cycle into r.
local function filter_results(r, cluster, c)
  for i = 0, c.num_processed - 1 do
    local ni = c.candidates[(c.start + i) % c.num_candidates]
    local st = c.node_status[ni.index]
    r.filter[ls.str(ni.node.name)] = registered(st.code, st.code == ls.SUCCESS and 0 or st.status)
  end
  for i = 0, c.num_feasible - 1 do r.feasible[i + 1] = ls.str(c.feasible[i].node.name) end
  r.nodes = c.feasible
  local _ = cluster
end

local function score_results(r, c, np)
  local n = c.num_feasible
  r.skipped_score = np > 0 and c.score_skipped[0] ~= 0 or nil
  for i = 0, n - 1 do
    local name = r.feasible[i + 1]
    if np == 1 then
      r.raw[name] = tonumber(c.raw_scores[i])
      r.scores[name] = tonumber(c.scores[i])
    end
    r.totals[name] = tonumber(kit.totals[i])
  end
end

--- A whole scheduling cycle over the cluster's nodes, run by the framework
--- itself: PreFilter, Filter (the candidates PreFilter's node names keep,
--- the nodes examined as percentageOfNodesToScore says), then, when more
--- than one node is feasible, PreScore, Score, NormalizeScore, the weighted
--- totals and the host. `inst` is one plugin instance or a list of them (a
--- profile of those plugins, in that order); opts.weights = { Plugin = w }.
--- Returns { state, pre_filter (the plugin's own result), pre_filter_nodes,
---   filter = { [node] = result }, feasible = { names }, pre_score,
---   skipped_score, scored (false when one node was feasible),
---   raw = { [node] = n }, scores = { [node] = n } (one score plugin),
---   totals = { [node] = n }, status (the cycle's end: Success, or the
---   rejection), message (upstream's FitError text when rejected),
---   node (the host chosen) }. opts.percentage is percentageOfNodesToScore;
--- opts.scoring = false examines nodes as a profile without Score plugins does;
--- opts.start is where Filter's round-robin starts (0; r.next_start is the
--- next cycle's) and opts.rng the tie-break generator's state (r.rng after).
--- A plugin that raised, or returned what its point does not take, raises
--- the framework's Error message (naming the plugin, its file and line); an
--- Error status the plugin returned ends the cycle with r.status (the
--- framework's Error) and r.message.
local run_cycle

function T.cycle(inst, cluster, pod, opts)
  local r = { filter = {}, feasible = {}, raw = {}, scores = {}, totals = {}, scored = false }
  return run_cycle(r, inst, cluster, pod, opts or {})
end

run_cycle = function(r, inst, cluster, pod, opts)
  local insts = insts_of(inst)
  local refs, np = use_profile(insts, opts.weights)
  local c = begin(cluster, pod, np)
  local state = {}
  r.state = state
  local code = dispatch.pre_filter(0, state)
  r.pre_filter, r.pre_filter_nodes = plugin_result("pre_filter")
  if ended_in_error(r, "pre_filter") then return r end
  if code ~= ls.SUCCESS then
    r.status = cycle_result()
    local msg = C.ls_fit_error_prefilter(c, r.status.message)
    r.message = ffi.string(msg)
    C.ls_text_free(msg)
    return r
  end
  c.num_filter_plugins = 0
  -- Nodes are examined as in a profile with Score plugins (every profile
  -- built from the defaults has some): opts.scoring = false for one without,
  -- where Filter stops at the first feasible node.
  local scoring = np > 0 or opts.scoring ~= false
  local start = opts.start or 0
  C.ls_cycle_prepare_filter(c, kit.candidates, opts.percentage or 0, scoring, start)
  if c.num_candidates > 0 then dispatch.filter(0) end
  if ended_in_error(r, "filter") then return r end
  r.next_start = C.ls_cycle_advance_start(c, start)
  filter_results(r, cluster, c)
  if c.num_feasible == 0 then
    r.status = { code = ls.UNSCHEDULABLE, code_name = "Unschedulable", message = "", reasons = {} }
    local msg = C.ls_fit_error_filter(c)
    r.message = ffi.string(msg)
    C.ls_text_free(msg)
    return r
  end
  r.status = SUCCESS
  if not C.ls_cycle_wants_scores(c) then
    r.node = r.feasible[1]
    return r
  end
  r.scored = true
  dispatch.pre_score(0)
  r.pre_score = plugin_result("pre_score")
  if ended_in_error(r, "pre_score") then return r end
  dispatch.score(0)
  if ended_in_error(r, returned.normalize_score and "normalize_score" or "score") then return r end
  if not C.ls_cycle_total_scores(c, refs, np, false, kit.totals) then raise_error() end
  score_results(r, c, np)
  kit.rng[0] = opts.rng or 0
  r.node = ls.str(C.ls_cycle_select_host(c, kit.totals, kit.rng).node.name)
  r.rng = kit.rng[0]
  return r
end

-- The pod as bound to `node`: the same object with spec.nodeName set (what
-- the cluster holds once the binding is made).
local function bound_copy(pod, node)
  local text = C.ls_pod_json(pod)
  if text == nil then error("T.schedule: the pod's JSON was not kept", 3) end
  local obj = json.decode(ffi.string(text))
  obj.spec.nodeName = node
  return T.pod(json.encode(obj))
end

--- Schedules pods one after the other as a scheduler does on its first
--- attempt at each, through T.cycle: `pods` (default: cluster.pending, the
--- cluster file's pods without a nodeName, in file order) over the cluster,
--- each pod the cycle places joining it (bound: spec.nodeName set) before the
--- next attempt; Filter's round-robin start and the tie-breaking generator
--- (opts.seed, as `luasched simulate --seed`) carry over from one attempt to
--- the next. `inst` is a plugin instance or a list (T.cycle). Returns the
--- attempts in order: { pod = "ns/name", node = the node or nil, result =
--- "bound", "unschedulable" or "error", message (the FitError text or the
--- framework's Error), cycle = T.cycle's result }.
function T.schedule(inst, cluster, opts)
  opts = opts or {}
  local pods = opts.pods or cluster.pending
  local attempts, start, rng = {}, 0, opts.seed or 0
  for i, pod in ipairs(pods) do
    local r = { filter = {}, feasible = {}, raw = {}, scores = {}, totals = {}, scored = false }
    local ok, err = pcall(run_cycle, r, inst, cluster, pod,
      { weights = opts.weights, percentage = opts.percentage, start = start, rng = rng })
    start, rng = r.next_start or start, r.rng or rng
    local a = { pod = ls.str(pod.ns) .. "/" .. ls.str(pod.name), cycle = r }
    if not ok then
      a.result, a.message = "error", tostring(err)
    elseif r.status.code == ls.ERROR then
      a.result, a.message = "error", r.message
    elseif r.node then
      a.result, a.node = "bound", r.node
      cluster:add_pod(bound_copy(pod, r.node))
    else
      a.result, a.message = "unschedulable", r.message
    end
    attempts[i] = a
  end
  return attempts
end

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

local function action_listed(actions, action)
  local want = C.ls_action_from_name(action)
  for _, a in ipairs(actions) do
    if bit.band(C.ls_action_from_name(a), want) ~= 0 then return true end
  end
  return false
end

--- What the plugin's events table says for an event: the hint's result
--- (ls.QUEUE or ls.QUEUE_SKIP; ls.QUEUE for an entry without hint) for the
--- first entry of `resource` (exact name) that lists `action`, or nil when no
--- entry does (the event does not concern the plugin). `old`/`new` are the
--- event's objects (T.pod / T.node results or nil).
function T.hint(inst, resource, action, pod, old, new)
  local regs, err = events.check(getmetatable(inst) or inst)
  if not regs then error(err, 2) end
  for _, r in ipairs(regs) do
    if r.resource == resource and action_listed(r.actions, action) then
      if not r.hint then return ls.QUEUE end
      return r.hint(pod, old, new, inst)
    end
  end
  return nil
end

return T
