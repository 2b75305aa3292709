#!/usr/bin/env bash
# Sourced after bootstrap.sh: the default vault, ~/.memvault/vault (or
# $MEMVAULT_DIR), created from the template with the example memories on
# first use. Sets VAULT and MV (the memvault command for that vault).
VAULT="${MEMVAULT_DIR:-$HOME/.memvault/vault}"
MV=(.venv/bin/memvault --vault "$VAULT")
if [ ! -f "$VAULT/memvault.toml" ]; then
  .venv/bin/memvault init "$VAULT"
  "${MV[@]}" import scripts/examples.jsonl
fi
