#!/usr/bin/env bash
# End to end: `luasched import openb --as-dra` (GPUs as DRA devices with consumable capacity, one
# ResourceClaim per GPU task) places the openb tasks as the OpenGpuShare path does under the same
# policy (BestFit; gpu-dra-best-fit.yaml gives DynamicResources deviceSelection BestFit on milli,
# OpenGpuShare's GPU choice: docs/policy-lab/gpu-sharing.md, "GPU sharing through DRA"; the GPUs
# themselves are compared in openb_dra_gpu_choice.sh).
# The small trace of import_openb.sh (spec/e2e/fixtures/openb/) first, worked by hand there for BestFit:
#   p1 -> node-a, p2 -> node-c, p3 -> node-b, p4 -> node-b, p5 (2 GPUs) pending. On the DRA path p5's
#   claim asks two devices each consuming 1000 milli: on node-a p1's claim consumed all of gpu-0
#   (the first fully free device) and only gpu-1 is free, one device short; node-b's only GPU holds
#   p3's 500 and p4's 300; node-c has no slice -> "3 cannot allocate all claims".
# Then a generated trace (awk, fixed seed): 12 nodes of 1, 2, 4 or 8 GPUs of three models, 30 tasks
# (cpu-only, shares of 100..900 milli, 1, 2, 4 and 8 whole GPUs, some model-constrained), inflated
# to 130% with seed 3 (76 pods): every pod has the same outcome (node, or pending) on both paths.
. "$(dirname "$0")/lib.bash"
require_tool jq jq
cd "$TMP" || exit 1
ROOT=$OLDPWD
BF="$ROOT/profiles/policy-lab/gpu-best-fit.yaml"
DBF="$ROOT/profiles/policy-lab/gpu-dra-best-fit.yaml"

cp "$ROOT"/spec/e2e/fixtures/openb/nodes.csv "$ROOT"/spec/e2e/fixtures/openb/pods.csv .
"$BIN" import openb nodes.csv pods.csv --inflate 0 --order creation --as-dra -o d.json 2>/dev/null
expect_eq "import --as-dra: exit 0" "$?" "0"
expect_eq "the device class" "$(jq -c '.items[0] | [.kind, .metadata.name, .spec.selectors[0].cel.expression]' d.json)" \
  '["DeviceClass","gpu.openb.luasched.io","device.driver == \"gpu.openb.luasched.io\""]'
expect_eq "a GPU node: no GPU allocatable, its slice: one device per GPU with 1000 milli to share" \
  "$(jq -c '[.items[1].status.allocatable, (.items[2] | [.metadata.name, .spec.nodeName, [.spec.devices[] | [.name, .attributes.model.string, .attributes.index.int, .allowMultipleAllocations, .capacity.milli.value]]])]' d.json)" \
  '[{"cpu":"32000m","memory":"131072Mi","pods":"1001"},["node-a-gpus","node-a",[["gpu-0","V100M16",0,true,"1000"],["gpu-1","V100M16",1,true,"1000"]]]]'
expect_eq "a node without GPUs has no slice" "$(jq -c '[.items[] | select(.kind == "ResourceSlice") | .metadata.name]' d.json)" \
  '["node-a-gpus","node-b-gpus"]'
expect_eq "a constrained task's claim, created with its pod" \
  "$(jq -c '.items[-1].steps[0:2] | map([.at, .create.kind, .create.metadata.name]) + [.[0].create.spec.devices.requests[0].exactly]' d.json)" \
  '[["1ms","ResourceClaim","p1-gpu"],["1ms","Pod","p1"],{"deviceClassName":"gpu.openb.luasched.io","allocationMode":"ExactCount","count":1,"capacity":{"requests":{"milli":"1000"}},"selectors":[{"cel":{"expression":"device.attributes[\"gpu.openb.luasched.io\"].model in [\"V100M16\", \"V100M32\"]"}}]}]'
expect_eq "a share's claim and pod" \
  "$(jq -c '[.items[-1].steps[] | select(.create.metadata.name == "p3-gpu") | .create.spec.devices.requests[0].exactly | [.count, .capacity.requests.milli]] + [.items[-1].steps[] | select(.create.metadata.name == "p3") | .create.spec | [.resourceClaims, .containers[0].resources]]' d.json)" \
  '[[1,"500"],[[{"name":"gpu","resourceClaimName":"p3-gpu"}],{"requests":{"cpu":"1000m","memory":"1024Mi"}}]]'
expect_eq "a cpu-only task has no claim" "$(jq -c '[.items[-1].steps[] | select(.create.metadata.name | startswith("p2"))] | map(.create.kind)' d.json)" '["Pod"]'
out=$("$BIN" simulate d.json --config "$DBF" 2>&1)
expect_eq "BestFit over DRA: the hand-worked placements" "$(grep -E '^default/' <<<"$out")" "default/p1: bound to node-a at 1ms
default/p2: bound to node-c at 2ms
default/p3: bound to node-b at 3ms
default/p4: bound to node-b at 4ms
default/p5: pending: 0/3 nodes are available: 3 cannot allocate all claims."

# The generated trace.
awk 'BEGIN { srand(11); split("V100M16 T4 A10", m, " "); split("1 2 4 8", g, " ");
  print "sn,cpu_milli,memory_mib,gpu,model";
  for (i = 0; i < 12; i++) printf "n%02d,%d,%d,%d,%s\n", i, (16 + int(rand() * 4) * 16) * 1000, 262144, g[1 + int(rand() * 4)], m[1 + int(rand() * 3)] }' > gn.csv
awk 'BEGIN { srand(5); split("V100M16 T4 A10", m, " ");
  print "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";
  for (i = 0; i < 30; i++) { r = rand(); n = 0; milli = 0;
    if (r < 0.2) { n = 0 } else if (r < 0.7) { n = 1; milli = 100 * (1 + int(rand() * 9)) }
    else { split("1 1 2 4 8", w, " "); n = w[1 + int(rand() * 5)]; milli = 1000 }
    spec = (n > 0 && rand() < 0.3) ? m[1 + int(rand() * 3)] : "";
    printf "t%03d,%d,4096,%d,%d,%s,LS,Running,%d,9999,%d\n", i, (1 + int(rand() * 8)) * 1000, n, milli, spec, i, i } }' > gp.csv
"$BIN" import openb gn.csv gp.csv --inflate 1.3 --seed 3 -o go.json 2>/dev/null
"$BIN" import openb gn.csv gp.csv --inflate 1.3 --seed 3 --as-dra -o gd.json 2>/dev/null
outcomes() { "$BIN" simulate "$1" --config "$2" --output json 2>/dev/null |
  jq -r '.pods[] | "\(.name) \(.node // "pending")"'; }
outcomes go.json "$BF" > go.txt
outcomes gd.json "$DBF" > gd.txt
expect_eq "the generated trace has shares, whole and multi-GPU tasks, and pods left pending" \
  "$(jq -c '[.items[-1].steps[].create.spec.containers[0].resources.requests["alibabacloud.com/gpu-milli"] // empty | tonumber] | [length > 40, (map(select(. < 1000)) | length > 10), (map(select(. > 1000)) | length > 5)]' go.json),$(grep -c pending go.txt | awk '{print ($1 > 5)}')" \
  "[true,true,true],1"
expect_eq "every pod: the same node (or pending) through DRA as through OpenGpuShare" \
  "$(diff go.txt gd.txt && echo same)" "same"
exit $((failures > 0))
