#!/usr/bin/env bash
# The include graph of core/src/scheduler/ (docs/architecture.md): no circle
# among its modules (a module is X.c with X.h and X_internal.h), the lifetime header
# scheduler_internal.h included by the lifetime only (scheduler.c, scheduler_events.c, reload.c:
# the stages take the attempt and its environment, attempt.h), and nothing
# outside core/src/scheduler/ including it.
# Usage: include_graph.sh [source root]
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
dir=core/src/scheduler
fail=0

edges() {
  local f m d
  for f in "$dir"/*.c "$dir"/*.h; do
    m=$(basename "${f%.*}"); m=${m%_internal}
    sed -n 's|^#include "scheduler/\([a-z_0-9]*\)\.h".*|\1|p' "$f" | while read -r d; do
      d=${d%_internal}; [ "$d" != "$m" ] && echo "$m $d"
    done
  done
}

# tsort names the members of every circle it meets on stderr.
loops=$(edges | tsort 2>&1 >/dev/null)
if [ -n "$loops" ]; then
  echo "include circle in $dir/ (module -> the modules it includes):"
  echo "$loops"
  fail=1
fi

for f in $(grep -l '^#include "scheduler/scheduler_internal.h"' "$dir"/*.c "$dir"/*.h); do
  case $(basename "$f") in
    scheduler.c | scheduler_events.c | reload.c) ;;
    *) echo "$f includes scheduler_internal.h: a stage takes ls_attempt_state and ls_sched_env (attempt.h)"; fail=1 ;;
  esac
done

outside=$(grep -rl --include='*.c' --include='*.h' 'scheduler/scheduler_internal\.h' core spec | grep -v "^$dir/")
if [ -n "$outside" ]; then
  echo "scheduler_internal.h included outside $dir/ (use luasched/scheduler.h or a narrow header):"
  echo "$outside"
  fail=1
fi

[ $fail -eq 0 ] && echo "ok: $(edges | wc -l) include arrows in $dir/, no circle, scheduler_internal.h kept inside"
exit $fail
