#!/usr/bin/env bash
# VS Code in the browser (code-server, from npm) for the notebooks' Apps launcher.
#
# code-server's npm package builds native modules and fetches ripgrep from GitHub
# in its install scripts; it is heavy (about 300 MB, 2 minutes), so it is built once
# per version into ~/.cache/cgu-lab/code-server/<version> and then hard-linked into
# the venv ($VENV/lib/cgu-lab/code-server, with $VENV/bin/code-server), where every
# notebook account can run it. GitHub is not needed: ripgrep is Debian's (scripts/deps.sh),
# put where @vscode/ripgrep's installer looks for its cached download.
#
# Usage: scripts/code-server.sh VENV   (CGU_CODE_SERVER_VERSION overrides the version)
set -euo pipefail
venv="$(cd "${1:?usage: scripts/code-server.sh VENV}" && pwd)"
version="${CGU_CODE_SERVER_VERSION:-4.100.3}"  # the last release for Node.js 20
cache="${XDG_CACHE_HOME:-$HOME/.cache}/cgu-lab/code-server/$version"
target="$venv/lib/cgu-lab/code-server"
heartbeat="$(cd "$(dirname "$0")" && pwd)/heartbeat.sh"  # a line every 15 s through the quiet parts

if [ ! -f "$cache/.complete" ]; then
  command -v rg >/dev/null || { echo "code-server needs ripgrep (scripts/deps.sh)" >&2; exit 1; }
  echo "==> code-server $version: downloading from npm (once per version, into $cache)"
  rm -rf "$cache" && mkdir -p "$cache/tmp"
  start=$(date +%s)
  "$heartbeat" "downloading code-server" \
    npm install --no-audit --no-fund --ignore-scripts --prefix "$cache" "code-server@$version"
  package="$cache/node_modules/code-server"
  rg_version=$(node -p "require('$package/lib/vscode/npm-shrinkwrap.json').packages['node_modules/@vscode/ripgrep'].version")
  # @vscode/ripgrep looks in <tmpdir>/vscode-ripgrep-cache-<version>/ first; our tmpdir is the cache's.
  seed="$cache/tmp/vscode-ripgrep-cache-$rg_version"
  mkdir -p "$seed" "$cache/tmp/rg"
  cp "$(command -v rg)" "$cache/tmp/rg/rg"
  for target_name in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    tar czf "$seed/ripgrep-v13.0.0-10-$target_name.tar.gz" -C "$cache/tmp/rg" rg
  done
  echo "==> code-server $version: building its native modules (about two minutes)"
  (cd "$package" && TMPDIR="$cache/tmp" npm_config_yes=true npm_config_unsafe_perm=true \
    npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" \
    "$heartbeat" "building code-server" sh postinstall.sh) 2>&1 |
    grep --line-buffered -E '^(Installing|added|changed|removed|npm error|    … )' || true
  test -d "$package/lib/vscode/node_modules/@vscode/ripgrep/bin" || { echo "code-server: install failed" >&2; exit 1; }
  # The top level's own native module (skipped by --ignore-scripts above).
  (cd "$cache" && npm_config_yes=true npm rebuild argon2 --prefix "$cache" >/dev/null)
  rm -rf "$cache/tmp"
  touch "$cache/.complete"
  echo "==> code-server $version: built in $(( $(date +%s) - start )) s, $(du -sh "$cache" | cut -f1)"
fi

if [ "$(cat "$target/.version" 2>/dev/null)" != "$version" ]; then
  rm -rf "$target" && mkdir -p "$(dirname "$target")"
  # Hard links where the cache and the venv share a file system, a copy elsewhere.
  cp -al "$cache" "$target" 2>/dev/null || cp -a "$cache" "$target"
  echo "$version" > "$target/.version"
  chmod -R a+rX "$target"
fi
ln -sf "$target/node_modules/.bin/code-server" "$venv/bin/code-server"
"$venv/bin/code-server" --version | head -1
