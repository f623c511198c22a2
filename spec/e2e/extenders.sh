#!/usr/bin/env bash
# HTTP scheduler extenders in `luasched simulate`, against the test extender
# (spec/extender/test_extender.c, its rules in its header): every verb
# (filter, prioritize, preempt, bind) in upstream's wire format, once per
# pod per extension point; nodeCacheCapable; scores scaled by
# weight * MaxNodeScore / MaxExtenderPriority; FailedNodes and
# FailedAndUnresolvableNodes in the FitError; failures (an Error in the
# answer, HTTP 500, no server, a timeout) with upstream's messages, and what
# `ignorable` changes; managedResources and ignoredByScheduler; the
# configuration written back.
. "$(dirname "$0")/lib.bash"
EXT=${LUASCHED_TEST_EXTENDER:?LUASCHED_TEST_EXTENDER must point to the test extender}
EXT_PID=
TLS_PID=
NAMED_PID=
MTLS_PID=

"$EXT" "$TMP/ext.port" "$TMP/ext.log" &
EXT_PID=$!
# the same over HTTPS, with a self-signed certificate for 127.0.0.1
"$EXT" "$TMP/tls.port" "$TMP/ext.log" --tls "$TMP/tls.crt" &
TLS_PID=$!
# and with a certificate for the name extender.test only (tlsConfig.serverName)
"$EXT" "$TMP/named.port" "$TMP/ext.log" --tls "$TMP/named.crt" extender.test &
NAMED_PID=$!
# and one that wants a client certificate (made in $TMP: client.crt, client.key)
TEST_EXTENDER_CLIENT_CERT_DIR=$TMP "$EXT" "$TMP/mtls.port" "$TMP/ext.log" --tls "$TMP/mtls.crt" &
MTLS_PID=$!
for _ in $(seq 1 600); do   # up to 60 s
  [ -s "$TMP/ext.port" ] && [ -s "$TMP/tls.port" ] && [ -s "$TMP/named.port" ] && [ -s "$TMP/mtls.port" ] && break
  sleep 0.1
done
MTLS_URL=https://127.0.0.1:$(cat "$TMP/mtls.port")
NAMED_URL=https://127.0.0.1:$(cat "$TMP/named.port")
URL=http://127.0.0.1:$(cat "$TMP/ext.port")
TLS_URL=https://127.0.0.1:$(cat "$TMP/tls.port")

# config ENTRY...: a configuration whose extenders are the given YAML flow maps
config() {
  { echo "apiVersion: kubescheduler.config.k8s.io/v1"
    echo "kind: KubeSchedulerConfiguration"
    echo "extenders:"
    for e in "$@"; do echo "- $e"; done; } > "$TMP/cfg.yaml"
}
# sim CLUSTER: simulate with $TMP/cfg.yaml, JSON; the extender's log starts empty
sim() {
  : > "$TMP/ext.log"
  : > "$TMP/ext.log.bodies"
  local rc=0
  # the cases study extender failures on purpose: an attempt ending in Error would exit 3
  "$BIN" simulate "$TMP/$1" --config "$TMP/cfg.yaml" --output json --allow-plugin-errors 2> "$TMP/sim.err" || rc=$?
  if [ "$rc" -ne 0 ] || grep -q Sanitizer "$TMP/sim.err"; then
    { echo "simulate $1 with $(tail -n +4 "$TMP/cfg.yaml") exited $rc"; cat "$TMP/sim.err"; } >> "$TMP/sim.failures"
  fi
}
pod_field() { jq -r --arg p "$2" ".pods[] | select(.name == \$p) | $3" <<< "$1"; }

node() { # node NAME CPU [EXTRA_ALLOCATABLE]
  echo "- {apiVersion: v1, kind: Node, metadata: {name: $1}, status: {allocatable: {cpu: \"$2\", memory: 8Gi, pods: \"110\"${3:-}}}}"
}
pod() { # pod NAME CPU [PRIORITY] [NODE] [EXTRA_REQUESTS]
  echo "- apiVersion: v1"
  echo "  kind: Pod"
  echo "  metadata: {name: $1, namespace: default, uid: uid-$1}"
  echo "  spec:"
  [ -n "${3:-}" ] && echo "    priority: $3"
  [ -n "${4:-}" ] && echo "    nodeName: $4"
  echo "    containers: [{name: c, image: i, resources: {requests: {cpu: \"$2\", memory: 1Gi${5:-}}}}]"
}
cluster() { # cluster FILE LINES...
  local f=$1; shift
  { echo "apiVersion: v1"; echo "kind: List"; echo "items:"; printf '%s\n' "$@"; } > "$TMP/$f"
}

