#!/bin/sh
# Regenerates plugins/deepspeed/dsdata/ for every covered release:
#   contrib/dsknow/extract-all.sh DEEPSPEED_GIT_DIR HJSON_GIT_DIR
# (git directories of deepspeedai/DeepSpeed and hjson/hjson-py; the
# dsclient setup unpacks each tag once, see contrib/dsknow/README.md).
set -eu
DSGIT=$1; HJGIT=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
setup=${DSCLIENT_SETUP:-$root/../shared/tools/dsclient/setup.sh}
[ -f "$setup" ] || setup=$root/../../shared/tools/dsclient/setup.sh
for tag in $(cat "$here/releases.txt"); do
  eval "$(sh "$setup" "$DSGIT" "$HJGIT" "$tag" 2>/dev/null | tail -n 1)"
  export DSCHECK_DS_ROOT DSCHECK_HJSON DSCHECK_DEBROOT
  out=$root/plugins/deepspeed/dsdata/$(echo "$tag" | tr . _).lua
  python3 "$here/extract.py" --git "$DSGIT" --tag "$tag" > "$out.tmp" 2>/dev/null
  mv "$out.tmp" "$out"
  echo "$tag -> $out"
done
for f in index releases; do
  python3 "$here/index.py" "$root/plugins/deepspeed/dsdata" \
    $([ $f = releases ] && echo --releases) > "$root/plugins/deepspeed/dsdata/$f.lua.tmp"
  mv "$root/plugins/deepspeed/dsdata/$f.lua.tmp" "$root/plugins/deepspeed/dsdata/$f.lua"
done
