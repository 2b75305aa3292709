#!/usr/bin/env bash
# Set up memvault and run the whole test suite: lint, type check, tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -k journal).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

.venv/bin/ruff check vault_engine tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
