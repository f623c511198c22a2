#!/usr/bin/env bash
# End to end: bad input is refused with the file, line or field and what was
# expected (exit 2, nothing on stdout pretending success); a faulty plugin gives
# its pods an Error status naming the plugin, and every other pod is scheduled.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures

run() { "$BIN" simulate "$@" >"$TMP/out" 2>"$TMP/err"; echo $?; }

expect_eq "malformed YAML: exit 2" "$(run $F/bad-yaml.yaml)" "2"
# line 5 is "   labels: {}": the ":" the parser refuses is column 10
expect_eq "malformed YAML: message" "$(cat "$TMP/err")" \
  "luasched simulate: $F/bad-yaml.yaml:5:10: mapping values are not allowed in this context"
expect_eq "malformed YAML: no output" "$(cat "$TMP/out")" ""

expect_eq "bad quantity: exit 2" "$(run $F/bad-quantity.yaml)" "2"
expect_eq "bad quantity: message" "$(cat "$TMP/err")" \
  "luasched simulate: $F/bad-quantity.yaml:9: pod default/p: spec.containers[0].resources.requests.cpu: invalid quantity \"1x\": expected a number with an optional suffix (Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E) or exponent"

expect_eq "duplicate uid: exit 2" "$(run $F/duplicate-uid.yaml)" "2"
expect_eq "duplicate uid: message" "$(cat "$TMP/err")" \
  "luasched simulate: $F/duplicate-uid.yaml:10: pod default/b: metadata.uid: Duplicate value: \"u-1\" (already the uid of pod default/a at $F/duplicate-uid.yaml:6)"

expect_eq "missing file: exit 2" "$(run $F/no-such-file.yaml)" "2"
expect_contains "missing file: message" "$(cat "$TMP/err")" "$F/no-such-file.yaml: cannot read file: No such file or directory"

expect_eq "unknown plugin: exit 2" "$(run $F/two-nodes.yaml --config $F/unknown-plugin.yaml)" "2"
expect_contains "unknown plugin: message" "$(cat "$TMP/err")" \
  "$F/unknown-plugin.yaml:8: profile default-scheduler: plugin \"NoSuchPlugin\" not found: no no_such_plugin.lua on the plugin path"

P="--plugin-path $F/plugins"
expect_eq "Lua syntax error: exit 2" "$(run $F/two-nodes.yaml --config $F/with-syntax-error.yaml $P)" "2"
expect_eq "Lua syntax error: message" "$(cat "$TMP/err")" \
  "luasched simulate: $F/with-syntax-error.yaml:8: profile default-scheduler: $F/plugins/syntax_error.lua:5: unexpected symbol near 'end'"

expect_eq "usage: two clusters" "$(run a.yaml b.yaml)" "2"
expect_eq "usage: bad --output" "$(run $F/two-nodes.yaml --output xml)" "2"
expect_eq "usage: bad --output message" "$(cat "$TMP/err")" \
  'luasched simulate: --output: expected text or json, got "xml"'
"$BIN" frobnicate >/dev/null 2>&1
expect_eq "unknown command: exit 2" "$?" "2"

# Plugin faults: pod b (fault=yes) gets an Error naming the plugin; a and c bind.
expect_eq "raising plugin: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-raises.yaml $P)" "3"
expect_eq "raising plugin: outcome" "$(grep '^default/' "$TMP/out")" \
'default/a: bound to node-1
default/b: pending: running "Raises" filter plugin: spec/e2e/fixtures/plugins/raises.lua:9: boom
default/c: bound to node-2'

# The watchdog stops a runaway plugin either through the hook (interpreted
# code: the message carries the Lua position) or, for a JIT-compiled loop, by
# cutting the call off and restarting the Lua state.
for fault in loops-forever allocates-forever; do
  name=$( [ $fault = loops-forever ] && echo LoopsForever || echo AllocatesForever )
  expect_eq "$fault: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-$fault.yaml $P --plugin-timeout 200)" "3"
  expect_eq "$fault: a and c bound" "$(grep -v '^default/b' "$TMP/out" | grep '^default/')" \
