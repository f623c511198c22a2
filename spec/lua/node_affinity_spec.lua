-- NodeAffinity (upstream nodeaffinity/node_affinity.go and
-- component-helpers/scheduling/corev1/nodeaffinity): PreFilter Skip / node-name
-- restriction / "pod affinity terms conflict"; Filter on addedAffinity then on
-- the pod's nodeSelector and required terms; PreScore Skip; Score = sum of the
-- weights of matching preferred terms; NormalizeScore =
-- DefaultNormalizeScore(100, not reversed): raw * 100 / max (int64 division),
-- all 0 when max is 0.
local T = require("luasched.testing")
local ls = require("luasched")

local UNRESOLVABLE = ls.UNSCHEDULABLE_AND_UNRESOLVABLE
local POD_MSG = "node(s) didn't match Pod's node affinity/selector"
local ENFORCED_MSG = "node(s) didn't match scheduler-enforced node affinity"
local CONFLICT_MSG = "pod affinity terms conflict"

local function expr(key, operator, values) return { key = key, operator = operator, values = values } end
local function name_in(...) return { key = "metadata.name", operator = "In", values = { ... } } end
local function name_not_in(name) return { key = "metadata.name", operator = "NotIn", values = { name } } end

-- required node affinity: each argument is a term { exprs, fields }
local function required(...)
  local terms = {}
  for i, t in ipairs({ ... }) do terms[i] = { matchExpressions = t[1], matchFields = t[2] } end
  return { nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = terms } } }
end

-- preferred node affinity: each argument is { weight, exprs[, fields] }
local function preferred_terms(...)
  local out = {}
  for i, p in ipairs({ ... }) do
    out[i] = { weight = p[1], preference = { matchExpressions = p[2], matchFields = p[3] } }
  end
  return out
end

local function preferred(...)
  return { nodeAffinity = { preferredDuringSchedulingIgnoredDuringExecution = preferred_terms(...) } }
end

local function added_required(...)
  local terms = {}
  for i, t in ipairs({ ... }) do terms[i] = { matchExpressions = t[1], matchFields = t[2] } end
  return { addedAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = terms } } }
end

local function sorted_names(ids)
  local out = {}
  for i, id in ipairs(ids) do out[i] = type(id) == "string" and id or ls.str(id) end
  table.sort(out)
  return out
end

