# Shared helpers for the end-to-end tests (sourced). Each test prints what it
# checks and exits non-zero on the first mismatch.
set -u
BIN=${LUASCHED_BIN:?LUASCHED_BIN must point to the luasched executable}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

# require_tool COMMAND DEBIAN_PACKAGE: a test never passes without the tool it
# drives; .ci/deps.sh installs every one of them.
require_tool() {
  command -v "$1" >/dev/null && return 0
  echo "FAIL: $1 is not installed (Debian package $2; .ci/deps.sh installs it)"
  exit 1
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