"default/a: bound to node-1
default/c: bound to node-2"
  b=$(grep '^default/b' "$TMP/out")
  expect_contains "$fault: b names the plugin" "$b" "default/b: pending: running \"$name\" filter plugin: "
  expect_contains "$fault: b names the budget" "$b" "plugin exceeded its time budget of 200 ms"
done

rm -f /tmp/luasched-sandbox-escaped
expect_eq "os.execute: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-calls-os-execute.yaml $P)" "3"
expect_contains "os.execute: refused" "$(cat "$TMP/out")" \
  "default/a: pending: running \"CallsOsExecute\" filter plugin: $F/plugins/calls_os_execute.lua:4: attempt to call field 'execute' (a nil value)"
expect_eq "os.execute: nothing ran" "$([ -e /tmp/luasched-sandbox-escaped ] && echo escaped || echo contained)" "contained"
expect_eq "io.open: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-opens-file.yaml $P)" "3"
expect_contains "io.open: refused" "$(cat "$TMP/out")" \
  "default/a: pending: running \"OpensFile\" filter plugin: $F/plugins/opens_file.lua:4: attempt to index global 'io' (a nil value)"

# More of the sandbox: no debug library, no bytecode (no string.dump, no load),
# no require outside the plugin path.
expect_eq "debug: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-uses-debug.yaml $P)" "3"
expect_contains "debug: refused" "$(cat "$TMP/out")" \
  "default/a: pending: running \"UsesDebug\" filter plugin: $F/plugins/uses_debug.lua:4: attempt to index global 'debug' (a nil value)"
expect_eq "bytecode: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-loads-bytecode.yaml $P)" "3"
expect_contains "bytecode: refused" "$(cat "$TMP/out")" \
  "default/a: pending: running \"LoadsBytecode\" filter plugin: $F/plugins/loads_bytecode.lua:4: attempt to call field 'dump' (a nil value)"
expect_eq "require outside: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-requires-outside.yaml $P)" "3"
expect_contains "require outside: refused" "$(cat "$TMP/out")" \
  "default/a: pending: running \"RequiresOutside\" filter plugin: $F/plugins/requires_outside.lua:4: require: module 'os' not found on the plugin path"

# The per-state memory limit (luasched: memoryLimitBytes in the config): the pod
# whose filter hoards memory gets an Error naming the plugin; the state is
# rebuilt, so the plugin's other pods still schedule; the counters record it.
expect_eq "memory limit: exit 3 (an attempt ended in a plugin error)" "$(run $F/two-nodes.yaml --config $F/with-hogs-memory.yaml $P)" "3"
expect_eq "memory limit: outcome" "$(grep '^default/' "$TMP/out")" \
'default/a: bound to node-1
default/b: pending: running "HogsMemory" filter plugin: plugin exceeded the Lua memory limit of 67108864 bytes in filter at spec/e2e/fixtures/plugins/hogs_memory.lua:7 (the Lua state was restarted)
default/c: bound to node-2'
expect_contains "memory limit: counters" "$(cat "$TMP/out")" \
  "plugin faults: 1 attempts ended in Error, 1 calls over budget, 1 Lua state restarts"

# A pending pod with a deletionTimestamp is skipped with upstream's reason, not lost.
expect_eq "deleting pod: exit 0" "$(run $F/deleting-pod.yaml)" "0"
expect_contains "deleting pod: reason" "$(cat "$TMP/out")" "default/p1: pending: skip schedule deleting pod: default/p1"

# A raising plugin is counted too.
run $F/two-nodes.yaml --config $F/with-raises.yaml $P >/dev/null
expect_contains "raise: counters" "$(cat "$TMP/out")" "plugin faults: 1 attempts ended in Error, 0 calls over budget, 0 Lua state restarts"

[ "$failures" -eq 0 ]