cluster five.yaml "$(node n1 4)" "$(node n2 4)" "$(node n3 4)" "$(node bad4 4)" "$(node gone5 4)" "$(pod p1 1 '' '' '')"

# ---- filter, prioritize and bind, once each per pod
config "{urlPrefix: \"$URL/\", filterVerb: filter, prioritizeVerb: prioritize, bindVerb: bind, weight: 5}"
out=$(sim five.yaml)
expect_eq "p1 goes to the node the extender scores highest" "$(pod_field "$out" p1 .node)" "n3"
expect_eq "one call per verb, the filter with all nodes, prioritize with the 3 it kept" "$(cat "$TMP/ext.log")" \
"filter default/p1 nodes=5
prioritize default/p1 nodes=3
bind default/p1 n3"
# the plugins score the three empty nodes alike; the extender adds
# score * weight * (100 / 10): n1 1*5*10, n2 2*5*10, n3 3*5*10
t1=$(pod_field "$out" p1 '.totalScore.n1'); t2=$(pod_field "$out" p1 '.totalScore.n2'); t3=$(pod_field "$out" p1 '.totalScore.n3')
expect_eq "extender scores scaled by weight * MaxNodeScore / MaxExtenderPriority" "$((t2 - t1)) $((t3 - t1))" "50 100"
expect_eq "JSON: the extender's verdicts beside the plugins'" \
  "$(pod_field "$out" p1 '[.filter.n1.Extender, .filter.bad4.Extender, .filter.gone5.Extender] | join("|")')" \
  "passed|extender: no room for the pod|extender: node is gone"
