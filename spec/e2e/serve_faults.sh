#!/usr/bin/env bash
# End to end: `luasched simulate --serve` refuses bad input like a scheduling run
# (file:line, exit 2), serves a given certificate (--tls-cert-file), listens on
# IPv6 loopback, and its fault injection does what the flags say: every
# resource request fails with 500 or 429 (Retry-After) at rate 1, watches end
# after N events or are answered 410 Expired; discovery and health never fail.
. "$(dirname "$0")/lib.bash"
require_tool curl curl
require_tool openssl openssl
require_tool jq jq
F=spec/e2e/fixtures

SERVER_PID=

run() { "$BIN" simulate "$@" >"$TMP/out" 2>"$TMP/err"; echo $?; }

# --- bad input: the same errors as `luasched simulate FILE`
expect_eq "malformed YAML: exit 2" "$(run --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" $F/bad-yaml.yaml)" "2"
expect_eq "malformed YAML: message" "$(cat "$TMP/err")" \
  "luasched simulate: $F/bad-yaml.yaml:5:10: mapping values are not allowed in this context"
expect_eq "bad quantity: exit 2" "$(run --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" $F/bad-quantity.yaml)" "2"
expect_contains "bad quantity: message" "$(cat "$TMP/err")" "$F/bad-quantity.yaml:9: pod default/p: spec.containers[0]"
expect_eq "no kubeconfig written on bad input" "$([ -e "$TMP/kc" ] && echo yes || echo no)" "no"
expect_eq "bad --fault: exit 2" "$(run --serve 127.0.0.1:0 --fault error=2 examples/demo-cluster.yaml)" "2"
expect_eq "bad --fault: message" "$(cat "$TMP/err")" \
  "luasched simulate: --fault error=2: expected a rate between 0 and 1"
expect_eq "unknown fault: message" "$(run --serve 127.0.0.1:0 --fault boom=1 examples/demo-cluster.yaml; cat "$TMP/err")" \
  "2
luasched simulate: --fault boom=1: unknown fault \"boom\" (watch-drop, gone, error, throttle, latency, provision)"
expect_eq "bad address: exit 2" "$(run --serve 127.0.0.1:x examples/demo-cluster.yaml)" "2"
expect_contains "--help lists the serve flags" "$("$BIN" simulate --help)" "--serve ADDR[:PORT]"

# start FLAGS...: a server on demo-cluster.yaml; sets URL, CA, TOKEN.
start() {
  rm -f "$TMP/err"   # not truncated by the redirection yet when the loop below first looks
  "$BIN" simulate --serve 127.0.0.1:0 --serve-kubeconfig "$TMP/kc" --token t "$@" examples/demo-cluster.yaml \
    >"$TMP/out" 2>"$TMP/err" &
  SERVER_PID=$!
  wait_until 60 grep -qs '^serving' "$TMP/err"
  URL=$(sed -n 's/^serving the cluster at \(https:[^ ]*\) .*/\1/p' "$TMP/err")
  sed -n 's/^    certificate-authority-data: //p' "$TMP/kc" | base64 -d >"$TMP/ca.pem"
}
stop() { kill "$SERVER_PID"; wait "$SERVER_PID"; SERVER_PID=; }
get() { curl -s --cacert "$TMP/ca.pem" -H "Authorization: Bearer t" "$@"; }

# --- a certificate from files, IPv6 loopback
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=luasched-test \
  -addext "subjectAltName=IP:::1" -addext "basicConstraints=critical,CA:TRUE" \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
rm -f "$TMP/err"
"$BIN" simulate --serve '[::1]:0' --serve-kubeconfig "$TMP/kc" --token t --tls-cert-file "$TMP/cert.pem" \
  --tls-private-key-file "$TMP/key.pem" examples/demo-cluster.yaml >"$TMP/out" 2>"$TMP/err" &
SERVER_PID=$!
wait_until 60 grep -qs '^serving' "$TMP/err"
URL=$(sed -n 's/^serving the cluster at \(https:[^ ]*\) .*/\1/p' "$TMP/err")
expect_contains "IPv6 URL" "$URL" "https://[::1]:"
expect_eq "kubeconfig carries the given certificate" \
  "$(sed -n 's/^    certificate-authority-data: //p' "$TMP/kc" | base64 -d)" "$(cat "$TMP/cert.pem")"
expect_eq "served with the given certificate" \
  "$(curl -s --cacert "$TMP/cert.pem" -H "Authorization: Bearer t" "$URL/api/v1/namespaces/shop/pods/db-0" | jq -r .spec.nodeName)" \
  "node-a2"
stop
expect_eq "--tls-cert-file without the key: exit 2" \
  "$(run --serve 127.0.0.1:0 --tls-cert-file /dev/null examples/demo-cluster.yaml; cat "$TMP/err")" \
  "2
luasched simulate: --tls-cert-file and --tls-private-key-file go together"

start --fault error=1
expect_eq "error=1: resource requests get 500 InternalError" \
  "$(get "$URL/api/v1/nodes" | jq -r '.reason + " " + (.code|tostring)')" "InternalError 500"
r=$(get -o /dev/null -w '%{http_code}' "$URL/api/v1/nodes")
expect_eq "error=1: status 500" "$r" "500"
expect_eq "error=1: discovery still answers" "$(get -o /dev/null -w '%{http_code}' "$URL/api/v1")" "200"
expect_eq "error=1: healthz still answers" "$(get "$URL/healthz")" "ok"
stop

start --fault throttle=1:7
expect_eq "throttle=1:7: 429 with Retry-After: 7" \
  "$(get -D - -o /dev/null "$URL/api/v1/pods" | tr -d '\r' | grep -iE '^(HTTP|retry-after)' | tr '\n' ' ')" \
  "HTTP/1.1 429 Too Many Requests Retry-After: 7 "
stop

start --fault watch-drop=3
n=$(get -N --max-time 5 "$URL/api/v1/pods?watch=true" | wc -l)
expect_eq "watch-drop=3: the stream ends after 3 events" "$n" "3"
stop

start --fault gone=1
expect_eq "gone=1: a watch is answered with ERROR 410 Expired" \
  "$(get -N --max-time 5 "$URL/api/v1/pods?watch=true&resourceVersion=0" | tr -d '\n' | sed 's/"message":"[^"]*",//')" \
  '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Expired","code":410}}'
expect_eq "gone=1: lists still work" "$(get -o /dev/null -w '%{http_code}' "$URL/api/v1/pods")" "200"
stop

[ "$failures" -eq 0 ]
