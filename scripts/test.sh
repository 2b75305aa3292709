#!/usr/bin/env bash
# Set up memvault and run the whole test suite: lint, type check, the Python
# tests and the Obsidian plugin's build, lint and tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -k journal).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

.venv/bin/ruff check vault_engine benchmarks stress tests
.venv/bin/mypy
bash scripts/test_plugin.sh
.venv/bin/python -m pytest "$@"
