#!/usr/bin/env bash
# docs/runnable: every fenced block right after a `<!-- runnable -->` line in
# docs/**/*.md still runs. Each block runs from the repository root with bash
# (-e: the first failing command fails the block), with a time limit, in a
# session of its own that is killed afterwards (a block may start servers in the
# background, as the walk-throughs do). `./build/` in a block is the build
# directory under test. The marker is for blocks that need nothing outside this
# machine (no registry, no real cluster, no root); the others are plain blocks.
#
#   bash spec/docs/runnable.sh BUILD_DIR [PAGE.md...]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(cd "${1:?usage: runnable.sh BUILD_DIR [PAGE.md...]}" && pwd)
shift
pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
  mapfile -t pages < <(find docs -name '*.md' | sort)
fi

block_timeout=${LUASCHED_DOCS_BLOCK_TIMEOUT:-240}
scratch=$(mktemp -d)
leader=
cleanup() {
  [ -n "$leader" ] && kill -TERM -- "-$leader" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# The blocks of one page, each into $scratch/N.sh with its line number in $scratch/N.line.
extract() {
  awk -v dir="$scratch" -v page="$1" '
    /^<!-- runnable -->$/ { armed = 1; next }
    armed && /^```/ { inside = 1; armed = 0; n++; file = dir "/" n ".sh"; print FNR > (dir "/" n ".line"); next }
    inside && /^```/ { inside = 0; close(file); next }
    inside { print > file; next }
    armed && !/^[[:space:]]*$/ { armed = 0 }
  ' "$1"
}

total=0
failed=0
for page in "${pages[@]}"; do
  rm -f "$scratch"/*.sh "$scratch"/*.line
  extract "$page"
  for script in $(ls "$scratch"/*.sh 2>/dev/null | sort -V); do
    n=$(basename "$script" .sh)
    line=$(cat "$scratch/$n.line")
    total=$((total + 1))
    sed -i "s#\./build/#$build/#g" "$script"
    # timeout runs the block in its own process group: the group of the session
    # leader, killed afterwards with whatever the block left in the background
    # a block's own mktemp (a reader's scratch folder) lands in ours, removed with it
    mkdir -p "$scratch/tmp"
    TMPDIR="$scratch/tmp" setsid timeout -k 5 "$block_timeout" bash -e "$script" >"$scratch/out" 2>&1 </dev/null &
    leader=$!
    wait "$leader"
    rc=$?
    kill -TERM -- "-$leader" 2>/dev/null
    leader=
    status=$rc
    [ "$rc" -eq 124 ] && echo "FAIL $page:$line: still running after ${block_timeout}s"
    if [ "$status" -ne 0 ]; then
      echo "FAIL $page:$line: exit status $rc"
      sed 's/^/    /' "$scratch/out" | tail -20
      failed=$((failed + 1))
    else
      echo "ok   $page:$line"
    fi
  done
done
cd "$root"
echo "$total runnable blocks, $failed failed"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
