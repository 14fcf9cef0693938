#!/usr/bin/env bash
# Start a fresh platform for the UI tests: a new data directory, known accounts,
# then the controller in the foreground (Playwright stops it at the end).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$here/../.venv/bin"
port="${1:-8765}"
data="$(mktemp -d /tmp/cgu-lab-ui-XXXXXX)"
chmod 711 "$data"
trap 'pkill -f "CGU_UI_DATA=$data" 2>/dev/null || true' EXIT
for spec in "ui-admin admin" "ui-student student" "ui-pupil student" "ui-ta ta" "ui-teacher teacher"; do
  set -- $spec
  echo "ui-test-password" | "$bin/cgu-lab" admin create-user "$1" --role "$2" --password-stdin --data-dir "$data/state" >/dev/null
done
exec "$bin/cgu-lab" controller --data-dir "$data/state" --port "$port"
