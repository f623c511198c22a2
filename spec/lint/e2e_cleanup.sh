#!/usr/bin/env bash
# The e2e and deploy scripts leave their clean-up to spec/e2e/lib.bash (on_exit):
# a script's own EXIT trap replaces lib.bash's, and then nothing stops its
# time-limit timer or the processes it started (ctest waited out the limit).
cd "$(dirname "$0")/../.." || exit 1
if grep -n '^[[:space:]]*trap .*EXIT' spec/e2e/*.sh spec/deploy/*.sh spec/security/*.sh | grep -v '^spec/e2e/lib.bash:'; then
  echo "use on_exit (spec/e2e/lib.bash), not an EXIT trap"
  exit 1
fi
echo "ok: no e2e or deploy script replaces lib.bash's EXIT trap"
