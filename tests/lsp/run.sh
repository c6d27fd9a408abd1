#!/bin/sh
# `dsforge lsp` driven by vscode-jsonrpc under node (see session.js).
# Installs the npm packages of tests/lsp/package.json into WORKDIR (under
# the build tree), never into the repository.
#   run.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when node or npm is absent.
set -eu
dsforge=$1 src=$2 work=$3
sh "$src/tests/npm-install.sh" "$src/tests/lsp/package.json" "$work" || exit $?
sh "$src/tests/lsp/mkout.sh" "$dsforge" "$work/def"
cd "$work"
DEF_OUT="$work/def/out" DEF_TEAM="$work/def/team.json" \
DEF_PROFILE="$work/def/profiles/defp.lua" DEF_PROFILES="$work/def/profiles" \
NODE_PATH="$work/node_modules" node "$src/tests/lsp/session.js" "$dsforge"
