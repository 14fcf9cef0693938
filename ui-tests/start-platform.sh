#!/usr/bin/env bash
# Start a fresh platform for the UI tests: a new data directory, known accounts, then the
# controller, until Playwright ends this script (SIGTERM to its process group, as
# playwright.config.ts's gracefulShutdown asks) or the controller exits.
#
# Whichever way it ends, the platform is cleaned up: the controller stopped, then every
# process of this installation, found by the CGU_LAB_INSTANCE marker its notebook servers
# and their kernels carry in their environment (a stopped controller leaves its notebooks
# running by design: a restart finds them again), then their cgroups, the accounts it
# made and the data directory (kept, and named, when CGU_UI_KEEP_DATA=1). The controller runs as a child,
# not in this shell's place (exec), so that the cleanup still has a shell to run in.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$here/../.venv/bin"
port="${1:-8765}"
# The data directory playwright.config.ts named (the specs write into notebooks' homes
# there), made new here: an existing one is refused. Run by hand, a new temporary one.
if [ -n "${CGU_UI_DATA:-}" ]; then
  data="$CGU_UI_DATA"
  mkdir -m 711 "$data"
else
  data="$(mktemp -d /tmp/cgu-lab-ui-XXXXXX)"
  chmod 711 "$data"
fi
controller=""

cleanup() {
  trap - EXIT INT TERM
  if [ -n "$controller" ]; then
    kill -TERM "$controller" 2>/dev/null || true
    wait "$controller" 2>/dev/null || true
  fi
  # Every process of the installation, its cgroups and its accounts (tests/harness.py).
  (cd "$here/.." && "$bin/python" -c 'import sys; from pathlib import Path
from tests.harness import kill_notebooks
kill_notebooks(Path(sys.argv[1]))' "$data/state") || true
  if [ "${CGU_UI_KEEP_DATA:-}" = 1 ]; then
    echo "start-platform.sh: the platform's data is kept in $data" >&2
  else
    rm -rf "$data" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

for spec in "ui-admin admin" "ui-student student" "ui-pupil student" "ui-ta ta" "ui-teacher teacher"; do
  set -- $spec
  echo "ui-test-password" | "$bin/cgu-lab" admin create-user "$1" --role "$2" --password-stdin --data-dir "$data/state" >/dev/null
done
# The idle culler passes every 10 s, not every minute: lab.spec's culled notebook then
# waits seconds, not a minute, for the pass after its (shortened) idle time.
CGU_LAB_CULL_INTERVAL="${CGU_LAB_CULL_INTERVAL:-10}" \
  "$bin/cgu-lab" controller --data-dir "$data/state" --port "$port" &
controller=$!
wait "$controller"