describe("NodeAffinity", function()
  local cluster, plugin
  setup(function()
    cluster = T.cluster {
      nodes = {
        { name = "n1", labels = { zone = "a", disk = "ssd", cores = "8" } },
        { name = "n2", labels = { zone = "b", disk = "hdd", cores = "16" } },
        { name = "n3", labels = { zone = "a", cores = "many" } },
        { name = "n4" },
        { name = "big", labels = { cores = "9223372036854775807", padded = "007" } },
        { name = "huge", labels = { cores = "9223372036854775808" } },
      },
    }
    plugin = T.plugin("NodeAffinity")
  end)
  teardown(function() cluster:close() end)

  local function pod(fields)
    fields.name = fields.name or "p"
    return T.pod(fields)
  end

  describe("pre_filter", function()
    it("skips a pod without nodeSelector or required affinity when nothing is added", function()
      local r = T.pre_filter(plugin, cluster, pod {})
      assert.are.equal(ls.SKIP, r.code)
      -- preferred terms alone do not make Filter run
      r = T.pre_filter(plugin, cluster, pod { affinity = preferred({ 1, { expr("zone", "In", { "a" }) } }) })
      assert.are.equal(ls.SKIP, r.code)
    end)

    it("runs Filter, without a node restriction, for a nodeSelector", function()
      local r, names = T.pre_filter(plugin, cluster, pod { node_selector = { zone = "a" } })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.is_nil(names)
    end)

    it("runs Filter for a pod without selectors when addedAffinity has required terms", function()
      local p = T.plugin("NodeAffinity", added_required({ { expr("zone", "In", { "a" }) } }))
      local r, names = T.pre_filter(p, cluster, pod {})
      assert.are.equal(ls.SUCCESS, r.code)
      assert.is_nil(names)
    end)

    it("still skips when addedAffinity has only preferred terms", function()
      local p = T.plugin("NodeAffinity", { addedAffinity = {
        preferredDuringSchedulingIgnoredDuringExecution = preferred_terms({ 1, { expr("zone", "In", { "a" }) } }) } })
      assert.are.equal(ls.SKIP, T.pre_filter(p, cluster, pod {}).code)
    end)

    it("returns no restriction when the required terms have no metadata.name In", function()
      local r, names = T.pre_filter(plugin, cluster, pod { affinity = required({ { expr("zone", "In", { "a" }) } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.is_nil(names)
      -- NotIn on metadata.name is no restriction either
      r, names = T.pre_filter(plugin, cluster, pod { affinity = required({ nil, { name_not_in("n1") } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.is_nil(names)
    end)

    it("returns no restriction when one term lacks metadata.name In (terms are ORed)", function()
      local r, names = T.pre_filter(plugin, cluster, pod { affinity = required(
        { nil, { name_in("n1") } },
        { { expr("zone", "In", { "b" }) } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.is_nil(names)
    end)

    it("restricts to the union over terms of the names", function()
      -- term 1 {n1}, term 2 {n2} -> {n1, n2}
      local r, names = T.pre_filter(plugin, cluster, pod { affinity = required(
        { nil, { name_in("n1") } },
        { { expr("zone", "In", { "b" }) }, { name_in("n2") } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.are.same({ "n1", "n2" }, sorted_names(names))
    end)

    it("intersects the names within a term", function()
      -- term 1: {n1} and {n1} -> {n1}; term 2: {n2} and {n3} -> {}; union {n1}
      local r, names = T.pre_filter(plugin, cluster, pod { affinity = required(
        { nil, { name_in("n1"), name_in("n1") } },
        { nil, { name_in("n2"), name_in("n3") } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.are.same({ "n1" }, sorted_names(names))
      -- a name repeated across terms is listed once: {n1} u {n1} = {n1}
      r, names = T.pre_filter(plugin, cluster, pod { affinity = required(
        { nil, { name_in("n1") } }, { nil, { name_in("n1"), name_not_in("n2") } }) })
      assert.are.equal(ls.SUCCESS, r.code)
      assert.are.same({ "n1" }, sorted_names(names))
    end)

    it("is UnschedulableAndUnresolvable when every term's names intersect to nothing", function()
      -- {n1} n {n2} = {} in the only term
      local r, names = T.pre_filter(plugin, cluster, pod { affinity = required(
        { nil, { name_in("n1"), name_in("n2") } }) })
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal(CONFLICT_MSG, r.message)
      assert.is_nil(names)
    end)

    it("restricts a whole cycle to the named nodes", function()
      local r = T.cycle(plugin, cluster, pod { affinity = required({ nil, { name_in("n2") } }) })
      assert.are.same({ "n2" }, sorted_names(r.pre_filter_nodes))
      assert.are.same({ "n2" }, r.feasible)
      assert.is_nil(r.filter.n1)
    end)
  end)

  describe("filter", function()
    local function filter(p, fields, node)
      local the_pod = pod(fields)
      local state = {}
      T.pre_filter(p, cluster, the_pod, state)
      return T.filter(p, cluster, the_pod, node, state)
    end

    it("passes every node for a pod without selectors", function()
      assert.are.equal(ls.SUCCESS, T.filter(plugin, cluster, pod {}, "n4").code)
    end)

    it("matches the nodeSelector label by label", function()
      assert.are.equal(ls.SUCCESS, filter(plugin, { node_selector = { zone = "a", disk = "ssd" } }, "n1").code)
      local r = filter(plugin, { node_selector = { zone = "a", disk = "ssd" } }, "n3")   -- no disk label
      assert.are.equal(UNRESOLVABLE, r.code)
      assert.are.equal(POD_MSG, r.message)
      assert.are.equal(POD_MSG, filter(plugin, { node_selector = { zone = "a" } }, "n2").message)
    end)

    it("ORs required terms and ANDs the expressions within a term", function()
      local affinity = required(
        { { expr("zone", "In", { "a" }), expr("disk", "In", { "ssd" }) } },
        { { expr("zone", "In", { "b" }) } })
      local r = T.cycle(plugin, cluster, pod { affinity = affinity })
      -- n1: term 1 (a and ssd); n2: term 2; n3: zone a but no ssd, not b; n4: nothing
      assert.are.same({ "n1", "n2" }, r.feasible)
      assert.are.equal(UNRESOLVABLE, r.filter.n3.code)
      assert.are.equal(POD_MSG, r.filter.n3.message)
      assert.are.equal(POD_MSG, r.filter.n4.message)
    end)

    it("needs both the nodeSelector and the required terms", function()
      local fields = { node_selector = { disk = "ssd" }, affinity = required({ { expr("zone", "In", { "b" }) } }) }
      assert.are.equal(POD_MSG, filter(plugin, fields, "n1").message)   -- ssd but zone a
      assert.are.equal(POD_MSG, filter(plugin, fields, "n2").message)   -- zone b but hdd
    end)

    it("matches required matchFields on the node name", function()
      local r = T.cycle(plugin, cluster, pod { affinity = required(
        { { expr("zone", "In", { "a" }) }, { name_not_in("n1") } }) })
      -- zone a and not n1: n3 only
      assert.are.same({ "n3" }, r.feasible)
    end)

    it("rejects nodes outside addedAffinity with the scheduler-enforced message first", function()
      local p = T.plugin("NodeAffinity", added_required({ { expr("zone", "In", { "a" }) } }))
      local r = T.cycle(p, cluster, pod { node_selector = { disk = "ssd" } })
      assert.are.same({ "n1" }, r.feasible)
      -- n2 fails both: the added affinity is checked first
      assert.are.equal(UNRESOLVABLE, r.filter.n2.code)
      assert.are.equal(ENFORCED_MSG, r.filter.n2.message)
      -- n3 passes the added affinity and fails the pod's selector
      assert.are.equal(POD_MSG, r.filter.n3.message)
      assert.are.equal(ENFORCED_MSG, r.filter.n4.message)
    end)

    describe("addedAffinity operators", function()
      -- the nodes that pass a plugin whose added required selector is the given terms
      local function passing(...)
        local p = T.plugin("NodeAffinity", added_required(...))
        return T.cycle(p, cluster, pod {}).feasible
      end

      it("In needs the label with one of the values", function()
        assert.are.same({ "n1", "n2" }, passing({ { expr("disk", "In", { "ssd", "hdd" }) } }))
      end)

      it("NotIn passes nodes without the label", function()
        -- n1, n3 are in zone a; n2 is b; n4, big, huge have no zone
        assert.are.same({ "n2", "n4", "big", "huge" }, passing({ { expr("zone", "NotIn", { "a" }) } }))
      end)

      it("Exists and DoesNotExist look at the key only", function()
        assert.are.same({ "n1", "n2", "n3" }, passing({ { expr("zone", "Exists") } }))
        assert.are.same({ "n4", "big", "huge" }, passing({ { expr("zone", "DoesNotExist") } }))
      end)

      it("Gt and Lt compare the label as an int64, failing labels that do not parse", function()
        -- cores: n1 8, n2 16, n3 "many" (not an integer), n4 none,
        -- big 2^63-1, huge 2^63 (out of int64 range: not an integer)
        assert.are.same({ "n2", "big" }, passing({ { expr("cores", "Gt", { "8" }) } }))
        assert.are.same({ "n1" }, passing({ { expr("cores", "Lt", { "16" }) } }))
        -- 2^63-1 > 2^63-2 exactly (both are 2^63 as doubles)
        assert.are.same({ "big" }, passing({ { expr("cores", "Gt", { "9223372036854775806" }) } }))
        assert.are.same({}, passing({ { expr("cores", "Gt", { "9223372036854775807" }) } }))
        -- leading zeros and negative operands: 007 > 6, 007 < 8; 8 > -1
        assert.are.same({ "big" }, passing({ { expr("padded", "Gt", { "6" }), expr("padded", "Lt", { "8" }) } }))
        assert.are.same({ "n1", "n2", "big" }, passing({ { expr("cores", "Gt", { "-1" }) } }))
      end)

      it("parses label values as strconv.ParseInt and compares beyond 2^53 exactly", function()
        local c = T.cluster { nodes = {
          { name = "plus", labels = { v = "+9" } },                    -- 9
          { name = "zero", labels = { v = "000" } },                   -- 0
          { name = "neg", labels = { v = "-3" } },
          { name = "e16", labels = { v = "10000000000000000" } },      -- 10^16
          { name = "negbig", labels = { v = "-9999999999999999" } },
          { name = "empty", labels = { v = "" } },                     -- not an integer
          { name = "sign", labels = { v = "-" } },                     -- not an integer
        } }
        local function pass(op, value)
          local p = T.plugin("NodeAffinity", added_required({ { expr("v", op, { value }) } }))
          return T.cycle(p, c, pod {}).feasible
        end
        assert.are.same({ "plus", "e16" }, pass("Gt", "8"))
        assert.are.same({ "zero", "neg", "negbig" }, pass("Lt", "1"))
        -- 10^16 and 10^16 - 1 are the same double: the digits decide (17 > 16 digits)
        assert.are.same({ "e16" }, pass("Gt", "9999999999999999"))
        -- 10^16 and 10^16 + 1 are the same double: same length, "...0" < "...1"
        assert.are.same({ "plus", "zero", "neg", "e16", "negbig" }, pass("Lt", "10000000000000001"))
        -- -(10^16 - 1) > -10^16 although both are -10^16 as doubles (negative: reversed)
        assert.are.same({ "plus", "zero", "neg", "e16", "negbig" }, pass("Gt", "-10000000000000000"))
        assert.are.same({}, pass("Lt", "-10000000000000000"))
        c:close()
      end)

      it("parses a label value first seen in Filter or Score when the pre-hooks did not run", function()
        local c = T.cluster { nodes = { { name = "fresh", labels = { gen = "41" } } } }
        local req = T.plugin("NodeAffinity", added_required({ { expr("gen", "Gt", { "40" }) } }))
        assert.are.equal(ls.SUCCESS, T.filter(req, c, pod {}, "fresh").code)   -- 41 > 40
        local pref = T.plugin("NodeAffinity", { addedAffinity = {
          preferredDuringSchedulingIgnoredDuringExecution = preferred_terms({ 6, { expr("gen", "Lt", { "42" }) } }) } })
        assert.are.equal(6, T.score(pref, c, pod {}, "fresh"))                 -- 41 < 42
        c:close()
      end)

      it("matchFields metadata.name In and NotIn", function()
        assert.are.same({ "n2" }, passing({ nil, { name_in("n2") } }))
        assert.are.same({ "n1", "n3", "n4", "big", "huge" }, passing({ nil, { name_not_in("n2") } }))
      end)

      it("ANDs label and field requirements of a term and ORs terms", function()
        assert.are.same({ "n3" }, passing({ { expr("zone", "In", { "a" }) }, { name_not_in("n1") } }))
        assert.are.same({ "n2", "n4" }, passing({ nil, { name_in("n4") } }, { { expr("zone", "In", { "b" }) } }))
      end)

      it("matches no node with an empty term or no terms", function()
        assert.are.same({}, passing({}))
        assert.are.same({ "n1" }, passing({}, { nil, { name_in("n1") } }))
        local p = T.plugin("NodeAffinity", { addedAffinity = { requiredDuringSchedulingIgnoredDuringExecution = {} } })
        local r = T.cycle(p, cluster, pod {})
        assert.are.same({}, r.feasible)
        assert.are.equal(ENFORCED_MSG, r.filter.n1.message)
      end)
    end)

    it("builds each status once", function()
      local r = T.cycle(plugin, cluster, pod { node_selector = { zone = "z" } })
      assert.are.equal(r.filter.n1.status, r.filter.n2.status)
    end)
  end)

  describe("score and normalize_score", function()
    it("skips a pod without preferred terms when nothing is added", function()
      local r = T.cycle(plugin, cluster, pod {})
      assert.are.equal(ls.SKIP, r.pre_score.code)
      assert.is_true(r.skipped_score)
    end)

    it("sums the weights of the matching preferred terms and scales to the maximum", function()
      local r = T.cycle(plugin, cluster, pod { affinity = preferred(
        { 2, { expr("zone", "In", { "a" }) } },
        { 5, { expr("disk", "In", { "ssd" }) } },
        { 3, nil, { name_in("n4") } }) })
      assert.are.equal(ls.SUCCESS, r.pre_score.code)
      -- n1: 2 + 5 = 7; n2: 0; n3: 2; n4: 3 (matchFields); big, huge: 0
      assert.are.same({ n1 = 7, n2 = 0, n3 = 2, n4 = 3, big = 0, huge = 0 }, r.raw)
      -- max 7: n1 700/7 = 100; n3 200/7 = 28; n4 300/7 = 42
      assert.are.same({ n1 = 100, n2 = 0, n3 = 28, n4 = 42, big = 0, huge = 0 }, r.scores)
    end)

    it("adds addedAffinity's preferred terms to the pod's", function()
      local p = T.plugin("NodeAffinity", { addedAffinity = {
        preferredDuringSchedulingIgnoredDuringExecution = preferred_terms(
          { 10, { expr("zone", "In", { "b" }) } },
          { 0, { expr("zone", "In", { "a" }) } },           -- weight 0: dropped
          { 4, {} },                                          -- empty preference: dropped
          { 1, { expr("cores", "Gt", { "10" }) } }) } })
      -- no pod terms: the added ones alone; n2 10 + 1 (16 > 10) = 11; big 1 (2^63-1 > 10)
      local r = T.cycle(p, cluster, pod {})
      assert.are.equal(ls.SUCCESS, r.pre_score.code)
      assert.are.same({ n1 = 0, n2 = 11, n3 = 0, n4 = 0, big = 1, huge = 0 }, r.raw)
      -- max 11: n2 1100/11 = 100; big 100/11 = 9
      assert.are.same({ n1 = 0, n2 = 100, n3 = 0, n4 = 0, big = 9, huge = 0 }, r.scores)
      -- with a pod term on disk=ssd of weight 20: n1 20; n2 11; big 1
      r = T.cycle(p, cluster, pod { affinity = preferred({ 20, { expr("disk", "In", { "ssd" }) } }) })
      assert.are.same({ n1 = 20, n2 = 11, n3 = 0, n4 = 0, big = 1, huge = 0 }, r.raw)
      -- max 20: n1 100; n2 1100/20 = 55; big 100/20 = 5
      assert.are.same({ n1 = 100, n2 = 55, n3 = 0, n4 = 0, big = 5, huge = 0 }, r.scores)
    end)

    it("does not skip when addedAffinity lists only dropped terms, and scores 0 everywhere", function()
      local p = T.plugin("NodeAffinity", { addedAffinity = {
        preferredDuringSchedulingIgnoredDuringExecution = preferred_terms({ 0, { expr("zone", "In", { "a" }) } }) } })
      local r = T.cycle(p, cluster, pod {})
      assert.are.equal(ls.SUCCESS, r.pre_score.code)
      -- max 0: every score stays 0 (not reversed)
      assert.are.same({ n1 = 0, n2 = 0, n3 = 0, n4 = 0, big = 0, huge = 0 }, r.scores)
    end)

    it("counts every preferred term, past the fourth", function()
      local miss = expr("zone", "In", { "nowhere" })
      local r = T.cycle(plugin, cluster, pod { affinity = preferred(
        { 1, { miss } }, { 2, { miss } }, { 3, { miss } }, { 4, { miss } }, { 5, { miss } },
        { 6, { expr("zone", "Exists") } }) })
      -- only the sixth term matches, on n1, n2, n3 (raw 6); max 6 -> 600 / 6 = 100
      assert.are.same({ n1 = 6, n2 = 6, n3 = 6, n4 = 0, big = 0, huge = 0 }, r.raw)
      assert.are.same({ n1 = 100, n2 = 100, n3 = 100, n4 = 0, big = 0, huge = 0 }, r.scores)
    end)

    it("scores one node without PreScore having run", function()
      local the_pod = pod { affinity = preferred(
        { 2, { expr("zone", "In", { "a" }) } },
        { 5, { expr("zone", "Exists") } }) }
      assert.are.equal(7, T.score(plugin, cluster, the_pod, "n3"))   -- 2 + 5
      assert.are.equal(5, T.score(plugin, cluster, the_pod, "n2"))
    end)
  end)

  describe("addedAffinity validation", function()
    local base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    local function init_error(args)
      local ok, err = pcall(T.plugin, "NodeAffinity", args)
      assert.is_false(ok)
      return err
    end

    it("rejects unknown operators", function()
      assert.are.equal(base .. '.matchExpressions[0].operator: Unsupported value: "Near": supported values: '
        .. '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        init_error(added_required({ { expr("zone", "Near", { "a" }) } })))
    end)

    it("checks the number of values per operator", function()
      assert.are.equal(base .. ".matchExpressions[0].values: for 'in', 'notin' operators, values set can't be empty",
        init_error(added_required({ { expr("zone", "In") } })))
      assert.are.equal(base .. ".matchExpressions[0].values: values set must be empty for exists and does not exist",
        init_error(added_required({ { expr("zone", "Exists", { "a" }) } })))
      assert.are.equal(base .. ".matchExpressions[1].values: for 'Gt', 'Lt' operators, exactly one value is required",
        init_error(added_required({ { expr("zone", "Exists"), expr("cores", "Lt", { "1", "2" }) } })))
    end)

    it("needs an int64 operand for Gt and Lt", function()
      assert.are.equal(base .. ".matchExpressions[0].values[0]: for 'Gt', 'Lt' operators, the value must be an integer",
        init_error(added_required({ { expr("cores", "Gt", { "8.5" }) } })))
      assert.has_error(function()
        T.plugin("NodeAffinity", added_required({ { expr("cores", "Gt", { "9223372036854775808" }) } }))
      end)
    end)

    it("allows matchFields on metadata.name with In or NotIn and one value only", function()
      assert.are.equal(base .. '.matchFields[0].key: Unsupported value: "spec.unschedulable": supported values: '
        .. '"metadata.name"',
        init_error(added_required({ nil, { { key = "spec.unschedulable", operator = "In", values = { "x" } } } })))
      assert.are.equal(base .. '.matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
        init_error(added_required({ nil, { { key = "metadata.name", operator = "Exists" } } })))
      assert.are.equal(base .. ".matchFields[0].values: must have one element",
        init_error(added_required({ nil, { name_in("n1", "n2") } })))
    end)

    it("checks the JSON types", function()
      local req = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
      assert.are.equal(req .. ": expected an object", init_error({ addedAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution = "zone=a" } }))
      assert.are.equal(req .. ".nodeSelectorTerms: expected a list", init_error({ addedAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = 3 } } }))
      assert.are.equal(req .. ".nodeSelectorTerms[0]: expected an object", init_error({ addedAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = { "zone=a" } } } }))
      assert.are.equal(base .. ".matchExpressions[0]: expected an object",
        init_error(added_required({ { "zone In a" } })))
      assert.are.equal(base .. ".matchExpressions[0].values[1]: expected a string",
        init_error(added_required({ { expr("zone", "In", { "a", 7 }) } })))
      assert.are.equal(base .. ".matchFields[0]: expected an object",
        init_error(added_required({ nil, { "metadata.name=n1" } })))
      assert.are.equal("addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]: expected an object",
        init_error({ addedAffinity = { preferredDuringSchedulingIgnoredDuringExecution = { "zone=a" } } }))
    end)

    it("checks preferred weights and shapes", function()
      local path = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
      assert.are.equal(path .. ".weight: expected an int32", init_error({ addedAffinity = {
        preferredDuringSchedulingIgnoredDuringExecution = preferred_terms({ 1.5, { expr("zone", "Exists") } }) } }))
      -- the args check against the declared defaults answers first (lua/luasched/args.lua)
      assert.are.equal('args of plugin "NodeAffinity": args.addedAffinity: Invalid type: expected object, '
        .. 'got string "zone=a"', init_error({ addedAffinity = "zone=a" }))
      assert.are.equal(base .. ".matchExpressions[0].key: Required value",
        init_error(added_required({ { { operator = "Exists" } } })))
    end)
  end)
  describe("end to end (luasched simulate with pluginConfig args)", function()
    local sim = require("sim_helper")

    local function write(text)
      return sim.write(os.tmpname(), text)
    end

    it("takes addedAffinity from the configuration and restricts pods to named nodes", function()
      sim.bin()   -- asserts LUASCHED_BIN
      local node = [[
apiVersion: v1
kind: Node
metadata: {name: %s, labels: {topology.kubernetes.io/zone: %s}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
]]
      local nodes_and_pods = write(node:format("n1", "a") .. node:format("n2", "b") .. node:format("n3", "c") .. [[
apiVersion: v1
kind: Pod
metadata: {name: any, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: default, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:
    [{matchFields: [{key: metadata.name, operator: In, values: [n2]}]}]}}}
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: conflict, namespace: default, creationTimestamp: "2024-01-01T00:00:02Z"}
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:
    [{matchFields: [{key: metadata.name, operator: In, values: [n1]},
                    {key: metadata.name, operator: In, values: [n3]}]}]}}}
  containers: [{name: c, image: x}]
]])
      local config = write [[
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: topology.kubernetes.io/zone, operator: NotIn, values: [b]}]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference:
            matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [c]}]
]]
      local out = sim.run({ "simulate", nodes_and_pods, "--config", config }, { merge = true }).out
      os.remove(nodes_and_pods)
      os.remove(config)
      -- any: n2 fails the added zone NotIn [b]; n1 and n3 tie on TaintToleration (300) and
      -- NodeResourcesFit (100m, 200Mi of 4 cpu, 8Gi: 97); the added preferred term gives
      -- n3 raw 5 -> 5 * 100 / 5 = 100, x2 = 200, n1 0 -> n3.
      assert.matches("default/any: bound to n3\n", out, 1, true)
      -- pinned: PreFilter keeps n2 only, which the added affinity rejects
      assert.matches("default/pinned: pending: 0/3 nodes are available: 1 node(s) didn't match "
        .. "scheduler-enforced node affinity, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].", out, 1, true)
      -- conflict: {n1} n {n3} is empty in the only term
      assert.matches("default/conflict: pending: 0/3 nodes are available: pod affinity terms conflict.", out, 1, true)
    end)
  end)
end)
