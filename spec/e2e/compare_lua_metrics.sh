#!/usr/bin/env bash
# End to end: metrics written in Lua for `luasched compare` (--metric NAME=FILE.lua,
# docs/policy-lab/metrics.md) and the built-in GPU fragmentation metrics, on the
# small openb trace of import_openb.sh (spec/e2e/fixtures/openb/, worked by hand there:
# under BestFit p1 -> node-a GPU 0 (whole), p2 -> node-c, p3 -> node-b (500 milli),
# p4 -> node-b (300 milli), p5 pending; arrived 33% after p1, 50% after p3, 60% after p4,
# 126.67% after p5, the end counting as 127).
#
# The fragmentation (the FGD paper's measure, utils/frag.go of hkust-adsl/kubernetes-
# scheduler-simulator), worked by hand. Typical pods: the five tasks' shapes, 0.2 each:
#   T1 4000 cpu, 1 GPU of 1000, model V100M16|V100M32   T2 2000 cpu, no GPU
#   T3 1000 cpu, 500 milli   T4 1000 cpu, 300 milli, model T4   T5 1000 cpu, 2 GPUs of 1000.
# A node's fragment for t: all its free milli when t asks for no GPU, its model is not
# one t allows, or it cannot host t; else the free milli of its GPUs too small for t.
#   0%: node-a [1000, 1000] (V100M16, 32000 cpu): T2 and T4 count 2000: 0.2 x 4000 = 800;
#       node-b [1000] (T4): T1, T2, T5 count 1000: 600. Total 1400 of 3000 free: 46.67%.
#   1-33% (p1 on node-a's GPU 0): node-a [0, 1000]: T2, T4, T5 (one free GPU) count 1000:
#       600; node-b 600. Total 1200 of 2000: 60%.
#   34-50% (p3 on node-b): node-b [500]: T1, T2, T5 count 500: 300. Total 900 of 1500: 60%.
#   51-127% (p4 on node-b: [200]): no typical pod fits node-b's 200 (T3 wants 500, T4 300):
#       all five count 200: 200. Total 800 of 1200: 66.67%.
. "$(dirname "$0")/lib.bash"
require_tool jq jq
cd "$TMP" || exit 1
ROOT=$OLDPWD
cp "$ROOT"/spec/e2e/fixtures/openb/nodes.csv "$ROOT"/spec/e2e/fixtures/openb/pods.csv .
BF="$ROOT/profiles/policy-lab/gpu-best-fit.yaml"
"$BIN" import openb nodes.csv pods.csv --inflate 0 --order creation -o t.json 2>/dev/null

json=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --output json)
expect_eq "compare: exit 0" "$?" "0"
expect_eq "gpuFragmentedMilli at 0, 1, 33, 34, 50, 51, 100, 127, none at 128" \
  "$(jq -c '.policies[0].metrics.gpuFragmentedMilli.mean | [.["0"], .["1"], .["33"], .["34"], .["50"], .["51"], .["100"], .["127"], .["128"]]' <<<"$json")" \
  '[1400,1200,1200,900,900,800,800,800,null]'
expect_eq "gpuFragmentationRatio (% of the free GPU milli) at 0, 33, 50, 51, 127" \
  "$(jq -c '.policies[0].metrics.gpuFragmentationRatio.mean | [.["0"], .["33"], .["50"], .["51"], .["127"]]' <<<"$json")" \
  '[46.67,60,60,66.67,66.67]'
expect_eq "one seed: no spread" "$(jq -c '.policies[0].metrics.gpuFragmentedMilli.stddev["50"]' <<<"$json")" "0"

# A metric of your own: the arrived percent it is called at, and the pods on the nodes.
cat > arrived.lua <<'EOF'
return function(cluster) return cluster.arrived end
EOF
cat > placed.lua <<'EOF'
-- pods on the nodes, and those with a GPU annotation (every placed pod but p2)
local n = 0
return function(cluster)
  local pods, gpu = 0, 0
  for _, node in ipairs(cluster.nodes) do
    for _, pod in ipairs(node.pods) do
      pods = pods + 1
      if pod.annotations["alibabacloud.com/gpu-count"] then gpu = gpu + 1 end
    end
  end
  n = n + 1
  return pods * 10 + gpu
end
EOF
json=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric arrived=arrived.lua --metric placed=placed.lua \
  --no-builtin-metrics --output json)
expect_eq "--metric: exit 0" "$?" "0"
expect_eq "--no-builtin-metrics: only the metrics given" "$(jq -c '.policies[0].metrics | keys' <<<"$json")" '["arrived","placed"]'
# Called once each time the arrived workload crosses percents (p1's arrival crosses 1..33),
# with the highest one crossed; its value stands for each of them.
expect_eq "a metric is called as percents are crossed" \
  "$(jq -c '.policies[0].metrics.arrived.mean | [.["0"], .["17"], .["33"], .["50"], .["127"]]' <<<"$json")" '[0,33,33,50,127]'
# 0%: none placed; 33%: p1 (GPU); 50%: p1, p2, p3 (2 GPU pods); 127%: p1..p4 (3 GPU pods).
expect_eq "the copy of the cluster: pods with their annotations" \
  "$(jq -c '.policies[0].metrics.placed.mean | [.["0"], .["33"], .["50"], .["127"]]' <<<"$json")" '[0,11,32,43]'
