#!/bin/sh
# The npm packages a test runs with, installed into its work dir under the
# build tree, never into the repository; sourced by the tests that drive
# real node clients and validators (tests/editor, tests/cluster, tests/lsp):
#   sh "$src/tests/npm-install.sh" PACKAGE.JSON WORKDIR || exit $?
# Exits 77 (skipped) only when node or npm is absent; 1 when the install
# fails (the npm registry must be reachable). Reinstalls only when the
# package list changed. npm's cache and config stay inside the work dir:
# tests never touch $HOME.
set -eu
npm_pkg=$1 npm_work=$2
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node and npm are needed (contrib/install-deps.sh installs them)"
  exit 77
fi
mkdir -p "$npm_work"
cp "$npm_pkg" "$npm_work/package.json"
export npm_config_cache="$npm_work/.npm-cache" npm_config_update_notifier=false
if ! cmp -s "$npm_work/package.json" "$npm_work/node_modules/.installed-from" 2>/dev/null; then
  (cd "$npm_work" && npm install --no-audit --no-fund --no-package-lock --loglevel=error) || {
    echo "FAIL: npm install in $npm_work failed (the npm registry must be reachable)"; exit 1; }
  cp "$npm_work/package.json" "$npm_work/node_modules/.installed-from"
fi
