#!/usr/bin/env bash
# End to end: the queue-sort plugin. With PrioritySort (equal priorities) the
# file order decides: a gets the only slot. A plugin that gives only less(a, b)
# (reverse name order) is used by the C queue as its comparator: c wins.
. "$(dirname "$0")/lib.bash"
F=spec/e2e/fixtures

out=$("$BIN" simulate $F/one-slot.yaml 2>&1)
expect_eq "PrioritySort: file order" "$(printf '%s\n' "$out" | grep 'bound to')" "default/a: bound to node-1"
out=$("$BIN" simulate $F/one-slot.yaml --config $F/with-by-name-desc.yaml --plugin-path $F/plugins 2>&1)
expect_eq "less(a, b): reverse names" "$(printf '%s\n' "$out" | grep 'bound to')" "default/c: bound to node-1"

[ "$failures" -eq 0 ]