# cluster.object and cluster.pluginArgs: the trace's TypicalPodSet (five shapes of 0.2 each), an
# unknown object (nil), and the policy's OpenGpuShare args (gpuSelMethod best).
cat > reads.lua <<'EOF'
return function(cluster)
  local set = cluster.object("typicalpodsets.v1alpha1.luasched.io", "default", "openb")
  local none = cluster.object("typicalpodsets.v1alpha1.luasched.io", "default", "no-such-set")
  local args = cluster.pluginArgs("OpenGpuShare")
  return #set.spec.pods * 100 + set.spec.pods[1].weight * 10 + (none == nil and 1 or 0)
    + (args.gpuSelMethod == "best" and 1000 or 0) + (cluster.pluginArgs("NoSuchPlugin") == nil and 10000 or 0)
end
EOF
expect_eq "cluster.object and cluster.pluginArgs" "$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" \
  --metric reads=reads.lua --no-builtin-metrics --output json | jq -c '.policies[0].metrics.reads.mean["0"]')" "11503"
text=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric arrived=arrived.lua --no-builtin-metrics)
expect_contains "text report" "$text" "metric arrived (arrived.lua) at arrived workload (%), mean +- stddev over seeds"
timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --seeds 2 --output html -o report.html
expect_contains "html report: the built-in metrics' tables" "$(cat report.html)" 'id="metric-gpuFragmentedMilli"'
expect_eq "html report: a chart per metric, a curve per policy" \
  "$(grep -o 'class="chart lua-metric-chart"' report.html | wc -l) $(grep -o 'class="metric-curve"' report.html | wc -l)" "2 2"

# --jobs 2 and shards carry the metrics: the same report as one process.
one=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --config "FGD=$ROOT/profiles/policy-lab/gpu-fgd.yaml" \
  --seeds 2 --metric arrived=arrived.lua --output json | jq -S '[.policies[].metrics]')
two=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --config "FGD=$ROOT/profiles/policy-lab/gpu-fgd.yaml" \
  --seeds 2 --metric arrived=arrived.lua --jobs 2 --output json | jq -S '[.policies[].metrics]')
expect_eq "--jobs 2: the same metrics" "$two" "$one"
for i in 0 1; do
  timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --config "FGD=$ROOT/profiles/policy-lab/gpu-fgd.yaml" \
    --seeds 2 --metric arrived=arrived.lua --shard "$i/2" -o "shard$i.bin"
done
merged=$(timeout 60 "$BIN" compare --merge shard0.bin shard1.bin --output json | jq -S '[.policies[].metrics]')
expect_eq "--shard/--merge: the same metrics" "$merged" "$one"

# Errors name the metric, its file and line; the run exits 3 as a plugin error does.
printf 'local x = 1\nreturn function(cluster)\n  error("no such thing")\nend\n' > raises.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric bad=raises.lua --output json 2>&1 >/dev/null)
expect_eq "a raising metric: exit 3" "$?" "3"
expect_eq "its message" "$err" "luasched compare: metric bad (raises.lua) at 0% arrived: raises.lua:3: no such thing"
printf 'return function(cluster)\n  return "many"\nend\n' > text.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric t=text.lua 2>&1 >/dev/null)
expect_eq "a metric returning a string" "$err" \
  "luasched compare: metric t (text.lua) at 0% arrived: expected a number or nil, got a string"
printf 'return 42\n' > notfn.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric n=notfn.lua 2>&1 >/dev/null)
expect_eq "a file that returns no function" "$err" \
  "luasched compare: metric n (notfn.lua): notfn.lua: expected the file to return a function(cluster) that returns a number, got number"
# The sandbox: no io, os.execute, load, ffi; require reaches only plain modules.
printf 'return function(cluster)\n  return io.open("/etc/passwd")\nend\n' > io.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric io=io.lua 2>&1 >/dev/null)
expect_contains "no io" "$err" "io.lua:2: attempt to index global 'io' (a nil value)"
printf 'local ffi = require("ffi")\nreturn function() return 1 end\n' > uses_ffi.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric f=uses_ffi.lua 2>&1 >/dev/null)
expect_contains "no ffi" "$err" "uses_ffi.lua:1: require: no module ffi.lua in"
printf 'local m = require("selfish")\nreturn m\n' > selfish.lua
err=$(timeout 60 "$BIN" compare t.json --config "BestFit=$BF" --metric s=selfish.lua 2>&1 >/dev/null)
expect_contains "a require loop" "$err" "selfish.lua:1: require: selfish requires itself"
# A metric that does not return: cut off (interpreted: the instruction budget; compiled:
# the configuration's pluginTimeoutMilliseconds, 1000 here).
sed 's/pluginTimeoutMilliseconds: 600000/pluginTimeoutMilliseconds: 1000/' "$BF" > bf-1s.yaml
printf 'return function(cluster)\n  local i = 0\n  while true do i = i + 1 end\nend\n' > loop.lua
err=$(timeout 120 "$BIN" compare t.json --config "BestFit=bf-1s.yaml" --metric loop=loop.lua 2>&1 >/dev/null)
expect_eq "a metric that loops: exit 3" "$?" "3"
expect_contains "cut off" "$err" "luasched compare: metric loop (loop.lua) at 0% arrived: cut off after its time budget (1000 ms a call)"
# --metric's own errors
err=$("$BIN" compare t.json --config "BestFit=$BF" --metric nofile 2>&1)
expect_eq "NAME=FILE expected: exit 2" "$?" "2"
expect_contains "NAME=FILE expected" "$err" "luasched compare: --metric: expected NAME=FILE.lua"
err=$("$BIN" compare t.json --config "BestFit=$BF" --metric gpuFragmentedMilli=arrived.lua 2>&1)
expect_eq "a built-in name" "$err" "luasched compare: --metric: the name gpuFragmentedMilli is a built-in metric's"
exit $((failures > 0))
