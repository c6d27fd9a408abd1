#!/bin/sh
# The cluster emitters' files against the real validators: ajv (npm),
# installed from tests/cluster/package.json into WORKDIR (under the build
# tree), never into the repository; then tests/cluster/test_schemas.py.
#   run.sh DSFORGE SOURCE-DIR WORKDIR
# Exit 77 (skipped) only when node or npm is absent (CI installs them).
set -eu
dsforge=$1 src=$2 work=$3
sh "$src/tests/npm-install.sh" "$src/tests/cluster/package.json" "$work" || exit $?
DSFORGE=$dsforge NODE_PATH="$work/node_modules" CLUSTER_WORK=$work \
  exec python3 "$src/tests/cluster/test_schemas.py" -v
