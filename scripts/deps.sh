#!/usr/bin/env bash
# System packages cgu-lab needs on Debian/Ubuntu. To run: a Python that every
# account can execute (for per-user notebooks), Node.js for the lab extension
# build, useradd for per-user accounts. With --test, also what only the tests
# and benchmarks need: Chromium for the UI tests, PostgreSQL for the store tests
# and wrk for the benchmarks.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1; }
/usr/bin/python3 -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
have node || missing+=(nodejs)
have npm || missing+=(npm)
have useradd || missing+=(passwd)
if [ "${1:-}" = "--test" ]; then
  have chromium || missing+=(chromium)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  have wrk || missing+=(wrk)
fi

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "missing system packages: ${missing[*]} (install them as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "==> installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 |
  { grep --line-buffered -E '^(Unpacking|Setting up) ' || true; }
