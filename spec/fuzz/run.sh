#!/usr/bin/env bash
# run.sh [SECONDS_PER_TARGET] [TARGET...]: runs the libFuzzer targets of
# spec/fuzz (all of them by default: quantity doc pod node object selector
# config watch api kubeconfig)
# for SECONDS_PER_TARGET each (default 20), one after the other, and fails if
# any of them finds a crash, a sanitizer report, a leak, a timeout or an
# out-of-memory.
#
# The fuzz build lives in build-fuzz (LS_FUZZ_BUILD overrides) and is
# configured with clang on first use:
#   CC=clang cmake -S . -B build-fuzz -DLS_FUZZ=ON
#
# Each target starts from spec/fuzz/corpus/<target>/, copied to a temp dir so
# that what the fuzzer adds to its working corpus is thrown away. The seed-*
# and crash-* files there are replayed first on every run, so a regression
# input fails the run before any fuzzing. A new crashing input is copied into
# spec/fuzz/corpus/<target>/ as crash-new-<sha1>: fix the bug, then rename it
# crash-<short-description>.
set -euo pipefail

SECONDS_PER_TARGET=${1:-20}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(quantity doc pod node object selector config watch api kubeconfig)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FUZZ_DIR=$ROOT/spec/fuzz
BUILD=${LS_FUZZ_BUILD:-$ROOT/build-fuzz}

case $SECONDS_PER_TARGET in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/luasched-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

build() {
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    CC=${CC:-clang} cmake -S "$ROOT" -B "$BUILD" -DLS_FUZZ=ON || return
  fi
  cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]/#/fuzz_}"
}
if ! build >"$WORK/build.log" 2>&1; then
  cat "$WORK/build.log" >&2
  echo "fuzzing FAILED: the fuzz build (in $BUILD) failed" >&2
  exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${TARGETS[@]}"; do
  exe=$BUILD/fuzz_$t
  seeds=$FUZZ_DIR/corpus/$t
  if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
    echo "fuzz_$t: no such target" >&2
    failed+=("$t")
    continue
  fi
  corpus=$WORK/$t
  artifacts=$WORK/$t-artifacts
  mkdir -p "$corpus" "$artifacts"
  cp "$seeds"/* "$corpus"/
  n_seeds=$(find "$seeds" -type f | wc -l)
  args=(-max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -timeout=10
        -artifact_prefix="$artifacts/")
  [ -f "$FUZZ_DIR/dict/$t.dict" ] && args+=(-dict="$FUZZ_DIR/dict/$t.dict")
  log=$WORK/$t.log
  start=$(date +%s)
  status=0
  "$exe" "${args[@]}" "$corpus" >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))

  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$done_line" ] && echo "fuzz_$t: $done_line"
  printf 'fuzz_%s: %s executions in %ss (corpus: %s files, %s after the run)\n' \
    "$t" "${execs:-?}" "$elapsed" "$n_seeds" "$(find "$corpus" -type f | wc -l)"

  if [ "$status" -ne 0 ] || [ -z "$done_line" ]; then
    failed+=("$t")
    echo "fuzz_$t: FAILED (exit $status); the end of its log:" >&2
    tail -n 60 "$log" | sed "s/^/  /" >&2
    for a in "$artifacts"/*; do
      [ -f "$a" ] || continue
      sum=$(sha1sum "$a" | cut -c1-12)
      cp "$a" "$seeds/crash-new-$sum"
      echo "fuzz_$t: crashing input kept as spec/fuzz/corpus/$t/crash-new-$sum ($(basename "$a"))" >&2
    done
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing passed: ${TARGETS[*]} (${SECONDS_PER_TARGET}s each)"