expect_eq "JSON: the extender's raw and final score, named by its urlPrefix" \
  "$(pod_field "$out" p1 "[.score.n3[\"$URL/\"], .finalScore.n3[\"$URL/\"]] | join(\" \")")" "3 150"
: > "$TMP/ext.log"
explained=$("$BIN" explain "$TMP/five.yaml" p1 --config "$TMP/cfg.yaml" 2>&1)
expect_contains "explain: a node the extender rejected" "$explained" "bad4                     rejected by Extender: extender: no room for the pod"
expect_contains "explain: the extender's score in the total" "$explained" "$URL/ 3 -> 150; total 602"
body() { sed -n "s#^/$1 ##p" "$TMP/ext.log.bodies" | head -1; }
expect_eq "ExtenderArgs: Pod as received, Nodes as a NodeList, NodeNames null" \
  "$(body filter | jq -c '[.Pod.metadata.name, .Pod.spec.containers[0].resources.requests.cpu, (.Nodes | keys), [.Nodes.items[].metadata.name], .NodeNames]')" \
  '["p1","1",["items","metadata"],["n1","n2","n3","bad4","gone5"],null]'
expect_eq "ExtenderBindingArgs" "$(body bind)" '{"PodName":"p1","PodNamespace":"default","PodUID":"uid-p1","Node":"n3"}'
# BalancedAllocation at v1.36: S with the pod int((1 - |1/4 - 1/8| / 2) * 100) = 93, without 100:
# 50 + (50 + 93 - 100) / 2 = 71
expect_eq "plugin part: TaintToleration 100 * 3 + NodeResourcesFit 81 + BalancedAllocation 71, plus 50 on n1" "$t1" "502"

# ---- HTTPS: tlsConfig's CA (file or data), enableHTTPS without a CA (not verified, as upstream)
ca_data=$(base64 -w0 < "$TMP/tls.crt")
for tls in "enableHTTPS: true, tlsConfig: {caFile: \"$TMP/tls.crt\"}" "tlsConfig: {caData: $ca_data}" \
           "enableHTTPS: true" "tlsConfig: {insecure: true}"; do
  config "{urlPrefix: \"$TLS_URL\", filterVerb: filter, prioritizeVerb: prioritize, weight: 5, $tls}"
  out=$(sim five.yaml)
  expect_eq "HTTPS with $(cut -c1-40 <<< "$tls"): p1 on n3" "$(pod_field "$out" p1 .node) $(wc -l < "$TMP/ext.log")" "n3 2"
done
config "{urlPrefix: \"$NAMED_URL\", filterVerb: filter, tlsConfig: {caFile: \"$TMP/named.crt\", serverName: extender.test}}"
out=$(sim five.yaml)
expect_eq "serverName: the certificate of extender.test is checked against that name" \
  "$(pod_field "$out" p1 '.attempts[0].result') $(cat "$TMP/ext.log")" "bound filter default/p1 nodes=5"
config "{urlPrefix: \"$NAMED_URL\", filterVerb: filter, tlsConfig: {caFile: \"$TMP/named.crt\"}}"
out=$(sim five.yaml)
expect_contains "without serverName the same certificate does not name 127.0.0.1" "$(pod_field "$out" p1 .message)" \
  "Post \"$NAMED_URL/filter\": "
config "{urlPrefix: \"$MTLS_URL\", filterVerb: filter, tlsConfig: {caFile: \"$TMP/mtls.crt\", certFile: \"$TMP/client.crt\", keyFile: \"$TMP/client.key\"}}"
out=$(sim five.yaml)
expect_eq "client certificate from certFile/keyFile" "$(pod_field "$out" p1 '.attempts[0].result')" "bound"
config "{urlPrefix: \"$MTLS_URL\", filterVerb: filter, tlsConfig: {caFile: \"$TMP/mtls.crt\", certData: $(base64 -w0 < "$TMP/client.crt"), keyData: $(base64 -w0 < "$TMP/client.key")}}"
out=$(sim five.yaml)
expect_eq "client certificate from certData/keyData" "$(pod_field "$out" p1 '.attempts[0].result')" "bound"
config "{urlPrefix: \"$MTLS_URL\", filterVerb: filter, tlsConfig: {caFile: \"$TMP/mtls.crt\"}}"
out=$(sim five.yaml)
expect_eq "no client certificate: refused" "$(pod_field "$out" p1 .message)" \
  "failed filter with extender at URL $MTLS_URL/filter, code 403"
config "{urlPrefix: \"$TLS_URL\", filterVerb: filter}"
out=$(sim five.yaml)
expect_contains "HTTPS without enableHTTPS or a CA: the certificate is verified, and refused" \
  "$(pod_field "$out" p1 .message)" "Post \"$TLS_URL/filter\": "

# ---- nodeCacheCapable: names only, same decisions
config "{urlPrefix: \"$URL\", filterVerb: filter, prioritizeVerb: prioritize, weight: 1, nodeCacheCapable: true}"
out=$(sim five.yaml)
expect_eq "nodeCacheCapable: p1 on n3" "$(pod_field "$out" p1 .node)" "n3"
expect_eq "nodeCacheCapable: Nodes null, NodeNames the kept ones for prioritize" \
  "$(body prioritize | jq -c '[.Nodes, .NodeNames]')" '[null,["n1","n2","n3"]]'
expect_eq "nodeCacheCapable: NodeNames sent and answered" "$(cat "$TMP/ext.log")" \
"filter default/p1 nodes=5
prioritize default/p1 nodes=3"

# ---- every node rejected: FailedNodes and FailedAndUnresolvableNodes in the FitError
cluster rejected.yaml "$(node bad1 4)" "$(node gone2 4)" "$(pod p1 1 '' '' '')"
config "{urlPrefix: \"$URL\", filterVerb: filter}"
out=$(sim rejected.yaml)
expect_eq "the FitError counts the extender's reasons; preemption can only try bad1" "$(pod_field "$out" p1 .message)" \
"0/2 nodes are available: 1 extender: no room for the pod, 1 extender: node is gone. no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."

# ---- a pod the extender rejected is retried on any cluster event (upstream's
# "Extender" in UnschedulablePlugins), not at the 5-minute flush
{ cat "$TMP/rejected.yaml"
  echo "---"
  echo "{apiVersion: luasched.io/v1alpha1, kind: Timeline, steps: [{at: 60s, create: {apiVersion: v1, kind: Node, metadata: {name: n9}, status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}}]}"
} > "$TMP/rejected-then-node.yaml"
out=$(sim rejected-then-node.yaml)
expect_eq "a node added at 60 s takes the pod the extender rejected, at 60 s" \
  "$(pod_field "$out" p1 '[.node, (.attempts | last | .time)] | join(" ")')" "n9 60"

# ---- failures, not ignorable: the attempt is a SchedulerError with upstream's message
config "{urlPrefix: \"$URL\", filterVerb: filter-error}"
out=$(sim five.yaml)
expect_eq "an Error in ExtenderFilterResult fails the attempt" "$(pod_field "$out" p1 .message)" \
  "extender: filter failed on purpose"
config "{urlPrefix: \"$URL\", filterVerb: status500}"
out=$(sim five.yaml)
expect_eq "HTTP 500 fails the attempt" "$(pod_field "$out" p1 .message)" \
  "failed status500 with extender at URL $URL/status500, code 500"
config "{urlPrefix: \"http://127.0.0.1:1\", filterVerb: filter}"
out=$(sim five.yaml)
expect_contains "no server: Go's client error" "$(pod_field "$out" p1 .message)" 'Post "http://127.0.0.1:1/filter": '
config "{urlPrefix: \"$URL\", filterVerb: slow, httpTimeout: 300ms}"
start=$SECONDS
out=$(sim five.yaml)
expect_eq "a timeout fails the attempt" "$(pod_field "$out" p1 .attempts[0].result)" "error"
expect_contains "the timeout's message" "$(pod_field "$out" p1 .message)" \
  "Post \"$URL/slow\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"

# ---- the same, ignorable: the extender is skipped and the pod is placed
for verb in filter-error status500 slow; do
  config "{urlPrefix: \"$URL\", filterVerb: $verb, httpTimeout: 300ms, ignorable: true}"
  out=$(sim five.yaml)
  expect_eq "ignorable $verb: p1 bound at the first attempt" "$(pod_field "$out" p1 '.attempts[0].result')" "bound"
done
config "{urlPrefix: \"http://127.0.0.1:1\", filterVerb: filter, ignorable: true}" \
       "{urlPrefix: \"$URL\", filterVerb: filter}"
out=$(sim five.yaml)
expect_eq "an unreachable ignorable extender is skipped, the next one filters" \
  "$(pod_field "$out" p1 '.node') $(cat "$TMP/ext.log")" "$(pod_field "$out" p1 '.node') filter default/p1 nodes=5"
case "$(pod_field "$out" p1 .node)" in bad4|gone5|null) echo "FAIL: p1 placed on a rejected node"; failures=$((failures + 1)) ;; esac

