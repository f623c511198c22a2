#!/usr/bin/env bash
# End to end: the secure port of `luasched run` authenticates and authorizes
# its callers as kube-scheduler does, with the served API answering the
# TokenReviews and SubjectAccessReviews. Users of the served cluster: the admin
# token (group system:masters), "prom" (group system:monitoring: may get
# /metrics) and "alice" (no group). Anonymous callers reach only the
# always-allowed paths (403 elsewhere), an unknown token is 401 everywhere,
# reviews are cached (two requests, one review each),
# --authorization-always-allow-paths replaces the default list, and with
# --client-ca-file a client certificate is a user (CN) in groups (O) while a
# certificate of another CA is 401.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

serve_start "$ROOT/examples/demo-cluster.yaml" --serve-user prom-token=prom:system:monitoring \
  --serve-user alice-token=alice --audit-log "$TMP/audit.log"

start_run() { # FLAGS...: luasched run on a free port, PORT set
  for _ in 1 2 3 4 5; do
    PORT=$(shuf -i 20000-60000 -n 1)
    "$BIN" run --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --bind-address 127.0.0.1 \
      --secure-port "$PORT" "$@" > "$TMP/run.out" 2> "$TMP/run.err" &
    RUN_PID=$!
    for _ in $(seq 1 600); do   # up to 60 s
      curl -sk -o /dev/null "https://127.0.0.1:$PORT/healthz" && return 0
      kill -0 "$RUN_PID" 2>/dev/null || break
      sleep 0.1
    done
  done
  echo "FAIL: luasched run did not start"; exit 1
}
# call TOKEN PATH: "CODE BODY" (TOKEN "" for an anonymous call); code TOKEN PATH: the code alone.
call() {
  local auth=() code
  [ -z "$1" ] || auth=(-H "Authorization: Bearer $1")
  code=$(curl -sk "${auth[@]}" -o "$TMP/body" -w '%{http_code}' "https://127.0.0.1:$PORT$2")
  printf '%s %s' "$code" "$(cat "$TMP/body")"
}
code() { call "$1" "$2" | head -c 3; }
reviews() { grep -c "create $1" "$TMP/audit.log"; }

start_run
for p in /healthz /livez /readyz; do
  expect_eq "anonymous $p is always allowed" "$(call "" "$p")" "200 ok"
done
expect_eq "anonymous /metrics is forbidden" "$(call "" /metrics)" \
  '403 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}'
expect_eq "anonymous /configz is forbidden" "$(code "" /configz)" "403"
expect_eq "anonymous debug path is forbidden" "$(code "" /debug/pprof/)" "403"
expect_eq "an unknown token is 401 on /metrics" "$(call wrong-token /metrics)" \
  '401 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
expect_eq "an unknown token is 401 on /healthz too" "$(code wrong-token /healthz)" "401"

before_tr=$(reviews "authentication.k8s.io tokenreviews"); before_sar=$(reviews "authorization.k8s.io subjectaccessreviews")
expect_eq "system:monitoring may get /metrics" "$(code prom-token /metrics)" "200"
expect_eq "and again (from the caches)" "$(code prom-token /metrics)" "200"
expect_eq "one TokenReview for the two requests" "$(( $(reviews "authentication.k8s.io tokenreviews") - before_tr ))" "1"
expect_eq "one SubjectAccessReview for the two requests" \
  "$(( $(reviews "authorization.k8s.io subjectaccessreviews") - before_sar ))" "1"
expect_contains "the metrics are served" "$(call prom-token /metrics)" "scheduler_schedule_attempts_total"
expect_eq "system:monitoring may not get /configz" "$(call prom-token /configz)" \
  '403 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"prom\" cannot get path \"/configz\"","reason":"Forbidden","details":{},"code":403}'
expect_eq "a user without a role may not get /metrics" "$(code alice-token /metrics)" "403"
expect_eq "system:masters may get /configz" "$(code "$TOKEN" /configz)" "200"
run_stop
expect_eq "luasched run stops cleanly" "$RUN_RC" "0"

start_run --authorization-always-allow-paths=/healthz,/metrics
expect_eq "a listed path is open" "$(code "" /metrics)" "200"
expect_eq "an unlisted default is not" "$(code "" /readyz)" "403"
run_stop

# Client certificates: a CA, two users of it, and a stranger's CA.
if command -v openssl > /dev/null; then
  mkcert() { # NAME SUBJECT CA
    openssl req -new -newkey rsa:2048 -nodes -keyout "$TMP/$1.key" -subj "$2" -out "$TMP/$1.csr" 2>/dev/null
    openssl x509 -req -in "$TMP/$1.csr" -CA "$TMP/$3.crt" -CAkey "$TMP/$3.key" -CAcreateserial -days 1 \
      -out "$TMP/$1.crt" 2>/dev/null
  }
  for ca in ca other-ca; do
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/$ca.key" -subj "/CN=$ca" -days 1 \
      -out "$TMP/$ca.crt" 2>/dev/null
  done
  mkcert carol "/O=system:monitoring/CN=carol" ca
  mkcert dave "/CN=dave" ca
  mkcert eve "/O=system:masters/CN=eve" other-ca
  start_run --client-ca-file "$TMP/ca.crt"
  with_cert() { curl -sk --cert "$TMP/$1.crt" --key "$TMP/$1.key" -o "$TMP/body" -w '%{http_code}' \
                  "https://127.0.0.1:$PORT$2"; printf ' %s' "$(cat "$TMP/body")"; }
  expect_eq "a certificate in group system:monitoring may get /metrics" "$(with_cert carol /metrics | head -c 3)" "200"
  expect_eq "a certificate's CN is the user" "$(with_cert dave /metrics)" \
    '403 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"dave\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}'
  expect_eq "a certificate of another CA is 401" "$(with_cert eve /metrics | head -c 3)" "401"
  expect_eq "no certificate is anonymous" "$(code "" /metrics)" "403"
  run_stop
else
  echo "FAIL: openssl is not installed"; failures=$((failures + 1))
fi
serve_stop
[ "$failures" -eq 0 ]
