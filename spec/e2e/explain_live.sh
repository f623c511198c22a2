#!/usr/bin/env bash
# `luasched explain --kubeconfig FILE NAMESPACE/POD` against the served
# cluster of fixtures/explain_live/cluster.yaml (default profile). Worked by
# hand for web (1 cpu, 1Gi, hostPort 8080):
#   n1 (2 cpu, r1 holds 1500m): 500m free, short by 500m -> NodeResourcesFit
#   n2 (2 cpu, r2 holds 1800m): 200m free, short by 800m -> NodeResourcesFit
#   n3, n4: dedicated=gpu:NoSchedule; n5: that and maintenance:NoExecute -> TaintToleration
#   n6: r6 holds hostPort 8080 -> NodePorts
# so "1 node fits with 500m less cpu", "2 nodes fit with 800m less cpu", the
# taint alone on n3 and n4 opens 2 (n5 has two), the port opens n6. For db
# (nodeSelector disk=ssd, zone=a): n1 and n2 (disk=hdd, zone=a) miss disk
# only, n6 (disk=ssd, zone=b) misses zone only, n3-n5 are tainted. For cache
# (required affinity zone In [c], no nodeSelector): n1, n2, n6 fail only the
# affinity. Nothing is bound or written: the served API still has the pods
# pending afterwards.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

serve_start "$ROOT/spec/e2e/fixtures/explain_live/cluster.yaml"
out=$("$BIN" explain --kubeconfig "$KUBECONFIG_FILE" shop/web 2>&1)
expect_eq "exit code" "$?" "0"
expect_eq "the per-node table from the live state" "$(printf '%s\n' "$out" | sed -n '/Filter (/,/Score/p')" \
"  Filter (in the order the nodes were examined):
    n1                       rejected by NodeResourcesFit: Insufficient cpu
    n2                       rejected by NodeResourcesFit: Insufficient cpu
    n3                       rejected by TaintToleration: node(s) had untolerated taint(s)
    n4                       rejected by TaintToleration: node(s) had untolerated taint(s)
    n5                       rejected by TaintToleration: node(s) had untolerated taint(s)
    n6                       rejected by NodePorts: node(s) didn't have free ports for the requested pod ports
  Score: not run (no node passed the filters)"
expect_eq "the changes that would open nodes" "$(printf '%s\n' "$out" | sed -n '/^Changes/,$p')" \
"Changes that would open nodes:
  1 node fits with 500m less cpu
  2 nodes fit with 800m less cpu
  2 nodes open if it tolerates dedicated=gpu:NoSchedule
  1 node opens without its hostPort 8080/TCP"
expect_eq "db's hints (JSON)" "$("$BIN" explain --kubeconfig="$KUBECONFIG_FILE" shop/db --output json | jq -c .hints)" \
  '["2 nodes open if it tolerates dedicated=gpu:NoSchedule","2 nodes open without its nodeSelector disk=ssd"]'
expect_eq "cache's hints (--context)" \
  "$("$BIN" explain --kubeconfig "$KUBECONFIG_FILE" --context "$(awk '/current-context:/ {print $2}' "$KUBECONFIG_FILE")" \
     shop/cache | sed -n '/^Changes/,$p')" \
"Changes that would open nodes:
  2 nodes open if it tolerates dedicated=gpu:NoSchedule
  3 nodes fail only its required node affinity (no single term to drop)"
out=$("$BIN" explain --kubeconfig "$KUBECONFIG_FILE" --context no-such-context shop/cache 2>&1)
expect_eq "an unknown context is a usage error" "$?" "2"
expect_contains "named" "$out" "no-such-context"
# A bound pod is explained as if it were pending: r1 off n1 fits n1 again.
out=$("$BIN" explain --master "$SERVER_URL" --kubeconfig "$KUBECONFIG_FILE" default/r1 2>&1)
expect_contains "a bound pod" "$out" "Pod default/r1 is bound to n1; its cycle is run again as if it were pending"
expect_contains "n1 passes without r1" "$out" "    n1                       passed"
out=$("$BIN" explain --kubeconfig "$KUBECONFIG_FILE" shop/nope 2>&1)
expect_eq "an unknown pod: exit 1" "$?" "1"
expect_contains "an unknown pod: named" "$out" 'pods "nope" not found in namespace "shop"'
out=$("$BIN" explain --kubeconfig "$KUBECONFIG_FILE" web 2>&1)
expect_eq "NAMESPACE/POD required" "$?:$out" '2:luasched explain: expected NAMESPACE/POD, got "web"'
expect_eq "nothing was bound" \
  "$(api /api/v1/namespaces/shop/pods | jq -r '[.items[] | .spec.nodeName // "-"] | join(",")')" "-,-,-"
serve_stop
expect_eq "the server exits 0" "$SERVE_RC" "0"
[ "$failures" -eq 0 ]
