#!/bin/bash
# bench/alternate.sh: compares Release builds of luasched on a shared machine by
# alternating them. ROUNDS times, every workload is run once by every build, in
# turn; one line per run: round, label, workload, pods/s, the measured part's
# CPU seconds (cpuSeconds, "-" if the build does not report it), the whole
# process's user CPU seconds (/usr/bin/time %U) and the load average.
#
#   bench/alternate.sh ROUNDS OUT.txt LABEL=BUILD/luasched... [-- WORKLOAD.yaml...]
#
# Workloads default to SchedulingBasic, TopologySpreading and
# SchedulingPodAffinity. Take medians per label and workload (single runs swing by
# tens of percent when other builds share the cores).
set -u
if [ $# -lt 3 ]; then
  echo "usage: bench/alternate.sh ROUNDS OUT.txt LABEL=BINARY... [-- WORKLOAD.yaml...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1 out=$2
shift 2
builds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do builds+=("$1"); shift; done
[ $# -gt 0 ] && shift
workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=("$here/scheduling_basic.yaml" "$here/topology_spreading.yaml" "$here/scheduling_pod_affinity.yaml")
fi
json=$(mktemp) timef=$(mktemp)
trap 'rm -f "$json" "$timef"' EXIT
for r in $(seq 1 "$rounds"); do
  for w in "${workloads[@]}"; do
    for b in "${builds[@]}"; do
      label=${b%%=*} bin=${b#*=}
      /usr/bin/time -f "%U" -o "$timef" "$bin" bench "$w" --output json > "$json" 2>/dev/null
      user=$(tail -1 "$timef")
      figures=$(jq -r '"\(.average | floor) \(.cpuSeconds // "-")"' "$json" 2>/dev/null || echo "- -")
      echo "$r $label $(basename "$w" .yaml) $figures $user $(cut -d' ' -f1 /proc/loadavg)" >> "$out"
    done
  done
done
