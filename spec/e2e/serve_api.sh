#!/usr/bin/env bash
# End to end: `luasched simulate --serve` serves examples/demo-cluster.yaml over
# the Kubernetes API. curl (with the generated CA and token from the written
# kubeconfig) lists with selectors and pages, watches, binds (once, twice, a
# missing pod), patches status and updates with a stale resourceVersion;
# kubectl lists, creates and deletes. On SIGTERM the record is printed, and the
# refused double-binding makes the exit status 1. A second, clean run exits 0.
. "$(dirname "$0")/lib.bash"
require_tool curl curl
require_tool jq jq
require_tool kubectl kubernetes-client

SERVER_PID=

# start_server KUBECONFIG OUT ERR [FLAGS...]: sets SERVER_PID, URL, CA, TOKEN.
start_server() {
  local kc=$1 out=$2 err=$3
  shift 3
  rm -f "$err"
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$kc" "$@" examples/demo-cluster.yaml >"$out" 2>"$err" &
  SERVER_PID=$!
  wait_until 60 grep -qs '^serving the cluster at' "$err" || { echo "FAIL: not serving within 60 s"; cat "$err"; exit 1; }
  URL=$(sed -n 's/^serving the cluster at \(https:[^ ]*\) .*/\1/p' "$err")
  TOKEN=$(sed -n 's/^    token: //p' "$kc")
  CA=$TMP/ca.pem
  sed -n 's/^    certificate-authority-data: //p' "$kc" | base64 -d >"$CA"
}

