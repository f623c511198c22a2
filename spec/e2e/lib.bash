# Shared helpers for the end-to-end tests (sourced first by every script of
# spec/e2e, spec/deploy). Each test prints what it checks and exits non-zero
# on the first mismatch.
#
# The one home of a test's time limit and clean-up (docs/development/testing.md):
# - the script runs in a process group of its own (re-run under setsid), so
#   everything it starts - `luasched run`, `simulate --serve`, an extender,
#   their children - is in that group;
# - on exit, whatever the cause (the end, a failure, INT, TERM, its time
#   limit), ls_cleanup runs the script's own steps (on_exit), asks the whole
#   group to stop (TERM), waits up to 5 s and kills what is left (KILL);
# - a timer process stops the script after LS_TIME_LIMIT seconds (default 300,
#   set before sourcing this file to change it), or as soon as the process
#   that started the script (ctest) is gone: TERM to the group, and 10 s
#   later KILL to the group, so a hung foreground command or a script killed
#   by ctest (TIMEOUT is this limit + 60, spec/tests.cmake) leaves nothing.
# - waits are on conditions with a deadline (wait_until, wait_exit), never on
#   fixed sleeps; deadlines are generous (a slow machine is not a failure).
set -u
if [ "$(ps -o pgid= -p $$ | tr -d ' ')" != "$$" ]; then
  # Not a group leader yet: the same script again, leading its own group.
  exec setsid -w bash "$0" "$@"
fi
export LS_E2E_GROUP=$$
BIN=${LUASCHED_BIN:?LUASCHED_BIN must point to the luasched executable}
TMP=$(mktemp -d)
failures=0
LS_TIME_LIMIT=${LS_TIME_LIMIT:-300}
LS_ON_EXIT=()

# on_exit COMMAND: run at exit (before the group is stopped), in order given.
on_exit() {
  LS_ON_EXIT+=("$1")
}

# The live processes of the test's group other than this shell (zombies are
# gone already; the subshell of the command substitution calling this and
# its children, the ps listing them, are not counted).
ls_group_members() {
  local pid ppid stat comm list others=""
  list=$(ps -o pid=,ppid=,stat=,comm= -g "$$")
  while read -r pid ppid stat comm; do
    case $stat in Z*) continue ;; esac
    [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] || [ "$ppid" = "$BASHPID" ] || [ "$comm" = ps ] ||
      others="$others $pid"
  done <<< "$list"
  printf '%s' "$others"
}

ls_cleanup() {
  local rc=$? step others
  # a child forked from this shell that had not exec'd yet: not its clean-up
  [ "$BASHPID" = "$$" ] || exit "$rc"
  trap '' INT TERM HUP
  for step in "${LS_ON_EXIT[@]}"; do
    eval "$step" || true
  done
  kill -TERM -- "-$$" 2>/dev/null
  local deadline=$((SECONDS + 5))
  others=$(ls_group_members)
  while [ -n "$others" ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.1
    others=$(ls_group_members)
  done
  if [ -n "$others" ]; then
    echo "cleanup: killing what did not stop on TERM:"
    # shellcheck disable=SC2086
    ps -o pid=,args= -p "$(echo $others | tr ' ' ,)"
    # shellcheck disable=SC2086
    kill -KILL $others 2>/dev/null
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap ls_cleanup EXIT
trap 'echo "interrupted (INT)"; exit 130' INT
trap 'echo "stopped (TERM)"; exit 143' TERM HUP

# The time limit: a process of the group itself, so it still acts when this
# shell was killed outright (a fresh bash: a subshell would carry this
# shell's traps). It also stops the group when the process that started the
# test (ctest) is gone: nothing waits for the test any more.
bash -c '
  end=$((SECONDS + $1))
  while [ "$SECONDS" -lt "$end" ]; do
    sleep 1
    if ! kill -0 "$4" 2>/dev/null; then
      echo "FAIL: $3: the process that started it ($4) is gone: stopping everything it started" >&2
      break
    fi
  done
  [ "$SECONDS" -lt "$end" ] || echo "FAIL: $3 reached its time limit of $1 s: stopping everything it started" >&2
  trap "" TERM
  kill -TERM -- "-$2" 2>/dev/null
  trap - TERM   # the test shell'"'"'s clean-up stops this process too; else KILL in 10 s
  sleep 10
  kill -KILL -- "-$2" 2>/dev/null' ls-time-limit "$LS_TIME_LIMIT" "$$" "$(basename "$0")" "$PPID" &

# require_tool COMMAND DEBIAN_PACKAGE: a test never passes without the tool it
# drives; .ci/deps.sh installs every one of them.
require_tool() {
  command -v "$1" >/dev/null && return 0
  echo "FAIL: $1 is not installed (Debian package $2; .ci/deps.sh installs it)"
  exit 1
}
require_tool setsid util-linux
require_tool pgrep procps

# wait_until SECONDS COMMAND...: polls COMMAND (every 0.1 s) until it succeeds;
# 1 when SECONDS pass first.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# wait_exit PID SECONDS: waits for a process this shell started; its exit
# status, or 124 (as timeout(1)) when it still runs after SECONDS (it is then
# stopped: TERM, and KILL 5 s later).
wait_exit() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "process $pid still runs after $2 s: stopping it"
      kill -TERM "$pid" 2>/dev/null
      wait_until 5 eval "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      return 124
    fi
    sleep 0.1
  done
  wait "$pid"
}

# expect_eq NAME ACTUAL EXPECTED
expect_eq() {
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1"
    echo "--- expected"; printf '%s\n' "$3"
    echo "--- actual"; printf '%s\n' "$2"
    failures=$((failures + 1))
  else
    echo "ok: $1"
  fi
}

# expect_contains NAME HAYSTACK NEEDLE
expect_contains() {
  case "$2" in
    *"$3"*) echo "ok: $1" ;;
    *) echo "FAIL: $1: output does not contain: $3"; echo "--- output"; printf '%s\n' "$2"
       failures=$((failures + 1)) ;;
  esac
}

# The configured extension points' config keys, in run order, from the one
# table (core/include/luasched/extension_points.h; the scripts run from the
# source root).
ls_point_keys() {
  sed -n '/^#define LS_EXTENSION_POINTS(X)/,/^$/s/^ *X([A-Z_]*, "[^"]*", "[^"]*", "\([A-Za-z]*\)".*/\1/p' \
    core/include/luasched/extension_points.h
}

# v1.37's configured extension points (the ones the exact texts of the
# scripts name).
LS_UPSTREAM_POINT_KEYS="preEnqueue queueSort preFilter filter postFilter preScore score reserve permit preBind bind postBind"

# A written configuration (stdin) without the "    KEY: {}" line of each point
# of the table beyond v1.37's, so that the script's exact text holds with a
# point added to the table; a point of the table not written is left as a
# "MISSING KEY" line the exact comparison shows.
upstream_points_only() {
  local text key
  text=$(cat)
  for key in $(ls_point_keys); do
    case " $LS_UPSTREAM_POINT_KEYS " in *" $key "*) continue ;; esac
    if grep -qx "    $key: {}" <<< "$text"; then
      text=$(grep -vx "    $key: {}" <<< "$text")
    else
      text="$text"$'\n'"MISSING $key"
    fi
  done
  printf '%s\n' "$text"
}

# The list of config keys an unknown extension point's error offers:
# "preEnqueue, queueSort, ..., postBind or multiPoint".
ls_point_keys_offered() {
  local keys
  keys=$(ls_point_keys | paste -sd, - | sed 's/,/, /g')
  printf '%s or multiPoint' "$keys"
}