# ---- a failing prioritize gives no score and does not fail the pod
config "{urlPrefix: \"$URL\", prioritizeVerb: status500, weight: 1}"
out=$(sim five.yaml)
t1=$(pod_field "$out" p1 '.totalScore.n1'); t3=$(pod_field "$out" p1 '.totalScore.n3')
expect_eq "prioritize failure: scheduled, no extender score" "$(pod_field "$out" p1 '.attempts[0].result') $t1 $t3" "bound 452 452"

# ---- bind refused by the extender
cluster bindfail.yaml "$(node n1 4)" "$(pod bindfail 1 '' '' '')"
config "{urlPrefix: \"$URL\", bindVerb: bind}"
out=$(sim bindfail.yaml)
expect_eq "a refused binding fails the attempt with the extender's Error" \
  "$(pod_field "$out" bindfail '.attempts[0].result') $(pod_field "$out" bindfail '.message')" \
  "error extender: binding refused"

# ---- managedResources: only pods that ask for one are sent
cluster managed.yaml "$(node n1 4 ', example.com/gpu: "2"')" "$(node bad2 4 ', example.com/gpu: "2"')" \
  "$(pod plain 1 '' '' '')" "$(pod gpu 1 '' '' ', example.com/gpu: "1"')"
config "{urlPrefix: \"$URL\", filterVerb: filter, managedResources: [{name: example.com/gpu}]}"
out=$(sim managed.yaml)
expect_eq "only the pod asking for example.com/gpu goes to the extender" "$(cat "$TMP/ext.log")" "filter default/gpu nodes=2"
expect_eq "and the extender keeps it off bad2" "$(pod_field "$out" gpu .node)" "n1"
cluster ignored.yaml "$(node n1 4)" "$(pod foo 1 '' '' ', example.com/foo: "1"')"
config "{urlPrefix: \"$URL\", filterVerb: filter, managedResources: [{name: example.com/foo, ignoredByScheduler: true}]}"
out=$(sim ignored.yaml)
expect_eq "ignoredByScheduler: NodeResourcesFit does not count example.com/foo" "$(pod_field "$out" foo .node)" "n1"
config "{urlPrefix: \"$URL\", filterVerb: filter, managedResources: [{name: example.com/foo}]}"
out=$(sim ignored.yaml)
expect_contains "without it the node has no example.com/foo" "$(pod_field "$out" foo .message)" "Insufficient example.com/foo"

# ---- preemption: the extender drops keep2, so the victim is on n1
cluster preempt.yaml "$(node n1 2)" "$(node keep2 2)" "$(pod v1 2 1 n1 '')" "$(pod v2 2 1 keep2 '')" \
  "$(pod hp 2 100 '' '')"
config "{urlPrefix: \"$URL\", preemptVerb: preempt}"
out=$(sim preempt.yaml)
expect_eq "hp preempts v1 on n1" "$(pod_field "$out" hp .node) $(pod_field "$out" hp '.attempts[0].victims | join(",")')" \
  "n1 default/v1"
