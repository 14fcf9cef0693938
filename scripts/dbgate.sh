#!/usr/bin/env bash
# DbGate, the notebooks' database web client (cgu_lab/notebook/apps/database_client.py), from npm.
#
# Installed once per version into ~/.cache/cgu-lab/dbgate/<version>, then hard-linked into the
# venv ($VENV/lib/cgu-lab/dbgate), where every notebook account can run it with the machine's
# Node.js. Only DbGate's server (dbgate-api), its web pages (dbgate-web) and the PostgreSQL and
# MySQL/MariaDB plugins: not the dbgate-serve bundle, whose other engines' drivers (Oracle,
# MSSQL, MongoDB, Redis...) double its size. dbgate-api names the npm placeholder package
# `http` (0.0.x, an empty name-squat guard) which the registry reachable here lacks; it is never
# loaded (Node's own http module wins), so an empty local package stands in for it.
#
# Usage: scripts/dbgate.sh VENV   (CGU_DBGATE_VERSION overrides the version)
set -euo pipefail
venv="$(cd "${1:?usage: scripts/dbgate.sh VENV}" && pwd)"
version="${CGU_DBGATE_VERSION:-7.2.2}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/cgu-lab/dbgate/$version"
target="$venv/lib/cgu-lab/dbgate"
heartbeat="$(cd "$(dirname "$0")" && pwd)/heartbeat.sh"

if [ ! -f "$cache/.complete" ]; then
  echo "==> DbGate $version: downloading from npm (once per version, into $cache)"
  rm -rf "$cache" && mkdir -p "$cache/empty-http"
  start=$(date +%s)
  echo '{"name": "http", "version": "0.0.0"}' > "$cache/empty-http/package.json"
  cat > "$cache/package.json" <<JSON
{"name": "cgu-lab-dbgate", "version": "1.0.0", "private": true,
 "dependencies": {"dbgate-api": "$version", "dbgate-web": "$version",
                  "dbgate-plugin-postgres": "$version", "dbgate-plugin-mysql": "$version"},
 "overrides": {"http": "file:./empty-http"}}
JSON
  (cd "$cache" && "$heartbeat" "downloading DbGate" \
    npm install --no-audit --no-fund --omit=dev --ignore-scripts >/dev/null)
  test -d "$cache/node_modules/dbgate-api/src" || { echo "DbGate: install failed" >&2; exit 1; }
  touch "$cache/.complete"
  echo "==> DbGate $version: installed in $(( $(date +%s) - start )) s, $(du -sh "$cache" | cut -f1)"
fi

if [ "$(cat "$target/.version" 2>/dev/null)" != "$version" ]; then
  rm -rf "$target" && mkdir -p "$(dirname "$target")"
  cp -al "$cache" "$target" 2>/dev/null || cp -a "$cache" "$target"
  echo "$version" > "$target/.version"
  chmod -R a+rX "$target"
fi
echo "DbGate $version in $target"
