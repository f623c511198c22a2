#!/usr/bin/env bash
# End to end: `luasched run` with a kubeconfig whose user is an exec credential
# plugin (client.authentication.k8s.io/v1), against the served cluster. The
# plugin (a small script) first answers a stale token: the server's 401 makes
# the client run it again, and the second answer (the served token, with an
# expirationTimestamp an hour away) is kept for every later request: two runs
# in all while every pod is bound. kubectl, the reference client, accepts the
# same kubeconfig. A kubeconfig naming a missing plugin fails the start with
# client-go's message and the install hint.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
ROOT=${LUASCHED_SOURCE_DIR:-.}

serve_start "$ROOT/examples/demo-cluster.yaml"
mkdir -p "$TMP/bin"
cat > "$TMP/bin/cred.sh" <<SH
#!/bin/sh
# Run 1 answers a stale token; later runs the good one.
echo run >> "$TMP/runs"
case "\$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) echo "bad KUBERNETES_EXEC_INFO" >&2; exit 1 ;; esac
if [ "\$(wc -l < "$TMP/runs")" -eq 1 ]; then token=stale; else token=\$(cat "$TMP/good-token"); fi
cat <<JSON
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
 "status":{"token":"\$token","expirationTimestamp":"\$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)"}}
JSON
SH
chmod +x "$TMP/bin/cred.sh"
printf '%s' "$TOKEN" > "$TMP/good-token"
exec_user() { # COMMAND: the served kubeconfig with its token replaced by an exec stanza
  sed "/^    token: /d" "$KUBECONFIG_FILE" | sed "s#^  user:.*#  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: $1\n      args: [--cluster, luasched]\n      interactiveMode: Never\n      installHint: \"cred.sh comes with the luasched tests\"#"
}
exec_user "$TMP/bin/cred.sh" > "$TMP/exec.kubeconfig"
grep -q 'token:' "$TMP/exec.kubeconfig" && echo "FAIL: the exec kubeconfig still has a token"

"$BIN" run --kubeconfig "$TMP/exec.kubeconfig" --leader-elect=false --secure-port 0 > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
wait_bound 7 60 || echo "FAIL: not every pod was bound with the plugin's token"
run_stop
expect_eq "luasched run exits 0" "$RUN_RC" "0"
expect_eq "the plugin ran twice: the stale token, then again after the 401" "$(wc -l < "$TMP/runs")" "2"

# kubectl gets the good token at once: how kubectl retries after a 401 is its
# own (under load its parallel discovery requests failed on the stale one)
echo run > "$TMP/runs"
expect_contains "kubectl accepts the same kubeconfig" \
  "$(kubectl --kubeconfig "$TMP/exec.kubeconfig" get nodes -o name 2>&1)" "node/node-a1"

exec_user /nonexistent/cred.sh > "$TMP/missing.kubeconfig"
"$BIN" run --kubeconfig "$TMP/missing.kubeconfig" --leader-elect=false --secure-port 0 > "$TMP/run2.out" 2> "$TMP/run2.err" &
RUN_PID=$!
wait_until 60 grep -q "not found" "$TMP/run2.err"
kill -TERM "$RUN_PID" 2>/dev/null; wait "$RUN_PID"
expect_contains "a missing plugin is named" "$(cat "$TMP/run2.err")" "getting credentials: exec: executable /nonexistent/cred.sh not found"
expect_contains "with the install hint" "$(cat "$TMP/run2.err")" "cred.sh comes with the luasched tests"
serve_stop
[ "$failures" -eq 0 ]
