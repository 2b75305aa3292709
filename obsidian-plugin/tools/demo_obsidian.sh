#!/usr/bin/env bash
# Serve the default vault to the Obsidian plugin: set up memvault, fill the
# default vault with the examples (first run only), build the plugin into the
# vault's .obsidian/plugins/memvault/, then run `memvault serve` until Ctrl-C.
# Open the vault folder in Obsidian, enable "Memvault" under Community plugins,
# and run "Memvault: Open memory panel".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/bootstrap.sh"

source scripts/default_vault.sh

if command -v npm >/dev/null 2>&1; then
  (cd obsidian-plugin && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build --silent)
  PLUGIN="$VAULT/.obsidian/plugins/memvault"
  mkdir -p "$PLUGIN"
  cp obsidian-plugin/main.js obsidian-plugin/manifest.json obsidian-plugin/styles.css "$PLUGIN/"
  echo "installed the plugin into $PLUGIN (enable it in Obsidian: Settings > Community plugins)" >&2
  echo "plugin setting 'memvault command': $PWD/.venv/bin/memvault" >&2
else
  echo "npm not found: the plugin was not built (see obsidian-plugin/README.md)" >&2
fi

# Served from the vault's own folder, which is no project: requests that name none cover every project.
cd "$VAULT"
exec "$ROOT/.venv/bin/memvault" --vault "$VAULT" serve "$@"