expect_eq "one preempt call with both candidates" "$(cat "$TMP/ext.log")" "preempt default/hp candidates=2"
expect_eq "ExtenderPreemptionArgs: whole victim pods, NodeNameToMetaVictims null" \
  "$(body preempt | jq -c '[.Pod.metadata.name, (.NodeNameToVictims | to_entries | map([.key, [.value.Pods[].metadata.name], .value.NumPDBViolations]) | sort), .NodeNameToMetaVictims]')" \
  '["hp",[["keep2",["v2"],0],["n1",["v1"],0]],null]'
config "{urlPrefix: \"$URL\", preemptVerb: preempt, nodeCacheCapable: true}"
out=$(sim preempt.yaml)
expect_eq "nodeCacheCapable preemption (UIDs): the same" "$(pod_field "$out" hp .node)" "n1"
expect_eq "ExtenderPreemptionArgs with nodeCacheCapable: MetaVictims (UIDs)" \
  "$(body preempt | jq -c '[.NodeNameToVictims, (.NodeNameToMetaVictims | to_entries | map([.key, .value.Pods]) | sort)]')" \
  '[null,[["keep2",[{"UID":"uid-v2"}]],["n1",[{"UID":"uid-v1"}]]]]'
cluster preempt1.yaml "$(node n1 2)" "$(pod v1 2 1 n1 '')" "$(pod hp 2 100 '' '')"
config "{urlPrefix: \"$URL\", preemptVerb: preempt-empty}"
out=$(sim preempt1.yaml)
# an Error ends PostFilter with the plugin's own message (upstream's RunPostFilterPlugins returns
# AsStatus(s.AsError()), not wrapped; DynamicResources' reason gathered before it is dropped)
expect_eq "a candidate left with no victim is an error" "$(pod_field "$out" hp '.attempts[0].message')" \
  '0/1 nodes are available: 1 Insufficient cpu. preemption: expected at least one victim pod on node "n1"'
config "{urlPrefix: \"$URL\", preemptVerb: preempt-empty, ignorable: true}"
out=$(sim preempt1.yaml)
expect_eq "ignorable: the node is dropped, no candidate is left" "$(pod_field "$out" hp '.attempts[0].message')" \
  '0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: no candidate node for preemption'

# ---- the configuration: validated and written back as upstream
config "{urlPrefix: \"$URL\", prioritizeVerb: p, bindVerb: b}" "{urlPrefix: \"$URL\", bindVerb: b2, managedResources: [{name: cpu}, {name: example.com/x}, {name: example.com/x}]}"
err=$("$BIN" check "$TMP/cfg.yaml" 2>&1)
expect_contains "weight required with prioritizeVerb" "$err" \
  "cfg.yaml:4: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"
expect_contains "cpu is no extended resource" "$err" \
  "extenders[1].managedResources[0].name: Invalid value: \"cpu\": is an invalid extended resource name"
expect_contains "managed resources are unique" "$err" \
  "extenders[1].managedResources[2].name: Invalid value: \"example.com/x\": duplicate extender managed resource name"
expect_contains "one binder at most" "$err" \
  'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'
config "{urlPrefix: \"http://x/\", filterVerb: f, prioritizeVerb: p, weight: 2, httpTimeout: 1m30s, nodeCacheCapable: true, enableHTTPS: true, tlsConfig: {insecure: true, caData: aGVsbG8=}, managedResources: [{name: example.com/gpu, ignoredByScheduler: true}], ignorable: true}" \
       "{urlPrefix: \"http://y\"}"
"$BIN" simulate "$TMP/five.yaml" --config "$TMP/cfg.yaml" --write-config-to "$TMP/out.json" > /dev/null 2>&1
expect_eq "written back: omitempty fields left out, httpTimeout always there" "$(jq -c .extenders "$TMP/out.json")" \
'[{"enableHTTPS":true,"filterVerb":"f","httpTimeout":"1m30s","ignorable":true,"managedResources":[{"ignoredByScheduler":true,"name":"example.com/gpu"}],"nodeCacheCapable":true,"prioritizeVerb":"p","tlsConfig":{"caData":"aGVsbG8=","insecure":true},"urlPrefix":"http://x/","weight":2},{"httpTimeout":"0s","urlPrefix":"http://y"}]'

expect_eq "every simulate exited 0, no sanitizer report" "$(cat "$TMP/sim.failures" 2>/dev/null)" ""

[ "$failures" -eq 0 ]
