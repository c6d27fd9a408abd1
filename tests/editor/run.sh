#!/bin/sh
# The draft-07 schema in VS Code's JSON language service and ajv (see
# vscode_ls.js). Installs the npm packages of tests/editor/package.json
# into WORKDIR (under the build tree), never into the repository.
#   run.sh DSFORGE SOURCE-DIR WORKDIR [SHARED-DIR]
# Exit 77 (skipped) only when node or npm is absent.
set -eu
dsforge=$1 src=$2 work=$3 shared=${4:-}
sh "$src/tests/npm-install.sh" "$src/tests/editor/package.json" "$work" || exit $?
"$dsforge" schema --draft 07 > "$work/deepspeed.json"
rw=
if [ -n "$shared" ] && [ -d "$shared/realworld-configs" ]; then rw=$shared/realworld-configs; fi
cd "$work"
NODE_PATH="$work/node_modules" node "$src/tests/editor/vscode_ls.js" "$work/deepspeed.json" \
  "$src/contrib/schemastore/catalog-entry.json" $rw
