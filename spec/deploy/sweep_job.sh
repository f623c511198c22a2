#!/usr/bin/env bash
# The policy lab's sweep beyond one machine (deploy/kustomize/policy-lab-sweep):
# the Indexed Job and the merge Job rendered with `kubectl kustomize` and
# checked (Indexed, completions = parallelism = the N of --shard, the shard
# index from $(JOB_COMPLETION_INDEX), the volumes the arguments name); then the
# rendered arguments themselves run here, one process per completion index, on
# a small openb trace written by the test (paths and seeds swapped for local
# ones), and the rendered merge command's report equals one process's report.
# Skipped (77) without kubectl or python3-yaml.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/deploy_lib.bash"
need_tools kubectl python3 jq
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is not installed (.ci/deps.sh installs it)"; exit 77; }
ROOT=$(pwd)
K=$ROOT/deploy/kustomize/policy-lab-sweep
kubectl kustomize "$K" > "$TMP/sweep.yaml" || { echo "FAIL: kubectl kustomize policy-lab-sweep"; exit 1; }
kubectl kustomize "$K/merge" > "$TMP/merge.yaml" || { echo "FAIL: kubectl kustomize policy-lab-sweep/merge"; exit 1; }

checks=$(python3 - "$TMP/sweep.yaml" "$TMP/merge.yaml" <<'PY'
import re, sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d)
merge = next(d for d in yaml.safe_load_all(open(sys.argv[2])) if d)
s = job["spec"]
c = s["template"]["spec"]["containers"][0]
shard = [a for a in c["args"] if a.startswith("--shard=")]
m = re.fullmatch(r"--shard=\$\(JOB_COMPLETION_INDEX\)/(\d+)", shard[0]) if len(shard) == 1 else None
mounts = {v["name"]: v["mountPath"] for v in c["volumeMounts"]}
claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in s["template"]["spec"]["volumes"]}
out = [a[len("--out="):] for a in c["args"] if a.startswith("--out=")]
mc = merge["spec"]["template"]["spec"]["containers"][0]
print(job["kind"], s["completionMode"], s["completions"] == s["parallelism"] == (int(m.group(1)) if m else -1),
      c["image"], out[0].startswith(mounts["results"] + "/") and "$(JOB_COMPLETION_INDEX)" in out[0],
      "openb:" + mounts["trace"] in c["args"], claims["results"] ==
      merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
      "--merge" in mc["args"][0], job["metadata"]["namespace"])
PY
)
expect_eq "rendered: an Indexed Job, completions = parallelism = shards, index from the env, the volumes" \
  "$checks" "Job Indexed True localhost/luasched:0.1.0 True True True True luasched"

# The rendered arguments, run here.
cd "$TMP" || exit 1
printf 'sn,cpu_milli,memory_mib,gpu,model\nn1,32000,131072,2,V100M16\nn2,16000,65536,1,T4\nn3,8000,32768,0,\n' > nodes.csv
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time\np1,4000,4096,1,1000,,1\np2,2000,2048,0,0,,2\np3,1000,1024,1,500,,3\np4,1000,1024,1,300,T4,4\n' > pods.csv
python3 - "$TMP/sweep.yaml" "$ROOT" "$TMP" > args.txt <<'PY'
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d)
root, tmp = sys.argv[2], sys.argv[3]
for a in job["spec"]["template"]["spec"]["containers"][0]["args"]:
    a = a.replace("openb:/data/openb", "openb:%s/nodes.csv,%s/pods.csv" % (tmp, tmp))
    a = a.replace("/usr/share/luasched/profiles", root + "/profiles").replace("/results", tmp)
    print("--seeds=2" if a.startswith("--seeds=") else a)
PY
n=$(grep -o -- '--shard=$(JOB_COMPLETION_INDEX)/[0-9]*' args.txt | cut -d/ -f2)
ok=yes
for ((i = 0; i < n; i++)); do
  mapfile -t args < <(sed "s/\$(JOB_COMPLETION_INDEX)/$i/g" args.txt)
  "$BIN" "${args[@]}" || ok="no: shard $i"
done
expect_eq "every completion index wrote its shard" "$ok $(ls shard-*.bin | wc -l)" "yes $n"
merge_cmd=$(python3 -c 'import sys, yaml; d = next(x for x in yaml.safe_load_all(open(sys.argv[1])) if x); print(d["spec"]["template"]["spec"]["containers"][0]["args"][0])' "$TMP/merge.yaml")
(cd "$TMP" && PATH="$(dirname "$BIN"):$PATH" sh -c "${merge_cmd//\/results/$TMP}")
expect_eq "the merge job's command wrote both reports" "$(test -s report.json && test -s report.html && echo yes)" "yes"
mapfile -t args < <(grep -v -- '--shard=\|--out=' args.txt)
"$BIN" "${args[@]}" --output json > one.json
jq -S 'del(.policies[].runs[].seconds, .policies[].runs[].cpuSeconds, .policies[].runs[].metricCpuSeconds)' report.json > merged.cmp
jq -S 'del(.policies[].runs[].seconds, .policies[].runs[].cpuSeconds, .policies[].runs[].metricCpuSeconds)' one.json > one.cmp
expect_eq "the merged report is one process's report" "$(diff merged.cmp one.cmp && echo same)" "same"
exit $((failures > 0))
