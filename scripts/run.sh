#!/usr/bin/env bash
# Set up memvault and run it on the built-in default vault.
# Creates ~/.memvault/vault (or $MEMVAULT_DIR) from the template on first
# run, adds a few example memories, builds the search indexes, then prints
# the vault's status, its memories and one hybrid search with its reasons.
# Running it again changes nothing in the vault.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

VAULT="${MEMVAULT_DIR:-$HOME/.memvault/vault}"
MV=(.venv/bin/memvault --vault "$VAULT")
if [ ! -f "$VAULT/memvault.toml" ]; then
  .venv/bin/memvault init "$VAULT"
  "${MV[@]}" import scripts/examples.jsonl
fi
"${MV[@]}" sync
echo
"${MV[@]}" status
echo
"${MV[@]}" list
echo
echo '$ memvault search "how do we check changes before committing" --explain --limit 2'
"${MV[@]}" search "how do we check changes before committing" --explain --limit 2
