#!/bin/sh
# bench/scaling.sh: the scaling curve (bench/README.md "Scaling"). Runs each
# bench/scaling/ workload ROUNDS times, the workloads alternating within each
# round, and prints per workload the median pods/s, the median wall time and
# CPU time per measured pod (CPU time is the steadier figure on a shared
# machine) and the largest peak RSS.
#
#   bench/scaling.sh [LUASCHED] [ROUNDS] [WORKLOAD.yaml...]
#
# LUASCHED defaults to build-rel/luasched (a Release build), ROUNDS to 3, the
# workloads to every file in bench/scaling/ (smallest first).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build-rel/luasched}
rounds=${2:-3}
[ $# -ge 2 ] && shift 2 || shift $#
if [ $# -eq 0 ]; then
    set -- "$here/scaling/basic_5000n_1000.yaml" "$here/scaling/basic_5000n_10000.yaml" \
        "$here/scaling/basic_5000n_50000.yaml" "$here/scaling/basic_5000n_150000.yaml" \
        "$here/scaling/basic_15000n_50000.yaml" "$here/scaling/unschedulable_20000_waiting.yaml"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
    for w in "$@"; do
        "$bin" bench "$w" --output json >>"$out"
    done
    r=$((r + 1))
done
luajit - "$out" <<'LUA'
local rows, order = {}, {}
for line in io.lines(arg[1]) do
  local name = line:match('"workload":"([^"]+)"')
  local function num(k) return tonumber(line:match('"' .. k .. '":([-0-9.e+]+)')) end
  if not rows[name] then rows[name] = { rates = {}, cpus = {}, rss = 0 }; order[#order + 1] = name end
  local r = rows[name]
  r.nodes, r.init, r.measured = num("nodes"), num("initPods"), num("measuredPods")
  r.rates[#r.rates + 1] = num("average")
  r.cpus[#r.cpus + 1] = num("cpuSeconds") * 1e6 / num("measuredPods")
  r.rss = math.max(r.rss, num("peakRSSBytes"))
end
local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) / 2] or (t[n / 2] + t[n / 2 + 1]) / 2
end
print(string.format("%-48s %6s %7s %8s %9s %10s %10s %9s %5s", "workload", "nodes", "running", "measured",
  "pods/s", "wall us/pod", "CPU us/pod", "peak MiB", "runs"))
for _, name in ipairs(order) do
  local r = rows[name]
  local rate = median(r.rates)
  print(string.format("%-48s %6d %7d %8d %9.0f %11.1f %10.1f %9.1f %5d", name, r.nodes, r.init, r.measured, rate,
    1e6 / rate, median(r.cpus), r.rss / 1048576, #r.rates))
end
LUA
