#!/usr/bin/env bash
# Regenerates tests/golden/ from the built-in profiles. Run it after an
# intended change to a profile or the DeepSpeed plugin, then review the
# diff: every changed byte is a change users will see.
#   DSFORGE=build/dsforge tests/golden/update.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dsforge=${DSFORGE:-$here/../../build/dsforge}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in base 8xa100 small-gpu-offload long-sequence high-performance; do
  "$dsforge" gen "$p" -o "$tmp/$p" >/dev/null
  for t in small medium large; do
    cp "$tmp/$p/$p-$t.json" "$here/$p-$t.json"
  done
done
mkdir -p "$here/summary"
for p in base 8xa100 small-gpu-offload long-sequence high-performance; do
  "$dsforge" gen "$p" >"$here/summary/$p.txt"
done
"$dsforge" gen 8xa100 --tier small --matrix zero_stage=2,3 \
  >"$here/summary/8xa100-matrix.txt"
echo "golden files updated in $here"
