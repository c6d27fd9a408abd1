#!/bin/sh
# `dsforge lsp` driven by vscode-jsonrpc under node (see session.js).
# Installs the npm packages of tests/lsp/package.json into WORKDIR (under
# the build tree), never into the repository.
#   run.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when node or npm is absent.
set -eu
dsforge=$1 src=$2 work=$3
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node and npm are needed (contrib/install-deps.sh installs them)"
  exit 77
fi
mkdir -p "$work"
cp "$src/tests/lsp/package.json" "$work/package.json"
# (npm's cache and config stay inside the work dir: tests never touch $HOME)
export npm_config_cache="$work/.npm-cache" npm_config_update_notifier=false
if ! cmp -s "$work/package.json" "$work/node_modules/.installed-from" 2>/dev/null; then
  (cd "$work" && npm install --no-audit --no-fund --no-package-lock --loglevel=error) || {
    echo "FAIL: npm install in $work failed (the npm registry must be reachable)"; exit 1; }
  cp "$work/package.json" "$work/node_modules/.installed-from"
fi
cd "$work"
NODE_PATH="$work/node_modules" node "$src/tests/lsp/session.js" "$dsforge"
