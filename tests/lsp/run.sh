#!/bin/sh
# `dsforge lsp` driven by vscode-jsonrpc under node (see session.js).
# Installs the npm packages of tests/lsp/package.json into WORKDIR (under
# the build tree), never into the repository.
#   run.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when node or npm is absent.
set -eu
dsforge=$1 src=$2 work=$3
sh "$src/tests/npm-install.sh" "$src/tests/lsp/package.json" "$work" || exit $?
cd "$work"
NODE_PATH="$work/node_modules" node "$src/tests/lsp/session.js" "$dsforge"
