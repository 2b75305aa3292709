#!/usr/bin/env bash
# Set up memvault and run it on the built-in default vault.
# Creates ~/.memvault/vault (or $MEMVAULT_DIR) from the template on first
# run, adds a few example memories, builds the search indexes, then prints
# the vault's status, its memories, one hybrid search with its reasons and
# the context manifest an agent would get for a sample task.
# Running it again changes nothing in the vault.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

source "$(dirname "${BASH_SOURCE[0]}")/default_vault.sh"
"${MV[@]}" sync
echo
"${MV[@]}" status
echo
"${MV[@]}" list
echo
echo '$ memvault search "how do we check changes before committing" --explain --limit 2'
"${MV[@]}" search "how do we check changes before committing" --explain --limit 2
echo
echo '$ memvault context --task "add a test for the signup confirmation email" --project github.com/example/webapp --path tests/signup/test_email.py --no-record'
"${MV[@]}" context --task "add a test for the signup confirmation email" \
  --project github.com/example/webapp --path tests/signup/test_email.py --no-record
echo
echo '$ memvault audit'
"${MV[@]}" audit
echo
echo '$ memvault maintain --dry-run'
"${MV[@]}" maintain --dry-run
