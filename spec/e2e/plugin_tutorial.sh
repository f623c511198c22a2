#!/usr/bin/env bash
# docs/plugins/tutorial.md, run literally from a temporary folder outside the
# repository: every ```sh block in order, in one shell (variables and background
# jobs carry over, as in the reader's terminal), with only what the tutorial
# asks the reader to set (luasched on PATH, LUASCHED_SRC) and none of the
# build's variables (LUA_PATH, LUASCHED_LIB, ...). Then:
#   - every line of a ```text block must appear in the output of the ```sh block
#     before it ("…" in a shown line stands for any text: timings, paths);
#   - a block after <!-- file: NAME --> must be the file NAME as it is at that
#     point of the run (what `luasched new plugin` wrote).
source "$(dirname "$0")/lib.bash"
require_tool kubectl kubernetes-client
require_tool busted lua-busted
page=docs/plugins/tutorial.md
src=$PWD
work=$TMP/reader      # mktemp -d: outside the repository
mkdir -p "$work"
steps=$TMP/steps
mkdir -p "$steps"

# The steps of the page: N.sh (commands), N.text (expected output of the last
# commands), N.file + N.name (expected file content).
awk -v dir="$steps" '
  /^<!-- file: .* -->$/ { name = $3; next }
  /^```sh$/ { n++; kind = "sh"; out = dir "/" n ".sh"; next }
  /^```text$/ { n++; kind = "text"; out = dir "/" n ".text"; next }
  /^```[a-z]+$/ && name != "" { n++; kind = "file"; out = dir "/" n ".file"; print name > (dir "/" n ".name"); name = ""; next }
  /^```/ && kind != "" { close(out); kind = ""; next }
  /^```/ { skipping = !skipping; next }
  kind != "" { print > out }
' "$page"

# One script: each command block's output into N.out, each file compared at its place.
script=$TMP/tutorial.sh
{
  echo "cd '$work'"
  for f in $(ls "$steps" | grep -E '^[0-9]+\.(sh|file)$' | sort -V); do
    n=${f%.*}
    case $f in
      *.sh) echo "{"; cat "$steps/$f"; echo "} > '$steps/$n.out' 2>&1" ;;
      *.file) echo "cmp -s \"$(cat "$steps/$n.name")\" '$steps/$f' || echo \"$(cat "$steps/$n.name")\" >> '$steps/files.differ'" ;;
    esac
  done
} > "$script"

leader=
stop() { [ -n "$leader" ] && kill -TERM -- "-$leader" 2>/dev/null; rm -rf "$TMP"; }
on_exit stop
env -u LUA_PATH -u LUA_CPATH -u LUASCHED_LIB -u LUASCHED_SOURCE_DIR \
  PATH="$(dirname "$BIN"):$PATH" LUASCHED_SRC="$src" \
  setsid timeout -k 5 240 bash "$script" > "$TMP/script.out" 2>&1 &
leader=$!
wait "$leader"
rc=$?
kill -TERM -- "-$leader" 2>/dev/null
leader=
expect_eq "the tutorial's commands ran to the end" "$rc" "0"
[ "$rc" -eq 0 ] || cat "$TMP/script.out"

expect_eq "files as the tutorial shows them" "$(cat "$steps/files.differ" 2>/dev/null)" ""

# Each shown line, as a glob ("…" any text), against the lines of the block's output.
last_out=
checked=0
for f in $(ls "$steps" | grep -E '^[0-9]+\.(sh|text)$' | sort -V); do
  n=${f%.*}
  if [[ $f == *.sh ]]; then last_out=$steps/$n.out; continue; fi
  while IFS= read -r shown; do
    [ -z "$shown" ] && continue
    pattern=$(printf '%s' "$shown" | sed -e 's/[][*?\\]/\\&/g' -e 's/…/*/g')
    found=no
    while IFS= read -r line; do
      # shellcheck disable=SC2053
      if [[ $line == $pattern ]]; then found=yes; break; fi
    done < "$last_out"
    checked=$((checked + 1))
    if [ "$found" = yes ]; then
      echo "ok: shown: $shown"
    else
      echo "FAIL: the tutorial shows a line its command did not print: $shown"
      echo "--- the command's output"; cat "$last_out"
      failures=$((failures + 1))
    fi
  done < "$steps/$f"
done
expect_eq "some output lines were checked" "$([ "$checked" -gt 20 ] && echo yes)" "yes"
exit $((failures > 0))
