#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for the test suite.
#   scripts/postgres.sh start   -> prints the URL to use as CGU_TEST_POSTGRES_URL
#   scripts/postgres.sh stop
# Uses Debian's postgresql package (installed by `make deps` when missing).
# Folder and port carry this checkout's id (as the test cluster's do): two checkouts on one
# host (CI beside a developer) each get their own server, and stopping one never stops the
# other's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ID="${CGU_KUBE_ID:-$(printf '%s' "$ROOT" | sha256sum | cut -c1-6)}"
N=$((16#$(printf '%s' "$ID" | sha256sum | cut -c1-6)))
DIR="${CGU_PG_DIR:-/tmp/cgu-lab-postgres-$ID}"
PORT="${CGU_PG_PORT:-$((20000 + (N % 100) * 100 + 30))}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
RUN=()
if [ "$(id -u)" = 0 ]; then
  RUN=(runuser -u postgres --)   # initdb refuses to run as root
fi

start() {
  [ -n "$BIN" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
  if [ ! -f "$DIR/PG_VERSION" ]; then
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
    "${RUN[@]}" "$BIN/initdb" -D "$DIR" -A trust -U postgres --no-sync >/dev/null
  fi
  if ! "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
    "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w \
      -o "-h 127.0.0.1 -p $PORT -k $DIR -c fsync=off -c full_page_writes=off" start >/dev/null
  fi
  echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
}

stop() {
  [ -f "$DIR/PG_VERSION" ] && "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