api() {   # api METHOD PATH [BODY [CONTENT-TYPE]]: prints the body, then the status code on its own line
  local args=(-s --cacert "$CA" -H "Authorization: Bearer $TOKEN" -X "$1" -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
  curl "${args[@]}" "$URL$2"
}
code_of() { tail -n1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }

start_server "$TMP/kc" "$TMP/out" "$TMP/err" --watch-history 8
FIRST_URL=$URL
expect_contains "startup line" "$(cat "$TMP/err")" "serving the cluster at https://127.0.0.1:"
expect_contains "startup line names the kubeconfig" "$(cat "$TMP/err")" "(kubeconfig: $TMP/kc)"

# --- auth and discovery
r=$(curl -s --cacert "$CA" -w '\n%{http_code}' "$URL/api/v1/pods")
expect_eq "no token: 401" "$(code_of "$r")" "401"
expect_eq "no token: Status reason" "$(body_of "$r" | jq -r .reason)" "Unauthorized"
expect_eq "/version" "$(curl -s --cacert "$CA" "$URL/version" | jq -r '[.major, .minor, .gitVersion] | join(" ")')" "1 37 v1.37.0-luasched"
expect_eq "/healthz" "$(curl -s --cacert "$CA" "$URL/healthz")" "ok"
expect_eq "/api/v1 short names" \
  "$(api GET /api/v1 | body_of "$(cat)" | jq -r '[.resources[] | select(.shortNames) | .shortNames[0]] | join(",")')" \
  "po,no,ns,ev,svc,rc,pvc,pv"
r=$(api GET /api/v1/frobs)
expect_eq "unknown resource: 404" "$(code_of "$r")" "404"

# --- list, pages, selectors
r=$(api GET /api/v1/pods)
LIST_RV=$(body_of "$r" | jq -r .metadata.resourceVersion)
expect_eq "list all pods (namespace/name order)" "$(body_of "$r" | jq -r '[.items[] | .metadata.namespace + "/" + .metadata.name] | join(" ")')" \
  "ml/batch-huge ml/trainer ops/agent ops/other-scheduler shop/cache-0 shop/checkout shop/db-0 shop/web-0 shop/web-1"
p1=$(api GET '/api/v1/pods?limit=4' | sed '$d')
tok=$(jq -r .metadata.continue <<<"$p1")
p2=$(api GET "/api/v1/pods?limit=4&continue=$tok" | sed '$d')
tok2=$(jq -r .metadata.continue <<<"$p2")
p3=$(api GET "/api/v1/pods?limit=4&continue=$tok2" | sed '$d')
expect_eq "pages of 4" "$(jq -r '[.items[].metadata.name] | join(",")' <<<"$p1") $(jq -r '[.items[].metadata.name] | join(",")' <<<"$p2") $(jq -r '[.items[].metadata.name] | join(",")' <<<"$p3")" \
  "batch-huge,trainer,agent,other-scheduler cache-0,checkout,db-0,web-0 web-1"
expect_eq "last page has no continue" "$(jq -r '.metadata.continue // "none"' <<<"$p3")" "none"
expect_eq "pages carry the first page's resourceVersion" "$(jq -r .metadata.resourceVersion <<<"$p3")" "$LIST_RV"
r=$(api GET '/api/v1/pods?continue=bm90IGEgdG9rZW4')
expect_eq "bad continue token: 410" "$(code_of "$r")" "410"
r=$(api GET '/api/v1/namespaces/shop/pods?fieldSelector=spec.nodeName%3D,status.phase!%3DFailed')
expect_eq "field selector: unbound shop pods" "$(body_of "$r" | jq -r '[.items[].metadata.name] | join(",")')" "checkout,web-0,web-1"
r=$(api GET '/api/v1/nodes?labelSelector=topology.kubernetes.io/zone%20in%20(zone-a,zone-c),kubernetes.io/hostname!%3Dnode-c2')
expect_eq "label selector: in and !=" "$(body_of "$r" | jq -r '[.items[].metadata.name] | join(",")')" "node-a1,node-a2,node-c1"
r=$(api GET '/api/v1/pods?fieldSelector=spec.bogus%3Dx')
expect_eq "unsupported field label: 400" "$(code_of "$r") $(body_of "$r" | jq -r .message)" "400 field label not supported: spec.bogus"

# --- watch from the list's resourceVersion (unbound pods only), in the background
curl -sN --cacert "$CA" -H "Authorization: Bearer $TOKEN" \
  "$URL/api/v1/pods?watch=true&resourceVersion=$LIST_RV&fieldSelector=spec.nodeName%3D&timeoutSeconds=300" >"$TMP/watch" &
WATCH_PID=$!
sleep 0.3

# --- binding
bind_ns() { api POST "/api/v1/namespaces/$1/pods/$2/binding" "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$2\"},\"target\":{\"kind\":\"Node\",\"name\":\"$3\"}}"; }
bind() { api POST "/api/v1/namespaces/shop/pods/$1/binding" "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\"},\"target\":{\"kind\":\"Node\",\"name\":\"$2\"}}"; }
r=$(bind web-0 node-a1)
expect_eq "bind web-0: 201" "$(code_of "$r")" "201"
r=$(bind web-0 node-b2)
expect_eq "bind web-0 again: 409" "$(code_of "$r")" "409"
expect_eq "double binding message" "$(body_of "$r" | jq -r .message)" \
  'Operation cannot be fulfilled on pods/binding "web-0": pod web-0 is already assigned to node "node-a1"'
r=$(bind nope node-a1)
expect_eq "bind a missing pod: 404" "$(code_of "$r") $(body_of "$r" | jq -r .message)" '404 pods "nope" not found'
r=$(api GET /api/v1/namespaces/shop/pods/web-0)
expect_eq "bound pod: nodeName and PodScheduled" \
  "$(body_of "$r" | jq -r '.spec.nodeName + " " + (.status.conditions[] | select(.type=="PodScheduled") | .status)')" "node-a1 True"

# Ten schedulers race to bind trainer: exactly one wins.
racers=()
for i in $(seq 10); do
  bind_ns ml trainer node-b1 >"$TMP/race.$i" &
  racers+=($!)
done
wait "${racers[@]}"
expect_eq "racing bindings: one 201, nine 409" \
  "$(for f in "$TMP"/race.*; do code_of "$(cat "$f")"; done | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')" \
  "1x201 9x409 "

r=$(api GET /luasched/v1/record)
expect_eq "record over HTTP: web-0 bound once, one refusal; not ok" \
  "$(body_of "$r" | jq -r '(.pods[] | select(.name=="web-0") | "\(.node) \(.binds) \(.refused)") + " \(.ok)"')" "node-a1 1 1 false"

# --- status patch (strategic: conditions merge by type) and a stale update
sp='{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"MSG"}]}}'
api PATCH /api/v1/namespaces/shop/pods/web-1/status "${sp/MSG/first}" application/strategic-merge-patch+json >/dev/null
r=$(api PATCH /api/v1/namespaces/shop/pods/web-1/status "${sp/MSG/second}" application/strategic-merge-patch+json)
expect_eq "status patch merges conditions by type" \
  "$(body_of "$r" | jq -r '[.status.conditions[] | .type + "=" + .status + ":" + .message] | join(",")')" "PodScheduled=False:second"
old=$(body_of "$r" | jq -c '.metadata.resourceVersion = "1" | .metadata.labels = {"x":"y"}')
r=$(api PUT /api/v1/namespaces/shop/pods/web-1 "$old")
expect_eq "update with a stale resourceVersion: 409 Conflict" "$(code_of "$r") $(body_of "$r" | jq -r .reason)" "409 Conflict"
r=$(api GET '/api/v1/pods?watch=1&resourceVersion=1')
expect_eq "watch from a resourceVersion out of the history: ERROR 410" \
  "$(body_of "$r" | jq -r '.type + " " + (.object.code|tostring) + " " + .object.reason')" "ERROR 410 Expired"

# --- leader election and events (API groups)
L=/apis/coordination.k8s.io/v1/namespaces/kube-system/leases
lease='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-scheduler","namespace":"kube-system"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}'
r=$(api GET "$L/kube-scheduler")
expect_eq "no lease yet: 404" "$(code_of "$r") $(body_of "$r" | jq -r .message)" '404 leases.coordination.k8s.io "kube-scheduler" not found'
r=$(api POST "$L" "$lease")
expect_eq "create the lease: 201" "$(code_of "$r")" "201"
renewed=$(body_of "$r" | jq -c '.spec.holderIdentity = "b"')
r=$(api PUT "$L/kube-scheduler" "$renewed")
expect_eq "take the lease with its resourceVersion: 200" "$(code_of "$r") $(body_of "$r" | jq -r .spec.holderIdentity)" "200 b"
r=$(api PUT "$L/kube-scheduler" "$renewed")
expect_eq "a second taker with the old resourceVersion: 409" "$(code_of "$r")" "409"
ev='{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"generateName":"web-1.","namespace":"shop"},"reason":"FailedScheduling","type":"Warning","regarding":{"kind":"Pod","name":"web-1","namespace":"shop"},"note":"0/6 nodes are available"}'
r=$(api POST /apis/events.k8s.io/v1/namespaces/shop/events "$ev")
expect_eq "events.k8s.io Event: 201 with a generated name" "$(code_of "$r") $(body_of "$r" | jq -r '.metadata.name | startswith("web-1.")')" "201 true"

# --- kubectl
K=(kubectl --kubeconfig "$TMP/kc")
expect_eq "kubectl get pods -A" "$("${K[@]}" get pods -A --no-headers | awk '{print $1 "/" $2 " " $4 " " $7}')" \
"ml/batch-huge Pending <none>
ml/trainer Pending node-b1
ops/agent Pending <none>
ops/other-scheduler Pending <none>
shop/cache-0 Running node-a1
shop/checkout Pending <none>
shop/db-0 Running node-a2
shop/web-0 Pending node-a1
shop/web-1 Pending <none>"
expect_eq "kubectl get nodes" "$("${K[@]}" get nodes --no-headers | awk '{print $1 " " $2}' | tr '\n' ' ')" \
  "node-a1 Ready node-a2 Ready node-b1 Ready node-b2 Ready node-c1 Ready node-c2 Ready,SchedulingDisabled "
cat >"$TMP/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: shop}
spec:
  priorityClassName: critical
  containers: [{name: c, image: nginx}]
YAML
expect_eq "kubectl create -f" "$("${K[@]}" create -f "$TMP/pod.yaml" 2>&1)" "pod/extra created"
expect_eq "created pod admitted (priority, policy, scheduler, phase)" \
  "$("${K[@]}" get pod extra -n shop -o jsonpath='{.spec.priority} {.spec.preemptionPolicy} {.spec.schedulerName} {.status.phase}')" \
  "1000 PreemptLowerPriority default-scheduler Pending"
expect_contains "kubectl delete --dry-run=server is refused, not applied" \
  "$("${K[@]}" delete pod extra -n shop --dry-run=server 2>&1)" "dryRun is not supported"
expect_eq "kubectl delete pod" "$("${K[@]}" delete pod extra -n shop 2>&1)" 'pod "extra" deleted'
expect_eq "deleted pod is gone" "$("${K[@]}" get pod extra -n shop 2>&1)" 'Error from server (NotFound): pods "extra" not found'
WATCH_EXPECT="DELETED web-0
DELETED trainer
MODIFIED web-1
MODIFIED web-1
ADDED extra
DELETED extra"

# the watch is ended once it has seen the last event (its timeoutSeconds is
# far: the kubectl calls above take seconds each on a loaded machine)
wait_until 120 grep -q '"DELETED".*"name":"extra"' "$TMP/watch"
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID"
expect_eq "watch: a bound pod leaves the spec.nodeName= selection; create and delete seen" \
  "$(jq -r '.type + " " + .object.metadata.name' "$TMP/watch")" "$WATCH_EXPECT"

# --- stop: the record, and exit 1 for the refused double binding
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 60
rc=$?
SERVER_PID=
expect_eq "exit status after a refused double binding" "$rc" "1"
expect_contains "record: bound pod" "$(cat "$TMP/out")" "shop/web-0: bound to node-a1"
expect_contains "record: refused binding" "$(cat "$TMP/out")" \
  'shop/web-0: 1 binding refused: already assigned to node "node-a1" (first refused: to node-b2)'
expect_contains "record: the race's winner" "$(cat "$TMP/out")" "ml/trainer: bound to node-b1"
expect_contains "record: the race's losers" "$(cat "$TMP/out")" "ml/trainer: 9 bindings refused"
expect_contains "record: running pod" "$(cat "$TMP/out")" "shop/db-0: already running on node-a2"
expect_contains "record: pending pod" "$(cat "$TMP/out")" "shop/web-1: pending"
expect_contains "record: summary" "$(cat "$TMP/out")" "summary: 6 nodes,"
expect_contains "record: bindings" "$(cat "$TMP/out")" "bindings: 2 accepted, 10 refused"
expect_eq "stderr: the startup line and the violation, nothing else" "$(cat "$TMP/err")" \
"serving the cluster at $FIRST_URL (kubeconfig: $TMP/kc)
luasched simulate: invariant violated: a pod was bound twice, to a missing node, or a binding was attempted on a pod that was already bound (see the record)"

# --- a clean run: one binding, exit 0, fixed token
start_server "$TMP/kc2" "$TMP/out2" "$TMP/err2" --token secret
expect_eq "--token is written to the kubeconfig" "$TOKEN" "secret"
r=$(bind checkout node-a1)
expect_eq "bind checkout: 201" "$(code_of "$r")" "201"
kill -INT "$SERVER_PID"
wait_exit "$SERVER_PID" 60
rc=$?
SERVER_PID=
expect_eq "clean run exit status" "$rc" "0"
expect_eq "clean run record" "$(cat "$TMP/out2")" "shop/db-0: already running on node-a2
shop/cache-0: already running on node-a1
shop/web-0: pending
shop/web-1: pending
ml/trainer: pending
shop/checkout: bound to node-a1
ops/agent: pending
ml/batch-huge: pending
ops/other-scheduler: pending
summary: 6 nodes, 9 pods: 1 bound, 6 pending, 2 already running, 0 deleted; bindings: 1 accepted, 0 refused"
expect_eq "stderr holds only the startup line" "$(cat "$TMP/err2")" \
  "serving the cluster at $URL (kubeconfig: $TMP/kc2)"

[ "$failures" -eq 0 ]
