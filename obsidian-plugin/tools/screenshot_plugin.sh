#!/usr/bin/env bash
# Screenshot the Obsidian plugin's side panel (no Obsidian needed).
# Builds obsidian-plugin/main.js, renders the panel with sample memories into a
# static HTML page (obsidian-plugin/tools/render-panel.mjs: the built bundle on
# a stand-in obsidian module, the real styles.css, Obsidian's dark-theme CSS
# variables), then screenshots it with headless Chromium into
# docs/plugin-panel.png (or the path given as the first argument).
# Needs Node 20+ and Chromium (Debian: apt-get install -y chromium; or set CHROMIUM=/path/to/chrome).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLUGIN="$ROOT/obsidian-plugin"
OUT="$(realpath -m "${1:-$ROOT/docs/plugin-panel.png}")"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$CHROMIUM" ]; then
  echo "error: Chromium is missing (looked for $CHROMIUM)." >&2
  echo "       Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM=/path/to/chromium." >&2
  exit 1
fi
if ! command -v node >/dev/null 2>&1; then
  echo "error: node is missing; install Node.js 20 or later." >&2
  exit 1
fi

cd "$PLUGIN"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent

PAGE="$PLUGIN/tools/out/panel.html"
node tools/render-panel.mjs "$PAGE"

mkdir -p "$(dirname "$OUT")"
PROFILE="$(mktemp -d)"
trap 'rm -rf "$PROFILE"' EXIT
if ! "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$PROFILE" --hide-scrollbars --force-device-scale-factor=1 \
    --screenshot="$OUT" --window-size=420,640 "file://$PAGE" >"$PROFILE/chromium.log" 2>&1; then
  echo "error: Chromium could not take the screenshot:" >&2
  cat "$PROFILE/chromium.log" >&2
  exit 1
fi
if [ ! -s "$OUT" ]; then
  echo "error: Chromium wrote no screenshot to $OUT:" >&2
  cat "$PROFILE/chromium.log" >&2
  exit 1
fi
echo "wrote $OUT"
