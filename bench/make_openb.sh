#!/usr/bin/env bash
# Writes a small trace in the openb CSV format (alibaba/clusterdata
# cluster-trace-gpu-v2023: a node list and a pod list) for the policy lab's
# tests and benches, without the real data:
#   bench/make_openb.sh DIR [NODES] [TASKS] [SEED]
# DIR gets openb_node_list_all_node.csv, openb_node_list_gpu_node.csv (its GPU
# nodes, the list the paper's grid and `luasched compare openb:DIR` read) and
# openb_pod_list_default.csv, so `luasched compare openb:DIR` and
# `luasched bench policy-lab openb:DIR` read it.
# The mix is openb's in kind: a fifth of the nodes without GPUs, the rest with
# 1, 2, 4 or 8 GPUs of four models; tasks CPU-only (about 1 in 8), a share of
# one GPU (about half, some constrained to a model), one whole GPU, or 2, 4 or
# 8 whole GPUs. The tasks ask for about 90% of the GPUs (the import inflates
# them to 130%). Deterministic for a seed (an LCG in awk).
set -euo pipefail
dir=${1:?usage: make_openb.sh DIR [NODES] [TASKS] [SEED]}
nodes=${2:-60}
tasks=${3:-400}
seed=${4:-1}
mkdir -p "$dir"
awk -v nodes="$nodes" -v tasks="$tasks" -v seed="$seed" -v dir="$dir" '
function rnd(n) { state = (state * 1103515245 + 12345) % 2147483648; return int(state / 2147483648 * n) }
BEGIN {
  state = seed + 7
  split("V100M16 V100M32 T4 G2", model, " ")
  split("1 2 4 8 8", gcount, " ")
  nf = dir "/openb_node_list_all_node.csv"
  gf = dir "/openb_node_list_gpu_node.csv"
  print "sn,cpu_milli,memory_mib,gpu,model" > nf
  print "sn,cpu_milli,memory_mib,gpu,model" > gf
  gpus = 0
  for (i = 0; i < nodes; i++) {
    if (i % 5 == 0) { printf "openb-node-%04d,32000,262144,0,\n", i > nf; continue }
    g = gcount[rnd(5) + 1]; gpus += g
    line = sprintf("openb-node-%04d,%d,%d,%d,%s", i, g * 12000, g * 65536, g, model[rnd(4) + 1])
    print line > nf
    print line > gf
  }
  pf = dir "/openb_pod_list_default.csv"
  print "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time" > pf
  budget = gpus * 1000 * 0.9
  t = 0
  for (i = 0; i < tasks && budget > 0; i++) {
    k = rnd(8); spec = ""
    if (k == 0) { n = 0; m = 0 }
    else if (k <= 4) { n = 1; m = 100 * (rnd(9) + 1); if (rnd(4) == 0) spec = model[rnd(4) + 1] }
    else if (k <= 6) { n = 1; m = 1000 }
    else { n = 2 ^ (rnd(3) + 1); m = 1000 }
    if (n * m > budget) { n = 0; m = 0 }
    budget -= n * m
    t += rnd(1000) + 1
    printf "openb-pod-%04d,%d,%d,%d,%d,%s,LS,Running,%d,%d,%d\n", i, (rnd(8) + 1) * 1000, (rnd(8) + 1) * 2048, n, m, spec, t, t + 100000, t > pf
  }
}'
