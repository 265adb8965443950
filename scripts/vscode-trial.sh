#!/usr/bin/env bash
# Tries the VS Code extension (editors/vscode-gir) with glow-lsp in a real VS Code:
# code-server (VS Code in the browser, from the npm registry) in headless Chromium, driven
# by playwright-core. Opens scripts/vscode-trial/demo.gir (a use of an undefined value),
# waits for the server's diagnostic, opens the Problems panel and a hover, and writes
# 1-diagnostic.png, 2-problems.png and 3-hover.png into OUT (default: the work directory).
#
# Usage: scripts/vscode-trial.sh [OUT]
# Needs: node 20 + npm (npm registry), /usr/bin/chromium (apt-get install chromium), ripgrep,
# and for code-server's native modules: build-essential pkg-config libkrb5-dev libx11-dev
# libxkbfile-dev libsecret-1-dev. Prints "skipped: ..." and exits 0 when they are missing.
# Not part of `cargo test`: it installs from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${VSCODE_TRIAL_DIR:-/tmp/glow-vscode-trial}
OUT=${1:-$WORK/shots}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PORT=${PORT:-18080}

command -v npm >/dev/null 2>&1 || { echo "skipped: npm not found"; exit 0; }
[ -x "$CHROMIUM" ] || { echo "skipped: no Chromium at $CHROMIUM (apt-get install chromium)"; exit 0; }
mkdir -p "$WORK" "$OUT"

# code-server's own postinstall fetches ripgrep and argon2 from GitHub, which a machine that
# reaches only package registries cannot: install without scripts, build the native modules
# from source, and take ripgrep from the system.
install_code_server() {
  (cd "$WORK" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --ignore-scripts code-server playwright-core @vscode/vsce &&
    npm rebuild argon2 --build-from-source) || return 1
  local vs=$WORK/node_modules/code-server/lib/vscode
  (cd "$vs" && npm install --omit=dev --ignore-scripts --no-audit --no-fund) || return 1
  # node-pty's last step (compile_commands.json) needs node-gyp from the network; its module
  # itself builds.
  (cd "$vs" && npm rebuild @parcel/watcher @vscode/spdlog kerberos native-watchdog node-pty) || true
  [ -f "$vs/node_modules/node-pty/build/Release/pty.node" ] || return 1
  mkdir -p "$vs/node_modules/@vscode/ripgrep/bin"
  ln -sf "$(command -v rg)" "$vs/node_modules/@vscode/ripgrep/bin/rg"
  ln -sfn node_modules "$vs/node_modules.asar"
  (cd "$vs/bin/remote-cli" && ln -sf code-linux.sh code-server)
  (cd "$vs/bin/helpers" && ln -sf browser-linux.sh browser.sh)
  (cd "$vs/extensions" && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
}
if ! "$WORK/node_modules/.bin/code-server" --version >/dev/null 2>&1; then
  command -v rg >/dev/null 2>&1 || { echo "skipped: no ripgrep (apt-get install ripgrep)"; exit 0; }
  echo "installing code-server, playwright-core and @vscode/vsce into $WORK (npm registry)"
  if ! install_code_server >"$WORK/npm.log" 2>&1; then
    echo "skipped: could not install code-server (see $WORK/npm.log; its native modules need"
    echo "  build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)"
    exit 0
  fi
fi

TARGET=${CARGO_TARGET_DIR:-$REPO/target}
cargo build --quiet --release --bin glow-lsp
LSP=$TARGET/release/glow-lsp

# The extension as users install it: its language client, packaged into a .vsix.
rm -rf "$WORK/ext" && cp -r "$REPO/editors/vscode-gir" "$WORK/ext"
(cd "$WORK/ext" && npm install --no-audit --no-fund --omit=dev >/dev/null 2>&1)
(cd "$WORK/ext" && "$WORK/node_modules/.bin/vsce" package --skip-license -o "$WORK/gir.vsix" >/dev/null)
DATA=$WORK/data EXTS=$WORK/extensions
rm -rf "$DATA" "$EXTS"
"$WORK/node_modules/.bin/code-server" --user-data-dir "$DATA" --extensions-dir "$EXTS" \
  --install-extension "$WORK/gir.vsix" >/dev/null
mkdir -p "$DATA/User" "$WORK/ws"
cat >"$DATA/User/settings.json" <<JSON
{
  "gir.server.path": "$LSP",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false
}
JSON
cp "$REPO/scripts/vscode-trial/demo.gir" "$WORK/ws/demo.gir"

"$WORK/node_modules/.bin/code-server" --auth none --bind-addr "127.0.0.1:$PORT" \
  --user-data-dir "$DATA" --extensions-dir "$EXTS" --disable-telemetry "$WORK/ws" \
  >"$WORK/code-server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 60); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
  sleep 1
done

NODE_PATH=$WORK/node_modules CHROMIUM=$CHROMIUM \
  node "$REPO/scripts/vscode-trial/trial.js" "http://127.0.0.1:$PORT/?folder=$WORK/ws" demo.gir "$OUT"
echo "screenshots in $OUT"
