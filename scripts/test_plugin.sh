#!/usr/bin/env bash
# Build, lint and test the Obsidian plugin (obsidian-plugin/) with Node.js 20+.
# Installs its npm packages with `npm ci` when package-lock.json changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../obsidian-plugin"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "error: the Obsidian plugin needs Node.js 20 or newer with npm (https://nodejs.org)" >&2
  exit 1
fi
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "error: the Obsidian plugin needs Node.js 20 or newer; found $(node --version)" >&2
  exit 1
fi

STAMP=node_modules/.memvault-install-stamp
WANT="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "installing the plugin's npm packages ..." >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$WANT" > "$STAMP"
fi
npm test --silent        # builds main.js (tsc strict + esbuild), then runs vitest
# ESLint reads eslint.config.mts through jiti, which would keep its transpiled copy in /tmp/jiti.
JITI_FS_CACHE=false npm run --silent lint
